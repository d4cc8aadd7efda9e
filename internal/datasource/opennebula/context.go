package opennebula

import (
	"errors"
	"fmt"
	"strings"
)

// ParseContext reads context.sh, a POSIX shell fragment of variable
// assignments, without running a shell: cloud-init runs it with sh -e and
// diffs the variables before and after, so whatever else context.sh holds
// is run too (as the user nobody). Here only what OpenNebula writes,
// and what a person writing one by hand would, is understood:
//
//   - NAME=WORD assignments, several on a line, separated by blanks, ";"
//     or line breaks, optionally after "export";
//   - a WORD made of unquoted text (a backslash quotes the next character,
//     and removes a line break), '...' (literal: OpenNebula quotes every
//     value so, writing a quote inside as quote, backslash, quote, quote)
//     and "..." (where a backslash quotes only $ ` " \ and a line break);
//   - comments, from a "#" that begins a word to the end of the line.
//
// Anything else is an error naming the line: a command, a parameter
// expansion ($VAR, ${VAR}, $(...)), a backquote, an operator (| & < > ( )),
// an unterminated quote. A literal "$" not followed by a name, "{" or "("
// is kept as it is, as the shell keeps it.
//
// The result maps each variable to its last value; cloud-init's
// EXCLUDED_VARS (the shell's own changing variables) are left out.
func ParseContext(src string) (map[string]string, error) {
	p := &parser{src: src, line: 1}
	vars := map[string]string{}
	for {
		p.skipBlanks()
		if p.eof() {
			break
		}
		switch c := p.peek(); {
		case c == '\n':
			p.next()
			continue
		case c == '#':
			p.skipComment()
			continue
		case c == ';':
			return nil, p.errorf("unexpected \";\"")
		}
		if err := p.statement(vars); err != nil {
			return nil, err
		}
	}
	for _, v := range excludedVars {
		delete(vars, v)
	}
	return vars, nil
}

// excludedVars are cloud-init's EXCLUDED_VARS: variables the shell changes
// by itself, never taken from context.sh.
var excludedVars = []string{"EPOCHREALTIME", "EPOCHSECONDS", "RANDOM", "LINENO", "SECONDS", "_", "SRANDOM", "__v"}

type parser struct {
	src  string
	pos  int
	line int
}

func (p *parser) eof() bool  { return p.pos >= len(p.src) }
func (p *parser) peek() byte { return p.src[p.pos] }

func (p *parser) next() byte {
	c := p.src[p.pos]
	p.pos++
	if c == '\n' {
		p.line++
	}
	return c
}

func (p *parser) errorf(format string, args ...any) error {
	return fmt.Errorf("line %d: %s", p.line, fmt.Sprintf(format, args...))
}

// skipBlanks skips blanks and backslash-newline continuations.
func (p *parser) skipBlanks() {
	for !p.eof() {
		switch {
		case p.peek() == ' ' || p.peek() == '\t':
			p.next()
		case strings.HasPrefix(p.src[p.pos:], "\\\n"):
			p.next()
			p.next()
		default:
			return
		}
	}
}

func (p *parser) skipComment() {
	for !p.eof() && p.peek() != '\n' {
		p.next()
	}
}

// statement reads one simple command: assignments up to a line break, ";"
// or a comment.
func (p *parser) statement(vars map[string]string) error {
	first := true
	for {
		p.skipBlanks()
		if p.eof() {
			return nil
		}
		switch p.peek() {
		case '\n':
			p.next()
			return nil
		case ';':
			p.next()
			return nil
		case '#':
			p.skipComment()
			return nil
		}
		line := p.line
		if first && p.keyword("export") {
			first = false
			continue
		}
		first = false
		name, ok := p.name()
		if !ok || p.eof() || p.peek() != '=' {
			word := name
			if word == "" {
				word = p.src[p.pos:min(len(p.src), p.pos+20)]
				if i := strings.IndexAny(word, " \t\n"); i >= 0 {
					word = word[:i]
				}
			}
			return fmt.Errorf("line %d: %q is not a variable assignment (context.sh is read, not run)", line, word)
		}
		p.next() // '='
		v, err := p.word()
		if err != nil {
			return err
		}
		vars[name] = v
	}
}

// keyword consumes kw if it is a whole word here.
func (p *parser) keyword(kw string) bool {
	if !strings.HasPrefix(p.src[p.pos:], kw) {
		return false
	}
	end := p.pos + len(kw)
	if end < len(p.src) && !strings.ContainsRune(" \t\n;", rune(p.src[end])) {
		return false
	}
	p.pos = end
	return true
}

// name reads a shell variable name.
func (p *parser) name() (string, bool) {
	start := p.pos
	for !p.eof() {
		c := p.peek()
		if c == '_' || c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || p.pos > start && c >= '0' && c <= '9' {
			p.pos++
			continue
		}
		break
	}
	return p.src[start:p.pos], p.pos > start
}

// errExpansion is the reason a "$" or "`" is refused.
var errExpansion = errors.New("shell expansions ($VAR, ${...}, $(...), `...`) are not supported: context.sh is read, not run")

// word reads an assignment's value, up to an unquoted blank, line break,
// ";" or the end.
func (p *parser) word() (string, error) {
	var b strings.Builder
	for !p.eof() {
		c := p.peek()
		switch c {
		case ' ', '\t', '\n', ';':
			return b.String(), nil
		case '\'':
			start := p.line
			p.next()
			i := strings.IndexByte(p.src[p.pos:], '\'')
			if i < 0 {
				return "", fmt.Errorf("line %d: unterminated '", start)
			}
			for j := 0; j < i; j++ {
				b.WriteByte(p.next())
			}
			p.next()
		case '"':
			if err := p.doubleQuoted(&b); err != nil {
				return "", err
			}
		case '\\':
			p.next()
			if p.eof() {
				b.WriteByte('\\') // sh keeps a trailing backslash
				continue
			}
			if n := p.next(); n != '\n' {
				b.WriteByte(n)
			}
		case '$':
			if err := p.dollar(&b); err != nil {
				return "", err
			}
		case '`':
			return "", p.errorf("%v", errExpansion)
		case '|', '&', '<', '>', '(', ')':
			return "", p.errorf("%q: shell operators are not supported: context.sh is read, not run", c)
		default:
			b.WriteByte(p.next())
		}
	}
	return b.String(), nil
}

// doubleQuoted reads "..." into b.
func (p *parser) doubleQuoted(b *strings.Builder) error {
	start := p.line
	p.next()
	for {
		if p.eof() {
			return fmt.Errorf("line %d: unterminated \"", start)
		}
		switch c := p.peek(); c {
		case '"':
			p.next()
			return nil
		case '\\':
			p.next()
			if p.eof() {
				return fmt.Errorf("line %d: unterminated \"", start)
			}
			switch n := p.next(); n {
			case '$', '`', '"', '\\':
				b.WriteByte(n)
			case '\n':
			default:
				b.WriteByte('\\')
				b.WriteByte(n)
			}
		case '$':
			if err := p.dollar(b); err != nil {
				return err
			}
		case '`':
			return p.errorf("%v", errExpansion)
		default:
			b.WriteByte(p.next())
		}
	}
}

// dollar handles a "$": an expansion is an error; a "$" that begins none
// is kept.
func (p *parser) dollar(b *strings.Builder) error {
	p.next()
	if !p.eof() {
		c := p.peek()
		if c == '{' || c == '(' || c == '_' || c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || strings.IndexByte("@*#?-$!", c) >= 0 {
			return p.errorf("%v", errExpansion)
		}
	}
	b.WriteByte('$')
	return nil
}
