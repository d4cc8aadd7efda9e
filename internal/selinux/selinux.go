// Package selinux labels what earlyinit writes into a root the way the
// root's own SELinux policy would (restorecon), in pure Go: no libselinux,
// no policy loaded in the kernel.
//
// A root has SELinux when its /etc/selinux/config says SELINUX=enforcing
// or permissive. Its policy's labels for files are in
// /etc/selinux/<SELINUXTYPE>/contexts/files: file_contexts, then
// file_contexts.homedirs and file_contexts.local (later files win), and
// the path aliases of file_contexts.subs and file_contexts.subs_dist.
// Load reads them; Policy.Lookup answers as libselinux's selabel_lookup
// does:
//
//   - The path is cleaned as there ("//" made "/", a trailing "/" dropped),
//     then an alias of file_contexts.subs, then one of .subs_dist, is
//     replaced by its real path ("/bin/x" is looked up as "/usr/bin/x").
//   - An entry without regular expression characters is an exact path, and
//     an exact path that matches wins over every regular expression; among
//     exact paths, the latest (in file order, .local after the base) wins.
//   - Otherwise the last regular expression in file order that matches the
//     whole path (anchored ^...$) wins. The fixed prefix length of an
//     expression plays no part in a lookup: libselinux uses it only in
//     selabel_lookup_best_match, for aliases.
//   - An entry's file type field (--, -d, -l, -c, -b, -p, -s) restricts it to
//     that kind of object; no field is any kind.
//   - A winning entry with the context <<none>> means: no label.
//
// libselinux 3.9's tree of entries lets a <<none>> entry in a deeper
// branch beat a later matching one in a shallower one; earlier versions
// (Debian 12 has 3.4) do not, and neither does this package. The results
// on Debian 12's policy are libselinux 3.4's (testdata/README.md).
//
// The expressions are PCRE; Go's regexp is RE2. compileRegex translates
// what differs and refuses what RE2 cannot do: such entries are skipped
// and counted (Policy.Warning), and so are those whose compiled program
// would be too big, alone or with the others before them (maxRegexInsts,
// maxPolicyInsts, maxPolicyParse: a hostile file_contexts cannot make
// PID 1 compile gigabytes, or parse for minutes). Expressions are checked at Load, compiled once, the first
// time a lookup needs them, and grouped by their literal leading path
// components as libselinux does, so a lookup runs only those that can
// match.
//
// OpenRoot, what a boot uses, defers the checks too: its load checks each
// line's form and keeps the entries under a literal first path component
// ("/etc/...", "/usr/...") as text, by that component (bucket); the first
// lookup of a path under it builds them, reading each expression's fixed
// prefix from the text (fixedPrefix, libselinux's "stem" made a filter);
// and an expression is checked and compiled only when a lookup's path
// starts with that prefix. So a boot builds the entries of the few
// top-level directories it writes to, not /usr's half of Debian's 5,621,
// and parses the few dozen expressions its paths can match, not Debian's
// 2,685 (parsing them is most of Load's 35 ms). The labels are Load's
// for every path: an expression a path does not start the prefix of
// cannot match it, and each check decides as Load's does. The one
// difference is on a policy over the policy-wide budgets (maxPolicyParse,
// maxPolicyInsts, ten times Debian's): they are spent in the order
// lookups need the expressions, not in file order, so other entries may
// be the ones skipped.
package selinux

import (
	"errors"
	"fmt"
	"io/fs"
	"path"
	"sync"
	"sync/atomic"
	"syscall"

	"github.com/earlyinit/earlyinit/internal/logs"
	"github.com/earlyinit/earlyinit/internal/rootfs"
)

// MaxFileSize bounds each file Load reads. Debian's file_contexts is 320
// KiB.
const MaxFileSize = 16 << 20

// Policy is the file labelling part of a root's SELinux policy. It is
// safe for concurrent use. A *Policy is a rootfs.Labeler.
type Policy struct {
	// Type is SELINUXTYPE, the policy's directory under /etc/selinux.
	Type string
	// Mode is SELINUX: Enforcing or Permissive.
	Mode string
	// Entries is the number of file_contexts entries in use, all files
	// together. With deferred checks (OpenRoot), every well-formed entry:
	// a lookup may yet skip one it is the first to need (Warning).
	Entries int
	// Skipped is the number of entries left out because RE2 cannot
	// compile their regular expression, or its compiled program would be
	// over the limit for one (maxRegexInsts) or for all together
	// (maxPolicyInsts), or the expressions before it took all there is
	// to parse (maxPolicyParse). With deferred checks, those skipped at
	// load: none; Warning counts the lookups' too.
	Skipped int

	firstSkip string
	// top has the entries with no literal first path component (stem):
	// its literal table has exact paths, the last entry of each linked
	// to those before, and its node is libselinux's root; buckets has
	// the others, by that component.
	top      bucket
	buckets  map[string]*bucket
	spare    []spec   // newSpec's
	subs     []sub    // file_contexts.subs, tried first
	distSubs []sub    // file_contexts.subs_dist
	files    []string // the files read, by input number, for warnings

	// deferred: expressions are checked by the first lookup that needs
	// them (OpenRoot), not at load. mu guards what those checks change.
	deferred      bool
	mu            sync.Mutex
	insts         int    // the compiled size of the expressions in use (progSize)
	parsed        int    // the bytes of RE2 expressions parsed, kept or not
	checked       int    // deferred checks done
	overBudget    bool   // an entry was skipped for a policy-wide budget
	lateSkipped   int    // entries the deferred checks skipped
	firstLateSkip string // the first of them
	log           atomic.Pointer[logs.Logger]
}

