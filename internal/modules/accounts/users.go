package accounts

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/earlyinit/earlyinit/internal/modules/core"
)

// userSpec is one normalized users entry: its name and its cloud-config
// keys, as cloud-init's ug_util.normalize_users_groups gives them.
type userSpec struct {
	Name    string
	Cfg     map[string]any
	Default bool
}

// defaultUserConfig is DefaultUser as a users entry, with cloud-config's
// user key ("user: NAME" or a map) applied over it.
func defaultUserConfig(e *core.Env) map[string]any {
	d := e.DefaultUser
	m := map[string]any{"name": d.Name, "lock_passwd": d.LockPasswd}
	if d.Gecos != "" {
		m["gecos"] = d.Gecos
	}
	if len(d.Groups) > 0 {
		m["groups"] = strList(d.Groups)
	}
	if d.Shell != "" {
		m["shell"] = d.Shell
	}
	if len(d.Sudo) > 0 {
		m["sudo"] = strList(d.Sudo)
	}
	if d.PrimaryGroup != "" {
		m["primary_group"] = d.PrimaryGroup
	}
	if d.Homedir != "" {
		m["homedir"] = d.Homedir
	}
	if d.System {
		m["system"] = true
	}
	switch u := e.Cfg["user"].(type) {
	case string:
		if u != "" {
			m["name"] = u
		}
	case map[string]any:
		for k, v := range u {
			m[k] = v
		}
	}
	return m
}

func strList(ss []string) []any {
	out := make([]any, len(ss))
	for i, s := range ss {
		out[i] = s
	}
	return out
}

// normalizeUsers is cloud-init's ug_util.normalize_users_groups for the
// users (TestNormalizeUsersAsCloudInit): users as a comma-separated string
// (sorted), a list of names ("default" for the default user), lists of
// names and maps (a map without a name is the default user's), or a map
// of name to config (true for defaults). Keys are read with "-" as "_"
// (lock-passwd). Entries of one name merge, the first one's keys winning.
// A user key makes the default user, with its config over the image's
// default user. The default user comes last, so that it is created after
// the others, as in cloud-init, whose dictionary it is put back into; its
// config is the image's default user's over the "default" entry's over
// the entry of its name, its groups both theirs (sorted, comma-joined).
//
// Unlike cloud-init: a map's users are in name order (cloud-init's are in
// the YAML's, which a merged map does not keep), and names in lists are
// trimmed (cloud-init creates " bob" from [alice, "carol, bob"]).
func normalizeUsers(e *core.Env) ([]userSpec, []string, error) {
	hasUser := core.PyTruthy(e.Cfg["user"])
	list, warns, err := usersEntries(e.Cfg["users"], hasUser)
	if err != nil || warns != nil {
		return nil, warns, err
	}
	l := &userList{index: map[string]int{}}
	for i, it := range list {
		switch u := it.(type) {
		case string:
			for _, n := range strings.Split(strings.TrimSpace(u), ",") {
				l.add(strings.TrimSpace(n), nil)
			}
		case []any:
			for _, x := range u {
				l.add(strings.TrimSpace(core.ScalarString(x)), nil)
			}
		case map[string]any:
			c := copyCfg(u)
			name := "default"
			if v, ok := c["name"]; ok {
				name = core.ScalarString(v)
				delete(c, "name")
			}
			l.add(name, c)
		default:
			return nil, nil, fmt.Errorf("users.%d: want a name or a map, got %s", i, core.Kind(it))
		}
	}
	if _, ok := l.index["default"]; !ok {
		return l.out, l.warns, nil
	}
	return placeDefault(e, l.out, l.index["default"], l.warns)
}

// usersEntries is the users key as a list of entries (normalize_users_groups
// and the first steps of _normalize_users): a string's names sorted, a
// map's users as entries in name order, and the default user's entry last
// when a user key asks for it (hasUser). A users that is none of list,
// map and string is ignored with a warning.
func usersEntries(raw any, hasUser bool) ([]any, []string, error) {
	var list []any
	switch t := raw.(type) {
	case nil:
	case string:
		list = sortedNames(t)
	case map[string]any:
		names := make([]string, 0, len(t))
		for n := range t {
			names = append(names, n)
		}
		sort.Strings(names)
		for _, n := range names {
			switch c := t[n].(type) {
			case map[string]any:
				c = copyCfg(c)
				c["name"] = n
				list = append(list, c)
			case []any, nil:
				// cloud-init: TypeError, "Unmappable user value type".
				return nil, nil, fmt.Errorf("users.%s: want a map or true, got %s", n, core.Kind(c))
			default:
				if core.IsTrue(c) {
					list = append(list, n)
				}
			}
		}
		if _, ok := t["default"]; hasUser && !ok {
			list = append(list, "default")
		}
		return list, nil, nil
	case []any:
		list = append(list, t...)
	default:
		return nil, []string{fmt.Sprintf("users: want a list, a map or a string, got %s: ignored", core.Kind(raw))}, nil
	}
	if hasUser {
		list = append(list, map[string]any{"name": "default"})
	}
	return list, nil, nil
}

