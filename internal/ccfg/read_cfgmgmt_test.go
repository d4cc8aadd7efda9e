package ccfg_test

import (
	"reflect"
	"testing"

	"github.com/earlyinit/earlyinit/internal/ccfg"
	"github.com/earlyinit/earlyinit/internal/userdata"
)

// TestCfgmgmtSchemasAsTheirKinds: the types that decode themselves have
// the schema of the kind they stand for, so that the schema (and
// cloud-init's verdicts on it) is the one the plain kinds gave.
func TestCfgmgmtSchemasAsTheirKinds(t *testing.T) {
	for _, c := range []struct{ got, want reflect.Type }{
		{reflect.TypeFor[ccfg.Args](), reflect.TypeFor[[]string]()},
		{reflect.TypeFor[ccfg.Argv](), reflect.TypeFor[[]string]()},
		{reflect.TypeFor[ccfg.Later[string]](), reflect.TypeFor[string]()},
		{reflect.TypeFor[ccfg.Later[ccfg.Argv]](), reflect.TypeFor[[]string]()},
		{reflect.TypeFor[ccfg.BoolWord](), reflect.TypeFor[bool]()},
		{reflect.TypeFor[ccfg.TruthyString](), reflect.TypeFor[string]()},
	} {
		if g, w := ccfg.Of(c.got), ccfg.Of(c.want); !reflect.DeepEqual(g, w) {
			t.Errorf("%s: schema %+v, want %s's %+v", c.got, g, c.want, w)
		}
	}
}

