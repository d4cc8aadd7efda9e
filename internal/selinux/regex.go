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

// isMeta and isLiteralEscape are metaChars and literalEscapes as tables:
// Load looks at every character of every entry.
var isMeta, isLiteralEscape = byteSet(metaChars), byteSet(literalEscapes)

func byteSet(s string) (t [256]bool) {
	for i := 0; i < len(s); i++ {
		t[s[i]] = true
	}
	return t
}

// hasMeta tells whether a file_contexts path is a regular expression, as
// libselinux decides it.
func hasMeta(re string) bool {
	_, ok := simplify(re)
	return !ok
}

// simplify returns a literal path with its escapes removed ("/etc/ld\.so"
// is "/etc/ld.so"); ok is false if s is not a literal (hasMeta).
func simplify(s string) (lit string, ok bool) {
	var b []byte // nil while s[:i] is the literal as it stands: most have no escape
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case isMeta[c]:
			return "", false
		case c == '\\':
			if i+1 >= len(s) || !isLiteralEscape[s[i+1]] {
				return "", false
			}
			if b == nil {
				b = append(make([]byte, 0, len(s)), s[:i]...)
			}
			i++
			b = append(b, s[i])
		case b != nil:
			b = append(b, c)
		}
	}
	if b == nil {
		return s, true
	}
	return string(b), true
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
// and so are Unicode property classes (errUnicodeClass) and an expression
// whose program would be over maxRegexInsts; the caller skips the entry.
// Matching is on the path's bytes as UTF-8, where PCRE2 without PCRE2_UTF
// sees bytes: the same for ASCII paths; "\s" lacks PCRE's vertical tab.
func compileRegex(re string) (*regexp.Regexp, error) {
	expr, _, _, err := checkRegex(re)
	if err != nil {
		return nil, err
	}
	return regexp.Compile(expr)
}

// checkRegex is compileRegex's first half: the RE2 expression for re,
// parsed (about a fifth of the cost of compiling) to find what RE2
// refuses, the literal text every match starts with, and the size of
// its compiled program (progSize), refused over maxRegexInsts.
func checkRegex(re string) (expr, prefix string, insts int, err error) {
	expr, err = toRE2(re)
	if err != nil {
		return "", "", 0, err
	}
	prefix, insts, err = parseRE2(expr)
	if err != nil {
		return "", "", 0, err
	}
	return expr, prefix, insts, nil
}

// toRE2 is the RE2 expression for re, anchored, not yet parsed.
func toRE2(re string) (string, error) {
	if len(re) >= maxRegexLen {
		return "", fmt.Errorf("longer than libselinux's %d bytes", maxRegexLen)
	}
	t, err := translate(re)
	if err != nil {
		return "", err
	}
	return "(?s)^" + t + endAnchor, nil
}

// parseRE2 parses toRE2's expr: the literal text every match starts
// with and the size of its program, refused over maxRegexInsts.
func parseRE2(expr string) (prefix string, insts int, err error) {
	tree, err := syntax.Parse(expr, syntax.Perl)
	if err != nil {
		return "", 0, err
	}
	n := progSize(tree)
	if n > maxRegexInsts {
		return "", 0, fmt.Errorf("%w: compiled program of %d instructions, over the limit of %d", errTooBig, n, maxRegexInsts)
	}
	return literalPrefix(tree), int(n), nil
}

// maxRegexInsts bounds one expression's compiled program, in
// instructions (progSize). Nine bytes of source, ".{0,1000}", make 2,000
// of them: a 3,964 byte entry of 440 of those compiles to 880,010, for
// which regexp.Compile takes 0.9 s and allocates 360 MiB, keeping 75 MiB
// (in the VM, 4 s). An instruction costs about 90 bytes kept and
// 430 allocated. The largest of Debian 12's 2,685 expressions
// (file_contexts and .homedirs) has 78 instructions
// ("/usr/.*/gems/.*/passenger-.*/ext/apache2/ApplicationPoolServerExecutable");
// the limit is 12.8 times that.
const maxRegexInsts = 1000

