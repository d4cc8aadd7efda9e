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

	"github.com/earlyinit/earlyinit/internal/jinja/pystr"
	"github.com/earlyinit/earlyinit/internal/pyyaml"
)

// Dict is a Python dict: its keys in insertion order. Keys are strings,
// int64 or bool (as Python, True is the key 1).
type Dict struct {
	keys []any
	vals []any
	idx  map[any]int
}

// NewDict returns an empty Dict.
func NewDict() *Dict { return &Dict{idx: map[any]int{}} }

// hashKey is k as a map key: Python's 1, 1.0 and True are one key.
func hashKey(k any) (any, bool) {
	switch x := k.(type) {
	case string, int64, nil:
		return x, true
	case bool:
		if x {
			return int64(1), true
		}
		return int64(0), true
	case float64:
		if x == math.Trunc(x) && math.Abs(x) < 1<<63 {
			return int64(x), true
		}
		return x, true
	case tuple:
		// Tuples of scalars, as a string no other key spells.
		s := "\x00tuple"
		for _, e := range x {
			h, ok := hashKey(e)
			if !ok {
				return nil, false
			}
			s += fmt.Sprintf("\x00%T:%v", h, h)
		}
		return s, true
	}
	return nil, false
}

// Set sets key k (a string, int64 or bool) to v: a new key goes last, an
// existing one keeps its place, as in Python.
func (d *Dict) Set(k, v any) {
	h, ok := hashKey(k)
	if !ok {
		panic(fmt.Sprintf("jinja: unhashable dict key %T", k))
	}
	if i, ok := d.idx[h]; ok {
		d.vals[i] = v
		return
	}
	d.idx[h] = len(d.keys)
	d.keys = append(d.keys, k)
	d.vals = append(d.vals, v)
}

// Get returns the value of key k.
func (d *Dict) Get(k any) (any, bool) {
	h, ok := hashKey(k)
	if !ok {
		return nil, false
	}
	i, ok := d.idx[h]
	if !ok {
		return nil, false
	}
	return d.vals[i], true
}

// Len is the number of keys.
func (d *Dict) Len() int { return len(d.keys) }

// Keys returns the keys in order.
func (d *Dict) Keys() []any { return append([]any(nil), d.keys...) }

// tuple is a Python tuple.
type tuple []any

// view is a dict's keys(), values() or items().
type view struct {
	kind byte // 'k', 'v', 'i'
	d    *Dict
}

func (v view) items() []any {
	switch v.kind {
	case 'k':
		return v.d.Keys()
	case 'v':
		return append([]any(nil), v.d.vals...)
	}
	out := make([]any, len(v.d.keys))
	for i := range v.d.keys {
		out[i] = tuple{v.d.keys[i], v.d.vals[i]}
	}
	return out
}

// rangeV is a Python range.
type rangeV struct{ start, stop, step int64 }

func (r rangeV) len() int64 {
	switch {
	case r.step > 0 && r.start < r.stop:
		return (r.stop - r.start + r.step - 1) / r.step
	case r.step < 0 && r.start > r.stop:
		return (r.start - r.stop - r.step - 1) / -r.step
	}
	return 0
}

// iterV is a Python iterator or generator (a filter's lazy result):
// what is iterated is used up.
type iterV struct {
	items []any
	pos   int
	what  string // its Python type, for errors
}

// undefined is Jinja's Undefined, as cloud-init's DebugUndefined
// subclass prints it (missingPrefix and the name).
type undefined struct {
	name  string // "None" for one made with a hint only
	hint  string // the error's message, when not the name's
	plain bool   // a bare Undefined (an if-expression without else): prints ""
}

func (u undefined) message() string {
	if u.hint != "" {
		return u.hint
	}
	return "'" + u.name + "' is undefined"
}

// method is a Python method not yet called: recv.name.
type method struct {
	recv any
	name string
}

