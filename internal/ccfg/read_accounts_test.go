package ccfg_test

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/earlyinit/earlyinit/internal/ccfg"
	"github.com/earlyinit/earlyinit/internal/userdata"
)

// accountsOracle reads each document ("k: VALUE", loaded by cloud-init's
// util.load_yaml) and answers what cloud-init's accounts modules make of
// the value:
//   - truthy: Python's bool(v) (create_user's kwargs.get(k), lock_passwd);
//   - is_true, is_false: util.is_true, util.is_false (add_user's flags,
//     ssh_pwauth);
//   - str: str(v), or null for a list or a map (Go prints those its way);
//   - text: v if it is a string, else "" (add_user's isinstance(v, str));
//   - expire: util.get_cfg_option_bool(chfg, "expire", True), chpasswd's;
//   - emit: not util.is_false(cfg["ssh"].get("emit_keys_to_console",
//     True)), whether cc_keys_to_console prints.
const accountsOracle = `
from cloudinit import util
out = []
for doc in json.load(sys.stdin):
    v = util.load_yaml(doc)["k"]
    out.append({"truthy": bool(v), "is_true": util.is_true(v), "is_false": util.is_false(v),
                "str": None if isinstance(v, (list, dict)) else str(v),
                "text": v if isinstance(v, str) else "",
                "expire": util.get_cfg_option_bool({"expire": v}, "expire", True),
                "emit": not util.is_false({"emit_keys_to_console": v}.get("emit_keys_to_console", True))})
json.dump(out, sys.stdout)
`

type accountsReading struct {
	Truthy  bool    `json:"truthy"`
	IsTrue  bool    `json:"is_true"`
	IsFalse bool    `json:"is_false"`
	Str     *string `json:"str"`
	Text    string  `json:"text"`
	Expire  bool    `json:"expire"`
	Emit    bool    `json:"emit"`
}

// accountsDifferences are the readings that differ from cloud-init's, by
// design, and why.
var accountsDifferences = map[string]string{
	// IsTrue takes y, IsFalse n (the ssh module's pre-YAML configs).
	"y/is_true": "y is true", "Y/is_true": "Y is true",
	"n/is_false": "n is false", "N/is_false": "N is false",
	"n/emit": "n is false", "N/emit": "N is false",
	// earlyinit's YAML loads a date as its text, cloud-init's as a date.
	"2001-01-01/text": "a date is a string",
	// The str() of null is no text: a key given as null is not Set.
	"~/str": "null is not set",
}

// TestAccountsReadingsAsCloudInit holds PyValue's readings, chpasswd's
// expire (util.translate_bool) and ssh.emit_keys_to_console to cloud-init's
// on 40 values.
func TestAccountsReadingsAsCloudInit(t *testing.T) {
	values := []string{
		"yes", "no", "on", "off", "true", "false", "True", "FALSE", "y", "Y", "n", "N",
		"1", "0", "-3", "010", "0x1f", "1.0", "1.5", "0.0", "1e3", ".inf",
		"'1'", "' 7 '", "'yes'", "'off'", "'true '", "'0'", "''", "'false'", "maybe",
		"' padded '", "[]", "[a, b]", "{}", "{a: b}", "2001-01-01", "~", "[1]", "'None'",
	}
	d := newDifferences(t, accountsDifferences)
	oracleValues(t, accountsOracle, values, func(v string, x any, _ bool, w accountsReading) {
		check := func(form string, agree bool, got, cloudInit any) { d.check(v, form, agree, got, cloudInit) }
		p := ccfg.PyValueOf(x)
		check("truthy", p.Truthy() == w.Truthy, p.Truthy(), w.Truthy)
		check("is_true", p.True() == w.IsTrue, p.True(), w.IsTrue)
		check("is_false", p.False() == w.IsFalse, p.False(), w.IsFalse)
		if w.Str != nil {
			check("str", p.Str() == *w.Str, p.Str(), *w.Str)
		}
		check("text", p.Text() == w.Text && p.IsString() == (w.Text != "" || x == ""), p.Text(), w.Text)
		var c ccfg.Chpasswd
		if err := ccfg.DecodeValue(map[string]any{"expire": x}, "chpasswd", &c); err != nil {
			t.Errorf("%s: chpasswd: %v", v, err)
		}
		check("expire", c.Expire == w.Expire, c.Expire, w.Expire)
		var s ccfg.SSHConsole
		if err := ccfg.DecodeValue(map[string]any{"emit_keys_to_console": x}, "ssh", &s); err != nil {
			t.Errorf("%s: ssh: %v", v, err)
		}
		emit := s.EmitKeysToConsole == nil || *s.EmitKeysToConsole
		check("emit", emit == w.Emit, emit, w.Emit)
	})
	d.done()
	// Missing: expire is true, the keys are printed.
	var c ccfg.Chpasswd
	var s ccfg.SSHConsole
	if ccfg.DecodeValue(map[string]any{}, "chpasswd", &c) != nil || !c.Expire ||
		ccfg.DecodeValue(map[string]any{}, "ssh", &s) != nil || s.EmitKeysToConsole != nil {
		t.Errorf("missing: expire %v, emit %v", c.Expire, s.EmitKeysToConsole)
	}
}

