package selinux

import (
	"errors"
	"fmt"
	"regexp"
	"regexp/syntax"
	"strings"
)

// maxRegexLen is libselinux's bound on a regular expression: longer ones
// fail to compile there.
const maxRegexLen = 4096

// metaChars are the characters that make a file_contexts path a regular
// expression rather than a literal path (libselinux's
// regex_has_meta_chars).
const metaChars = ".^$?*+|[({])}"

// literalEscapes are the characters a literal path may escape with a
// backslash and stay literal ("\." in "/etc/ld\.so\.cache"); any other
// escape makes it a regular expression.
const literalEscapes = metaChars + "-_,"

// hasMeta tells whether a file_contexts path is a regular expression, as
// libselinux decides it.
func hasMeta(re string) bool {
	for i := 0; i < len(re); i++ {
		switch c := re[i]; {
		case strings.IndexByte(metaChars, c) >= 0:
			return true
		case c == '\\':
			i++
			if i >= len(re) || strings.IndexByte(literalEscapes, re[i]) < 0 {
				return true
			}
		}
	}
	return false
}

// simplify returns a literal path with its escapes removed ("/etc/ld\.so"
// is "/etc/ld.so"); ok is false if s is not a literal (hasMeta).
func simplify(s string) (lit string, ok bool) {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case strings.IndexByte(metaChars, c) >= 0:
			return "", false
		case c == '\\':
			i++
			if i >= len(s) || strings.IndexByte(literalEscapes, s[i]) < 0 {
				return "", false
			}
			b.WriteByte(s[i])
		default:
			b.WriteByte(c)
		}
	}
	return b.String(), true
}

// endAnchor is PCRE's "$" without multiline: the end of the subject or
// before a newline that ends it. RE2's "$" is only the end.
const endAnchor = `(?:\n?\z)`

// compileRegex compiles a file_contexts regular expression the way
// libselinux does with PCRE2: anchored as "^" + re + "$" (not grouped, so
// "a|b" is "^a|b$", as there), with PCRE2_DOTALL ("." matches a newline).
// The PCRE syntax is translated to RE2's where the two differ; what RE2
// lacks (backreferences, lookaround, atomic groups, possessive
// quantifiers, \v and \R classes, more than 1000 repetitions) is an error,
// and the caller skips the entry. Matching is on the path's bytes
// as UTF-8, where PCRE2 without PCRE2_UTF sees bytes: the same for
// ASCII paths; "\s" lacks PCRE's vertical tab.
func compileRegex(re string) (*regexp.Regexp, error) {
	expr, _, err := checkRegex(re)
	if err != nil {
		return nil, err
	}
	return regexp.Compile(expr)
}

// checkRegex is compileRegex's first half: the RE2 expression for re,
// parsed (about a fifth of the cost of compiling) to find what RE2
// refuses, and the literal text every match starts with.
func checkRegex(re string) (expr, prefix string, err error) {
	if len(re) >= maxRegexLen {
		return "", "", fmt.Errorf("longer than libselinux's %d bytes", maxRegexLen)
	}
	t, err := translate(re)
	if err != nil {
		return "", "", err
	}
	expr = "(?s)^" + t + endAnchor
	tree, err := syntax.Parse(expr, syntax.Perl)
	if err != nil {
		return "", "", err
	}
	return expr, literalPrefix(tree), nil
}

// literalPrefix is the text every match of the anchored expression re
// starts with: the literals that follow its "^" at the top level. An
// alternation at the top ("^a|b$") has none.
func literalPrefix(re *syntax.Regexp) string {
	if re.Op != syntax.OpConcat || len(re.Sub) == 0 || re.Sub[0].Op != syntax.OpBeginText {
		return ""
	}
	var b strings.Builder
	for _, s := range re.Sub[1:] {
		if s.Op != syntax.OpLiteral || s.Flags&syntax.FoldCase != 0 {
			break
		}
		b.WriteString(string(s.Rune))
	}
	return b.String()
}

