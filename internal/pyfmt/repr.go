package pyfmt

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// repr is Python's repr(s) (ascii(s) when ascii is true): s in single
// quotes, or double ones when it holds a single quote and no double one;
// backslash, the quote, \t, \n and \r escaped, other control characters
// and DEL as \xhh, and (all of them for ascii) the non-ASCII characters
// that are not printable as \xhh, \uhhhh or \Uhhhhhhhh. A byte of invalid
// UTF-8 is the lone surrogate Python's surrogateescape makes of it.
func repr(s string, ascii bool) string {
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