// maxPolicyInsts bounds the compiled programs of all a policy's
// expressions together. Debian 12's add up to 79,190 instructions; the
// budget is ten times that, 800,000. Every expression compiled (a lookup
// compiles only those it runs), that is at most about 70 MiB kept and as
// long as the 880,010 instruction entry above takes.
const maxPolicyInsts = 800_000

// maxPolicyParse bounds the RE2 expressions Load parses, in bytes, all
// together, those it then skips too: parsing is the check's own cost.
// It is about linear in the expression's length, but up to 200 ns and
// 100 bytes allocated a byte: "$" becomes the nine bytes "(?:\n?\z)", a
// 4 KB entry of "$"s takes 7 ms, and the four thousand a 16 MiB
// file_contexts holds took 30 s; within the budget, 1.3 s, most of it
// translating the entries skipped unparsed. Debian 12's expressions are
// 103,099 bytes; the budget is ten times that, rounded up to 1 MiB.
const maxPolicyParse = 1 << 20

// errTooBig is an expression whose compiled program is over
// maxRegexInsts, or over what is left of maxPolicyInsts, or one over
// what is left of maxPolicyParse.
var errTooBig = errors.New("too big")

// progSize is the number of instructions in the program regexp.Compile
// makes of the parsed expression re, len(syntax.Compile(re.Simplify()).Inst),
// counted on re without making either. Simplify expands counted
// repetitions ("x{2,5}" is "xx(x(x(x)?)?)?"), which is what makes programs
// big, so the count must not: it follows Simplify's rules and the
// compiler's on re's nodes, a walk of each once. For the 880,010
// instruction entry (maxRegexInsts), parsing and counting take under a
// millisecond and 160 KB, where Simplify and Compile take 1.6 s and 300
// MiB. Saturated at satInsts.
func progSize(re *syntax.Regexp) int64 {
	return min(count(re).n+2, satInsts) // InstFail first, InstMatch last
}

// satInsts saturates progSize's arithmetic.
const satInsts = 1 << 40

// frag is what compiling a simplified expression appends.
type frag struct {
	n        int64 // instructions
	nullable bool  // it can match "" (the compiler's frag.nullable: decides a star's shape)
	fail     bool  // it cannot match (OpNoMatch): the compiler's empty frag
	// The simplified expression's operator and its non-greedy flag:
	// Simplify folds x** into x*, and any repetition of "" into "".
	op        syntax.Op
	nonGreedy bool
}

// count is the frag of re.Simplify().
func count(re *syntax.Regexp) frag {
	switch re.Op {
	case syntax.OpNoMatch:
		return frag{fail: true, op: re.Op}
	case syntax.OpEmptyMatch:
		return frag{n: 1, nullable: true, op: re.Op} // InstNop
	case syntax.OpLiteral:
		if len(re.Rune) == 0 {
			return frag{n: 1, nullable: true, op: re.Op}
		}
		return frag{n: int64(len(re.Rune)), op: re.Op} // one InstRune each
	case syntax.OpCharClass, syntax.OpAnyChar, syntax.OpAnyCharNotNL:
		return frag{n: 1, op: re.Op}
	case syntax.OpBeginLine, syntax.OpEndLine, syntax.OpBeginText, syntax.OpEndText,
		syntax.OpWordBoundary, syntax.OpNoWordBoundary:
		return frag{n: 1, nullable: true, op: re.Op} // InstEmptyWidth
	case syntax.OpCapture:
		f := count(re.Sub[0])
		f.n = min(f.n+2, satInsts)
		f.op, f.nonGreedy = re.Op, false
		return f
	case syntax.OpStar, syntax.OpPlus, syntax.OpQuest:
		return unary(re.Op, re.Flags&syntax.NonGreedy != 0, count(re.Sub[0]))
	case syntax.OpConcat:
		if len(re.Sub) == 0 {
			return frag{n: 1, nullable: true, op: re.Op} // InstNop
		}
		c := frag{nullable: true}
		for _, sub := range re.Sub {
			c = cat(c, count(sub), 1)
		}
		return c
	case syntax.OpAlternate:
		a := frag{fail: true, op: re.Op}
		for _, sub := range re.Sub {
			f := count(sub)
			a.n = min(a.n+f.n, satInsts)
			switch {
			case f.fail: // left out
			case a.fail:
				a.fail, a.nullable = false, f.nullable
			default:
				a.n = min(a.n+1, satInsts) // InstAlt
				a.nullable = a.nullable || f.nullable
			}
		}
		return a
	case syntax.OpRepeat:
		return repeat(re)
	}
	return frag{n: satInsts, op: re.Op} // an operator this does not know: too big
}