// loopV is the loop variable of a for loop.
type loopV struct {
	index, length int
}

// typeName is Python's type name of v, for messages.
func typeName(v any) string {
	switch x := v.(type) {
	case nil:
		return "NoneType"
	case bool:
		return "bool"
	case int64:
		return "int"
	case float64:
		return "float"
	case string:
		return "str"
	case []any:
		return "list"
	case tuple:
		return "tuple"
	case *Dict:
		return "dict"
	case view:
		switch x.kind {
		case 'k':
			return "dict_keys"
		case 'v':
			return "dict_values"
		}
		return "dict_items"
	case rangeV:
		return "range"
	case *iterV:
		return x.what
	case undefined:
		return "Undefined"
	case method:
		return "builtin_function_or_method"
	case loopV:
		return "LoopContext"
	}
	return fmt.Sprintf("%T", v)
}

// printer writes Python's str() and repr() of values, charging what it
// writes to the renderer's budget.
type printer struct {
	b strings.Builder
	r *renderer
	// line is where the value is printed, for errors.
	line int
}

func (p *printer) write(s string) error {
	p.b.WriteString(s)
	if p.r != nil && p.b.Len() > p.r.lim.Output {
		return limitf(p.line, "a value longer than %d bytes", p.r.lim.Output)
	}
	return nil
}

// str writes Python's str(v).
func (p *printer) str(v any) error {
	switch x := v.(type) {
	case string:
		return p.write(x)
	case undefined:
		if x.plain {
			return nil
		}
		if p.r != nil {
			p.r.missing = append(p.r.missing, x.name)
		}
		return p.write(missingPrefix + x.name)
	}
	return p.repr(v)
}

// repr writes Python's repr(v).
func (p *printer) repr(v any) error {
	if p.r != nil {
		if err := p.r.step(p.line, 1); err != nil {
			return err
		}
	}
	switch x := v.(type) {
	case nil:
		return p.write("None")
	case bool:
		if x {
			return p.write("True")
		}
		return p.write("False")
	case int64:
		return p.write(strconv.FormatInt(x, 10))
	case float64:
		return p.write(pyyaml.FloatRepr(x))
	case string:
		return p.write(pystr.Repr(x))
	case []any:
		return p.seq("[", x, "]", false)
	case tuple:
		return p.seq("(", x, ")", len(x) == 1)
	case *Dict:
		if err := p.write("{"); err != nil {
			return err
		}
		for i := range x.keys {
			if i > 0 {
				if err := p.write(", "); err != nil {
					return err
				}
			}
			if err := p.repr(x.keys[i]); err != nil {
				return err
			}
			if err := p.write(": "); err != nil {
				return err
			}
			if err := p.repr(x.vals[i]); err != nil {
				return err
			}
		}
		return p.write("}")
	case view:
		if err := p.write(typeName(x) + "("); err != nil {
			return err
		}
		if err := p.seq("[", x.items(), "]", false); err != nil {
			return err
		}
		return p.write(")")
	case rangeV:
		if x.step == 1 {
			return p.write(fmt.Sprintf("range(%d, %d)", x.start, x.stop))
		}
		return p.write(fmt.Sprintf("range(%d, %d, %d)", x.start, x.stop, x.step))
	case undefined:
		return p.write("Undefined")
	}
	// An iterator's, a method's or the loop's repr holds an address
	// in Python: nothing to print the same.
	return errorf(p.line, "cannot print a %s (Python prints its address): convert it first, as with |list", typeName(v))
}

func (p *printer) seq(open string, items []any, close string, comma bool) error {
	if err := p.write(open); err != nil {
		return err
	}
	for i, e := range items {
		if i > 0 {
			if err := p.write(", "); err != nil {
				return err
			}
		}
		if err := p.repr(e); err != nil {
			return err
		}
	}
	if comma {
		if err := p.write(","); err != nil {
			return err
		}
	}
	return p.write(close)
}

