package userdata

import (
	"fmt"
	"regexp"
	"strings"
	"sync"

	"github.com/earlyinit/earlyinit/internal/scalar"
)

// How cloud-config merges (cloud-init 22.4's cloudinit/mergers, which we
// follow to the letter):
//
// Cloud-config parts of one source (user-data, or vendor-data) merge in
// order into an empty map. Each part says how with `merge_how` (or
// `merge_type`) in its YAML, which is removed from the result, and/or a
// Merge-Type header; with neither, the default is
// "dict(replace)+list()+str()": a later part's top-level key replaces the
// earlier value whole, with no deep merge. So two parts both setting
// `runcmd` keep only the second list.
//
// A merge_how names mergers for each type of the value being merged into:
//
//	dict(replace|no_replace, recurse_array|recurse_list, recurse_str, allow_delete)
//	  default no_replace: an existing key keeps its value, except that a
//	  new dict is always merged into it recursively (and a new list or
//	  string too with recurse_array / recurse_str); replace takes the new
//	  value; allow_delete deletes a key whose new value is null.
//	list(append|prepend|replace|no_replace, recurse_dict, recurse_array, recurse_str)
//	  default replace, which replaces item by item over the common length
//	  only (so [1,2,3] then [9] gives [9,2,3], and [1] then [7,8] gives
//	  [7]) and takes a new non-list value whole; append and prepend
//	  concatenate; no_replace keeps the old list.
//	str(append)
//	  default: the new string wins; append concatenates.
//
// A value of a type with no merger named (and any number, boolean or null)
// keeps its old value. The popular "list(append)+dict(recurse_array)+str()"
// thus appends lists at every level.
//
// Vendor-data merges under user-data: the user's merged config and the
// vendor's are combined with cloud-init's mergemanydict default
// "list()+dict()+str()", a dict(no_replace) merge, so user values win and
// vendor keys fill in, recursively into maps. One quirk is kept: where the
// user has a string or a list and the vendor a map under the same key, the
// vendor's map wins (cloud-init's str and list mergers take a new
// non-string, non-list value).

// defaultPartMergers is cloud_config.DEF_MERGERS; defaultMergers is
// mergers.DEF_MERGE_TYPE, used by mergemanydict.
const (
	defaultPartMergers = "dict(replace)+list()+str()"
	defaultMergers     = "list()+dict()+str()"
)

