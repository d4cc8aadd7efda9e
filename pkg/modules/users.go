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
	var warns []string
	raw, ok := e.Cfg["users"]
	if !ok || raw == nil {
		if _, ok := e.Cfg["user"]; ok {
			raw = []any{"default"}
		} else {
			return nil, nil, nil
		}
	}
	var out []userSpec
	index := map[string]int{}
	add := func(name string, cfg map[string]any) {
		isDefault := false
		if name == "default" {
			dc := e.defaultUserConfig()
			name = scalarString(dc["name"])
			if name == "" {
				warns = append(warns, "users: default: no default user is configured: skipped")
				return
			}
			for k, v := range cfg {
				dc[k] = v
			}
			cfg, isDefault = dc, true
		}
		delete(cfg, "name")
		if i, ok := index[name]; ok {
			for k, v := range cfg {
				out[i].Cfg[k] = v
			}
			out[i].Default = out[i].Default || isDefault
			return
		}
		index[name] = len(out)
		out = append(out, userSpec{Name: name, Cfg: cfg, Default: isDefault})
	}
	addNames := func(s string) {
		for _, n := range strings.Split(s, ",") {
			if n = strings.TrimSpace(n); n != "" {
				add(n, map[string]any{})
			}
		}
	}
	switch t := raw.(type) {
	case string:
		addNames(t)
	case map[string]any:
		names := make([]string, 0, len(t))
		for n := range t {
			names = append(names, n)
		}
		sort.Strings(names)
		for _, n := range names {
			switch c := t[n].(type) {
			case map[string]any:
				add(n, copyCfg(c))
			default:
				if isTrue(c) {
					add(n, map[string]any{})
				}
			}
		}
	case []any:
		for i, it := range t {
			switch u := it.(type) {
			case string:
				addNames(u)
			case []any:
				for _, x := range u {
					addNames(scalarString(x))
				}
			case map[string]any:
				c := copyCfg(u)
				name := cfgString(c, "name", "")
				if name == "" {
					return nil, warns, fmt.Errorf("users.%d: name is missing", i)
				}
				add(name, c)
			default:
				return nil, warns, fmt.Errorf("users.%d: want a name or a map, got %s", i, kind(it))
			}
		}
	default:
		return nil, warns, fmt.Errorf("users: want a list, a map or a string, got %s", kind(raw))
	}
	return out, warns, nil
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