func TestPyValue(t *testing.T) {
	var zero ccfg.PyValue
	null := ccfg.PyValueOf(nil)
	if zero.Given() || zero.Set() || !null.Given() || null.Set() || null.Str() != "" || null.Truthy() {
		t.Errorf("zero %v/%v, null %v/%v %q", zero.Given(), zero.Set(), null.Given(), null.Set(), null.Str())
	}
	if s := fmt.Sprint(ccfg.PyValueOf("s3cret"), ccfg.User{Passwd: ccfg.PyString{PyValue: ccfg.PyValueOf("s3cret")}}); strings.Contains(s, "s3cret") {
		t.Errorf("printed %q", s)
	}
	for _, tt := range []struct {
		v     any
		split bool
		want  []string
		err   string
	}{
		{" a, b ", false, []string{" a, b "}, ""},
		{" a, ,b ", true, []string{"a", "b"}, ""},
		{[]any{" a ", 1, true}, true, []string{"a", "1", "True"}, ""},
		{[]any{"a", nil}, false, nil, "k.1: want a string, got null"},
		{[]any{[]any{"a"}}, false, nil, "k.0: want a string, got a list"},
		{map[string]any{"a": "b"}, false, nil, "k: want a string or a list of strings, got a map"},
		{5, true, nil, "k: want a string or a list of strings, got a number"},
	} {
		got, err := ccfg.PyValueOf(tt.v).Strings("k", tt.split)
		if fmt.Sprint(err) != fmt.Sprint(map[bool]any{true: nil, false: tt.err}[tt.err == ""]) || !reflect.DeepEqual(got, tt.want) {
			t.Errorf("Strings(%#v, %v) = %q, %v; want %q, %s", tt.v, tt.split, got, err, tt.want, tt.err)
		}
	}
	if got := ccfg.PyValueOf([]any{" a", nil, 2}).Items(); !reflect.DeepEqual(got, []string{" a", "<nil>", "2"}) {
		t.Errorf("Items %q", got)
	}
	if got, ok := ccfg.PyValueOf(map[string]any{"a": "k1"}).MapValues(); !ok || !reflect.DeepEqual(got, []string{"k1"}) {
		t.Errorf("MapValues %q %v", got, ok)
	}
}

