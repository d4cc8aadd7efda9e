// Package jinja renders the subset of Jinja2 templates that cloud-init's
// users write in `## template: jinja` user-data, with Jinja2 3.1's meaning
// and cloud-init 22.4's environment (cloudinit/templater.py): trim_blocks,
// no autoescape, an undefined name printed as CI_MISSING_JINJA_VAR/<name>,
// one trailing newline of the template dropped (the caller puts it back,
// as cloud-init does).
//
// The subset, checked against Jinja2 itself (the tests run cloud-init's
// render_jinja_payload as the oracle):
//
//   - text, {{ expr }}, {# comments #}, {% raw %}...{% endraw %}, and the
//     whitespace control of every tag ({{- -}}, {%- -%}, {#- -#}, +%});
//   - {% if %}{% elif %}{% else %}{% endif %}; {% for x in seq %} with
//     tuple targets (for k, v in d.items()), a filter (for x in l if c),
//     {% else %}, and loop.index, index0, revindex, revindex0, first,
//     last, length; {% set x = expr %} and {% set x %}...{% endset %},
//     scoped as Jinja scopes them (a set in a loop body stays there);
//   - expressions: names, a.b, a['b'], a.0, a[1:2], string (adjacent ones
//     joined), integer and float literals, true/false/none (any case
//     Jinja takes), lists, tuples and dicts; + - * / // % ** ~, unary - +,
//     == != < <= > >= (chained), in, not in, and, or, not, x if c else y;
//     tests with is / is not; calls of range() and of the methods
//     dict.items/keys/values/get and str.lower/upper/strip/lstrip/rstrip/
//     split/startswith/endswith/replace;
//   - the filters of parse.FilterNames and the tests of parse.TestNames.
//
// Everything else (macros, includes, blocks, call, with, do, filter
// blocks, loop controls, other filters and tests, %-formatting, attribute
// access to Python internals) is an *Error naming the line, at parse time
// where Jinja2 fails at compile time, so a template is rendered whole or
// refused, never rendered half.
//
// Every parse and render of outside data is bounded (Limits): the
// template's size, its number of nodes and nesting depth, and over one
// render the loop iterations, evaluation steps, bytes of output and bytes
// of strings and lists made. Past a bound the work stops with an *Error
// whose Limit is set.
//
// Values are Go values: nil (None), bool, int64, float64, string, []any
// (a list), *Dict (a dict, in insertion order, as Python's), and the
// package's own kinds (tuples, dict views, ranges, iterators, undefined).
// DecodeJSON turns JSON into them as Python's json.loads does.
package jinja

import (
	"errors"
	"fmt"
	"strings"

	"github.com/earlyinit/earlyinit/internal/jinja/lex"
	"github.com/earlyinit/earlyinit/internal/jinja/parse"
	"github.com/earlyinit/earlyinit/internal/pystr"
)

// Limits bound one parse and one render.
type Limits struct {
	// Source is the most bytes a template may have.
	Source int
	// Nodes is the most tags, text pieces and expression nodes.
	Nodes int
	// Depth is the deepest nesting of blocks and expressions, together.
	Depth int
	// Iterations is the most for-loop iterations over one render.
	Iterations int
	// Steps is the most evaluation steps over one render: each node
	// evaluated, each item a filter, test or operator visits.
	Steps int
	// Output is the most bytes of output, and of any one value made.
	Output int
	// Alloc is the most bytes of strings and lists made over one render.
	Alloc int
}

// DefaultLimits are the bounds cloud-init's templates render within: a
// template may be as big as user-data is, once it is 4 MiB or less.
var DefaultLimits = Limits{
	Source:     4 << 20,
	Nodes:      100_000,
	Depth:      64,
	Iterations: 100_000,
	Steps:      2_000_000,
	Output:     8 << 20,
	Alloc:      64 << 20,
}

