package rootfs

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/earlyinit/earlyinit/internal/roottest"
)

// fileState is what must not change in a target a user pointed a link at.
type fileState struct {
	data      string
	mode      fs.FileMode
	uid, gid  uint32
	nlinkSeen uint64
}

func stateOf(t *testing.T, p string) fileState {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	fi, err := os.Lstat(p)
	if err != nil {
		t.Fatal(err)
	}
	st := fi.Sys().(*syscall.Stat_t)
	return fileState{string(b), fi.Mode(), st.Uid, st.Gid, st.Nlink}
}

// TestUserWritableDirs plants, in directories a non-root user can write,
// the links and special files a hostile user would: no operation may act
// through them, the root-owned target keeps its content, mode and owner,
// and the error says which path and why.
func TestUserWritableDirs(t *testing.T) {
	roottest.Require(t)
	const shadow = "root:$6$secret:19000:0:99999:7:::\n"
	for _, tt := range []struct {
		name string
		// setup prepares the root: /etc/shadow exists (0640 root).
		setup func(t *testing.T, root string)
		op    func(r *Root) error
		// inErr must all be in the error.
		inErr []string
	}{
		{
			name: "authorized_keys symlink to /etc/shadow, WriteFile",
			setup: func(t *testing.T, root string) {
				userDir(t, root, "/home/alice/.ssh", 1000, 0o700)
				mustSymlink(t, "/etc/shadow", filepath.Join(root, "home/alice/.ssh/authorized_keys"))
			},
			op: func(r *Root) error {
				return r.WriteFile("/home/alice/.ssh/authorized_keys", []byte("ssh-ed25519 AAAA\n"), 0o600, 1000, 1000)
			},
			inErr: []string{"/home/alice/.ssh/authorized_keys is a symlink", "uid 1000"},
		},
		{
			name: "authorized_keys symlink, ReadFile does not disclose the target",
			setup: func(t *testing.T, root string) {
				userDir(t, root, "/home/alice/.ssh", 1000, 0o700)
				mustSymlink(t, "../../../etc/shadow", filepath.Join(root, "home/alice/.ssh/authorized_keys"))
			},
			op: func(r *Root) error {
				b, err := r.ReadFile("/home/alice/.ssh/authorized_keys")
				if len(b) > 0 {
					return errors.New("read through the link: " + string(b))
				}
				return err
			},
			inErr: []string{"is a symlink"},
		},
		{
			name: "swap file symlink, ReadHead does not read the target",
			setup: func(t *testing.T, root string) {
				userDir(t, root, "/scratch", 1000, 0o1777)
				mustSymlink(t, "/etc/shadow", filepath.Join(root, "scratch/swap"))
			},
			op: func(r *Root) error {
				b, _, err := r.ReadHead("/scratch/swap", 4096)
				if len(b) > 0 {
					return errors.New("read through the link: " + string(b))
				}
				return err
			},
			inErr: []string{"/scratch/swap is a symlink"},
		},
		{
			name: "swap file symlink, WriteFileFrom",
			setup: func(t *testing.T, root string) {
				userDir(t, root, "/scratch", 1000, 0o1777)
				mustSymlink(t, "/etc/shadow", filepath.Join(root, "scratch/swap"))
			},
			op: func(r *Root) error {
				return r.WriteFileFrom("/scratch/swap", func(f *os.File) error { _, err := f.WriteString("x"); return err }, 0o600, 0, 0)
			},
			inErr: []string{"/scratch/swap is a symlink"},
		},
		{
			name: "symlink AppendFile",
			setup: func(t *testing.T, root string) {
				userDir(t, root, "/home/alice", 1000, 0o755)
				mustSymlink(t, "/etc/shadow", filepath.Join(root, "home/alice/.profile"))
			},
			op:    func(r *Root) error { return r.AppendFile("/home/alice/.profile", []byte("x\n"), 0o644, 1000, 1000) },
			inErr: []string{"/home/alice/.profile is a symlink"},
		},
		{
			name: ".ssh a symlink to /etc, WriteFile",
			setup: func(t *testing.T, root string) {
				userDir(t, root, "/home/alice", 1000, 0o755)
				mustSymlink(t, "/etc", filepath.Join(root, "home/alice/.ssh"))
			},
			op:    func(r *Root) error { return r.WriteFile("/home/alice/.ssh/shadow", []byte("x"), 0o600, 1000, 1000) },
			inErr: []string{"/home/alice/.ssh is a symlink", "under /home/alice,"},
		},
		{
			name: ".ssh a symlink to /etc, MkdirAll",
			setup: func(t *testing.T, root string) {
				userDir(t, root, "/home/alice", 1000, 0o755)
				mustSymlink(t, "/etc", filepath.Join(root, "home/alice/.ssh"))
			},
			op:    func(r *Root) error { return r.MkdirAll("/home/alice/.ssh", 0o700, 1000, 1000) },
			inErr: []string{"/home/alice/.ssh is a symlink"},
		},
		{
			name: "deeper symlink below a user directory",
			setup: func(t *testing.T, root string) {
				userDir(t, root, "/home/alice", 1000, 0o755)
				if err := os.MkdirAll(filepath.Join(root, "home/alice/a/b"), 0o755); err != nil {
					t.Fatal(err)
				}
				mustSymlink(t, "/etc", filepath.Join(root, "home/alice/a/b/c"))
			},
			op:    func(r *Root) error { return r.WriteFile("/home/alice/a/b/c/shadow", []byte("x"), 0o600, 0, 0) },
			inErr: []string{"/home/alice/a/b/c is a symlink"},
		},
		{
			name: "hard link to /etc/shadow, AppendFile",
			setup: func(t *testing.T, root string) {
				userDir(t, root, "/home/alice", 1000, 0o755)
				if err := os.Link(filepath.Join(root, "etc/shadow"), filepath.Join(root, "home/alice/.profile")); err != nil {
					t.Fatal(err)
				}
			},
			op:    func(r *Root) error { return r.AppendFile("/home/alice/.profile", []byte("x\n"), 0o644, 1000, 1000) },
			inErr: []string{"/home/alice/.profile has 2 hard links"},
		},
		{
			name: "hard link to /etc/shadow, ReadFile",
			setup: func(t *testing.T, root string) {
				userDir(t, root, "/home/alice", 1000, 0o755)
				if err := os.Link(filepath.Join(root, "etc/shadow"), filepath.Join(root, "home/alice/.profile")); err != nil {
					t.Fatal(err)
				}
			},
			op: func(r *Root) error {
				b, err := r.ReadFile("/home/alice/.profile")
				if len(b) > 0 {
					return errors.New("read through the hard link")
				}
				return err
			},
			inErr: []string{"has 2 hard links"},
		},
		{
			name: "hard link, WriteFile",
			setup: func(t *testing.T, root string) {
				userDir(t, root, "/home/alice", 1000, 0o755)
				if err := os.Link(filepath.Join(root, "etc/shadow"), filepath.Join(root, "home/alice/.profile")); err != nil {
					t.Fatal(err)
				}
			},
			op:    func(r *Root) error { return r.WriteFile("/home/alice/.profile", []byte("x\n"), 0o644, 1000, 1000) },
			inErr: []string{"has 2 hard links"},
		},
		{
			name: "FIFO in a user directory",
			setup: func(t *testing.T, root string) {
				userDir(t, root, "/home/alice", 1000, 0o755)
				if err := unix.Mkfifo(filepath.Join(root, "home/alice/f"), 0o644); err != nil {
					t.Fatal(err)
				}
			},
			op:    func(r *Root) error { return r.WriteFile("/home/alice/f", []byte("x"), 0o644, 0, 0) },
			inErr: []string{"/home/alice/f is not a regular file or directory"},
		},
		{
			name: "sticky world-writable /tmp",
			setup: func(t *testing.T, root string) {
				userDir(t, root, "/tmp", 0, 0o1777)
				mustSymlink(t, "/etc/shadow", filepath.Join(root, "tmp/x"))
			},
			op:    func(r *Root) error { return r.WriteFile("/tmp/x", []byte("x"), 0o644, 0, 0) },
			inErr: []string{"/tmp/x is a symlink", "a non-root user (mode 01777)"},
		},
		{
			name: "group-writable root-owned directory",
			setup: func(t *testing.T, root string) {
				userDir(t, root, "/var/mail", 0, 0o2775)
				mustSymlink(t, "/etc/shadow", filepath.Join(root, "var/mail/alice"))
			},
			op:    func(r *Root) error { return r.AppendFile("/var/mail/alice", []byte("x"), 0o600, 0, 0) },
			inErr: []string{"/var/mail/alice is a symlink", "mode 02775"},
		},
		{
			name: "user directory reached through a root symlink",
			setup: func(t *testing.T, root string) {
				userDir(t, root, "/var/home/alice/.ssh", 1000, 0o700)
				mustSymlink(t, "var/home", filepath.Join(root, "home"))
				mustSymlink(t, "/etc/shadow", filepath.Join(root, "var/home/alice/.ssh/authorized_keys"))
			},
			op: func(r *Root) error {
				return r.WriteFile("/home/alice/.ssh/authorized_keys", []byte("k\n"), 0o600, 1000, 1000)
			},
			inErr: []string{"/var/home/alice/.ssh/authorized_keys is a symlink", "under /var/home/alice/.ssh,"},
		},
	} {
		t.Run(tt.name, func(t *testing.T) {
			modes(t, func(t *testing.T, r *Root) {
				mustWrite(t, filepath.Join(r.Dir(), "etc/shadow"), shadow)
				if err := os.Chmod(filepath.Join(r.Dir(), "etc/shadow"), 0o640); err != nil {
					t.Fatal(err)
				}
				tt.setup(t, r.Dir())
				before := stateOf(t, filepath.Join(r.Dir(), "etc/shadow"))
				beforeTree := tree(t, r.Dir())
				err := tt.op(r)
				if err == nil {
					t.Fatal("succeeded")
				}
				if !errors.Is(err, ErrUnsafe) {
					t.Errorf("error %q is not ErrUnsafe", err)
				}
				for _, s := range tt.inErr {
					if !strings.Contains(err.Error(), s) {
						t.Errorf("error %q lacks %q", err, s)
					}
				}
				if strings.Contains(err.Error(), "secret") {
					t.Errorf("error %q discloses the target's content", err)
				}
				if after := stateOf(t, filepath.Join(r.Dir(), "etc/shadow")); after != before {
					t.Errorf("/etc/shadow changed: %+v -> %+v", before, after)
				}
				// Nothing removed, nothing added: the user's file stays.
				if after := tree(t, r.Dir()); !equal(beforeTree, after) {
					t.Errorf("tree changed: %v -> %v", beforeTree, after)
				}
			})
		})
	}
}

