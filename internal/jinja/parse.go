package jinja

import (
	"slices"

	"github.com/earlyinit/earlyinit/internal/jinja/lex"
)

// Statement nodes.
type (
	textNode  struct{ s string }
	printNode struct {
		e    *expr
		line int
	}
	ifNode struct {
		tests  []*expr
		bodies [][]node
		els    []node
	}
	forNode struct {
		targets   []string
		unpack    bool
		iter      *expr
		cond      *expr
		body, els []node
		line      int
	}
	setNode struct {
		targets []string
		unpack  bool
		e       *expr
		body    []node // {% set x %}...{% endset %}
		block   bool
		line    int
	}
)

type node any

type exprOp uint8

const (
	opConst exprOp = iota
	opName
	opGetattr  // a.name
	opGetitem  // a[b]
	opList     // list: items
	opTuple    // list: items
	opDict     // list: key, value, key, value...
	opCall     // a(list..., kw...)
	opFilter   // a|name(list..., kw...)
	opTest     // a is name(list..., kw...)
	opNot      // not a
	opNeg      // -a
	opPos      // +a
	opAnd      // a and b
	opOr       // a or b
	opCond     // b if a else c (c nil: no else)
	opBin      // a name b: + - * / // % **
	opConcat   // list joined with ~
	opCompare  // a ops[0] list[0] ops[1] list[1]...
	opSliceArg // a slice as a subscript: list are start, stop, step
)

// expr is an expression node.
type expr struct {
	op    exprOp
	line  int
	depth int
	name  string // name, attribute, filter, test, operator
	v     any    // opConst's value
	a, b  *expr
	c     *expr
	list  []*expr
	kw    []kwArg
	ops   []string
	// unknown marks a filter or test Jinja does not have: an error where
	// Jinja2 compiles it, at run time where it defers that (checkUnknown).
	unknown bool
}

type kwArg struct {
	name string
	e    *expr
}

type parser struct {
	toks  []lex.Token
	pos   int
	lim   Limits
	depth int // blocks open
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
		return errorf(t.Line, "expected '%s', got %s", s, t.Describe())
	}
	p.next()
	return nil
}

func (p *parser) expect(k lex.Kind) error {
	t := p.peek()
	if t.Kind != k {
		return errorf(t.Line, "expected %s, got %s", lex.Token{Kind: k}.Describe(), t.Describe())
	}
	p.next()
	return nil
}

