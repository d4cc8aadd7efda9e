package selinux

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"
)

// policyRoot is a root with SELINUX=enforcing, SELINUXTYPE=targeted and
// the given files in its contexts directory ("file_contexts": "...").
func policyRoot(t *testing.T, files map[string]string) string {
	t.Helper()
	root := t.TempDir()
	writeConfig(t, root, "SELINUX=enforcing\nSELINUXTYPE=targeted\n")
	dir := filepath.Join(root, ContextsDir("targeted"))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

type lookup struct {
	mode fs.FileMode
	path string
	want string // "" for no label
}

func checkLookups(t *testing.T, p *Policy, cases []lookup) {
	t.Helper()
	for _, c := range cases {
		got, ok := p.Lookup(c.path, c.mode)
		if ok != (c.want != "") || got != c.want {
			t.Errorf("Lookup(%s, %v) = %q, %v; want %q", c.path, c.mode, got, ok, c.want)
		}
	}
}

// matchingCases are libselinux's rules on synthetic files. All but the
// last were checked against libselinux 3.4's selabel_lookup.
var matchingCases = []struct {
	name  string
	files map[string]string
	cases []lookup
}{
	{"exact beats a later regex", map[string]string{"file_contexts": `
/etc/hostname		u:r:exact_t:s0
/etc/.*			u:r:etc_t:s0
/etc/host.*		u:r:later_t:s0
`}, []lookup{
		{file, "/etc/hostname", "u:r:exact_t:s0"},
		{file, "/etc/hosts", "u:r:later_t:s0"},
		{file, "/etc/x", "u:r:etc_t:s0"},
		{file, "/etc", ""},
	}},
	{"last regex wins, whatever its prefix length", map[string]string{"file_contexts": `
/var/lib/foo(/.*)?	u:r:long_t:s0
/var/.*			u:r:short_t:s0
/usr/.*			u:r:usr_t:s0
/usr/lib/x(/.*)?	u:r:lib_t:s0
`}, []lookup{
		// /var/.* comes after the longer, more specific entry: it wins.
		{file, "/var/lib/foo/bar", "u:r:short_t:s0"},
		{file, "/usr/lib/x/y", "u:r:lib_t:s0"},
		{file, "/usr/lib/y", "u:r:usr_t:s0"},
	}},
	{"a shallower later regex beats a deeper earlier one", map[string]string{"file_contexts": `
/etc/ssh/keys(/.*)?	u:r:deep_t:s0
/(etc|usr)/ssh/.*	u:r:root_node_t:s0
/etc/ssh/other.*	u:r:deep2_t:s0
`}, []lookup{
		{file, "/etc/ssh/keys/a", "u:r:root_node_t:s0"},
		{file, "/etc/ssh/otherx", "u:r:deep2_t:s0"},
		{file, "/usr/ssh/x", "u:r:root_node_t:s0"},
	}},
	{"type field", map[string]string{"file_contexts": `
/srv/x			-d	u:r:dir_t:s0
/srv/x			--	u:r:file_t:s0
/srv/x			-l	u:r:link_t:s0
/srv/.*			-p	u:r:fifo_t:s0
/srv/.*			-s	u:r:sock_t:s0
/srv/.*			-c	u:r:chr_t:s0
/srv/.*			-b	u:r:blk_t:s0
/srv/y(/.*)?		u:r:any_t:s0
/srv/y/z		-d	u:r:zdir_t:s0
`}, []lookup{
		{dir, "/srv/x", "u:r:dir_t:s0"},
		{file, "/srv/x", "u:r:file_t:s0"},
		{link, "/srv/x", "u:r:link_t:s0"},
		{fs.ModeNamedPipe, "/srv/p", "u:r:fifo_t:s0"},
		{fs.ModeSocket, "/srv/p", "u:r:sock_t:s0"},
		{fs.ModeDevice | fs.ModeCharDevice, "/srv/p", "u:r:chr_t:s0"},
		{fs.ModeDevice, "/srv/p", "u:r:blk_t:s0"},
		{file, "/srv/p", ""},
		{dir, "/srv/y/z", "u:r:zdir_t:s0"},
		{file, "/srv/y/z", "u:r:any_t:s0"},
	}},
	{"<<none>>", map[string]string{"file_contexts": `
/.*			u:r:default_t:s0
/run/.*			<<none>>
/run/named(/.*)?	u:r:named_t:s0
/tmp			<<none>>
/tmp/.*			u:r:tmp_t:s0
/tmp/keep		-d	u:r:keep_t:s0
/tmp/keep		<<none>>
`}, []lookup{
		{file, "/run/x", ""},
		{file, "/run/named/x", "u:r:named_t:s0"},
		{dir, "/tmp", ""},      // an exact <<none>> beats regexes
		{dir, "/tmp/keep", ""}, // the later exact entry wins
		{file, "/tmp/x", "u:r:tmp_t:s0"},
	}},
	{".homedirs then .local win", map[string]string{
		"file_contexts": `
/home/[^/]+/.*		u:r:base_t:s0
/opt/a			u:r:base_exact_t:s0
/opt/.*			u:r:base_opt_t:s0
/srv/b(/.*)?		u:r:base_srv_t:s0
`,
		"file_contexts.homedirs": `
/home/[^/]+/\.ssh(/.*)?	u:r:ssh_home_t:s0
/opt/a			u:r:homedirs_exact_t:s0
`,
		"file_contexts.local": `
# an admin's
/home/[^/]+/.*		u:r:local_t:s0
/opt/a			u:r:local_exact_t:s0
/srv/.*			u:r:local_srv_t:s0
`}, []lookup{
		{file, "/home/u/.ssh/authorized_keys", "u:r:local_t:s0"},
		{file, "/opt/a", "u:r:local_exact_t:s0"},
		{file, "/opt/b", "u:r:base_opt_t:s0"},
		{file, "/srv/b/c", "u:r:local_srv_t:s0"},
	}},
	{"subs", map[string]string{
		"file_contexts": `
/usr/bin(/.*)?		u:r:bin_t:s0
/usr/bin/sh		u:r:shell_t:s0
/run/.*			u:r:run_t:s0
/srv/real(/.*)?		u:r:real_t:s0
/data(/.*)?		u:r:data_t:s0
/x(/.*)?		u:r:x_t:s0
/sbin(/.*)?		u:r:sbin_t:s0
`,
		"file_contexts.subs_dist": `
# alias real
/bin /usr/bin
/var/run	/run
/bin /sbin
/web /srv/alias
/srv/alias /srv/real
/top /
`,
		"file_contexts.subs": `
/site /srv/alias
/mnt/data /data
`}, []lookup{
		// Two aliases for /bin: the later line is tried first.
		{file, "/bin/sh", "u:r:sbin_t:s0"},
		{file, "/bin", "u:r:sbin_t:s0"},
		{file, "/binx", ""}, // not under /bin
		{file, "/usr/bin/sh", "u:r:shell_t:s0"},
		{file, "/var/run/x", "u:r:run_t:s0"},
		{file, "/mnt/data/x", "u:r:data_t:s0"},
		// .subs first, then .subs_dist on its result: one step each.
		{file, "/site/x", "u:r:real_t:s0"},
		{file, "/web/x", ""}, // .subs_dist applies once: /srv/alias/x
		{file, "/top/x", "u:r:x_t:s0"},
	}},
	{"key cleaning", map[string]string{"file_contexts": `
/etc/x			u:r:x_t:s0
/			-d	u:r:root_t:s0
/a/\.\./b		u:r:dots_t:s0
`}, []lookup{
		{file, "//etc///x", "u:r:x_t:s0"},
		{file, "/etc/x/", "u:r:x_t:s0"},
		{dir, "/", "u:r:root_t:s0"},
		{dir, "//", "u:r:root_t:s0"},
		{file, "/a/../b", "u:r:dots_t:s0"}, // not resolved, as in libselinux
	}},
	{"RE2-incompatible entries skipped", map[string]string{"file_contexts": `
/etc/.*			u:r:etc_t:s0
/etc/(a)\1		u:r:backref_t:s0
/etc/x(?=y).*		u:r:lookahead_t:s0
/etc/y.*		u:r:y_t:s0
`}, []lookup{
		{file, "/etc/aa", "u:r:etc_t:s0"},
		{file, "/etc/xy", "u:r:etc_t:s0"},
		{file, "/etc/yz", "u:r:y_t:s0"},
	}},
}

func TestMatching(t *testing.T) {
	for _, c := range matchingCases {
		t.Run(c.name, func(t *testing.T) {
			p, err := Load(policyRoot(t, c.files))
			if err != nil {
				t.Fatal(err)
			}
			checkLookups(t, p, c.cases)
		})
	}
}

func TestSkippedWarning(t *testing.T) {
	p, err := Load(policyRoot(t, map[string]string{"file_contexts": "/a/.*\tu:r:a_t:s0\n/b/(x)\\1\tu:r:b_t:s0\n/c(?!d)\tu:r:c_t:s0\n"}))
	if err != nil {
		t.Fatal(err)
	}
	if p.Entries != 1 || p.Skipped != 2 {
		t.Errorf("%d entries, %d skipped; want 1, 2", p.Entries, p.Skipped)
	}
	w := p.Warning()
	for _, s := range []string{"2 file_contexts entries skipped", "/etc/selinux/targeted/contexts/files/file_contexts line 2", `"/b/(x)\\1"`, "backreference"} {
		if !strings.Contains(w, s) {
			t.Errorf("warning %q lacks %q", w, s)
		}
	}
	p, _ = Load(policyRoot(t, map[string]string{"file_contexts": "/a\tu:r:a_t:s0\n"}))
	if w := p.Warning(); w != "" {
		t.Errorf("warning %q with nothing skipped", w)
	}
}

func TestLoadErrors(t *testing.T) {
	const fc = "/etc/selinux/targeted/contexts/files/file_contexts"
	big := strings.Repeat("/x\tu:r:x_t:s0\n", MaxFileSize/13+1)
	for _, c := range []struct {
		name  string
		files map[string]string
		err   string
	}{
		{"missing fields", map[string]string{"file_contexts": "/a u:r:a_t:s0\n\n/b\n"}, fc + " line 3: missing fields"},
		{"bad type", map[string]string{"file_contexts": "/a -x u:r:a_t:s0\n"}, fc + ` line 1: file type "-x"`},
		{"bad type word", map[string]string{"file_contexts": "/a dir u:r:a_t:s0\n"}, `line 1: file type "dir"`},
		{"non-ASCII", map[string]string{"file_contexts": "/caf\u00e9 u:r:a_t:s0\n"}, "line 1: non-ASCII characters"},
		{"bad .local", map[string]string{"file_contexts": "/a u:r:a_t:s0\n", "file_contexts.local": "/b\n"}, fc + ".local line 1: missing fields"},
		{"bad .homedirs", map[string]string{"file_contexts": "/a u:r:a_t:s0\n", "file_contexts.homedirs": "/b -q c\n"}, fc + ".homedirs line 1"},
		{"compiled", map[string]string{"file_contexts": "\x8a\xff\x7c\xf9\x08\x00\x00\x00"}, fc + ": compiled (file_contexts.bin format)"},
		{"compiled big-endian", map[string]string{"file_contexts": "\xf9\x7c\xff\x8a\x08\x00\x00\x00"}, "compiled"},
		{"only .bin", map[string]string{"file_contexts.bin": "\x8a\xff\x7c\xf9"}, fc + ": only file_contexts.bin"},
		{"missing", map[string]string{"file_contexts.local": "/a u:r:a_t:s0\n"}, "SELINUX=enforcing, SELINUXTYPE=targeted, but " + fc + " is missing"},
		{"too big", map[string]string{"file_contexts": big}, fc + " in … " + strconv.Itoa(len(big)) + " bytes is over the 16777216 byte limit"},
	} {
		t.Run(c.name, func(t *testing.T) {
			p, err := Load(policyRoot(t, c.files))
			if err == nil {
				t.Fatalf("Load: %v, no error; want one with %q", p, c.err)
			}
			rest := err.Error()
			for _, part := range strings.Split(c.err, " … ") { // in this order
				i := strings.Index(rest, part)
				if i < 0 {
					t.Fatalf("Load: %v; want an error with %q", err, c.err)
				}
				rest = rest[i+len(part):]
			}
		})
	}
}

func TestLoadNoSELinux(t *testing.T) {
	// No config, and SELINUX=disabled (even with no policy files): no
	// policy, no error.
	root := t.TempDir()
	if p, err := Load(root); p != nil || err != nil {
		t.Errorf("no config: %v, %v; want nil, nil", p, err)
	}
	writeConfig(t, root, "SELINUX=disabled\nSELINUXTYPE=targeted\n")
	if p, err := Load(root); p != nil || err != nil {
		t.Errorf("disabled: %v, %v; want nil, nil", p, err)
	}
	writeConfig(t, root, "SELINUX=bogus\n")
	if _, err := Load(root); err == nil || !strings.Contains(err.Error(), "/etc/selinux/config line 1: SELINUX") {
		t.Errorf("bad config: %v", err)
	}
	if _, err := Load(filepath.Join(root, "missing")); err == nil {
		t.Error("Load of a missing root: no error")
	}
}

// TestLoadConfined: the policy files are read inside the root, an
// absolute symlink resolved there and not on the host.
func TestLoadConfined(t *testing.T) {
	root := policyRoot(t, map[string]string{})
	real := filepath.Join(root, "policy/fc")
	os.MkdirAll(filepath.Dir(real), 0o755)
	os.WriteFile(real, []byte("/inside u:r:in_t:s0\n"), 0o644)
	if err := os.Symlink("/policy/fc", filepath.Join(root, ContextsDir("targeted"), "file_contexts")); err != nil {
		t.Fatal(err)
	}
	p, err := Load(root)
	if err != nil {
		t.Fatal(err)
	}
	checkLookups(t, p, []lookup{{file, "/inside", "u:r:in_t:s0"}})
}

func TestKindOf(t *testing.T) {
	for m, want := range map[fs.FileMode]kind{
		0: kindReg, 0o644: kindReg, fs.ModeDir | 0o755: kindDir, fs.ModeSymlink: kindLink,
		fs.ModeNamedPipe: kindFIFO, fs.ModeSocket: kindSock, fs.ModeDevice: kindBlock,
		fs.ModeDevice | fs.ModeCharDevice: kindChar, fs.ModeIrregular: kindAll,
	} {
		if got := kindOf(m); got != want {
			t.Errorf("kindOf(%v) = %d, want %d", m, got, want)
		}
	}
}

// TestHostileContexts: thirty entries whose programs would each have
// 880,010 instructions, where two took PID 1 8 s and 117 MiB and thirty
// had it killed for memory. They are skipped at Load for the cost of
// parsing them, with one warning that names the first by file and line
// but does not repeat it; the entries around them are used. (Without
// the limits, the lookups here compile all thirty: 33 s, 11 GiB
// allocated.)
func TestHostileContexts(t *testing.T) {
	const hostile = 30
	var fc strings.Builder
	fc.WriteString("/.*\tu:r:default_t:s0\n/etc/.*\tu:r:etc_t:s0\n")
	for range hostile {
		fc.WriteString(hostileRegex + "\tu:r:hostile_t:s0\n")
	}
	fc.WriteString("/etc/host.*\t--\tu:r:host_t:s0\n")
	root := policyRoot(t, map[string]string{"file_contexts": fc.String()})

	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	start := time.Now()
	p, err := Load(root)
	if err != nil {
		t.Fatal(err)
	}
	// Lookups that run every expression of the root's node: unskipped,
	// the hostile ones would be compiled here.
	checkLookups(t, p, []lookup{
		{file, "/etc/hostname", "u:r:host_t:s0"},
		{dir, "/etc/hostname", "u:r:etc_t:s0"},
		{file, "/ax", "u:r:default_t:s0"}, // what the hostile entries would match
		{file, "/usr/bin/sh", "u:r:default_t:s0"},
	})
	elapsed := time.Since(start)
	runtime.ReadMemStats(&after)
	alloc := after.TotalAlloc - before.TotalAlloc
	t.Logf("Load and lookups: %v, %.1f MiB allocated", elapsed, float64(alloc)/(1<<20))
	if alloc > 16<<20 || elapsed > 5*time.Second {
		t.Errorf("Load and lookups took %v and %d bytes; want under 5 s and 16 MiB", elapsed, alloc)
	}

	if p.Entries != 3 || p.Skipped != hostile {
		t.Errorf("%d entries, %d skipped; want 3, %d", p.Entries, p.Skipped, hostile)
	}
	w := p.Warning()
	for _, s := range []string{
		"30 file_contexts entries skipped", "/etc/selinux/targeted/contexts/files/file_contexts line 3",
		`"/(.{0,1000}.{0,1000}`, "... (3964 bytes)", "compiled program of 880010 instructions, over the limit of 1000",
	} {
		if !strings.Contains(w, s) {
			t.Errorf("warning %q lacks %q", w, s)
		}
	}
	if len(w) > 400 {
		t.Errorf("warning of %d bytes: %q", len(w), w)
	}
}

// TestPolicyBudget: entries each under maxRegexInsts that add up to over
// maxPolicyInsts. Those that fit in what is left are used, in file
// order; the rest are skipped, and the policy is not lost: earlier
// entries match, and a small one after the budget tripped still fits.
func TestPolicyBudget(t *testing.T) {
	medium := func(i int) string { return fmt.Sprintf("/m/%04d/a{0,480}x", i) }
	_, _, size, err := checkRegex(medium(0))
	if err != nil || size < maxRegexInsts/2 {
		t.Fatalf("medium entry: %d instructions, %v", size, err)
	}
	const first, late = `/.*`, `/late/.*`
	_, _, used, _ := checkRegex(first)
	fits := (maxPolicyInsts - used) / size
	left := maxPolicyInsts - used - fits*size
	if _, _, n, _ := checkRegex(late); n > left {
		t.Fatalf("%s: %d instructions, over the %d left", late, n, left)
	}
	n := fits + 20
	var fc strings.Builder
	fc.WriteString(first + "\tu:r:default_t:s0\n")
	for i := range n {
		fmt.Fprintf(&fc, "%s\tu:r:m%d_t:s0\n", medium(i), i)
	}
	fmt.Fprintf(&fc, "%s\tu:r:late_t:s0\n%s\tu:r:last_t:s0\n", late, medium(n))

	p, err := Load(policyRoot(t, map[string]string{"file_contexts": fc.String()}))
	if err != nil {
		t.Fatal(err)
	}
	if p.Entries != 1+fits+1 || p.Skipped != n-fits+1 || p.insts > maxPolicyInsts {
		t.Errorf("%d entries, %d skipped, %d instructions; want %d, %d, at most %d",
			p.Entries, p.Skipped, p.insts, 1+fits+1, n-fits+1, maxPolicyInsts)
	}
	checkLookups(t, p, []lookup{
		{file, "/m/0000/ax", "u:r:m0_t:s0"},
		{file, fmt.Sprintf("/m/%04d/aax", fits-1), fmt.Sprintf("u:r:m%d_t:s0", fits-1)},
		{file, fmt.Sprintf("/m/%04d/aax", fits), "u:r:default_t:s0"}, // the first over the budget
		{file, fmt.Sprintf("/m/%04d/aax", n), "u:r:default_t:s0"},
		{file, "/late/x", "u:r:late_t:s0"},
		{file, "/x", "u:r:default_t:s0"},
	})
	w := p.Warning()
	for _, s := range []string{
		fmt.Sprintf("%d file_contexts entries skipped", n-fits+1),
		fmt.Sprintf("file_contexts line %d %q", fits+2, medium(fits)),
		fmt.Sprintf("compiled program of %d instructions, over the %d left of the policy's %d", size, left, maxPolicyInsts),
	} {
		if !strings.Contains(w, s) {
			t.Errorf("warning %q lacks %q", w, s)
		}
	}
}

// TestParseBudget: entries each refused, but only after a parse that
// costs (a "$" is nine bytes of RE2), until maxPolicyParse is spent;
// after it, the rest are skipped unparsed, and an entry that fits in
// what is left is used. (Without the budget, Load parses all 300: 5 s
// and 1.1 GiB allocated.)
func TestParseBudget(t *testing.T) {
	dollars := "/" + strings.Repeat("$", 4000)
	const n, first, last = 300, `/.*`, `/etc/.*`
	size := func(re string) int {
		expr, err := toRE2(re)
		if err != nil {
			t.Fatal(err)
		}
		return len(expr)
	}
	parsed := size(first) + (maxPolicyParse-size(first))/size(dollars)*size(dollars)
	if parsed+size(last) > maxPolicyParse || n*size(dollars) < 2*maxPolicyParse {
		t.Fatalf("the test's sizes do not fit maxPolicyParse %d", maxPolicyParse)
	}
	var fc strings.Builder
	fc.WriteString(first + "\tu:r:default_t:s0\n")
	for range n {
		fc.WriteString(dollars + "\tu:r:d_t:s0\n")
	}
	fc.WriteString(last + "\tu:r:etc_t:s0\n")
	root := policyRoot(t, map[string]string{"file_contexts": fc.String()})

	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	start := time.Now()
	p, err := Load(root)
	elapsed := time.Since(start)
	runtime.ReadMemStats(&after)
	if err != nil {
		t.Fatal(err)
	}
	alloc := after.TotalAlloc - before.TotalAlloc
	t.Logf("Load: %v, %.1f MiB allocated", elapsed, float64(alloc)/(1<<20))
	if alloc > 256<<20 {
		t.Errorf("Load allocated %d bytes; want under 256 MiB", alloc)
	}
	if p.Entries != 2 || p.Skipped != n || p.parsed != parsed+size(last) {
		t.Errorf("%d entries, %d skipped, %d bytes parsed; want 2, %d, %d", p.Entries, p.Skipped, p.parsed, n, parsed+size(last))
	}
	checkLookups(t, p, []lookup{{file, "/etc/x", "u:r:etc_t:s0"}, {file, "/x", "u:r:default_t:s0"}})
	if w := p.Warning(); !strings.Contains(w, "line 2 ") || !strings.Contains(w, "compiled program of 12007 instructions") {
		t.Errorf("warning %q", w)
	}
}

// allBuckets is p's top bucket and its others, built.
func (p *Policy) allBuckets() []*bucket {
	all := []*bucket{&p.top}
	for _, b := range p.buckets {
		b.once.Do(func() { p.build(b) })
		all = append(all, b)
	}
	return all
}

// nodes is the top node of each of p's buckets (allBuckets).
func (p *Policy) nodes() []*node {
	var out []*node
	for _, b := range p.allBuckets() {
		out = append(out, &b.node)
	}
	return out
}