// mergerName reads "name(options)"; compiled on first use.
var mergerName = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^([a-zA-Z_][A-Za-z0-9_]*)\((.*?)\)$`)
})

type mergerSpec struct {
	name string
	opts []string
}

// parseMergeString is mergers.string_extract_mergers.
func parseMergeString(s string) ([]mergerSpec, error) {
	var out []mergerSpec
	for _, m := range strings.Split(s, "+") {
		m = strings.ReplaceAll(strings.TrimSpace(strings.ToLower(m)), "-", "_")
		if m == "" {
			continue
		}
		g := mergerName().FindStringSubmatch(m)
		if g == nil {
			return nil, fmt.Errorf("merger %q is not in the form name(options)", m)
		}
		spec := mergerSpec{name: g[1]}
		for _, o := range strings.Split(g[2], ",") {
			if o = strings.ToLower(strings.TrimSpace(o)); o != "" {
				spec.opts = append(spec.opts, o)
			}
		}
		out = append(out, spec)
	}
	return out, nil
}

// parseMergeHow is mergers.dict_extract_mergers' parsing of a merge_how
// value: a string, or a list of {name, settings} maps or [name, opt...]
// lists.
func parseMergeHow(v any) ([]mergerSpec, error) {
	switch t := v.(type) {
	case string:
		return parseMergeString(t)
	case []any:
		var out []mergerSpec
		for i, e := range t {
			var spec mergerSpec
			switch m := e.(type) {
			case map[string]any:
				name, ok := m["name"].(string)
				if !ok {
					return nil, fmt.Errorf("merge_how entry %d: name must be a string", i)
				}
				spec.name = strings.TrimSpace(strings.ReplaceAll(name, "-", "_"))
				settings, ok := m["settings"].([]any)
				if !ok && m["settings"] != nil {
					return nil, fmt.Errorf("merge_how entry %d: settings must be a list", i)
				}
				for _, s := range settings {
					spec.opts = append(spec.opts, fmt.Sprint(s))
				}
			case []any:
				if len(m) == 0 {
					return nil, fmt.Errorf("merge_how entry %d is empty", i)
				}
				spec.name = fmt.Sprint(m[0])
				for _, s := range m[1:] {
					spec.opts = append(spec.opts, fmt.Sprint(s))
				}
			default:
				return nil, fmt.Errorf("merge_how entry %d must be a map or a list, not %s", i, scalar.TypeName(e))
			}
			if spec.name != "" {
				out = append(out, spec)
			}
		}
		return out, nil
	}
	return nil, fmt.Errorf("merge_how must be a string or a list, not %s", scalar.TypeName(v))
}

// merger is the LookupMerger cloud-init builds from a merger list: for each
// type, the first merger that handles it.
type merger struct {
	dict *dictMerger
	list *listMerger
	str  *strMerger
}

type dictMerger struct {
	replace, recurseStr, recurseArray, allowDelete bool
}

type listMerger struct {
	method                                string // append, prepend, replace, no_replace
	recurseStr, recurseDict, recurseArray bool
}

type strMerger struct{ append bool }

func has(opts []string, names ...string) bool {
	for _, o := range opts {
		for _, n := range names {
			if o == n {
				return true
			}
		}
	}
	return false
}

func newMerger(specs []mergerSpec) (*merger, error) {
	m := &merger{}
	for _, s := range specs {
		switch strings.TrimPrefix(s.name, "m_") {
		case "dict":
			if m.dict == nil {
				m.dict = &dictMerger{
					replace:      has(s.opts, "replace"),
					recurseStr:   has(s.opts, "recurse_str"),
					recurseArray: has(s.opts, "recurse_array", "recurse_list"),
					allowDelete:  has(s.opts, "allow_delete"),
				}
			}
		case "list":
			if m.list == nil {
				l := &listMerger{method: "replace"}
				for _, meth := range []string{"append", "prepend", "replace", "no_replace"} {
					if has(s.opts, meth) {
						l.method = meth
						break
					}
				}
				l.recurseStr = has(s.opts, "recurse_str")
				l.recurseDict = has(s.opts, "recurse_dict")
				l.recurseArray = has(s.opts, "recurse_array", "recurse_list")
				m.list = l
			}
		case "str":
			if m.str == nil {
				m.str = &strMerger{append: has(s.opts, "append")}
			}
		default:
			return nil, fmt.Errorf("unknown merger %q (known: dict, list, str)", s.name)
		}
	}
	return m, nil
}

func mustMerger(s string) *merger {
	specs, err := parseMergeString(s)
	if err != nil {
		panic(err)
	}
	m, err := newMerger(specs)
	if err != nil {
		panic(err)
	}
	return m
}

// merge merges mw into src and returns the result; neither is modified.
func (m *merger) merge(src, mw any) any {
	switch s := src.(type) {
	case map[string]any:
		if m.dict != nil {
			return m.mergeDict(s, mw)
		}
	case []any:
		if m.list != nil {
			return m.mergeList(s, mw)
		}
	case string:
		if m.str != nil {
			return m.mergeStr(s, mw)
		}
	}
	return src
}

func (m *merger) mergeDict(value map[string]any, mw any) any {
	with, ok := mw.(map[string]any)
	if !ok {
		return value
	}
	d := m.dict
	out := make(map[string]any, len(value)+len(with))
	for k, v := range value {
		out[k] = v
	}
	for k, nv := range with {
		old, exists := out[k]
		switch {
		case !exists:
			out[k] = nv
		case nv == nil && d.allowDelete:
			delete(out, k)
		case d.replace:
			out[k] = nv
		default:
			switch nv.(type) {
			case []any:
				if d.recurseArray {
					out[k] = m.merge(old, nv)
				}
			case string:
				if d.recurseStr {
					out[k] = m.merge(old, nv)
				}
			case map[string]any:
				out[k] = m.merge(old, nv)
			}
		}
	}
	return out
}

func (m *merger) mergeList(value []any, mw any) any {
	l := m.list
	with, ok := mw.([]any)
	if !ok {
		if l.method == "replace" {
			return mw
		}
		// cloud-init would extend the list with a string's characters or
		// a map's keys, or fail; we keep the list.
		return value
	}
	switch l.method {
	case "prepend":
		return append(append([]any{}, with...), value...)
	case "append":
		return append(append([]any{}, value...), with...)
	}
	out := append([]any{}, value...)
	for i := 0; i < len(out) && i < len(with); i++ {
		if l.method == "no_replace" {
			continue
		}
		nv := with[i]
		switch nv.(type) {
		case []any:
			if l.recurseArray {
				out[i] = m.merge(out[i], nv)
				continue
			}
		case string:
			if l.recurseStr {
				out[i] = m.merge(out[i], nv)
				continue
			}
		case map[string]any:
			if l.recurseDict {
				out[i] = m.merge(out[i], nv)
				continue
			}
		}
		out[i] = nv
	}
	return out
}

func (m *merger) mergeStr(value string, mw any) any {
	if !m.str.append {
		return mw
	}
	s, ok := mw.(string)
	if !ok {
		// Python's str + non-str fails; take the new value.
		return mw
	}
	return value + s
}

// popMergers removes merge_how (or, when that is absent or null,
// merge_type) from cfg and parses it, as dict_extract_mergers does.
func popMergers(cfg map[string]any) ([]mergerSpec, error) {
	raw, ok := cfg["merge_how"]
	delete(cfg, "merge_how")
	if !ok || raw == nil {
		raw = cfg["merge_type"]
		delete(cfg, "merge_type")
	}
	if raw == nil {
		return nil, nil
	}
	return parseMergeHow(raw)
}

// MergeParts merges the cloud-config parts among parts, in order, as
// cloud-init's cloud-config handler does (see the package comment on
// merging above). Other parts are ignored. A part that is not valid YAML,
// is empty, is not a map or names unknown mergers is skipped with a
// warning. The result is never nil.
func MergeParts(parts []Part) (map[string]any, []Warning) {
	var warns []Warning
	skip := func(p Part, format string, args ...any) {
		warns = append(warns, Warning(fmt.Sprintf("part %s: cloud-config: ", partName(p.Filename))+fmt.Sprintf(format, args...)+": skipped"))
	}
	buf := map[string]any{}
	for _, p := range parts {
		if p.Type != TypeCloudConfig {
			continue
		}
		v, err := loadYAML(p.Content)
		if err != nil {
			skip(p, "%v", err)
			continue
		}
		if v == nil {
			skip(p, "empty cloud config")
			continue
		}
		cfg, ok := v.(map[string]any)
		if !ok {
			skip(p, "top level is a %s, not a map", scalar.TypeName(v))
			continue
		}
		specs, err := popMergers(cfg)
		if err != nil {
			skip(p, "%v", err)
			continue
		}
		if p.MergeType != "" {
			hs, err := parseMergeString(p.MergeType)
			if err != nil {
				skip(p, "Merge-Type header: %v", err)
				continue
			}
			specs = append(specs, hs...)
		}
		if len(specs) == 0 {
			specs, _ = parseMergeString(defaultPartMergers)
		}
		m, err := newMerger(specs)
		if err != nil {
			skip(p, "%v", err)
			continue
		}
		if out, ok := m.merge(buf, cfg).(map[string]any); ok {
			buf = out
		}
	}
	return buf, warns
}

// MergeConfigs is cloud-init's mergemanydict: earlier configs win over
// later ones, each merged into the result with its own merge_how or, by
// default, "list()+dict()+str()". The configs are not modified.
func MergeConfigs(cfgs ...map[string]any) (map[string]any, []Warning) {
	var warns []Warning
	out := map[string]any{}
	for i, c := range cfgs {
		if len(c) == 0 {
			continue
		}
		c = copyMap(c)
		specs, err := popMergers(c)
		var m *merger
		if err == nil && len(specs) > 0 {
			m, err = newMerger(specs)
		}
		if err != nil {
			warns = append(warns, Warning(fmt.Sprintf("config %d: %v: using the default mergers", i+1, err)))
		}
		if m == nil {
			m = mustMerger(defaultMergers)
		}
		if r, ok := m.merge(out, c).(map[string]any); ok {
			out = r
		}
	}
	return out, warns
}

func copyMap(m map[string]any) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// VendorParts returns the vendor-data parts to consume given the user's
// merged cloud-config, as cloud-init's _consume_vendordata decides:
//
//   - no vendor_data key, or a map without "enabled": consumed (cloud-init's
//     built-in default is {enabled: true});
//   - vendor_data.enabled true, or a string cloud-init reads as true
//     ("true", "1", "on", "yes", any case; deprecated): consumed;
//   - vendor_data.enabled anything else (false, "false", "off", "no", 0,
//     null...): not consumed;
//   - vendor_data not a map (false, "false", null...): not consumed, with
//     a warning. cloud-init reaches the same answer for false and null but,
//     through a merger quirk, consumes vendor-data when vendor_data is a
//     string; we honour the evident intent and do not.
//
// vendor_data.disabled_handlers, a list of content types
// ("text/x-shellscript", "text/cloud-config"...), drops parts of those
// types.
func VendorParts(userCfg map[string]any, vendor []Part) ([]Part, []Warning) {
	return vendorParts(userCfg, "vendor_data", vendor)
}

// Vendor2Parts is VendorParts for OpenStack's vendor_data2.json, under
// the user's vendor_data2 key (same shape, same defaults), as cloud-init
// consumes "vendordata2".
func Vendor2Parts(userCfg map[string]any, vendor2 []Part) ([]Part, []Warning) {
	return vendorParts(userCfg, "vendor_data2", vendor2)
}

func vendorParts(userCfg map[string]any, key string, vendor []Part) ([]Part, []Warning) {
	enabled, disabled, warns := vendorPolicy(userCfg, key)
	if !enabled {
		return nil, warns
	}
	var out []Part
	for _, p := range vendor {
		if !disabled[p.Type] {
			p.Vendor = true
			out = append(out, p)
		}
	}
	return out, warns
}

func vendorPolicy(cfg map[string]any, key string) (bool, map[string]bool, []Warning) {
	v, ok := cfg[key]
	if !ok {
		return true, nil, nil
	}
	what := strings.ReplaceAll(key, "_", "-")
	vd, ok := v.(map[string]any)
	if !ok {
		return false, nil, []Warning{Warning(fmt.Sprintf("invalid %s setting (a %s, not a map): %s disabled", key, scalar.TypeName(v), what))}
	}
	var warns []Warning
	enabled := true
	if e, ok := vd["enabled"]; ok {
		switch t := e.(type) {
		case bool:
			enabled = t
		case string:
			enabled = scalar.IsTrue(t)
			warns = append(warns, Warning(fmt.Sprintf("%s.enabled: the string %q is deprecated, use a boolean", key, t)))
		default:
			// fmt.Sprint, not Python's str(): 1.0 reads as "1" here.
			enabled = scalar.IsTrue(fmt.Sprint(e))
		}
	}
	disabled := map[string]bool{}
	switch t := vd["disabled_handlers"].(type) {
	case string:
		disabled[t] = true
	case []any:
		for _, h := range t {
			if s, ok := h.(string); ok {
				disabled[s] = true
			}
		}
	}
	return enabled, disabled, warns
}

// Merge merges user-data's cloud-config parts, then (unless user-data
// turns vendor-data off, see VendorParts) vendor-data's under them: the
// user wins. The result is never nil.
func Merge(user, vendor []Part) (map[string]any, []Warning) {
	return MergeVendor2(user, vendor, nil)
}

// MergeVendor2 is Merge with OpenStack's vendor_data2 too: user-data over
// vendor-data2 over vendor-data, cloud-init's order (vendor2 is the
// dynamic vendor-data that overrides the static), each vendor part
// consumed as the user's vendor_data and vendor_data2 keys allow.
func MergeVendor2(user, vendor, vendor2 []Part) (map[string]any, []Warning) {
	ucfg, warns := MergeParts(user)
	out := ucfg
	for _, v := range []struct {
		what  string
		parts func(map[string]any, []Part) ([]Part, []Warning)
		in    []Part
	}{{"vendor-data2", Vendor2Parts, vendor2}, {"vendor-data", VendorParts, vendor}} {
		// The user's keys decide (cloud-init reads them without vendor
		// data merged in): vendor-data2 cannot turn vendor-data off.
		parts, w := v.parts(ucfg, v.in)
		warns = append(warns, w...)
		if len(parts) == 0 {
			continue
		}
		vcfg, w := MergeParts(parts)
		for _, x := range w {
			warns = append(warns, Warning(v.what+": ")+x)
		}
		out, w = MergeConfigs(out, vcfg)
		warns = append(warns, w...)
	}
	return out, warns
}