// users decodes with Decode, as the module does.
func users(t *testing.T, doc string) (ccfg.Users, error) {
	t.Helper()
	raw, err := userdata.LoadYAML([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	u, _, err := ccfg.Decode[ccfg.Users](raw.(map[string]any), "users")
	return u, err
}

func TestUsersDecode(t *testing.T) {
	for _, tt := range []struct{ doc, want string }{
		{"users: 'carol, alice,bob, alice'", "alice bob carol"},
		{"users: [alice, 'carol, bob', [dave, ' erin'], {name: alice, shell: /bin/sh}, {gecos: x}]", "alice(shell) carol bob dave erin default(gecos)"},
		{"users: {bob: {shell: /bin/sh, name: x}, alice: true, carol: false, default: no}", "alice bob(shell) default(declined)"},
		{"users: [{name: alice, lock-passwd: false}, {name: alice, lock_passwd: true, shell: x}]", "alice(shell,lock_passwd=False)"},
		{"users: [{name: alice, ' lock-passwd': 1, lock_passwd: 2}]", "alice(lock_passwd=2)"},
		{"users: [{name: ~}, {name: ''}]", "<nil>"},
	} {
		us, err := users(t, tt.doc)
		if err != nil {
			t.Errorf("%s: %v", tt.doc, err)
			continue
		}
		var got []string
		for _, u := range us {
			s := u.Name.Str()
			var keys []string
			if u.Shell.Given() {
				keys = append(keys, "shell")
			}
			if u.Gecos.Given() {
				keys = append(keys, "gecos")
			}
			if u.LockPasswd.Given() {
				keys = append(keys, "lock_passwd="+u.LockPasswd.Str())
			}
			if u.OldLockPasswd.Given() {
				keys = append(keys, "lock-passwd")
			}
			if u.Declined() {
				keys = append(keys, "declined")
			}
			if keys != nil {
				s += "(" + strings.Join(keys, ",") + ")"
			}
			got = append(got, s)
		}
		if strings.Join(got, " ") != tt.want {
			t.Errorf("%s: got %q, want %q", tt.doc, strings.Join(got, " "), tt.want)
		}
	}
	for doc, want := range map[string]string{
		"users: {x: [a]}":  "users.x: want a map or true, got a list",
		"users: {x: null}": "users.x: want a map or true, got null",
		"users: [a, 5]":    "users.1: want a name or a map, got a number",
		"users: 42":        "users: want a list, a map or a string, got a number: ignored",
	} {
		_, err := users(t, doc)
		if err == nil || err.Error() != want {
			t.Errorf("%s: error %v, want %q", doc, err, want)
		}
		if ignored := errors.Is(err, ccfg.ErrIgnored); ignored != (doc == "users: 42") {
			t.Errorf("%s: ErrIgnored %v", doc, ignored)
		}
	}
}

func TestUserKeyAndMerge(t *testing.T) {
	for _, tt := range []struct {
		v      any
		name   string
		truthy bool
	}{
		{"bob", "bob", true}, {"", "", false}, {5, "", true}, {[]any{}, "", false},
		{map[string]any{}, "", false}, {map[string]any{"name": nil}, "<nil>", true},
	} {
		var u ccfg.User
		if err := ccfg.DecodeValue(tt.v, "user", &u); err != nil || u.Name.Str() != tt.name || u.Truthy() != tt.truthy {
			t.Errorf("user %#v: %v name %q truthy %v", tt.v, err, u.Name.Str(), u.Truthy())
		}
	}
	var a, b ccfg.User
	_ = ccfg.DecodeValue(map[string]any{"shell": nil, "ssh_authorized_keys": map[string]any{"a": "k1"}}, "a", &a)
	_ = ccfg.DecodeValue(map[string]any{"shell": "/bin/sh", "gecos": "B", "ssh_authorized_keys": map[string]any{"a": "x", "b": "k2"}}, "b", &b)
	a.Merge(&b)
	keys, _ := a.SSHAuthorizedKeys.MapValues()
	if !a.Shell.Given() || a.Shell.Set() || a.Gecos.Str() != "B" || len(keys) != 2 || !strings.Contains(strings.Join(keys, " "), "k1") {
		t.Errorf("merged: shell %v gecos %q keys %q", a.Shell, a.Gecos.Str(), keys)
	}
	if _, ok := b.SSHAuthorizedKeys.MapValues(); !ok {
		t.Error("merging changed the later user")
	}
}

func TestGroupsDecode(t *testing.T) {
	for _, tt := range []struct{ doc, want, err string }{
		{"groups: 'a, ,b'", "a: b:", ""},
		{"groups: [admins, {ops: [alice, bob]}, {devs: 'carol, dave'}, ' x ']", "admins: ops:alice,bob devs:carol,dave x:", ""},
		{"groups: {ops: [alice], admins: null}", "admins: ops:alice", ""},
		{"groups: [5]", "", "groups.0: want a name or a map, got a number"},
		{"groups: {ops: 5}", "", "groups.ops: want a string or a list of strings, got a number"},
		{"groups: [{ops: [~]}]", "", "groups.0.ops.0: want a string, got null"},
		{"groups: 5", "", "groups: want a list, a map or a string, got a number"},
	} {
		raw, err := userdata.LoadYAML([]byte(tt.doc))
		if err != nil {
			t.Fatal(err)
		}
		gs, _, err := ccfg.Decode[ccfg.Groups](raw.(map[string]any), "groups")
		if fmt.Sprint(err) != fmt.Sprint(map[bool]any{true: nil, false: tt.err}[tt.err == ""]) {
			t.Errorf("%s: error %v, want %q", tt.doc, err, tt.err)
			continue
		}
		var got []string
		for _, g := range gs {
			got = append(got, g.Name+":"+strings.Join(g.Members, ","))
		}
		if strings.Join(got, " ") != tt.want {
			t.Errorf("%s: %q, want %q", tt.doc, strings.Join(got, " "), tt.want)
		}
	}
}

func TestChpasswdAndHostKeysDecode(t *testing.T) {
	dec := func(doc string) (*ccfg.Chpasswd, error) {
		raw, err := userdata.LoadYAML([]byte(doc))
		if err != nil {
			t.Fatal(err)
		}
		c, _, err := ccfg.Decode[*ccfg.Chpasswd](raw.(map[string]any), "chpasswd")
		return c, err
	}
	c, err := dec("chpasswd: {users: [{name: a, password: 5}, {name: b, type: RANDOM}], list: \"x:1\\ny:2\"}")
	if err != nil || len(c.Users) != 2 || c.Users[0].Password.Str() != "5" || c.Users[1].Type.Str() != "RANDOM" ||
		c.Users[1].Password.Given() || !reflect.DeepEqual([]string(c.List), []string{"x:1", "y:2"}) || !c.ListText || !c.Expire {
		t.Errorf("chpasswd: %+v %v", c, err)
	}
	if c, err := dec("chpasswd: {list: [a:1, 2], expire: ~}"); err != nil || !reflect.DeepEqual([]string(c.List), []string{"a:1", "2"}) || c.ListText || c.Expire {
		t.Errorf("chpasswd list: %+v %v", c, err)
	}
	if c, err := dec("chpasswd: ~"); c != nil || err != nil {
		t.Errorf("chpasswd null: %+v %v", c, err)
	}
	for doc, want := range map[string]string{
		"chpasswd: [a]":                "chpasswd: want a map, got a list",
		"chpasswd: {users: x}":         "chpasswd.users: want a list, got a string",
		"chpasswd: {users: [x]}":       "chpasswd.users.0: want a map, got a string",
		"chpasswd: {list: {a: b}}":     "chpasswd.list: want a list, got a map",
		"chpasswd: {list: 5}":          "chpasswd.list: want a list, got a number",
		"chpasswd: {users: [~], x: 1}": "chpasswd.users.0: want a map, got null",
	} {
		if _, err := dec(doc); err == nil || err.Error() != want {
			t.Errorf("%s: error %v, want %q", doc, err, want)
		}
	}
	for _, tt := range []struct {
		cfg   map[string]any
		keys  map[string]string
		given bool
		err   string
	}{
		{map[string]any{}, nil, false, ""},
		{map[string]any{"ssh_keys": nil}, nil, true, "ssh_keys: want a map, got null"},
		{map[string]any{"ssh_keys": "x"}, nil, true, "ssh_keys: want a map, got a string"},
		{map[string]any{"ssh_keys": map[string]any{"rsa_private": "K", "x": 1, "y": nil}}, map[string]string{"rsa_private": "K", "x": "1", "y": "<nil>"}, true, ""},
	} {
		h, given, err := ccfg.Decode[ccfg.HostKeys](tt.cfg, "ssh_keys")
		if given != tt.given || fmt.Sprint(err) != fmt.Sprint(map[bool]any{true: nil, false: tt.err}[tt.err == ""]) || !reflect.DeepEqual(h.Keys, tt.keys) {
			t.Errorf("ssh_keys %v: %v %v %v", tt.cfg, h.Keys, given, err)
		}
	}
}
