package imagecfg

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/earlyinit/earlyinit/internal/scalar"
)

// warner collects the accessors' warnings; a nil one drops them.
type warner struct{ msgs []string }

// warnf adds "cloud.cfg: key: message". Values are never quoted: a
// message says what was wanted and the type that was found.
func (w *warner) warnf(key, format string, args ...any) {
	if w != nil {
		w.msgs = append(w.msgs, "cloud.cfg: "+key+": "+fmt.Sprintf(format, args...))
	}
}

// Check type-checks every value the accessors read and returns one warning
// for each that is of the wrong type, in a fixed order; Load adds them to
// Warnings. A config built by hand (Config{Raw: ...}) can call it too.
func (c *Config) Check() []string {
	w := &warner{}
	c.datasourceList(w)
	c.datasources(w)
	c.networkDisabled(w)
	c.boolKey("preserve_hostname", false, w)
	c.defaultUser(w)
	c.distro(w)
	c.moduleLists(w)
	return w.msgs
}

func (c *Config) raw() map[string]any {
	if c == nil {
		return nil
	}
	return c.Raw
}

// DatasourceList is datasource_list: cloud-init's class names of the
// sources to try, in order ("ConfigDrive", "OpenStack", "None"), each
// trimmed. nil means not set; an empty list (set to []) is not nil. A value
// that is not a list is a warning and nil; an entry that is not a
// non-empty string is a warning and left out.
func (c *Config) DatasourceList() []string { return c.datasourceList(nil) }

func (c *Config) datasourceList(w *warner) []string {
	v, ok := c.raw()["datasource_list"]
	if !ok || v == nil {
		return nil
	}
	l, ok := v.([]any)
	if !ok {
		w.warnf("datasource_list", "want a list of datasource names, got %s: ignored", scalar.YAMLNoun(v))
		return nil
	}
	out := []string{}
	for i, e := range l {
		s, ok := e.(string)
		if !ok || strings.TrimSpace(s) == "" {
			w.warnf(fmt.Sprintf("datasource_list[%d]", i), "want a datasource name, got %s: skipped", noun(e))
			continue
		}
		out = append(out, strings.TrimSpace(s))
	}
	return out
}

// noun is YAMLNoun, with "an empty string" for "".
func noun(v any) string {
	if s, ok := v.(string); ok && strings.TrimSpace(s) == "" {
		return "an empty string"
	}
	return scalar.YAMLNoun(v)
}

// Datasource is the datasource.<name> block, the settings of one source
// by cloud-init's class name (OpenStack, NoCloud, ConfigDrive, Ec2),
// matched in any case (an exact match wins over another spelling). nil
// when not set or not a map (a warning).
func (c *Config) Datasource(name string) map[string]any {
	return c.datasources(nil)[strings.ToLower(name)]
}

