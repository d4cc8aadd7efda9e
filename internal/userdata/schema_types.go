package userdata

import (
	"fmt"
	"regexp"
	"slices"

	"go.yaml.in/yaml/v3"

	"github.com/earlyinit/earlyinit/internal/ccfg"
)

// fromSchema is the check of a ccfg.Schema.
func fromSchema(s *ccfg.Schema) check {
	if s == nil {
		return nil
	}
	var c check
	typedNull := false
	switch {
	case s.Alts != nil:
		alts := map[string]check{}
		for k, a := range s.Alts {
			alts[k] = fromSchema(a)
		}
		c = oneOf(alts)
	case s.Props != nil || s.KeyPattern != "":
		o := obj{props: map[string]check{}, required: s.Required, minProps: s.MinProps, values: fromSchema(s.Values), oneRequired: s.OneRequired}
		for k, p := range s.Props {
			o.props[k] = fromSchema(p)
		}
		if s.KeyPattern != "" {
			o.keys = regexp.MustCompile(s.KeyPattern)
		}
		c = o.check
	case s.Items != nil || slices.Contains(s.Types, "list"):
		c = listOf(fromSchema(s.Items), s.MinItems, s.MaxItems)
	case s.Enum != nil:
		c = enum(s.Enum...)
	case s.Pattern != "":
		c = pattern(s.Pattern, s.PatternWhat)
	case len(s.Types) == 0:
		// Any value (a union's kind taken as it is, with a warning).
	default:
		c, typedNull = typed(s.Types...), true
	}
	if s.Unique {
		c = uniqueItems(c)
	}
	if slices.Contains(s.Types, "null") && !typedNull && s.Alts == nil && len(s.Types) > 1 {
		c = oneOf(map[string]check{"null": nil, mainType(s): c})
	}
	if s.Check != "" {
		named, ok := namedCheck(s.Check)
		if !ok {
			panic("userdata: no check named " + s.Check)
		}
		c = then(c, named)
	}
	if s.Deprecated != "" {
		c = deprecated(s.Deprecated, c)
	}
	if s.Unsupported {
		c = unsupported(c)
	}
	return c
}

// then runs a, then b (either may be nil).
func then(a, b check) check {
	if a == nil {
		return b
	}
	return func(v *validator, n *yaml.Node, path string) {
		a(v, n, path)
		b(v, n, path)
	}
}

// namedCheck is the check a ccfg.Schema names (Check) for what its
// language cannot say. A switch, not a map: nothing is built at package
// initialisation.
func namedCheck(name string) (check, bool) {
	switch name {
	case "permissions":
		return permissions, true
	case "chpasswd_user":
		return chpasswdUser, true
	case "merge_how":
		return mergeHow, true
	case "module_list":
		return moduleList, true
	case "manage_etc_hosts":
		return manageEtcHostsString, true
	case "swap_size":
		return swapSize, true
	case "delay_minutes":
		return delayMinutes, true
	case "delay_string":
		return delayString, true
	case "non_negative":
		return nonNegative, true
	case "code_only":
		return codeOnly, true
	case "unique_scalars":
		return uniqueScalars, true
	case "nonempty_map":
		return nonemptyMap, true
	case "org_string":
		return orgString, true
	}
	return nil, false
}

// manageEtcHostsString is manage_etc_hosts as a string: localhost, or
// the deprecated template.
func manageEtcHostsString(v *validator, n *yaml.Node, path string) {
	if _, val, _ := v.kind(n, path); val == "template" {
		v.warnf(n, path, `deprecated: "template"; use true`)
		return
	}
	enum("localhost", "template")(v, n, path)
}

// swapSize is swap.size as a string: "auto", or a size with its unit.
func swapSize(v *validator, n *yaml.Node, path string) {
	if _, val, _ := v.kind(n, path); val != "auto" {
		pattern(ccfg.SizeString, `"auto" or a size like 512M`)(v, n, path)
	}
}

