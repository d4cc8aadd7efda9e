// Package ccfg holds the cloud-config keys of the modules as Go types: one
// type per top-level key, registered in Keys. The type is the one source of
// truth for the key's shape: internal/userdata derives its schema check
// from it (Of), and the module reads its configuration through it
// (Decode), so a module cannot read a key its type does not declare.
//
// A type's fields name their keys with `yaml:"name"` and say more with
// `cc:"..."`, comma-separated:
//
//   - required: the map must have the key;
//   - default=V: the value when the key is missing or null (Decode);
//   - enum=a|b: the value is one of these (strings, or as the field's type);
//   - min=N, max=N: a list's item count;
//   - unique: a list's items differ (JSON schema's uniqueItems);
//   - null: null is also valid (JSON schema's type [..., "null"]);
//   - deprecated=NOTE: valid, with a warning naming NOTE;
//   - truthy: a boolean read by Python truthiness (a module's
//     `if cfg.get(key)`), not util.is_true;
//   - notfalse: a boolean true unless util.is_false (cc_ntp's enabled),
//     not util.is_true;
//   - strict: a string must be a string, a list a list (of strict items,
//     untrimmed): no number read as its str(), no lone string as a list;
//   - untrimmed: a list of strings as util.get_cfg_option_list reads
//     one: its items strings, kept as they are; a lone string is a list
//     of one.
//
// A type shapes what tags cannot say (a map's minimum size, keys taken by
// a pattern) with a Shape method, and a union of kinds (a string or a
// list) is a type with its own Schema and DecodeCC methods.
package ccfg

import (
	"fmt"
	"reflect"
	"strconv"
	"strings"
)

// Schema is the shape of a value, as the part of JSON schema cloud-init's
// schema uses. A nil *Schema accepts any value.
type Schema struct {
	// Types are the kinds accepted: "string", "boolean", "integer",
	// "number", "null", "map", "list". Empty is any kind.
	Types []string
	// Alts, when set, dispatch on the value's kind (oneOf): a kind with
	// a nil entry is accepted as it is; a kind not listed is an error.
	Alts map[string]*Schema

	// A map's keys: Props by name, then any key matching KeyPattern (a
	// regular expression; "" takes no other key) with Values.
	Props      map[string]*Schema
	Required   []string
	MinProps   int
	KeyPattern string
	Values     *Schema

	// A list's items.
	Items              *Schema
	MinItems, MaxItems int
	Unique             bool

	// Enum lists the values accepted (strings, booleans, integers).
	Enum []any
	// Pattern, for a string: a regular expression it must match, and
	// what that means for the message ("a date (YYYY-MM-DD)").
	Pattern, PatternWhat string
	// Deprecated, when set, makes the key valid with a warning.
	Deprecated string
	// OneRequired: a map has at least one of these keys.
	OneRequired []string
	// Check names a check internal/userdata has for what this language
	// cannot say (a write_files mode, merge_how, a chpasswd entry),
	// run after the rest of the schema's.
	Check string
	// Unsupported: cloud-init's key, valid, which earlyinit ignores
	// with a warning.
	Unsupported bool
	// Default is the value Decode gives a missing key (its tag's text),
	// for the docs.
	Default string
}

// Shaper is a type that adds to its derived schema what its tags cannot
// say (a map's minimum size, a pattern for its keys, a field of several
// kinds).
type Shaper interface {
	Shape(s *Schema)
}

// Schemer is a type with a schema of its own (a union of kinds); it
// decodes itself (Decoder).
type Schemer interface {
	Schema() *Schema
}

// Decoder is a type that decodes itself from a generic value at path.
type Decoder interface {
	DecodeCC(v any, path string) error
}

// Of derives t's schema.
func Of(t reflect.Type) *Schema {
	if t.Kind() != reflect.Pointer && t.Implements(reflect.TypeFor[Schemer]()) {
		// A pointer's schema is its element's (kindSchema): calling a
		// value receiver's Schema through a nil pointer would panic.
		return reflect.Zero(t).Interface().(Schemer).Schema()
	}
	s := kindSchema(t)
	if s != nil && t.Kind() != reflect.Pointer && t.Implements(reflect.TypeFor[Shaper]()) {
		reflect.Zero(t).Interface().(Shaper).Shape(s)
	}
	return s
}

// AnyKey is the pattern of a map taking any key (but the empty one).
const AnyKey = `^.+$`

func kindSchema(t reflect.Type) *Schema {
	switch t.Kind() {
	case reflect.Pointer:
		return Of(t.Elem())
	case reflect.String:
		return &Schema{Types: []string{"string"}}
	case reflect.Bool:
		return &Schema{Types: []string{"boolean"}}
	case reflect.Int:
		return &Schema{Types: []string{"integer"}}
	case reflect.Float64:
		return &Schema{Types: []string{"number"}}
	case reflect.Interface:
		return nil
	case reflect.Slice:
		return &Schema{Types: []string{"list"}, Items: Of(t.Elem())}
	case reflect.Map:
		if t.Elem().Kind() == reflect.Interface {
			return &Schema{Types: []string{"map"}} // any map: its keys unchecked
		}
		return &Schema{Types: []string{"map"}, KeyPattern: AnyKey, Values: Of(t.Elem())}
	case reflect.Struct:
		return structSchema(t)
	}
	panic(fmt.Sprintf("ccfg: %s: no schema for kind %s", t, t.Kind()))
}

