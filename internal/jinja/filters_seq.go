package jinja

import (
	"slices"
	"sort"
	"strconv"
	"strings"
)

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

// reversed tells whether Python's reversed() takes v, and gives its
// items in reverse.
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
