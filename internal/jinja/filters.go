package jinja

import (
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/earlyinit/earlyinit/internal/jinja/parse"
	"github.com/earlyinit/earlyinit/internal/jinja/pynum"
	"github.com/earlyinit/earlyinit/internal/jinja/pystr"
)

// FilterNames and TestNames list the filters and tests supported.
func FilterNames() []string { return parse.FilterNames() }
func TestNames() []string   { return parse.TestNames() }

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

// callMethod calls one of the supported methods of a dict or a string.
func (r *renderer) callMethod(a *callArgs, m method) (any, error) {
	a.what = typeName(m.recv) + "." + m.name + "()"
	if d, ok := m.recv.(*Dict); ok {
		return a.dictMethod(d, m.name)
	}
	s := m.recv.(string)
	switch m.name {
	case "lower", "upper":
		if err := a.none(); err != nil {
			return nil, err
		}
		if m.name == "lower" {
			return pystr.Lower(s), r.charge(a.line, len(s))
		}
		return pystr.Upper(s), r.charge(a.line, 3*len(s))
	case "strip", "lstrip", "rstrip":
		if len(a.kw) > 0 {
			return nil, errorf(a.line, "%s takes no keyword arguments", a.what)
		}
		p, err := a.bind([]string{"chars"}, nil)
		if err != nil {
			return nil, err
		}
		return pyStripChars(s, m.name, p[0], a)
	case "split":
		return a.split(s)
	case "startswith", "endswith":
		return a.startsOrEndsWith(s, m.name)
	case "replace":
		if len(a.kw) > 0 {
			return nil, errorf(a.line, "%s takes no keyword arguments", a.what)
		}
		p, err := a.bind([]string{"old", "new", "count"}, nil, nil, int64(-1))
		if err != nil {
			return nil, err
		}
		return pyReplace(a, s, p[0], p[1], p[2], false)
	}
	return nil, errorf(a.line, "%s is not supported by earlyinit's Jinja", a.what)
}

// dictMethod is d.get(key, default), or the view items, keys or values
// (name).
func (a *callArgs) dictMethod(d *Dict, name string) (any, error) {
	if name != "get" {
		if err := a.none(); err != nil {
			return nil, err
		}
		return view{kind: name[0], d: d}, nil
	}
	if len(a.kw) > 0 {
		return nil, errorf(a.line, "get() takes no keyword arguments")
	}
	p, err := a.bind([]string{"key", "default"}, nil, nil)
	if err != nil {
		return nil, err
	}
	if len(a.pos) == 0 {
		return nil, errorf(a.line, "get expected at least 1 argument, got 0")
	}
	if _, ok := hashKey(p[0]); !ok {
		return nil, errorf(a.line, "unhashable type: '%s'", typeName(p[0]))
	}
	if v, ok := d.Get(p[0]); ok {
		return v, nil
	}
	return p[1], nil
}

// split is s.split(sep, maxsplit).
func (a *callArgs) split(s string) (any, error) {
	p, err := a.bind([]string{"sep", "maxsplit"}, nil, int64(-1))
	if err != nil {
		return nil, err
	}
	n, err := a.intArg(p[1], "maxsplit")
	if err != nil {
		return nil, err
	}
	if err := a.r.charge(a.line, 2*len(s)); err != nil {
		return nil, err
	}
	if p[0] == nil {
		return pystr.SplitSpace(s, n), nil
	}
	sep, err := a.strArg(p[0], "sep")
	if err != nil {
		return nil, err
	}
	if sep == "" {
		return nil, errorf(a.line, "empty separator")
	}
	var parts []string
	if n < 0 {
		parts = strings.Split(s, sep)
	} else {
		parts = strings.SplitN(s, sep, int(min(n, int64(len(s))))+1)
	}
	return strList(parts), nil
}

// startsOrEndsWith is s.startswith(prefix) or s.endswith(prefix) (name),
// prefix a string or a tuple of them.
func (a *callArgs) startsOrEndsWith(s, name string) (any, error) {
	if len(a.kw) > 0 {
		return nil, errorf(a.line, "%s takes no keyword arguments", a.what)
	}
	p, err := a.bind([]string{"prefix"}, nil)
	if err != nil {
		return nil, err
	}
	has := strings.HasPrefix
	if name == "endswith" {
		has = strings.HasSuffix
	}
	cands := []any{p[0]}
	if t, ok := p[0].(tuple); ok {
		cands = t
	}
	for _, c := range cands {
		x, ok := c.(string)
		if !ok {
			return nil, errorf(a.line, "%s arg must be str or a tuple of str, not %s", name, typeName(c))
		}
		if has(s, x) {
			return true, nil
		}
	}
	return false, nil
}

