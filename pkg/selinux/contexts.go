package selinux

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"regexp"
	"strings"
	"sync"
)

// kind is a file_contexts entry's file type field: which objects it
// labels.
type kind uint8

const (
	kindAll   kind = iota // no field: any object
	kindReg               // --
	kindDir               // -d
	kindLink              // -l
	kindChar              // -c
	kindBlock             // -b
	kindFIFO              // -p
	kindSock              // -s
)

// kindField parses the file type field; ok is false for anything else.
func kindField(f string) (kind, bool) {
	if len(f) != 2 || f[0] != '-' {
		return 0, false
	}
	switch f[1] {
	case '-':
		return kindReg, true
	case 'd':
		return kindDir, true
	case 'l':
		return kindLink, true
	case 'c':
		return kindChar, true
	case 'b':
		return kindBlock, true
	case 'p':
		return kindFIFO, true
	case 's':
		return kindSock, true
	}
	return 0, false
}

// kindOf is the kind of an object of mode's type (0: a regular file).
func kindOf(mode fs.FileMode) kind {
	switch t := mode.Type(); {
	case t == 0:
		return kindReg
	case t == fs.ModeDir:
		return kindDir
	case t == fs.ModeSymlink:
		return kindLink
	case t == fs.ModeNamedPipe:
		return kindFIFO
	case t == fs.ModeSocket:
		return kindSock
	case t&fs.ModeCharDevice != 0:
		return kindChar
	case t&fs.ModeDevice != 0:
		return kindBlock
	}
	return kindAll
}

// none is the context that means "do not label".
const none = "<<none>>"

// spec is one file_contexts entry.
type spec struct {
	context string // "" for <<none>>
	kind    kind
	// order is the entry's place in the input: the file's number (base,
	// homedirs, local) in the high bits, its line in the low. Later wins.
	order uint64

	// A regular expression entry's RE2 expression, compiled the first
	// time a lookup needs it: a lookup runs a few dozen of the
	// thousands, and compiling all would take most of Load's time and
	// memory (80 ms and 6 MB for Debian's policy).
	expr string
	once sync.Once
	re   *regexp.Regexp
	// next is the entry before it for the same exact path.
	next *spec

	// prefix is the literal text every match starts with: most keys are
	// told apart by it without running the expression. Load's: the
	// parsed expression's (literalPrefix); OpenRoot's: read from the
	// text (fixedPrefix), the same or shorter.
	prefix string
	// raw is the file_contexts expression of an entry whose check is
	// deferred (OpenRoot's policy), until a lookup whose path starts
	// with prefix checks it (Policy.check): then expr is set, or the
	// entry is skipped (re stays nil).
	raw string
}

// match tells whether the regular expression entry s matches key,
// checking it first if its check was deferred.
func (p *Policy) match(s *spec, key string) bool {
	if !strings.HasPrefix(key, s.prefix) {
		return false
	}
	s.once.Do(func() {
		expr := s.expr
		if expr == "" {
			expr = p.check(s)
		}
		if expr != "" {
			s.re, _ = regexp.Compile(expr) // checkRegex parsed it: no error
		}
	})
	return s.re != nil && s.re.MatchString(key)
}

// node groups the regular expressions whose first path components
// are literal ("/etc/ssh(/.*)?" is under "etc"), up to maxDepth levels, as
// libselinux's spec_node does: a lookup only runs the expressions on the
// way from the root to its path's deepest node.
type node struct {
	children map[string]*node
	regexes  []*spec // in input order
}

// maxDepth is libselinux's SPEC_NODE_MAX_DEPTH.
const maxDepth = 3

// maxLineField is libselinux's bound on one field of an entry.
const maxLineField = 1<<16 - 1

// compiledMagic starts a compiled file_contexts (file_contexts.bin).
const compiledMagic = 0xf97cff8a

// isCompiled tells whether data is a compiled file_contexts, in either
// byte order, as libselinux checks.
func isCompiled(data []byte) bool {
	return len(data) >= 4 && (binary.BigEndian.Uint32(data) == compiledMagic || binary.LittleEndian.Uint32(data) == compiledMagic)
}

