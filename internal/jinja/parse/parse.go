// Package parse parses a template's tokens into statement nodes and
// expressions (see Parse), refusing at parse time what Jinja2 refuses at
// compile time. Its errors are *lex.Error.
package parse

import (
	"slices"
	"strings"

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

// parseTuple is Jinja's parse_tuple: one expression, or a tuple of them
// separated by commas. simplified (for assignment targets) reads primaries
// only.
func (p *parser) parseTuple(withCond bool, end func(lex.Token) bool, explicit bool, simplified ...bool) (*Expr, error) {
	line := p.peek().Line
	var items []*Expr
	isTuple := false
	for {
		if len(items) > 0 {
			if err := p.expectOp(","); err != nil {
				return nil, err
			}
		}
		t := p.peek()
		if t.Kind == lex.VarEnd || t.Kind == lex.BlockEnd || t.Kind == lex.Op && t.S == ")" || end != nil && end(t) {
			break
		}
		var e *Expr
		var err error
		switch {
		case len(simplified) > 0 && simplified[0]:
			e, err = p.parsePrimary()
		default:
			e, err = p.parseExpression(withCond)
		}
		if err != nil {
			return nil, err
		}
		items = append(items, e)
		if !p.isOp(",") {
			break
		}
		isTuple = true
	}
	if !isTuple {
		if len(items) > 0 {
			return items[0], nil
		}
		if !explicit {
			return nil, lex.Errorf(line, "expected an expression, got %s", p.peek().Describe())
		}
	}
	return p.mk(&Expr{Op: OpTuple, Line: line, List: items})
}

func (p *parser) parseExpression(withCond bool) (*Expr, error) {
	if withCond {
		return p.parseCondexpr()
	}
	return p.parseOr()
}

func (p *parser) parseCondexpr() (*Expr, error) {
	line := p.peek().Line
	e1, err := p.parseOr()
	if err != nil {
		return nil, err
	}
	for p.isName("if") {
		p.next()
		e2, err := p.parseOr()
		if err != nil {
			return nil, err
		}
		var e3 *Expr
		if p.isName("else") {
			p.next()
			if e3, err = p.parseCondexpr(); err != nil {
				return nil, err
			}
		}
		if e1, err = p.mk(&Expr{Op: OpCond, Line: line, A: e2, B: e1, C: e3}); err != nil {
			return nil, err
		}
	}
	return e1, nil
}

// binary parses left-associative operators: sub for the operands, ok
// telling an operator and its op code.
func (p *parser) binary(sub func() (*Expr, error), ok func(lex.Token) (Op, bool)) (*Expr, error) {
	left, err := sub()
	if err != nil {
		return nil, err
	}
	for {
		t := p.peek()
		op, yes := ok(t)
		if !yes {
			return left, nil
		}
		p.next()
		right, err := sub()
		if err != nil {
			return nil, err
		}
		if left, err = p.mk(&Expr{Op: op, Line: t.Line, Name: t.S, A: left, B: right}); err != nil {
			return nil, err
		}
	}
}

func (p *parser) parseOr() (*Expr, error) {
	return p.binary(p.parseAnd, func(t lex.Token) (Op, bool) { return OpOr, t.Kind == lex.Name && t.S == "or" })
}

func (p *parser) parseAnd() (*Expr, error) {
	return p.binary(p.parseNot, func(t lex.Token) (Op, bool) { return OpAnd, t.Kind == lex.Name && t.S == "and" })
}

func (p *parser) parseNot() (*Expr, error) {
	if p.isName("not") {
		t := p.next()
		e, err := p.parseNot()
		if err != nil {
			return nil, err
		}
		return p.mk(&Expr{Op: OpNot, Line: t.Line, A: e})
	}
	return p.parseCompare()
}

func (p *parser) parseCompare() (*Expr, error) {
	line := p.peek().Line
	e, err := p.parseMath1()
	if err != nil {
		return nil, err
	}
	c := &Expr{Op: OpCompare, Line: line, A: e}
	for {
		t := p.peek()
		var op string
		switch {
		case t.Kind == lex.Op && (t.S == "==" || t.S == "!=" || t.S == "<" || t.S == "<=" || t.S == ">" || t.S == ">="):
			op = t.S
			p.next()
		case t.Kind == lex.Name && t.S == "in":
			op = "in"
			p.next()
		case t.Kind == lex.Name && t.S == "not" && p.look().Kind == lex.Name && p.look().S == "in":
			op = "not in"
			p.next()
			p.next()
		}
		if op == "" {
			break
		}
		r, err := p.parseMath1()
		if err != nil {
			return nil, err
		}
		c.Ops, c.List = append(c.Ops, op), append(c.List, r)
	}
	if len(c.Ops) == 0 {
		return e, nil
	}
	return p.mk(c)
}

func (p *parser) parseMath1() (*Expr, error) {
	return p.binary(p.parseConcat, func(t lex.Token) (Op, bool) { return OpBin, t.Kind == lex.Op && (t.S == "+" || t.S == "-") })
}

func (p *parser) parseConcat() (*Expr, error) {
	line := p.peek().Line
	e, err := p.parseMath2()
	if err != nil {
		return nil, err
	}
	if !p.isOp("~") {
		return e, nil
	}
	c := &Expr{Op: OpConcat, Line: line, List: []*Expr{e}}
	for p.isOp("~") {
		p.next()
		r, err := p.parseMath2()
		if err != nil {
			return nil, err
		}
		c.List = append(c.List, r)
	}
	return p.mk(c)
}

func (p *parser) parseMath2() (*Expr, error) {
	return p.binary(p.parsePow, func(t lex.Token) (Op, bool) {
		return OpBin, t.Kind == lex.Op && (t.S == "*" || t.S == "/" || t.S == "//" || t.S == "%")
	})
}

func (p *parser) parsePow() (*Expr, error) {
	return p.binary(func() (*Expr, error) { return p.parseUnary(true) }, func(t lex.Token) (Op, bool) { return OpBin, t.Kind == lex.Op && t.S == "**" })
}

func (p *parser) parseUnary(withFilter bool) (*Expr, error) {
	t := p.peek()
	var e *Expr
	var err error
	switch {
	case t.Kind == lex.Op && (t.S == "-" || t.S == "+"):
		p.next()
		a, err := p.parseUnary(false)
		if err != nil {
			return nil, err
		}
		op := OpNeg
		if t.S == "+" {
			op = OpPos
		}
		if e, err = p.mk(&Expr{Op: op, Line: t.Line, A: a}); err != nil {
			return nil, err
		}
	default:
		if e, err = p.parsePrimary(); err != nil {
			return nil, err
		}
	}
	if e, err = p.parsePostfix(e); err != nil {
		return nil, err
	}
	if withFilter {
		return p.parseFilterExpr(e)
	}
	return e, nil
}

func (p *parser) parsePrimary() (*Expr, error) {
	t := p.peek()
	switch t.Kind {
	case lex.Name:
		p.next()
		switch t.S {
		case "true", "True":
			return p.mk(&Expr{Op: OpConst, Line: t.Line, V: true})
		case "false", "False":
			return p.mk(&Expr{Op: OpConst, Line: t.Line, V: false})
		case "none", "None":
			return p.mk(&Expr{Op: OpConst, Line: t.Line, V: nil})
		}
		return p.mk(&Expr{Op: OpName, Line: t.Line, Name: t.S})
	case lex.String:
		s := ""
		for p.peek().Kind == lex.String {
			s += p.next().S
		}
		return p.mk(&Expr{Op: OpConst, Line: t.Line, V: s})
	case lex.Int:
		p.next()
		return p.mk(&Expr{Op: OpConst, Line: t.Line, V: t.I})
	case lex.Float:
		p.next()
		return p.mk(&Expr{Op: OpConst, Line: t.Line, V: t.F})
	case lex.Op:
		switch t.S {
		case "(":
			p.next()
			e, err := p.parseTuple(true, nil, true)
			if err != nil {
				return nil, err
			}
			if err := p.expectOp(")"); err != nil {
				return nil, err
			}
			return e, nil
		case "[", "{":
			return p.parseListOrDict(t)
		}
	}
	return nil, lex.Errorf(t.Line, "unexpected %s", t.Describe())
}

func (p *parser) parseListOrDict(t lex.Token) (*Expr, error) {
	p.next()
	e := &Expr{Op: OpList, Line: t.Line}
	closing := "]"
	if t.S == "{" {
		e.Op, closing = OpDict, "}"
	}
	for !p.isOp(closing) {
		if len(e.List) > 0 {
			if err := p.expectOp(","); err != nil {
				return nil, err
			}
			if p.isOp(closing) {
				break
			}
		}
		x, err := p.parseExpression(true)
		if err != nil {
			return nil, err
		}
		e.List = append(e.List, x)
		if e.Op == OpDict {
			if err := p.expectOp(":"); err != nil {
				return nil, err
			}
			v, err := p.parseExpression(true)
			if err != nil {
				return nil, err
			}
			e.List = append(e.List, v)
		}
	}
	p.next()
	return p.mk(e)
}

func (p *parser) parsePostfix(e *Expr) (*Expr, error) {
	var err error
	for {
		switch {
		case p.isOp(".") || p.isOp("["):
			e, err = p.parseSubscript(e)
		case p.isOp("("):
			e, err = p.parseCall(e)
		default:
			return e, nil
		}
		if err != nil {
			return nil, err
		}
	}
}

func (p *parser) parseFilterExpr(e *Expr) (*Expr, error) {
	var err error
	for {
		switch {
		case p.isOp("|"):
			e, err = p.parseFilter(e)
		case p.isName("is"):
			e, err = p.parseTest(e)
		case p.isOp("("):
			e, err = p.parseCall(e)
		default:
			return e, nil
		}
		if err != nil {
			return nil, err
		}
	}
}

func (p *parser) parseSubscript(e *Expr) (*Expr, error) {
	t := p.next()
	if t.S == "." {
		a := p.next()
		switch a.Kind {
		case lex.Name:
			return p.mk(&Expr{Op: OpGetattr, Line: t.Line, A: e, Name: a.S})
		case lex.Int:
			k, err := p.mk(&Expr{Op: OpConst, Line: a.Line, V: a.I})
			if err != nil {
				return nil, err
			}
			return p.mk(&Expr{Op: OpGetitem, Line: t.Line, A: e, B: k})
		}
		return nil, lex.Errorf(a.Line, "expected a name or a number after '.', got %s", a.Describe())
	}
	var args []*Expr
	for !p.isOp("]") {
		if len(args) > 0 {
			if err := p.expectOp(","); err != nil {
				return nil, err
			}
		}
		s, err := p.parseSubscribed()
		if err != nil {
			return nil, err
		}
		args = append(args, s)
	}
	p.next()
	var arg *Expr
	var err error
	switch len(args) {
	case 0:
		return nil, lex.Errorf(t.Line, "expected a subscript")
	case 1:
		arg = args[0]
	default:
		if arg, err = p.mk(&Expr{Op: OpTuple, Line: t.Line, List: args}); err != nil {
			return nil, err
		}
	}
	return p.mk(&Expr{Op: OpGetitem, Line: t.Line, A: e, B: arg})
}

func (p *parser) parseSubscribed() (*Expr, error) {
	line := p.peek().Line
	args := make([]*Expr, 0, 3)
	if p.isOp(":") {
		p.next()
		args = append(args, nil)
	} else {
		e, err := p.parseExpression(true)
		if err != nil {
			return nil, err
		}
		if !p.isOp(":") {
			return e, nil
		}
		p.next()
		args = append(args, e)
	}
	endOf := func() bool { return p.isOp("]") || p.isOp(",") }
	switch {
	case p.isOp(":") || endOf():
		args = append(args, nil)
	default:
		e, err := p.parseExpression(true)
		if err != nil {
			return nil, err
		}
		args = append(args, e)
	}
	if p.isOp(":") {
		p.next()
		if endOf() {
			args = append(args, nil)
		} else {
			e, err := p.parseExpression(true)
			if err != nil {
				return nil, err
			}
			args = append(args, e)
		}
	} else {
		args = append(args, nil)
	}
	return p.mk(&Expr{Op: OpSliceArg, Line: line, List: args})
}

// parseArgs is Jinja's parse_call_args: positional, then keyword
// arguments, in parentheses.
func (p *parser) parseArgs(e *Expr) error {
	if err := p.expectOp("("); err != nil {
		return err
	}
	for !p.isOp(")") {
		if len(e.List) > 0 || len(e.Kw) > 0 {
			if err := p.expectOp(","); err != nil {
				return err
			}
			if p.isOp(")") {
				break
			}
		}
		if p.isOp("*") || p.isOp("**") {
			return lex.Errorf(p.peek().Line, "*args and **kwargs are not supported by earlyinit's Jinja")
		}
		if p.peek().Kind == lex.Name && p.look().Kind == lex.Op && p.look().S == "=" {
			name := p.next().S
			p.next()
			v, err := p.parseExpression(true)
			if err != nil {
				return err
			}
			e.Kw = append(e.Kw, KwArg{Name: name, E: v})
			continue
		}
		if len(e.Kw) > 0 {
			return lex.Errorf(p.peek().Line, "a positional argument after a keyword argument")
		}
		v, err := p.parseExpression(true)
		if err != nil {
			return err
		}
		e.List = append(e.List, v)
	}
	p.next()
	return nil
}

func (p *parser) parseCall(callee *Expr) (*Expr, error) {
	e := &Expr{Op: OpCall, Line: p.peek().Line, A: callee}
	if err := p.parseArgs(e); err != nil {
		return nil, err
	}
	return p.mk(e)
}

// dottedName reads a filter's or test's name (Jinja allows dots in them).
func (p *parser) dottedName() (string, int, error) {
	t := p.next()
	if t.Kind != lex.Name {
		return "", t.Line, lex.Errorf(t.Line, "expected a name, got %s", t.Describe())
	}
	name := t.S
	for p.isOp(".") {
		p.next()
		n := p.next()
		if n.Kind != lex.Name {
			return "", n.Line, lex.Errorf(n.Line, "expected a name, got %s", n.Describe())
		}
		name += "." + n.S
	}
	return name, t.Line, nil
}

func (p *parser) parseFilter(value *Expr) (*Expr, error) {
	p.next() // |
	name, line, err := p.dottedName()
	if err != nil {
		return nil, err
	}
	unknown, err := checkFilter(name, line)
	if err != nil {
		return nil, err
	}
	e := &Expr{Op: OpFilter, Line: line, A: value, Name: name, Unknown: unknown}
	if p.isOp("(") {
		if err := p.parseArgs(e); err != nil {
			return nil, err
		}
	}
	return p.mk(e)
}

func (p *parser) parseTest(value *Expr) (*Expr, error) {
	is := p.next()
	negated := false
	if p.isName("not") {
		p.next()
		negated = true
	}
	name, line, err := p.dottedName()
	if err != nil {
		return nil, err
	}
	unknown, err := checkTest(name, line)
	if err != nil {
		return nil, err
	}
	e := &Expr{Op: OpTest, Line: line, A: value, Name: name, Unknown: unknown}
	t := p.peek()
	switch {
	case p.isOp("("):
		if err := p.parseArgs(e); err != nil {
			return nil, err
		}
	case t.Kind == lex.Name && t.S != "else" && t.S != "or" && t.S != "and" || t.Kind == lex.String || t.Kind == lex.Int || t.Kind == lex.Float ||
		t.Kind == lex.Op && (t.S == "(" || t.S == "[" || t.S == "{"):
		if t.Kind == lex.Name && t.S == "is" {
			return nil, lex.Errorf(t.Line, "tests cannot be chained with 'is'")
		}
		arg, err := p.parsePrimary()
		if err != nil {
			return nil, err
		}
		if arg, err = p.parsePostfix(arg); err != nil {
			return nil, err
		}
		e.List = []*Expr{arg}
	}
	if e, err = p.mk(e); err != nil {
		return nil, err
	}
	if negated {
		return p.mk(&Expr{Op: OpNot, Line: is.Line, A: e})
	}
	return e, nil
}

// checkUnknown is Jinja2's compile-time check of filter and test names: a
// name it does not have is an error, except in a "soft" frame (an if's
// test and bodies, an if-expression), where it is one only when run.
func checkUnknown(body []Node, soft bool) error {
	for _, n := range body {
		var err error
		switch x := n.(type) {
		case Print:
			err = checkExpr(x.E, soft)
		case If:
			for i, t := range x.Tests {
				if err = checkExpr(t, true); err == nil {
					err = checkUnknown(x.Bodies[i], true)
				}
				if err != nil {
					return err
				}
			}
			err = checkUnknown(x.Els, true)
		case For:
			if err = checkExpr(x.Iter, soft); err == nil {
				if err = checkExpr(x.Cond, false); err == nil {
					if err = checkUnknown(x.Body, false); err == nil {
						err = checkUnknown(x.Els, false)
					}
				}
			}
		case Set:
			if err = checkExpr(x.E, soft); err == nil {
				err = checkUnknown(x.Body, false)
			}
		}
		if err != nil {
			return err
		}
	}
	return nil
}

func checkExpr(e *Expr, soft bool) error {
	if e == nil {
		return nil
	}
	soft = soft || e.Op == OpCond
	if e.Unknown && !soft {
		what := "filter"
		if e.Op == OpTest {
			what = "test"
		}
		return lex.Errorf(e.Line, "no %s named '%s'", what, e.Name)
	}
	for _, c := range [...]*Expr{e.A, e.B, e.C} {
		if err := checkExpr(c, soft); err != nil {
			return err
		}
	}
	for _, c := range e.List {
		if err := checkExpr(c, soft); err != nil {
			return err
		}
	}
	for _, k := range e.Kw {
		if err := checkExpr(k.E, soft); err != nil {
			return err
		}
	}
	return nil
}

// The filters and tests earlyinit's Jinja has, each with Jinja2 3.1's
// parameters and meaning (jinja2/filters.py, jinja2/tests.py).
const (
	filterNames = "abs capitalize count d default dictsort e escape first float indent int items join last length list lower max min replace reverse round safe sort string sum title tojson trim unique upper"
	testNames   = "boolean defined divisibleby eq equalto even false float ge greaterthan gt in integer iterable le lessthan lower lt mapping ne none number odd sequence string true undefined upper"
	// Jinja's own that earlyinit leaves out.
	otherFilters = "attr batch center filesizeformat forceescape format groupby map pprint random reject rejectattr select selectattr slice striptags truncate urlencode urlize wordcount wordwrap xmlattr"
	otherTests   = "callable escaped filter sameas test"
)

// FilterNames and TestNames list the filters and tests supported.
func FilterNames() []string { return strings.Fields(filterNames) }
func TestNames() []string   { return strings.Fields(testNames) }

func inList(list, name string) bool { return slices.Contains(strings.Fields(list), name) }

// checkFilter refuses a filter of Jinja's earlyinit leaves out, and
// tells one Jinja does not have either (unknown: see checkUnknown).
func checkFilter(name string, line int) (unknown bool, err error) {
	switch {
	case inList(filterNames, name):
		return false, nil
	case inList(otherFilters, name):
		return false, lex.Errorf(line, "the filter '%s' is not supported by earlyinit's Jinja", name)
	}
	return true, nil
}

func checkTest(name string, line int) (unknown bool, err error) {
	switch {
	case inList(testNames, name):
		return false, nil
	case inList(otherTests, name):
		return false, lex.Errorf(line, "the test '%s' is not supported by earlyinit's Jinja", name)
	}
	return true, nil
}