func strList(ss []string) []any {
	out := make([]any, len(ss))
	for i, s := range ss {
		out[i] = s
	}
	return out
}

func pyStripChars(s, how string, chars any, a *callArgs) (any, error) {
	if chars == nil {
		switch how {
		case "lstrip":
			return strings.TrimLeftFunc(s, pystr.IsSpace), nil
		case "rstrip":
			return pystr.Rstrip(s), nil
		}
		return pystr.Strip(s), nil
	}
	cs, err := a.strArg(chars, "chars")
	if err != nil {
		return nil, err
	}
	switch how {
	case "lstrip":
		return strings.TrimLeft(s, cs), nil
	case "rstrip":
		return strings.TrimRight(s, cs), nil
	}
	return strings.Trim(s, cs), nil
}

// pyReplace is str(s).replace(str(old), str(new), count); strict asks
// for strings (the method), else they are made strings (the filter).
func pyReplace(a *callArgs, s string, old, nw, count any, toStr bool) (any, error) {
	var o, n string
	var err error
	if toStr {
		if o, err = a.r.str(a.line, old); err == nil {
			n, err = a.r.str(a.line, nw)
		}
	} else if o, err = a.strArg(old, "old"); err == nil {
		n, err = a.strArg(nw, "new")
	}
	if err != nil {
		return nil, err
	}
	c := int64(-1)
	if count != nil {
		if c, err = a.intArg(count, "count"); err != nil {
			return nil, err
		}
	}
	k := strings.Count(s, o)
	if o == "" {
		k = utf8.RuneCountInString(s) + 1
	}
	if c >= 0 && int64(k) > c {
		k = int(c)
	}
	if size := len(s) + k*(len(n)-len(o)); size > 0 {
		if err := a.r.charge(a.line, size); err != nil {
			return nil, err
		}
	}
	if c < 0 || c > int64(len(s))+1 {
		c = -1
	}
	return strings.Replace(s, o, n, int(c)), nil
}

// attrGetter is Jinja's make_attrgetter: the item's item (or attribute)
// along a dotted path ("a.0.b"), lower-cased when fold and a string.
func (r *renderer) attrGetter(line int, attr any, fold bool) func(any) (any, error) {
	var parts []any
	switch x := attr.(type) {
	case nil:
	case string:
		for _, p := range strings.Split(x, ".") {
			if p != "" && strings.Trim(p, "0123456789") == "" {
				n, err := strconv.ParseInt(p, 10, 64)
				if err == nil {
					parts = append(parts, n)
					continue
				}
			}
			parts = append(parts, p)
		}
	default:
		parts = []any{attr}
	}
	return func(item any) (any, error) {
		for _, p := range parts {
			var err error
			if item, err = r.getitem(line, item, p); err != nil {
				return nil, err
			}
		}
		if s, ok := item.(string); ok && fold {
			return strings.ToLower(s), nil
		}
		return item, nil
	}
}

// sortItems sorts items by key (stable, as Python's sorted). listKey: the
// key is compared as Jinja's make_multi_attrgetter's one-item list, whose
// == comes before its <.
func (r *renderer) sortItems(line int, items []any, key func(any) (any, error), reverse, listKey bool) ([]any, error) {
	keys := make([]any, len(items))
	for i, it := range items {
		k, err := key(it)
		if err != nil {
			return nil, err
		}
		keys[i] = k
	}
	idx := make([]int, len(items))
	for i := range idx {
		idx[i] = i
	}
	if err := r.step(line, len(items)*bitsLen(len(items))); err != nil {
		return nil, err
	}
	var err error
	sort.SliceStable(idx, func(i, j int) bool {
		a, b := keys[idx[i]], keys[idx[j]]
		if reverse {
			a, b = b, a
		}
		if listKey && equal(a, b) {
			return false
		}
		lt, e := less(a, b)
		if e != nil && err == nil {
			err = errorf(line, "%v", e)
		}
		return lt
	})
	if err != nil {
		return nil, err
	}
	out := make([]any, len(items))
	for i, j := range idx {
		out[i] = items[j]
	}
	return out, nil
}

