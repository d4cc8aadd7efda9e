// Package pyyaml is the part of PyYAML's emitter that the documents
// cloud-init dumps use, ported so that earlyinit writes what cloud-init
// writes byte for byte: salt's minion and grains (safeyaml.dumps: indent 4,
// "---" and "..."), puppet's csr_attributes.yaml (yaml.dump: indent 2),
// `earlyinit status --format yaml` (cloud-init status's yaml.dump). Block
// mappings with sorted keys, block sequences, empty collections in flow
// style, scalars in the style PyYAML picks, folded at 80 columns as it
// folds them, for values made of map[string]any, []any, string, float64,
// int, bool and nil.
package pyyaml

import (
	"fmt"
	"math"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"
)

// Dump is yaml.dump(v, indent=indent, default_flow_style=False), with
// explicit_start and explicit_end when explicit (cloud-init's
// safeyaml.dumps).
func Dump(v any, indent int, explicit bool) string {
	e := &pyEmitter{step: indent, indent: -1, whitespace: true, indention: true}
	if explicit {
		e.writeIndent()
		e.writeIndicator("---", true, false, false)
	}
	e.node(v, false, false)
	if explicit {
		e.indent = 0
		e.writeIndent()
		e.writeIndicator("...", true, false, false)
	} else if _, ok := v.(map[string]any); !ok {
		if _, ok := v.([]any); !ok {
			// A scalar document is open-ended: PyYAML ends it.
			e.indent = 0
			e.writeIndent()
			e.writeIndicator("...", true, false, false)
		}
	}
	e.writeIndent()
	return e.out.String()
}

// FloatRepr is Python's repr of a float: the shortest digits that read
// back, fixed notation with at least one decimal when the decimal
// exponent is -4 to 15, else scientific with at least two exponent digits
// ("1e+16", "1.5e-05", as Go writes them); "inf", "-inf", "nan". The one
// copy of the rule: the YAML and JSON emitters, the Jinja subset and
// `query --format` use it (TestFloatReprMatchesPython).
func FloatRepr(f float64) string {
	switch {
	case math.IsInf(f, 1):
		return "inf"
	case math.IsInf(f, -1):
		return "-inf"
	case math.IsNaN(f):
		return "nan"
	}
	e := strconv.FormatFloat(f, 'e', -1, 64) // "-1.2345e+06"
	_, exps, _ := strings.Cut(e, "e")
	if exp, _ := strconv.Atoi(exps); exp < -4 || exp >= 16 {
		return e
	}
	s := strconv.FormatFloat(f, 'f', -1, 64)
	if !strings.Contains(s, ".") {
		s += ".0"
	}
	return s
}

// pyEmitter is PyYAML's Emitter state, as its write_* methods use it.
type pyEmitter struct {
	step                  int // the dump's indent (PyYAML's best_indent)
	out                   strings.Builder
	indent                int // -1: PyYAML's None
	column                int
	whitespace, indention bool
}

const pyBestWidth = 80

func (e *pyEmitter) write(s string) {
	e.out.WriteString(s)
	e.column += utf8.RuneCountInString(s)
}

func (e *pyEmitter) writeIndicator(ind string, needWhitespace, whitespace, indention bool) {
	if !e.whitespace && needWhitespace {
		ind = " " + ind
	}
	e.whitespace = whitespace
	e.indention = e.indention && indention
	e.write(ind)
}

func (e *pyEmitter) writeIndent() {
	indent := max(e.indent, 0)
	if !e.indention || e.column > indent || (e.column == indent && !e.whitespace) {
		e.writeLineBreak()
	}
	if e.column < indent {
		e.whitespace = true
		e.write(strings.Repeat(" ", indent-e.column))
	}
}

func (e *pyEmitter) writeLineBreak() {
	e.whitespace, e.indention = true, true
	e.out.WriteByte('\n')
	e.column = 0
}