// placeDefault takes the "default" entry (out[i]) out and puts the
// default user last: its config the image's default user's over the
// "default" entry's over the entry of its name (taken out too), its
// groups both theirs, sorted.
func placeDefault(e *core.Env, out []userSpec, i int, warns []string) ([]userSpec, []string, error) {
	defCfg := out[i].Cfg
	out = append(out[:i:i], out[i+1:]...)
	dc := defaultUserConfig(e)
	name := core.ScalarString(dc["name"])
	if name == "" {
		return out, append(warns, "users: default: no default user is configured: skipped"), nil
	}
	delete(dc, "name")
	defGroups := dc["groups"]
	delete(dc, "groups")
	parsed := map[string]any{}
	for j, u := range out {
		if u.Name == name {
			parsed = u.Cfg
			out = append(out[:j:j], out[j+1:]...)
			break
		}
	}
	parsed["groups"] = strings.Join(sortedUniq(parsed["groups"], defGroups), ",")
	cfg := map[string]any{}
	for _, src := range []map[string]any{dc, defCfg, parsed} {
		mergeFirst(cfg, src)
	}
	return append(out, userSpec{Name: name, Cfg: cfg, Default: true}), warns, nil
}

// userList collects users entries in order, merging entries of one name.
type userList struct {
	out   []userSpec
	index map[string]int // name -> its entry in out
	warns []string
}

// add adds user name with cfg, or merges cfg into the earlier entry of
// that name, whose keys win (cloud-init's mergemanydict). "" is no user.
func (l *userList) add(name string, cfg map[string]any) {
	if name == "" {
		return
	}
	norm := map[string]any{}
	for k, v := range cfg {
		if k = strings.TrimSpace(strings.ReplaceAll(k, "-", "_")); k != "" {
			norm[k] = v
		}
	}
	if i, ok := l.index[name]; ok {
		mergeFirst(l.out[i].Cfg, norm)
		return
	}
	l.index[name] = len(l.out)
	l.out = append(l.out, userSpec{Name: name, Cfg: norm})
}

// mergeFirst merges src into dst as cloud-init's mergemanydict merges a
// later source: keys dst has are kept, maps in both merged alike.
func mergeFirst(dst, src map[string]any) {
	for k, v := range src {
		old, ok := dst[k]
		if !ok {
			dst[k] = v
			continue
		}
		om, ok1 := old.(map[string]any)
		nm, ok2 := v.(map[string]any)
		if ok1 && ok2 {
			om = copyCfg(om)
			mergeFirst(om, nm)
			dst[k] = om
		}
	}
}

// sortedNames is cloud-init's uniq_merge_sorted of a comma-separated
// string: its names, once each, sorted as written (cloud-init sorts
// before trimming: " bob" before "alice").
func sortedNames(s string) []any {
	var names []string
	for _, n := range strings.Split(strings.TrimSpace(s), ",") {
		if n != "" && !slices.Contains(names, n) {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	out := make([]any, len(names))
	for i, n := range names {
		out[i] = n
	}
	return out
}

// sortedUniq is uniq_merge_sorted of group lists (comma-separated strings
// or lists), trimmed.
func sortedUniq(lists ...any) []string {
	var out []string
	for _, l := range lists {
		var items []string
		switch t := l.(type) {
		case string:
			items = strings.Split(t, ",")
		case []any:
			for _, x := range t {
				items = append(items, core.ScalarString(x))
			}
		case []string:
			items = t
		}
		for _, it := range items {
			if it = strings.TrimSpace(it); it != "" && !slices.Contains(out, it) {
				out = append(out, it)
			}
		}
	}
	sort.Strings(out)
	return out
}

func copyCfg(m map[string]any) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// defaultUserName is the name of the default user if users has it, "".
func defaultUserName(e *core.Env) string {
	users, _, err := normalizeUsers(e)
	if err != nil {
		return ""
	}
	for _, u := range users {
		if u.Default {
			return u.Name
		}
	}
	return ""
}

// groupSpec is one group to create, with its members.
type groupSpec struct {
	Name    string
	Members []string
}

// normalizeGroups reads the groups key: "a,b", a list of names or of maps
// {name: members}, or a map {name: members}. Members are a list or a
// comma-separated string.
func normalizeGroups(e *core.Env) ([]groupSpec, error) {
	raw, ok := e.Cfg["groups"]
	if !ok || raw == nil {
		return nil, nil
	}
	var out []groupSpec
	fromMap := func(path string, m map[string]any) error {
		names := make([]string, 0, len(m))
		for n := range m {
			names = append(names, n)
		}
		sort.Strings(names)
		for _, n := range names {
			var members []string
			if m[n] != nil {
				var err error
				if members, err = core.ToStrings(path+"."+n, m[n], true); err != nil {
					return err
				}
			}
			out = append(out, groupSpec{Name: n, Members: members})
		}
		return nil
	}
	switch t := raw.(type) {
	case string:
		for _, n := range strings.Split(t, ",") {
			if n = strings.TrimSpace(n); n != "" {
				out = append(out, groupSpec{Name: n})
			}
		}
	case map[string]any:
		if err := fromMap("groups", t); err != nil {
			return nil, err
		}
	case []any:
		for i, it := range t {
			switch g := it.(type) {
			case string:
				out = append(out, groupSpec{Name: strings.TrimSpace(g)})
			case map[string]any:
				if err := fromMap(fmt.Sprintf("groups.%d", i), g); err != nil {
					return nil, err
				}
			default:
				return nil, fmt.Errorf("groups.%d: want a name or a map, got %s", i, core.Kind(it))
			}
		}
	default:
		return nil, fmt.Errorf("groups: want a list, a map or a string, got %s", core.Kind(raw))
	}
	return out, nil
}
