package parse

import "github.com/earlyinit/earlyinit/internal/jinja/lex"

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
