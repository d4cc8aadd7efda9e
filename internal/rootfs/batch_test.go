package rootfs

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/earlyinit/earlyinit/internal/roottest"
	"golang.org/x/sys/unix"
)

// faultOps is the system's fileOps with a fault injected: the failAt-th
// call fails with EIO (a write writes half its data first: a torn
// temporary file); with crash, every call from failAt on fails without
// effect, as if the process died there. It also checks the flush order a
// power cut relies on: no temporary file renamed before a syncfs that
// followed its last change, nothing renamed after a Barrier until every
// rename before it is flushed.
type faultOps struct {
	failAt  int
	crash   bool
	phaseOf map[string]int // base name -> Barriers before it

	calls      int
	syncs      int
	fdName     map[int]string  // open temporary files
	dirty      map[string]bool // temporaries changed since the last syncfs
	unflushed  map[string]int  // renames since the last syncfs, and their phases
	violations []string
}

func newFaultOps(failAt int, crash bool) *faultOps {
	f := &faultOps{failAt: failAt, crash: crash, phaseOf: map[string]int{}, fdName: map[int]string{}, dirty: map[string]bool{}, unflushed: map[string]int{}}
	for _, bf := range batchFiles {
		f.phaseOf[path.Base(bf.name)] = bf.phase
	}
	return f
}

// fail counts a call and tells whether it fails.
func (f *faultOps) fail() bool {
	f.calls++
	return f.failAt > 0 && (f.calls == f.failAt || (f.crash && f.calls > f.failAt))
}

func (f *faultOps) create(dirfd int, name string) (int, error) {
	if f.fail() {
		return -1, unix.EIO
	}
	fd, err := sysOps{}.create(dirfd, name)
	if err == nil {
		f.fdName[fd] = name
		f.dirty[name] = true
	}
	return fd, err
}

func (f *faultOps) write(fd int, p []byte) (int, error) {
	f.dirty[f.fdName[fd]] = true
	if f.fail() {
		if !f.crash || f.calls == f.failAt {
			n, _ := sysOps{}.write(fd, p[:len(p)/2])
			return n, unix.EIO
		}
		return 0, unix.EIO
	}
	return sysOps{}.write(fd, p)
}

func (f *faultOps) fchown(fd, uid, gid int) error {
	f.dirty[f.fdName[fd]] = true
	if f.fail() {
		return unix.EIO
	}
	return sysOps{}.fchown(fd, uid, gid)
}

func (f *faultOps) fchmod(fd int, mode uint32) error {
	f.dirty[f.fdName[fd]] = true
	if f.fail() {
		return unix.EIO
	}
	return sysOps{}.fchmod(fd, mode)
}

func (f *faultOps) fsync(fd int) error {
	if f.fail() {
		return unix.EIO
	}
	return sysOps{}.fsync(fd)
}

// close always closes the fd (a failed close(2) still frees it), then
// reports the fault.
func (f *faultOps) close(fd int) error {
	delete(f.fdName, fd)
	failed := f.fail()
	if failed && f.crash && f.calls > f.failAt {
		unix.Close(fd) // a dead process's fds close too
		return unix.EIO
	}
	err := sysOps{}.close(fd)
	if failed {
		return unix.EIO
	}
	return err
}

func (f *faultOps) syncfs(fd int) error {
	if f.fail() {
		return unix.EIO
	}
	f.syncs++
	f.dirty = map[string]bool{}
	f.unflushed = map[string]int{}
	return sysOps{}.syncfs(fd)
}

func (f *faultOps) rename(dirfd int, from, to string) error {
	if f.fail() {
		return unix.EIO
	}
	if f.dirty[from] {
		f.violations = append(f.violations, fmt.Sprintf("%s renamed to %s before a flush", from, to))
	}
	for u, p := range f.unflushed {
		if p < f.phaseOf[to] {
			f.violations = append(f.violations, fmt.Sprintf("%s renamed after a Barrier before the rename of %s was flushed", to, u))
		}
	}
	f.unflushed[to] = f.phaseOf[to]
	return sysOps{}.rename(dirfd, from, to)
}

func (f *faultOps) unlink(dirfd int, name string) error {
	if f.fail() {
		return unix.EIO
	}
	return sysOps{}.unlink(dirfd, name)
}

