package modules

import (
	"fmt"
	"sort"
	"strings"
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
func (e *Env) defaultUserConfig() map[string]any {
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

// normalizeUsers reads the users key: a comma-separated string, a list of
// names ("default" for the default user), lists of names, or maps with a
// name; or a map of name to config (true for defaults). Entries of the
// same name merge, later keys winning. A user key alone (no users) makes
// the default user, as in cloud-init.
func (e *Env) normalizeUsers() ([]userSpec, []string, error) {
	raw, ok := e.Cfg["users"]
	if !ok || raw == nil {
		if _, ok := e.Cfg["user"]; ok {
			raw = []any{"default"}
		} else {
			return nil, nil, nil
		}
	}
	l := &userList{e: e, index: map[string]int{}}
	switch t := raw.(type) {
	case string:
		l.addNames(t)
	case map[string]any:
		l.addMap(t)
	case []any:
		if err := l.addList(t); err != nil {
			return nil, l.warns, err
		}
	default:
		return nil, l.warns, fmt.Errorf("users: want a list, a map or a string, got %s", kind(raw))
	}
	return l.out, l.warns, nil
}

// userList collects users entries in order, merging entries of one name.
type userList struct {
	e     *Env
	out   []userSpec
	index map[string]int // name -> its entry in out
	warns []string
}

// add adds user name with cfg ("default": the default user, cfg over its
// config), or merges cfg into the earlier entry of that name.
func (l *userList) add(name string, cfg map[string]any) {
	isDefault := false
	if name == "default" {
		dc := l.e.defaultUserConfig()
		name = scalarString(dc["name"])
		if name == "" {
			l.warns = append(l.warns, "users: default: no default user is configured: skipped")
			return
		}
		for k, v := range cfg {
			dc[k] = v
		}
		cfg, isDefault = dc, true
	}
	delete(cfg, "name")
	if i, ok := l.index[name]; ok {
		for k, v := range cfg {
			l.out[i].Cfg[k] = v
		}
		l.out[i].Default = l.out[i].Default || isDefault
		return
	}
	l.index[name] = len(l.out)
	l.out = append(l.out, userSpec{Name: name, Cfg: cfg, Default: isDefault})
}

// addNames adds the users of a comma-separated list of names.
func (l *userList) addNames(s string) {
	for _, n := range strings.Split(s, ",") {
		if n = strings.TrimSpace(n); n != "" {
			l.add(n, map[string]any{})
		}
	}
}

// addMap adds the users of a map of name to config (true for defaults), in
// name order.
func (l *userList) addMap(m map[string]any) {
	names := make([]string, 0, len(m))
	for n := range m {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		switch c := m[n].(type) {
		case map[string]any:
			l.add(n, copyCfg(c))
		default:
			if isTrue(c) {
				l.add(n, map[string]any{})
			}
		}
	}
}

// addList adds the users of a list of names, lists of names and maps with
// a name.
func (l *userList) addList(list []any) error {
	for i, it := range list {
		switch u := it.(type) {
		case string:
			l.addNames(u)
		case []any:
			for _, x := range u {
				l.addNames(scalarString(x))
			}
		case map[string]any:
			c := copyCfg(u)
			name := cfgString(c, "name", "")
			if name == "" {
				return fmt.Errorf("users.%d: name is missing", i)
			}
			l.add(name, c)
		default:
			return fmt.Errorf("users.%d: want a name or a map, got %s", i, kind(it))
		}
	}
	return nil
}

func copyCfg(m map[string]any) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// defaultUserName is the name of the default user if users has it, "".
func (e *Env) defaultUserName() string {
	users, _, err := e.normalizeUsers()
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
func (e *Env) normalizeGroups() ([]groupSpec, error) {
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
				if members, err = toStrings(path+"."+n, m[n], true); err != nil {
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
				return nil, fmt.Errorf("groups.%d: want a name or a map, got %s", i, kind(it))
			}
		}
	default:
		return nil, fmt.Errorf("groups: want a list, a map or a string, got %s", kind(raw))
	}
	return out, nil
}
