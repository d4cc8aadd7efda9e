package jinja

import (
	"errors"
	"fmt"
	"strings"

	"github.com/earlyinit/earlyinit/internal/jinja/parse"
)

// objectTypeRepr is Jinja's object_type_repr, for undefined's messages.
func objectTypeRepr(v any) string {
	if v == nil {
		return "None"
	}
	return typeName(v) + " object"
}

// pyAttrs are the attributes Python's types have that are not items:
// their methods and properties. Those earlyinit supports are the methods
// callMethod knows; the others are refused, as Jinja would return them
// (not the dict's item of that name).
func pyAttrs(v any) string {
	switch v.(type) {
	case *Dict:
		return " clear copy fromkeys get items keys pop popitem setdefault update values "
	case string:
		return " capitalize casefold center count encode endswith expandtabs find format format_map index isalnum isalpha isascii isdecimal isdigit isidentifier islower isnumeric isprintable isspace istitle isupper join ljust lower lstrip maketrans partition removeprefix removesuffix replace rfind rindex rjust rpartition rsplit rstrip split splitlines startswith strip swapcase title translate upper zfill "
	case []any:
		return " append clear copy count extend index insert pop remove reverse sort "
	case tuple:
		return " count index "
	case bool, int64:
		return " as_integer_ratio bit_count bit_length conjugate denominator from_bytes imag numerator real to_bytes "
	case float64:
		return " as_integer_ratio conjugate fromhex hex imag is_integer real "
	case view:
		return " isdisjoint mapping "
	case rangeV:
		return " count index start step stop "
	}
	return ""
}

func supportedMethod(v any, name string) bool {
	switch v.(type) {
	case *Dict:
		switch name {
		case "items", "keys", "values", "get":
			return true
		}
	case string:
		switch name {
		case "lower", "upper", "strip", "lstrip", "rstrip", "split", "startswith", "endswith", "replace":
			return true
		}
	}
	return false
}

// pyAttr is getattr(obj, name) for the Python attributes of obj: found
// is false when obj has no such attribute.
func (r *renderer) pyAttr(line int, obj any, name string) (v any, found bool, err error) {
	if len(name) > 4 && strings.HasPrefix(name, "__") && strings.HasSuffix(name, "__") {
		return nil, false, errorf(line, "attribute '%s': Python internals are not reachable from earlyinit's Jinja", name)
	}
	if !strings.Contains(pyAttrs(obj), " "+name+" ") {
		return nil, false, nil
	}
	if supportedMethod(obj, name) {
		return method{recv: obj, name: name}, true, nil
	}
	return nil, false, errorf(line, "the %s attribute '%s' is not supported by earlyinit's Jinja", typeName(obj), name)
}

// getattr is Jinja's environment.getattr: the Python attribute, else the
// item, else undefined.
func (r *renderer) getattr(line int, obj any, name string) (any, error) {
	if u, ok := obj.(undefined); ok {
		return nil, errorf(line, "%s", u.message())
	}
	if v, found, err := r.pyAttr(line, obj, name); found || err != nil {
		return v, err
	}
	switch x := obj.(type) {
	case *Dict:
		if v, ok := x.Get(name); ok {
			return v, nil
		}
	case loopV:
		switch name {
		case "index":
			return int64(x.index + 1), nil
		case "index0":
			return int64(x.index), nil
		case "revindex":
			return int64(x.length - x.index), nil
		case "revindex0":
			return int64(x.length - x.index - 1), nil
		case "first":
			return x.index == 0, nil
		case "last":
			return x.index == x.length-1, nil
		case "length":
			return int64(x.length), nil
		case "previtem", "nextitem", "cycle", "changed", "depth", "depth0":
			return nil, errorf(line, "loop.%s is not supported by earlyinit's Jinja", name)
		}
	}
	return undefined{name: name, hint: fmt.Sprintf("'%s' has no attribute '%s'", objectTypeRepr(obj), name)}, nil
}

// index is a sequence index as Python takes it (bool and int), and
// whether it is one.
func index(k any) (int64, bool) {
	switch x := k.(type) {
	case int64:
		return x, true
	case bool:
		if x {
			return 1, true
		}
		return 0, true
	}
	return 0, false
}