func (f *faultOps) symlink(target string, dirfd int, name string) error {
	if f.fail() {
		return unix.EIO
	}
	return sysOps{}.symlink(target, dirfd, name)
}

// batchFile is one file of the fault test: its old content ("" for none)
// and its new; link makes it a symlink to the content.
type batchFile struct {
	run   bool // in the second root, on another filesystem
	name  string
	old   string
	new   string
	link  bool
	phase int // Barriers before it
}

var batchFiles = []batchFile{
	{name: "/etc/a", old: "old a\n", new: strings.Repeat("new a\n", 100)},
	{name: "/etc/new/b", new: strings.Repeat("new b\n", 50)},
	{name: "/var/lib/c", old: strings.Repeat("old c\n", 30), new: "c\n"},
	{run: true, name: "/run/earlyinit/d", old: "old d\n", new: "new d\n"},
	{name: "/var/lib/instance", old: "instances/old", new: "instances/new", link: true},
	{name: "/var/lib/m", old: "old-id\n", new: "new-id\n", phase: 1},
	{name: "/etc/hostname", new: "h\n", phase: 1},
	{name: "/var/lib/z", old: "old z\n", new: "new z\n", phase: 2},
}

// batchRoots makes the test's two roots, the second a tmpfs (two
// filesystems to flush), each holding the old files.
func batchRoots(t *testing.T) (root, run *Root) {
	t.Helper()
	var err error
	if root, err = Open(t.TempDir()); err != nil {
		t.Fatal(err)
	}
	if run, err = Open(roottest.Tmpfs(t, "1m")); err != nil {
		t.Fatal(err)
	}
	for _, f := range batchFiles {
		r := root
		if f.run {
			r = run
		}
		switch {
		case f.old == "":
		case f.link:
			err = r.Symlink(f.old, f.name)
		default:
			err = r.WriteFile(f.name, []byte(f.old), 0o644, 0, 0)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	return root, run
}

// stageAll stages every batchFile in b; with abort, the first failure
// aborts the batch (as cache.Store does), else it is skipped (as the
// identity files are). It returns whether the batch is still to commit,
// and how many files failed.
func stageAll(b *Batch, root, run *Root, abort bool) (bool, int) {
	failed := 0
	for i, f := range batchFiles {
		if i > 0 && f.phase > batchFiles[i-1].phase {
			b.Barrier()
		}
		r := root
		if f.run {
			r = run
		}
		var err error
		switch {
		case f.link:
			err = b.StageSymlink(r, f.new, f.name)
		default:
			err = b.Stage(r, f.name, []byte(f.new), 0o640, 0, 1000)
		}
		if err != nil {
			failed++
			if abort {
				b.Abort()
				return false, failed
			}
		}
	}
	return true, failed
}

// state reads each batchFile: "old", "new", or what is wrong with it.
func state(t *testing.T, root, run *Root) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, f := range batchFiles {
		r := root
		if f.run {
			r = run
		}
		p := r.Path(f.name)
		var got string
		var err error
		if f.link {
			got, err = os.Readlink(p)
		} else {
			var b []byte
			b, err = os.ReadFile(p)
			got = string(b)
		}
		switch {
		case errors.Is(err, os.ErrNotExist) && f.old == "":
			out[f.name] = "old"
		case err != nil:
			out[f.name] = err.Error()
		case got == f.old:
			out[f.name] = "old"
		case got == f.new:
			out[f.name] = "new"
		default:
			out[f.name] = fmt.Sprintf("torn: %d bytes %.20q", len(got), got)
		}
	}
	return out
}

// temps lists the temporary files left in dir.
func temps(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && strings.Contains(d.Name(), ".earlyinit-") {
			out = append(out, p)
		}
		return nil
	})
	return out
}

func openFds(t *testing.T) int {
	t.Helper()
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	return len(ents)
}