func bitsLen(n int) int {
	b := 1
	for n > 1 {
		n >>= 1
		b++
	}
	return b
}

// reversible tells whether Python's reversed() takes v, and its items
// in reverse.
func (r *renderer) reversed(line int, v any) ([]any, bool, error) {
	switch v.(type) {
	case []any, tuple, string, *Dict, view, rangeV, undefined:
		items, err := r.iterate(line, v)
		if err != nil {
			return nil, false, err
		}
		out := make([]any, len(items))
		for i, it := range items {
			out[len(items)-1-i] = it
		}
		return out, true, nil
	}
	return nil, false, nil
}

// length is Python's len(v).
func (r *renderer) length(line int, v any) (any, error) {
	switch x := v.(type) {
	case string:
		return int64(utf8.RuneCountInString(x)), nil
	case []any:
		return int64(len(x)), nil
	case tuple:
		return int64(len(x)), nil
	case *Dict:
		return int64(x.Len()), nil
	case view:
		return int64(x.d.Len()), nil
	case rangeV:
		return x.len(), nil
	case undefined:
		return int64(0), nil
	}
	return nil, errorf(line, "object of type '%s' has no len()", typeName(v))
}

// filter is a filter's call: v|name(args).
func (r *renderer) filter(e *parse.Expr, f *frame) (any, error) {
	v, err := r.eval(e.A, f)
	if err != nil {
		return nil, err
	}
	a, err := r.args(e, f)
	if err != nil {
		return nil, err
	}
	a.what = "filter '" + e.Name + "'"
	fn, ok := filters[e.Name]
	if !ok {
		return nil, errorf(e.Line, "no filter named '%s'", e.Name)
	}
	return fn(r, e.Name, v, a)
}

// filters are the filters' implementations by name (FilterNames).
var filters = map[string]func(r *renderer, name string, v any, a *callArgs) (any, error){
	"default":    (*renderer).filterDefault,
	"d":          (*renderer).filterDefault,
	"lower":      (*renderer).filterString,
	"upper":      (*renderer).filterString,
	"capitalize": (*renderer).filterString,
	"title":      (*renderer).filterString,
	"string":     (*renderer).filterString,
	"safe":       (*renderer).filterString,
	"e":          (*renderer).filterString,
	"escape":     (*renderer).filterString,
	"trim":       (*renderer).filterTrim,
	"replace":    (*renderer).filterReplace,
	"join":       (*renderer).filterJoin,
	"length":     (*renderer).filterLength,
	"count":      (*renderer).filterLength,
	"first":      (*renderer).filterFirst,
	"last":       (*renderer).filterLast,
	"int":        (*renderer).filterInt,
	"float":      (*renderer).filterFloat,
	"list":       (*renderer).filterList,
	"sort":       (*renderer).filterSort,
	"unique":     (*renderer).filterUnique,
	"reverse":    (*renderer).filterReverse,
	"tojson":     (*renderer).filterTojson,
	"indent":     (*renderer).filterIndent,
	"items":      (*renderer).filterItems,
	"dictsort":   (*renderer).filterDictsort,
	"abs":        (*renderer).filterAbs,
	"round":      (*renderer).filterRound,
	"min":        (*renderer).filterMinMax,
	"max":        (*renderer).filterMinMax,
	"sum":        (*renderer).filterSum,
}

// filterDefault is default(default_value, boolean), alias d.
func (r *renderer) filterDefault(name string, v any, a *callArgs) (any, error) {
	p, err := a.bind([]string{"default_value", "boolean"}, "", false)
	if err != nil {
		return nil, err
	}
	if _, ok := v.(undefined); ok || truth(p[1]) && !truth(v) {
		return p[0], nil
	}
	return v, nil
}