// node emits v: mapping tells that it is a mapping's value (a sequence
// there is not indented), key that it is a simple key.
func (e *pyEmitter) node(v any, mapping, key bool) {
	switch x := v.(type) {
	case map[string]any:
		if len(x) == 0 {
			e.writeIndicator("{", true, true, false)
			e.writeIndicator("}", false, false, false)
			return
		}
		saved := e.indent
		e.increaseIndent(false, false)
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			e.writeIndent()
			if a := pyAnalyze(k); len(k) < 128 && !a.empty && !a.multiline {
				e.node(k, true, true)
				e.writeIndicator(":", false, false, false)
			} else {
				e.writeIndicator("?", true, false, true)
				e.node(k, true, false)
				e.writeIndent()
				e.writeIndicator(":", true, false, true)
			}
			e.node(x[k], true, false)
		}
		e.indent = saved
	case []any:
		if len(x) == 0 {
			e.writeIndicator("[", true, true, false)
			e.writeIndicator("]", false, false, false)
			return
		}
		saved := e.indent
		e.increaseIndent(false, mapping && !e.indention)
		for _, item := range x {
			e.writeIndent()
			e.writeIndicator("-", true, false, true)
			e.node(item, false, false)
		}
		e.indent = saved
	default:
		text, plainOK := pyScalar(v)
		saved := e.indent
		e.increaseIndent(true, false)
		e.scalar(text, plainOK, key)
		e.indent = saved
	}
}

func (e *pyEmitter) increaseIndent(flow, indentless bool) {
	switch {
	case e.indent < 0 && flow:
		e.indent = e.step
	case e.indent < 0:
		e.indent = 0
	case !indentless:
		e.indent += e.step
	}
}

// pyScalar is a scalar's text as PyYAML's safe representer gives it, and
// whether it may be written plain: it reads back as itself (a string
// that would read as a boolean, a number or null may not).
func pyScalar(v any) (string, bool) {
	switch x := v.(type) {
	case string:
		return x, pyResolvesToStr(x)
	case nil:
		return "null", true
	case bool:
		if x {
			return "true", true
		}
		return "false", true
	case int:
		return fmt.Sprint(x), true
	case float64:
		s := strings.ToLower(FloatRepr(x))
		switch s {
		case "inf":
			s = ".inf"
		case "-inf":
			s = "-.inf"
		case "nan":
			s = ".nan"
		}
		if !strings.Contains(s, ".") && strings.Contains(s, "e") {
			s = strings.Replace(s, "e", ".0e", 1)
		}
		return s, true
	}
	return fmt.Sprint(v), false
}

// PyYAML's implicit resolvers (yaml/resolver.py): a plain scalar matching
// one of them reads as that type. Python's $ also matches before a final
// newline, hence \n? (such a scalar is never plain anyway).
var pyImplicit = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^(?:` +
		`yes|Yes|YES|no|No|NO|true|True|TRUE|false|False|FALSE|on|On|ON|off|Off|OFF` +
		`|[-+]?(?:[0-9][0-9_]*)\.[0-9_]*(?:[eE][-+][0-9]+)?|\.[0-9][0-9_]*(?:[eE][-+][0-9]+)?|[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+\.[0-9_]*|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN)` +
		`|[-+]?0b[0-1_]+|[-+]?0[0-7_]+|[-+]?(?:0|[1-9][0-9_]*)|[-+]?0x[0-9a-fA-F_]+|[-+]?[1-9][0-9_]*(?::[0-5]?[0-9])+` +
		`|<<|~|null|Null|NULL|` +
		`|[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]|[0-9][0-9][0-9][0-9]-[0-9][0-9]?-[0-9][0-9]?(?:[Tt]|[ \t]+)[0-9][0-9]?:[0-9][0-9]:[0-9][0-9](?:\.[0-9]*)?(?:[ \t]*(?:Z|[-+][0-9][0-9]?(?::[0-9][0-9])?))?` +
		`|=)\n?$`)
})

func pyResolvesToStr(s string) bool { return !pyImplicit().MatchString(s) }

// pyAnalysis is PyYAML's ScalarAnalysis, the parts the style choice uses.
type pyAnalysis struct {
	empty, multiline                                   bool
	allowFlowPlain, allowBlockPlain, allowSingleQuoted bool
}

func pyBreak(r rune) bool { return r == '\n' || r == '\x85' || r == '\u2028' || r == '\u2029' }

func pySpaceOrBreak(r rune) bool {
	return r == 0 || r == ' ' || r == '\t' || r == '\r' || pyBreak(r)
}

// pyAnalyze is PyYAML's Emitter.analyze_scalar, without allow_unicode (as
// cloud-init dumps): any character outside printable ASCII is special.
func pyAnalyze(s string) pyAnalysis {
	if s == "" {
		return pyAnalysis{empty: true, allowBlockPlain: true, allowSingleQuoted: true}
	}
	rs := []rune(s)
	var f pyScan
	if strings.HasPrefix(s, "---") || strings.HasPrefix(s, "...") {
		f.blockInd, f.flowInd = true, true
	}
	preceded := true
	followed := len(rs) == 1 || pySpaceOrBreak(rs[1])
	for i, ch := range rs {
		f.indicators(i, ch, preceded, followed)
		if pyBreak(ch) {
			f.lineBreaks = true
		}
		if !(ch == '\n' || (ch >= 0x20 && ch <= 0x7e)) {
			f.special = true
		}
		f.spacing(i, len(rs), ch)
		preceded = pySpaceOrBreak(ch)
		followed = i+2 >= len(rs) || pySpaceOrBreak(rs[i+2])
	}
	return f.analysis()
}

// pyScan is what analyze_scalar's loop finds in a scalar: indicators,
// breaks, special characters, and where spaces and breaks are.
type pyScan struct {
	blockInd, flowInd, lineBreaks, special                   bool
	leadingSpace, leadingBreak, trailingSpace, trailingBreak bool
	breakSpace, spaceBreak                                   bool
	prevSpace, prevBreak                                     bool
}

// indicators notes whether ch, the i-th character, is a flow or block
// indicator there.
func (f *pyScan) indicators(i int, ch rune, preceded, followed bool) {
	if i == 0 {
		if strings.ContainsRune("#,[]{}&*!|>'\"%@`", ch) {
			f.flowInd, f.blockInd = true, true
		}
		if ch == '?' || ch == ':' {
			f.flowInd = true
			if followed {
				f.blockInd = true
			}
		}
		if ch == '-' && followed {
			f.flowInd, f.blockInd = true, true
		}
	} else {
		if strings.ContainsRune(",?[]{}", ch) {
			f.flowInd = true
		}
		if ch == ':' {
			f.flowInd = true
			if followed {
				f.blockInd = true
			}
		}
		if ch == '#' && preceded {
			f.flowInd, f.blockInd = true, true
		}
	}
}