// TestBatchFaults fails each call of a batch in turn, the N-th for every N
// a clean run makes: the batch reports it, each file is old or new (never
// torn, empty or missing), the marker is new only when every other file
// is, and no temporary file or fd is left. With crash, every call from the
// N-th on fails (the process died there): each file is still old or new.
func TestBatchFaults(t *testing.T) {
	roottest.Require(t)
	// A clean run, to count the calls and check the flush order.
	root, run := batchRoots(t)
	clean := newFaultOps(0, false)
	b := &Batch{ops: clean}
	stageAll(b, root, run, true)
	if err := b.Commit(); err != nil {
		t.Fatal(err)
	}
	for name, s := range state(t, root, run) {
		if s != "new" {
			t.Errorf("clean run: %s is %s", name, s)
		}
	}
	for _, v := range clean.violations {
		t.Errorf("clean run: %s", v)
	}
	if len(clean.unflushed) > 0 {
		t.Errorf("clean run: renames of %v not flushed at the end", clean.unflushed)
	}
	// Two filesystems flushed for the temporaries and for the renames
	// before the first Barrier; one for each of the two steps after:
	// 6 syncfs, whatever the number of files.
	if clean.syncs > 6 {
		t.Errorf("clean run: %d syncfs, want at most 6", clean.syncs)
	}
	for _, f := range batchFiles {
		r := root
		if f.run {
			r = run
		}
		if !b.Committed(r, f.name) {
			t.Errorf("clean run: Committed(%s) = false", f.name)
		}
		if f.link {
			continue
		}
		fi, err := os.Stat(r.Path(f.name))
		if err != nil {
			t.Fatal(err)
		}
		if st := fi.Sys().(*syscall.Stat_t); fi.Mode().Perm() != 0o640 || st.Uid != 0 || st.Gid != 1000 {
			t.Errorf("clean run: %s mode %v owner %d:%d, want 0640 0:1000", f.name, fi.Mode(), st.Uid, st.Gid)
		}
	}
	total := clean.calls
	if total < len(batchFiles)*3 {
		t.Fatalf("clean run made %d calls: the fault layer is not in the path", total)
	}

	for _, mode := range []struct {
		name         string
		crash, abort bool
	}{
		{"fail/abort", false, true},
		{"fail/skip", false, false},
		{"crash", true, true},
	} {
		t.Run(mode.name, func(t *testing.T) {
			for n := 1; n <= total; n++ {
				root, run := batchRoots(t)
				fds := openFds(t)
				f := newFaultOps(n, mode.crash)
				b := &Batch{ops: f}
				var err error
				commit, failed := stageAll(b, root, run, mode.abort)
				if commit {
					err = b.Commit()
				}
				if f.calls < n {
					t.Errorf("call %d: the run made only %d calls", n, f.calls)
					continue
				}
				if err == nil && failed == 0 {
					t.Errorf("call %d failed and neither Stage nor Commit reported it", n)
				}
				st := state(t, root, run)
				allNew := true
				for _, bf := range batchFiles {
					if s := st[bf.name]; s != "old" && s != "new" {
						t.Errorf("call %d: %s is %s", n, bf.name, s)
					}
					if st[bf.name] != "new" {
						allNew = false
					}
					// A file after a Barrier is new only when every
					// file before it is; skipping a file that failed
					// to stage is the caller's choice, which waives it.
					for _, before := range batchFiles {
						if mode.abort && before.phase < bf.phase && st[bf.name] == "new" && st[before.name] != "new" {
							t.Errorf("call %d: %s is new but %s, before a Barrier, is %s", n, bf.name, before.name, st[before.name])
						}
					}
				}
				if mode.crash {
					continue
				}
				if err == nil && failed == 0 && !allNew {
					t.Errorf("call %d: Commit succeeded but %v", n, st)
				}
				if left := append(temps(t, root.Dir()), temps(t, run.Dir())...); len(left) > 0 {
					t.Errorf("call %d: temporary files left: %v", n, left)
				}
				if got := openFds(t); got != fds {
					t.Errorf("call %d: %d fds open after, %d before", n, got, fds)
				}
			}
		})
	}
}

