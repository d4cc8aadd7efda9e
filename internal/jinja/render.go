package jinja

import (
	"strings"
	"unicode/utf8"

	"github.com/earlyinit/earlyinit/internal/jinja/parse"
)

// frame holds the names a template set: the template's own, then one per
// loop iteration and {% set %} block, as Jinja scopes them.
type frame struct {
	vars   map[string]any
	parent *frame
}

func (f *frame) lookup(name string) (any, bool) {
	for x := f; x != nil; x = x.parent {
		if v, ok := x.vars[name]; ok {
			return v, true
		}
	}
	return nil, false
}

type renderer struct {
	lim   Limits
	vars  *Dict
	out   strings.Builder
	steps int
	iters int
	alloc int
	// missing are the names of the undefined values printed.
	missing []string
}

// step charges n evaluation steps.
func (r *renderer) step(line, n int) error {
	r.steps += n
	if r.steps > r.lim.Steps {
		return limitf(line, "more than %d evaluation steps", r.lim.Steps)
	}
	return nil
}

// charge charges n bytes made (a string or list of that size).
func (r *renderer) charge(line, n int) error {
	if n > r.lim.Output {
		return limitf(line, "a value longer than %d bytes", r.lim.Output)
	}
	r.alloc += n
	if r.alloc > r.lim.Alloc {
		return limitf(line, "more than %d bytes of values made", r.lim.Alloc)
	}
	return nil
}

func (r *renderer) write(line int, s string) error {
	if r.out.Len()+len(s) > r.lim.Output {
		return limitf(line, "more than %d bytes of output", r.lim.Output)
	}
	r.out.WriteString(s)
	return nil
}

// str is Python's str(v), charged.
func (r *renderer) str(line int, v any) (string, error) {
	if s, ok := v.(string); ok {
		return s, nil
	}
	p := printer{r: r, line: line}
	if err := p.str(v); err != nil {
		return "", err
	}
	s := p.b.String()
	return s, r.charge(line, len(s))
}

func (r *renderer) block(body []parse.Node, f *frame) error {
	for _, n := range body {
		var err error
		switch x := n.(type) {
		case parse.Text:
			err = r.write(0, x.S)
		case parse.Print:
			var v any
			if v, err = r.eval(x.E, f); err == nil {
				var s string
				if s, err = r.str(x.Line, v); err == nil {
					err = r.write(x.Line, s)
				}
			}
		case parse.If:
			err = r.ifBlock(x, f)
		case parse.For:
			err = r.forLoop(x, f)
		case parse.Set:
			err = r.set(x, f)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

func (r *renderer) ifBlock(n parse.If, f *frame) error {
	for i, t := range n.Tests {
		v, err := r.eval(t, f)
		if err != nil {
			return err
		}
		if truth(v) {
			return r.block(n.Bodies[i], f)
		}
	}
	return r.block(n.Els, f)
}

func (r *renderer) forLoop(n parse.For, f *frame) error {
	it, err := r.eval(n.Iter, f)
	if err != nil {
		return err
	}
	if rg, ok := it.(rangeV); ok && rg.len() > int64(r.lim.Iterations-r.iters) {
		return limitf(n.Line, "more than %d loop iterations", r.lim.Iterations)
	}
	items, err := r.iterate(n.Line, it)
	if err != nil {
		return err
	}
	if n.Cond != nil {
		var kept []any
		for _, item := range items {
			fr := &frame{vars: map[string]any{}, parent: f}
			if err := r.assign(n.Line, fr, n.Targets, n.Unpack, item); err != nil {
				return err
			}
			c, err := r.eval(n.Cond, fr)
			if err != nil {
				return err
			}
			if truth(c) {
				kept = append(kept, item)
			}
		}
		items = kept
	}
	if len(items) == 0 {
		return r.block(n.Els, &frame{vars: map[string]any{}, parent: f})
	}
	for i, item := range items {
		r.iters++
		if r.iters > r.lim.Iterations {
			return limitf(n.Line, "more than %d loop iterations", r.lim.Iterations)
		}
		fr := &frame{vars: map[string]any{"loop": loopV{index: i, length: len(items)}}, parent: f}
		if err := r.assign(n.Line, fr, n.Targets, n.Unpack, item); err != nil {
			return err
		}
		if err := r.block(n.Body, fr); err != nil {
			return err
		}
	}
	return nil
}

// assign binds targets in f to v, unpacking it when unpack is set.
func (r *renderer) assign(line int, f *frame, targets []string, unpack bool, v any) error {
	if !unpack {
		f.vars[targets[0]] = v
		return nil
	}
	items, err := r.iterate(line, v)
	if err != nil {
		return errorf(line, "cannot unpack a non-iterable %s", typeName(v))
	}
	switch {
	case len(items) < len(targets):
		return errorf(line, "not enough values to unpack (expected %d, got %d)", len(targets), len(items))
	case len(items) > len(targets):
		return errorf(line, "too many values to unpack (expected %d)", len(targets))
	}
	for i, t := range targets {
		f.vars[t] = items[i]
	}
	return nil
}

func (r *renderer) set(n parse.Set, f *frame) error {
	if !n.Block {
		v, err := r.eval(n.E, f)
		if err != nil {
			return err
		}
		return r.assign(n.Line, f, n.Targets, n.Unpack, v)
	}
	saved := r.out
	r.out = strings.Builder{}
	err := r.block(n.Body, &frame{vars: map[string]any{}, parent: f})
	s := r.out.String()
	r.out = saved
	if err != nil {
		return err
	}
	if err := r.charge(n.Line, len(s)); err != nil {
		return err
	}
	f.vars[n.Targets[0]] = s
	return nil
}

// iterate is Python's list(iter(v)), charged.
func (r *renderer) iterate(line int, v any) ([]any, error) {
	var items []any
	switch x := v.(type) {
	case []any:
		items = x
	case tuple:
		items = x
	case string:
		if err := r.charge(line, 16*utf8.RuneCountInString(x)); err != nil {
			return nil, err
		}
		for _, c := range x {
			items = append(items, string(c))
		}
	case *Dict:
		items = x.keys
	case view:
		items = x.items()
	case rangeV:
		n := x.len()
		if n > int64(r.lim.Alloc/16) {
			return nil, limitf(line, "a range of %d items", n)
		}
		if err := r.charge(line, 16*int(n)); err != nil {
			return nil, err
		}
		items = make([]any, n)
		for i := range items {
			items[i] = x.start + int64(i)*x.step
		}
	case *iterV:
		items = x.items[x.pos:]
		x.pos = len(x.items)
	case undefined:
		return nil, nil
	default:
		return nil, errorf(line, "'%s' object is not iterable", typeName(v))
	}
	return items, r.step(line, len(items))
}
