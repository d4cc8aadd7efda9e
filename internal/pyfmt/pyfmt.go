// Package pyfmt is Python 3's printf-style formatting of a string with a
// mapping, `template % {"name": "value", ...}`, for mappings of strings to
// strings: what cloud-init does with its "%(name)s" templates (apt's
// mirror search lists, fs_setup's cmd).
//
// It follows CPython 3.11's PyUnicode_Format:
//
//   - "%%" is "%"; "%(name)X" is the conversion X of the mapping's value
//     for name, name running to the ")" that balances its "(" (so
//     "%(a(b)c)s" is the key "a(b)c");
//   - between the key and the conversion: any of the flags "-+ #0" (only
//     "-", left justify, changes a string's output), a width, a precision
//     ".N" (truncating s, r and a, not c) and one length modifier h, l or
//     L, which is ignored;
//   - conversions s (the value), r (repr, in Python's quotes and
//     escapes), a (ascii) and c (a value of one character); the numeric
//     ones (d i u o x X e E f F g G) raise TypeError for a string;
//   - width and precision count characters (code points; a byte of
//     invalid UTF-8 counts as one, as Python's surrogateescape decodes it).
//
// Errors are *Error, of Python's exception type, in the order Python
// raises them, with its message: KeyError for a missing name, ValueError
// for a lone or final "%", an incomplete key ("%(a"), an incomplete
// format ("%(a)", "%(a)5"), an unsupported conversion character ("%(a)z",
// "%(a)%"), a width or precision too big; TypeError for a numeric
// conversion, "%c" of a value not one character long, "*" as width or
// precision, and a conversion without a name after another conversion.
//
// It refuses (Kind Unsupported) what Python would do but pyfmt does not:
// a conversion without a name (Python formats the whole mapping, as a
// dict's repr, for the first one: "%s" % {"a": "b"} is "{'a': 'b'}"),
// and padding past MaxPad characters in all (Python would build it).
// The output is at most the template, one copy of a value per conversion
// naming it (r and a escape a byte to at most 6 characters) and MaxPad;
// the work is linear in that, in one pass without recursion. r and a decide what is printable from Go's
// unicode tables, which may be a newer Unicode version than Python's.
package pyfmt

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/earlyinit/earlyinit/internal/pystr"
)

// MaxPad is the padding (width beyond the value) Format makes in all
// before it refuses.
const MaxPad = 64 << 10

// Kind is the Python exception an Error stands for.
type Kind int

const (
	// KeyError is a name the mapping lacks.
	KeyError Kind = iota + 1
	// ValueError is a malformed format.
	ValueError
	// TypeError is a conversion the value cannot take.
	TypeError
	// Unsupported is what Python would format but pyfmt refuses.
	Unsupported
)

// String is the Python exception's name, or "Unsupported".
func (k Kind) String() string {
	switch k {
	case KeyError:
		return "KeyError"
	case ValueError:
		return "ValueError"
	case TypeError:
		return "TypeError"
	case Unsupported:
		return "Unsupported"
	}
	return fmt.Sprintf("Kind(%d)", int(k))
}

// Error is a template Format cannot fill. Msg is Python's message
// (str(exception)): for KeyError, the repr of the missing name.
type Error struct {
	Kind Kind
	Msg  string
	Key  string // the missing name, for KeyError
}

func (e *Error) Error() string {
	if e.Kind == KeyError {
		return "no value for %(" + e.Key + ")"
	}
	return e.Kind.String() + ": " + e.Msg
}

// Python's limits for a width (PY_SSIZE_T_MAX) and a precision (INT_MAX).
const (
	maxWidth = 1<<63 - 1
	maxPrec  = 1<<31 - 1
)

// Format is Python's tmpl % m.
func Format(tmpl string, m map[string]string) (string, error) {
	f := formatter{t: tmpl, m: m}
	f.b.Grow(len(tmpl))
	for i := 0; i < len(tmpl); {
		j := strings.IndexByte(tmpl[i:], '%')
		if j < 0 {
			f.b.WriteString(tmpl[i:])
			break
		}
		f.b.WriteString(tmpl[i : i+j])
		var err error
		if i, err = f.spec(i + j); err != nil {
			return "", err
		}
	}
	return f.b.String(), nil
}

// formatter is one Format call's state.
type formatter struct {
	t    string
	m    map[string]string
	b    strings.Builder
	used bool // a conversion took its argument (Python's argidx moved)
	pad  int  // padding written so far
}

// spec is one conversion specifier, as parsed.
type spec struct {
	keyed bool
	val   string
	left  bool // the "-" flag
	width int64
	prec  int64 // -1 for none
}

// spec formats the conversion specifier at f.t[p], a '%', and returns
// where the text after it starts.
func (f *formatter) spec(p int) (int, error) {
	i := p + 1
	if i == len(f.t) {
		return 0, valueErr("incomplete format")
	}
	if f.t[i] == '%' {
		f.b.WriteByte('%')
		return i + 1, nil
	}
	s := spec{prec: -1}
	var err error
	if f.t[i] == '(' {
		if i, err = f.key(&s, i); err != nil {
			return 0, err
		}
	}
	if i, err = f.parse(&s, i); err != nil {
		return 0, err
	}
	if i == len(f.t) {
		return 0, valueErr("incomplete format")
	}
	ch, size := utf8.DecodeRuneInString(f.t[i:])
	if ch == utf8.RuneError && size == 1 {
		ch = 0xdc00 + rune(f.t[i]) // Python's surrogateescape
	}
	if err := f.convert(&s, ch, i); err != nil {
		return 0, err
	}
	return i + size, nil
}