// TestBatchErrors: an error names the file; a staging failure leaves the
// batch usable; a committed batch refuses more.
func TestBatchErrors(t *testing.T) {
	roottest.Require(t)
	r, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	// A user's directory with a planted symlink: refused as WriteFile
	// refuses it.
	home := r.Path("/home/alice")
	if err := os.MkdirAll(home, 0o755); err != nil {
		t.Fatal(err)
	}
	os.Chown(home, 1000, 1000)
	if err := os.Symlink("/etc/shadow", filepath.Join(home, ".ssh")); err != nil {
		t.Fatal(err)
	}
	b := NewBatch()
	defer b.Abort()
	err = b.Stage(r, "/home/alice/.ssh", []byte("x"), 0o600, 1000, 1000)
	if !errors.Is(err, ErrUnsafe) || !strings.Contains(err.Error(), "/home/alice/.ssh") {
		t.Errorf("Stage over a planted symlink = %v, want ErrUnsafe naming it", err)
	}
	if err := r.WriteFile("/etc/f", nil, 0o644, 0, 0); err != nil {
		t.Fatal(err)
	}
	if err := b.Stage(r, "/etc/f/x", []byte("x"), 0o644, 0, 0); err == nil || !strings.Contains(err.Error(), "/etc/f/x") {
		t.Errorf("Stage under a file = %v, want an error naming it", err)
	}
	if err := b.Stage(r, "/etc/hostname", []byte("h\n"), 0o644, 0, 0); err != nil {
		t.Fatal(err)
	}
	if err := b.Commit(); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(r.Path("/etc/hostname")); string(got) != "h\n" {
		t.Errorf("/etc/hostname = %q", got)
	}
	if err := b.Stage(r, "/etc/x", nil, 0o644, 0, 0); err == nil {
		t.Error("Stage after Commit succeeded")
	}
	if err := b.Commit(); err == nil {
		t.Error("second Commit succeeded")
	}
	if link, _ := os.Readlink(filepath.Join(home, ".ssh")); link != "/etc/shadow" {
		t.Errorf("the planted symlink was changed: %q", link)
	}
	if left := temps(t, r.Dir()); len(left) > 0 {
		t.Errorf("temporary files left: %v", left)
	}
	// An empty batch commits without a call.
	f := newFaultOps(1, false)
	if err := (&Batch{ops: f}).Commit(); err != nil || f.calls != 0 {
		t.Errorf("empty Commit: %v after %d calls", err, f.calls)
	}
}

// TestBatchAbort: Abort removes every temporary file and writes nothing.
func TestBatchAbort(t *testing.T) {
	roottest.Require(t)
	root, run := batchRoots(t)
	b := NewBatch()
	stageAll(b, root, run, true)
	b.Abort()
	b.Abort()
	for name, s := range state(t, root, run) {
		if s != "old" {
			t.Errorf("%s is %s after Abort", name, s)
		}
	}
	if left := append(temps(t, root.Dir()), temps(t, run.Dir())...); len(left) > 0 {
		t.Errorf("temporary files left: %v", left)
	}
	if err := b.Commit(); err == nil {
		t.Error("Commit after Abort succeeded")
	}
}

// BenchmarkWrite writes 16 files of 1 KiB, as the instance step does, one
// WriteFile each (an fsync per file and per directory) against one Batch,
// on the test's temporary directory and on a tmpfs.
func BenchmarkWrite(b *testing.B) {
	data := bytes.Repeat([]byte("x"), 1024)
	const files = 16
	dirs := map[string]string{"disk": b.TempDir()}
	if os.Geteuid() == 0 {
		d := b.TempDir()
		if err := unix.Mount("tmpfs", d, "tmpfs", 0, "size=16m"); err != nil {
			b.Fatalf("mount tmpfs: %v", err)
		}
		b.Cleanup(func() { unix.Unmount(d, unix.MNT_DETACH) })
		dirs["tmpfs"] = d
	}
	for _, where := range []string{"disk", "tmpfs"} {
		dir, ok := dirs[where]
		if !ok {
			continue
		}
		r, err := Open(dir)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(where+"/per-file-fsync", func(b *testing.B) {
			for b.Loop() {
				for i := range files {
					if err := r.WriteFile(fmt.Sprintf("/d%d/f%d", i%4, i), data, 0o644, 0, 0); err != nil {
						b.Fatal(err)
					}
				}
			}
			b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N*files), "µs/file")
		})
		b.Run(where+"/batch-syncfs", func(b *testing.B) {
			for b.Loop() {
				batch := NewBatch()
				for i := range files {
					if err := batch.Stage(r, fmt.Sprintf("/d%d/f%d", i%4, i), data, 0o644, 0, 0); err != nil {
						b.Fatal(err)
					}
				}
				if err := batch.Commit(); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N*files), "µs/file")
		})
	}
}
