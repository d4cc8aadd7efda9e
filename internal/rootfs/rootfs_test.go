package rootfs

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

// modes runs f with a Root using openat2, with one forced onto the
// hand-written walk, and with one whose openat2 fails with ENOSYS (as on
// a kernel before 5.6, where the walk is the fallback), so all three are
// held to the same semantics.
//
// The root is nested five levels deep in the test's temporary directory so
// that a broken resolution following "../../.." out of it lands in that
// directory, where outsideTree sees it, and never on the host.
func modes(t *testing.T, f func(t *testing.T, r *Root)) {
	t.Helper()
	for _, m := range []struct {
		name     string
		walkOnly bool
		enosys   bool
	}{{"openat2", false, false}, {"walk", true, false}, {"openat2 ENOSYS", false, true}} {
		t.Run(m.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "r1", "r2", "r3", "r4", "root")
			if err := os.MkdirAll(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			r, err := Open(dir)
			if err != nil {
				t.Fatal(err)
			}
			r.walkOnly = m.walkOnly
			if m.enosys {
				r.openat2 = func(int, string, *unix.OpenHow) (int, error) { return -1, unix.ENOSYS }
			}
			f(t, r)
		})
	}
}

// tree lists every path under dir, with symlink targets, for comparisons.
func tree(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		if d.Type()&fs.ModeSymlink != 0 {
			target, _ := os.Readlink(p)
			rel += " -> " + target
		}
		out = append(out, rel)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(out)
	return out
}

// outside returns a directory outside r, in the same temporary tree.
func outsideDir(t *testing.T, r *Root) string {
	t.Helper()
	d := filepath.Join(base(r), "outside")
	if err := os.MkdirAll(d, 0o755); err != nil {
		t.Fatal(err)
	}
	return d
}

func base(r *Root) string {
	return filepath.Dir(filepath.Dir(filepath.Dir(filepath.Dir(filepath.Dir(r.Dir())))))
}

// outsideTree lists everything in the temporary tree but the root.
func outsideTree(t *testing.T, r *Root) []string {
	t.Helper()
	var out []string
	for _, p := range tree(t, base(r)) {
		if p != "r1/r2/r3/r4/root" && !strings.HasPrefix(p, "r1/r2/r3/r4/root/") {
			out = append(out, p)
		}
	}
	return out
}

func mustSymlink(t *testing.T, target, link string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(link), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
}