// userDir makes directory p in root (parents 0755 root) owned by uid with
// mode.
func userDir(t *testing.T, root, p string, uid int, mode fs.FileMode) {
	t.Helper()
	full := filepath.Join(root, p)
	if err := os.MkdirAll(full, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(full, uid, uid); err != nil {
		t.Fatal(err)
	}
	m := mode.Perm()
	if mode&0o1000 != 0 {
		m |= fs.ModeSticky
	}
	if mode&0o2000 != 0 {
		m |= fs.ModeSetgid
	}
	if err := os.Chmod(full, m); err != nil {
		t.Fatal(err)
	}
}

// TestUserWritableDirsAllowed: what is not planted still works in
// user-owned directories, and symlinks in root's own directories are
// followed as before.
func TestUserWritableDirsAllowed(t *testing.T) {
	roottest.Require(t)
	modes(t, func(t *testing.T, r *Root) {
		userDir(t, r.Dir(), "/var/home/alice", 1000, 0o755)
		mustSymlink(t, "/var/home", filepath.Join(r.Dir(), "home"))
		if err := r.MkdirAll("/home/alice/.ssh", 0o700, 1000, 1000); err != nil {
			t.Fatal(err)
		}
		if err := r.WriteFile("/home/alice/.ssh/authorized_keys", []byte("k1\n"), 0o600, 1000, 1000); err != nil {
			t.Fatal(err)
		}
		if err := r.AppendFile("/home/alice/.ssh/authorized_keys", []byte("k2\n"), 0o600, 1000, 1000); err != nil {
			t.Fatal(err)
		}
		if err := r.WriteFile("/home/alice/new/dir/f", []byte("x"), 0o644, 1000, 1000); err != nil {
			t.Fatal(err)
		}
		b, err := r.ReadFile("/home/alice/.ssh/authorized_keys")
		if err != nil || string(b) != "k1\nk2\n" {
			t.Errorf("authorized_keys = %q, %v", b, err)
		}
		p := filepath.Join(r.Dir(), "var/home/alice/.ssh/authorized_keys")
		if st := stateOf(t, p); st.mode != 0o600 || st.uid != 1000 {
			t.Errorf("authorized_keys mode %v uid %d", st.mode, st.uid)
		}
		// Stat, Exists and Remove act on a planted link itself.
		mustSymlink(t, "/etc/shadow", filepath.Join(r.Dir(), "var/home/alice/l"))
		if fi, err := r.Stat("/home/alice/l"); err != nil || fi.Mode()&fs.ModeSymlink == 0 {
			t.Errorf("Stat = %v, %v", fi, err)
		}
	})
}

// TestOpenat2RetryBounded: an openat2 that keeps asking for a retry is
// called at most maxOpenat2Tries times per resolution, after which the
// component walk does the job; a few EINTRs are retried.
func TestOpenat2RetryBounded(t *testing.T) {
	roottest.Require(t)
	for _, tt := range []struct {
		name    string
		errs    []error // returned in turn, then the real openat2
		forever error
		want    int // calls of one WriteFile
	}{
		{name: "EAGAIN forever", forever: unix.EAGAIN, want: maxOpenat2Tries},
		{name: "EINTR forever", forever: unix.EINTR, want: maxOpenat2Tries},
		{name: "two EINTR then success", errs: []error{unix.EINTR, unix.EAGAIN}, want: 3},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r, err := Open(t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			userDir(t, r.Dir(), "/home/alice", 1000, 0o755)
			if err := os.MkdirAll(filepath.Join(r.Dir(), "home/alice/a/b"), 0o755); err != nil {
				t.Fatal(err)
			}
			calls := 0
			r.openat2 = func(dirfd int, p string, how *unix.OpenHow) (int, error) {
				calls++
				if tt.forever != nil {
					return -1, tt.forever
				}
				if calls <= len(tt.errs) {
					return -1, tt.errs[calls-1]
				}
				if how.Resolve&unix.RESOLVE_NO_SYMLINKS == 0 || how.Resolve&unix.RESOLVE_BENEATH == 0 {
					t.Errorf("openat2 resolve flags %#x", how.Resolve)
				}
				return unix.Openat2(dirfd, p, how)
			}
			if err := r.WriteFile("/home/alice/a/b/f", []byte("x"), 0o644, 0, 0); err != nil {
				t.Fatal(err)
			}
			if calls != tt.want {
				t.Errorf("openat2 called %d times, want %d", calls, tt.want)
			}
			if b, _ := os.ReadFile(filepath.Join(r.Dir(), "home/alice/a/b/f")); string(b) != "x" {
				t.Errorf("f = %q", b)
			}
		})
	}
}

