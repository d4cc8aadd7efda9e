package jinja

import (
	"strings"
	"unicode/utf8"

	"github.com/earlyinit/earlyinit/internal/pystr"
)

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

// pyReplace is str(s).replace(str(old), str(new), count): with toStr old
// and new are made strings (the filter), without it they must be strings
// (the method).
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