// truth is Python's bool(v).
func truth(v any) bool {
	switch x := v.(type) {
	case nil:
		return false
	case bool:
		return x
	case int64:
		return x != 0
	case float64:
		return x != 0
	case string:
		return x != ""
	case []any:
		return len(x) > 0
	case tuple:
		return len(x) > 0
	case *Dict:
		return x.Len() > 0
	case view:
		return x.d.Len() > 0
	case rangeV:
		return x.len() > 0
	case undefined:
		return false
	}
	return true
}

// number returns v as a float64 and whether it is a Python number
// (bool, int or float); isInt says it is a bool or int.
func number(v any) (f float64, i int64, isInt, ok bool) {
	switch x := v.(type) {
	case bool:
		if x {
			return 1, 1, true, true
		}
		return 0, 0, true, true
	case int64:
		return float64(x), x, true, true
	case float64:
		return x, 0, false, true
	}
	return 0, 0, false, false
}

// equal is Python's ==.
func equal(a, b any) bool {
	if fa, ia, aInt, ok := number(a); ok {
		fb, ib, bInt, ok := number(b)
		if !ok {
			return false
		}
		if aInt && bInt {
			return ia == ib
		}
		return fa == fb
	}
	switch x := a.(type) {
	case nil:
		return b == nil
	case string:
		y, ok := b.(string)
		return ok && x == y
	case []any:
		y, ok := b.([]any)
		return ok && equalSeq(x, y)
	case tuple:
		y, ok := b.(tuple)
		return ok && equalSeq(x, y)
	case *Dict:
		y, ok := b.(*Dict)
		if !ok || x.Len() != y.Len() {
			return false
		}
		for i, k := range x.keys {
			w, ok := y.Get(k)
			if !ok || !equal(x.vals[i], w) {
				return false
			}
		}
		return true
	case undefined:
		_, ok := b.(undefined)
		return ok
	case rangeV:
		y, ok := b.(rangeV)
		return ok && equalSeq(rangeItems(x), rangeItems(y))
	case view:
		y, ok := b.(view)
		return ok && x.kind == y.kind && x.kind != 'v' && equalSet(x.items(), y.items())
	}
	return a == b
}

func rangeItems(r rangeV) []any {
	n := r.len()
	if n > 1<<16 {
		n = 1 << 16 // compared ranges this long are not templates' business
	}
	out := make([]any, n)
	for i := range out {
		out[i] = r.start + int64(i)*r.step
	}
	return out
}

func equalSeq(a, b []any) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !equal(a[i], b[i]) {
			return false
		}
	}
	return true
}

func equalSet(a, b []any) bool {
	if len(a) != len(b) {
		return false
	}
	for _, x := range a {
		found := false
		for _, y := range b {
			if equal(x, y) {
				found = true
				break
			}
		}
		if !found {
			return false
		}
	}
	return true
}

// less is Python's a < b; the error is Python's TypeError for types that
// do not order.
func less(a, b any) (bool, error) {
	if fa, ia, aInt, ok := number(a); ok {
		if fb, ib, bInt, ok := number(b); ok {
			if aInt && bInt {
				return ia < ib, nil
			}
			return fa < fb, nil
		}
	}
	switch x := a.(type) {
	case string:
		if y, ok := b.(string); ok {
			return x < y, nil
		}
	case []any:
		if y, ok := b.([]any); ok {
			return lessSeq(x, y)
		}
	case tuple:
		if y, ok := b.(tuple); ok {
			return lessSeq(x, y)
		}
	}
	return false, fmt.Errorf("'<' not supported between instances of '%s' and '%s'", typeName(a), typeName(b))
}

func lessSeq(a, b []any) (bool, error) {
	for i := 0; i < len(a) && i < len(b); i++ {
		if !equal(a[i], b[i]) {
			return less(a[i], b[i])
		}
	}
	return len(a) < len(b), nil
}

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
