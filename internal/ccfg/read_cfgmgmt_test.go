package ccfg_test

import (
	"reflect"
	"testing"

	"github.com/earlyinit/earlyinit/internal/ccfg"
	"github.com/earlyinit/earlyinit/internal/userdata"
)

// cfgmgmtOracle reads each document ("k: VALUE", or "{}" for k missing,
// loaded by cloud-init's util.load_yaml) and answers what cloud-init's
// configuration management modules make of k:
//   - bool_true, bool_false: util.get_cfg_option_bool(cfg, "k", True or
//     False) (cc_puppet's install, cleanup, start_service; exec);
//   - truthy: bool(cfg.get("k")), a module's `if cfg.get(key):`
//     (cc_ansible's sections, cc_chef's validation_cert);
//   - true_str: a true string (cc_chef's validation_cert);
//   - is_true, is_false: util.is_true and util.is_false
//     (cc_rh_subscription's auto-attach);
//   - configured, verified: cc_rh_subscription's
//     SubscriptionManager.is_configured() and _verify_keys()'s verdict
//     with k as username (and a password), and k as auto-attach (with a
//     service-level);
//   - dict: isinstance(v, dict) (not compared: it says which values
//     ansible refuses).
const cfgmgmtOracle = `
from cloudinit import util
from cloudinit.config import cc_rh_subscription as rh
out = []
for doc in json.load(sys.stdin):
    cfg = util.load_yaml(doc)
    v = cfg.get("k")
    r = {"bool_true": util.get_cfg_option_bool(cfg, "k", True),
         "bool_false": util.get_cfg_option_bool(cfg, "k", False),
         "truthy": bool(v), "true_str": bool(v) and isinstance(v, str),
         "dict": isinstance(v, dict),
         "is_true": util.is_true(v), "is_false": util.is_false(v)}
    user = {"username": v, "password": "p"} if "k" in cfg else {"password": "p"}
    r["configured"] = rh.SubscriptionManager({"rh_subscription": user}).is_configured()
    attach = {"activation-key": "a", "org": 1, "service-level": "s"}
    if "k" in cfg:
        attach["auto-attach"] = v
    r["verified"] = rh.SubscriptionManager({"rh_subscription": attach})._verify_keys()[0] is True
    out.append(r)
json.dump(out, sys.stdout)
`

type cfgmgmtAnswer struct {
	cfgmgmtRead
	Dict bool `json:"dict"`
}

type cfgmgmtRead struct {
	BoolTrue   bool `json:"bool_true"`
	BoolFalse  bool `json:"bool_false"`
	Truthy     bool `json:"truthy"`
	TrueStr    bool `json:"true_str"`
	IsTrue     bool `json:"is_true"`
	IsFalse    bool `json:"is_false"`
	Configured bool `json:"configured"`
	Verified   bool `json:"verified"`
}

// cfgmgmtDifferences are the values the types read otherwise than
// cloud-init, by design (ccfg.IsTrue's y, IsFalse's n).
var cfgmgmtDifferences = map[string]string{
	"y/bool_true": "y is true", "Y/bool_true": "Y is true", "y/bool_false": "y is true", "Y/bool_false": "Y is true",
	"y/is_true": "y is true", "Y/is_true": "Y is true", "n/is_false": "n is false", "N/is_false": "N is false",
	// auto-attach y: earlyinit's is_true takes it, cloud-init's neither
	// is_true nor is_false does (n is refused either way: not true).
	"y/verified": "y is true", "Y/verified": "Y is true",
}