// key reads the "(name)" at f.t[i] and looks it up; it returns where the
// text after ")" starts.
func (f *formatter) key(s *spec, i int) (int, error) {
	depth := 1
	j := i + 1
	for ; j < len(f.t) && depth > 0; j++ {
		switch f.t[j] {
		case ')':
			depth--
		case '(':
			depth++
		}
	}
	if depth > 0 {
		return 0, valueErr("incomplete format key")
	}
	name := f.t[i+1 : j-1]
	v, ok := f.m[name]
	if !ok {
		return 0, &Error{Kind: KeyError, Msg: pystr.Repr(name, false), Key: name}
	}
	s.keyed, s.val = true, v
	return j, nil
}

// parse reads the flags, width, precision and length modifier at f.t[i]
// and returns where the conversion character is (len(f.t) for none).
func (f *formatter) parse(s *spec, i int) (int, error) {
	for ; i < len(f.t) && strings.IndexByte("-+ #0", f.t[i]) >= 0; i++ {
		if f.t[i] == '-' {
			s.left = true
		}
	}
	var err error
	if i, s.width, err = f.number(s, i, maxWidth, "width too big"); err != nil {
		return 0, err
	}
	if i < len(f.t) && f.t[i] == '.' {
		if i, s.prec, err = f.number(s, i+1, maxPrec, "precision too big"); err != nil {
			return 0, err
		}
	}
	if i < len(f.t) && strings.IndexByte("hlL", f.t[i]) >= 0 {
		i++
	}
	return i, nil
}

// number reads the decimal number (0 for none) at f.t[i]; "*" takes an
// argument, which for a string or the mapping is Python's TypeError.
func (f *formatter) number(s *spec, i int, limit int64, tooBig string) (int, int64, error) {
	if i < len(f.t) && f.t[i] == '*' {
		if !s.keyed && f.used {
			return 0, 0, typeErr("not enough arguments for format string")
		}
		return 0, 0, typeErr("* wants int")
	}
	var n int64
	for ; i < len(f.t) && f.t[i] >= '0' && f.t[i] <= '9'; i++ {
		d := int64(f.t[i] - '0')
		if n > (limit-d)/10 {
			return 0, 0, valueErr(tooBig)
		}
		n = n*10 + d
	}
	return i, n, nil
}

// convert writes s's argument with conversion ch, found at byte at of
// the template.
func (f *formatter) convert(s *spec, ch rune, at int) error {
	if !s.keyed && f.used {
		return typeErr("not enough arguments for format string")
	}
	f.used = true
	argType := "str"
	if !s.keyed {
		argType = "dict"
	}
	var out string
	switch ch {
	case 's', 'r', 'a':
		if !s.keyed {
			return &Error{Kind: Unsupported, Msg: fmt.Sprintf("%%%c without a name formats the whole mapping", ch)}
		}
		out = s.val
		if ch != 's' {
			out = pystr.Repr(s.val, ch == 'a')
		}
		out = truncate(out, s.prec)
	case 'c':
		if !s.keyed || utf8.RuneCountInString(s.val) != 1 {
			return typeErr("%c requires int or char")
		}
		out = s.val
	case 'd', 'i', 'u':
		return typeErr(fmt.Sprintf("%%%c format: a real number is required, not %s", ch, argType))
	case 'o', 'x', 'X':
		return typeErr(fmt.Sprintf("%%%c format: an integer is required, not %s", ch, argType))
	case 'e', 'E', 'f', 'F', 'g', 'G':
		return typeErr("must be real number, not " + argType)
	default:
		shown := '?'
		if ch >= 31 && ch <= 126 {
			shown = ch
		}
		return valueErr(fmt.Sprintf("unsupported format character '%c' (0x%x) at index %d", shown, ch, utf8.RuneCountInString(f.t[:at])))
	}
	return f.write(out, s)
}

// write writes out padded to s's width.
func (f *formatter) write(out string, s *spec) error {
	pad := s.width - int64(utf8.RuneCountInString(out))
	if pad <= 0 {
		f.b.WriteString(out)
		return nil
	}
	if pad > int64(MaxPad-f.pad) {
		return &Error{Kind: Unsupported, Msg: fmt.Sprintf("padding over %d characters in all", MaxPad)}
	}
	f.pad += int(pad)
	if s.left {
		f.b.WriteString(out)
	}
	f.b.WriteString(strings.Repeat(" ", int(pad)))
	if !s.left {
		f.b.WriteString(out)
	}
	return nil
}

// truncate is s's first prec characters (all of it for prec < 0).
func truncate(s string, prec int64) string {
	if prec < 0 {
		return s
	}
	n := int64(0)
	for i := range s {
		if n == prec {
			return s[:i]
		}
		n++
	}
	return s
}

func valueErr(msg string) error { return &Error{Kind: ValueError, Msg: msg} }

func typeErr(msg string) error { return &Error{Kind: TypeError, Msg: msg} }
