package userdata_test

// The schema's differential test: `earlyinit schema`'s verdict (valid or
// not) against `cloud-init schema --config-file`'s (22.4, through
// internal/oracle) on cloud-init's own examples of every module earlyinit
// implements and on mutations of them generated here: an unknown key in
// each map, each key removed, each value replaced by one of every other
// type, by a string no enum holds, by numbers out of any bound, each list
// emptied and given a duplicate item.

import (
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/earlyinit/earlyinit/internal/modules"
	"github.com/earlyinit/earlyinit/internal/oracle"
	"github.com/earlyinit/earlyinit/internal/userdata"
)

// schemaOracle prints the examples (meta["examples"]) of the cc_ modules
// named in "modules", and the verdict of `cloud-init schema -c FILE` on
// each document of "docs": null when it prints "Valid cloud-config", else
// its error. As handle_schema_args: a SchemaValidationError with errors
// or a RuntimeError (not a YAML dict) is invalid; deprecations alone are
// printed and the file is valid. The validator class, which cloud-init
// makes again for each file, is made once.
const schemaOracle = `
import contextlib, functools, importlib, io, os, tempfile
from cloudinit.config import schema as S
from cloudinit.config.schema import validate_cloudconfig_file, SchemaValidationError, get_schema
S.get_jsonschema_validator = functools.lru_cache(None)(S.get_jsonschema_validator)
inp = json.load(sys.stdin)
out = {"examples": {}, "verdicts": []}
for m in inp.get("modules") or []:
    out["examples"][m] = list(importlib.import_module("cloudinit.config." + m).meta.get("examples") or [])
schema = get_schema()
with tempfile.TemporaryDirectory() as d:
    path = os.path.join(d, "user-data")
    for doc in inp.get("docs") or []:
        with open(path, "w") as f:
            f.write(doc)
        try:
            with contextlib.redirect_stdout(io.StringIO()):
                validate_cloudconfig_file(path, schema)
            out["verdicts"].append(None)
        except (SchemaValidationError, RuntimeError) as e:
            out["verdicts"].append(str(e).replace(path, "FILE"))
print(json.dumps(out))
`

type schemaOracleAnswer struct {
	Examples map[string][]string `json:"examples"`
	Verdicts []*string           `json:"verdicts"`
}

// ccModules maps earlyinit's modules (modules.All) to cloud-init's cc_
// modules whose schema keys they read; nil for a module cloud-init does
// not have. Every module of All must be here.
var ccModules = map[string][]string{
	"seed_random":                    {"cc_seed_random"},
	"bootcmd":                        {"cc_bootcmd"},
	"write_files":                    {"cc_write_files"},
	"disk_setup":                     {"cc_disk_setup"},
	"mounts":                         {"cc_mounts"},
	"growpart":                       {"cc_growpart", "cc_resizefs"}, // the root is grown (and resized) in the initramfs
	"set_hostname":                   {"cc_set_hostname"},
	"update_hostname":                {"cc_update_hostname"},
	"update_etc_hosts":               {"cc_update_etc_hosts"},
	"ca_certs":                       {"cc_ca_certs"},
	"rsyslog":                        {"cc_rsyslog"},
	"users_groups":                   {"cc_users_groups"},
	"ssh":                            {"cc_ssh"},
	"keyboard":                       {"cc_keyboard"},
	"locale":                         {"cc_locale"},
	"set_passwords":                  {"cc_set_passwords"},
	"resolv_conf":                    {"cc_resolv_conf"},
	"ntp":                            {"cc_ntp"},
	"timezone":                       {"cc_timezone"},
	"wireguard":                      {"cc_wireguard"},
	"ssh_import_id":                  {"cc_ssh_import_id"},
	"rh_subscription":                {"cc_rh_subscription"},
	"yum_add_repo":                   {"cc_yum_add_repo"},
	"apt_configure":                  {"cc_apt_configure"},
	"zypper_add_repo":                {"cc_zypper_add_repo"},
	"apk_configure":                  {"cc_apk_configure"},
	"disable_ec2_metadata":           {"cc_disable_ec2_metadata"},
	"runcmd":                         {"cc_runcmd"},
	"package_update_upgrade_install": {"cc_package_update_upgrade_install"},
	"write_files_deferred":           {"cc_write_files_deferred"},
	"puppet":                         {"cc_puppet"},
	"chef":                           {"cc_chef"},
	"ansible":                        {"cc_ansible"},
	"salt_minion":                    {"cc_salt_minion"},
	"scripts_per_once":               {"cc_scripts_per_once"},
	"scripts_per_boot":               {"cc_scripts_per_boot"},
	"scripts_per_instance":           {"cc_scripts_per_instance"},
	"scripts_user":                   {"cc_scripts_user", "cc_scripts_vendor"}, // vendor scripts run in scripts_user
	"ssh_authkey_fingerprints":       {"cc_ssh_authkey_fingerprints"},
	"keys_to_console":                {"cc_keys_to_console"},
	"post_password":                  nil, // earlyinit's own (its key is "earlyinit")
	"phone_home":                     {"cc_phone_home"},
	"final_message":                  {"cc_final_message"},
	"power_state":                    {"cc_power_state_change"},
}

