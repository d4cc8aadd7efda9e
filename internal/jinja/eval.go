package jinja

import (
	"math"
	"strings"

	"github.com/earlyinit/earlyinit/internal/jinja/parse"
)

// eval is the value of e in f, one evaluation step.
func (r *renderer) eval(e *parse.Expr, f *frame) (any, error) {
	if err := r.step(e.Line, 1); err != nil {
		return nil, err
	}
	switch e.Op {
	case parse.OpConst:
		return e.V, nil
	case parse.OpName:
		return r.evalName(e, f), nil
	case parse.OpGetattr:
		obj, err := r.eval(e.A, f)
		if err != nil {
			return nil, err
		}
		return r.getattr(e.Line, obj, e.Name)
	case parse.OpGetitem:
		return r.evalGetitem(e, f)
	case parse.OpList, parse.OpTuple:
		return r.evalList(e, f)
	case parse.OpDict:
		return r.evalDict(e, f)
	case parse.OpCall:
		return r.call(e, f)
	case parse.OpFilter:
		return r.filter(e, f)
	case parse.OpTest:
		return r.test(e, f)
	case parse.OpNot, parse.OpNeg, parse.OpPos:
		v, err := r.eval(e.A, f)
		if err != nil {
			return nil, err
		}
		if e.Op == parse.OpNot {
			return !truth(v), nil
		}
		return r.unary(e, v)
	case parse.OpAnd, parse.OpOr, parse.OpCond:
		return r.evalLogic(e, f)
	case parse.OpBin:
		a, err := r.eval(e.A, f)
		if err != nil {
			return nil, err
		}
		b, err := r.eval(e.B, f)
		if err != nil {
			return nil, err
		}
		return r.binop(e.Line, e.Name, a, b)
	case parse.OpConcat:
		return r.evalConcat(e, f)
	case parse.OpCompare:
		return r.evalCompare(e, f)
	}
	return nil, errorf(e.Line, "unexpected expression")
}

// evalName is the value of a name: the template's, else the variables', else
// one of Jinja's globals, else undefined.
func (r *renderer) evalName(e *parse.Expr, f *frame) any {
	if v, ok := f.lookup(e.Name); ok {
		return v
	}
	if r.vars != nil {
		if v, ok := r.vars.Get(e.Name); ok {
			return v
		}
	}
	switch e.Name {
	case "range", "dict", "lipsum", "cycler", "joiner", "namespace":
		return method{name: e.Name}
	}
	return undefined{name: e.Name}
}

// evalGetitem is a[b], or a slice of a.
func (r *renderer) evalGetitem(e *parse.Expr, f *frame) (any, error) {
	obj, err := r.eval(e.A, f)
	if err != nil {
		return nil, err
	}
	if e.B.Op == parse.OpSliceArg {
		return r.slice(e, obj, f)
	}
	k, err := r.eval(e.B, f)
	if err != nil {
		return nil, err
	}
	return r.getitem(e.Line, obj, k)
}

// evalList is a list or tuple display.
func (r *renderer) evalList(e *parse.Expr, f *frame) (any, error) {
	items := make([]any, len(e.List))
	for i, x := range e.List {
		v, err := r.eval(x, f)
		if err != nil {
			return nil, err
		}
		items[i] = v
	}
	if e.Op == parse.OpTuple {
		return tuple(items), nil
	}
	return items, nil
}

// evalDict is a dict display.
func (r *renderer) evalDict(e *parse.Expr, f *frame) (any, error) {
	d := NewDict()
	for i := 0; i+1 < len(e.List); i += 2 {
		k, err := r.eval(e.List[i], f)
		if err != nil {
			return nil, err
		}
		v, err := r.eval(e.List[i+1], f)
		if err != nil {
			return nil, err
		}
		if _, ok := hashKey(k); !ok {
			return nil, errorf(e.Line, "unhashable type: '%s'", typeName(k))
		}
		d.Set(k, v)
	}
	return d, nil
}

// evalLogic is and, or and the if-expression, which evaluate only the
// operands they need.
func (r *renderer) evalLogic(e *parse.Expr, f *frame) (any, error) {
	l, err := r.eval(e.A, f)
	if err != nil {
		return nil, err
	}
	switch {
	case e.Op != parse.OpCond && truth(l) == (e.Op == parse.OpOr):
		return l, nil
	case e.Op != parse.OpCond:
		return r.eval(e.B, f)
	case truth(l):
		return r.eval(e.B, f)
	case e.C != nil:
		return r.eval(e.C, f)
	}
	return undefined{name: "None", plain: true, hint: "the inline if-expression evaluated to false and no else section was defined"}, nil
}

// evalConcat is operands joined with ~.
func (r *renderer) evalConcat(e *parse.Expr, f *frame) (any, error) {
	var b strings.Builder
	for _, x := range e.List {
		v, err := r.eval(x, f)
		if err != nil {
			return nil, err
		}
		s, err := r.str(e.Line, v)
		if err != nil {
			return nil, err
		}
		b.WriteString(s)
	}
	return b.String(), r.charge(e.Line, b.Len())
}

// evalCompare is a chain of comparisons, which stops at the first false.
func (r *renderer) evalCompare(e *parse.Expr, f *frame) (any, error) {
	left, err := r.eval(e.A, f)
	if err != nil {
		return nil, err
	}
	for i, op := range e.Ops {
		right, err := r.eval(e.List[i], f)
		if err != nil {
			return nil, err
		}
		ok, err := r.compare(e.Line, op, left, right)
		if err != nil {
			return nil, err
		}
		if !ok {
			return false, nil
		}
		left = right
	}
	return true, nil
}

func (r *renderer) unary(e *parse.Expr, v any) (any, error) {
	if u, ok := v.(undefined); ok {
		return nil, errorf(e.Line, "%s", u.message())
	}
	f, i, isInt, ok := number(v)
	if !ok {
		op := "-"
		if e.Op == parse.OpPos {
			op = "+"
		}
		return nil, errorf(e.Line, "bad operand type for unary %s: '%s'", op, typeName(v))
	}
	switch {
	case e.Op == parse.OpPos && isInt:
		return i, nil
	case e.Op == parse.OpPos:
		return f, nil
	case isInt && i == math.MinInt64:
		return nil, errOverflow(e.Line)
	case isInt:
		return -i, nil
	}
	return -f, nil
}

// call is a call: range() or a supported method.
func (r *renderer) call(e *parse.Expr, f *frame) (any, error) {
	callee, err := r.eval(e.A, f)
	if err != nil {
		return nil, err
	}
	a, err := r.args(e, f)
	if err != nil {
		return nil, err
	}
	switch c := callee.(type) {
	case undefined:
		return nil, errorf(e.Line, "%s", c.message())
	case method:
		if c.recv == nil {
			if c.name == "range" {
				return a.rangeCall()
			}
			return nil, errorf(e.Line, "the function '%s' is not supported by earlyinit's Jinja (it has range)", c.name)
		}
		return r.callMethod(a, c)
	}
	return nil, errorf(e.Line, "'%s' object is not callable", typeName(callee))
}
