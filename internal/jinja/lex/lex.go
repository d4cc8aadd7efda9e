// Package lex splits a Jinja template into tokens as Jinja2's lexer does
// with cloud-init's settings (see Lex). Its errors are *Error, which the
// jinja package turns into its own.
package lex

import (
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/earlyinit/earlyinit/internal/pystr"
)

// Kind is what a token is.
type Kind uint8

const (
	Data Kind = iota
	VarBegin
	VarEnd
	BlockBegin
	BlockEnd
	Name
	String
	Int
	Float
	Op
	EOF
)

// Token is one lexeme: text between tags, a tag's delimiter, or a token
// inside a tag.
type Token struct {
	Kind Kind
	S    string // the text, name, operator or string's value
	I    int64
	F    float64
	Line int
}

// Describe names a token for an error, without its value when it may
// hold data (text, string literals).
func (t Token) Describe() string {
	switch t.Kind {
	case Data:
		return "template text"
	case VarBegin:
		return "'{{'"
	case VarEnd:
		return "end of print statement"
	case BlockBegin:
		return "'{%'"
	case BlockEnd:
		return "end of statement block"
	case Name:
		return "'" + t.S + "'"
	case String:
		return "a string"
	case Int:
		return "an integer"
	case Float:
		return "a float"
	case Op:
		return "'" + t.S + "'"
	}
	return "end of template"
}

type lexer struct {
	src                 string
	pos                 int
	toks                []Token
	maxTokens, maxDepth int
	// lineAt's cursor: line is the line of linePos.
	line, linePos int
}

// lineAt is the line of byte offset p; offsets are asked in order.
func (l *lexer) lineAt(p int) int {
	if p < l.linePos {
		l.line, l.linePos = 1, 0
	}
	l.line += strings.Count(l.src[l.linePos:p], "\n")
	l.linePos = p
	return l.line
}

func (l *lexer) emit(t Token) error {
	if len(l.toks) >= l.maxTokens {
		return Limitf(t.Line, "more than %d tokens", l.maxTokens)
	}
	l.toks = append(l.toks, t)
	return nil
}

// Lex splits src into tokens as Jinja2's lexer does with cloud-init's
// settings: newlines normalised to \n, one trailing newline dropped,
// trim_blocks (a newline right after %} or #} is dropped), and the - and
// + whitespace control of each tag. It makes at most maxTokens tokens and
// nests brackets at most maxDepth deep.
func Lex(src string, maxTokens, maxDepth int) ([]Token, error) {
	if !utf8.ValidString(src) {
		return nil, Errorf(0, "the template is not valid UTF-8")
	}
	if strings.IndexByte(src, '\r') >= 0 {
		src = strings.ReplaceAll(src, "\r\n", "\n")
		src = strings.ReplaceAll(src, "\r", "\n")
	}
	src = strings.TrimSuffix(src, "\n")
	l := &lexer{src: src, maxTokens: maxTokens, maxDepth: maxDepth, line: 1}
	for l.pos < len(l.src) {
		i := nextTag(l.src, l.pos)
		if i < 0 {
			if err := l.emit(Token{Kind: Data, S: l.src[l.pos:], Line: l.lineAt(l.pos)}); err != nil {
				return nil, err
			}
			break
		}
		text, start := l.src[l.pos:i], l.pos
		open := i + 2
		sign := byte(0)
		if open < len(l.src) && (l.src[open] == '-' || l.src[open] == '+') {
			sign = l.src[open]
			open++
		}
		if sign == '-' {
			text = pystr.Rstrip(text)
		}
		if text != "" {
			if err := l.emit(Token{Kind: Data, S: text, Line: l.lineAt(start)}); err != nil {
				return nil, err
			}
		}
		line := l.lineAt(i)
		var err error
		switch l.src[i+1] {
		case '#':
			err = l.comment(open, line)
		case '%':
			if end, ok := rawBegin(l.src, open); ok {
				err = l.raw(end, line)
				break
			}
			if err = l.emit(Token{Kind: BlockBegin, Line: line}); err == nil {
				err = l.tag(open, BlockEnd)
			}
		default:
			if err = l.emit(Token{Kind: VarBegin, Line: line}); err == nil {
				err = l.tag(open, VarEnd)
			}
		}
		if err != nil {
			return nil, err
		}
	}
	if err := l.emit(Token{Kind: EOF, Line: l.lineAt(len(l.src))}); err != nil {
		return nil, err
	}
	return l.toks, nil
}

