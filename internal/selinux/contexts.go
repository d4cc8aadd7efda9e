package selinux

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"regexp"
	"strings"
	"sync"
	"unsafe"
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

// bucket holds the entries under one first path component ("etc" for
// "/etc/ssh(/.*)?" and "/etc/hostname"): its exact paths, and its
// regular expressions in libselinux's node at depth 1. With deferred
// checks (OpenRoot) a bucket is built the first time a lookup's path
// has its component: until then its entries are only lines of text,
// checked for form at load. A boot's paths are under a few of Debian's
// top-level directories, and /usr alone has half the entries.
type bucket struct {
	once     sync.Once
	lines    []line // not yet built
	literals map[string]*spec
	node     node
}

// line is one entry's text, kept until its bucket is built, and its
// order (spec.order).
type line struct {
	text  string
	order uint64
}

// parseContexts adds the entries of one file_contexts file (input is its
// number: later files win) to p. A malformed line fails the whole file, as
// in libselinux; an entry whose regular expression RE2 cannot compile is
// skipped and counted (by Load; by the lookup that first needs it, when
// p defers the checks). The entries' fields are slices of data, which p
// keeps: the caller must not change it. When p defers the checks, the entries under a first path
// component (bucket) are kept as text for the first lookup that needs
// them.
func (p *Policy) parseContexts(file string, data []byte, input uint64) error {
	if isCompiled(data) {
		return fmt.Errorf("%s: compiled (file_contexts.bin format); earlyinit reads only the text form", file)
	}
	p.startFile(file, input)
	// The entries' fields are slices of data itself, which is the
	// caller's to give away: read for this and never written again.
	// Copying Debian's 320 KiB took a quarter of a boot's load.
	text := unsafe.String(unsafe.SliceData(data), len(data))
	ascii := isASCII(data) // then no field needs its characters checked
	var (
		fields [3]string
		last   lastBucket
	)
	for n := 0; text != ""; n++ {
		l := text
		if i := strings.IndexByte(text, '\n'); i >= 0 {
			l, text = text[:i], text[i+1:]
		} else {
			text = ""
		}
		nf := splitFields(l, &fields)
		if nf == 0 || fields[0][0] == '#' {
			continue
		}
		if err := checkLine(file, n, &fields, nf, ascii); err != nil {
			return err
		}
		p.Entries++
		order := input<<32 | uint64(n+1)
		b := &p.top
		if key, _, ok := stem(fields[0]); ok {
			b = last.get(p, key)
			if p.deferred {
				b.lines = append(b.lines, line{l, order})
				continue
			}
		}
		p.add(b, p.newSpec(), fields, nf, order)
	}
	return nil
}

// startFile records file as input number input, and makes p's buckets
// when it has none yet.
func (p *Policy) startFile(file string, input uint64) {
	for uint64(len(p.files)) <= input {
		p.files = append(p.files, "")
	}
	p.files[input] = file
	if p.buckets == nil {
		p.buckets = map[string]*bucket{}
		p.top.literals = map[string]*spec{}
	}
}

func isASCII(data []byte) bool {
	for _, c := range data {
		if c >= 0x80 {
			return false
		}
	}
	return true
}

// checkLine checks line n's nf fields as libselinux does: none too long
// or (unless the whole file is ascii) with non-ASCII characters, a
// context, and a valid file type field.
func checkLine(file string, n int, fields *[3]string, nf int, ascii bool) error {
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
	if nf == 3 {
		if _, ok := kindField(fields[1]); !ok {
			return badLine(file, n, "file type %q: want --, -d, -l, -c, -b, -p or -s", fields[1])
		}
	}
	return nil
}

// lastBucket is the bucket of the line before, which most lines share.
type lastBucket struct {
	key string
	b   *bucket
}