// schemaCase is one document and where it comes from.
type schemaCase struct {
	name string // "cc_ntp#1 ntp.servers: list → integer 12345"
	doc  string // with the #cloud-config line
}

// schemaSeeds are documents of ours, valid for cloud-init 22.4 (the test
// checks), for keys cloud-init's examples leave out: they are mutated as
// the examples are.
var schemaSeeds = map[string][]string{}

// schemaCases are hand-written cases (the issue's, and some the mutations
// cannot make).
var schemaCases = []string{
	// The (30): each valid for earlyinit before, invalid for
	// cloud-init 22.4.
	"ntp: {servrs: [ntp.example.com]}\n",
	"ntp: {servers: ntp.example.com}\n",
	"apt:\n  sources:\n    x:\n      sorce: deb http://example.com/ stable main\n",
	"ca_certs: {trusted_certs: [x]}\n",
	"fs_setup:\n  - {device: /dev/vdb, filesystem: ext4, lable: data}\n",
	"rsyslog: {remote: {x: 10.0.0.1}}\n",
	"disk_setup:\n  /dev/vdb: {table_type: zfs, layout: true}\n",
	"keyboard: {model: pc105}\n",
	// And their right forms, valid for both.
	"ntp: {servers: [ntp.example.com]}\n",
	"apt:\n  sources:\n    x:\n      source: deb http://example.com/ stable main\n",
	"ca_certs: {trusted: [x]}\n",
	"fs_setup:\n  - {device: /dev/vdb, filesystem: ext4, label: data}\n",
	"rsyslog: {remotes: {x: 10.0.0.1}}\n",
	"disk_setup:\n  /dev/vdb: {table_type: gpt, layout: true}\n",
	"keyboard: {layout: us}\n",
	// earlyinit's own key, which ntp.go reads (and 22.4 refuses).
	"ntp: {servers: [ntp.example.com], ntp_use_dhcp_config: true}\n",
	// Top-level keys 22.4 takes and earlyinit refuses: the v1/v2 apt
	// keys, and any key it does not know.
	"apt_mirror: http://archive.example.com/debian/\n",
	"apt_proxy: http://proxy.example.com:3128/\n",
	"apt_preserve_sources_list: true\n",
	"zz_not_a_key: 1\n",
	// The system_info keys modules read, which 22.4's schema leaves
	// unchecked: valid for both.
	"system_info: {distro: rhel, ntp_client: chrony, ssh_svcname: sshd, rsyslog_svcname: rsyslog, apt_get_command: [apt-get, -y], apt_get_upgrade_subcommand: upgrade, apt_get_wrapper: {command: eatmydata, enabled: auto}, package_mirrors: [{arches: [default], failsafe: {primary: 'http://x/'}, search: {primary: ['http://y/']}}]}\n",
}

// schemaDifference is a deliberate difference of verdicts: the cases whose
// name matches, where earlyinit is stricter (refuses what cloud-init
// accepts) or looser, and why. docs/cloud-config.md lists them too.
type schemaDifference struct {
	cases    *regexp.Regexp
	stricter bool
	why      string
}

var schemaDifferences = []schemaDifference{
	{regexp.MustCompile(`^case\d+ apt_(mirror|proxy|preserve_sources_list):`), true,
		"the v1/v2 apt keys: 22.4 converts them to apt with a deprecation warning, earlyinit's apt_configure refuses them with an error naming the apt key to use"},
	{regexp.MustCompile(`^case\d+ zz_not_a_key:`), true,
		"a top-level key no module knows: 22.4's schema allows any, earlyinit's is an error, which catches a misspelt module key (runcmds:)"},
	{regexp.MustCompile(`^case\d+ ntp: \{servers: \[ntp\.example\.com\], ntp_use_dhcp_config: true\}$`), false,
		"ntp.ntp_use_dhcp_config: earlyinit's own key (the DHCP lease's NTP servers too, after cloudbase-init), which 22.4 does not know"},
	{regexp.MustCompile(`^cc_write_files#\d+ write_files\.\d+\.permissions: string → string `), true,
		"permissions must be an octal mode: 22.4's schema takes any string, and its module writes the file with the default 0644 and a warning (decode_perms); earlyinit's refuses the entry (modules.TestWriteFilesAsCloudInit)"},
	{regexp.MustCompile(`^cc_(disk_setup|mounts)#\d+ mounts\.\d+\.\d+: string → null `), false,
		"a null field in a mounts entry: 22.4's schema wants strings, its module reads null as \"remove this entry\" (cc_mounts: `if cfgmnt[i][1] is None`) and so does earlyinit"},
	{regexp.MustCompile(`^cc_users_groups#\d+ (users\.\d+|user)\.sudo: \w+ → list `), false,
		"sudo as a list of rules: 22.4's schema wants a string, its distros.write_sudo_rules takes a list too (each item a line), and so does earlyinit"},
	{regexp.MustCompile(`^cc_wireguard#\d+ wireguard\.interfaces\.\d+: key (name|config_path|content) removed$`), true,
		"an interface without name, config_path or content: 22.4's schema allows it, its module then refuses it at boot (supplemental_schema_validation)"},
	{regexp.MustCompile(`^cc_rh_subscription#\d+ rh_subscription\.org: integer → string `), false,
		"org as a string: 22.4's schema wants an integer, but organisation IDs are strings (subscription-manager --org=ID) and cloud-init 23.1 made it a string"},
}