// nextTag is the offset of the next {{, {% or {# at or after p, or -1.
func nextTag(s string, p int) int {
	for {
		i := strings.IndexByte(s[p:], '{')
		if i < 0 || p+i+1 >= len(s) {
			return -1
		}
		switch s[p+i+1] {
		case '{', '%', '#':
			return p + i
		}
		p += i + 1
	}
}

// comment skips a comment whose text starts at p: to the first #}, with
// the whitespace control of a - or + before it.
func (l *lexer) comment(p, line int) error {
	j := strings.Index(l.src[p:], "#}")
	if j < 0 {
		return Errorf(line, "missing end of comment tag")
	}
	j += p
	end := j + 2
	switch {
	case j > p && l.src[j-1] == '-':
		end = pystr.SkipSpace(l.src, end)
	case j > p && l.src[j-1] == '+':
	default:
		if end < len(l.src) && l.src[end] == '\n' {
			end++
		}
	}
	l.pos = end
	return nil
}

// rawBegin tells whether {% raw %} (or {%- raw -%}) is at p, just after
// {% and its sign, and where it ends.
func rawBegin(s string, p int) (int, bool) {
	q := pystr.SkipSpace(s, p)
	if !strings.HasPrefix(s[q:], "raw") {
		return 0, false
	}
	q = pystr.SkipSpace(s, q+3)
	switch {
	case strings.HasPrefix(s[q:], "-%}"):
		return pystr.SkipSpace(s, q+3), true
	case strings.HasPrefix(s[q:], "%}"):
		return q + 2, true
	}
	return 0, false
}

// raw emits the text of a raw block starting at p, up to its
// {% endraw %}.
func (l *lexer) raw(p, line int) error {
	for q := p; ; {
		i := strings.Index(l.src[q:], "{%")
		if i < 0 {
			return Errorf(line, "missing end of raw directive")
		}
		i += q
		r := i + 2
		sign := byte(0)
		if r < len(l.src) && (l.src[r] == '-' || l.src[r] == '+') {
			sign = l.src[r]
			r++
		}
		r = pystr.SkipSpace(l.src, r)
		if !strings.HasPrefix(l.src[r:], "endraw") {
			q = i + 2
			continue
		}
		r = pystr.SkipSpace(l.src, r+6)
		end := -1
		switch {
		case strings.HasPrefix(l.src[r:], "+%}"):
			end = r + 3
		case strings.HasPrefix(l.src[r:], "-%}"):
			end = pystr.SkipSpace(l.src, r+3)
		case strings.HasPrefix(l.src[r:], "%}"):
			end = r + 2
			if end < len(l.src) && l.src[end] == '\n' {
				end++
			}
		}
		if end < 0 {
			q = i + 2
			continue
		}
		text := l.src[p:i]
		if sign == '-' {
			text = pystr.Rstrip(text)
		}
		if text != "" {
			if err := l.emit(Token{Kind: Data, S: text, Line: l.lineAt(p)}); err != nil {
				return err
			}
		}
		l.pos = end
		return nil
	}
}

// tag lexes the inside of a {% %} or {{ }} tag from p to its end, which
// counts only where every bracket is closed.
func (l *lexer) tag(p int, end Kind) error {
	var balance []byte
	s := l.src
	for {
		p = pystr.SkipSpace(s, p)
		if p >= len(s) {
			return Errorf(l.lineAt(len(s)), "unexpected end of template, expected %s", Token{Kind: end}.Describe())
		}
		line := l.lineAt(p)
		if len(balance) == 0 {
			if q := tagEnd(s, p, end); q >= 0 {
				l.pos = q
				return l.emit(Token{Kind: end, Line: line})
			}
		}
		c := s[p]
		var t Token
		var n int
		var err error
		switch {
		case c >= '0' && c <= '9':
			t, n, err = lexNumber(s, p)
		case c == '\'' || c == '"':
			t, n, err = lexString(s, p)
		case c == '_' || c < utf8.RuneSelf && unicode.IsLetter(rune(c)) || c >= utf8.RuneSelf && isLetterAt(s, p):
			t, n = lexName(s, p)
		default:
			if t, err = l.operator(s, p, line, &balance); err != nil {
				return err
			}
			n = p + len(t.S)
		}
		if err != nil {
			return Errorf(line, "%v", err)
		}
		t.Line = line
		if err := l.emit(t); err != nil {
			return err
		}
		p = n
	}
}

