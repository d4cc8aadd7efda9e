package userdata

import (
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/earlyinit/earlyinit/internal/scalar"
)

// typed accepts nodes of the given kinds ("string", "boolean", "integer",
// "number", "null", "map", "list"). !!binary counts as a string.
func typed(kinds ...string) check {
	return func(v *validator, n *yaml.Node, path string) {
		checkTyped(v, n, path, kinds...)
	}
}

func checkTyped(v *validator, n *yaml.Node, path string, kinds ...string) {
	k, val, ok := v.kind(n, path)
	if !ok {
		return
	}
	for _, want := range kinds {
		if k == want || (want == "number" && k == "integer") || (want == "string" && k == "binary") {
			if k == "boolean" {
				boolQuirk(v, n, path)
			}
			return
		}
	}
	v.typeError(n, path, kinds, k, val)
}

// boolQuirk warns about yes/no/on/off used as booleans.
func boolQuirk(v *validator, n *yaml.Node, path string) {
	d := v.deref(n)
	if isPlain(d) && scalar.YAML11Only(d.Value) {
		val, _ := scalar.Bool(d.Value)
		v.warnf(n, path, "unquoted %s is the boolean %v in YAML 1.1 (cloud-init, earlyinit) but a string in YAML 1.2: write %v", d.Value, val, val)
	}
}

// The common typed checks, as functions: a typed(...) closure in a
// package variable would be made at package initialisation.
func str(v *validator, n *yaml.Node, path string)     { checkTyped(v, n, path, "string") }
func boolean(v *validator, n *yaml.Node, path string) { checkTyped(v, n, path, "boolean") }
func integer(v *validator, n *yaml.Node, path string) { checkTyped(v, n, path, "integer") }
func anyMap(v *validator, n *yaml.Node, path string)  { checkTyped(v, n, path, "map") }
func anyList(v *validator, n *yaml.Node, path string) { checkTyped(v, n, path, "list") }

// oneOf dispatches on the node's kind; a nil check accepts.
func oneOf(alts map[string]check) check {
	return func(v *validator, n *yaml.Node, path string) {
		if v.declared != nil {
			for _, c := range alts {
				if c != nil {
					c(v, n, path)
				}
			}
			return
		}
		k, val, ok := v.kind(n, path)
		if !ok {
			return
		}
		if c, ok := alts[k]; ok {
			if c != nil {
				c(v, n, path)
			}
			return
		}
		want := make([]string, 0, len(alts))
		for a := range alts {
			want = append(want, a)
		}
		sort.Strings(want)
		v.typeError(n, path, want, k, val)
	}
}

// listOf checks a list and each item; max 0 is no maximum.
func listOf(item check, min, max int) check {
	return func(v *validator, n *yaml.Node, path string) {
		if v.declared != nil {
			if item != nil {
				item(v, nil, joinPath(path, "*"))
			}
			return
		}
		k, val, ok := v.kind(n, path)
		if !ok {
			return
		}
		if k != "list" {
			v.typeError(n, path, []string{"list"}, k, val)
			return
		}
		d := v.deref(n)
		if len(d.Content) < min {
			v.errorf(n, path, "needs at least %d item(s), has %d", min, len(d.Content))
		}
		if max > 0 && len(d.Content) > max {
			v.errorf(n, path, "takes at most %d items, has %d", max, len(d.Content))
		}
		for i, c := range d.Content {
			if !v.spend(c, path) {
				return
			}
			if item != nil {
				item(v, c, fmt.Sprintf("%s.%d", path, i))
			}
		}
	}
}

// enum accepts the given scalar values.
func enum(vals ...any) check {
	return func(v *validator, n *yaml.Node, path string) {
		k, val, ok := v.kind(n, path)
		if !ok {
			return
		}
		if k != "map" && k != "list" {
			for _, want := range vals {
				if val == want {
					return
				}
			}
		}
		var names []string
		for _, w := range vals {
			names = append(names, fmt.Sprintf("%#v", w))
		}
		v.errorf(n, path, "expected one of %s, got %s", strings.Join(names, ", "), describe(v.deref(n), k, val, sensitivePath(path)))
	}
}

func deprecated(note string, c check) check {
	return func(v *validator, n *yaml.Node, path string) {
		v.warnf(n, path, "deprecated: %s", note)
		if c != nil {
			c(v, n, path)
		}
	}
}

