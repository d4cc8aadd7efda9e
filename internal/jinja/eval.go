package jinja

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"unicode/utf8"

	"github.com/earlyinit/earlyinit/internal/jinja/parse"
	"github.com/earlyinit/earlyinit/internal/jinja/pynum"
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