// spacing notes leading and trailing spaces and breaks, and a space
// after a break or a break after a space, for ch, the i-th of n.
func (f *pyScan) spacing(i, n int, ch rune) {
	switch {
	case ch == ' ':
		if i == 0 {
			f.leadingSpace = true
		}
		if i == n-1 {
			f.trailingSpace = true
		}
		if f.prevBreak {
			f.breakSpace = true
		}
		f.prevSpace, f.prevBreak = true, false
	case pyBreak(ch):
		if i == 0 {
			f.leadingBreak = true
		}
		if i == n-1 {
			f.trailingBreak = true
		}
		if f.prevSpace {
			f.spaceBreak = true
		}
		f.prevSpace, f.prevBreak = false, true
	default:
		f.prevSpace, f.prevBreak = false, false
	}
}

// analysis is the styles the scan allows.
func (f *pyScan) analysis() pyAnalysis {
	a := pyAnalysis{multiline: f.lineBreaks, allowFlowPlain: true, allowBlockPlain: true, allowSingleQuoted: true}
	if f.leadingSpace || f.leadingBreak || f.trailingSpace || f.trailingBreak {
		a.allowFlowPlain, a.allowBlockPlain = false, false
	}
	if f.breakSpace {
		a.allowFlowPlain, a.allowBlockPlain, a.allowSingleQuoted = false, false, false
	}
	if f.spaceBreak || f.special {
		a.allowFlowPlain, a.allowBlockPlain, a.allowSingleQuoted = false, false, false
	}
	if f.lineBreaks {
		a.allowFlowPlain, a.allowBlockPlain = false, false
	}
	if f.flowInd {
		a.allowFlowPlain = false
	}
	if f.blockInd {
		a.allowBlockPlain = false
	}
	return a
}

// scalar is PyYAML's choose_scalar_style and process_scalar, in block
// context.
func (e *pyEmitter) scalar(text string, plainOK, key bool) {
	a := pyAnalyze(text)
	split := !key
	switch {
	case plainOK && !(key && (a.empty || a.multiline)) && a.allowBlockPlain:
		e.writePlain(text, split)
	case a.allowSingleQuoted && !(key && a.multiline):
		e.writeSingleQuoted(text, split)
	default:
		e.writeDoubleQuoted(text, split)
	}
}