// filterString is the filters of str(v): lower, upper, capitalize,
// title, string, safe, and escape (alias e).
func (r *renderer) filterString(name string, v any, a *callArgs) (any, error) {
	line := a.line
	if err := a.none(); err != nil {
		return nil, err
	}
	s, err := r.str(line, v)
	if err != nil {
		return nil, err
	}
	switch name {
	case "lower":
		return pystr.Lower(s), nil
	case "upper":
		return pystr.Upper(s), nil
	case "capitalize":
		return pystr.Capitalize(s), nil
	case "title":
		return pystr.Title(s), nil
	case "e", "escape":
		out := strings.NewReplacer("&", "&amp;", ">", "&gt;", "<", "&lt;", "'", "&#39;", `"`, "&#34;").Replace(s)
		return out, r.charge(line, len(out))
	}
	return s, nil
}

// filterTrim is trim(chars).
func (r *renderer) filterTrim(name string, v any, a *callArgs) (any, error) {
	p, err := a.bind([]string{"chars"}, nil)
	if err != nil {
		return nil, err
	}
	s, err := r.str(a.line, v)
	if err != nil {
		return nil, err
	}
	return pyStripChars(s, "strip", p[0], a)
}

// filterReplace is replace(old, new, count).
func (r *renderer) filterReplace(name string, v any, a *callArgs) (any, error) {
	line := a.line
	p, err := a.bind([]string{"old", "new", "count"}, nil, nil, nil)
	if err != nil {
		return nil, err
	}
	if len(a.pos)+len(a.kw) < 2 {
		return nil, errorf(line, "filter 'replace' wants the old and the new string")
	}
	s, err := r.str(line, v)
	if err != nil {
		return nil, err
	}
	return pyReplace(a, s, p[0], p[1], p[2], true)
}

// filterJoin is join(d, attribute).
func (r *renderer) filterJoin(name string, v any, a *callArgs) (any, error) {
	line := a.line
	p, err := a.bind([]string{"d", "attribute"}, "", nil)
	if err != nil {
		return nil, err
	}
	items, err := r.iterate(line, v)
	if err != nil {
		return nil, err
	}
	sep, err := r.str(line, p[0])
	if err != nil {
		return nil, err
	}
	get := r.attrGetter(line, p[1], false)
	var b strings.Builder
	for i, it := range items {
		if i > 0 {
			b.WriteString(sep)
		}
		if it, err = get(it); err != nil {
			return nil, err
		}
		s, err := r.str(line, it)
		if err != nil {
			return nil, err
		}
		b.WriteString(s)
		if b.Len() > r.lim.Output {
			return nil, limitf(line, "a value longer than %d bytes", r.lim.Output)
		}
	}
	return b.String(), r.charge(line, b.Len())
}

// filterLength is length, alias count.
func (r *renderer) filterLength(name string, v any, a *callArgs) (any, error) {
	if err := a.none(); err != nil {
		return nil, err
	}
	return r.length(a.line, v)
}

// filterFirst is first: an iterator's next item, else the first.
func (r *renderer) filterFirst(name string, v any, a *callArgs) (any, error) {
	if err := a.none(); err != nil {
		return nil, err
	}
	if it, ok := v.(*iterV); ok {
		if it.pos < len(it.items) {
			it.pos++
			return it.items[it.pos-1], nil
		}
	} else {
		items, err := r.iterate(a.line, v)
		if err != nil {
			return nil, err
		}
		if len(items) > 0 {
			return items[0], nil
		}
	}
	return undefined{name: "None", hint: "No first item, sequence was empty."}, nil
}

// filterLast is last.
func (r *renderer) filterLast(name string, v any, a *callArgs) (any, error) {
	line := a.line
	if err := a.none(); err != nil {
		return nil, err
	}
	items, ok, err := r.reversed(line, v)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, errorf(line, "'%s' object is not reversible", typeName(v))
	}
	if len(items) > 0 {
		return items[0], nil
	}
	return undefined{name: "None", hint: "No last item, sequence was empty."}, nil
}

// filterInt is int(default, base).
func (r *renderer) filterInt(name string, v any, a *callArgs) (any, error) {
	p, err := a.bind([]string{"default", "base"}, int64(0), int64(10))
	if err != nil {
		return nil, err
	}
	return a.toInt(v, p[0], p[1])
}

