// Package pystr is Python's str methods and literals as earlyinit needs
// them (its Jinja, Python's %-formatting in internal/pyfmt, the modules'
// splitlines): white space as str.isspace has it, case mapping, splitting,
// int() and float() of a string, repr() and json.dumps of a string. It
// knows nothing of templates: its functions take and return Go strings.
package pystr

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// IsSpace is Python's str.isspace for one character.
func IsSpace(r rune) bool {
	switch r {
	case ' ', '\t', '\n', '\v', '\f', '\r', 0x1c, 0x1d, 0x1e, 0x1f, 0x85:
		return true
	}
	return r > 0x7f && unicode.IsSpace(r) || r >= 0x2000 && r <= 0x200a || r == 0x2028 || r == 0x2029 || r == 0x202f || r == 0x205f || r == 0x3000 || r == 0x1680 || r == 0xa0
}

// SkipSpace is the end of the white space (Python's \s) at p.
func SkipSpace(s string, p int) int {
	for p < len(s) {
		r, w := utf8.DecodeRuneInString(s[p:])
		if !IsSpace(r) {
			break
		}
		p += w
	}
	return p
}

// Rstrip is Python's str.rstrip().
func Rstrip(s string) string { return strings.TrimRightFunc(s, IsSpace) }

// Strip is Python's str.strip().
func Strip(s string) string { return strings.TrimFunc(s, IsSpace) }

// SplitSpace is Python's str.split() with maxsplit n.
func SplitSpace(s string, n int64) []any {
	out := []any{}
	for {
		s = strings.TrimLeftFunc(s, IsSpace)
		if s == "" {
			return out
		}
		if n == 0 {
			return append(out, Rstrip(s))
		}
		i := strings.IndexFunc(s, IsSpace)
		if i < 0 {
			return append(out, s)
		}
		out = append(out, s[:i])
		s = s[i:]
		n--
	}
}

// ParseInt is Python's int(s, base) for bases 2 to 36 and 0.
func ParseInt(s string, base int64) (int64, bool) {
	s = Strip(s)
	neg := false
	if s != "" && (s[0] == '+' || s[0] == '-') {
		neg = s[0] == '-'
		s = s[1:]
	}
	if len(s) > 1 && s[0] == '0' {
		p := int64(0)
		switch s[1] | 0x20 {
		case 'x':
			p = 16
		case 'o':
			p = 8
		case 'b':
			p = 2
		}
		if p != 0 && (base == 0 || base == p) {
			base, s = p, strings.TrimPrefix(s[2:], "_")
		}
	}
	if base == 0 {
		base = 10
		if strings.Trim(s, "0_") == "" && s != "" && s[0] == '0' {
			s = "0"
		} else if s != "" && s[0] == '0' {
			return 0, false
		}
	}
	if base < 2 || base > 36 || s == "" || s[0] == '_' || s[len(s)-1] == '_' || strings.Contains(s, "__") {
		return 0, false
	}
	u, err := strconv.ParseUint(strings.ReplaceAll(s, "_", ""), int(base), 64)
	if err != nil || u > 1<<63 || !neg && u == 1<<63 {
		return 0, false
	}
	if neg {
		return -int64(u), true
	}
	return int64(u), true
}

// ParseFloat is Python's float(s) of a string.
func ParseFloat(s string) (float64, bool) {
	s = Strip(s)
	t := strings.TrimLeft(s, "+-")
	if len(s)-len(t) > 1 {
		return 0, false
	}
	switch strings.ToLower(t) {
	case "inf", "infinity", "nan":
		f, err := strconv.ParseFloat(s, 64)
		return f, err == nil
	}
	// digits, one dot, an exponent; underscores only between digits.
	seenDigit, seenDot, seenExp := false, false, false
	for i := 0; i < len(t); i++ {
		c := t[i]
		switch {
		case isDigit(c):
			seenDigit = true
		case c == '_':
			if i == 0 || i+1 >= len(t) || !isDigit(t[i-1]) || !isDigit(t[i+1]) {
				return 0, false
			}
		case c == '.' && !seenDot && !seenExp:
			seenDot = true
		case (c == 'e' || c == 'E') && seenDigit && !seenExp:
			seenExp = true
			if i+1 < len(t) && (t[i+1] == '+' || t[i+1] == '-') {
				i++
			}
			if i+1 >= len(t) || !isDigit(t[i+1]) {
				return 0, false
			}
		default:
			return 0, false
		}
	}
	if !seenDigit {
		return 0, false
	}
	f, err := strconv.ParseFloat(strings.ReplaceAll(s, "_", ""), 64)
	if err != nil && !math.IsInf(f, 0) && f != 0 {
		return 0, false
	}
	return f, true
}

// Capitalize is Python's str.capitalize.
func Capitalize(s string) string {
	r, w := utf8.DecodeRuneInString(s)
	if w == 0 {
		return s
	}
	t := string(unicode.ToTitle(r))
	switch r {
	case 'ß':
		t = "Ss"
	case 'ﬀ', 'ﬁ', 'ﬂ', 'ﬃ', 'ﬄ', 'ﬅ', 'ﬆ', 'ŉ':
		u := []rune(Upper(string(r)))
		t = string(u[0]) + strings.ToLower(string(u[1:]))
	}
	return t + Lower(s[w:])
}