// parseContexts adds the entries of one file_contexts file (input is its
// number: later files win) to p. A malformed line fails the whole file, as
// in libselinux; an entry whose regular expression RE2 cannot compile is
// skipped and counted (by Load; by the lookup that first needs it, when
// p defers the checks). The entries' fields are slices of one copy of
// data, and the entries one allocation.
func (p *Policy) parseContexts(file string, data []byte, input uint64) error {
	if isCompiled(data) {
		return fmt.Errorf("%s: compiled (file_contexts.bin format); earlyinit reads only the text form", file)
	}
	for uint64(len(p.files)) <= input {
		p.files = append(p.files, "")
	}
	p.files[input] = file
	text := string(data)
	lines := strings.Count(text, "\n") + 1
	specs := make([]spec, 0, lines)
	if len(p.literals) == 0 {
		p.literals = make(map[string]*spec, lines/2) // Debian's: 58% exact paths
	}
	ascii := true // then no field needs its characters checked
	for _, c := range data {
		if c >= 0x80 {
			ascii = false
			break
		}
	}
	var fields [3]string
	for n := 0; text != ""; n++ {
		line := text
		if i := strings.IndexByte(text, '\n'); i >= 0 {
			line, text = text[:i], text[i+1:]
		} else {
			text = ""
		}
		nf := 0
		for line != "" && nf < len(fields) { // libselinux ignores fields after the third
			i := 0
			for i < len(line) && isSpace(line[i]) {
				i++
			}
			j := i
			for j < len(line) && !isSpace(line[j]) {
				j++
			}
			if i == j {
				break
			}
			fields[nf], line = line[i:j], line[j:]
			nf++
		}
		for i := nf; i < len(fields); i++ {
			fields[i] = "" // none left from the line before
		}
		if nf == 0 || fields[0][0] == '#' {
			continue
		}
		if !ascii || len(fields[0]) >= maxLineField || len(fields[1]) >= maxLineField || len(fields[2]) >= maxLineField {
			for _, f := range fields[:nf] {
				if len(f) >= maxLineField {
					return badLine(file, n, "entry too long")
				}
				for i := 0; i < len(f); i++ {
					if f[i] >= 0x80 {
						return badLine(file, n, "non-ASCII characters")
					}
				}
			}
		}
		if nf < 2 {
			return badLine(file, n, "missing fields: want path regex, optional file type, context")
		}
		specs = specs[:len(specs)+1] // within the capacity: the pointers stay valid
		s := &specs[len(specs)-1]
		s.context, s.order = fields[nf-1], input<<32|uint64(n+1)
		if nf == 3 {
			k, ok := kindField(fields[1])
			if !ok {
				return badLine(file, n, "file type %q: want --, -d, -l, -c, -b, -p or -s", fields[1])
			}
			s.kind = k
		}
		if s.context == none {
			s.context = ""
		}
		p.insert(fields[0], s)
	}
	return nil
}

// badLine is the error for line n (from 0) of file.
func badLine(file string, n int, format string, args ...any) error {
	return fmt.Errorf("%s line %d: %s", file, n+1, fmt.Sprintf(format, args...))
}

// isSpace is the C locale's isspace, what strings.Fields splits ASCII at.
func isSpace(c byte) bool { return c == ' ' || c >= '\t' && c <= '\r' }

// where names the entry of order for a warning: its file and line.
func (p *Policy) where(order uint64) string {
	file := "file_contexts"
	if i := order >> 32; i < uint64(len(p.files)) {
		file = p.files[i]
	}
	return fmt.Sprintf("%s line %d", file, order&(1<<32-1))
}

// insert adds entry re to p: a literal path to the literal table, a
// regular expression to its node, checked (admit) and, if it is skipped,
// left out; or, when p defers the checks, with its fixed prefix, to be
// checked by the first lookup that needs it.
func (p *Policy) insert(re string, s *spec) {
	if lit, ok := simplify(re); ok {
		s.next = p.literals[lit]
		p.literals[lit] = s
		p.Entries++
		return
	}
	if p.deferred {
		s.raw, s.prefix = re, fixedPrefix(re)
	} else {
		expr, prefix, err := p.admit(re)
		if err != nil {
			p.Skipped++
			if p.firstSkip == "" {
				p.firstSkip = p.skipNote(s.order, re, err)
			}
			return
		}
		s.expr, s.prefix = expr, prefix
	}
	n := &p.root
	rest := re
	for depth := 0; depth < maxDepth; {
		// As libselinux: the first character is taken to be the "/"
		// before the component.
		i := strings.IndexByte(rest[1:], '/')
		if i < 0 {
			break
		}
		i++
		if i == 1 { // "//"
			rest = rest[i:]
			continue
		}
		stem, ok := simplify(rest[1:i])
		if !ok {
			break
		}
		n = n.child(stem)
		rest = rest[i:]
		depth++
	}
	n.regexes = append(n.regexes, s)
	p.Entries++
}

