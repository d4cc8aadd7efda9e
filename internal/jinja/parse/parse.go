// Package parse parses a template's tokens into statement nodes and
// expressions (see Parse), refusing at parse time what Jinja2 refuses at
// compile time. Its errors are *lex.Error.
package parse

import (
	"slices"

	"github.com/earlyinit/earlyinit/internal/jinja/lex"
)

// Statement nodes: text, {{ }}, and the if, for and set blocks.
type (
	Text  struct{ S string }
	Print struct {
		E    *Expr
		Line int
	}
	If struct {
		Tests  []*Expr
		Bodies [][]Node
		Els    []Node
	}
	For struct {
		Targets   []string
		Unpack    bool
		Iter      *Expr
		Cond      *Expr
		Body, Els []Node
		Line      int
	}
	Set struct {
		Targets []string
		Unpack  bool
		E       *Expr
		Body    []Node // {% set x %}...{% endset %}
		Block   bool
		Line    int
	}
)

// Node is a statement: Text, Print, If, For or Set.
type Node any

// Op is what an Expr is.
type Op uint8

const (
	OpConst Op = iota
	OpName
	OpGetattr  // a.name
	OpGetitem  // a[b]
	OpList     // list: items
	OpTuple    // list: items
	OpDict     // list: key, value, key, value...
	OpCall     // a(list..., kw...)
	OpFilter   // a|name(list..., kw...)
	OpTest     // a is name(list..., kw...)
	OpNot      // not a
	OpNeg      // -a
	OpPos      // +a
	OpAnd      // a and b
	OpOr       // a or b
	OpCond     // b if a else c (c nil: no else)
	OpBin      // a name b: + - * / // % **
	OpConcat   // list joined with ~
	OpCompare  // a ops[0] list[0] ops[1] list[1]...
	OpSliceArg // a slice as a subscript: list are start, stop, step
)

// Expr is an expression node.
type Expr struct {
	Op    Op
	Line  int
	Depth int
	Name  string // name, attribute, filter, test, operator
	V     any    // OpConst's value
	A, B  *Expr
	C     *Expr
	List  []*Expr
	Kw    []KwArg
	Ops   []string
	// Unknown marks a filter or test Jinja does not have: an error where
	// Jinja2 compiles it, at run time where it defers that (checkUnknown).
	Unknown bool
}

// KwArg is a keyword argument of a call.
type KwArg struct {
	Name string
	E    *Expr
}

type parser struct {
	toks     []lex.Token
	pos      int
	maxDepth int
	depth    int // blocks open
}

func (p *parser) peek() lex.Token { return p.toks[p.pos] }

func (p *parser) look() lex.Token {
	if p.pos+1 < len(p.toks) {
		return p.toks[p.pos+1]
	}
	return p.toks[len(p.toks)-1]
}

func (p *parser) next() lex.Token {
	t := p.toks[p.pos]
	if t.Kind != lex.EOF {
		p.pos++
	}
	return t
}

func (p *parser) isOp(s string) bool {
	t := p.peek()
	return t.Kind == lex.Op && t.S == s
}

func (p *parser) isName(s string) bool {
	t := p.peek()
	return t.Kind == lex.Name && t.S == s
}

func (p *parser) expectOp(s string) error {
	if !p.isOp(s) {
		t := p.peek()
		return lex.Errorf(t.Line, "expected '%s', got %s", s, t.Describe())
	}
	p.next()
	return nil
}

func (p *parser) expect(k lex.Kind) error {
	t := p.peek()
	if t.Kind != k {
		return lex.Errorf(t.Line, "expected %s, got %s", lex.Token{Kind: k}.Describe(), t.Describe())
	}
	p.next()
	return nil
}

// mk finishes e: its depth, within the bound.
func (p *parser) mk(e *Expr) (*Expr, error) {
	d := 0
	for _, c := range [...]*Expr{e.A, e.B, e.C} {
		if c != nil && c.Depth > d {
			d = c.Depth
		}
	}
	for _, c := range e.List {
		if c != nil && c.Depth > d {
			d = c.Depth
		}
	}
	for _, k := range e.Kw {
		if k.E.Depth > d {
			d = k.E.Depth
		}
	}
	e.Depth = d + 1
	if e.Depth > p.maxDepth {
		return nil, lex.Limitf(e.Line, "expression nested deeper than %d", p.maxDepth)
	}
	return e, nil
}