// filterFloat is float(default).
func (r *renderer) filterFloat(name string, v any, a *callArgs) (any, error) {
	p, err := a.bind([]string{"default"}, 0.0)
	if err != nil {
		return nil, err
	}
	if u, ok := v.(undefined); ok {
		return nil, errorf(a.line, "%s", u.message())
	}
	if f, _, _, ok := number(v); ok {
		return f, nil
	}
	if s, ok := v.(string); ok {
		if f, ok := pystr.ParseFloat(s); ok {
			return f, nil
		}
	}
	return p[0], nil
}

// filterList is list.
func (r *renderer) filterList(name string, v any, a *callArgs) (any, error) {
	line := a.line
	if err := a.none(); err != nil {
		return nil, err
	}
	items, err := r.iterate(line, v)
	if err != nil {
		return nil, err
	}
	return append([]any{}, items...), r.charge(line, 16*len(items))
}

// filterSort is sort(reverse, case_sensitive, attribute): attribute may
// be several, comma-separated.
func (r *renderer) filterSort(name string, v any, a *callArgs) (any, error) {
	line := a.line
	p, err := a.bind([]string{"reverse", "case_sensitive", "attribute"}, false, false, nil)
	if err != nil {
		return nil, err
	}
	items, err := r.iterate(line, v)
	if err != nil {
		return nil, err
	}
	var getters []func(any) (any, error)
	if s, ok := p[2].(string); ok {
		for _, part := range strings.Split(s, ",") {
			getters = append(getters, r.attrGetter(line, part, !truth(p[1])))
		}
	} else {
		getters = append(getters, r.attrGetter(line, p[2], !truth(p[1])))
	}
	key := func(it any) (any, error) {
		if len(getters) == 1 {
			return getters[0](it)
		}
		ks := make([]any, len(getters))
		for i, g := range getters {
			k, err := g(it)
			if err != nil {
				return nil, err
			}
			ks[i] = k
		}
		return ks, nil
	}
	return r.sortItems(line, items, key, truth(p[0]), true)
}

// filterUnique is unique(case_sensitive, attribute), a generator.
func (r *renderer) filterUnique(name string, v any, a *callArgs) (any, error) {
	line := a.line
	p, err := a.bind([]string{"case_sensitive", "attribute"}, false, nil)
	if err != nil {
		return nil, err
	}
	items, err := r.iterate(line, v)
	if err != nil {
		return nil, err
	}
	get := r.attrGetter(line, p[1], !truth(p[0]))
	seen := map[any]bool{}
	var out []any
	for _, it := range items {
		k, err := get(it)
		if err != nil {
			return nil, err
		}
		h, ok := hashKey(k)
		if !ok {
			return nil, errorf(line, "unhashable type: '%s'", typeName(k))
		}
		if !seen[h] {
			seen[h] = true
			out = append(out, it)
		}
	}
	return &iterV{items: out, what: "generator"}, nil
}

// filterReverse is reverse: a string reversed, else reversed(v) or
// the reversed list of its items.
func (r *renderer) filterReverse(name string, v any, a *callArgs) (any, error) {
	line := a.line
	if err := a.none(); err != nil {
		return nil, err
	}
	if s, ok := v.(string); ok {
		rs := []rune(s)
		slices.Reverse(rs)
		return string(rs), nil
	}
	items, ok, err := r.reversed(line, v)
	if err != nil {
		return nil, err
	}
	if ok {
		return &iterV{items: items, what: reverseIterName(v)}, nil
	}
	if items, err = r.iterate(line, v); err != nil {
		return nil, errorf(line, "argument must be iterable")
	}
	out := append([]any{}, items...)
	slices.Reverse(out)
	return out, nil
}

// filterTojson is tojson(indent), HTML-safe as Jinja's htmlsafe_json_dumps.
func (r *renderer) filterTojson(name string, v any, a *callArgs) (any, error) {
	line := a.line
	p, err := a.bind([]string{"indent"}, nil)
	if err != nil {
		return nil, err
	}
	w := &jsonWriter{sortKeys: true, itemSep: ", ", r: r, line: line}
	ind := false
	switch x := p[0].(type) {
	case nil:
	case string:
		w.indent, ind, w.itemSep = x, true, ","
	default:
		n, err := a.intArg(x, "indent")
		if err != nil {
			return nil, err
		}
		w.indent, ind, w.itemSep = strings.Repeat(" ", int(max(0, min(n, 64)))), true, ","
	}
	if err := w.value(v, 0, ind); err != nil {
		if je, ok := err.(*Error); ok {
			return nil, je
		}
		return nil, errorf(line, "%v", err)
	}
	out := strings.NewReplacer("<", `\u003c`, ">", `\u003e`, "&", `\u0026`, "'", `\u0027`).Replace(w.b.String())
	return out, r.charge(line, len(out))
}