// missingPrefix is how an undefined value prints: cloud-init's
// MISSING_JINJA_PREFIX, then the undefined name.
const missingPrefix = "CI_MISSING_JINJA_VAR/"

// Error is a template that does not parse or render: its line (0 when
// none applies) and what is wrong, and whether a cost bound stopped the
// work (Limit). Messages name constructs, variables and types, never the
// value of a variable or a literal of the template, as either may be
// secret. It is the lexer's error type, so that the lexer's and the
// parser's errors are the package's as they are.
type Error = lex.Error

func errorf(line int, format string, args ...any) *Error { return lex.Errorf(line, format, args...) }

func limitf(line int, format string, args ...any) *Error { return lex.Limitf(line, format, args...) }

// Template is a parsed template.
type Template struct {
	body []parse.Node
	lim  Limits
}

// Parse parses src within lim (zero fields of lim are DefaultLimits').
func Parse(src string, lim Limits) (t *Template, err error) {
	defer func() {
		if p := recover(); p != nil {
			t, err = nil, &Error{Msg: fmt.Sprintf("internal error: %v", p)}
		}
	}()
	lim = lim.withDefaults()
	if len(src) > lim.Source {
		return nil, limitf(0, "the template has %d bytes, more than the limit of %d", len(src), lim.Source)
	}
	toks, err := lex.Lex(src, lim.Nodes, lim.Depth)
	if err != nil {
		return nil, fromLex(err)
	}
	body, err := parse.Parse(toks, lim.Depth)
	if err != nil {
		return nil, fromLex(err)
	}
	return &Template{body: body, lim: lim}, nil
}

// fromLex is the lexer's or the parser's error as the package's *Error,
// unwrapped.
func fromLex(err error) error {
	var le *Error
	if errors.As(err, &le) {
		return le
	}
	return err
}

func (l Limits) withDefaults() Limits {
	d := DefaultLimits
	for _, f := range []struct{ v, d *int }{
		{&l.Source, &d.Source}, {&l.Nodes, &d.Nodes}, {&l.Depth, &d.Depth}, {&l.Iterations, &d.Iterations},
		{&l.Steps, &d.Steps}, {&l.Output, &d.Output}, {&l.Alloc, &d.Alloc},
	} {
		if *f.v <= 0 {
			*f.v = *f.d
		}
	}
	return l
}

// Render renders t with vars as the template's variables (nil: none). It
// returns the output and the names of the undefined values whose marker
// (missingPrefix and the name) is in it, in the order they are there, as
// cloud-init's warning lists them.
func (t *Template) Render(vars *Dict) (out string, missing []string, err error) {
	r := &renderer{lim: t.lim, vars: vars}
	defer func() {
		// A bug here must not take the caller down with it: the
		// template is refused instead.
		if p := recover(); p != nil {
			out, missing, err = "", nil, &Error{Msg: fmt.Sprintf("internal error: %v", p)}
		}
	}()
	if err := r.block(t.body, &frame{vars: map[string]any{}}); err != nil {
		return "", nil, err
	}
	out = r.out.String()
	return out, r.missingIn(out), nil
}

// missingIn is cloud-init's list of undefined names in out: one per match
// of its CI_MISSING_JINJA_VAR/[^\s]+, each the longest name recorded as
// printed undefined that the match starts with (cloud-init shows the whole
// match, which may run into the text or data after the name).
func (r *renderer) missingIn(out string) []string {
	var names []string
	for {
		i := strings.Index(out, missingPrefix)
		if i < 0 {
			return names
		}
		out = out[i+len(missingPrefix):]
		best := ""
		for _, n := range r.missing {
			if len(n) > len(best) && strings.HasPrefix(out, n) {
				best = n
			}
		}
		if best != "" {
			names = append(names, best)
		}
		// The match goes on to the next white space.
		if j := strings.IndexFunc(out, pystr.IsSpace); j >= 0 {
			out = out[j:]
		} else {
			out = ""
		}
	}
}
