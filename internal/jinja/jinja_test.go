package jinja

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/earlyinit/earlyinit/internal/jinja/parse"
)

// TestLimits: templates that would take without end (a huge loop, nested
// loops, deep nesting, output or values that grow) stop with an *Error
// marked Limit, quickly, naming the bound.
func TestLimits(t *testing.T) {
	deepIf := strings.Repeat("{% if true %}", 70) + "x" + strings.Repeat("{% endif %}", 70)
	deepExpr := "{{ " + strings.Repeat("(", 70) + "1" + strings.Repeat(")", 70) + " }}"
	deepNot := "{{ " + strings.Repeat("not ", 100) + "1 }}"
	deepFilters := "{{ 'x'" + strings.Repeat("|lower", 100) + " }}"
	deepFor := strings.Repeat("{% for i in range(10) %}", 8) + "x" + strings.Repeat("{% endfor %}", 8)
	for _, c := range []struct {
		name, tmpl string
		lim        Limits
		want       string
	}{
		{"huge range loop", "{% for i in range(1000000000) %}x{% endfor %}", Limits{}, "more than 100000 loop iterations"},
		{"nested loops", deepFor, Limits{}, "more than 100000 loop iterations"},
		{"range to a list", "{{ range(1000000000)|list|length }}", Limits{}, "a range of 1000000000 items"},
		{"deep if", deepIf, Limits{}, "blocks nested deeper than 64"},
		{"deep parentheses", deepExpr, Limits{}, "nested deeper than 64"},
		{"deep not", deepNot, Limits{}, "expression nested deeper than 64"},
		{"filter chain", deepFilters, Limits{}, "expression nested deeper than 64"},
		{"string repeat", "{{ 'x' * 100000000 }}", Limits{}, "a value longer than 8388608 bytes"},
		{"list repeat", "{{ [1] * 100000000 }}", Limits{}, "a list longer than"},
		{"output", "{% for i in range(100000) %}{{ 'x' * 1000 }}{% endfor %}", Limits{}, "more than 8388608 bytes of output"},
		{"values made", "{% for i in range(100000) %}{% set s = 'x' * 4000 %}{% endfor %}", Limits{}, "more than 67108864 bytes of values made"},
		{"steps", "{% for i in range(100000) %}{{ i if i > 0 and i < 10 and i != 5 or i == 7 }}{% endfor %}", Limits{Steps: 100000}, "more than 100000 evaluation steps"},
		{"source", strings.Repeat("x", 100), Limits{Source: 99}, "more than the limit of 99"},
		{"tokens", strings.Repeat("{{ 1 }}", 100), Limits{Nodes: 100}, "more than 100 tokens"},
		{"big int", "{{ 2 ** 100 }}", Limits{}, "integer overflow"},
		{"sort steps", "{{ range(50000)|list|sort|length }}{{ range(50000)|list|sort|length }}", Limits{Steps: 500000}, "evaluation steps"},
	} {
		start := time.Now()
		var err error
		p, err := Parse(c.tmpl, c.lim)
		if err == nil {
			_, _, err = p.Render(NewDict())
		}
		var je *Error
		if !errors.As(err, &je) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want %q", c.name, err, c.want)
		} else if !je.Limit && !strings.Contains(c.want, "overflow") {
			t.Errorf("%s: %v is not marked as a limit", c.name, err)
		}
		// Each takes well under a second; the bound leaves room for a
		// loaded machine and still fails a loop that runs unbounded.
		if d := time.Since(start); d > 5*time.Second {
			t.Errorf("%s: took %v", c.name, d)
		}
	}
}

// TestMissing: the undefined names in the output, as cloud-init's warning
// lists them (names only: never the text after them, which may be data).
func TestMissing(t *testing.T) {
	vars := NewDict()
	vars.Set("secret", "s3cret")
	p, err := Parse("{{ a }} {{ b }}{{ secret }} {{ a }} {{ c|lower }} {{ []|first }} [{{ d if false }}] {{ x.y|default('q') }}", Limits{})
	if err == nil {
		_, _, err = p.Render(vars)
	}
	if err == nil || !strings.Contains(err.Error(), "'x' is undefined") {
		t.Fatalf("x.y: %v", err)
	}
	p, err = Parse("{{ a }} {{ b }}{{ secret }} {{ a }} {{ c|lower }} {{ []|first }} [{{ d if false }}] {{ dict_missing }}-tail", Limits{})
	if err != nil {
		t.Fatal(err)
	}
	out, missing, err := p.Render(vars)
	if err != nil {
		t.Fatal(err)
	}
	if want := "CI_MISSING_JINJA_VAR/a CI_MISSING_JINJA_VAR/bs3cret CI_MISSING_JINJA_VAR/a ci_missing_jinja_var/c CI_MISSING_JINJA_VAR/None [] CI_MISSING_JINJA_VAR/dict_missing-tail"; out != want {
		t.Errorf("out %q, want %q", out, want)
	}
	if got := strings.Join(missing, ","); got != "a,b,a,None,dict_missing" {
		t.Errorf("missing %q", got)
	}
}

