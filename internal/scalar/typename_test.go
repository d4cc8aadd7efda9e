package scalar

import (
	"encoding/json"
	"fmt"
	"testing"
)

func TestTypeNames(t *testing.T) {
	for _, tc := range []struct {
		in              any
		name, yaml, jsn string // TypeName, YAMLNoun, JSONNoun
	}{
		{nil, "null", "null", "null"},
		{"x", "string", "a string", "a string"},
		{"", "string", "a string", "a string"},
		{true, "boolean", "a boolean", "a boolean"},
		{false, "boolean", "a boolean", "a boolean"},
		{1, "integer", "a number", "a number"},
		{int64(1), "int64", "a number", "a number"},
		{int32(1), "int32", "a int32", "a number"},
		{uint8(1), "uint8", "a uint8", "a number"},
		{1.5, "number", "a number", "a number"},
		{float32(1.5), "float32", "a float32", "a number"},
		{json.Number("1"), "json.Number", "a json.Number", "a number"},
		{[]any{1}, "list", "a list", "a list"},
		{[]any(nil), "list", "a list", "a list"},
		{map[string]any{}, "map", "a map", "an object"},
		{map[any]any{}, "map[interface {}]interface {}", "a map[interface {}]interface {}", "an object"},
		{[]byte("x"), "binary", "a []uint8", "[]uint8"},
		{[]string{"x"}, "[]string", "a []string", "[]string"},
		{map[string]string{}, "map[string]string", "a map[string]string", "map[string]string"},
		{struct{}{}, "struct {}", "a struct {}", "struct {}"},
		{fmt.Errorf("e"), "*errors.errorString", "a *errors.errorString", "*errors.errorString"},
	} {
		if got := TypeName(tc.in); got != tc.name {
			t.Errorf("TypeName(%#v) = %q, want %q", tc.in, got, tc.name)
		}
		if got := YAMLNoun(tc.in); got != tc.yaml {
			t.Errorf("YAMLNoun(%#v) = %q, want %q", tc.in, got, tc.yaml)
		}
		if got := JSONNoun(tc.in); got != tc.jsn {
			t.Errorf("JSONNoun(%#v) = %q, want %q", tc.in, got, tc.jsn)
		}
	}
}
