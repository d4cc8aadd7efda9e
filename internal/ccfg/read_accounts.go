package ccfg

import (
	"errors"
	"fmt"
	"reflect"
	"slices"
	"sort"
	"strings"

	"github.com/earlyinit/earlyinit/internal/pystr"
	"github.com/earlyinit/earlyinit/internal/scalar"
)

// The readings of the accounts modules' keys (users_groups, set_passwords,
// ssh_import_id, keys_to_console, ssh) that Decode's own do not make:
// cloud-init reads these by the kind of the value it finds, as Python
// does, and the types here read them so.

// PyValue is a key cloud-init reads by the kind of its value, as Python
// does, whatever kind the schema declares: a users entry's keys (the
// keyword arguments of Distro.create_user and add_user), ssh_pwauth. It
// holds the YAML value, a null one too, and reads it as cloud-init's code
// does; the zero PyValue is a key not given. Its schema is the holder's to
// give (a Shape), or PyString's, PyBool's, PyList's.
type PyValue struct {
	given bool
	v     any
}

// PyValueOf is a key given with v.
func PyValueOf(v any) PyValue { return PyValue{given: true, v: v} }

// DecodeCC takes any value.
func (p *PyValue) DecodeCC(v any, _ string) error {
	*p = PyValueOf(v)
	return nil
}

func (p *PyValue) py() *PyValue { return p }

// String names the value's kind, never the value: a PyValue may hold a
// password.
func (p PyValue) String() string {
	if !p.given {
		return "not given"
	}
	return scalar.YAMLNoun(p.v)
}

// Given tells whether the key is there, null or not ("key" in kwargs).
func (p PyValue) Given() bool { return p.given }

// Set tells whether the key is there and not null.
func (p PyValue) Set() bool { return p.given && p.v != nil }

// Str is Python's str() of the value (String; a map or a list as Go
// prints it), "" when the key is not Set.
func (p PyValue) Str() string {
	if !p.Set() {
		return ""
	}
	return String(p.v)
}

// Text is the value if it is a string, else "" (add_user's
// isinstance(val, str)).
func (p PyValue) Text() string {
	s, _ := p.v.(string)
	return s
}

// IsString tells whether the value is a string.
func (p PyValue) IsString() bool {
	_, ok := p.v.(string)
	return ok
}

// Bool is the value if it is a boolean.
func (p PyValue) Bool() (b, ok bool) {
	b, ok = p.v.(bool)
	return b, ok
}

// True is util.is_true of the value (IsTrue, with "y"); false when not
// Set.
func (p PyValue) True() bool { return p.Set() && IsTrue(p.v) }

// False is util.is_false of the value (IsFalse, with "n"); false when not
// Set.
func (p PyValue) False() bool { return p.Set() && IsFalse(p.v) }

// Truthy is Python's bool() of the value: false for a key not given,
// null, false, 0, "" and an empty list or map.
func (p PyValue) Truthy() bool { return scalar.Truthy(p.v) }

// Strings is the value as a list of strings: a string is one item (with
// commaSplit, its comma-separated items, trimmed, the empty ones dropped),
// a list's scalar items are their str(), trimmed. nil when not Set; any
// other value, or a list holding a list, a map or null, is an error
// naming path.
func (p PyValue) Strings(path string, commaSplit bool) ([]string, error) {
	if !p.Set() {
		return nil, nil
	}
	return Strings(path, p.v, commaSplit)
}

// Items are the items of a list of names as cloud-init's uniq_merge
// takes them: a string's comma-separated items, a list's items' str()
// (as they are: not trimmed); none for any other value.
func (p PyValue) Items() []string {
	switch t := p.v.(type) {
	case string:
		return strings.Split(t, ",")
	case []any:
		out := make([]string, len(t))
		for i, x := range t {
			out[i] = String(x)
		}
		return out
	}
	return nil
}

// MapValues are the str() of the values of a map (create_user's
// ssh_authorized_keys as a map), in no order; ok is false for any other
// value.
func (p PyValue) MapValues() (vals []string, ok bool) {
	m, ok := p.v.(map[string]any)
	if !ok {
		return nil, false
	}
	for _, v := range m {
		vals = append(vals, String(v))
	}
	return vals, true
}

