package ccfg

import (
	"reflect"
	"strings"
	"testing"
)

type inner struct {
	Name string `yaml:"name" cc:"required"`
}

type sample struct {
	S       string            `yaml:"s" cc:"default=dflt"`
	B       bool              `yaml:"b"`
	BTrue   bool              `yaml:"b_true" cc:"default=true,notfalse"`
	BTruthy bool              `yaml:"b_truthy" cc:"truthy"`
	N       int               `yaml:"n"`
	F       float64           `yaml:"f"`
	L       []string          `yaml:"l" cc:"min=1,max=3,unique"`
	Strict  []string          `yaml:"strict" cc:"strict"`
	Untrim  []string          `yaml:"untrim" cc:"untrimmed"`
	E       string            `yaml:"e" cc:"enum=a|b"`
	P       *string           `yaml:"p" cc:"null"`
	M       map[string]string `yaml:"m"`
	Any     any               `yaml:"any"`
	In      *inner            `yaml:"in"`
	Ins     []inner           `yaml:"ins"`
	Old     *bool             `yaml:"old" cc:"deprecated=old; use b, or nothing"`
	unkeyed string
	NoTag   string
}

func (sample) Shape(s *Schema) { s.MinProps = 1 }

func TestOf(t *testing.T) {
	str := func(extra ...string) *Schema { return &Schema{Types: append([]string{"string"}, extra...)} }
	boolean := &Schema{Types: []string{"boolean"}}
	innerS := &Schema{Types: []string{"map"}, Props: map[string]*Schema{"name": str()}, Required: []string{"name"}}
	want := &Schema{Types: []string{"map"}, MinProps: 1, Props: map[string]*Schema{
		"s": {Types: []string{"string"}, Default: "dflt"}, "b": boolean, "b_true": {Types: []string{"boolean"}, Default: "true"}, "b_truthy": boolean,
		"n":      {Types: []string{"integer"}},
		"f":      {Types: []string{"number"}},
		"l":      {Types: []string{"list"}, Items: str(), MinItems: 1, MaxItems: 3, Unique: true},
		"strict": {Types: []string{"list"}, Items: str()},
		"untrim": {Types: []string{"list"}, Items: str()},
		"e":      {Types: []string{"string"}, Enum: []any{"a", "b"}},
		"p":      str("null"),
		"m":      {Types: []string{"map"}, KeyPattern: AnyKey, Values: str()},
		"any":    nil,
		"in":     innerS,
		"ins":    {Types: []string{"list"}, Items: innerS},
		"old":    {Types: []string{"boolean"}, Deprecated: "old; use b, or nothing"},
	}}
	if got := Of(reflect.TypeFor[sample]()); !reflect.DeepEqual(got, want) {
		for k, w := range want.Props {
			if g := got.Props[k]; !reflect.DeepEqual(g, w) {
				t.Errorf("%s: got %+v, want %+v", k, g, w)
			}
		}
		t.Errorf("got %+v\nwant %+v", got, want)
	}
}

func TestDecode(t *testing.T) {
	p := func(s string) *string { return &s }
	yes := true
	for _, tt := range []struct {
		name string
		in   any
		want sample
		err  string
	}{
		{name: "defaults", in: map[string]any{}, want: sample{S: "dflt", BTrue: true}},
		{name: "null is the default", in: map[string]any{"s": nil, "b_true": nil}, want: sample{S: "dflt", BTrue: true}},
		{name: "str() of scalars", in: map[string]any{"s": 1.0, "p": true, "e": 3}, want: sample{S: "1.0", P: p("True"), E: "3", BTrue: true}},
		{name: "is_true", in: map[string]any{"b": "on", "b_true": "maybe", "b_truthy": "false"}, want: sample{S: "dflt", B: true, BTrue: true, BTruthy: true}},
		{name: "is_false", in: map[string]any{"b": "maybe", "b_true": "off", "b_truthy": 0}, want: sample{S: "dflt"}},
		{name: "numbers", in: map[string]any{"n": " 42 ", "f": 2}, want: sample{S: "dflt", BTrue: true, N: 42, F: 2}},
		{name: "float truncated", in: map[string]any{"n": 4.7, "f": "1.5"}, want: sample{S: "dflt", BTrue: true, N: 4, F: 1.5}},
		{name: "not an integer", in: map[string]any{"n": "x"}, err: "x.n: want an integer, got a string"},
		{name: "not a number", in: map[string]any{"f": []any{}}, err: "x.f: want a number, got a list"},
		{name: "lists", in: map[string]any{"l": " one ", "strict": []any{" a "}, "untrim": " u "}, want: sample{S: "dflt", BTrue: true, L: []string{"one"}, Strict: []string{" a "}, Untrim: []string{" u "}}},
		{name: "list items trimmed", in: map[string]any{"l": []any{" a", 2}}, want: sample{S: "dflt", BTrue: true, L: []string{"a", "2"}}},
		{name: "strict lone string", in: map[string]any{"strict": "a"}, err: "x.strict: want a list, got a string"},
		{name: "strict item", in: map[string]any{"strict": []any{"a", 1}}, err: "x.strict.1: want a string, got a number"},
		{name: "untrimmed lone integer", in: map[string]any{"untrim": 1}, err: "x.untrim: want a list, got a number"},
		{name: "nested", in: map[string]any{"in": map[string]any{"name": "n", "x": 1}, "ins": []any{map[string]any{"name": "m"}}, "old": "yes", "m": map[string]any{"k": 1}, "any": []any{1}},
			want: sample{S: "dflt", BTrue: true, In: &inner{Name: "n"}, Ins: []inner{{Name: "m"}}, Old: &yes, M: map[string]string{"k": "1"}, Any: []any{1}}},
		{name: "nested error path", in: map[string]any{"ins": []any{map[string]any{"name": []any{}}}}, err: "x.ins.0.name: want a string, got a list"},
		{name: "not a map", in: []any{}, err: "x: want a map, got a list"},
		{name: "map value", in: map[string]any{"m": map[string]any{"k": map[string]any{}}}, err: "x.m.k: want a string, got a map"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var got sample
			err := DecodeValue(tt.in, "x", &got)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("err %v, want %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %+v\nwant %+v", got, tt.want)
			}
		})
	}
}