// TestSchemaVerdictsMatchCloudInit is the differential test: every case
// gets the same verdict from `earlyinit schema` and from 22.4's `cloud-init
// schema`, but for schemaDifferences.
func TestSchemaVerdictsMatchCloudInit(t *testing.T) {
	var names []string
	for _, m := range modules.All() {
		cc, ok := ccModules[m.Name]
		if !ok {
			t.Errorf("module %s: no cloud-init module named for it in ccModules", m.Name)
		}
		names = append(names, cc...)
	}
	var ex schemaOracleAnswer
	oracle.Run(t, schemaOracle, map[string]any{"modules": names}, &ex)

	var cases []schemaCase
	seen := map[string]bool{}
	add := func(c schemaCase) {
		if !seen[c.doc] {
			seen[c.doc] = true
			cases = append(cases, c)
		}
	}
	var bases []schemaCase
	for _, m := range names {
		for i, doc := range ex.Examples[m] {
			bases = append(bases, schemaCase{fmt.Sprintf("%s#%d", m, i+1), doc})
		}
		for i, doc := range schemaSeeds[m] {
			bases = append(bases, schemaCase{fmt.Sprintf("%s+seed%d", m, i+1), doc})
		}
	}
	for _, b := range bases {
		doc := "#cloud-config\n" + strings.TrimPrefix(b.doc, "#cloud-config\n")
		add(schemaCase{b.name, doc})
		var root yaml.Node
		if err := yaml.Unmarshal([]byte(doc), &root); err != nil {
			t.Errorf("%s: %v", b.name, err)
			continue
		}
		for _, m := range mutate(&root) {
			add(schemaCase{b.name + " " + m.name, m.doc})
		}
	}
	for i, doc := range schemaCases {
		first, _, _ := strings.Cut(doc, "\n")
		add(schemaCase{fmt.Sprintf("case%d %s", i+1, first), "#cloud-config\n" + doc})
	}

	docs := make([]string, len(cases))
	for i, c := range cases {
		docs[i] = c.doc
	}
	var ans schemaOracleAnswer
	t0 := time.Now()
	oracle.Run(t, schemaOracle, map[string]any{"docs": docs}, &ans)
	t.Logf("oracle %v", time.Since(t0))
	if len(ans.Verdicts) != len(cases) {
		t.Fatalf("%d verdicts for %d cases", len(ans.Verdicts), len(cases))
	}

	agree, deliberate := 0, 0
	used := make([]bool, len(schemaDifferences))
	for i, c := range cases {
		theirs := ans.Verdicts[i] == nil
		var errs []string
		for _, e := range userdata.Validate("user-data", []byte(c.doc)) {
			if !e.Warning {
				errs = append(errs, e.Error())
			}
		}
		ours := len(errs) == 0
		if theirs == ours {
			agree++
			continue
		}
		if !theirs && isBase(c.name) && !strings.HasPrefix(c.name, "case") {
			t.Errorf("%s: cloud-init refuses its own example or our seed: %s", c.name, *ans.Verdicts[i])
		}
		known := false
		for j, d := range schemaDifferences {
			if d.cases.MatchString(c.name) && d.stricter == !ours {
				known, used[j] = true, true
			}
		}
		if known {
			deliberate++
			continue
		}
		if theirs {
			t.Errorf("%s: cloud-init valid, earlyinit invalid:\n%s\n  %s", c.name, c.doc, strings.Join(errs, "\n  "))
		} else {
			t.Errorf("%s: cloud-init invalid, earlyinit valid:\n%s\n  %s", c.name, c.doc, *ans.Verdicts[i])
		}
	}
	for j, d := range schemaDifferences {
		if !used[j] {
			t.Errorf("deliberate difference %q (%s) matched no differing case: gone?", d.cases, d.why)
		}
	}
	t.Logf("%d cases (%d bases), %d agree, %d deliberate differences", len(cases), len(bases), agree, deliberate)
}

