package jsondoc

import (
	"fmt"
	"math"
	"strconv"
	"time"
)

// FromYAML turns what yaml.v3 decodes into a value encoding/json can
// write: a mapping with keys that are not strings (map[any]any) becomes a
// map[string]any keyed by their text (a string key wins over another key
// with the same text, whatever the map's order), timestamps become RFC
// 3339 text, NaN and the infinities, which JSON has no numbers for, their
// text, and any other type its text. Maps and lists are changed in place.
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
			if s, ok := k.(string); ok {
				m[s] = FromYAML(e)
			}
		}
		for k, e := range v {
			if _, ok := k.(string); ok {
				continue
			}
			s := fmt.Sprint(FromYAML(k))
			if _, dup := m[s]; !dup {
				m[s] = FromYAML(e)
			}
		}
		return m
	case []any:
		for i, e := range v {
			v[i] = FromYAML(e)
		}
		return v
	case float64:
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return strconv.FormatFloat(v, 'g', -1, 64)
		}
		return v
	case time.Time:
		return v.Format(time.RFC3339Nano)
	case nil, string, bool, int, int64, uint64, float32, int32, uint, uint32:
		return v
	default:
		return fmt.Sprint(v)
	}
}