// delayMinutes is power_state.delay as an integer.
func delayMinutes(v *validator, n *yaml.Node, path string) {
	if _, val, ok := v.kind(n, path); ok && val.(int) < 0 {
		v.errorf(n, path, "delay must not be negative")
	}
}

// delayString is power_state.delay as a string: "now", or (deprecated)
// "+minutes".
func delayString(v *validator, n *yaml.Node, path string) {
	if _, val, _ := v.kind(n, path); val != "now" {
		deprecated("delay as a string; use an integer of minutes", pattern(`^\+?[0-9]+$`, `"now" or +minutes`))(v, n, path)
	}
}

// nonNegative is a number, at least 0.
func nonNegative(v *validator, n *yaml.Node, path string) {
	k, val, ok := v.kind(n, path)
	if !ok {
		return
	}
	if k != "integer" && k != "number" {
		v.typeError(n, path, []string{"number"}, k, val)
		return
	}
	if f, ok := val.(float64); ok && f < 0 {
		v.errorf(n, path, "must be at least 0")
	}
	if i, ok := val.(int); ok && i < 0 {
		v.errorf(n, path, "must be at least 0")
	}
}

// codeOnly is a key the module's code reads that 22.4's schema lacks.
func codeOnly(v *validator, n *yaml.Node, path string) {
	v.errorf(n, path, "unknown key (cloud-init 22.4's schema lacks it, though its module reads it)")
}

// uniqueScalars: a list's scalar items differ in their text.
func uniqueScalars(v *validator, n *yaml.Node, path string) {
	seen := map[string]bool{}
	if d := v.deref(n); d.Kind == yaml.SequenceNode {
		for i, c := range d.Content {
			if c = v.deref(c); c.Kind == yaml.ScalarNode && seen[c.Value] {
				v.errorf(c, fmt.Sprintf("%s.%d", path, i), "duplicate item: the items must be unique")
			} else if c.Kind == yaml.ScalarNode {
				seen[c.Value] = true
			}
		}
	}
}

// nonemptyMap: a map has at least one key.
func nonemptyMap(v *validator, n *yaml.Node, path string) {
	if v.declared != nil {
		return
	}
	if d := v.deref(n); d.Kind == yaml.MappingNode && len(d.Content) == 0 {
		v.errorf(n, path, "needs at least one key")
	}
}

// orgString is rh_subscription.org as a string: 22.4's schema wants an
// integer; its module, and later schemas, take an organization's name or
// number as text.
func orgString(v *validator, n *yaml.Node, path string) {
	v.warnf(n, path, "cloud-init 22.4's schema wants an integer (later versions take a string, as subscription-manager does)")
}

// mainType is the kind of a schema taking it or null.
func mainType(s *ccfg.Schema) string {
	for _, x := range s.Types {
		if x != "null" {
			return x
		}
	}
	return "null"
}

// uniqueItems adds JSON schema's uniqueItems to a list's check: no two
// items are equal (as values: "1" and 1 differ, a: 1 and {a: 1} too).
// The message names the earlier item by its index, never a value.
func uniqueItems(c check) check {
	return func(v *validator, n *yaml.Node, path string) {
		c(v, n, path)
		d := v.deref(n)
		if d.Kind != yaml.SequenceNode {
			return
		}
		seen := map[string]int{}
		for i, item := range d.Content {
			val, err := (&resolver{v.budget}).value(v.deref(item))
			if err != nil {
				// The items' own checks (c) report what is wrong with
				// them; the document's budget spent is reported once.
				if v.budget.Spent() {
					v.spend(item, path)
				}
				return
			}
			key := fmt.Sprintf("%#v", val)
			if j, dup := seen[key]; dup {
				v.errorf(item, fmt.Sprintf("%s.%d", path, i), "the same as item %d: the items must be unique", j)
				continue
			}
			seen[key] = i
		}
	}
}