// TestWriteFileENOSPC: a root that fills up mid-write (a 64 KiB tmpfs)
// leaves the old file whole and no temporary file behind, and says which
// file.
func TestWriteFileENOSPC(t *testing.T) {
	dir := roottest.Tmpfs(t, "64k")
	r, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	old := bytes.Repeat([]byte("o"), 8<<10)
	if err := r.WriteFile("/var/lib/earlyinit/data/instance-id", old, 0o644, 0, 0); err != nil {
		t.Fatal(err)
	}
	before := tree(t, dir)
	for _, op := range []struct {
		name string
		f    func() error
	}{
		{"WriteFile", func() error {
			return r.WriteFile("/var/lib/earlyinit/data/instance-id", bytes.Repeat([]byte("n"), 1<<20), 0o644, 0, 0)
		}},
		{"AppendFile new", func() error {
			return r.AppendFile("/var/lib/earlyinit/data/log", bytes.Repeat([]byte("n"), 1<<20), 0o644, 0, 0)
		}},
	} {
		err := op.f()
		if !errors.Is(err, unix.ENOSPC) {
			t.Errorf("%s = %v, want ENOSPC", op.name, err)
			continue
		}
		if !strings.Contains(err.Error(), "/var/lib/earlyinit/data/") {
			t.Errorf("%s error %q does not name the file", op.name, err)
		}
	}
	if b, err := os.ReadFile(filepath.Join(dir, "var/lib/earlyinit/data/instance-id")); err != nil || !bytes.Equal(b, old) {
		t.Errorf("old file not intact: %d bytes, %v", len(b), err)
	}
	after := tree(t, dir)
	// AppendFile may leave the file it created (partly written, as an
	// append does); nothing else may appear.
	var extra []string
	for _, p := range after {
		if !strings.Contains(strings.Join(before, "\n")+"\n", p+"\n") && p != "var/lib/earlyinit/data/log" {
			extra = append(extra, p)
		}
	}
	if len(extra) > 0 {
		t.Errorf("left behind: %v", extra)
	}
}