// filterIndent is indent(width, first, blank).
func (r *renderer) filterIndent(name string, v any, a *callArgs) (any, error) {
	line := a.line
	p, err := a.bind([]string{"width", "first", "blank"}, int64(4), false, false)
	if err != nil {
		return nil, err
	}
	s, ok := v.(string)
	if !ok {
		if u, ok := v.(undefined); ok {
			return nil, errorf(line, "%s", u.message())
		}
		return nil, errorf(line, "filter 'indent' wants a string, not %s", typeName(v))
	}
	ind, ok := p[0].(string)
	if !ok {
		n, err := a.intArg(p[0], "width")
		if err != nil {
			return nil, err
		}
		ind = strings.Repeat(" ", int(max(0, min(n, int64(r.lim.Output)))))
	}
	lines := pystr.Splitlines(s + "\n")
	if err := r.charge(line, len(s)+len(lines)*(len(ind)+1)); err != nil {
		return nil, err
	}
	var out string
	if truth(p[2]) {
		out = strings.Join(lines, "\n"+ind)
	} else {
		var b strings.Builder
		b.WriteString(lines[0])
		for _, l := range lines[1:] {
			b.WriteString("\n")
			if l != "" {
				b.WriteString(ind)
			}
			b.WriteString(l)
		}
		out = b.String()
	}
	if truth(p[1]) {
		out = ind + out
	}
	return out, nil
}

// filterItems is items: a mapping's pairs, a generator.
func (r *renderer) filterItems(name string, v any, a *callArgs) (any, error) {
	if err := a.none(); err != nil {
		return nil, err
	}
	switch x := v.(type) {
	case undefined:
		return &iterV{what: "generator"}, nil
	case *Dict:
		return &iterV{items: view{kind: 'i', d: x}.items(), what: "generator"}, nil
	}
	return nil, errorf(a.line, "Can only get item pairs from a mapping.")
}

// filterDictsort is dictsort(case_sensitive, by, reverse).
func (r *renderer) filterDictsort(name string, v any, a *callArgs) (any, error) {
	line := a.line
	p, err := a.bind([]string{"case_sensitive", "by", "reverse"}, false, "key", false)
	if err != nil {
		return nil, err
	}
	d, ok := v.(*Dict)
	if !ok {
		if u, ok := v.(undefined); ok {
			return nil, errorf(line, "%s", u.message())
		}
		return nil, errorf(line, "filter 'dictsort' wants a dict, not %s", typeName(v))
	}
	pos := 0
	switch p[1] {
	case "key":
	case "value":
		pos = 1
	default:
		return nil, errorf(line, `You can only sort by either "key" or "value"`)
	}
	fold := !truth(p[0])
	return r.sortItems(line, view{kind: 'i', d: d}.items(), func(it any) (any, error) {
		k := it.(tuple)[pos]
		if s, ok := k.(string); ok && fold {
			return strings.ToLower(s), nil
		}
		return k, nil
	}, truth(p[2]), false)
}

// filterAbs is abs.
func (r *renderer) filterAbs(name string, v any, a *callArgs) (any, error) {
	line := a.line
	if err := a.none(); err != nil {
		return nil, err
	}
	f, i, isInt, ok := number(v)
	switch {
	case !ok:
		return nil, errorf(line, "bad operand type for abs(): '%s'", typeName(v))
	case isInt && i == math.MinInt64:
		return nil, errOverflow(line)
	case isInt && i < 0:
		return -i, nil
	case isInt:
		return i, nil
	}
	return math.Abs(f), nil
}

// filterRound is round(precision, method).
func (r *renderer) filterRound(name string, v any, a *callArgs) (any, error) {
	p, err := a.bind([]string{"precision", "method"}, int64(0), "common")
	if err != nil {
		return nil, err
	}
	return a.round(v, p[0], p[1])
}

