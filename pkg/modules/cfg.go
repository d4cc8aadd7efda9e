package modules

import (
	"fmt"
	"strconv"
	"strings"
)

// Helpers reading the generic YAML values userdata.Merge produces
// (map[string]any, []any, string, bool, int, float64, nil), with
// cloud-init's leniency: util.get_cfg_option_bool's true strings, numbers
// as strings where a string is wanted.

// cfgString returns m[key] as a string: a string as is, a number or a
// boolean formatted, def when missing or null.
func cfgString(m map[string]any, key, def string) string {
	v, ok := m[key]
	if !ok || v == nil {
		return def
	}
	return scalarString(v)
}

func scalarString(v any) string {
	switch t := v.(type) {
	case string:
		return t
	case []byte:
		return string(t)
	case bool:
		if t {
			return "True"
		}
		return "False"
	}
	return fmt.Sprint(v)
}

// isTrue is cloud-init's util.is_true / get_cfg_option_bool.
func isTrue(v any) bool {
	switch t := v.(type) {
	case bool:
		return t
	case string:
		switch strings.ToLower(strings.TrimSpace(t)) {
		case "true", "1", "on", "yes", "y":
			return true
		}
	case int:
		return t == 1
	}
	return false
}

// isFalse is cloud-init's util.is_false.
func isFalse(v any) bool {
	switch t := v.(type) {
	case bool:
		return !t
	case string:
		switch strings.ToLower(strings.TrimSpace(t)) {
		case "false", "0", "off", "no", "n":
			return true
		}
	case int:
		return t == 0
	}
	return false
}

func cfgBool(m map[string]any, key string, def bool) bool {
	v, ok := m[key]
	if !ok || v == nil {
		return def
	}
	return isTrue(v)
}

// cfgStrings returns m[key] as a list of strings: a list's scalar items, a
// lone string as a one-item list (or split at commas with commaSplit).
func cfgStrings(m map[string]any, key string, commaSplit bool) ([]string, error) {
	v, ok := m[key]
	if !ok || v == nil {
		return nil, nil
	}
	return toStrings(key, v, commaSplit)
}

func toStrings(key string, v any, commaSplit bool) ([]string, error) {
	switch t := v.(type) {
	case string:
		if !commaSplit {
			return []string{t}, nil
		}
		var out []string
		for _, s := range strings.Split(t, ",") {
			if s = strings.TrimSpace(s); s != "" {
				out = append(out, s)
			}
		}
		return out, nil
	case []any:
		out := make([]string, 0, len(t))
		for i, x := range t {
			switch x.(type) {
			case map[string]any, []any, nil:
				return nil, fmt.Errorf("%s.%d: want a string, got %s", key, i, kind(x))
			}
			out = append(out, strings.TrimSpace(scalarString(x)))
		}
		return out, nil
	}
	return nil, fmt.Errorf("%s: want a string or a list of strings, got %s", key, kind(v))
}

func kind(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case string:
		return "a string"
	case bool:
		return "a boolean"
	case int, int64, float64:
		return "a number"
	case []any:
		return "a list"
	case map[string]any:
		return "a map"
	}
	return fmt.Sprintf("a %T", v)
}

// cfgInt returns m[key] as an integer (a string of digits is accepted).
func cfgInt(m map[string]any, key string, def int) (int, error) {
	v, ok := m[key]
	if !ok || v == nil {
		return def, nil
	}
	switch t := v.(type) {
	case int:
		return t, nil
	case float64:
		return int(t), nil
	case string:
		n, err := strconv.Atoi(strings.TrimSpace(t))
		if err == nil {
			return n, nil
		}
	}
	return 0, fmt.Errorf("%s: want an integer, got %s %v", key, kind(v), v)
}

// shellQuote quotes s for sh, as cloud-init's shellify does: in single
// quotes, an embedded quote closing the quotes, escaped, and reopening them.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// shellify is cloud-init's util.shellify: a "#!/bin/sh" script with one
// line per item, a string as it is, a list's items quoted and joined by
// spaces; null items are skipped.
func shellify(key string, items any) (string, error) {
	list, ok := items.([]any)
	if !ok {
		return "", fmt.Errorf("%s: want a list, got %s", key, kind(items))
	}
	var b strings.Builder
	b.WriteString("#!/bin/sh\n")
	for i, it := range list {
		switch t := it.(type) {
		case nil:
		case string:
			b.WriteString(t + "\n")
		case []any:
			q := make([]string, len(t))
			for j, a := range t {
				switch a.(type) {
				case map[string]any, []any:
					return "", fmt.Errorf("%s.%d.%d: want a string, got %s", key, i, j, kind(a))
				}
				if a == nil {
					a = "None" // str(None), as cloud-init
				}
				q[j] = shellQuote(scalarString(a))
			}
			b.WriteString(strings.Join(q, " ") + "\n")
		default:
			return "", fmt.Errorf("%s.%d: want a string or a list, got %s", key, i, kind(it))
		}
	}
	return b.String(), nil
}