func TestDecodeNull(t *testing.T) {
	cfg := map[string]any{"ntp": nil, "wireguard": nil, "keyboard": nil}
	n, ok, err := Decode[NTP](cfg, "ntp")
	if !ok || err != nil || !n.Enabled {
		t.Errorf("ntp: null: got %+v %v %v, want an empty config (enabled)", n, ok, err)
	}
	if _, ok, err := Decode[Wireguard](cfg, "wireguard"); ok || err != nil {
		t.Errorf("wireguard: null: got %v %v, want skipped", ok, err)
	}
	if _, ok, err := Decode[Keyboard](cfg, "keyboard"); !ok || err == nil || err.Error() != "keyboard: want a map, got null" {
		t.Errorf("keyboard: null: got %v %v, want an error", ok, err)
	}
	if v, ok, err := Decode[string](map[string]any{"timezone": nil}, "timezone"); ok || err != nil || v != "" {
		t.Errorf("timezone: null: got %q %v %v, want read as missing", v, ok, err)
	}
	if v, ok, err := Decode[DeviceAliases](map[string]any{"device_aliases": nil}, "device_aliases"); ok || err != nil || v != nil {
		t.Errorf("device_aliases: null: got %v %v %v, want read as missing", v, ok, err)
	}
	if _, ok, err := Decode[Keyboard](cfg, "nosuch"); ok || err == nil {
		t.Errorf("a key Config does not declare: %v %v", ok, err)
	}
	if _, ok, err := Decode[NTP](cfg, "keyboard"); ok || err == nil {
		t.Errorf("a key of another type: %v %v", ok, err)
	}
	if tz, ok, err := Decode[string](map[string]any{"timezone": 1}, "timezone"); !ok || err != nil || tz != "1" {
		t.Errorf("a scalar key: %q %v %v", tz, ok, err)
	}
	// The field's options apply to a top-level key too.
	if h, ok, err := Decode[string](map[string]any{"authkey_hash": nil}, "authkey_hash"); ok || err != nil || h != "sha256" {
		t.Errorf("authkey_hash: null: %q %v %v", h, ok, err)
	}
	if l, ok, err := Decode[[]string](map[string]any{"ssh_fp_console_blacklist": []any{" a "}}, "ssh_fp_console_blacklist"); !ok || err != nil || len(l) != 1 || l[0] != " a " {
		t.Errorf("ssh_fp_console_blacklist: %q %v %v", l, ok, err)
	}
}

// TestKeys: every registered type has a schema (its tags parse), its
// default and each struct in it decodes (an empty map: their defaults
// parse), and no key is registered twice. The panics of Of and Decode
// on a type's mistakes are thus this test's failures, never a boot's.
func TestKeys(t *testing.T) {
	seen := map[string]bool{}
	for _, k := range Keys() {
		if seen[k.Name] {
			t.Errorf("%s registered twice", k.Name)
		}
		seen[k.Name] = true
		s := Schemas()[k.Name]
		if s == nil || len(s.Types) == 0 && s.Alts == nil && s.Check == "" {
			t.Errorf("%s: no schema", k.Name)
			continue
		}
		if (k.Null != NullInvalid) != (len(s.Types) > 0 && s.Types[len(s.Types)-1] == "null") {
			t.Errorf("%s: Null %d, types %v", k.Name, k.Null, s.Types)
		}
		if k.opts.def != nil {
			if err := decode(reflect.New(k.Type).Elem(), *k.opts.def, k.Name, k.opts); err != nil {
				t.Errorf("%s: default: %v", k.Name, err)
			}
		}
		for _, st := range structsOf(k.Type, map[reflect.Type]bool{}) {
			v := reflect.New(st)
			if err := DecodeValue(map[string]any{}, k.Name, v.Interface()); err != nil {
				t.Errorf("%s: %s: %v", k.Name, st, err)
			}
		}
	}
}

