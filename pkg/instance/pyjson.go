package instance

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/earlyinit/earlyinit/pkg/pyyaml"
)

// generic turns any JSON-marshalable value into generic JSON values
// (map[string]any, []any, string, json.Number, bool, nil), keeping numbers as
// they were written.
func generic(v any) (any, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return decodeGeneric(b)
}

func decodeGeneric(b []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var out any
	if err := dec.Decode(&out); err != nil {
		return nil, err
	}
	if dec.More() {
		return nil, fmt.Errorf("trailing data after JSON value")
	}
	return out, nil
}

// pyJSON encodes a generic JSON value exactly as Python's
// json.dumps(v, indent=1, sort_keys=True) does, which is how cloud-init
// writes instance-data.json: one-space indent, keys sorted, ", " never at a
// line end, and every non-ASCII character escaped as \uXXXX. A trailing
// newline is added, as cloud-init's write_json does.
func pyJSON(v any) ([]byte, error) {
	var b bytes.Buffer
	if err := pyEncode(&b, v, 0); err != nil {
		return nil, err
	}
	b.WriteByte('\n')
	return b.Bytes(), nil
}

func pyEncode(b *bytes.Buffer, v any, level int) error {
	switch v := v.(type) {
	case nil:
		b.WriteString("null")
	case bool:
		b.WriteString(strconv.FormatBool(v))
	case string:
		pyString(b, v)
	case json.Number:
		n, err := pyNumber(v)
		if err != nil {
			return err
		}
		b.WriteString(n)
	case float64:
		// Only reached for values built in Go; generic() gives json.Number.
		b.WriteString(pyFloat(v))
	case int:
		b.WriteString(strconv.Itoa(v))
	case []any:
		if len(v) == 0 {
			b.WriteString("[]")
			return nil
		}
		b.WriteString("[")
		for i, e := range v {
			if i > 0 {
				b.WriteString(",")
			}
			newline(b, level+1)
			if err := pyEncode(b, e, level+1); err != nil {
				return err
			}
		}
		newline(b, level)
		b.WriteString("]")
	case []string:
		a := make([]any, len(v))
		for i, s := range v {
			a[i] = s
		}
		return pyEncode(b, a, level)
	case map[string]any:
		if len(v) == 0 {
			b.WriteString("{}")
			return nil
		}
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		b.WriteString("{")
		for i, k := range keys {
			if i > 0 {
				b.WriteString(",")
			}
			newline(b, level+1)
			pyString(b, k)
			b.WriteString(": ")
			if err := pyEncode(b, v[k], level+1); err != nil {
				return err
			}
		}
		newline(b, level)
		b.WriteString("}")
	default:
		return fmt.Errorf("cannot encode %T as JSON", v)
	}
	return nil
}

// pyNumber writes a JSON number as Python does after json.load: an integer
// as an integer ("-0" is 0), anything with a fraction or an exponent as a
// float in repr form (1e3 is 1000.0).
func pyNumber(n json.Number) (string, error) {
	s := n.String()
	if !strings.ContainsAny(s, ".eE") {
		if s == "-0" {
			return "0", nil
		}
		return s, nil
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return "", fmt.Errorf("number %s: %w", s, err)
	}
	return pyFloat(f), nil
}

// pyFloat is a float as Python's json.dumps writes it: its repr, but
// Infinity and NaN by JSON's names (neither can come from parsed JSON).
func pyFloat(f float64) string {
	switch {
	case math.IsInf(f, 1):
		return "Infinity"
	case math.IsInf(f, -1):
		return "-Infinity"
	case math.IsNaN(f):
		return "NaN"
	}
	return pyyaml.FloatRepr(f)
}

func newline(b *bytes.Buffer, level int) {
	b.WriteByte('\n')
	for range level {
		b.WriteByte(' ')
	}
}

// pyString writes s as Python's json module does with ensure_ascii=True.
// Invalid UTF-8 is written as U+FFFD.
func pyString(b *bytes.Buffer, s string) {
	const hex = "0123456789abcdef"
	u := func(r rune) {
		b.WriteString(`\u`)
		b.WriteByte(hex[r>>12&0xf])
		b.WriteByte(hex[r>>8&0xf])
		b.WriteByte(hex[r>>4&0xf])
		b.WriteByte(hex[r&0xf])
	}
	b.WriteByte('"')
	for _, r := range s {
		switch r {
		case '"':
			b.WriteString(`\"`)
		case '\\':
			b.WriteString(`\\`)
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		case '\t':
			b.WriteString(`\t`)
		case '\b':
			b.WriteString(`\b`)
		case '\f':
			b.WriteString(`\f`)
		default:
			switch {
			case r >= 0x20 && r <= 0x7e:
				b.WriteRune(r)
			case r > 0xffff:
				r1, r2 := utf16.EncodeRune(r)
				u(r1)
				u(r2)
			default:
				if r == utf8.RuneError {
					r = 0xfffd
				}
				u(r)
			}
		}
	}
	b.WriteByte('"')
}