// datasources are the datasource blocks by lower-cased class name.
func (c *Config) datasources(w *warner) map[string]map[string]any {
	v, ok := c.raw()["datasource"]
	if !ok || v == nil {
		return nil
	}
	m, ok := v.(map[string]any)
	if !ok {
		w.warnf("datasource", "want a map of datasource names to settings, got %s: ignored", scalar.YAMLNoun(v))
		return nil
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	// Sorted, so that among spellings of one name the choice is fixed:
	// upper case sorts first, and cloud-init's spelling (OpenStack) is
	// what it reads.
	sort.Strings(keys)
	out := map[string]map[string]any{}
	for _, k := range keys {
		v := m[k]
		if v == nil {
			continue
		}
		b, ok := v.(map[string]any)
		if !ok {
			w.warnf("datasource."+k, "want a map of settings, got %s: ignored", scalar.YAMLNoun(v))
			continue
		}
		lk := strings.ToLower(k)
		if _, dup := out[lk]; dup {
			w.warnf("datasource."+k, "another spelling of a datasource already given: ignored")
			continue
		}
		out[lk] = b
	}
	return out
}

// NetworkDisabled is `network: {config: disabled}`: earlyinit writes no
// network configuration and renames no interface. cloud-init's
// net.is_disabled_cfg: false for anything else.
func (c *Config) NetworkDisabled() bool { return c.networkDisabled(nil) }

func (c *Config) networkDisabled(w *warner) bool {
	v, ok := c.raw()["network"]
	if !ok || v == nil {
		return false
	}
	m, ok := v.(map[string]any)
	if !ok {
		w.warnf("network", "want a map, got %s: ignored", scalar.YAMLNoun(v))
		return false
	}
	return m["config"] == "disabled"
}

// PreserveHostname is preserve_hostname (default false): the host name,
// /etc/hostname and /etc/hosts are left as the image has them. As
// cloud-init's get_cfg_option_bool, a string is read with is_true ("yes",
// "on", "1", "true"); any other type is false, with a warning.
func (c *Config) PreserveHostname() bool { return c.boolKey("preserve_hostname", false, nil) }

// boolKey is cloud-init's get_cfg_option_bool for a top-level key.
func (c *Config) boolKey(key string, def bool, w *warner) bool {
	v, ok := c.raw()[key]
	if !ok {
		return def
	}
	return readBool(key, v, w)
}

// readBool is cloud-init's translate_bool, with a warning for what is
// neither a boolean nor one of its words.
func readBool(key string, v any, w *warner) bool {
	switch t := v.(type) {
	case bool:
		return t
	case nil:
		return false
	case string:
		if !scalar.IsTrue(t) && !scalar.IsFalse(t) {
			w.warnf(key, "want a boolean, got a string that is not one: false")
		}
		return scalar.IsTrue(t)
	}
	w.warnf(key, "want a boolean, got %s: false", scalar.YAMLNoun(v))
	return false
}

// User is a default user, as system_info.default_user gives one. Its
// fields are internal/modules/core's User's, so that one converts to the other.
type User struct {
	Name         string
	Gecos        string
	Groups       []string
	Shell        string
	Sudo         []string
	LockPasswd   bool
	PrimaryGroup string
	Homedir      string
	System       bool
}

// defaultUserKeys are the default_user keys DefaultUser reads.
var defaultUserKeys = []string{
	"name", "gecos", "groups", "shell", "sudo",
	"lock_passwd", "primary_group", "homedir", "system",
}

// DefaultUser is the user the users entry "default" creates:
// system_info.default_user (name, gecos, groups as a list or a
// comma-separated string, shell, sudo as a rule, a list of rules or false,
// lock_passwd (default true), primary_group, homedir, system), used as
// cloud-init uses it: keys not given are not set (useradd's defaults).
// Without one (or without its name, a warning) it is the default the
// cloud.cfg template of the root's distribution gives
// (VariantDefaultUser(OS.Variant())): rocky on Rocky, cloud-user on RHEL
// and CentOS, fedora on Fedora, ubuntu on Ubuntu, debian on Debian and
// when the distribution is not known.
func (c *Config) DefaultUser() User { return c.defaultUser(nil) }

func (c *Config) defaultUser(w *warner) User {
	fallback := VariantDefaultUser(c.osVariant())
	si, ok := c.systemInfo(w)
	if !ok {
		return fallback
	}
	v, ok := si["default_user"]
	if !ok || v == nil {
		return fallback
	}
	m, ok := v.(map[string]any)
	if !ok {
		w.warnf("system_info.default_user", "want a map, got %s: the distribution's default user is used", scalar.YAMLNoun(v))
		return fallback
	}
	const p = "system_info.default_user."
	name, ok := m["name"].(string)
	if !ok || strings.TrimSpace(name) == "" {
		w.warnf(p+"name", "want a user name, got %s: the distribution's default user is used", noun(m["name"]))
		return fallback
	}
	u := User{Name: strings.TrimSpace(name), LockPasswd: true}
	str := func(key string) string {
		v, ok := m[key]
		if !ok || v == nil {
			return ""
		}
		s, ok := v.(string)
		if !ok {
			w.warnf(p+key, "want a string, got %s: ignored", scalar.YAMLNoun(v))
		}
		return s
	}
	u.Gecos = str("gecos")
	u.Shell = str("shell")
	u.PrimaryGroup = str("primary_group")
	u.Homedir = str("homedir")
	u.Groups = groupList(m["groups"], p+"groups", w)
	u.Sudo = sudoRules(m["sudo"], p+"sudo", w)
	if v, ok := m["lock_passwd"]; ok {
		u.LockPasswd = readBool(p+"lock_passwd", v, w)
	}
	if v, ok := m["system"]; ok {
		u.System = readBool(p+"system", v, w)
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		if !slices.Contains(defaultUserKeys, k) {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	for _, k := range keys {
		w.warnf(p+k, "not supported by earlyinit for the default user: ignored")
	}
	return u
}

// osVariant is c.OS.Variant(), nil-safe.
func (c *Config) osVariant() string {
	if c == nil {
		return ""
	}
	return c.OS.Variant()
}

// systemInfo is the system_info map; ok is false when it is not set or
// not a map (a warning).
func (c *Config) systemInfo(w *warner) (map[string]any, bool) {
	v, ok := c.raw()["system_info"]
	if !ok || v == nil {
		return nil, false
	}
	m, ok := v.(map[string]any)
	if !ok {
		w.warnf("system_info", "want a map, got %s: ignored", scalar.YAMLNoun(v))
	}
	return m, ok
}

// groupList reads groups: a list of names, or a comma-separated string.
func groupList(v any, key string, w *warner) []string {
	var out []string
	switch t := v.(type) {
	case nil:
	case string:
		for _, g := range strings.Split(t, ",") {
			if g = strings.TrimSpace(g); g != "" {
				out = append(out, g)
			}
		}
	case []any:
		for i, e := range t {
			s, ok := e.(string)
			if !ok || strings.TrimSpace(s) == "" {
				w.warnf(fmt.Sprintf("%s[%d]", key, i), "want a group name, got %s: skipped", noun(e))
				continue
			}
			out = append(out, strings.TrimSpace(s))
		}
	default:
		w.warnf(key, "want a list of groups or a comma-separated string, got %s: ignored", scalar.YAMLNoun(v))
	}
	return out
}

// sudoRules reads sudo: a rule, a list of rules, or false (none).
func sudoRules(v any, key string, w *warner) []string {
	switch t := v.(type) {
	case nil:
		return nil
	case bool:
		if t {
			w.warnf(key, "want a sudo rule, a list of them or false, got true: no rule")
		}
		return nil
	case string:
		if t == "" {
			return nil
		}
		return []string{t}
	case []any:
		var out []string
		for i, e := range t {
			s, ok := e.(string)
			if !ok || s == "" {
				w.warnf(fmt.Sprintf("%s[%d]", key, i), "want a sudo rule, got %s: skipped", noun(e))
				continue
			}
			out = append(out, s)
		}
		return out
	}
	w.warnf(key, "want a sudo rule, a list of them or false, got %s: no rule", scalar.YAMLNoun(v))
	return nil
}

// Distro is system_info.distro, the distribution class cloud-init uses
// ("rhel", "debian", "fedora"...). Not set, it is what the cloud.cfg
// template of the root's distribution sets (OS.Variant(): "rocky",
// "ubuntu"...), and "" when that is not known either (cloud-init's
// built-in "ubuntu" would be wrong for most roots earlyinit boots).
func (c *Config) Distro() string { return c.distro(nil) }

func (c *Config) distro(w *warner) string {
	// A system_info that is not a map is defaultUser's warning.
	if si, ok := c.systemInfo(nil); ok {
		switch t := si["distro"].(type) {
		case nil:
		case string:
			if s := strings.TrimSpace(t); s != "" {
				return s
			}
		default:
			w.warnf("system_info.distro", "want a distribution name, got %s: ignored", scalar.YAMLNoun(t))
		}
	}
	return c.osVariant()
}

// The three module lists, in the order cloud-init runs them.
const (
	initModules   = "cloud_init_modules"
	configModules = "cloud_config_modules"
	finalModules  = "cloud_final_modules"
)

// moduleListKeys are the three module list keys, in cloud-init's order.
var moduleListKeys = []string{initModules, configModules, finalModules}

// Frequencies cloud-init accepts in a module list entry (FREQUENCIES).
var Frequencies = []string{"once-per-instance", "always", "once"}

// ModuleEntry is one entry of a module list.
type ModuleEntry struct {
	// Name is the module's name as cloud-init forms it, without its "cc_"
	// prefix: "-" read as "_", a ".py" suffix dropped ("write-files" is
	// write_files).
	Name string
	// Given is the name as written.
	Given string
	// Frequency is the one the entry gives (once-per-instance, always or
	// once); "" for the module's own.
	Frequency string
	// Args are an entry's further items (cloud-init passes them to the
	// module; earlyinit's modules take none).
	Args []any
	// List is the list it is in (cloud_init_modules...).
	List string
}

// ModuleLists are the image's module lists.
type ModuleLists struct {
	// Set says the image has at least one of the three lists: they then
	// decide which modules run (a list not given runs nothing, as in
	// cloud-init). When false, the lists are empty and earlyinit runs its
	// own order.
	Set bool
	// Init, Config and Final are cloud_init_modules, cloud_config_modules
	// and cloud_final_modules.
	Init, Config, Final []ModuleEntry
}

// All returns the entries of the three lists, in cloud-init's order.
func (l ModuleLists) All() []ModuleEntry {
	out := make([]ModuleEntry, 0, len(l.Init)+len(l.Config)+len(l.Final))
	out = append(out, l.Init...)
	out = append(out, l.Config...)
	return append(out, l.Final...)
}

// ModuleLists reads cloud_init_modules, cloud_config_modules and
// cloud_final_modules as cloud-init's Modules._read_modules: an entry is a
// name, a list [name, frequency, args...], or a map {name, frequency,
// args}; empty entries are skipped. A frequency that is not one of
// Frequencies is a warning and the module's own is used; an entry of
// another shape, a name that is not a string, or a list that is not a list
// is a warning and skipped.
func (c *Config) ModuleLists() ModuleLists { return c.moduleLists(nil) }

func (c *Config) moduleLists(w *warner) ModuleLists {
	var out ModuleLists
	for _, key := range moduleListKeys {
		v, ok := c.raw()[key]
		if !ok {
			continue
		}
		var entries []ModuleEntry
		switch t := v.(type) {
		case nil:
			out.Set = true
		case []any:
			out.Set = true
			for i, item := range t {
				if e, ok := moduleEntry(key, i, item, w); ok {
					entries = append(entries, e)
				}
			}
		default:
			w.warnf(key, "want a list of modules, got %s: ignored", scalar.YAMLNoun(v))
			continue
		}
		switch key {
		case initModules:
			out.Init = entries
		case configModules:
			out.Config = entries
		case finalModules:
			out.Final = entries
		}
	}
	return out
}

// moduleEntry reads one module list entry; ok is false for one skipped.
func moduleEntry(list string, i int, item any, w *warner) (ModuleEntry, bool) {
	e := ModuleEntry{List: list}
	at := fmt.Sprintf("%s[%d]", list, i)
	if !scalar.Truthy(item) {
		return e, false
	}
	var name, freq any
	hasFreq := false
	switch t := item.(type) {
	case string:
		name = t
	case []any:
		name = t[0]
		if len(t) >= 2 {
			freq, hasFreq = t[1], true
		}
		if len(t) >= 3 {
			e.Args = t[2:]
		}
	case map[string]any:
		n, ok := t["name"]
		if !ok {
			w.warnf(at, "a module map without a name: skipped")
			return e, false
		}
		name = n
		freq, hasFreq = t["frequency"]
		if a, ok := t["args"]; ok && scalar.Truthy(a) {
			e.Args = []any{a}
		}
	default:
		w.warnf(at, "want a module name, a list or a map, got %s: skipped", scalar.YAMLNoun(item))
		return e, false
	}
	s, ok := name.(string)
	if !ok {
		w.warnf(at, "want a module name, got %s: skipped", scalar.YAMLNoun(name))
		return e, false
	}
	e.Given = strings.TrimSpace(s)
	e.Name = formModuleName(s)
	if e.Name == "" {
		return e, false
	}
	if hasFreq {
		f, ok := freq.(string)
		f = strings.TrimSpace(f)
		switch {
		case !ok:
			w.warnf(at, "module %s: want a frequency (%s), got %s: the module's own is used", e.Name, strings.Join(Frequencies, ", "), scalar.YAMLNoun(freq))
		case f == "":
		case !validFrequency(f):
			w.warnf(at, "module %s: unknown frequency (want %s): the module's own is used", e.Name, strings.Join(Frequencies, ", "))
		default:
			e.Frequency = f
		}
	}
	return e, true
}

func validFrequency(f string) bool {
	for _, x := range Frequencies {
		if f == x {
			return true
		}
	}
	return false
}

// formModuleName is cloud-init's form_module_name without the "cc_" it
// adds: "-" is "_", a ".py" suffix goes, space is trimmed, a "cc_" prefix
// goes.
func formModuleName(s string) string {
	n := strings.ReplaceAll(s, "-", "_")
	if strings.HasSuffix(strings.ToLower(n), ".py") {
		n = n[:len(n)-3]
	}
	n = strings.TrimSpace(n)
	return strings.TrimPrefix(n, "cc_")
}