// filterMinMax is min and max (name) (case_sensitive, attribute).
func (r *renderer) filterMinMax(name string, v any, a *callArgs) (any, error) {
	line := a.line
	p, err := a.bind([]string{"case_sensitive", "attribute"}, false, nil)
	if err != nil {
		return nil, err
	}
	items, err := r.iterate(line, v)
	if err != nil {
		return nil, err
	}
	if len(items) == 0 {
		return undefined{name: "None", hint: "No aggregated item, sequence was empty."}, nil
	}
	get := r.attrGetter(line, p[1], !truth(p[0]))
	best, bk := items[0], any(nil)
	if bk, err = get(best); err != nil {
		return nil, err
	}
	for _, it := range items[1:] {
		k, err := get(it)
		if err != nil {
			return nil, err
		}
		x, y := k, bk
		if name == "max" {
			x, y = bk, k
		}
		lt, err := less(x, y)
		if err != nil {
			return nil, errorf(line, "%v", err)
		}
		if lt {
			best, bk = it, k
		}
	}
	return best, nil
}

// filterSum is sum(attribute, start).
func (r *renderer) filterSum(name string, v any, a *callArgs) (any, error) {
	line := a.line
	p, err := a.bind([]string{"attribute", "start"}, nil, int64(0))
	if err != nil {
		return nil, err
	}
	items, err := r.iterate(line, v)
	if err != nil {
		return nil, err
	}
	if _, ok := p[1].(string); ok {
		return nil, errorf(line, "sum() can't sum strings [use ''.join(seq) instead]")
	}
	get := r.attrGetter(line, p[0], false)
	total := p[1]
	for _, it := range items {
		if it, err = get(it); err != nil {
			return nil, err
		}
		if total, err = r.binop(line, "+", total, it); err != nil {
			return nil, err
		}
	}
	return total, nil
}

func reverseIterName(v any) string {
	switch v.(type) {
	case []any:
		return "list_reverseiterator"
	case *Dict, view:
		return "dict_reversekeyiterator"
	case rangeV:
		return "range_iterator"
	}
	return "reversed"
}

// toInt is Jinja's do_int.
func (a *callArgs) toInt(v, def, baseArg any) (any, error) {
	base, err := a.intArg(baseArg, "base")
	if err != nil {
		return nil, err
	}
	switch x := v.(type) {
	case undefined:
		return nil, errorf(a.line, "%s", x.message())
	case bool, int64:
		i, _ := index(x)
		return i, nil
	case float64:
		return floatToInt(a.line, x, def)
	case string:
		if i, ok := pystr.ParseInt(x, base); ok {
			return i, nil
		}
		if f, ok := pystr.ParseFloat(x); ok {
			return floatToInt(a.line, f, def)
		}
	}
	return def, nil
}

func floatToInt(line int, f float64, def any) (any, error) {
	switch {
	case math.IsNaN(f):
		return def, nil
	case math.IsInf(f, 0):
		return nil, errorf(line, "cannot convert float infinity to integer")
	case f >= 1<<63 || f < -(1<<63):
		return nil, errOverflow(line)
	}
	return int64(f), nil
}

// round is Jinja's do_round.
func (a *callArgs) round(v, precArg, methodArg any) (any, error) {
	m, _ := methodArg.(string)
	if m != "common" && m != "ceil" && m != "floor" {
		return nil, errorf(a.line, "method must be common, ceil or floor")
	}
	prec, err := a.intArg(precArg, "precision")
	if err != nil {
		return nil, err
	}
	if u, ok := v.(undefined); ok {
		return nil, errorf(a.line, "%s", u.message())
	}
	f, i, isInt, ok := number(v)
	if !ok {
		return nil, errorf(a.line, "type %s doesn't define __round__ method", typeName(v))
	}
	if prec < -18 || prec > 300 || m != "common" && prec > 18 {
		return nil, errorf(a.line, "filter 'round': a precision of %d is not supported by earlyinit's Jinja", prec)
	}
	if m == "common" && !isInt && prec < 0 {
		return nil, errorf(a.line, "filter 'round': a negative precision on a float is not supported by earlyinit's Jinja")
	}
	out, err := pynum.Round(pynum.Num{F: f, I: i, Int: isInt}, prec, m)
	if err != nil {
		return nil, errorf(a.line, "%v", err)
	}
	return out, nil
}

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
