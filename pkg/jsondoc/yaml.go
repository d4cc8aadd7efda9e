package jsondoc

import (
	"fmt"
	"math"
)

// FromYAML turns what yaml.v3 decodes into a value encoding/json can
// write: a mapping with keys that are not strings (map[any]any) becomes a
// map[string]any keyed by their text, and NaN and the infinities, which
// JSON has no numbers for, become their text. Maps and lists are changed
// in place.
func FromYAML(v any) any {
	switch v := v.(type) {
	case map[string]any:
		for k, e := range v {
			v[k] = FromYAML(e)
		}
		return v
	case map[any]any:
		m := make(map[string]any, len(v))
		for k, e := range v {
			m[fmt.Sprint(k)] = FromYAML(e)
		}
		return m
	case []any:
		for i, e := range v {
			v[i] = FromYAML(e)
		}
		return v
	case float64:
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Sprint(v)
		}
	}
	return v
}
