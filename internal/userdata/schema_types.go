package userdata

import (
	"regexp"

	"github.com/earlyinit/earlyinit/internal/ccfg"
)

// typedSchemas are the checks of the keys internal/ccfg declares as Go
// types (ccfg.Keys): derived from the types, not written here.
func typedSchemas() map[string]check {
	m := map[string]check{}
	for _, k := range ccfg.Keys() {
		m[k.Name] = fromSchema(ccfg.KeySchema(k))
	}
	return m
}

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
		o := obj{props: map[string]check{}, required: s.Required, minProps: s.MinProps, values: fromSchema(s.Values)}
		for k, p := range s.Props {
			o.props[k] = fromSchema(p)
		}
		if s.KeyPattern != "" {
			o.keys = regexp.MustCompile(s.KeyPattern)
		}
		c = o.check
	case s.Items != nil || hasType(s, "list"):
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
	if hasType(s, "null") && !typedNull && s.Alts == nil && len(s.Types) > 1 {
		c = oneOf(map[string]check{"null": nil, mainType(s): c})
	}
	if s.Deprecated != "" {
		c = deprecated(s.Deprecated, c)
	}
	return c
}

func hasType(s *ccfg.Schema, t string) bool {
	for _, x := range s.Types {
		if x == t {
			return true
		}
	}
	return false
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