// unsupportedTags are Jinja's tags earlyinit's subset does not have.
func unsupportedTag(name string) bool {
	switch name {
	case "block", "extends", "include", "import", "from", "macro", "call", "filter", "with",
		"autoescape", "do", "break", "continue", "trans", "pluralize", "endtrans", "print":
		return true
	}
	return false
}

// Parse parses a template's tokens (lex.Lex's, to its EOF) into its
// statements, expressions nested at most maxDepth deep with the blocks
// open.
func Parse(toks []lex.Token, maxDepth int) ([]Node, error) {
	p := &parser{toks: toks, maxDepth: maxDepth}
	body, end, err := p.subparse(nil)
	if err != nil {
		return nil, err
	}
	if end != "" {
		return nil, lex.Errorf(p.peek().Line, "unexpected '%s'", end)
	}
	if err := checkUnknown(body, false); err != nil {
		return nil, err
	}
	return body, nil
}

// subparse parses statements up to one of the tags ends (nil: the end of
// the template) and returns its name, the tag's name token still to be
// read.
func (p *parser) subparse(ends []string) ([]Node, string, error) {
	var body []Node
	for {
		t := p.peek()
		switch t.Kind {
		case lex.EOF:
			if ends != nil {
				return nil, "", lex.Errorf(t.Line, "unexpected end of template: looking for %s", quoteList(ends))
			}
			return body, "", nil
		case lex.Data:
			p.next()
			body = append(body, Text{S: t.S})
		case lex.VarBegin:
			p.next()
			e, err := p.parseTuple(true, nil, false)
			if err != nil {
				return nil, "", err
			}
			if err := p.expect(lex.VarEnd); err != nil {
				return nil, "", err
			}
			body = append(body, Print{E: e, Line: t.Line})
		case lex.BlockBegin:
			p.next()
			nt := p.peek()
			if nt.Kind != lex.Name {
				return nil, "", lex.Errorf(nt.Line, "expected a tag name, got %s", nt.Describe())
			}
			if slices.Contains(ends, nt.S) {
				return body, nt.S, nil
			}
			p.next()
			var n Node
			var err error
			switch {
			case nt.S == "if" || nt.S == "for" || nt.S == "set":
				p.depth++
				if p.depth > p.maxDepth {
					return nil, "", lex.Limitf(nt.Line, "blocks nested deeper than %d", p.maxDepth)
				}
				switch nt.S {
				case "if":
					n, err = p.parseIf()
				case "for":
					n, err = p.parseFor(nt.Line)
				default:
					n, err = p.parseSet(nt.Line)
				}
				p.depth--
			case unsupportedTag(nt.S):
				err = lex.Errorf(nt.Line, "the '%s' tag is not supported by earlyinit's Jinja (it has if, for, set, raw)", nt.S)
			default:
				err = lex.Errorf(nt.Line, "unexpected tag '%s'", nt.S)
				if ends != nil {
					err = lex.Errorf(nt.Line, "unexpected tag '%s': looking for %s", nt.S, quoteList(ends))
				}
			}
			if err != nil {
				return nil, "", err
			}
			body = append(body, n)
		default:
			return nil, "", lex.Errorf(t.Line, "unexpected %s", t.Describe())
		}
	}
}

func quoteList(ss []string) string {
	s := ""
	for i, x := range ss {
		if i > 0 {
			s += " or "
		}
		s += "'" + x + "'"
	}
	return s
}

// endTag reads the name of the tag subparse stopped at and the end of
// its block.
func (p *parser) endTag() error {
	p.next()
	return p.expect(lex.BlockEnd)
}