func decodeYAML(t *testing.T, doc, key string, out any) error {
	t.Helper()
	raw, err := userdata.LoadYAML([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	return ccfg.DecodeValue(raw, key, out)
}

// TestPuppetDecode: puppet's readings: booleans true when missing and
// false when null; exec_args as a list, a string kept whole, or another
// kind (null included); conf's sections, any name, kept as given, and
// ca_cert a string; csr_attributes as given; a null conf or
// csr_attributes refused.
func TestPuppetDecode(t *testing.T) {
	var p ccfg.Puppet
	if err := decodeYAML(t, "{cleanup: ~, exec_args: ~, conf: {agent: {a: 1}, foo: {}, ca_cert: pem}, csr_attributes: {other: [1]}}", "puppet", &p); err != nil {
		t.Fatal(err)
	}
	if !p.Install || p.Cleanup || !p.StartService || p.Exec {
		t.Errorf("booleans: %+v", p)
	}
	if !reflect.DeepEqual(p.ExecArgs, ccfg.Args{Set: true, Other: "null"}) {
		t.Errorf("exec_args: %+v", p.ExecArgs)
	}
	if c := p.Conf; c == nil || len(c.Sections) != 2 || c.Sections["foo"] == nil || c.Agent["a"] != 1 || c.CACert == nil || *c.CACert != "pem" {
		t.Errorf("conf: %+v", c)
	}
	if c := p.CSRAttributes; c == nil || !reflect.DeepEqual(c.All, map[string]any{"other": []any{1}}) || c.CustomAttributes != nil {
		t.Errorf("csr_attributes: %+v", c)
	}
	for doc, want := range map[string]ccfg.Args{
		"{exec_args: [' --test ', 1]}": {Set: true, List: []string{"--test", "1"}},
		"{exec_args: ' --test  -v'}":   {Set: true, List: []string{" --test  -v"}, String: true},
		"{exec_args: 5}":               {Set: true, Other: "a number"},
		"{}":                           {},
	} {
		var p ccfg.Puppet
		if err := decodeYAML(t, doc, "puppet", &p); err != nil || !reflect.DeepEqual(p.ExecArgs, want) {
			t.Errorf("%s: %+v %v, want %+v", doc, p.ExecArgs, err, want)
		}
	}
	for doc, want := range map[string]string{
		"{conf: ~}":                  "puppet.conf: want a map, got null",
		"{csr_attributes: ~}":        "puppet.csr_attributes: want a map, got null",
		"{conf: {main: ~}}":          "puppet.conf.main: want a map, got null",
		"{conf: {x: 1, ca_cert: 1}}": "puppet.conf.ca_cert: want a string, got a number",
		"{exec_args: [~]}":           "puppet.exec_args.0: want a string, got null",
		"{csr_attributes: 1}":        "puppet.csr_attributes: want a map, got a number",
	} {
		var p ccfg.Puppet
		if err := decodeYAML(t, doc, "puppet", &p); err == nil || err.Error() != want {
			t.Errorf("%s: error %v, want %s", doc, err, want)
		}
	}
}

// TestChefDecode: the keys given, null included; a false validation_cert
// is ""; run_list as given; a null exec_arguments is Other; a null
// initial_attributes refused.
func TestChefDecode(t *testing.T) {
	var c ccfg.Chef
	if err := decodeYAML(t, "{log_level: ~, validation_cert: 0, run_list: recipe, exec_arguments: ~, omnibus_url_retries: '3'}", "chef", &c); err != nil {
		t.Fatal(err)
	}
	if !c.Given.Has("log_level") || c.Given.Has("server_url") || c.ValidationCert != "" || c.RunList != "recipe" {
		t.Errorf("chef: %+v", c)
	}
	if !reflect.DeepEqual(c.ExecArguments, ccfg.Args{Set: true, Other: "null"}) || c.OmnibusURLRetries == nil || *c.OmnibusURLRetries != 3 {
		t.Errorf("chef: %+v", c)
	}
	for doc, want := range map[string]string{
		"{initial_attributes: ~}": "chef.initial_attributes: want a map, got null",
		"{validation_cert: [a]}":  "chef.validation_cert: want a string, got a list",
	} {
		if err := decodeYAML(t, doc, "chef", &c); err == nil || err.Error() != want {
			t.Errorf("%s: error %v, want %s", doc, err, want)
		}
	}
}

// TestAnsibleDecode: a false section is as missing; pull and run_ansible
// keep their keys as options; an action must be a list.
func TestAnsibleDecode(t *testing.T) {
	var a ccfg.Ansible
	doc := "{install_method: 0, package_name: p, galaxy: {actions: ''}, pull: {url: u, playbook_name: '', clean: true}, setup_controller: {run_ansible: [{playbook_dir: /d, forks: 2}]}}"
	if err := decodeYAML(t, doc, "ansible", &a); err != nil {
		t.Fatal(err)
	}
	if a.Empty || a.InstallMethod != "" || a.PackageName != "p" || a.Galaxy == nil || a.Galaxy.Actions != nil {
		t.Errorf("ansible: %+v", a)
	}
	if p := a.Pull; p == nil || p.URL != "u" || p.PlaybookName != "" || !p.Clean || len(p.Options) != 3 {
		t.Errorf("pull: %+v", p)
	}
	if r := a.SetupController.RunAnsible; len(r) != 1 || r[0].PlaybookDir != "/d" || r[0].Options["forks"] != 2 {
		t.Errorf("run_ansible: %+v", r)
	}
	if err := decodeYAML(t, "{pull: '', galaxy: {}, setup_controller: 0}", "ansible", &a); err != nil || a.Pull != nil || a.Galaxy != nil || a.SetupController != nil {
		t.Errorf("false sections: %+v %v", a, err)
	}
	if err := decodeYAML(t, "[]", "ansible", &a); err != nil || !a.Empty {
		t.Errorf("[]: %+v %v", a, err)
	}
	for doc, want := range map[string]string{
		"x":                                  "ansible: want a map, got a string",
		"{galaxy: {actions: [x]}}":           "ansible.galaxy.actions.0: want a list, got a string",
		"{galaxy: {actions: [[a, ~]]}}":      "ansible.galaxy.actions.0.1: want a string, got null",
		"{pull: {url: u, playbook_name: 1}}": "ansible.pull.playbook_name: want a string, got a number",
	} {
		if err := decodeYAML(t, doc, "ansible", &a); err == nil || err.Error() != want {
			t.Errorf("%s: error %v, want %s", doc, err, want)
		}
	}
}