// admit checks the regular expression entry re against RE2 and the
// limits: its RE2 expression and literal prefix, or why it is skipped.
// The policy's budgets (maxPolicyParse, maxPolicyInsts) are spent in the
// order entries are admitted: file order at Load; with deferred checks,
// the order lookups first need them (the caller holds p.mu).
func (p *Policy) admit(re string) (expr, prefix string, err error) {
	expr, err = toRE2(re)
	if err != nil {
		return "", "", err
	}
	if p.parsed+len(expr) > maxPolicyParse {
		p.overBudget = true
		return "", "", fmt.Errorf("%w: %d bytes to parse, over the %d left of the policy's %d", errTooBig, len(expr), maxPolicyParse-p.parsed, maxPolicyParse)
	}
	p.parsed += len(expr)
	prefix, insts, err := parseRE2(expr)
	if err == nil && p.insts+insts > maxPolicyInsts {
		p.overBudget = true
		err = fmt.Errorf("%w: compiled program of %d instructions, over the %d left of the policy's %d", errTooBig, insts, maxPolicyInsts-p.insts, maxPolicyInsts)
	}
	if err != nil {
		return "", "", err
	}
	p.insts += insts
	return expr, prefix, nil
}

// skipNote is the warning's account of one skipped entry.
func (p *Policy) skipNote(order uint64, re string, err error) string {
	return fmt.Sprintf("%s %s: %s", p.where(order), quoteShort(re), shorten(err.Error()))
}

// check is a deferred entry's check (admit), the first time a lookup's
// path starts with its fixed prefix: its RE2 expression, or "" when it
// is skipped, which is counted (Warning) and logged to the log of the
// latest OpenRoot that returned p.
func (p *Policy) check(s *spec) string {
	p.mu.Lock()
	expr, _, err := p.admit(s.raw)
	p.checked++
	var note string
	if err != nil {
		note = p.skipNote(s.order, s.raw, err)
		p.lateSkipped++
		if p.firstLateSkip == "" {
			p.firstLateSkip = note
		}
	}
	p.mu.Unlock()
	if err != nil {
		if l := p.log.Load(); l != nil {
			(*l).Errorf("selinux: %s: entry skipped", note)
		}
		return ""
	}
	return expr
}

// maxQuoted is how much of an expression a warning shows.
const maxQuoted = 64

// quoteShort quotes re for a warning, cut to its first maxQuoted bytes.
func quoteShort(re string) string {
	if len(re) <= maxQuoted {
		return fmt.Sprintf("%q", re)
	}
	return fmt.Sprintf("%q... (%d bytes)", re[:maxQuoted], len(re))
}

// shorten cuts an error message for a warning: regexp/syntax's errors
// end with the whole expression.
func shorten(msg string) string {
	const max = 2 * maxQuoted
	if len(msg) <= max {
		return msg
	}
	return msg[:max] + "..."
}

// child returns n's child for stem, creating it.
func (n *node) child(stem string) *node {
	if c, ok := n.children[stem]; ok {
		return c
	}
	if n.children == nil {
		n.children = map[string]*node{}
	}
	c := &node{}
	n.children[stem] = c
	return c
}

// sub is one path alias of file_contexts.subs or .subs_dist: paths under
// alias are looked up under real instead.
type sub struct{ alias, real string }

// parseSubs reads a substitution file: "alias real" per line, "#"
// comments. Lines with fewer than two fields are ignored and more fields
// than two are, as by libselinux. The result is in the order libselinux
// tries them: last line first.
func parseSubs(data []byte) []sub {
	var out []sub
	for _, line := range strings.Split(string(data), "\n") {
		f := strings.Fields(line)
		if len(f) < 2 || f[0][0] == '#' {
			continue
		}
		out = append(out, sub{f[0], f[1]})
	}
	for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
		out[i], out[j] = out[j], out[i]
	}
	return out
}

// applySubs rewrites key by the first alias that is key or a parent of it;
// ok is false if none is.
func applySubs(subs []sub, key string) (string, bool) {
	for _, s := range subs {
		if !strings.HasPrefix(key, s.alias) {
			continue
		}
		rest := key[len(s.alias):]
		if rest != "" && rest[0] != '/' {
			continue
		}
		if s.real == "/" && rest != "" {
			rest = rest[1:]
		}
		return s.real + rest, true
	}
	return key, false
}

// cleanKey is libselinux's lookup key: runs of "/" made one, a trailing
// "/" dropped. Nothing else: ".." is not resolved.
func cleanKey(p string) string {
	for strings.Contains(p, "//") {
		p = strings.ReplaceAll(p, "//", "/")
	}
	if len(p) > 1 && p[len(p)-1] == '/' {
		p = p[:len(p)-1]
	}
	return p
}

// errNoText is the error for a policy with only file_contexts.bin.
var errNoText = errors.New("only file_contexts.bin, the compiled form, is there; earlyinit reads the text file_contexts")
