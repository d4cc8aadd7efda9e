package jinja

import (
	"unicode"

	"github.com/earlyinit/earlyinit/internal/jinja/parse"
)

// test is a test: v is name(args).
func (r *renderer) test(e *parse.Expr, f *frame) (any, error) {
	v, err := r.eval(e.A, f)
	if err != nil {
		return nil, err
	}
	a, err := r.args(e, f)
	if err != nil {
		return nil, err
	}
	a.what = "test '" + e.Name + "'"
	line := e.Line
	switch e.Name {
	case "defined", "undefined", "none", "boolean", "false", "true", "integer", "float", "number", "string", "mapping", "iterable", "sequence", "lower", "upper", "even", "odd":
		if err := a.none(); err != nil {
			return nil, err
		}
	}
	if ok, found := typeTest(e.Name, v); found {
		return ok, nil
	}
	switch e.Name {
	case "lower", "upper":
		return r.caseTest(line, e.Name, v)
	case "even", "odd", "divisibleby":
		d := any(int64(2))
		if e.Name == "divisibleby" {
			if d, err = a.one(); err != nil {
				return nil, err
			}
		}
		m, err := r.binop(line, "%", v, d)
		if err != nil {
			return nil, err
		}
		if e.Name == "odd" {
			return equal(m, int64(1)), nil
		}
		return equal(m, int64(0)), nil
	case "eq", "equalto", "ne", "lt", "lessthan", "le", "gt", "greaterthan", "ge", "in":
		o, err := a.one()
		if err != nil {
			return nil, err
		}
		op := map[string]string{"eq": "==", "equalto": "==", "ne": "!=", "lt": "<", "lessthan": "<", "le": "<=",
			"gt": ">", "greaterthan": ">", "ge": ">=", "in": "in"}[e.Name]
		return r.compare(line, op, v, o)
	}
	return nil, errorf(line, "no test named '%s'", e.Name)
}

// typeTest is the tests of what v is, found false for another test.
func typeTest(name string, v any) (ok, found bool) {
	switch name {
	case "defined", "undefined":
		_, u := v.(undefined)
		return u == (name == "undefined"), true
	case "none":
		return v == nil, true
	case "boolean":
		_, ok := v.(bool)
		return ok, true
	case "false", "true":
		b, ok := v.(bool)
		return ok && b == (name == "true"), true
	case "integer":
		_, ok := v.(int64)
		return ok, true
	case "float":
		_, ok := v.(float64)
		return ok, true
	case "number":
		_, _, _, ok := number(v)
		return ok, true
	case "string":
		_, ok := v.(string)
		return ok, true
	case "mapping":
		_, ok := v.(*Dict)
		return ok, true
	case "iterable":
		switch v.(type) {
		case []any, tuple, string, *Dict, view, rangeV, *iterV, undefined:
			return true, true
		}
		return false, true
	case "sequence":
		switch v.(type) {
		case []any, tuple, string, *Dict, rangeV, undefined:
			return true, true
		}
		return false, true
	}
	return false, false
}

// caseTest is the tests lower and upper (name) of str(v).
func (r *renderer) caseTest(line int, name string, v any) (any, error) {
	s, err := r.str(line, v)
	if err != nil {
		return nil, err
	}
	lower, upper, title := false, false, false
	for _, c := range s {
		lower = lower || unicode.IsLower(c)
		upper = upper || unicode.IsUpper(c)
		title = title || unicode.IsTitle(c)
	}
	if name == "lower" {
		return lower && !upper && !title, nil
	}
	return upper && !lower && !title, nil
}