// get is the bucket for key, made when it is new.
func (last *lastBucket) get(p *Policy, key string) *bucket {
	if last.b == nil || key != last.key { // most lines share the one before's
		last.b = p.buckets[key]
		if last.b == nil {
			last.b = &bucket{literals: map[string]*spec{}}
			if !p.deferred {
				last.b.once.Do(func() {}) // built as it is read
			}
			p.buckets[key] = last.b
		}
		last.key = key
	}
	return last.b
}

// splitFields splits line into its fields (libselinux ignores those
// after the third) and returns how many there are; the others are "".
func splitFields(line string, fields *[3]string) int {
	nf := 0
	for line != "" && nf < len(fields) {
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
		fields[i] = ""
	}
	return nf
}

// add fills s from an entry's fields, checked by parseContexts, and
// inserts it into b.
func (p *Policy) add(b *bucket, s *spec, fields [3]string, nf int, order uint64) {
	s.context, s.order = fields[nf-1], order
	if nf == 3 {
		s.kind, _ = kindField(fields[1])
	}
	if s.context == none {
		s.context = ""
	}
	p.insert(b, fields[0], s)
}

// newSpec allocates a spec, from chunks: the entries' pointers stay
// valid, and there are few allocations.
func (p *Policy) newSpec() *spec {
	if len(p.spare) == 0 {
		p.spare = make([]spec, 256)
	}
	s := &p.spare[0]
	p.spare = p.spare[1:]
	return s
}

// build makes b's entries from its lines, the first time a lookup needs
// them (Lookup holds b.once).
func (p *Policy) build(b *bucket) {
	specs := make([]spec, len(b.lines))
	var fields [3]string
	for i, l := range b.lines {
		nf := splitFields(l.text, &fields)
		p.add(b, &specs[i], fields, nf, l.order)
	}
	b.lines = nil
}

// stem is the first path component of an entry's regular expression
// ("etc" for "/etc/ssh(/.*)?") and the rest of re after it; ok is false
// when there is none (component), or it is not literal text.
func stem(re string) (key, rest string, ok bool) {
	key, rest, found, ok := component(re)
	return key, rest, found && ok
}

// component is the first path component of rest as libselinux's tree
// takes it: the first character is taken to be the "/" before it, "//"
// is skipped, and it ends at the next "/". key is its literal text and
// after is rest from that "/" on; found is false when no "/" follows, ok
// false when the component is not literal text.
func component(rest string) (key, after string, found, ok bool) {
	for len(rest) > 1 {
		i := strings.IndexByte(rest[1:], '/')
		if i < 0 {
			break
		}
		i++
		if i == 1 { // "//"
			rest = rest[i:]
			continue
		}
		key, ok = simplify(rest[1:i])
		return key, rest[i:], true, ok
	}
	return "", "", false, false
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

// insert adds entry re to b (p.top when re has no stem): a literal path
// to b's literal table, a regular expression to its node, checked
// (admit) and, if it is skipped, left out; or, when p defers the checks,
// with its fixed prefix, to be checked by the first lookup that needs it.
func (p *Policy) insert(b *bucket, re string, s *spec) {
	if lit, ok := simplify(re); ok {
		s.next = b.literals[lit]
		b.literals[lit] = s
		return
	}
	if p.deferred {
		s.raw, s.prefix = re, fixedPrefix(re)
	} else {
		expr, prefix, err := p.admit(re)
		if err != nil {
			p.Entries--
			p.Skipped++
			if p.firstSkip == "" {
				p.firstSkip = p.skipNote(s.order, re, err)
			}
			return
		}
		s.expr, s.prefix = expr, prefix
	}
	n, rest, depth := &b.node, re, 0
	if b != &p.top {
		_, rest, _ = stem(re)
		depth = 1
	}
	for depth < maxDepth {
		key, after, found, ok := component(rest)
		if !found || !ok {
			break
		}
		n = n.child(key)
		rest = after
		depth++
	}
	n.regexes = append(n.regexes, s)
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
