package jinja

import (
	"math"
	"strings"

	"github.com/earlyinit/earlyinit/internal/jinja/pynum"
)

func errOverflow(line int) error {
	return errorf(line, "%v", pynum.ErrOverflow)
}

// compare is one comparison of a chain.
func (r *renderer) compare(line int, op string, a, b any) (bool, error) {
	switch op {
	case "==":
		return equal(a, b), nil
	case "!=":
		return !equal(a, b), nil
	case "in", "not in":
		in, err := r.contains(line, b, a)
		return in == (op == "in"), err
	}
	for _, v := range [2]any{a, b} {
		if u, ok := v.(undefined); ok {
			return false, errorf(line, "%s", u.message())
		}
	}
	x, y := a, b
	if op == ">" || op == ">=" {
		x, y = b, a
	}
	lt, err := less(x, y)
	if err != nil {
		return false, errorf(line, "'%s' not supported between instances of '%s' and '%s'", op, typeName(a), typeName(b))
	}
	if op == "<=" || op == ">=" {
		return lt || equal(x, y), nil
	}
	return lt, nil
}

// contains is Python's x in c.
func (r *renderer) contains(line int, c, x any) (bool, error) {
	switch cc := c.(type) {
	case string:
		s, ok := x.(string)
		if !ok {
			return false, errorf(line, "'in <string>' requires string as left operand, not %s", typeName(x))
		}
		return strings.Contains(cc, s), r.step(line, len(cc)/64)
	case *Dict:
		if _, ok := hashKey(x); !ok {
			return false, errorf(line, "unhashable type: '%s'", typeName(x))
		}
		_, ok := cc.Get(x)
		return ok, nil
	case view:
		switch cc.kind {
		case 'k':
			return r.contains(line, cc.d, x)
		case 'i':
			t, ok := x.(tuple)
			if !ok || len(t) != 2 {
				return false, nil
			}
			v, ok := cc.d.Get(t[0])
			return ok && equal(v, t[1]), nil
		}
	case rangeV:
		f, i, isInt, ok := number(x)
		if !ok || !isInt && f != math.Trunc(f) {
			return false, nil
		}
		if !isInt {
			i = int64(f)
		}
		n := cc.len()
		if n == 0 || (i-cc.start)%cc.step != 0 {
			return false, nil
		}
		k := (i - cc.start) / cc.step
		return k >= 0 && k < n, nil
	case nil, bool, int64, float64, method, loopV:
		return false, errorf(line, "argument of type '%s' is not iterable", typeName(c))
	}
	items, err := r.iterate(line, c)
	if err != nil {
		return false, err
	}
	for _, it := range items {
		if equal(it, x) {
			return true, nil
		}
	}
	return false, nil
}

// binop is a b with one of + - * / // % **.
func (r *renderer) binop(line int, op string, a, b any) (any, error) {
	if err := undefinedOperand(line, op, a, b); err != nil {
		return nil, err
	}
	fa, ia, aInt, aNum := number(a)
	fb, ib, bInt, bNum := number(b)
	if aNum && bNum {
		v, err := pynum.Op(op, pynum.Num{F: fa, I: ia, Int: aInt}, pynum.Num{F: fb, I: ib, Int: bInt})
		if err != nil {
			return nil, errorf(line, "%v", err)
		}
		return v, nil
	}
	switch op {
	case "+":
		if v, ok, err := r.concat(line, a, b); ok || err != nil {
			return v, err
		}
	case "*":
		seq, n := a, ib
		if aInt && aNum {
			seq, n = b, ia
		} else if !(bInt && bNum) {
			break
		}
		if v, ok, err := r.repeat(line, seq, n); ok || err != nil {
			return v, err
		}
	case "%":
		if _, ok := a.(string); ok {
			return nil, errorf(line, "%%-formatting of strings is not supported by earlyinit's Jinja")
		}
	}
	return nil, errorf(line, "unsupported operand type(s) for %s: '%s' and '%s'", op, typeName(a), typeName(b))
}

// undefinedOperand is the error of an operator with an undefined
// operand, nil when neither is.
func undefinedOperand(line int, op string, a, b any) error {
	if u, ok := a.(undefined); ok {
		if op == "-" {
			// cloud-init's UndefinedJinjaVariable.__sub__: the hint for
			// {{ local-hostname }}. Only a name is shown, never a value.
			other := "<" + typeName(b) + ">"
			if ub, ok := b.(undefined); ok {
				other = ub.name
			}
			return errorf(line, "Undefined jinja variable: \"%s-%s\". Jinja tried subtraction. Perhaps you meant \"%s_%s\"?", u.name, other, u.name, other)
		}
		return errorf(line, "%s", u.message())
	}
	if u, ok := b.(undefined); ok {
		return errorf(line, "%s", u.message())
	}
	return nil
}

// concat is a + b of two strings, lists or tuples; ok is false for other
// operands.
func (r *renderer) concat(line int, a, b any) (v any, ok bool, err error) {
	switch x := a.(type) {
	case string:
		if y, ok := b.(string); ok {
			return x + y, true, r.charge(line, len(x)+len(y))
		}
	case []any:
		if y, ok := b.([]any); ok {
			if err := r.charge(line, 16*(len(x)+len(y))); err != nil {
				return nil, true, err
			}
			return append(append([]any{}, x...), y...), true, nil
		}
	case tuple:
		if y, ok := b.(tuple); ok {
			if err := r.charge(line, 16*(len(x)+len(y))); err != nil {
				return nil, true, err
			}
			return append(append(tuple{}, x...), y...), true, nil
		}
	}
	return nil, false, nil
}

// repeat is seq * n of a string, list or tuple; ok is false for another
// seq.
func (r *renderer) repeat(line int, seq any, n int64) (v any, ok bool, err error) {
	if n < 0 {
		n = 0
	}
	switch x := seq.(type) {
	case string:
		if n > 0 && int64(len(x)) > int64(r.lim.Output)/n {
			return nil, true, limitf(line, "a value longer than %d bytes", r.lim.Output)
		}
		if err := r.charge(line, len(x)*int(n)); err != nil {
			return nil, true, err
		}
		return strings.Repeat(x, int(n)), true, nil
	case []any, tuple:
		items, _ := x.([]any)
		if t, ok := x.(tuple); ok {
			items = t
		}
		if n > 0 && int64(len(items)) > int64(r.lim.Output/16)/n {
			return nil, true, limitf(line, "a list longer than %d items", r.lim.Output/16)
		}
		if err := r.charge(line, 16*len(items)*int(n)); err != nil {
			return nil, true, err
		}
		out := make([]any, 0, len(items)*int(n))
		for range n {
			out = append(out, items...)
		}
		if _, ok := x.(tuple); ok {
			return tuple(out), true, nil
		}
		return out, true, nil
	}
	return nil, false, nil
}