// getitem is Jinja's environment.getitem: the item, else (for a string
// key) the Python attribute, else undefined.
func (r *renderer) getitem(line int, obj, key any) (any, error) {
	if u, ok := obj.(undefined); ok {
		return nil, errorf(line, "%s", u.message())
	}
	switch x := obj.(type) {
	case *Dict:
		if v, ok := x.Get(key); ok {
			return v, nil
		}
	case []any, tuple, string, rangeV:
		if i, ok := index(key); ok {
			if v, ok := r.seqIndex(line, x, i); ok {
				return v, nil
			}
		}
	}
	if s, ok := key.(string); ok {
		if v, found, err := r.pyAttr(line, obj, s); found || err != nil {
			return v, err
		}
	}
	name, err := r.str(line, key)
	if err != nil {
		return nil, err
	}
	hint := fmt.Sprintf("%s has no element %s", objectTypeRepr(obj), name)
	if _, ok := key.(string); ok {
		hint = fmt.Sprintf("'%s' has no attribute '%s'", objectTypeRepr(obj), name)
	}
	return undefined{name: name, hint: hint}, nil
}

// seqIndex is seq[i], Python's negative indices included.
func (r *renderer) seqIndex(line int, seq any, i int64) (any, bool) {
	switch x := seq.(type) {
	case []any:
		return at(x, i)
	case tuple:
		return at(x, i)
	case string:
		rs := []rune(x)
		r.step(line, len(rs)/64)
		n := int64(len(rs))
		if i < 0 {
			i += n
		}
		if i < 0 || i >= n {
			return nil, false
		}
		return string(rs[i]), true
	case rangeV:
		n := x.len()
		if i < 0 {
			i += n
		}
		if i < 0 || i >= n {
			return nil, false
		}
		return x.start + i*x.step, true
	}
	return nil, false
}

func at(items []any, i int64) (any, bool) {
	n := int64(len(items))
	if i < 0 {
		i += n
	}
	if i < 0 || i >= n {
		return nil, false
	}
	return items[i], true
}

// slice is obj[start:stop:step] on a list, tuple or string.
func (r *renderer) slice(e *parse.Expr, obj any, f *frame) (any, error) {
	if u, ok := obj.(undefined); ok {
		return nil, errorf(e.Line, "%s", u.message())
	}
	bounds, err := r.sliceBounds(e, f)
	if err != nil {
		return nil, err
	}
	var items []any
	var runes []rune
	switch x := obj.(type) {
	case []any:
		items = x
	case tuple:
		items = x
	case string:
		runes = []rune(x)
	default:
		return nil, errorf(e.Line, "a %s cannot be sliced by earlyinit's Jinja", typeName(obj))
	}
	idx, err := sliceIndices(bounds, int64(len(items)+len(runes)))
	if err != nil {
		return nil, errorf(e.Line, "%v", err)
	}
	if err := r.step(e.Line, len(idx)); err != nil {
		return nil, err
	}
	if runes != nil || obj == "" {
		var b strings.Builder
		for _, i := range idx {
			b.WriteRune(runes[i])
		}
		return b.String(), nil
	}
	out := make([]any, len(idx))
	for j, i := range idx {
		out[j] = items[i]
	}
	if _, ok := obj.(tuple); ok {
		return tuple(out), nil
	}
	return out, nil
}

// sliceBounds are the start, stop and step of a slice, nil when left out
// or None.
func (r *renderer) sliceBounds(e *parse.Expr, f *frame) ([3]*int64, error) {
	var bounds [3]*int64
	for i, x := range e.B.List {
		if x == nil {
			continue
		}
		v, err := r.eval(x, f)
		if err != nil {
			return bounds, err
		}
		if v == nil {
			continue
		}
		n, ok := index(v)
		if !ok {
			return bounds, errorf(e.Line, "slice indices must be integers or None")
		}
		bounds[i] = &n
	}
	return bounds, nil
}

// sliceIndices are the indices a slice with bounds takes of n items, as
// Python's slice.indices.
func sliceIndices(bounds [3]*int64, n int64) ([]int64, error) {
	step := int64(1)
	if bounds[2] != nil {
		step = *bounds[2]
	}
	if step == 0 {
		return nil, errors.New("slice step cannot be zero")
	}
	adjust := func(b *int64, def int64) int64 {
		if b == nil {
			return def
		}
		v := *b
		if v < 0 {
			v += n
			if v < 0 {
				if step < 0 {
					return -1
				}
				return 0
			}
		} else if v >= n {
			if step < 0 {
				return n - 1
			}
			return n
		}
		return v
	}
	var start, stop int64
	if step > 0 {
		start, stop = adjust(bounds[0], 0), adjust(bounds[1], n)
	} else {
		start, stop = adjust(bounds[0], n-1), adjust(bounds[1], -1)
	}
	var idx []int64
	for i := start; step > 0 && i < stop || step < 0 && i > stop; i += step {
		idx = append(idx, i)
	}
	return idx, nil
}