// repeat is the frag of a simplified counted repetition.
func repeat(re *syntax.Regexp) frag {
	lo, hi, ng := int64(re.Min), int64(re.Max), re.Flags&syntax.NonGreedy != 0
	if lo == 0 && hi == 0 {
		return frag{n: 1, nullable: true, op: syntax.OpEmptyMatch}
	}
	x := count(re.Sub[0])
	switch {
	case hi == -1 && lo == 0:
		return unary(syntax.OpStar, ng, x)
	case hi == -1 && lo == 1:
		return unary(syntax.OpPlus, ng, x)
	case hi == -1: // x{3,} is xxx+
		return cat(cat(frag{nullable: true}, x, lo-1), unary(syntax.OpPlus, ng, x), 1)
	case lo == 1 && hi == 1:
		return x
	}
	var prefix frag // x{2,5} is xx(x(x(x)?)?)?: lo copies, then the rest nested
	if lo > 0 {
		prefix = cat(frag{nullable: true}, x, lo)
	}
	if hi > lo {
		suffix := unary(syntax.OpQuest, ng, x)
		if hi-lo > 1 {
			// Each further level is a new "(?:x(...))?": x and an InstAlt.
			suffix = frag{n: min(suffix.n+(hi-lo-1)*(x.n+1), satInsts), nullable: true, op: syntax.OpQuest, nonGreedy: ng}
		}
		if lo == 0 {
			return suffix
		}
		prefix = cat(prefix, suffix, 1)
	}
	if lo > 0 {
		return prefix
	}
	return frag{fail: true, op: syntax.OpNoMatch} // min > max: Simplify's "impossible match"
}

// cat is a followed by k copies of b, as the compiler concatenates.
func cat(a, b frag, k int64) frag {
	if k == 0 {
		return a
	}
	c := frag{n: min(a.n+k*b.n, satInsts), op: syntax.OpConcat}
	c.fail = a.fail || b.fail
	c.nullable = !c.fail && a.nullable && b.nullable
	return c
}