// tagEnd is where the end of a tag (end) at p ends, with its whitespace
// control, or -1 when none is there.
func tagEnd(s string, p int, end Kind) int {
	if end == BlockEnd {
		switch {
		case strings.HasPrefix(s[p:], "+%}"):
			return p + 3
		case strings.HasPrefix(s[p:], "-%}"):
			return pystr.SkipSpace(s, p+3)
		case strings.HasPrefix(s[p:], "%}"):
			q := p + 2
			if q < len(s) && s[q] == '\n' {
				q++
			}
			return q
		}
		return -1
	}
	switch {
	case strings.HasPrefix(s[p:], "-}}"):
		return pystr.SkipSpace(s, p+3)
	case strings.HasPrefix(s[p:], "}}"):
		return p + 2
	}
	return -1
}

// lexName is a name at p.
func lexName(s string, p int) (Token, int) {
	n := p
	for n < len(s) {
		r, w := utf8.DecodeRuneInString(s[n:])
		if r != '_' && !unicode.IsLetter(r) && !unicode.IsDigit(r) {
			break
		}
		n += w
	}
	return Token{Kind: Name, S: s[p:n]}, n
}

// operator is the operator at p, balance the brackets open before it and
// after.
func (l *lexer) operator(s string, p, line int, balance *[]byte) (Token, error) {
	c := s[p]
	op := ""
	for _, o := range [...]string{"//", "**", "==", "!=", ">=", "<="} {
		if strings.HasPrefix(s[p:], o) {
			op = o
			break
		}
	}
	if op == "" && strings.IndexByte("+-/*%~[](){}><=.:|,;", c) >= 0 {
		op = s[p : p+1]
	}
	if op == "" {
		r, _ := utf8.DecodeRuneInString(s[p:])
		return Token{}, Errorf(line, "unexpected character %q", r)
	}
	b := *balance
	switch op {
	case "(":
		b = append(b, ')')
	case "[":
		b = append(b, ']')
	case "{":
		b = append(b, '}')
	case ")", "]", "}":
		if len(b) == 0 {
			return Token{}, Errorf(line, "unexpected '%s'", op)
		}
		if want := b[len(b)-1]; want != op[0] {
			return Token{}, Errorf(line, "unexpected '%s', expected '%c'", op, want)
		}
		b = b[:len(b)-1]
	}
	*balance = b
	if len(b) > l.maxDepth {
		return Token{}, Limitf(line, "brackets nested deeper than %d", l.maxDepth)
	}
	return Token{Kind: Op, S: op}, nil
}

func isLetterAt(s string, p int) bool {
	r, _ := utf8.DecodeRuneInString(s[p:])
	return unicode.IsLetter(r)
}

