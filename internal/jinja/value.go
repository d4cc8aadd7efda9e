package jinja

import (
	"fmt"
	"math"
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