func mustWrite(t *testing.T, p, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestWriteFileConfined(t *testing.T) {
	for _, tt := range []struct {
		name string
		// setup prepares the root; outside is a directory outside it
		// that must stay untouched.
		setup func(t *testing.T, root, outside string)
		write string
		// lands is where the data must end up, relative to the root.
		lands string
	}{
		{
			name:  "plain",
			write: "/etc/hostname",
			lands: "etc/hostname",
		},
		{
			name:  "dotdot",
			write: "../../etc/x",
			lands: "etc/x",
		},
		{
			name:  "dotdot inside",
			write: "/etc/../../../../var/x",
			lands: "var/x",
		},
		{
			name: "absolute symlink to /tmp/outside",
			setup: func(t *testing.T, root, outside string) {
				mustSymlink(t, "/tmp/outside", filepath.Join(root, "etc"))
			},
			write: "/etc/x",
			lands: "tmp/outside/x",
		},
		{
			name: "absolute symlink to the real outside dir",
			setup: func(t *testing.T, root, outside string) {
				mustSymlink(t, outside, filepath.Join(root, "etc"))
			},
			write: "/etc/x",
			lands: strings.TrimPrefix(filepath.Join("OUTSIDE", "x"), "/"),
		},
		{
			name: "relative symlink up and out",
			setup: func(t *testing.T, root, outside string) {
				mustSymlink(t, "../../..", filepath.Join(root, "a"))
			},
			write: "/a/x",
			lands: "x",
		},
		{
			name: "nested relative symlink up and out",
			setup: func(t *testing.T, root, outside string) {
				mustSymlink(t, "../../../../../etc", filepath.Join(root, "d", "e", "a"))
			},
			write: "/d/e/a/x",
			lands: "etc/x",
		},
		{
			name: "symlinked parent dirs",
			setup: func(t *testing.T, root, outside string) {
				if err := os.MkdirAll(filepath.Join(root, "real", "lib"), 0o755); err != nil {
					t.Fatal(err)
				}
				mustSymlink(t, "/real", filepath.Join(root, "var"))
				mustSymlink(t, "../real/lib", filepath.Join(root, "real", "l"))
			},
			write: "/var/l/sub/x",
			lands: "real/lib/sub/x",
		},
		{
			name: "symlink chain with dotdot in targets",
			setup: func(t *testing.T, root, outside string) {
				if err := os.MkdirAll(filepath.Join(root, "p", "q"), 0o755); err != nil {
					t.Fatal(err)
				}
				// s -> p/q ; s/.. is physically p, not the root.
				mustSymlink(t, "p/q", filepath.Join(root, "s"))
				mustSymlink(t, "../s/..", filepath.Join(root, "p", "t"))
			},
			write: "/p/t/x",
			lands: "p/x",
		},
		{
			name: "last component absolute symlink",
			setup: func(t *testing.T, root, outside string) {
				mustWrite(t, filepath.Join(outside, "hostname"), "outside")
				mustSymlink(t, filepath.Join(outside, "hostname"), filepath.Join(root, "etc", "hostname"))
			},
			write: "/etc/hostname",
			lands: strings.TrimPrefix(filepath.Join("OUTSIDE", "hostname"), "/"),
		},
		{
			name: "last component relative symlink up and out",
			setup: func(t *testing.T, root, outside string) {
				mustSymlink(t, "../../../../../resolv.conf", filepath.Join(root, "etc", "resolv.conf"))
			},
			write: "/etc/resolv.conf",
			lands: "resolv.conf",
		},
		{
			name: "dangling symlinked parent",
			setup: func(t *testing.T, root, outside string) {
				mustSymlink(t, "../../nowhere/dir", filepath.Join(root, "link"))
			},
			write: "/link/f",
			lands: "nowhere/dir/f",
		},
	} {
		t.Run(tt.name, func(t *testing.T) {
			modes(t, func(t *testing.T, r *Root) {
				outside := outsideDir(t, r)
				if tt.setup != nil {
					tt.setup(t, r.Dir(), outside)
				}
				before := outsideTree(t, r)

				if err := r.WriteFile(tt.write, []byte("data"), 0o640, 1000, 1000); err != nil {
					t.Fatalf("WriteFile(%q): %v", tt.write, err)
				}

				lands := strings.Replace(tt.lands, "OUTSIDE", strings.TrimPrefix(outside, "/"), 1)
				got, err := os.ReadFile(filepath.Join(r.Dir(), lands))
				if err != nil || string(got) != "data" {
					t.Errorf("%s in root = %q, %v; want %q", lands, got, err, "data")
				}
				if after := outsideTree(t, r); !equal(before, after) {
					t.Errorf("written outside the root: %v -> %v", before, after)
				}
				if b, err := os.ReadFile(filepath.Join(outside, "hostname")); err == nil && string(b) != "outside" {
					t.Errorf("outside file overwritten: %q", b)
				}
				if _, err := os.Lstat("/tmp/outside/x"); err == nil && strings.Contains(tt.name, "/tmp/outside") {
					t.Errorf("/tmp/outside/x written on the host")
				}
				// Read back through the same name, confined the same way.
				if b, err := r.ReadFile(tt.write); err != nil || string(b) != "data" {
					t.Errorf("ReadFile(%q) = %q, %v", tt.write, b, err)
				}
			})
		})
	}
}

func equal(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestWriteFileErrors(t *testing.T) {
	for _, tt := range []struct {
		name  string
		setup func(t *testing.T, root string)
		write string
		errIs error
	}{
		{
			name: "symlink loop",
			setup: func(t *testing.T, root string) {
				mustSymlink(t, "b", filepath.Join(root, "a"))
				mustSymlink(t, "a", filepath.Join(root, "b"))
			},
			write: "/a/x",
			errIs: unix.ELOOP,
		},
		{
			name: "last component symlink loop",
			setup: func(t *testing.T, root string) {
				mustSymlink(t, "/b", filepath.Join(root, "a"))
				mustSymlink(t, "/a", filepath.Join(root, "b"))
			},
			write: "/a",
			errIs: unix.ELOOP,
		},
		{
			name: "parent is a file",
			setup: func(t *testing.T, root string) {
				mustWrite(t, filepath.Join(root, "etc"), "file")
			},
			write: "/etc/x",
			errIs: unix.ENOTDIR,
		},
		{
			name:  "root itself",
			write: "/",
		},
		{
			name: "target is a directory",
			setup: func(t *testing.T, root string) {
				mustWrite(t, filepath.Join(root, "etc", "hosts", "keep"), "keep")
			},
			write: "/etc/hosts",
		},
	} {
		t.Run(tt.name, func(t *testing.T) {
			modes(t, func(t *testing.T, r *Root) {
				if tt.setup != nil {
					tt.setup(t, r.Dir())
				}
				before := tree(t, r.Dir())
				err := r.WriteFile(tt.write, []byte("data"), 0o644, 0, 0)
				if err == nil {
					t.Fatalf("WriteFile(%q) succeeded", tt.write)
				}
				if tt.errIs != nil && !errors.Is(err, tt.errIs) {
					t.Errorf("WriteFile(%q) = %v, want %v", tt.write, err, tt.errIs)
				}
				if !strings.Contains(err.Error(), r.Dir()) {
					t.Errorf("error %q does not name the root", err)
				}
				if after := tree(t, r.Dir()); !equal(before, after) {
					t.Errorf("failed write changed the root (temp file left?): %v -> %v", before, after)
				}
			})
		})
	}
}

func TestModesAndOwner(t *testing.T) {
	old := syscall.Umask(0o277)
	defer syscall.Umask(old)
	modes(t, func(t *testing.T, r *Root) {
		for _, tt := range []struct {
			name string
			mode fs.FileMode
			uid  int
		}{
			{"/a/f644", 0o644, 1000},
			{"/a/f600", 0o600, 0},
			{"/a/f4755", 0o755 | fs.ModeSetuid, 0},
			{"/a/f1777", 0o777 | fs.ModeSticky, 1000},
		} {
			if err := r.WriteFile(tt.name, []byte("x"), tt.mode, tt.uid, tt.uid); err != nil {
				t.Fatal(err)
			}
			fi, err := os.Lstat(r.Path(tt.name))
			if err != nil {
				t.Fatal(err)
			}
			if fi.Mode() != tt.mode {
				t.Errorf("%s: mode %v, want %v", tt.name, fi.Mode(), tt.mode)
			}
			st := fi.Sys().(*syscall.Stat_t)
			if int(st.Uid) != tt.uid || int(st.Gid) != tt.uid {
				t.Errorf("%s: owner %d:%d, want %d:%d", tt.name, st.Uid, st.Gid, tt.uid, tt.uid)
			}
			// Stat in the root agrees with os.Lstat.
			rfi, err := r.Stat(tt.name)
			if err != nil {
				t.Fatal(err)
			}
			if rfi.Mode() != fi.Mode() || rfi.Sys().(*syscall.Stat_t).Uid != st.Uid || rfi.Size() != 1 || rfi.Name() != filepath.Base(tt.name) {
				t.Errorf("%s: Stat = %v %v %d, want %v", tt.name, rfi.Name(), rfi.Mode(), rfi.Size(), fi.Mode())
			}
		}
		// Parent created 0755, root-owned, despite the umask.
		fi, err := os.Stat(r.Path("/a"))
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode() != fs.ModeDir|0o755 || fi.Sys().(*syscall.Stat_t).Uid != 0 {
			t.Errorf("/a: mode %v uid %d, want drwxr-xr-x root", fi.Mode(), fi.Sys().(*syscall.Stat_t).Uid)
		}
		// Rewriting changes mode and owner.
		if err := r.WriteFile("/a/f644", []byte("y"), 0o600, 0, 0); err != nil {
			t.Fatal(err)
		}
		fi, _ = os.Lstat(r.Path("/a/f644"))
		if fi.Mode() != 0o600 || fi.Sys().(*syscall.Stat_t).Uid != 0 {
			t.Errorf("rewrite: mode %v uid %d, want 0600 root", fi.Mode(), fi.Sys().(*syscall.Stat_t).Uid)
		}
	})
}

func TestWriteFileAtomic(t *testing.T) {
	modes(t, func(t *testing.T, r *Root) {
		oldData := bytes.Repeat([]byte("o"), 64<<10)
		newData := bytes.Repeat([]byte("n"), 64<<10)
		if err := r.WriteFile("/etc/f", oldData, 0o644, 0, 0); err != nil {
			t.Fatal(err)
		}
		done := make(chan struct{})
		bad := make(chan string, 1)
		go func() {
			defer close(done)
			for range 300 {
				b, err := os.ReadFile(r.Path("/etc/f"))
				if err != nil {
					bad <- err.Error()
					return
				}
				if !bytes.Equal(b, oldData) && !bytes.Equal(b, newData) {
					bad <- "torn read of " + string(b[:10]) + "..."
					return
				}
			}
		}()
		for i := 0; ; i++ {
			select {
			case <-done:
				select {
				case msg := <-bad:
					t.Fatal(msg)
				default:
				}
				if got := tree(t, r.Path("/etc")); !equal(got, []string{".", "f"}) {
					t.Errorf("files left behind: %v", got)
				}
				return
			default:
			}
			d := newData
			if i%2 == 1 {
				d = oldData
			}
			if err := r.WriteFile("/etc/f", d, 0o644, 0, 0); err != nil {
				t.Fatal(err)
			}
		}
	})
}

func TestAppendFile(t *testing.T) {
	old := syscall.Umask(0o077)
	defer syscall.Umask(old)
	modes(t, func(t *testing.T, r *Root) {
		outside := outsideDir(t, r)
		mustSymlink(t, outside, filepath.Join(r.Dir(), "var", "log"))
		if err := r.AppendFile("/var/log/x.log", []byte("one\n"), 0o644, 1000, 1000); err != nil {
			t.Fatal(err)
		}
		if err := r.AppendFile("/var/log/x.log", []byte("two\n"), 0o600, 0, 0); err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(r.Dir(), outside, "x.log")
		b, err := os.ReadFile(p)
		if err != nil || string(b) != "one\ntwo\n" {
			t.Errorf("appended = %q, %v", b, err)
		}
		fi, _ := os.Stat(p)
		if fi.Mode() != 0o644 || fi.Sys().(*syscall.Stat_t).Uid != 1000 {
			t.Errorf("mode %v uid %d, want the creation's 0644 1000", fi.Mode(), fi.Sys().(*syscall.Stat_t).Uid)
		}
		if got := tree(t, outside); !equal(got, []string{"."}) {
			t.Errorf("outside written: %v", got)
		}
	})
}

func TestReadFile(t *testing.T) {
	modes(t, func(t *testing.T, r *Root) {
		outside := outsideDir(t, r)
		mustWrite(t, filepath.Join(outside, "secret"), "outside")
		mustSymlink(t, filepath.Join(outside, "secret"), filepath.Join(r.Dir(), "link"))
		if b, err := r.ReadFile("/link"); err == nil {
			t.Errorf("ReadFile through an absolute symlink read %q from outside", b)
		} else if !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("ReadFile = %v, want not exist", err)
		}
		mustWrite(t, filepath.Join(r.Dir(), outside, "secret"), "inside")
		if b, err := r.ReadFile("/link"); err != nil || string(b) != "inside" {
			t.Errorf("ReadFile(/link) = %q, %v; want %q", b, err, "inside")
		}
		if err := unix.Mkfifo(filepath.Join(r.Dir(), "fifo"), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := r.ReadFile("/fifo"); err == nil {
			t.Errorf("ReadFile of a FIFO succeeded")
		}
		if err := r.AppendFile("/fifo", []byte("x"), 0o644, 0, 0); err == nil {
			t.Errorf("AppendFile to a FIFO succeeded")
		}
	})
}

func TestMkdirAll(t *testing.T) {
	old := syscall.Umask(0o077)
	defer syscall.Umask(old)
	modes(t, func(t *testing.T, r *Root) {
		outside := outsideDir(t, r)
		mustSymlink(t, outside, filepath.Join(r.Dir(), "home"))
		if err := r.MkdirAll("/home/u/.ssh", 0o700, 1000, 1000); err != nil {
			t.Fatal(err)
		}
		base := filepath.Join(r.Dir(), outside)
		for _, tt := range []struct {
			p    string
			mode fs.FileMode
			uid  uint32
		}{
			{filepath.Join(base, "u"), fs.ModeDir | 0o755, 0},
			{filepath.Join(base, "u", ".ssh"), fs.ModeDir | 0o700, 1000},
		} {
			fi, err := os.Lstat(tt.p)
			if err != nil {
				t.Fatal(err)
			}
			if fi.Mode() != tt.mode || fi.Sys().(*syscall.Stat_t).Uid != tt.uid {
				t.Errorf("%s: %v uid %d, want %v uid %d", tt.p, fi.Mode(), fi.Sys().(*syscall.Stat_t).Uid, tt.mode, tt.uid)
			}
		}
		// An existing directory is left as it is.
		if err := r.MkdirAll("/home/u/.ssh", 0o755, 0, 0); err != nil {
			t.Fatal(err)
		}
		if fi, _ := os.Lstat(filepath.Join(base, "u", ".ssh")); fi.Mode() != fs.ModeDir|0o700 {
			t.Errorf("existing dir changed to %v", fi.Mode())
		}
		if got := tree(t, outside); !equal(got, []string{"."}) {
			t.Errorf("outside written: %v", got)
		}
		mustWrite(t, filepath.Join(r.Dir(), "file"), "x")
		if err := r.MkdirAll("/file", 0o755, 0, 0); err == nil {
			t.Errorf("MkdirAll over a file succeeded")
		}
	})
}

func TestSymlinkReadlinkStat(t *testing.T) {
	modes(t, func(t *testing.T, r *Root) {
		outside := outsideDir(t, r)
		mustSymlink(t, outside, filepath.Join(r.Dir(), "var"))
		if err := r.Symlink("instances/a", "/var/lib/instance"); err != nil {
			t.Fatal(err)
		}
		link := filepath.Join(r.Dir(), outside, "lib", "instance")
		if got, err := os.Readlink(link); err != nil || got != "instances/a" {
			t.Errorf("link = %q, %v", got, err)
		}
		// Replaced atomically, also over a regular file.
		if err := r.Symlink("instances/b", "/var/lib/instance"); err != nil {
			t.Fatal(err)
		}
		if got, err := r.Readlink("/var/lib/instance"); err != nil || got != "instances/b" {
			t.Errorf("Readlink = %q, %v", got, err)
		}
		mustWrite(t, filepath.Join(r.Dir(), "f"), "x")
		if err := r.Symlink("/etc/passwd", "/f"); err != nil {
			t.Fatal(err)
		}
		if got, _ := os.Readlink(filepath.Join(r.Dir(), "f")); got != "/etc/passwd" {
			t.Errorf("/f -> %q", got)
		}
		if got := tree(t, filepath.Join(r.Dir(), outside, "lib")); !equal(got, []string{".", "instance -> instances/b"}) {
			t.Errorf("temp links left: %v", got)
		}
		// Stat does not follow the last component; Exists counts a
		// dangling link.
		fi, err := r.Stat("/var/lib/instance")
		if err != nil || fi.Mode()&fs.ModeSymlink == 0 {
			t.Errorf("Stat = %v, %v; want a symlink", fi, err)
		}
		if !r.Exists("/var/lib/instance") || r.Exists("/var/lib/missing") {
			t.Errorf("Exists wrong")
		}
		if fi, err := r.Stat("/"); err != nil || !fi.IsDir() {
			t.Errorf("Stat(/) = %v, %v", fi, err)
		}
		if _, err := r.Readlink("/f/.."); err == nil {
			t.Errorf("Readlink of / succeeded")
		}
		if got := tree(t, outside); !equal(got, []string{"."}) {
			t.Errorf("outside written: %v", got)
		}
	})
}

func TestRemove(t *testing.T) {
	modes(t, func(t *testing.T, r *Root) {
		outside := outsideDir(t, r)
		mustWrite(t, filepath.Join(outside, "x"), "keep")
		mustSymlink(t, outside, filepath.Join(r.Dir(), "out"))
		mustWrite(t, filepath.Join(r.Dir(), outside, "x"), "inside")
		mustSymlink(t, filepath.Join(outside, "x"), filepath.Join(r.Dir(), "l"))
		if err := os.Mkdir(filepath.Join(r.Dir(), "d"), 0o755); err != nil {
			t.Fatal(err)
		}
		for _, n := range []string{"/out/x", "/l", "/d"} {
			if err := r.Remove(n); err != nil {
				t.Errorf("Remove(%s): %v", n, err)
			}
			if r.Exists(n) {
				t.Errorf("%s still exists", n)
			}
		}
		if b, err := os.ReadFile(filepath.Join(outside, "x")); err != nil || string(b) != "keep" {
			t.Errorf("outside file = %q, %v", b, err)
		}
		if err := r.Remove("/missing"); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("Remove(missing) = %v", err)
		}
		if err := r.Remove("/.."); err == nil {
			t.Errorf("Remove(/..) succeeded")
		}
	})
}

func TestOpen(t *testing.T) {
	f := filepath.Join(t.TempDir(), "f")
	mustWrite(t, f, "x")
	if _, err := Open(f); err == nil {
		t.Errorf("Open(file) succeeded")
	}
	if _, err := Open(filepath.Join(f, "missing")); err == nil {
		t.Errorf("Open(missing) succeeded")
	}
}

// FuzzConfined writes through arbitrary names in a root full of hostile
// symlinks: nothing may ever appear outside the root.
func FuzzConfined(f *testing.F) {
	for _, name := range []string{"/up/x", "/abs/x", "/etc/passwd", "/loop/x", "/d/up2/../../x", "/up/../up/abs/y", "/dangling", "x/../../y"} {
		f.Add(name, false)
		f.Add(name, true)
	}
	f.Fuzz(func(t *testing.T, name string, walkOnly bool) {
		if strings.ContainsRune(name, 0) || len(name) > 512 {
			return
		}
		dir := filepath.Join(t.TempDir(), "r1", "r2", "r3", "r4", "root")
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		r, err := Open(dir)
		if err != nil {
			t.Fatal(err)
		}
		r.walkOnly = walkOnly
		outside := outsideDir(t, r)
		mustSymlink(t, "../../../../../..", filepath.Join(dir, "up"))
		mustSymlink(t, outside, filepath.Join(dir, "abs"))
		mustSymlink(t, "../../../../..", filepath.Join(dir, "d", "up2"))
		mustSymlink(t, filepath.Join(outside, "passwd"), filepath.Join(dir, "etc", "passwd"))
		mustSymlink(t, "loop", filepath.Join(dir, "loop"))
		mustSymlink(t, "../../../../../../dangling-target", filepath.Join(dir, "dangling"))
		before := outsideTree(t, r)
		r.WriteFile(name, []byte("x"), 0o644, 0, 0)
		r.AppendFile(name+"a", []byte("x"), 0o644, 0, 0)
		r.MkdirAll(name+"d", 0o755, 0, 0)
		r.Symlink("/x", name+"s")
		if after := outsideTree(t, r); !equal(before, after) {
			t.Fatalf("%q escaped: %v -> %v", name, before, after)
		}
	})
}

// TestWriteFileFrom: the content comes from fill, the file gets mode and
// owner and replaces the old one atomically; a failing fill leaves the
// old file and no temporary one. ReadHead reads only the head of a file
// bigger than ReadFile's cap.
func TestWriteFileFrom(t *testing.T) {
	dir := t.TempDir()
	r, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	big := int64(maxReadSize) + 1<<20
	if err := r.WriteFileFrom("/var/swap", func(f *os.File) error {
		if err := f.Truncate(big); err != nil {
			return err
		}
		_, err := f.WriteAt([]byte("head"), 0)
		return err
	}, 0o600, 0, 0); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(filepath.Join(dir, "var/swap"))
	if err != nil || fi.Size() != big || fi.Mode().Perm() != 0o600 {
		t.Fatalf("written: %v %v", fi, err)
	}
	b, size, err := r.ReadHead("/var/swap", 4)
	if err != nil || string(b) != "head" || size != big {
		t.Fatalf("ReadHead = %q, %d, %v", b, size, err)
	}
	if _, err := r.ReadFile("/var/swap"); err == nil {
		t.Fatalf("ReadFile read a file over its cap")
	}
	failed := errors.New("disk full")
	if err := r.WriteFileFrom("/var/swap", func(f *os.File) error { return failed }, 0o600, 0, 0); !errors.Is(err, failed) {
		t.Fatalf("a failing fill: %v", err)
	}
	ents, _ := os.ReadDir(filepath.Join(dir, "var"))
	if len(ents) != 1 {
		t.Fatalf("after a failing fill, var holds %v", ents)
	}
	if b, _, _ := r.ReadHead("/var/swap", 4); string(b) != "head" {
		t.Fatalf("the old file changed: %q", b)
	}
}