// TestWriteFileImmutable: chattr +i /etc/hostname makes the write fail with
// EPERM naming the file, the file unchanged and nothing left behind; a
// write next to it still works.
func TestWriteFileImmutable(t *testing.T) {
	roottest.Require(t)
	r, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if err := r.WriteFile("/etc/hostname", []byte("old\n"), 0o644, 0, 0); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(r.Dir(), "etc/hostname")
	roottest.Immutable(t, p)
	before := tree(t, r.Dir())
	for name, op := range map[string]func() error{
		"WriteFile":  func() error { return r.WriteFile("/etc/hostname", []byte("new\n"), 0o644, 0, 0) },
		"AppendFile": func() error { return r.AppendFile("/etc/hostname", []byte("new\n"), 0o644, 0, 0) },
		"Remove":     func() error { return r.Remove("/etc/hostname") },
	} {
		err := op()
		if !errors.Is(err, unix.EPERM) {
			t.Errorf("%s = %v, want EPERM", name, err)
		} else if !strings.Contains(err.Error(), "/etc/hostname") {
			t.Errorf("%s error %q does not name the file", name, err)
		}
	}
	if b, _ := os.ReadFile(p); string(b) != "old\n" {
		t.Errorf("/etc/hostname = %q", b)
	}
	if after := tree(t, r.Dir()); !equal(before, after) {
		t.Errorf("left behind: %v -> %v", before, after)
	}
	if err := r.WriteFile("/etc/hosts", []byte("127.0.0.1 localhost\n"), 0o644, 0, 0); err != nil {
		t.Errorf("write next to the immutable file: %v", err)
	}
}

// TestReadFileCapped: a file a user made huge (a sparse authorized_keys) is
// refused by its size, not read into memory.
func TestReadFileCapped(t *testing.T) {
	dir := t.TempDir()
	big := filepath.Join(dir, "big")
	f, err := os.Create(big)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(10 << 30); err != nil { // 10 GiB, sparse
		t.Fatal(err)
	}
	f.Close()
	if err := os.WriteFile(filepath.Join(dir, "small"), []byte("ok\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.ReadFile("/big"); err == nil || !strings.Contains(err.Error(), "over the 67108864 byte limit") || !strings.Contains(err.Error(), "/big") {
		t.Errorf("ReadFile of a 10 GiB file: %v", err)
	}
	if b, err := r.ReadFile("/small"); err != nil || string(b) != "ok\n" {
		t.Errorf("ReadFile small: %q %v", b, err)
	}
}
