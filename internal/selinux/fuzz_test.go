package selinux

import (
	"bytes"
	"compress/gzip"
	"io"
	"io/fs"
	"os"
	"regexp/syntax"
	"runtime"
	"strings"
	"testing"
	"time"
)

// FuzzLoad reads arbitrary file_contexts text, looks paths up and
// compiles every expression it kept. Nothing may panic; each kept
// expression compiles to the program progSize counted, within
// maxRegexInsts, and all of them within maxPolicyInsts, with no more
// parsed than maxPolicyParse; and the cost is bounded: what is allocated
// grows at most linearly with the text and with the instructions kept,
// and no input takes seconds.
func FuzzLoad(f *testing.F) {
	if z, err := os.Open("testdata/debian/file_contexts.gz"); err == nil {
		r, err := gzip.NewReader(z)
		if err == nil {
			data, _ := io.ReadAll(r)
			lines := bytes.SplitAfter(data, []byte("\n"))
			f.Add(bytes.Join(lines[:40], nil))
		}
		z.Close()
	}
	for _, s := range []string{
		"/.*\tu:r:default_t:s0\n/etc/hostname\t--\tu:r:net_t:s0\n/etc(/.*)?\t-d\tu:r:etc_t:s0\n/run/.*\t<<none>>\n",
		"/(" + strings.Repeat(".{0,1000}", 4) + ")x\tu:r:x_t:s0\n",
		"/a{0,496}\tu:r:a_t:s0\n/b{0,497}\tu:r:b_t:s0\n",
		"/b/(x)\\1\tu:r:b_t:s0\n/c(?!d)\tu:r:c_t:s0\n/\\pL\tu:r:p_t:s0\n",
		"/a\\Q.*$\\E|/b$\\Z\tu:r:q_t:s0\n/[]a[:digit:]]x\tu:r:k_t:s0\n/(?i)ab?c*\tu:r:i_t:s0\n",
		"/a u:r:a_t:s0\n\n/b\n",
		"\x8a\xff\x7c\xf9\x08\x00\x00\x00",
	} {
		f.Add([]byte(s))
	}
	paths := []string{"/", "/etc", "/etc/hostname", "/a", "/ax", "/a/b/c/d/e", "/run/x\n", "//x//", ""}
	f.Fuzz(func(t *testing.T, data []byte) {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		start := time.Now()
		defer func() {
			// Milliseconds; the bound is for a blow-up, not a figure.
			if d := time.Since(start); d > 10*time.Second {
				t.Fatalf("%d bytes of text took %v", len(data), d)
			}
		}()
		p := &Policy{}
		if err := p.parseContexts("file_contexts", data, 0); err != nil {
			return
		}
		for _, path := range paths {
			p.Lookup(path, 0)
			p.Lookup(path, fs.ModeDir)
		}
		var kept []*spec
		var walk func(*node)
		walk = func(n *node) {
			for _, s := range n.regexes {
				p.match(s, s.prefix) // compiles it
				kept = append(kept, s)
			}
			for _, c := range n.children {
				walk(c)
			}
		}
		for _, nd := range p.nodes() {
			walk(nd)
		}
		runtime.ReadMemStats(&after)

		total := 0
		for _, s := range kept {
			if s.re == nil {
				t.Fatalf("%q was kept and does not compile", s.expr)
			}
			tree, err := syntax.Parse(s.expr, syntax.Perl)
			if err != nil {
				t.Fatal(err)
			}
			prog, err := syntax.Compile(tree.Simplify())
			if err != nil {
				t.Fatal(err)
			}
			n := progSize(tree)
			if n != int64(len(prog.Inst)) || n > maxRegexInsts {
				t.Fatalf("%q: progSize %d, compiled to %d; limit %d", s.expr, n, len(prog.Inst), maxRegexInsts)
			}
			total += int(n)
		}
		if total != p.insts || total > maxPolicyInsts || p.parsed > maxPolicyParse {
			t.Fatalf("kept %d instructions, counted %d, budget %d; parsed %d bytes, budget %d",
				total, p.insts, maxPolicyInsts, p.parsed, maxPolicyParse)
		}
		// Parsing is at most about 1 KiB per byte of text ("$" is
		// "(?:\n?\z)"), compiling about 450 bytes per instruction.
		limit := 1<<20 + 4<<10*uint64(len(data)) + 2<<10*uint64(total)
		if alloc := after.TotalAlloc - before.TotalAlloc; alloc > limit {
			t.Fatalf("%d bytes of text, %d instructions: %d bytes allocated, over %d", len(data), total, alloc, limit)
		}

		// The same text with the checks deferred (OpenRoot's) gives the
		// same labels, unless Load ran out of a policy-wide budget.
		d := &Policy{deferred: true}
		if err := d.parseContexts("file_contexts", data, 0); err != nil {
			t.Fatalf("deferred checks: %v; Load: none", err)
		}
		for _, path := range paths {
			for _, mode := range []fs.FileMode{0, fs.ModeDir} {
				c, ok := p.Lookup(path, mode)
				if dc, dok := d.Lookup(path, mode); !p.overBudget && (dc != c || dok != ok) {
					t.Fatalf("Lookup(%q, %v): %q, %v; with the checks deferred %q, %v", path, mode, c, ok, dc, dok)
				}
			}
		}
	})
}
