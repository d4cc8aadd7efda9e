package jinja

import (
	"math"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/earlyinit/earlyinit/internal/jinja/parse"
	"github.com/earlyinit/earlyinit/internal/jinja/pynum"
	"github.com/earlyinit/earlyinit/internal/pystr"
)

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
	fn, ok := filterByName(e.Name)
	if !ok {
		return nil, errorf(e.Line, "no filter named '%s'", e.Name)
	}
	return fn(r, e.Name, v, a)
}

// filterFn is a filter's implementation.
type filterFn func(r *renderer, name string, v any, a *callArgs) (any, error)

// filters are the filters' implementations by name (FilterNames), sorted
// by name: a slice is static data, where a map would be built in every
// process at start-up.
var filters = [...]struct {
	name string
	fn   filterFn
}{
	{"abs", (*renderer).filterAbs},
	{"capitalize", (*renderer).filterString},
	{"count", (*renderer).filterLength},
	{"d", (*renderer).filterDefault},
	{"default", (*renderer).filterDefault},
	{"dictsort", (*renderer).filterDictsort},
	{"e", (*renderer).filterString},
	{"escape", (*renderer).filterString},
	{"first", (*renderer).filterFirst},
	{"float", (*renderer).filterFloat},
	{"indent", (*renderer).filterIndent},
	{"int", (*renderer).filterInt},
	{"items", (*renderer).filterItems},
	{"join", (*renderer).filterJoin},
	{"last", (*renderer).filterLast},
	{"length", (*renderer).filterLength},
	{"list", (*renderer).filterList},
	{"lower", (*renderer).filterString},
	{"max", (*renderer).filterMinMax},
	{"min", (*renderer).filterMinMax},
	{"replace", (*renderer).filterReplace},
	{"reverse", (*renderer).filterReverse},
	{"round", (*renderer).filterRound},
	{"safe", (*renderer).filterString},
	{"sort", (*renderer).filterSort},
	{"string", (*renderer).filterString},
	{"sum", (*renderer).filterSum},
	{"title", (*renderer).filterString},
	{"tojson", (*renderer).filterTojson},
	{"trim", (*renderer).filterTrim},
	{"unique", (*renderer).filterUnique},
	{"upper", (*renderer).filterString},
}

// filterByName is the filter named name.
func filterByName(name string) (filterFn, bool) {
	i := sort.Search(len(filters), func(i int) bool { return filters[i].name >= name })
	if i < len(filters) && filters[i].name == name {
		return filters[i].fn, true
	}
	return nil, false
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

// filterLength is length, alias count.
func (r *renderer) filterLength(name string, v any, a *callArgs) (any, error) {
	if err := a.none(); err != nil {
		return nil, err
	}
	return r.length(a.line, v)
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