func isBase(name string) bool { return !strings.Contains(name, " ") }

// mutation is one generated document.
type mutation struct {
	name, doc string
}

// The values a node is replaced with: one of each type, a string no enum
// holds; numbers past any bound, and a float, for numbers only.
var replacements = []struct {
	name, yaml string
	// skip is the kind of node it is not used for; numbers only for the
	// replacements used for numbers only.
	skip    string
	numbers bool
}{
	{"string", `zz-not-a-valid-value`, "", false},
	{"integer", `12345`, "integer", false},
	{"negative integer", `-1`, "", true},
	{"zero", `0`, "", true},
	{"big integer", `99999999999`, "", true},
	{"float", `1.5`, "float", true},
	{"boolean", `true`, "boolean", false},
	{"null", `null`, "null", false},
	{"list", `[zz]`, "list", false},
	{"map", `{zz: 1}`, "map", false},
}

// mutate makes the mutations of a document: for each node below a
// top-level key, its replacement by each value of replacements; for each
// map below the top level, an unknown key added and each of its keys
// removed; for each list, emptied and its first item repeated.
func mutate(root *yaml.Node) []mutation {
	var out []mutation
	top := root.Content[0]
	// emit copies root, lets edit change the copy at the node reached
	// by idx, and prints it.
	emit := func(name string, idx []int, edit func(n *yaml.Node)) {
		cp := deepCopy(root)
		n := cp
		for _, i := range idx {
			n = n.Content[i]
		}
		edit(n)
		b, err := yaml.Marshal(cp)
		if err != nil {
			panic(err)
		}
		out = append(out, mutation{name, "#cloud-config\n" + strings.TrimPrefix(string(b), "#cloud-config\n")})
	}
	var walk func(n *yaml.Node, idx []int, path string, depth int)
	walk = func(n *yaml.Node, idx []int, path string, depth int) {
		if depth >= 1 {
			k := nodeKind(n)
			for _, r := range replacements {
				if r.skip == k || r.numbers && k != "integer" && k != "float" {
					continue
				}
				rep := r
				emit(fmt.Sprintf("%s: %s → %s %s", path, k, rep.name, rep.yaml), idx, func(n *yaml.Node) {
					var v yaml.Node
					yaml.Unmarshal([]byte(rep.yaml), &v)
					*n = *v.Content[0]
				})
			}
		}
		switch n.Kind {
		case yaml.MappingNode:
			if depth >= 1 {
				emit(path+": unknown key added", idx, func(n *yaml.Node) {
					n.Content = append(n.Content,
						&yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: "zz_unknown_key"},
						&yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: "zz"})
				})
				for i := 0; i+1 < len(n.Content); i += 2 {
					i := i
					emit(fmt.Sprintf("%s: key %s removed", path, n.Content[i].Value), idx, func(n *yaml.Node) {
						n.Content = append(n.Content[:i:i], n.Content[i+2:]...)
					})
				}
			}
			for i := 0; i+1 < len(n.Content); i += 2 {
				walk(n.Content[i+1], append(idx[:len(idx):len(idx)], i+1), joinPath(path, n.Content[i].Value), depth+1)
			}
		case yaml.SequenceNode:
			emit(path+": emptied", idx, func(n *yaml.Node) { n.Content = nil })
			if len(n.Content) > 0 {
				emit(path+": first item repeated", idx, func(n *yaml.Node) {
					n.Content = append(n.Content, deepCopy(n.Content[0]))
				})
			}
			for i, c := range n.Content {
				walk(c, append(idx[:len(idx):len(idx)], i), fmt.Sprintf("%s.%d", path, i), depth+1)
			}
		}
	}
	walk(top, []int{0}, "", 0)
	return out
}

func joinPath(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// nodeKind is a node's type as YAML 1.1 (the loaders of both) reads it.
func nodeKind(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "map"
	case yaml.SequenceNode:
		return "list"
	case yaml.AliasNode:
		return "alias"
	}
	var v any
	if err := yaml.Unmarshal([]byte(n.Value), &v); err != nil || n.Style&(yaml.DoubleQuotedStyle|yaml.SingleQuotedStyle|yaml.LiteralStyle|yaml.FoldedStyle) != 0 {
		return "string"
	}
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case int, int64, uint64:
		return "integer"
	case float64:
		return "float"
	}
	return "string"
}

func deepCopy(n *yaml.Node) *yaml.Node {
	c := *n
	c.Content = make([]*yaml.Node, len(n.Content))
	for i, x := range n.Content {
		c.Content[i] = deepCopy(x)
	}
	return &c
}