func (e *pyEmitter) writePlain(text string, split bool) {
	if text == "" {
		return
	}
	if !e.whitespace {
		e.write(" ")
	}
	e.whitespace, e.indention = false, false
	rs := []rune(text)
	spaces, breaks := false, false
	start := 0
	for end := 0; end <= len(rs); end++ {
		var ch rune = -1
		if end < len(rs) {
			ch = rs[end]
		}
		switch {
		case spaces:
			if ch != ' ' {
				if start+1 == end && e.column > pyBestWidth && split {
					e.writeIndent()
					e.whitespace, e.indention = false, false
				} else {
					e.write(string(rs[start:end]))
				}
				start = end
			}
		case breaks:
			if ch == -1 || !pyBreak(ch) {
				e.writeBreaks(rs[start:end])
				e.whitespace, e.indention = false, false
				start = end
			}
		default:
			if ch == -1 || ch == ' ' || pyBreak(ch) {
				e.write(string(rs[start:end]))
				start = end
			}
		}
		if ch != -1 {
			spaces, breaks = ch == ' ', pyBreak(ch)
		}
	}
}

// writeBreaks writes a run of line breaks as PyYAML does in a plain or
// single-quoted scalar: a first "\n" twice (the first one folds), then the
// indentation.
func (e *pyEmitter) writeBreaks(brs []rune) {
	if brs[0] == '\n' {
		e.writeLineBreak()
	}
	for _, br := range brs {
		if br == '\n' {
			e.writeLineBreak()
		} else {
			e.out.WriteRune(br)
			e.whitespace, e.indention, e.column = true, true, 0
		}
	}
	e.writeIndent()
}

func (e *pyEmitter) writeSingleQuoted(text string, split bool) {
	e.writeIndicator("'", true, false, false)
	rs := []rune(text)
	spaces, breaks := false, false
	start := 0
	for end := 0; end <= len(rs); end++ {
		var ch rune = -1
		if end < len(rs) {
			ch = rs[end]
		}
		switch {
		case spaces:
			if ch != ' ' {
				if start+1 == end && e.column > pyBestWidth && split && start != 0 && end != len(rs) {
					e.writeIndent()
				} else {
					e.write(string(rs[start:end]))
				}
				start = end
			}
		case breaks:
			if ch == -1 || !pyBreak(ch) {
				e.writeBreaks(rs[start:end])
				start = end
			}
		default:
			if ch == -1 || ch == ' ' || pyBreak(ch) || ch == '\'' {
				if start < end {
					e.write(string(rs[start:end]))
					start = end
				}
			}
		}
		if ch == '\'' {
			e.write("''")
			start = end + 1
		}
		if ch != -1 {
			spaces, breaks = ch == ' ', pyBreak(ch)
		}
	}
	e.writeIndicator("'", false, false, false)
}

// pyEscape is PyYAML's ESCAPE_REPLACEMENTS: the letter after the
// backslash for r, or "".
func pyEscape(r rune) string {
	switch r {
	case 0:
		return "0"
	case '\x07':
		return "a"
	case '\x08':
		return "b"
	case '\t':
		return "t"
	case '\n':
		return "n"
	case '\x0b':
		return "v"
	case '\x0c':
		return "f"
	case '\r':
		return "r"
	case '\x1b':
		return "e"
	case '"':
		return "\""
	case '\\':
		return "\\"
	case '\x85':
		return "N"
	case '\xa0':
		return "_"
	case '\u2028':
		return "L"
	case '\u2029':
		return "P"
	}
	return ""
}

func (e *pyEmitter) writeDoubleQuoted(text string, split bool) {
	e.writeIndicator("\"", true, false, false)
	rs := []rune(text)
	start := 0
	for end := 0; end <= len(rs); end++ {
		var ch rune = -1
		if end < len(rs) {
			ch = rs[end]
		}
		if ch == -1 || strings.ContainsRune("\"\\\x85\u2028\u2029\uFEFF", ch) || !(ch >= 0x20 && ch <= 0x7e) {
			if start < end {
				e.write(string(rs[start:end]))
				start = end
			}
			if ch != -1 {
				esc := pyEscape(ch)
				switch {
				case esc != "":
					esc = "\\" + esc
				case ch <= 0xff:
					esc = fmt.Sprintf("\\x%02X", ch)
				case ch <= 0xffff:
					esc = fmt.Sprintf("\\u%04X", ch)
				default:
					esc = fmt.Sprintf("\\U%08X", ch)
				}
				e.write(esc)
				start = end + 1
			}
		}
		if end > 0 && end < len(rs)-1 && (ch == ' ' || start >= end) && e.column+(end-start) > pyBestWidth && split {
			data := string(rs[start:end]) + "\\"
			if start < end {
				start = end
			}
			e.write(data)
			e.writeIndent()
			e.whitespace, e.indention = false, false
			if rs[start] == ' ' {
				e.write("\\")
			}
		}
	}
	e.writeIndicator("\"", false, false, false)
}