// merged is p with later merged in as cloud-init's mergemanydict merges a
// later source: p's value if given, two maps merged alike.
func (p PyValue) merged(later PyValue) PyValue {
	if !p.given {
		return later
	}
	pm, ok1 := p.v.(map[string]any)
	lm, ok2 := later.v.(map[string]any)
	if ok1 && ok2 {
		return PyValueOf(mergedMaps(pm, lm))
	}
	return p
}

// mergedMaps is a copy of dst with the keys of src it lacks, maps in both
// merged alike.
func mergedMaps(dst, src map[string]any) map[string]any {
	out := make(map[string]any, len(dst)+len(src))
	for k, v := range dst {
		out[k] = v
	}
	for k, v := range src {
		old, ok := out[k]
		if !ok {
			out[k] = v
			continue
		}
		om, ok1 := old.(map[string]any)
		nm, ok2 := v.(map[string]any)
		if ok1 && ok2 {
			out[k] = mergedMaps(om, nm)
		}
	}
	return out
}

// toStrings is PyValue.Strings of v.
func Strings(path string, v any, commaSplit bool) ([]string, error) {
	switch t := v.(type) {
	case string:
		if !commaSplit {
			return []string{t}, nil
		}
		var out []string
		for _, s := range strings.Split(t, ",") {
			if s = strings.TrimSpace(s); s != "" {
				out = append(out, s)
			}
		}
		return out, nil
	case []any:
		out := make([]string, 0, len(t))
		for i, x := range t {
			if x == nil || isCollection(x) {
				return nil, fmt.Errorf("%s.%d: want a string, got %s", path, i, scalar.YAMLNoun(x))
			}
			out = append(out, strings.TrimSpace(String(x)))
		}
		return out, nil
	}
	return nil, fmt.Errorf("%s: want a string or a list of strings, got %s", path, scalar.YAMLNoun(v))
}

// PyString is a PyValue the schema declares a string.
type PyString struct{ PyValue }

// Schema is a string's.
func (PyString) Schema() *Schema { return &Schema{Types: []string{"string"}} }

// PyBool is a PyValue the schema declares a boolean.
type PyBool struct{ PyValue }

// Schema is a boolean's.
func (PyBool) Schema() *Schema { return &Schema{Types: []string{"boolean"}} }

// PyList is a PyValue the schema declares a list of strings.
type PyList struct{ PyValue }

// Schema is a list of strings'.
func (PyList) Schema() *Schema {
	return &Schema{Types: []string{"list"}, Items: &Schema{Types: []string{"string"}}}
}

// pyField is a field of User: a PyValue.
type pyField interface{ py() *PyValue }

// DecodeCC reads a users entry's map (or the user key's: a string there is
// the name alone), each key as it is given, a null one too (Given); a key
// User does not declare is ignored. name is read as str() at once: a null
// one is Go's "<nil>", which no user may be named (the user then fails, as
// in cloud-init, which fails on None). Any value decodes: what a key holds
// is read when the module reads it.
func (u *User) DecodeCC(v any, _ string) error {
	*u = User{truthy: scalar.Truthy(v)}
	switch t := v.(type) {
	case string:
		if t != "" {
			u.Name.PyValue = PyValueOf(t)
		}
	case map[string]any:
		uv := reflect.ValueOf(u).Elem()
		for _, f := range fields(uv.Type()) {
			if x, ok := t[f.key]; ok {
				*uv.FieldByIndex(f.index).Addr().Interface().(pyField).py() = PyValueOf(x)
			}
		}
		if u.Name.Given() {
			u.Name.PyValue = PyValueOf(String(u.Name.v))
		}
	}
	return nil
}

// Truthy is Python's truth of the value User was decoded from: a user key
// that is true makes the default user (normalize_users_groups).
func (u *User) Truthy() bool { return u.truthy }

// Declined tells that the entry is users' map by name's "default" with a
// value that is not true: no default user, even with a user key
// (normalize_users_groups keeps the value it finds there).
func (u *User) Declined() bool { return u.declined }

// Merge gives u the keys later has and u has not: cloud-init's
// mergemanydict, the first source winning, maps in both merged alike.
func (u *User) Merge(later *User) {
	uv, lv := reflect.ValueOf(u).Elem(), reflect.ValueOf(later).Elem()
	for _, f := range fields(uv.Type()) {
		p := uv.FieldByIndex(f.index).Addr().Interface().(pyField).py()
		*p = p.merged(*lv.FieldByIndex(f.index).Addr().Interface().(pyField).py())
	}
}