// mk finishes e: its depth, within the bound.
func (p *parser) mk(e *expr) (*expr, error) {
	d := 0
	for _, c := range [...]*expr{e.a, e.b, e.c} {
		if c != nil && c.depth > d {
			d = c.depth
		}
	}
	for _, c := range e.list {
		if c != nil && c.depth > d {
			d = c.depth
		}
	}
	for _, k := range e.kw {
		if k.e.depth > d {
			d = k.e.depth
		}
	}
	e.depth = d + 1
	if e.depth > p.lim.Depth {
		return nil, limitf(e.line, "expression nested deeper than %d", p.lim.Depth)
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

// subparse parses statements up to one of the tags ends (nil: the end of
// the template) and returns its name, the tag's name token still to be
// read.
func (p *parser) subparse(ends []string) ([]node, string, error) {
	var body []node
	for {
		t := p.peek()
		switch t.Kind {
		case lex.EOF:
			if ends != nil {
				return nil, "", errorf(t.Line, "unexpected end of template: looking for %s", quoteList(ends))
			}
			return body, "", nil
		case lex.Data:
			p.next()
			body = append(body, textNode{s: t.S})
		case lex.VarBegin:
			p.next()
			e, err := p.parseTuple(true, nil, false)
			if err != nil {
				return nil, "", err
			}
			if err := p.expect(lex.VarEnd); err != nil {
				return nil, "", err
			}
			body = append(body, printNode{e: e, line: t.Line})
		case lex.BlockBegin:
			p.next()
			nt := p.peek()
			if nt.Kind != lex.Name {
				return nil, "", errorf(nt.Line, "expected a tag name, got %s", nt.Describe())
			}
			if slices.Contains(ends, nt.S) {
				return body, nt.S, nil
			}
			p.next()
			var n node
			var err error
			switch {
			case nt.S == "if" || nt.S == "for" || nt.S == "set":
				p.depth++
				if p.depth > p.lim.Depth {
					return nil, "", limitf(nt.Line, "blocks nested deeper than %d", p.lim.Depth)
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
				err = errorf(nt.Line, "the '%s' tag is not supported by earlyinit's Jinja (it has if, for, set, raw)", nt.S)
			default:
				err = errorf(nt.Line, "unexpected tag '%s'", nt.S)
				if ends != nil {
					err = errorf(nt.Line, "unexpected tag '%s': looking for %s", nt.S, quoteList(ends))
				}
			}
			if err != nil {
				return nil, "", err
			}
			body = append(body, n)
		default:
			return nil, "", errorf(t.Line, "unexpected %s", t.Describe())
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

func (p *parser) parseIf() (node, error) {
	n := ifNode{}
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
		n.tests, n.bodies = append(n.tests, test), append(n.bodies, body)
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
			if n.els, _, err = p.subparse([]string{"endif"}); err != nil {
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
		return nil, false, errorf(line, "assigning to an attribute (namespace) is not supported by earlyinit's Jinja")
	}
	e, err := p.parseTuple(false, end, false, true)
	if err != nil {
		return nil, false, err
	}
	names := func(list []*expr) ([]string, error) {
		var out []string
		for _, x := range list {
			if x.op != opName {
				return nil, errorf(line, "can only assign to names")
			}
			out = append(out, x.name)
		}
		return out, nil
	}
	if e.op == opTuple {
		ns, err := names(e.list)
		return ns, true, err
	}
	ns, err := names([]*expr{e})
	return ns, false, err
}

func (p *parser) parseFor(line int) (node, error) {
	n := forNode{line: line}
	var err error
	if n.targets, n.unpack, err = p.parseTarget(line, func(t lex.Token) bool { return t.Kind == lex.Name && t.S == "in" }); err != nil {
		return nil, err
	}
	if !p.isName("in") {
		return nil, errorf(p.peek().Line, "expected 'in', got %s", p.peek().Describe())
	}
	p.next()
	if n.iter, err = p.parseTuple(false, func(t lex.Token) bool { return t.Kind == lex.Name && t.S == "recursive" }, false); err != nil {
		return nil, err
	}
	if p.isName("recursive") {
		return nil, errorf(line, "recursive loops are not supported by earlyinit's Jinja")
	}
	if p.isName("if") {
		p.next()
		if n.cond, err = p.parseExpression(true); err != nil {
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
	n.body = body
	if end == "else" {
		if err := p.endTag(); err != nil {
			return nil, err
		}
		if n.els, _, err = p.subparse([]string{"endfor"}); err != nil {
			return nil, err
		}
	}
	return n, p.endTag()
}

func (p *parser) parseSet(line int) (node, error) {
	n := setNode{line: line}
	var err error
	if n.targets, n.unpack, err = p.parseTarget(line, nil); err != nil {
		return nil, err
	}
	if p.isOp("=") {
		p.next()
		if n.e, err = p.parseTuple(true, nil, false); err != nil {
			return nil, err
		}
		return n, p.expect(lex.BlockEnd)
	}
	if n.unpack || len(n.targets) != 1 {
		return nil, errorf(line, "a {%% set %%} block assigns one name")
	}
	if p.isOp("|") {
		return nil, errorf(line, "filters on a {%% set %%} block are not supported by earlyinit's Jinja")
	}
	if err := p.expect(lex.BlockEnd); err != nil {
		return nil, err
	}
	n.block = true
	if n.body, _, err = p.subparse([]string{"endset"}); err != nil {
		return nil, err
	}
	return n, p.endTag()
}

// parseTuple is Jinja's parse_tuple: one expression, or a tuple of them
// separated by commas. simplified (for assignment targets) reads primaries
// only.
func (p *parser) parseTuple(withCond bool, end func(lex.Token) bool, explicit bool, simplified ...bool) (*expr, error) {
	line := p.peek().Line
	var items []*expr
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
		var e *expr
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
			return nil, errorf(line, "expected an expression, got %s", p.peek().Describe())
		}
	}
	return p.mk(&expr{op: opTuple, line: line, list: items})
}

func (p *parser) parseExpression(withCond bool) (*expr, error) {
	if withCond {
		return p.parseCondexpr()
	}
	return p.parseOr()
}

func (p *parser) parseCondexpr() (*expr, error) {
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
		var e3 *expr
		if p.isName("else") {
			p.next()
			if e3, err = p.parseCondexpr(); err != nil {
				return nil, err
			}
		}
		if e1, err = p.mk(&expr{op: opCond, line: line, a: e2, b: e1, c: e3}); err != nil {
			return nil, err
		}
	}
	return e1, nil
}

// binary parses left-associative operators: sub for the operands, ok
// telling an operator and its op code.
func (p *parser) binary(sub func() (*expr, error), ok func(lex.Token) (exprOp, bool)) (*expr, error) {
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
		if left, err = p.mk(&expr{op: op, line: t.Line, name: t.S, a: left, b: right}); err != nil {
			return nil, err
		}
	}
}

func (p *parser) parseOr() (*expr, error) {
	return p.binary(p.parseAnd, func(t lex.Token) (exprOp, bool) { return opOr, t.Kind == lex.Name && t.S == "or" })
}

func (p *parser) parseAnd() (*expr, error) {
	return p.binary(p.parseNot, func(t lex.Token) (exprOp, bool) { return opAnd, t.Kind == lex.Name && t.S == "and" })
}

func (p *parser) parseNot() (*expr, error) {
	if p.isName("not") {
		t := p.next()
		e, err := p.parseNot()
		if err != nil {
			return nil, err
		}
		return p.mk(&expr{op: opNot, line: t.Line, a: e})
	}
	return p.parseCompare()
}

func (p *parser) parseCompare() (*expr, error) {
	line := p.peek().Line
	e, err := p.parseMath1()
	if err != nil {
		return nil, err
	}
	c := &expr{op: opCompare, line: line, a: e}
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
		c.ops, c.list = append(c.ops, op), append(c.list, r)
	}
	if len(c.ops) == 0 {
		return e, nil
	}
	return p.mk(c)
}

func (p *parser) parseMath1() (*expr, error) {
	return p.binary(p.parseConcat, func(t lex.Token) (exprOp, bool) { return opBin, t.Kind == lex.Op && (t.S == "+" || t.S == "-") })
}

func (p *parser) parseConcat() (*expr, error) {
	line := p.peek().Line
	e, err := p.parseMath2()
	if err != nil {
		return nil, err
	}
	if !p.isOp("~") {
		return e, nil
	}
	c := &expr{op: opConcat, line: line, list: []*expr{e}}
	for p.isOp("~") {
		p.next()
		r, err := p.parseMath2()
		if err != nil {
			return nil, err
		}
		c.list = append(c.list, r)
	}
	return p.mk(c)
}

func (p *parser) parseMath2() (*expr, error) {
	return p.binary(p.parsePow, func(t lex.Token) (exprOp, bool) {
		return opBin, t.Kind == lex.Op && (t.S == "*" || t.S == "/" || t.S == "//" || t.S == "%")
	})
}

func (p *parser) parsePow() (*expr, error) {
	return p.binary(func() (*expr, error) { return p.parseUnary(true) }, func(t lex.Token) (exprOp, bool) { return opBin, t.Kind == lex.Op && t.S == "**" })
}

func (p *parser) parseUnary(withFilter bool) (*expr, error) {
	t := p.peek()
	var e *expr
	var err error
	switch {
	case t.Kind == lex.Op && (t.S == "-" || t.S == "+"):
		p.next()
		a, err := p.parseUnary(false)
		if err != nil {
			return nil, err
		}
		op := opNeg
		if t.S == "+" {
			op = opPos
		}
		if e, err = p.mk(&expr{op: op, line: t.Line, a: a}); err != nil {
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

func (p *parser) parsePrimary() (*expr, error) {
	t := p.peek()
	switch t.Kind {
	case lex.Name:
		p.next()
		switch t.S {
		case "true", "True":
			return p.mk(&expr{op: opConst, line: t.Line, v: true})
		case "false", "False":
			return p.mk(&expr{op: opConst, line: t.Line, v: false})
		case "none", "None":
			return p.mk(&expr{op: opConst, line: t.Line, v: nil})
		}
		return p.mk(&expr{op: opName, line: t.Line, name: t.S})
	case lex.String:
		s := ""
		for p.peek().Kind == lex.String {
			s += p.next().S
		}
		return p.mk(&expr{op: opConst, line: t.Line, v: s})
	case lex.Int:
		p.next()
		return p.mk(&expr{op: opConst, line: t.Line, v: t.I})
	case lex.Float:
		p.next()
		return p.mk(&expr{op: opConst, line: t.Line, v: t.F})
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
	return nil, errorf(t.Line, "unexpected %s", t.Describe())
}

func (p *parser) parseListOrDict(t lex.Token) (*expr, error) {
	p.next()
	e := &expr{op: opList, line: t.Line}
	closing := "]"
	if t.S == "{" {
		e.op, closing = opDict, "}"
	}
	for !p.isOp(closing) {
		if len(e.list) > 0 {
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
		e.list = append(e.list, x)
		if e.op == opDict {
			if err := p.expectOp(":"); err != nil {
				return nil, err
			}
			v, err := p.parseExpression(true)
			if err != nil {
				return nil, err
			}
			e.list = append(e.list, v)
		}
	}
	p.next()
	return p.mk(e)
}

func (p *parser) parsePostfix(e *expr) (*expr, error) {
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

func (p *parser) parseFilterExpr(e *expr) (*expr, error) {
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

func (p *parser) parseSubscript(e *expr) (*expr, error) {
	t := p.next()
	if t.S == "." {
		a := p.next()
		switch a.Kind {
		case lex.Name:
			return p.mk(&expr{op: opGetattr, line: t.Line, a: e, name: a.S})
		case lex.Int:
			k, err := p.mk(&expr{op: opConst, line: a.Line, v: a.I})
			if err != nil {
				return nil, err
			}
			return p.mk(&expr{op: opGetitem, line: t.Line, a: e, b: k})
		}
		return nil, errorf(a.Line, "expected a name or a number after '.', got %s", a.Describe())
	}
	var args []*expr
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
	var arg *expr
	var err error
	switch len(args) {
	case 0:
		return nil, errorf(t.Line, "expected a subscript")
	case 1:
		arg = args[0]
	default:
		if arg, err = p.mk(&expr{op: opTuple, line: t.Line, list: args}); err != nil {
			return nil, err
		}
	}
	return p.mk(&expr{op: opGetitem, line: t.Line, a: e, b: arg})
}

func (p *parser) parseSubscribed() (*expr, error) {
	line := p.peek().Line
	args := make([]*expr, 0, 3)
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
	return p.mk(&expr{op: opSliceArg, line: line, list: args})
}

// parseArgs is Jinja's parse_call_args: positional, then keyword
// arguments, in parentheses.
func (p *parser) parseArgs(e *expr) error {
	if err := p.expectOp("("); err != nil {
		return err
	}
	for !p.isOp(")") {
		if len(e.list) > 0 || len(e.kw) > 0 {
			if err := p.expectOp(","); err != nil {
				return err
			}
			if p.isOp(")") {
				break
			}
		}
		if p.isOp("*") || p.isOp("**") {
			return errorf(p.peek().Line, "*args and **kwargs are not supported by earlyinit's Jinja")
		}
		if p.peek().Kind == lex.Name && p.look().Kind == lex.Op && p.look().S == "=" {
			name := p.next().S
			p.next()
			v, err := p.parseExpression(true)
			if err != nil {
				return err
			}
			e.kw = append(e.kw, kwArg{name: name, e: v})
			continue
		}
		if len(e.kw) > 0 {
			return errorf(p.peek().Line, "a positional argument after a keyword argument")
		}
		v, err := p.parseExpression(true)
		if err != nil {
			return err
		}
		e.list = append(e.list, v)
	}
	p.next()
	return nil
}

func (p *parser) parseCall(callee *expr) (*expr, error) {
	e := &expr{op: opCall, line: p.peek().Line, a: callee}
	if err := p.parseArgs(e); err != nil {
		return nil, err
	}
	return p.mk(e)
}

// dottedName reads a filter's or test's name (Jinja allows dots in them).
func (p *parser) dottedName() (string, int, error) {
	t := p.next()
	if t.Kind != lex.Name {
		return "", t.Line, errorf(t.Line, "expected a name, got %s", t.Describe())
	}
	name := t.S
	for p.isOp(".") {
		p.next()
		n := p.next()
		if n.Kind != lex.Name {
			return "", n.Line, errorf(n.Line, "expected a name, got %s", n.Describe())
		}
		name += "." + n.S
	}
	return name, t.Line, nil
}

func (p *parser) parseFilter(value *expr) (*expr, error) {
	p.next() // |
	name, line, err := p.dottedName()
	if err != nil {
		return nil, err
	}
	unknown, err := checkFilter(name, line)
	if err != nil {
		return nil, err
	}
	e := &expr{op: opFilter, line: line, a: value, name: name, unknown: unknown}
	if p.isOp("(") {
		if err := p.parseArgs(e); err != nil {
			return nil, err
		}
	}
	return p.mk(e)
}

func (p *parser) parseTest(value *expr) (*expr, error) {
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
	e := &expr{op: opTest, line: line, a: value, name: name, unknown: unknown}
	t := p.peek()
	switch {
	case p.isOp("("):
		if err := p.parseArgs(e); err != nil {
			return nil, err
		}
	case t.Kind == lex.Name && t.S != "else" && t.S != "or" && t.S != "and" || t.Kind == lex.String || t.Kind == lex.Int || t.Kind == lex.Float ||
		t.Kind == lex.Op && (t.S == "(" || t.S == "[" || t.S == "{"):
		if t.Kind == lex.Name && t.S == "is" {
			return nil, errorf(t.Line, "tests cannot be chained with 'is'")
		}
		arg, err := p.parsePrimary()
		if err != nil {
			return nil, err
		}
		if arg, err = p.parsePostfix(arg); err != nil {
			return nil, err
		}
		e.list = []*expr{arg}
	}
	if e, err = p.mk(e); err != nil {
		return nil, err
	}
	if negated {
		return p.mk(&expr{op: opNot, line: is.Line, a: e})
	}
	return e, nil
}

// checkUnknown is Jinja2's compile-time check of filter and test names: a
// name it does not have is an error, except in a "soft" frame (an if's
// test and bodies, an if-expression), where it is one only when run.
func checkUnknown(body []node, soft bool) error {
	for _, n := range body {
		var err error
		switch x := n.(type) {
		case printNode:
			err = checkExpr(x.e, soft)
		case ifNode:
			for i, t := range x.tests {
				if err = checkExpr(t, true); err == nil {
					err = checkUnknown(x.bodies[i], true)
				}
				if err != nil {
					return err
				}
			}
			err = checkUnknown(x.els, true)
		case forNode:
			if err = checkExpr(x.iter, soft); err == nil {
				if err = checkExpr(x.cond, false); err == nil {
					if err = checkUnknown(x.body, false); err == nil {
						err = checkUnknown(x.els, false)
					}
				}
			}
		case setNode:
			if err = checkExpr(x.e, soft); err == nil {
				err = checkUnknown(x.body, false)
			}
		}
		if err != nil {
			return err
		}
	}
	return nil
}

func checkExpr(e *expr, soft bool) error {
	if e == nil {
		return nil
	}
	soft = soft || e.op == opCond
	if e.unknown && !soft {
		what := "filter"
		if e.op == opTest {
			what = "test"
		}
		return errorf(e.line, "no %s named '%s'", what, e.name)
	}
	for _, c := range [...]*expr{e.a, e.b, e.c} {
		if err := checkExpr(c, soft); err != nil {
			return err
		}
	}
	for _, c := range e.list {
		if err := checkExpr(c, soft); err != nil {
			return err
		}
	}
	for _, k := range e.kw {
		if err := checkExpr(k.e, soft); err != nil {
			return err
		}
	}
	return nil
}
