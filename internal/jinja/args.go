package jinja

import (
	"slices"

	"github.com/earlyinit/earlyinit/internal/jinja/parse"
)

// callArgs are a call's evaluated arguments.
type callArgs struct {
	r    *renderer
	line int
	what string
	pos  []any
	kw   []kwVal
}

type kwVal struct {
	name string
	v    any
}

func (r *renderer) args(e *parse.Expr, f *frame) (*callArgs, error) {
	a := &callArgs{r: r, line: e.Line}
	for _, x := range e.List {
		v, err := r.eval(x, f)
		if err != nil {
			return nil, err
		}
		a.pos = append(a.pos, v)
	}
	for _, k := range e.Kw {
		v, err := r.eval(k.E, f)
		if err != nil {
			return nil, err
		}
		a.kw = append(a.kw, kwVal{k.Name, v})
	}
	return a, nil
}

// bind matches the arguments with the parameters names (defaults defs),
// as Python does.
func (a *callArgs) bind(names []string, defs ...any) ([]any, error) {
	if len(a.pos) > len(names) {
		return nil, errorf(a.line, "%s takes at most %d arguments (%d given)", a.what, len(names), len(a.pos))
	}
	out := make([]any, len(names))
	copy(out, defs)
	copy(out, a.pos)
	for _, k := range a.kw {
		i := slices.Index(names, k.name)
		switch {
		case i < 0:
			return nil, errorf(a.line, "%s got an unexpected keyword argument '%s'", a.what, k.name)
		case i < len(a.pos):
			return nil, errorf(a.line, "%s got multiple values for argument '%s'", a.what, k.name)
		}
		out[i] = k.v
	}
	return out, nil
}

// none is bind for a call without parameters.
func (a *callArgs) none() error {
	_, err := a.bind(nil)
	return err
}

func (a *callArgs) intArg(v any, name string) (int64, error) {
	if i, ok := index(v); ok {
		return i, nil
	}
	if u, ok := v.(undefined); ok {
		return 0, errorf(a.line, "%s", u.message())
	}
	return 0, errorf(a.line, "%s: '%s' must be an integer, not %s", a.what, name, typeName(v))
}

func (a *callArgs) strArg(v any, name string) (string, error) {
	if s, ok := v.(string); ok {
		return s, nil
	}
	return "", errorf(a.line, "%s: '%s' must be a string, not %s", a.what, name, typeName(v))
}

func (a *callArgs) rangeCall() (any, error) {
	a.what = "range()"
	if len(a.kw) > 0 {
		return nil, errorf(a.line, "range() takes no keyword arguments")
	}
	var n [3]int64
	for i, v := range a.pos {
		if i >= 3 {
			return nil, errorf(a.line, "range expected at most 3 arguments, got %d", len(a.pos))
		}
		x, ok := index(v)
		if !ok {
			return nil, errorf(a.line, "'%s' object cannot be interpreted as an integer", typeName(v))
		}
		n[i] = x
	}
	switch len(a.pos) {
	case 0:
		return nil, errorf(a.line, "range expected at least 1 argument, got 0")
	case 1:
		return rangeV{0, n[0], 1}, nil
	case 2:
		return rangeV{n[0], n[1], 1}, nil
	}
	if n[2] == 0 {
		return nil, errorf(a.line, "range() arg 3 must not be zero")
	}
	return rangeV{n[0], n[1], n[2]}, nil
}

// one is the argument of a test that takes one: other.
func (a *callArgs) one() (any, error) {
	p, err := a.bind([]string{"other"}, nil)
	if err != nil {
		return nil, err
	}
	if len(a.pos)+len(a.kw) == 0 {
		return nil, errorf(a.line, "%s wants one argument", a.what)
	}
	return p[0], nil
}