// digits is the end of Jinja's (\d+_)*\d+ at p, or p when none.
func digits(s string, p int, ok func(byte) bool) int {
	q := p
	for q < len(s) && ok(s[q]) {
		q++
		if q+1 < len(s) && s[q] == '_' && ok(s[q+1]) {
			q++
		}
	}
	return q
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// expEnd is the end of Jinja's e[+-]?D at p, or -1.
func expEnd(s string, p int) int {
	if p >= len(s) || s[p]|0x20 != 'e' {
		return -1
	}
	p++
	if p < len(s) && (s[p] == '+' || s[p] == '-') {
		p++
	}
	if p >= len(s) || !isDigit(s[p]) {
		return -1
	}
	return digits(s, p, isDigit)
}

// lexNumber is Jinja's float_re, else its integer_re, at p.
func lexNumber(s string, p int) (Token, int, error) {
	// float: D ((\.D)? e[+-]?D | \.D), unless right after a dot (a.0.1).
	if p == 0 || s[p-1] != '.' {
		d := digits(s, p, isDigit)
		q := d
		if q+1 < len(s) && s[q] == '.' && isDigit(s[q+1]) {
			q = digits(s, q+1, isDigit)
		}
		end := expEnd(s, q)
		if end < 0 && d+1 < len(s) && s[d] == '.' && isDigit(s[d+1]) {
			end = digits(s, d+1, isDigit)
		}
		if end > 0 {
			// Out of range is inf or 0, as Python's float() has it.
			f, _ := strconv.ParseFloat(strings.ReplaceAll(s[p:end], "_", ""), 64)
			return Token{Kind: Float, F: f}, end, nil
		}
	}
	base, q := 10, p
	if s[p] == '0' && p+2 < len(s) {
		var ok func(byte) bool
		switch s[p+1] | 0x20 {
		case 'b':
			base, ok = 2, func(c byte) bool { return c == '0' || c == '1' }
		case 'o':
			base, ok = 8, func(c byte) bool { return c >= '0' && c <= '7' }
		case 'x':
			base, ok = 16, func(c byte) bool { return isDigit(c) || c|0x20 >= 'a' && c|0x20 <= 'f' }
		}
		if ok != nil {
			e := p + 2
			if s[e] == '_' && e+1 < len(s) && ok(s[e+1]) {
				e++
			}
			if ok(s[e]) {
				q = digits(s, e, ok)
			} else {
				base = 10
			}
		}
	}
	lit := s[p:q]
	if base == 10 {
		if s[p] == '0' {
			q = digits(s, p, func(c byte) bool { return c == '0' })
		} else {
			q = digits(s, p, isDigit)
		}
		lit = s[p:q]
	} else {
		lit = lit[2:]
	}
	i, err := strconv.ParseInt(strings.ReplaceAll(lit, "_", ""), base, 64)
	if err != nil {
		return Token{}, 0, errInt
	}
	return Token{Kind: Int, I: i}, q, nil
}

// errInt is an integer literal past int64, which earlyinit's Jinja does
// not have (Python's integers have no bound).
var errInt = &Error{Msg: "integer literal out of the 64-bit range"}

// lexString is Jinja's string_re at p, its value unescaped as Python's
// unicode-escape codec does.
func lexString(s string, p int) (Token, int, error) {
	q := s[p]
	var b strings.Builder
	for i := p + 1; i < len(s); {
		c := s[i]
		switch {
		case c == q:
			return Token{Kind: String, S: b.String()}, i + 1, nil
		case c != '\\':
			b.WriteByte(c)
			i++
			continue
		}
		if i+1 >= len(s) {
			break
		}
		e := s[i+1]
		i += 2
		switch e {
		case '\n':
		case '\\', '\'', '"':
			b.WriteByte(e)
		case 'n':
			b.WriteByte('\n')
		case 't':
			b.WriteByte('\t')
		case 'r':
			b.WriteByte('\r')
		case 'a':
			b.WriteByte('\a')
		case 'b':
			b.WriteByte('\b')
		case 'f':
			b.WriteByte('\f')
		case 'v':
			b.WriteByte('\v')
		case '0', '1', '2', '3', '4', '5', '6', '7':
			j := i - 1
			for j < len(s) && j < i+2 && s[j] >= '0' && s[j] <= '7' {
				j++
			}
			n, _ := strconv.ParseUint(s[i-1:j], 8, 32)
			b.WriteRune(rune(n))
			i = j
		case 'x', 'u', 'U':
			n := 2
			switch e {
			case 'u':
				n = 4
			case 'U':
				n = 8
			}
			if i+n > len(s) {
				return Token{}, 0, errEscape
			}
			v, err := strconv.ParseUint(s[i:i+n], 16, 32)
			if err != nil || v > unicode.MaxRune {
				return Token{}, 0, errEscape
			}
			b.WriteRune(rune(v))
			i += n
		case 'N':
			return Token{}, 0, &Error{Msg: `\N{...} escapes are not supported`}
		default:
			b.WriteByte('\\')
			b.WriteByte(e)
		}
	}
	return Token{}, 0, &Error{Msg: "unterminated string"}
}

var errEscape = &Error{Msg: `truncated \x, \u or \U escape in a string`}

// Error is a template that does not lex (or parse: package parse's errors
// are these too): its line (0 when none applies) and what is wrong. The
// jinja package's Error is this type.
type Error struct {
	Line int
	Msg  string
	// Limit is set when a bound stopped the work.
	Limit bool
}

func (e *Error) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("line %d: %s", e.Line, e.Msg)
	}
	return e.Msg
}

// Errorf is an Error of line.
func Errorf(line int, format string, args ...any) *Error {
	return &Error{Line: line, Msg: fmt.Sprintf(format, args...)}
}

// Limitf is an Error of line where a bound stopped the work.
func Limitf(line int, format string, args ...any) *Error {
	return &Error{Line: line, Msg: fmt.Sprintf(format, args...), Limit: true}
}