// TestCfgmgmtReadsAsCloudInit: the readings of read_cfgmgmt.go's types
// against cloud-init's own helpers, each value given to the key that
// reads it: Puppet's booleans that default to true (null is false),
// Ansible's and its sections' Python truth, Chef's validation_cert
// (TruthyString), RHSubscription's truthiness (Later) and auto-attach
// (BoolWord), and cc_rh_subscription's verdicts made from them.
func TestCfgmgmtReadsAsCloudInit(t *testing.T) {
	values := []string{
		"yes", "no", "on", "off", "true", "false", "True", "FALSE", "y", "Y", "n", "N",
		"1", "0", "-3", "2", "1.0", "0.0", "1.5", "'1'", "'0'", "''", "' '", "maybe", "'false'",
		"x", "[]", "[a]", "{}", "{a: 1}", "~", missing,
	}
	d := newDifferences(t, cfgmgmtDifferences)
	oracleValues(t, cfgmgmtOracle, values, func(v string, x any, given bool, w cfgmgmtAnswer) {
		got, refused := cfgmgmtReadOf(t, x, given)
		if refused[0] != (w.Truthy && !w.Dict) || refused[1] != (w.Truthy && !w.TrueStr) {
			t.Errorf("%s: refused as ansible, chef.validation_cert: %v", v, refused)
		}
		gv, wv := reflect.ValueOf(got), reflect.ValueOf(w.cfgmgmtRead)
		for j := range gv.NumField() {
			form := reflect.TypeFor[cfgmgmtRead]().Field(j).Tag.Get("json")
			d.check(v, form, gv.Field(j).Bool() == wv.Field(j).Bool(), gv.Field(j).Bool(), wv.Field(j).Bool())
		}
	})
	d.done()
}

// cfgmgmtReadOf is what the types make of x, given as k or not; refused
// tells which values were refused: ansible's (a true value not a map) and
// chef.validation_cert's (a true value not a string).
func cfgmgmtReadOf(t *testing.T, x any, given bool) (r cfgmgmtRead, refused [2]bool) {
	t.Helper()
	with := func(k string, m map[string]any) map[string]any {
		if given {
			m[k] = x
		}
		return m
	}
	var p ccfg.Puppet
	if err := ccfg.DecodeValue(with("install", map[string]any{}), "puppet", &p); err != nil {
		t.Fatalf("%v: puppet.install: %v", x, err)
	}
	r.BoolTrue = p.Install
	if err := ccfg.DecodeValue(with("exec", map[string]any{}), "puppet", &p); err != nil {
		t.Fatalf("%v: puppet.exec: %v", x, err)
	}
	r.BoolFalse = p.Exec

	// Python truth: ansible itself (Empty, or refused), its pull (nil
	// when false), chef's validation_cert (TruthyString: "" when false),
	// rh_subscription's username (Later).
	var a ccfg.Ansible
	refused[0] = ccfg.DecodeValue(x, "ansible", &a) != nil
	r.Truthy = refused[0] || !a.Empty
	if err := ccfg.DecodeValue(with("pull", map[string]any{"install_method": "pip"}), "ansible", &a); err == nil && (a.Pull != nil) != r.Truthy {
		t.Errorf("%v: ansible.pull: %v, its truth %v", x, a.Pull, r.Truthy)
	}
	var c ccfg.Chef
	refused[1] = ccfg.DecodeValue(with("validation_cert", map[string]any{}), "chef", &c) != nil
	r.TrueStr = c.ValidationCert != ""

	var rh ccfg.RHSubscription
	if err := ccfg.DecodeValue(with("username", map[string]any{"password": "p"}), "rh_subscription", &rh); err != nil {
		t.Fatalf("%v: rh_subscription: %v", x, err)
	}
	if rh.Username.Truthy != r.Truthy {
		t.Errorf("%v: rh_subscription.username: Truthy %v, its truth %v", x, rh.Username.Truthy, r.Truthy)
	}
	r.Configured = rh.Username.Truthy && rh.Password.Truthy || rh.ActivationKey.Truthy
	if err := ccfg.DecodeValue(with("auto-attach", map[string]any{"activation-key": "a", "org": 1, "service-level": "s"}), "rh_subscription", &rh); err != nil {
		t.Fatalf("%v: rh_subscription: %v", x, err)
	}
	aa := rh.AutoAttach
	r.IsTrue, r.IsFalse = aa.True, aa.False
	// RHSubscription's _verify_keys: auto-attach a boolean word, and
	// true with service-level.
	r.Verified = len(rh.Unknown) == 0 && !(aa.Set && !aa.True && !aa.False) && !(rh.ServiceLevel.Set && !aa.True)
	return r, refused
}

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