// ContextsDir is where a policy's file contexts are, in the root.
func ContextsDir(policyType string) string {
	return path.Join("/etc/selinux", policyType, "contexts/files")
}

// readConfig reads the root's /etc/selinux/config: nil when it has none
// or SELinux is disabled.
func readConfig(r *rootfs.Root) (*config, error) {
	data, err := readFile(r, configPath)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	c, err := parseConfig(configPath, data)
	if err != nil {
		return nil, err
	}
	if c.mode == Disabled {
		return nil, nil
	}
	return &c, nil
}

// The files of a policy's file contexts, in ContextsDir, in input order.
const (
	baseFile     = "file_contexts"
	homedirsFile = "file_contexts.homedirs"
	localFile    = "file_contexts.local"
	subsFile     = "file_contexts.subs"
	subsDistFile = "file_contexts.subs_dist"
	binFile      = "file_contexts.bin"
)

// load reads the policy; deferred leaves the expressions' checks to the
// lookups that need them.
func load(r *rootfs.Root, c config, deferred bool) (*Policy, error) {
	p := &Policy{Type: c.policy, Mode: c.mode, deferred: deferred}
	dir := ContextsDir(c.policy)
	for i, name := range []string{baseFile, homedirsFile, localFile} {
		file := path.Join(dir, name)
		data, err := readFile(r, file)
		if errors.Is(err, fs.ErrNotExist) {
			if name != baseFile {
				continue
			}
			if r.Exists(path.Join(dir, binFile)) {
				return nil, fmt.Errorf("%s: %w", file, errNoText)
			}
			return nil, fmt.Errorf("SELINUX=%s, SELINUXTYPE=%s, but %s is missing", c.mode, c.policy, file)
		}
		if err != nil {
			return nil, err
		}
		if err := p.parseContexts(file, data, uint64(i)); err != nil {
			return nil, err
		}
	}
	for _, s := range []struct {
		name string
		to   *[]sub
	}{{subsFile, &p.subs}, {subsDistFile, &p.distSubs}} {
		data, err := readFile(r, path.Join(dir, s.name))
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, err
		}
		*s.to = parseSubs(data)
	}
	return p, nil
}

// readFile reads name in r, refusing more than MaxFileSize bytes.
func readFile(r *rootfs.Root, name string) ([]byte, error) {
	return r.ReadFileMax(name, MaxFileSize)
}

// Warning describes the entries Load skipped, or is "" if none was.
// With deferred checks, it counts those the lookups so far skipped.
func (p *Policy) Warning() string {
	p.mu.Lock()
	n, first := p.Skipped+p.lateSkipped, p.firstSkip
	if first == "" {
		first = p.firstLateSkip
	}
	p.mu.Unlock()
	if n == 0 {
		return ""
	}
	return fmt.Sprintf("%d file_contexts entries skipped, their regular expressions beyond RE2 or too big (first: %s)", n, first)
}

// Lookup returns the context the policy gives the object at path (a path
// in the root, "/etc/hostname") of mode's type (mode.Type(); 0 is a
// regular file). ok is false when the policy gives it none (<<none>>, or
// no entry matches). It implements rootfs.Labeler.
func (p *Policy) Lookup(name string, mode fs.FileMode) (context string, ok bool) {
	key := cleanKey(name)
	if key == "" {
		return "", false
	}
	if k, ok := applySubs(p.subs, key); ok {
		key = k
	}
	if k, ok := applySubs(p.distSubs, key); ok {
		key = k
	}
	k := kindOf(mode)
	b := p.bucketOf(key)
	if s := p.literal(b, key, k); s != nil {
		return s.context, s.context != ""
	}
	if s := p.regex(b, key, k); s != nil {
		return s.context, s.context != ""
	}
	return "", false
}

// bucketOf is the bucket of key's first path component, built; nil if
// key has none (no "/" after it) or no entry does.
func (p *Policy) bucketOf(key string) *bucket {
	if len(key) < 2 || key[0] != '/' {
		return nil
	}
	i := indexSlash(key[1:])
	if i <= 0 {
		return nil
	}
	b := p.buckets[key[1:i+1]]
	if b != nil {
		b.once.Do(func() { p.build(b) })
	}
	return b
}