// unary is the frag of x*, x+ or x? (op), x's being f, as Simplify folds
// it and the compiler builds it.
func unary(op syntax.Op, nonGreedy bool, f frag) frag {
	if f.op == syntax.OpEmptyMatch || (f.op == op && f.nonGreedy == nonGreedy) {
		return f
	}
	u := frag{op: op, nonGreedy: nonGreedy}
	switch op {
	case syntax.OpStar:
		// A loop around x; (x+)? when x can match "".
		u.n, u.nullable = min(f.n+1, satInsts), true
		if f.nullable {
			u.n = min(f.n+2, satInsts)
		}
	case syntax.OpPlus:
		u.n, u.nullable, u.fail = min(f.n+1, satInsts), f.nullable, f.fail
	case syntax.OpQuest:
		u.n, u.nullable = min(f.n+1, satInsts), true
	}
	return u
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

// errUnicodeClass refuses Unicode property classes ("\pL", "\p{Greek}").
// PCRE2 without PCRE2_UTF, as libselinux compiles, applies them to single
// bytes, RE2 to UTF-8 characters: they differ on every non-ASCII path,
// and no policy uses them. And they are big: RE2 expands each to its
// table, hundreds of ranges, which a program's instruction count does not
// show (a 4 KB entry of "\pL"s parses in 80 ms and 17 MiB, and compiles
// to 1,367 instructions that keep 7 MiB).
var errUnicodeClass = fmt.Errorf("Unicode property class: %w", errUnsupported)

// translate rewrites the PCRE constructs whose RE2 spelling or meaning
// differs: "$" and "\Z" (end anchors that allow a final newline), "\Q...\E"
// quoting (done here so "$" inside it stays literal); and refuses
// backreferences, "\v" (a class in PCRE, a character in RE2), Unicode
// property classes (errUnicodeClass) and the group kinds RE2 lacks.
// Everything else is passed on for RE2 to accept or refuse.
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
			case e == 'p' || e == 'P':
				return "", fmt.Errorf(`\%c: %w`, e, errUnicodeClass)
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
// returns its length (b nil: only the length). A "]" first (or after "^") is a literal, as in both
// syntaxes; "[:name:]" is a POSIX class; "\v", "\Q" and "\p" are refused.
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
			if b != nil {
				b.WriteString(s[:i+1])
			}
			return i + 1, nil
		case '\\':
			if i+1 < len(s) {
				switch s[i+1] {
				case 'v', 'V', 'h', 'H', 'Q', 'E', 'b':
					return 0, fmt.Errorf(`\%c in a bracket expression: %w`, s[i+1], errUnsupported)
				case 'p', 'P':
					return 0, fmt.Errorf(`\%c in a bracket expression: %w`, s[i+1], errUnicodeClass)
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

// fixedPrefix is the text every path matching the file_contexts
// expression re starts with, read from re's characters without parsing
// it (a hundredth of the cost): its literal ASCII characters, escaped
// punctuation included, up to the first operator, less the last one
// when a quantifier follows it ("/etc/ab?" is "/etc/a"); "" when re has
// an alternation outside any group and bracket expression ("^a|b$"
// need not start with a), or anything this reading does not follow. It
// is never longer than literalPrefix of the parsed expression, which
// every match starts with (FuzzFixedPrefix), so a path that does not
// start with it cannot match re: libselinux's "stem" idea, made a
// filter on the whole fixed prefix. OpenRoot's policy checks and
// compiles an expression only when a lookup's path starts with it.
func fixedPrefix(re string) string {
	if topAlternation(re) {
		return ""
	}
	var b []byte // nil while re[:i] is the prefix as it stands
	i := 0
	for ; i < len(re); i++ {
		c := re[i]
		if c == '\\' {
			if i+1 >= len(re) || !isPunct(re[i+1]) {
				break // \d, \Q, \1, a trailing backslash...
			}
			if b == nil {
				b = append(make([]byte, 0, len(re)), re[:i]...)
			}
			i++
			b = append(b, re[i])
			continue
		}
		if isMeta[c] || c >= 0x80 { // a quantifier would take a whole UTF-8 character: Load refuses them anyway
			break
		}
		if b != nil {
			b = append(b, c)
		}
	}
	prefix := re[:i]
	if b != nil {
		prefix = string(b)
	}
	if i < len(re) && strings.IndexByte("?*+{", re[i]) >= 0 && prefix != "" {
		prefix = prefix[:len(prefix)-1] // the quantified character may be absent
	}
	return prefix
}

// isPunct tells whether c is ASCII punctuation: escaped, it stands for
// itself in PCRE and RE2 alike.
func isPunct(c byte) bool {
	return c > ' ' && c < 0x7f && !(c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z')
}

// topAlternation tells whether re has a "|" outside every group, bracket
// expression and \Q...\E quote, or cannot be followed (an unbalanced
// ")", an unterminated bracket expression): fixedPrefix then has none.
func topAlternation(re string) bool {
	depth := 0
	for i := 0; i < len(re); i++ {
		switch re[i] {
		case '\\':
			if strings.HasPrefix(re[i:], `\Q`) {
				end := strings.Index(re[i+2:], `\E`)
				if end < 0 {
					return false // quoted to the end
				}
				i += 2 + end + 1
				continue
			}
			i++
		case '[':
			n, err := class(re[i:], nil)
			if err != nil {
				return true
			}
			i += n - 1
		case '(':
			depth++
		case ')':
			if depth--; depth < 0 {
				return true
			}
		case '|':
			if depth == 0 {
				return true
			}
		}
	}
	return false
}