// errUnsupported is a PCRE construct RE2 has no equivalent for.
var errUnsupported = errors.New("not supported by RE2")

// translate rewrites the PCRE constructs whose RE2 spelling or meaning
// differs: "$" and "\Z" (end anchors that allow a final newline), "\Q...\E"
// quoting (done here so "$" inside it stays literal); and refuses
// backreferences, "\v" (a class in PCRE, a character in RE2) and the
// group kinds RE2 lacks. Everything else is passed on for RE2 to accept
// or refuse.
func translate(re string) (string, error) {
	var b strings.Builder
	for i := 0; i < len(re); i++ {
		c := re[i]
		switch c {
		case '\\':
			if i+1 >= len(re) {
				return "", errors.New("trailing backslash")
			}
			i++
			e := re[i]
			switch {
			case e >= '1' && e <= '9':
				return "", fmt.Errorf(`backreference \%c: %w`, e, errUnsupported)
			case e == 'v' || e == 'V' || e == 'R' || e == 'h' || e == 'H' || e == 'X' || e == 'K' || e == 'G':
				return "", fmt.Errorf(`\%c: %w`, e, errUnsupported)
			case e == 'Z':
				b.WriteString(endAnchor)
			case e == 'E':
				// A stray \E is ignored by PCRE.
			case e == 'Q':
				end := strings.Index(re[i+1:], `\E`)
				lit := re[i+1:]
				if end >= 0 {
					lit = re[i+1 : i+1+end]
					i += end + 2
				} else {
					i = len(re)
				}
				b.WriteString(regexp.QuoteMeta(lit))
			default:
				b.WriteByte('\\')
				b.WriteByte(e)
			}
		case '$':
			b.WriteString(endAnchor)
		case '[':
			n, err := class(re[i:], &b)
			if err != nil {
				return "", err
			}
			i += n - 1
		case '(':
			if strings.HasPrefix(re[i:], "(?") && !groupOK(re[i+2:]) {
				return "", fmt.Errorf("group %.4q...: %w", re[i:], errUnsupported)
			}
			b.WriteByte(c)
		default:
			b.WriteByte(c)
		}
	}
	return b.String(), nil
}

// groupOK tells whether the text after "(?" starts a group RE2 knows:
// non-capturing "(?:", named "(?P<" or "(?<" (not lookbehind), or flags.
// Flags RE2 lacks ("(?x)") are left for RE2 to refuse.
func groupOK(s string) bool {
	switch {
	case s == "":
		return false
	case strings.HasPrefix(s, "<=") || strings.HasPrefix(s, "<!"):
		return false // lookbehind
	case s[0] == ':' || s[0] == '<' || strings.HasPrefix(s, "P<"):
		return true
	case s[0] == '-' || (s[0] >= 'a' && s[0] <= 'z') || (s[0] >= 'A' && s[0] <= 'Z'):
		return true
	}
	return false // lookahead, atomic, comments, branch reset, recursion...
}

// class copies the bracket expression at the start of s ("[...]") to b and
// returns its length. A "]" first (or after "^") is a literal, as in both
// syntaxes; "[:name:]" is a POSIX class; "\v" and "\Q" are refused.
func class(s string, b *strings.Builder) (int, error) {
	i := 1
	if i < len(s) && s[i] == '^' {
		i++
	}
	if i < len(s) && s[i] == ']' {
		i++
	}
	for i < len(s) {
		switch s[i] {
		case ']':
			b.WriteString(s[:i+1])
			return i + 1, nil
		case '\\':
			if i+1 < len(s) {
				switch s[i+1] {
				case 'v', 'V', 'h', 'H', 'Q', 'E', 'b':
					return 0, fmt.Errorf(`\%c in a bracket expression: %w`, s[i+1], errUnsupported)
				}
			}
			i += 2
			continue
		case '[':
			if strings.HasPrefix(s[i:], "[:") {
				if end := strings.Index(s[i+2:], ":]"); end >= 0 {
					i += 2 + end + 2
					continue
				}
			}
		}
		i++
	}
	return 0, errors.New("missing closing ]")
}