// strOrList is a union: a string, or a list of strings.
type strOrList struct{ items []string }

func (strOrList) Schema() *Schema {
	return &Schema{Alts: map[string]*Schema{"string": nil, "list": {Types: []string{"list"}, Items: &Schema{Types: []string{"string"}}}}}
}

func (u *strOrList) DecodeCC(v any, path string) error {
	if s, ok := v.(string); ok {
		u.items = []string{s}
		return nil
	}
	return DecodeValue(v, path, &u.items)
}

type withUnion struct {
	U strOrList `yaml:"u" cc:"required"`
}

func TestUnion(t *testing.T) {
	s := Of(reflect.TypeFor[withUnion]())
	if got := s.Props["u"]; got == nil || len(got.Alts) != 2 || !reflect.DeepEqual(s.Required, []string{"u"}) {
		t.Errorf("schema %+v", s)
	}
	var w withUnion
	if err := DecodeValue(map[string]any{"u": []any{"a ", "b"}}, "x", &w); err != nil || !reflect.DeepEqual(w.U.items, []string{"a", "b"}) {
		t.Errorf("list: %v %q", err, w.U.items)
	}
	if err := DecodeValue(map[string]any{"u": " s "}, "x", &w); err != nil || !reflect.DeepEqual(w.U.items, []string{" s "}) {
		t.Errorf("string: %v %q", err, w.U.items)
	}
	if err := DecodeValue(map[string]any{"u": map[string]any{}}, "x", &w); err == nil || err.Error() != "x.u: want a list, got a map" {
		t.Errorf("map: %v", err)
	}
}

// structsOf are the struct types t holds, t included.
func structsOf(t reflect.Type, seen map[reflect.Type]bool) []reflect.Type {
	switch t.Kind() {
	case reflect.Pointer, reflect.Slice, reflect.Map:
		return structsOf(t.Elem(), seen)
	case reflect.Struct:
		if seen[t] {
			return nil
		}
		seen[t] = true
		out := []reflect.Type{t}
		for i := range t.NumField() {
			out = append(out, structsOf(t.Field(i).Type, seen)...)
		}
		return out
	}
	return nil
}

// TestGivenNull: a null given is told from a key not given, which Decode
// reads alike; a key Config does not declare is a module's mistake.
func TestGivenNull(t *testing.T) {
	cfg := map[string]any{"ssh_genkeytypes": nil, "ssh_import_id": []any{"gh:x"}}
	for key, want := range map[string]bool{"ssh_genkeytypes": true, "ssh_import_id": false, "ssh_key_console_blacklist": false} {
		if got := GivenNull(cfg, key); got != want {
			t.Errorf("GivenNull(%s) = %v, want %v", key, got, want)
		}
	}
	defer func() {
		if recover() == nil {
			t.Error("GivenNull of an undeclared key did not panic")
		}
	}()
	GivenNull(cfg, "ssh_genkeytype")
}

// TestAptGetWrapperEnabled: enabled not given is "auto", given as null is
// None (no wrapper), as cloud-init's wcfg.get("enabled", "auto").
func TestAptGetWrapperEnabled(t *testing.T) {
	for _, tc := range []struct {
		wrapper map[string]any
		want    any
	}{
		{map[string]any{}, "auto"},
		{map[string]any{"enabled": nil}, nil},
		{map[string]any{"enabled": true, "command": []any{"x"}}, true},
	} {
		si, _, err := Decode[*SystemInfo](map[string]any{"system_info": map[string]any{"apt_get_wrapper": tc.wrapper}}, "system_info")
		if err != nil || si.AptGetWrapper == nil || si.AptGetWrapper.Enabled != tc.want {
			t.Errorf("%v: %+v, %v; want enabled %v", tc.wrapper, si, err, tc.want)
		}
	}
	if si, _, err := Decode[*SystemInfo](map[string]any{"system_info": map[string]any{"apt_get_wrapper": "x", "ntp_client": "chrony"}}, "system_info"); err != nil || si.Err("apt_get_wrapper") == nil || si.NTPClient != "chrony" {
		t.Errorf("apt_get_wrapper as a string: %+v, %v; want its own error, and the other keys read", si, err)
	}
}