// Upper is Python's str.upper: Unicode's full upper-casing, its
// special cases (ß is SS) included.
func Upper(s string) string {
	if !strings.ContainsAny(s, "ßﬀﬁﬂﬃﬄﬅﬆŉ") {
		return strings.ToUpper(s)
	}
	return strings.ToUpper(strings.NewReplacer("ß", "SS", "ﬀ", "FF", "ﬁ", "FI", "ﬂ", "FL", "ﬃ", "FFI", "ﬄ", "FFL", "ﬅ", "ST", "ﬆ", "ST", "ŉ", "ʼN").Replace(s))
}

// Lower is Python's str.lower: İ is i and a combining dot above.
func Lower(s string) string {
	return strings.ToLower(strings.ReplaceAll(s, "İ", "i\u0307"))
}

// Title is Jinja's do_title: each word (after -, white space, (, {, [
// or <) upper-cased first, lower-cased after.
func Title(s string) string {
	var b strings.Builder
	sep := func(r rune) bool { return r == '-' || IsSpace(r) || r == '(' || r == '{' || r == '[' || r == '<' }
	start := true
	for _, r := range s {
		switch {
		case sep(r):
			b.WriteRune(r)
			start = true
		case start:
			b.WriteString(Upper(string(r)))
			start = false
		default:
			b.WriteString(Lower(string(r)))
		}
	}
	return b.String()
}

// Splitlines is Python's str.splitlines().
func Splitlines(s string) []string {
	var out []string
	start := 0
	for i := 0; i < len(s); {
		r, w := utf8.DecodeRuneInString(s[i:])
		switch r {
		case '\n', '\v', '\f', 0x1c, 0x1d, 0x1e, 0x85, 0x2028, 0x2029:
			out = append(out, s[start:i])
			start = i + w
		case '\r':
			out = append(out, s[start:i])
			if i+1 < len(s) && s[i+1] == '\n' {
				w++
			}
			start = i + w
		}
		i += w
	}
	if start < len(s) {
		out = append(out, s[start:])
	}
	return out
}

// Repr is Python's repr(s) (ascii(s) when ascii is true): s in single
// quotes, or double ones when it holds a single quote and no double one;
// backslash, the quote, \t, \n and \r escaped, other control characters
// and DEL as \xhh, and (all of them for ascii) the non-ASCII characters
// that are not printable as \xhh, \uhhhh or \Uhhhhhhhh. A byte of invalid
// UTF-8 is the lone surrogate Python's surrogateescape makes of it.
func Repr(s string, ascii bool) string {
	quote := byte('\'')
	if strings.IndexByte(s, '\'') >= 0 && strings.IndexByte(s, '"') < 0 {
		quote = '"'
	}
	var b strings.Builder
	b.Grow(len(s) + 2)
	b.WriteByte(quote)
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			r = 0xdc00 + rune(s[i])
		}
		writeRepr(&b, r, quote, ascii)
		i += size
	}
	b.WriteByte(quote)
	return b.String()
}

// writeRepr writes r as repr writes it.
func writeRepr(b *strings.Builder, r rune, quote byte, ascii bool) {
	const hex = "0123456789abcdef"
	switch {
	case r == rune(quote) || r == '\\':
		b.WriteByte('\\')
		b.WriteByte(byte(r))
	case r == '\t':
		b.WriteString(`\t`)
	case r == '\n':
		b.WriteString(`\n`)
	case r == '\r':
		b.WriteString(`\r`)
	case r < ' ' || r == 0x7f:
		b.WriteString(`\x`)
		b.WriteByte(hex[r>>4])
		b.WriteByte(hex[r&0xf])
	case r < 0x7f || !ascii && unicode.IsPrint(r):
		b.WriteRune(r)
	default:
		n, prefix := 8, `\U`
		switch {
		case r <= 0xff:
			n, prefix = 2, `\x`
		case r <= 0xffff:
			n, prefix = 4, `\u`
		}
		b.WriteString(prefix)
		for k := n - 1; k >= 0; k-- {
			b.WriteByte(hex[(r>>(4*k))&0xf])
		}
	}
}

// JSONString writes s as Python's json.dumps with ensure_ascii.
func JSONString(b *strings.Builder, s string) {
	b.WriteByte('"')
	for i := 0; i < len(s); {
		r, w := utf8.DecodeRuneInString(s[i:])
		i += w
		switch {
		case r == '"':
			b.WriteString(`\"`)
		case r == '\\':
			b.WriteString(`\\`)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\b':
			b.WriteString(`\b`)
		case r == '\f':
			b.WriteString(`\f`)
		case r < 0x20 || r > 0x7e:
			if r > 0xffff {
				r1, r2 := utf16Pair(r)
				fmt.Fprintf(b, `\u%04x\u%04x`, r1, r2)
			} else {
				fmt.Fprintf(b, `\u%04x`, r)
			}
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
}

// isDigit is an ASCII digit.
func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// utf16Pair is the UTF-16 surrogate pair of r, past the BMP.
func utf16Pair(r rune) (rune, rune) {
	r -= 0x10000
	return 0xd800 + (r>>10)&0x3ff, 0xdc00 + r&0x3ff
}