func structSchema(t reflect.Type) *Schema {
	s := &Schema{Types: []string{"map"}, Props: map[string]*Schema{}}
	for _, f := range fields(t) {
		fs := Of(f.Type)
		if fs != nil {
			c := *fs
			fs = &c
		}
		opts := f.opts
		if opts.required {
			s.Required = append(s.Required, f.key)
		}
		if fs != nil {
			if opts.null {
				fs.Types = append(append([]string(nil), fs.Types...), "null")
			}
			if opts.enum != nil {
				fs.Enum = opts.enum
			}
			if opts.min > 0 {
				fs.MinItems = opts.min
			}
			if opts.max > 0 {
				fs.MaxItems = opts.max
			}
			fs.Unique = fs.Unique || opts.unique
			fs.Deprecated = opts.deprecated
			if opts.def != nil {
				fs.Default = *opts.def
			}
		}
		s.Props[f.key] = fs
	}
	return s
}

// field is a struct field with a key.
type field struct {
	index []int
	key   string
	Type  reflect.Type
	opts  options
}

type options struct {
	required, null, nullEmpty, unique, truthy, notFalse, strict, untrimmed bool
	min, max                                                               int
	enum                                                                   []any
	def                                                                    *string
	deprecated                                                             string
}

// fields are t's fields that have a yaml tag, in order; an embedded
// struct's fields are t's (a group of keys, as in Config).
func fields(t reflect.Type) []field {
	var out []field
	for i := range t.NumField() {
		f := t.Field(i)
		if f.Anonymous && f.Type.Kind() == reflect.Struct && f.Tag.Get("yaml") == "" {
			for _, g := range fields(f.Type) {
				g.index = append([]int{i}, g.index...)
				out = append(out, g)
			}
			continue
		}
		key, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
		if key == "" || key == "-" || !f.IsExported() {
			continue
		}
		out = append(out, field{index: []int{i}, key: key, Type: f.Type, opts: parseOptions(t, f)})
	}
	return out
}

func parseOptions(t reflect.Type, f reflect.StructField) options {
	var o options
	tag := f.Tag.Get("cc")
	if tag == "" {
		return o
	}
	// deprecated= takes the rest of the tag: its note may hold commas.
	if i := strings.Index(tag, "deprecated="); i >= 0 {
		o.deprecated = tag[i+len("deprecated="):]
		tag = strings.TrimSuffix(tag[:i], ",")
	}
	for _, opt := range strings.Split(tag, ",") {
		name, val, _ := strings.Cut(opt, "=")
		switch name {
		case "":
		case "required":
			o.required = true
		case "null":
			o.null = true
		case "nullempty":
			o.null, o.nullEmpty = true, true
		case "unique":
			o.unique = true
		case "truthy":
			o.truthy = true
		case "notfalse":
			o.notFalse = true
		case "strict":
			o.strict = true
		case "untrimmed":
			o.untrimmed = true
		case "min", "max":
			n, err := strconv.Atoi(val)
			if err != nil {
				panic(fmt.Sprintf("ccfg: %s.%s: %s=%q", t, f.Name, name, val))
			}
			if name == "min" {
				o.min = n
			} else {
				o.max = n
			}
		case "enum":
			for _, e := range strings.Split(val, "|") {
				o.enum = append(o.enum, enumValue(t, f, e))
			}
		case "default":
			v := val
			o.def = &v
		default:
			panic(fmt.Sprintf("ccfg: %s.%s: unknown option %q", t, f.Name, opt))
		}
	}
	return o
}

// enumValue is an enum word as the field's type reads it.
func enumValue(t reflect.Type, f reflect.StructField, s string) any {
	switch f.Type.Kind() {
	case reflect.Bool:
		b, err := strconv.ParseBool(s)
		if err != nil {
			panic(fmt.Sprintf("ccfg: %s.%s: enum %q", t, f.Name, s))
		}
		return b
	case reflect.Int:
		n, err := strconv.Atoi(s)
		if err != nil {
			panic(fmt.Sprintf("ccfg: %s.%s: enum %q", t, f.Name, s))
		}
		return n
	}
	return s
}

// StrOrList is the schema of a string, or a list of at least min
// strings.
func StrOrList(min int) *Schema {
	return &Schema{Alts: map[string]*Schema{"string": nil, "list": {Types: []string{"list"}, Items: &Schema{Types: []string{"string"}}, MinItems: min}}}
}
