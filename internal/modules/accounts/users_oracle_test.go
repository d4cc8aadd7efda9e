package accounts

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/earlyinit/earlyinit/internal/ccfg"
	"github.com/earlyinit/earlyinit/internal/modules/core"
	"github.com/earlyinit/earlyinit/internal/modules/coretest"
	"github.com/earlyinit/earlyinit/internal/oracle"
)

// normalizeDriver runs cloud-init 22.4's ug_util.normalize_users_groups on
// each config, with a distro whose default user is the test's (Debian's
// cloud.cfg default_user). It prints the users in cloud-init's order
// (the order cc_users_groups creates them in) with their configuration,
// and the groups with their members, or the error.
const normalizeDriver = `
from cloudinit.distros import ug_util
inp = json.load(sys.stdin)
class Distro:
    def get_default_user(self):
        return dict(inp["default"])
out = []
for cfg in inp["cfgs"]:
    try:
        users, groups = ug_util.normalize_users_groups(cfg, Distro())
        out.append({"users": [[n, c] for n, c in users.items()], "groups": [[n, m] for n, m in groups.items()]})
    except Exception as e:
        out.append({"error": type(e).__name__})
print(json.dumps(out))
`

// normalized is a users/groups normalization as the test compares it:
// users in order, each "name default=BOOL key=value..." with keys sorted,
// groups (a user's, a group's members) as sorted comma-joined names.
type normalized struct {
	Users  []string
	Groups []string
	Error  bool
}

// nameList reads a list of names as cloud-init's uniq_merge does: a string
// split at commas, a list's items; sorted, duplicates dropped.
func nameList(v any) string {
	var out []string
	switch t := v.(type) {
	case string:
		out = strings.Split(t, ",")
	case []any:
		for _, x := range t {
			out = append(out, strings.Split(fmt.Sprint(x), ",")...)
		}
	case nil:
	default:
		return fmt.Sprint(t)
	}
	var clean []string
	for _, s := range out {
		if s = strings.TrimSpace(s); s != "" {
			clean = append(clean, s)
		}
	}
	slices.Sort(clean)
	return strings.Join(slices.Compact(clean), ",")
}

func userLine(name string, def bool, cfg map[string]any) string {
	var kv []string
	for k, v := range cfg {
		switch k {
		case "default", "name":
			continue
		case "groups":
			kv = append(kv, "groups="+nameList(v))
			continue
		}
		b, _ := json.Marshal(v)
		kv = append(kv, k+"="+string(b))
	}
	slices.Sort(kv)
	return fmt.Sprintf("%s default=%v %s", name, def, strings.Join(kv, " "))
}

// cfgMap is a users entry's keys as the YAML values they were given as
// (the strings, booleans and lists of strings of these cases).
func cfgMap(u ccfg.User) map[string]any {
	m := map[string]any{}
	uv := reflect.ValueOf(u)
	for i := range uv.NumField() {
		key, _, _ := strings.Cut(uv.Type().Field(i).Tag.Get("yaml"), ",")
		if key == "" {
			continue
		}
		f, ok := uv.Field(i).Interface().(interface{ Given() bool })
		if !ok || !f.Given() {
			continue
		}
		var p ccfg.PyValue
		switch t := f.(type) {
		case ccfg.PyValue:
			p = t
		case ccfg.PyString:
			p = t.PyValue
		case ccfg.PyBool:
			p = t.PyValue
		case ccfg.PyList:
			p = t.PyValue
		}
		b, isBool := p.Bool()
		switch {
		case !p.Set():
			m[key] = nil
		case p.IsString():
			m[key] = p.Text()
		case isBool:
			m[key] = b
		case p.Items() != nil:
			m[key] = strList(p.Items())
		default:
			m[key] = p.Str()
		}
	}
	return m
}

