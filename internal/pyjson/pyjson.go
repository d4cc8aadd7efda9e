// Package pyjson writes JSON byte for byte as Python's json.dumps does
// with sort_keys=True and ensure_ascii (its defaults otherwise): cloud-init
// writes instance-data.json with indent=1, and chef's firstboot.json
// compact, and a file earlyinit writes in its place must be the same.
package pyjson

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

	"github.com/earlyinit/earlyinit/internal/pyyaml"
)

// Dumps is json.dumps(v, sort_keys=True, indent=indent), with no indent
// when indent is negative (", " and ": " between items, on one line).
// v is made of nil, bool, string, json.Number, float64, Go integers,
// []any, []string and map[string]any; anything else is an error.
func Dumps(v any, indent int) ([]byte, error) {
	var b bytes.Buffer
	if err := encode(&b, v, indent, 0); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

func encode(b *bytes.Buffer, v any, indent, level int) error {
	switch v := v.(type) {
	case nil:
		b.WriteString("null")
	case bool:
		b.WriteString(strconv.FormatBool(v))
	case string:
		Quote(b, v)
	case json.Number:
		n, err := number(v)
		if err != nil {
			return err
		}
		b.WriteString(n)
	case float64:
		b.WriteString(Float(v))
	case int:
		b.WriteString(strconv.Itoa(v))
	case int64:
		b.WriteString(strconv.FormatInt(v, 10))
	case int32:
		b.WriteString(strconv.FormatInt(int64(v), 10))
	case uint64:
		b.WriteString(strconv.FormatUint(v, 10))
	case uint:
		b.WriteString(strconv.FormatUint(uint64(v), 10))
	case []string:
		a := make([]any, len(v))
		for i, s := range v {
			a[i] = s
		}
		return encode(b, a, indent, level)
	case []any:
		if len(v) == 0 {
			b.WriteString("[]")
			return nil
		}
		b.WriteString("[")
		for i, e := range v {
			separate(b, i, indent, level+1)
			if err := encode(b, e, indent, level+1); err != nil {
				return err
			}
		}
		closing(b, indent, level)
		b.WriteString("]")
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
			separate(b, i, indent, level+1)
			Quote(b, k)
			b.WriteString(": ")
			if err := encode(b, v[k], indent, level+1); err != nil {
				return err
			}
		}
		closing(b, indent, level)
		b.WriteString("}")
	default:
		return fmt.Errorf("cannot encode %T as JSON", v)
	}
	return nil
}

// separate writes what goes before item i: ", " on one line, or "," and a
// new line indented to level.
func separate(b *bytes.Buffer, i, indent, level int) {
	if indent < 0 {
		if i > 0 {
			b.WriteString(", ")
		}
		return
	}
	if i > 0 {
		b.WriteByte(',')
	}
	newline(b, indent*level)
}

func closing(b *bytes.Buffer, indent, level int) {
	if indent >= 0 {
		newline(b, indent*level)
	}
}

func newline(b *bytes.Buffer, n int) {
	b.WriteByte('\n')
	for range n {
		b.WriteByte(' ')
	}
}

// number writes a JSON number as Python does after json.load: an integer
// as an integer ("-0" is 0), anything with a fraction or an exponent as a
// float in repr form (1e3 is 1000.0).
func number(n json.Number) (string, error) {
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
	return Float(f), nil
}

// Float is a float as json.dumps writes it: its repr, but Infinity and
// NaN by the names Python's json uses.
func Float(f float64) string {
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

// Quote writes s as a JSON string with ensure_ascii: every character
// outside printable ASCII as \uXXXX (a surrogate pair above U+FFFF),
// invalid UTF-8 as U+FFFD.
func Quote(b *bytes.Buffer, s string) {
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