// decodeDoc decodes the YAML doc into out as ccfg.DecodeValue, naming key.
func decodeDoc(t *testing.T, doc, key string, out any) error {
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
	if err := decodeDoc(t, "{cleanup: ~, exec_args: ~, conf: {agent: {a: 1}, foo: {}, ca_cert: pem}, csr_attributes: {other: [1]}}", "puppet", &p); err != nil {
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
		if err := decodeDoc(t, doc, "puppet", &p); err != nil || !reflect.DeepEqual(p.ExecArgs, want) {
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
		if err := decodeDoc(t, doc, "puppet", &p); err == nil || err.Error() != want {
			t.Errorf("%s: error %v, want %s", doc, err, want)
		}
	}
}

// TestChefDecode: the keys given, null included; a false validation_cert
// is ""; run_list as given; a null exec_arguments is Other; a null
// initial_attributes refused.
func TestChefDecode(t *testing.T) {
	var c ccfg.Chef
	if err := decodeDoc(t, "{log_level: ~, validation_cert: 0, run_list: recipe, exec_arguments: ~, omnibus_url_retries: '3'}", "chef", &c); err != nil {
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
		if err := decodeDoc(t, doc, "chef", &c); err == nil || err.Error() != want {
			t.Errorf("%s: error %v, want %s", doc, err, want)
		}
	}
}

// TestAnsibleDecode: a false section is as missing; pull and run_ansible
// keep their keys as options; an action must be a list.
func TestAnsibleDecode(t *testing.T) {
	var a ccfg.Ansible
	doc := "{install_method: 0, package_name: p, galaxy: {actions: ''}, pull: {url: u, playbook_name: '', clean: true}, setup_controller: {run_ansible: [{playbook_dir: /d, forks: 2}]}}"
	if err := decodeDoc(t, doc, "ansible", &a); err != nil {
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
	if err := decodeDoc(t, "{pull: '', galaxy: {}, setup_controller: 0}", "ansible", &a); err != nil || a.Pull != nil || a.Galaxy != nil || a.SetupController != nil {
		t.Errorf("false sections: %+v %v", a, err)
	}
	if err := decodeDoc(t, "[]", "ansible", &a); err != nil || !a.Empty {
		t.Errorf("[]: %+v %v", a, err)
	}
	for doc, want := range map[string]string{
		"x":                                  "ansible: want a map, got a string",
		"{galaxy: {actions: [x]}}":           "ansible.galaxy.actions.0: want a list, got a string",
		"{galaxy: {actions: [[a, ~]]}}":      "ansible.galaxy.actions.0.1: want a string, got null",
		"{pull: {url: u, playbook_name: 1}}": "ansible.pull.playbook_name: want a string, got a number",
	} {
		if err := decodeDoc(t, doc, "ansible", &a); err == nil || err.Error() != want {
			t.Errorf("%s: error %v, want %s", doc, err, want)
		}
	}
}

// TestRHSubscriptionDecode: nothing is refused when decoding: the keys
// not declared are listed, a value of the wrong kind is its Later's
// error (naming the key, never the value), an ID list must be a list.
func TestRHSubscriptionDecode(t *testing.T) {
	var r ccfg.RHSubscription
	doc := "{pools: [x], password: [S3cret], add-pool: abc, enable-repo: [' a ', 1], auto-attach: maybe, org: 7, bad: 1}"
	if err := decodeDoc(t, doc, "rh_subscription", &r); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(r.Unknown, []string{"bad", "pools"}) {
		t.Errorf("unknown: %q", r.Unknown)
	}
	if _, err := r.Password.Get(); err == nil || err.Error() != "rh_subscription.password: want a string, got a list" || !r.Password.Truthy {
		t.Errorf("password: %v", err)
	}
	if _, err := r.AddPool.Get(); err == nil || err.Error() != "rh_subscription.add-pool: want a list, got a string" {
		t.Errorf("add-pool: %v", err)
	}
	if l, err := r.EnableRepo.Get(); err != nil || !reflect.DeepEqual([]string(l), []string{"a", "1"}) {
		t.Errorf("enable-repo: %q %v", l, err)
	}
	if org, err := r.Org.Get(); err != nil || org != "7" || r.Username.Set || r.DisableRepo.Set {
		t.Errorf("org %q %v; %+v", org, err, r)
	}
	if a := r.AutoAttach; !a.Set || a.True || a.False || a.Kind != "a string" {
		t.Errorf("auto-attach: %+v", a)
	}
}