// ErrIgnored ends the error of a value a module ignores with a warning,
// as cloud-init does (users that is none of a list, a map and a string).
var ErrIgnored = errors.New("ignored")

// DecodeCC reads users as cloud-init's normalize_users_groups does: a
// comma-separated string's names (sorted as written, then trimmed), a
// list's names (a string's comma-separated ones, a list's items), maps
// (one without a name is the "default" entry) or a map by name (a map of
// config, or true), in name order. Entries of one name merge, the first
// one's keys winning (Merge); a map's keys are read with "-" as "_"
// (lock-passwd), trimmed. "" is no user. Each entry is named by its
// Name. A users of any other kind is an error wrapping ErrIgnored.
func (us *Users) DecodeCC(v any, path string) error {
	l := usersList{index: map[string]int{}}
	switch t := v.(type) {
	case string:
		for _, n := range sortedNames(t) {
			l.add(strings.TrimSpace(n), nil)
		}
	case map[string]any:
		names := make([]string, 0, len(t))
		for n := range t {
			names = append(names, n)
		}
		sort.Strings(names)
		for _, n := range names {
			switch c := t[n].(type) {
			case map[string]any:
				c = mergedMaps(map[string]any{}, c)
				delete(c, "name")
				l.add(n, c)
			case []any, nil:
				// cloud-init: TypeError, "Unmappable user value type".
				return fmt.Errorf("%s.%s: want a map or true, got %s", path, n, scalar.YAMLNoun(c))
			default:
				if IsTrue(c) {
					l.add(n, nil)
				} else if n == "default" {
					// Kept, Declined: no user key makes the
					// default user then.
					l.out = append(l.out, User{Name: PyString{PyValueOf(n)}, declined: true})
				}
			}
		}
	case []any:
		for i, it := range t {
			if err := l.addItem(it, fmt.Sprintf("%s.%d", path, i)); err != nil {
				return err
			}
		}
	default:
		return fmt.Errorf("%s: want a list, a map or a string, got %s: %w", path, scalar.YAMLNoun(v), ErrIgnored)
	}
	*us = l.out
	return nil
}

// usersList collects users entries in order, merging entries of one name.
type usersList struct {
	out   Users
	index map[string]int // name -> its entry in out
}

// addItem adds a users list's item: names, or a map.
func (l *usersList) addItem(it any, path string) error {
	switch e := it.(type) {
	case string:
		for _, n := range strings.Split(strings.TrimSpace(e), ",") {
			l.add(strings.TrimSpace(n), nil)
		}
	case []any:
		for _, x := range e {
			l.add(strings.TrimSpace(String(x)), nil)
		}
	case map[string]any:
		name := "default"
		if n, ok := e["name"]; ok {
			name = String(n)
		}
		c := mergedMaps(map[string]any{}, e)
		delete(c, "name")
		l.add(name, c)
	default:
		return fmt.Errorf("%s: want a name or a map, got %s", path, scalar.YAMLNoun(it))
	}
	return nil
}

