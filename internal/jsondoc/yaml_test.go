package jsondoc

import (
	"encoding/json"
	"math"
	"reflect"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"
)

func TestFromYAML(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   any
		want any
	}{
		{"nil", nil, nil},
		{"string", "a", "a"},
		{"int", 7, 7},
		{"float", 1.5, 1.5},
		{"NaN", math.NaN(), "NaN"},
		{"+Inf", math.Inf(1), "+Inf"},
		{"-Inf", math.Inf(-1), "-Inf"},
		{"string keys", map[string]any{"a": map[any]any{1: "x"}}, map[string]any{"a": map[string]any{"1": "x"}}},
		{"other keys", map[any]any{1: "a", true: "b", 2.5: math.Inf(1)}, map[string]any{"1": "a", "true": "b", "2.5": "+Inf"}},
		{"list", []any{map[any]any{"k": math.NaN()}, 1}, []any{map[string]any{"k": "NaN"}, 1}},
		// A string key wins over another with the same text, whatever
		// the order the map gives.
		{"same text", map[any]any{1: "int", "1": "str", 2: "two"}, map[string]any{"1": "str", "2": "two"}},
		{"timestamp", map[string]any{"t": time.Date(2024, 5, 6, 7, 8, 9, 0, time.UTC)}, map[string]any{"t": "2024-05-06T07:08:09Z"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := FromYAML(tc.in)
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("FromYAML(%#v) = %#v, want %#v", tc.in, got, tc.want)
			}
			if _, err := json.Marshal(got); err != nil {
				t.Errorf("json cannot write it: %v", err)
			}
		})
	}
}

// TestFromYAMLDecoded: what yaml.v3 itself gives.
func TestFromYAMLDecoded(t *testing.T) {
	var v any
	if err := yaml.Unmarshal([]byte("- mac_address: aa\n  1: one\n  mtu: .nan\n- {x: -.inf}\n"), &v); err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(FromYAML(v))
	if want := `[{"1":"one","mac_address":"aa","mtu":"NaN"},{"x":"-Inf"}]`; err != nil || string(b) != want {
		t.Errorf("got %s, %v; want %s", b, err, want)
	}
}