// TestErrorsNameTheLine: errors say the line, and not the template's or
// the data's values.
func TestErrorsNameTheLine(t *testing.T) {
	vars := NewDict()
	vars.Set("pw", "hunter2")
	for _, c := range []struct{ tmpl, want string }{
		{"a\nb\n{% macro x() %}{% endmacro %}", "line 3: the 'macro' tag is not supported"},
		{"a\n\n\n{{ 'hunter2' < 1 }}", "line 4: '<' not supported between instances of 'str' and 'int'"},
		{"{{ pw - 1 }}", "line 1: unsupported operand type(s) for -: 'str' and 'int'"},
		{"{{ nope - pw }}", `line 1: Undefined jinja variable: "nope-<str>"`},
		{"{{ local-hostname }}", `Undefined jinja variable: "local-hostname". Jinja tried subtraction. Perhaps you meant "local_hostname"?`},
		{"x\n{% if true %}\n{{ pw|nosuch }}{% endif %}", "line 3: no filter named 'nosuch'"},
		{"x\n{% for x in [1] %}\n\n{{ x|nosuch }}{% endfor %}", "line 4: no filter named 'nosuch'"},
		{"{% if x %}\n{% endfor %}", "line 2: unexpected tag 'endfor'"},
		{"{{ 'hunter2\n", "unterminated string"},
		{"a\n{# x", "line 2: missing end of comment tag"},
		{"\xff", "not valid UTF-8"},
	} {
		p, err := Parse(c.tmpl, Limits{})
		if err == nil {
			_, _, err = p.Render(vars)
		}
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: error %v, want %q", c.tmpl, err, c.want)
			continue
		}
		if strings.Contains(err.Error(), "hunter2") {
			t.Errorf("%q: the error shows a value: %v", c.tmpl, err)
		}
	}
}

// TestDecodeJSON: Python's json.loads: order kept, ints and floats apart,
// a repeated key in its first place with its last value.
func TestDecodeJSON(t *testing.T) {
	v, err := DecodeJSON([]byte(`{"b": 1, "a": 1.0, "b": [true, null, "x"], "big": 99999999999999999999}`), 10)
	if err != nil {
		t.Fatal(err)
	}
	var p printer
	if err := p.repr(v); err != nil {
		t.Fatal(err)
	}
	if got := p.b.String(); got != "{'b': [True, None, 'x'], 'a': 1.0, 'big': 1e+20}" {
		t.Errorf("got %s", got)
	}
	if _, err := DecodeJSON([]byte(strings.Repeat("[", 20)+strings.Repeat("]", 20)), 10); err == nil {
		t.Error("nesting past the bound decoded")
	}
	if _, err := DecodeJSON([]byte(`{} {}`), 10); err == nil {
		t.Error("two values decoded")
	}
	s, err := DumpJSON(v, 1, ",")
	if err != nil || s != "{\n \"a\": 1.0,\n \"b\": [\n  true,\n  null,\n  \"x\"\n ],\n \"big\": 1e+20\n}" {
		t.Errorf("DumpJSON: %q, %v", s, err)
	}
}

// FuzzRender: no template panics the engine or escapes its bounds.
func FuzzRender(f *testing.F) {
	for _, c := range oracleCases {
		f.Add(c.tmpl)
	}
	vars, err := DecodeJSON([]byte(oracleData), 64)
	if err != nil {
		f.Fatal(err)
	}
	lim := Limits{Iterations: 1000, Steps: 20000, Output: 1 << 16, Alloc: 1 << 20}
	f.Fuzz(func(t *testing.T, tmpl string) {
		start := time.Now()
		defer func() {
			if d := time.Since(start); d > 10*time.Second { // a hang, not a slow machine
				t.Fatalf("%q took %v", tmpl, d)
			}
		}()
		p, err := Parse(tmpl, lim)
		if err != nil {
			return
		}
		out, _, err := p.Render(vars.(*Dict))
		if err != nil {
			if strings.Contains(err.Error(), "internal error") {
				t.Fatalf("%q: %v", tmpl, err)
			}
			return
		}
		if len(out) > lim.Output {
			t.Fatalf("%q: %d bytes of output", tmpl, len(out))
		}
	})
}

// TestFilterTableMatchesParser: the parser's list of filter names (what
// a template may name) and the renderer's table (what runs) are the same
// names, and the table is sorted for filterByName's search.
func TestFilterTableMatchesParser(t *testing.T) {
	var names []string
	for i, f := range filters {
		if i > 0 && filters[i-1].name >= f.name {
			t.Errorf("filters: %q after %q: not sorted", f.name, filters[i-1].name)
		}
		names = append(names, f.name)
	}
	if want := parse.FilterNames(); !slices.Equal(names, want) {
		t.Errorf("filter table %q, parser's names %q", names, want)
	}
	for _, n := range names {
		if _, ok := filterByName(n); !ok {
			t.Errorf("filterByName(%q) not found", n)
		}
	}
	if _, ok := filterByName("nosuch"); ok {
		t.Error("filterByName(nosuch) found")
	}
}