// fits tells whether an entry of kind want labels an object of kind k.
func fits(want, k kind) bool {
	return want == kindAll || k == kindAll || want == k
}

// literal is the latest exact-path entry for key that fits k, in p.top or
// in key's bucket b (which may be nil).
func (p *Policy) literal(b *bucket, key string, k kind) *spec {
	var best *spec
	for _, t := range [2]*bucket{&p.top, b} {
		if t == nil {
			continue
		}
		for s := t.literals[key]; s != nil; s = s.next {
			if fits(s.kind, k) && (best == nil || s.order > best.order) {
				best = s
			}
		}
	}
	return best
}

// regex is the latest regular expression entry matching key that fits k.
// Only the nodes from the root to key's deepest one can hold an entry
// matching key: the root (p.top's), key's bucket b's (depth 1) and
// those under it. Each is scanned from its end, stopping at the first
// match or at entries older than the best so far.
func (p *Policy) regex(b *bucket, key string, k kind) *spec {
	var nodes [maxDepth + 1]*node
	nodes[0] = &p.top.node
	depth := 0
	if b != nil {
		depth = 1
		nodes[1] = &b.node
	}
	rest := key
	if b != nil {
		rest = key[indexSlash(key[1:])+1:]
	}
	for depth < maxDepth && len(rest) > 0 && rest[0] == '/' {
		i := indexSlash(rest[1:])
		if i < 0 {
			break
		}
		c := nodes[depth].children[rest[1:i+1]]
		if c == nil {
			break
		}
		depth++
		nodes[depth] = c
		rest = rest[i+1:]
	}
	var best *spec
	for d := depth; d >= 0; d-- {
		rs := nodes[d].regexes
		for i := len(rs) - 1; i >= 0; i-- {
			s := rs[i]
			if best != nil && s.order < best.order {
				break
			}
			if fits(s.kind, k) && p.match(s, key) {
				best = s
				break
			}
		}
	}
	return best
}

func indexSlash(s string) int {
	for i := 0; i < len(s); i++ {
		if s[i] == '/' {
			return i
		}
	}
	return -1
}

// OpenRoot opens the root at dir for writing (rootfs.Open) and, when its
// SELinux is enabled, attaches its policy, so that everything written
// through the Root is labelled. The policy is loaded once per process for
// a root whose SELinux files are unchanged, its expressions checked by
// the lookups that need them (the package's comment); the load is
// logged, once: the policy and its number of entries, or the error that
// left the Root without labels; and so is each entry a lookup's check
// skips, to the log of the latest OpenRoot given one. A policy that
// cannot be loaded does not fail OpenRoot: the files are written
// unlabelled, as they would be without this package. log may be nil.
func OpenRoot(dir string, log logs.Logger) (*rootfs.Root, error) {
	r, err := rootfs.Open(dir)
	if err != nil {
		return nil, err
	}
	p, fresh, err := cached(r)
	if log == nil || !fresh {
		// Quiet, or already said.
	} else if err != nil {
		log.Errorf("selinux: %v: files are written without labels", err)
	} else if p != nil {
		log.Printf("selinux: labels from policy %s (%d entries)", p.Type, p.Entries)
		if w := p.Warning(); w != "" {
			log.Errorf("selinux: %s", w)
		}
	}
	if p != nil {
		if log != nil {
			p.log.Store(&log)
		}
		r.SetLabeler(p)
	}
	return r, nil
}

// cache holds the last policy OpenRoot loaded, by root and by the
// identity of its files, so the initramfs's steps share one load.
var cache struct {
	sync.Mutex
	key    string
	policy *Policy
	err    error
}

// cached loads r's policy, or returns the one loaded before for the same
// root and files; fresh tells which.
func cached(r *rootfs.Root) (p *Policy, fresh bool, err error) {
	c, err := readConfig(r)
	if err != nil || c == nil {
		key := r.Dir() + "\x00" + fmt.Sprint(err)
		cache.Lock()
		defer cache.Unlock()
		fresh = cache.key != key
		cache.key, cache.policy, cache.err = key, nil, err
		return nil, fresh, err
	}
	key := r.Dir() + "\x00" + c.mode + "\x00" + c.policy
	for _, name := range []string{baseFile, homedirsFile, localFile, subsFile, subsDistFile, binFile} {
		key += "\x00" + fileID(r, path.Join(ContextsDir(c.policy), name))
	}
	cache.Lock()
	defer cache.Unlock()
	if cache.key == key {
		return cache.policy, false, cache.err
	}
	p, err = load(r, *c, true)
	cache.key, cache.policy, cache.err = key, p, err
	return p, true, err
}

// fileID identifies a file's version: device, inode, size, modification
// and change times.
func fileID(r *rootfs.Root, name string) string {
	fi, err := r.Stat(name)
	if err != nil {
		return "-"
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return "?"
	}
	return fmt.Sprintf("%d/%d/%d/%d/%d", st.Dev, st.Ino, st.Size, st.Mtim.Nano(), st.Ctim.Nano())
}