func (p *parser) parseIf() (Node, error) {
	n := If{}
	test, err := p.parseTuple(false, nil, false)
	if err != nil {
		return nil, err
	}
	if err := p.expect(lex.BlockEnd); err != nil {
		return nil, err
	}
	for {
		body, end, err := p.subparse([]string{"elif", "else", "endif"})
		if err != nil {
			return nil, err
		}
		n.Tests, n.Bodies = append(n.Tests, test), append(n.Bodies, body)
		p.next()
		switch end {
		case "elif":
			if test, err = p.parseTuple(false, nil, false); err != nil {
				return nil, err
			}
			if err := p.expect(lex.BlockEnd); err != nil {
				return nil, err
			}
			continue
		case "else":
			if err := p.expect(lex.BlockEnd); err != nil {
				return nil, err
			}
			if n.Els, _, err = p.subparse([]string{"endif"}); err != nil {
				return nil, err
			}
			return n, p.endTag()
		}
		return n, p.expect(lex.BlockEnd)
	}
}

// parseTarget parses what a for or set assigns: a name or a tuple of
// names, and whether it is a tuple.
func (p *parser) parseTarget(line int, end func(lex.Token) bool) ([]string, bool, error) {
	if p.look().Kind == lex.Op && p.look().S == "." && p.peek().Kind == lex.Name {
		return nil, false, lex.Errorf(line, "assigning to an attribute (namespace) is not supported by earlyinit's Jinja")
	}
	e, err := p.parseTuple(false, end, false, true)
	if err != nil {
		return nil, false, err
	}
	names := func(list []*Expr) ([]string, error) {
		var out []string
		for _, x := range list {
			if x.Op != OpName {
				return nil, lex.Errorf(line, "can only assign to names")
			}
			out = append(out, x.Name)
		}
		return out, nil
	}
	if e.Op == OpTuple {
		ns, err := names(e.List)
		return ns, true, err
	}
	ns, err := names([]*Expr{e})
	return ns, false, err
}

func (p *parser) parseFor(line int) (Node, error) {
	n := For{Line: line}
	var err error
	if n.Targets, n.Unpack, err = p.parseTarget(line, func(t lex.Token) bool { return t.Kind == lex.Name && t.S == "in" }); err != nil {
		return nil, err
	}
	if !p.isName("in") {
		return nil, lex.Errorf(p.peek().Line, "expected 'in', got %s", p.peek().Describe())
	}
	p.next()
	if n.Iter, err = p.parseTuple(false, func(t lex.Token) bool { return t.Kind == lex.Name && t.S == "recursive" }, false); err != nil {
		return nil, err
	}
	if p.isName("recursive") {
		return nil, lex.Errorf(line, "recursive loops are not supported by earlyinit's Jinja")
	}
	if p.isName("if") {
		p.next()
		if n.Cond, err = p.parseExpression(true); err != nil {
			return nil, err
		}
	}
	if err := p.expect(lex.BlockEnd); err != nil {
		return nil, err
	}
	body, end, err := p.subparse([]string{"endfor", "else"})
	if err != nil {
		return nil, err
	}
	n.Body = body
	if end == "else" {
		if err := p.endTag(); err != nil {
			return nil, err
		}
		if n.Els, _, err = p.subparse([]string{"endfor"}); err != nil {
			return nil, err
		}
	}
	return n, p.endTag()
}

func (p *parser) parseSet(line int) (Node, error) {
	n := Set{Line: line}
	var err error
	if n.Targets, n.Unpack, err = p.parseTarget(line, nil); err != nil {
		return nil, err
	}
	if p.isOp("=") {
		p.next()
		if n.E, err = p.parseTuple(true, nil, false); err != nil {
			return nil, err
		}
		return n, p.expect(lex.BlockEnd)
	}
	if n.Unpack || len(n.Targets) != 1 {
		return nil, lex.Errorf(line, "a {%% set %%} block assigns one name")
	}
	if p.isOp("|") {
		return nil, lex.Errorf(line, "filters on a {%% set %%} block are not supported by earlyinit's Jinja")
	}
	if err := p.expect(lex.BlockEnd); err != nil {
		return nil, err
	}
	n.Block = true
	if n.Body, _, err = p.subparse([]string{"endset"}); err != nil {
		return nil, err
	}
	return n, p.endTag()
}
