package jinja

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/earlyinit/earlyinit/internal/pystr"
	"github.com/earlyinit/earlyinit/internal/pyyaml"
)

// DecodeJSON decodes JSON as Python's json.loads does: objects as *Dict in
// their order (a repeated key keeps its first place and its last value),
// integers as int64 (float64 past its range), other numbers as float64.
// Nesting is bounded by maxDepth.
func DecodeJSON(b []byte, maxDepth int) (any, error) {
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	v, err := decodeValue(d, maxDepth)
	if err != nil {
		return nil, err
	}
	if _, err := d.Token(); err != io.EOF {
		return nil, fmt.Errorf("JSON: data after the top-level value")
	}
	return v, nil
}

func decodeValue(d *json.Decoder, depth int) (any, error) {
	t, err := d.Token()
	if err != nil {
		return nil, fmt.Errorf("JSON: %w", err)
	}
	return decodeToken(d, t, depth)
}

func decodeToken(d *json.Decoder, t json.Token, depth int) (any, error) {
	switch x := t.(type) {
	case json.Delim:
		if depth <= 0 {
			return nil, fmt.Errorf("JSON nested too deep")
		}
		switch x {
		case '{':
			m := NewDict()
			for d.More() {
				kt, err := d.Token()
				if err != nil {
					return nil, fmt.Errorf("JSON: %w", err)
				}
				k, _ := kt.(string)
				v, err := decodeValue(d, depth-1)
				if err != nil {
					return nil, err
				}
				m.Set(k, v)
			}
			_, err := d.Token()
			return m, err
		case '[':
			l := []any{}
			for d.More() {
				v, err := decodeValue(d, depth-1)
				if err != nil {
					return nil, err
				}
				l = append(l, v)
			}
			_, err := d.Token()
			return l, err
		}
	case json.Number:
		s := string(x)
		if !strings.ContainsAny(s, ".eE") {
			if i, err := strconv.ParseInt(s, 10, 64); err == nil {
				return i, nil
			}
		}
		f, err := strconv.ParseFloat(s, 64)
		if err != nil && !math.IsInf(f, 0) {
			return nil, fmt.Errorf("JSON: number: %w", err)
		}
		return f, nil
	case string, bool, nil:
		return x, nil
	}
	return nil, fmt.Errorf("JSON: unexpected %v", t)
}

// jsonWriter writes Python's json.dumps(v, sort_keys=sortKeys,
// indent=indent) (ensure_ascii: everything past ASCII escaped), with
// itemSep between items (", " without indent, "," with it).
type jsonWriter struct {
	b        strings.Builder
	indent   string
	sortKeys bool
	itemSep  string
	r        *renderer
	line     int
}

// DumpJSON is Python's json.dumps(v, indent=indent, sort_keys=True,
// separators=(itemSep, ": ")) of a value DecodeJSON made: indent < 0 for
// none.
func DumpJSON(v any, indent int, itemSep string) (string, error) {
	w := &jsonWriter{sortKeys: true, itemSep: itemSep}
	if indent >= 0 {
		w.indent = strings.Repeat(" ", indent)
	}
	if err := w.value(v, 0, indent >= 0); err != nil {
		return "", err
	}
	return w.b.String(), nil
}

func (w *jsonWriter) nl(level int, on bool) {
	if on {
		w.b.WriteByte('\n')
		for range level {
			w.b.WriteString(w.indent)
		}
	}
}

// value writes v at nesting level; ind says whether to indent.
func (w *jsonWriter) value(v any, level int, ind bool) error {
	if w.r != nil {
		if err := w.r.step(w.line, 1); err != nil {
			return err
		}
		if w.b.Len() > w.r.lim.Output {
			return limitf(w.line, "a value longer than %d bytes", w.r.lim.Output)
		}
	}
	switch x := v.(type) {
	case nil:
		w.b.WriteString("null")
	case bool:
		if x {
			w.b.WriteString("true")
		} else {
			w.b.WriteString("false")
		}
	case int64:
		w.b.WriteString(strconv.FormatInt(x, 10))
	case float64:
		w.float(x)
	case string:
		pystr.JSONString(&w.b, x)
	case []any:
		return w.list(x, level, ind)
	case tuple:
		return w.list(x, level, ind)
	case *Dict:
		return w.dict(x, level, ind)
	default:
		return fmt.Errorf("Object of type %s is not JSON serializable", typeName(v))
	}
	return nil
}

// float writes x as Python's json.dumps: NaN and the infinities as
// JavaScript spells them.
func (w *jsonWriter) float(x float64) {
	switch {
	case math.IsNaN(x):
		w.b.WriteString("NaN")
	case math.IsInf(x, 1):
		w.b.WriteString("Infinity")
	case math.IsInf(x, -1):
		w.b.WriteString("-Infinity")
	default:
		w.b.WriteString(pyyaml.FloatRepr(x))
	}
}

// list writes a list or tuple's items.
func (w *jsonWriter) list(items []any, level int, ind bool) error {
	if len(items) == 0 {
		w.b.WriteString("[]")
		return nil
	}
	w.b.WriteByte('[')
	for i, e := range items {
		if i > 0 {
			w.b.WriteString(w.itemSep)
		}
		w.nl(level+1, ind)
		if err := w.value(e, level+1, ind); err != nil {
			return err
		}
	}
	w.nl(level, ind)
	w.b.WriteByte(']')
	return nil
}

// jsonItem is a dict's item as JSON writes it: its key as a string, its
// value, and its key as it was, to sort by.
type jsonItem struct {
	k string
	v any
	o any
}

// dict writes a dict's items, their keys sorted when sortKeys.
func (w *jsonWriter) dict(x *Dict, level int, ind bool) error {
	if x.Len() == 0 {
		w.b.WriteString("{}")
		return nil
	}
	kvs, err := jsonItems(x)
	if err != nil {
		return err
	}
	if w.sortKeys {
		sort.SliceStable(kvs, func(i, j int) bool {
			l, e := less(kvs[i].o, kvs[j].o)
			if e != nil {
				err = e
			}
			return l
		})
		if err != nil {
			return err
		}
	}
	w.b.WriteByte('{')
	for i, e := range kvs {
		if i > 0 {
			w.b.WriteString(w.itemSep)
		}
		w.nl(level+1, ind)
		pystr.JSONString(&w.b, e.k)
		w.b.WriteString(": ")
		if err := w.value(e.v, level+1, ind); err != nil {
			return err
		}
	}
	w.nl(level, ind)
	w.b.WriteByte('}')
	return nil
}

// jsonItems are x's items with their keys as JSON strings, which Python
// makes of str, int, bool and None keys.
func jsonItems(x *Dict) ([]jsonItem, error) {
	kvs := make([]jsonItem, 0, x.Len())
	for i, k := range x.keys {
		var ks string
		switch y := k.(type) {
		case string:
			ks = y
		case int64:
			ks = strconv.FormatInt(y, 10)
		case bool:
			ks = "false"
			if y {
				ks = "true"
			}
		case nil:
			ks = "null"
		default:
			return nil, fmt.Errorf("keys must be str, int, float, bool or None, not %s", typeName(k))
		}
		kvs = append(kvs, jsonItem{ks, x.vals[i], k})
	}
	return kvs, nil
}