func pattern(re string, what string) check {
	rx := regexp.MustCompile(re)
	return func(v *validator, n *yaml.Node, path string) {
		k, val, ok := v.kind(n, path)
		if !ok {
			return
		}
		if k != "string" {
			v.typeError(n, path, []string{"string"}, k, val)
			return
		}
		if !rx.MatchString(val.(string)) {
			if sensitivePath(path) {
				v.errorf(n, path, "the value %s is not %s", hidden, what)
				return
			}
			v.errorf(n, path, "%q is not %s", val, what)
		}
	}
}

// obj describes a map.
type obj struct {
	props    map[string]check
	required []string
	// keys, when set, admits keys not in props that match it, with values
	// checked by values. Any other key is an error.
	keys   *regexp.Regexp
	values check
	// oneRequired: at least one of these keys must be present.
	oneRequired []string
	// minProps is JSON schema's minProperties: the map has at least
	// that many keys.
	minProps int
}

func (o obj) check(v *validator, n *yaml.Node, path string) {
	if v.declared != nil {
		for k, c := range o.props {
			p := joinPath(path, k)
			v.declared[p] = true
			if c != nil {
				c(v, nil, p)
			}
		}
		if o.keys != nil {
			p := joinPath(path, anyKeyPath)
			v.declared[p] = true
			if o.values != nil {
				o.values(v, nil, p)
			}
		}
		return
	}
	k, val, ok := v.kind(n, path)
	if !ok {
		return
	}
	if k != "map" {
		v.typeError(n, path, []string{"map"}, k, val)
		return
	}
	d := v.deref(n)
	seen := map[string]*yaml.Node{}
	walkMap(v, d, path, func(key, value *yaml.Node) {
		name := key.Value
		p := joinPath(path, name)
		if prev, dup := seen[name]; dup {
			v.warnf(key, p, "duplicate key (first at line %d): the last one wins", prev.Line)
		}
		seen[name] = key
		if c, ok := o.props[name]; ok {
			if c != nil {
				c(v, value, p)
			}
			return
		}
		if o.keys != nil && o.keys.MatchString(name) {
			if o.values != nil {
				o.values(v, value, p)
			}
			return
		}
		if sensitivePath(path) {
			// A stray key under chpasswd may be a "name:password" line.
			v.errorf(key, joinPath(path, "(key not shown)"), "unknown key")
			return
		}
		v.errorf(key, p, "unknown key")
	})
	for _, r := range o.required {
		if _, ok := seen[r]; !ok {
			v.errorf(n, path, "missing required key %q", r)
		}
	}
	if len(seen) < o.minProps {
		v.errorf(n, path, "needs at least %d key(s), has %d", o.minProps, len(seen))
	}
	if len(o.oneRequired) > 0 {
		found := false
		for _, r := range o.oneRequired {
			if _, ok := seen[r]; ok {
				found = true
			}
		}
		if !found {
			v.errorf(n, path, "missing required key %s", quoteAll(o.oneRequired, " or "))
		}
	}
}

// walkMap calls f for each key and value of a map node, merge keys (<<)
// expanded in place.
func walkMap(v *validator, m *yaml.Node, path string, f func(key, value *yaml.Node)) {
	for i := 0; i+1 < len(m.Content); i += 2 {
		key, value := m.Content[i], m.Content[i+1]
		if !v.spend(key, path) {
			return
		}
		if isMergeKey(key) {
			src := v.deref(value)
			var maps []*yaml.Node
			switch src.Kind {
			case yaml.MappingNode:
				maps = []*yaml.Node{src}
			case yaml.SequenceNode:
				maps = src.Content
			}
			if len(maps) == 0 {
				v.errorf(value, path, "merge key << needs a mapping or a list of mappings")
			}
			for _, mm := range maps {
				if mm = v.deref(mm); mm.Kind == yaml.MappingNode {
					walkMap(v, mm, path, f)
				} else {
					v.errorf(value, path, "merge key << needs a mapping or a list of mappings")
				}
			}
			continue
		}
		key = v.deref(key)
		if key.Kind != yaml.ScalarNode {
			v.errorf(key, path, "map key must be a scalar")
			continue
		}
		f(key, value)
	}
}

func quoteAll(ss []string, sep string) string {
	q := make([]string, len(ss))
	for i, s := range ss {
		q[i] = strconv.Quote(s)
	}
	return strings.Join(q, sep)
}

func joinPath(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

func unsupported(c check) check {
	return func(v *validator, n *yaml.Node, path string) {
		v.warnf(n, path, "not supported by earlyinit: ignored")
		if c != nil {
			c(v, n, path)
		}
	}
}