// TestNormalizeUsersAsCloudInit: which users the users_groups module
// creates, in which order (the order decides their uids), with which
// configuration, and which groups with which members, are cloud-init
// 22.4's (ug_util.normalize_users_groups) for the forms cloud-config
// gives them in.
func TestNormalizeUsersAsCloudInit(t *testing.T) {
	cfgs := []string{
		"users: [default]",
		"users: [default, alice]",
		"users: [alice, default]",
		"users: [alice, {name: bob, shell: /bin/sh}]",
		"users: 'carol, alice,bob'",
		"users: [[carol, alice], dave]",
		"users: {alice: true, bob: {shell: /bin/zsh}, carol: false}",
		"user: alice",
		"user: {name: alice, shell: /bin/zsh}",
		"user: alice\nusers: [bob]",
		"user: alice\nusers: [default, bob]",
		"users: [{name: default, groups: [wheel]}]",
		"users: [default, {name: debian, groups: [wheel], shell: /bin/sh}]",
		"users: [{name: alice, shell: /bin/sh}, {name: alice, shell: /bin/zsh, gecos: A}]",
		"users: [{name: alice, lock-passwd: false}]",
		"users: [{name: alice, groups: 'b, a'}]",
		"users: [alice, alice]",
		"groups: [admins, {ops: [alice, bob]}, {devs: 'carol,dave'}]",
		"groups: {ops: [alice], admins: null}",
		"groups: 'a, b'",
		"users: []",
		"users: 'carol, bob,alice'",
		"users: [{shell: /bin/zsh}]",
		"users: {alice: null}",
		"users: {alice: true}\nuser: bob",
		"user: {name: alice, groups: [wheel]}\nusers: [default]",
		"users: [alice, 'carol, bob']",
		"users: {default: false, alice: true}\nuser: bob",
		"users: {default: {shell: /bin/sh}}\nuser: bob",
		"user: {name: bob, lock-passwd: false, shell: /bin/sh}\nusers: [default]",
		"users: [{name: alice, lock-passwd: false, lock_passwd: true}]",
		"users: [{name: alice, shell: null}, {name: alice, shell: /bin/sh, no-create-home: true}]",
		"user: {shell: /bin/sh}",
		"users: [default]\nuser: ''",
	}
	// The configs where earlyinit deliberately differs, and why
	// (docs/cloud-config.md says so too).
	differences := map[string]string{
		"groups: {ops: [alice], admins: null}": "a group without members: cloud-init's _normalize_groups raises TypeError and no user or group is made; earlyinit makes the group",
		"groups: 'a, b'":                       "cloud-init makes the group \" b\" (it splits at commas without trimming), which groupadd refuses; earlyinit trims",
		"users: [alice, 'carol, bob']":         "cloud-init makes the user \" bob\" (same), which useradd refuses; earlyinit trims",
	}
	used := map[string]bool{}
	d := core.DebianDefaultUser()
	def := map[string]any{"name": d.Name, "lock_passwd": d.LockPasswd, "gecos": d.Gecos, "groups": strings.Join(d.Groups, ", "),
		"sudo": strList(d.Sudo), "shell": d.Shell}
	var in []map[string]any
	for _, c := range cfgs {
		in = append(in, coretest.NewEnv(t, c).Cfg)
	}
	var raw []struct {
		Users  [][2]json.RawMessage
		Groups [][2]json.RawMessage
		Error  string
	}
	oracle.Run(t, normalizeDriver, map[string]any{"default": def, "cfgs": in}, &raw)
	if len(raw) != len(cfgs) {
		t.Fatalf("%d answers for %d configs", len(raw), len(cfgs))
	}
	for i, c := range cfgs {
		var want normalized
		want.Error = raw[i].Error != ""
		for _, u := range raw[i].Users {
			var name string
			var cfg map[string]any
			if json.Unmarshal(u[0], &name) != nil || json.Unmarshal(u[1], &cfg) != nil {
				t.Fatalf("%s: oracle user %s", c, u)
			}
			want.Users = append(want.Users, userLine(name, cfg["default"] == true, cfg))
		}
		for _, g := range raw[i].Groups {
			var name string
			var members any
			if json.Unmarshal(g[0], &name) != nil || json.Unmarshal(g[1], &members) != nil {
				t.Fatalf("%s: oracle group %s", c, g)
			}
			want.Groups = append(want.Groups, name+":"+nameList(members))
		}

		te := coretest.NewEnv(t, c)
		var got normalized
		users, _, err := normalizeUsers(te.Env)
		groups, gerr := normalizeGroups(te.Env)
		got.Error = err != nil || gerr != nil
		for _, u := range users {
			got.Users = append(got.Users, userLine(u.Name, u.Default, cfgMap(u.Cfg)))
		}
		for _, g := range groups {
			got.Groups = append(got.Groups, g.Name+":"+nameList(strList(g.Members)))
		}
		same := slices.Equal(got.Users, want.Users) && slices.Equal(got.Groups, want.Groups) && got.Error == want.Error
		if why, ok := differences[c]; ok {
			used[c] = true
			if same {
				t.Errorf("%s: earlyinit does as cloud-init now; drop the difference (%s)", c, why)
			}
			continue
		}
		if !same {
			t.Errorf("%s\nearlyinit:\n  %s\n  groups %q error %v\ncloud-init:\n  %s\n  groups %q error %v", c,
				strings.Join(got.Users, "\n  "), got.Groups, err, strings.Join(want.Users, "\n  "), want.Groups, raw[i].Error)
		}
	}
	for c, why := range differences {
		if !used[c] {
			t.Errorf("difference for %q (%s) has no case", c, why)
		}
	}
}