// add adds user name with cfg's keys, or merges them into the earlier
// entry of that name, whose keys win. "" is no user.
func (l *usersList) add(name string, cfg map[string]any) {
	if name == "" {
		return
	}
	// Sorted, so that of two keys read as one (lock-passwd and
	// lock_passwd) the same one wins each time.
	keys := make([]string, 0, len(cfg))
	for k := range cfg {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	norm := map[string]any{}
	for _, k := range keys {
		if n := strings.TrimSpace(strings.ReplaceAll(k, "-", "_")); n != "" {
			norm[n] = cfg[k]
		}
	}
	var u User
	_ = u.DecodeCC(norm, "") // any map decodes
	u.Name.PyValue = PyValueOf(name)
	if i, ok := l.index[name]; ok {
		l.out[i].Merge(&u)
		return
	}
	l.index[name] = len(l.out)
	l.out = append(l.out, u)
}

// sortedNames is cloud-init's uniq_merge_sorted of a comma-separated
// string: its names, once each, sorted as written (cloud-init sorts
// before trimming: " bob" before "alice").
func sortedNames(s string) []string {
	var names []string
	for _, n := range strings.Split(strings.TrimSpace(s), ",") {
		if n != "" && !slices.Contains(names, n) {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	return names
}

// Groups is the groups key as the module reads it: the groups to make,
// each with its members.
type Groups []Group

// Group is a group to make, with its members.
type Group struct {
	Name    string
	Members []string
}

// DecodeCC reads groups: "a,b" (trimmed, the empty names dropped), a list
// of names (trimmed) or of maps {name: members}, or a map {name: members},
// a map's groups in name order. Members are a list or a comma-separated
// string; null is none.
func (g *Groups) DecodeCC(v any, path string) error {
	var out Groups
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
				if members, err = Strings(path+"."+n, m[n], true); err != nil {
					return err
				}
			}
			out = append(out, Group{Name: n, Members: members})
		}
		return nil
	}
	switch t := v.(type) {
	case string:
		for _, n := range strings.Split(t, ",") {
			if n = strings.TrimSpace(n); n != "" {
				out = append(out, Group{Name: n})
			}
		}
	case map[string]any:
		if err := fromMap(path, t); err != nil {
			return err
		}
	case []any:
		for i, it := range t {
			switch x := it.(type) {
			case string:
				out = append(out, Group{Name: strings.TrimSpace(x)})
			case map[string]any:
				if err := fromMap(fmt.Sprintf("%s.%d", path, i), x); err != nil {
					return err
				}
			default:
				return fmt.Errorf("%s.%d: want a name or a map, got %s", path, i, scalar.YAMLNoun(it))
			}
		}
	default:
		return fmt.Errorf("%s: want a list, a map or a string, got %s", path, scalar.YAMLNoun(v))
	}
	*g = out
	return nil
}

// ChpasswdUser is one of chpasswd.users. Its keys are read as str(),
// whatever their kind, as cc_set_passwords formats them.
type ChpasswdUser struct {
	Name     PyString `yaml:"name"`
	Password PyString `yaml:"password"`
	Type     PyString `yaml:"type"`
}

// ChpasswdList is chpasswd.list's lines: a list's items' str(), or a
// (multi-line) string's lines.
type ChpasswdList []string

// DecodeCC reads a list or a string of lines.
func (c *ChpasswdList) DecodeCC(v any, path string) error {
	switch t := v.(type) {
	case string:
		if t != "" {
			*c = pystr.Splitlines(t)
		}
	case []any:
		out := make(ChpasswdList, len(t))
		for i, x := range t {
			out[i] = String(x)
		}
		*c = out
	default:
		return wrongType(path, "a list", v)
	}
	return nil
}

// DecodeCC reads chpasswd's keys; expire as cc_set_passwords'
// util.get_cfg_option_bool(chfg, "expire", True): true when missing, else
// util.translate_bool (null false; "y" too, unlike IsTrue). ListText
// tells that list was given as a string.
func (c *Chpasswd) DecodeCC(v any, path string) error {
	m, ok := v.(map[string]any)
	if !ok {
		return wrongType(path, "a map", v)
	}
	type keys Chpasswd // Chpasswd's fields, without this method
	var k keys
	if err := decodeStruct(reflect.ValueOf(&k).Elem(), m, path); err != nil {
		return err
	}
	*c = Chpasswd(k)
	c.Expire = true
	if e, ok := m["expire"]; ok {
		c.Expire = translateBool(e)
	}
	_, c.ListText = m["list"].(string)
	return nil
}

// translateBool is util.translate_bool: false for what Python calls
// false, a boolean as it is, else util.is_true (without "y").
func translateBool(v any) bool {
	if !scalar.Truthy(v) {
		return false
	}
	if b, ok := v.(bool); ok {
		return b
	}
	switch strings.ToLower(strings.TrimSpace(String(v))) {
	case "true", "1", "on", "yes":
		return true
	}
	return false
}

// HostKeys is ssh_keys: host keys by name (rsa_private, ...), each
// value's str(). A null ssh_keys is an error (Decode: cc_ssh fails on
// None), not ssh_keys missing.
type HostKeys struct {
	Keys map[string]string
}

// Schema is a map of strings'.
func (HostKeys) Schema() *Schema {
	return &Schema{Types: []string{"map"}, KeyPattern: AnyKey, Values: &Schema{Types: []string{"string"}}}
}

// DecodeCC reads a map.
func (h *HostKeys) DecodeCC(v any, path string) error {
	m, ok := v.(map[string]any)
	if !ok {
		return wrongType(path, "a map", v)
	}
	h.Keys = make(map[string]string, len(m))
	for k, x := range m {
		h.Keys[k] = String(x)
	}
	return nil
}
