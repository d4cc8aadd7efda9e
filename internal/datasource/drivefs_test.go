package datasource

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"golang.org/x/sys/unix"
)

// hostile builds a "drive" directory holding, next to a normal file, each
// kind of entry a hostile drive can carry, and a file outside it.
func hostile(t *testing.T) string {
	t.Helper()
	top := t.TempDir()
	dir := filepath.Join(top, "drive")
	mk := func(name, data string) {
		t.Helper()
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	mk("ok/meta-data", "instance-id: i-1\n")
	if err := os.WriteFile(filepath.Join(top, "outside"), []byte("secret outside the drive"), 0o600); err != nil {
		t.Fatal(err)
	}
	for name, target := range map[string]string{
		"passwd":     "/etc/passwd",
		"up":         "../outside",
		"linkdir":    "ok",
		"dangling":   "/nonexistent",
		"ok/sibling": "meta-data",
	} {
		if err := os.Symlink(target, filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	}
	if err := unix.Mkfifo(filepath.Join(dir, "fifo"), 0o644); err != nil {
		t.Fatal(err)
	}
	// The tests run as root (the QEMU tests need it): mknod works.
	if err := unix.Mknod(filepath.Join(dir, "zero"), unix.S_IFCHR|0o666, int(unix.Mkdev(1, 5))); err != nil {
		t.Fatalf("mknod /dev/zero copy (the tests need root): %v", err)
	}
	l, err := listenUnix(filepath.Join(dir, "sock"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { unix.Close(l) })
	return dir
}

// listenUnix binds a unix socket at path, without the net package's
// cleanup removing it.
func listenUnix(path string) (int, error) {
	fd, err := unix.Socket(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return -1, err
	}
	if err := unix.Bind(fd, &unix.SockaddrUnix{Name: path}); err != nil {
		unix.Close(fd)
		return -1, err
	}
	return fd, nil
}

// TestDriveFSRefuses opens each hostile entry through DriveFS and ReadFile:
// each is refused with an error naming the entry and the reason, quickly
// (a FIFO opened by os.DirFS blocks forever; the links lead out of the
// drive), and nothing outside the drive is read.
func TestDriveFSRefuses(t *testing.T) {
	dir := hostile(t)
	fsys := DriveFS(dir, 0)
	for _, tc := range []struct{ name, want string }{
		{"passwd", "passwd: is a symbolic link"},
		{"up", "up: is a symbolic link"},
		{"dangling", "dangling: is a symbolic link"},
		{"linkdir/meta-data", "linkdir: is a symbolic link"},
		{"ok/sibling", "ok/sibling: is a symbolic link"},
		{"fifo", "fifo: is a FIFO"},
		{"zero", "zero: is a character device"},
		{"sock", "sock: is a socket"},
		{"ok/meta-data/x", "ok/meta-data: not a directory"},
		{"../outside", "invalid argument"},
		{"/etc/passwd", "invalid argument"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			done := make(chan error, 1)
			go func() {
				_, err := ReadFile(fsys, tc.name, MaxFileSize)
				done <- err
			}()
			select {
			case err := <-done:
				if err == nil || !strings.Contains(err.Error(), tc.want) {
					t.Fatalf("ReadFile(%q) = %v, want an error containing %q", tc.name, err, tc.want)
				}
				if errors.Is(err, fs.ErrNotExist) && tc.name != "dangling" {
					t.Errorf("ReadFile(%q): %v counts as missing", tc.name, err)
				}
			case <-time.After(5 * time.Second):
				t.Fatalf("ReadFile(%q) still blocked after 5s", tc.name)
			}
		})
	}
	// ReadDir lists the entries without following or opening them.
	ents, err := fs.ReadDir(fsys, ".")
	if err != nil {
		t.Fatal(err)
	}
	if len(ents) != 8 {
		t.Errorf("ReadDir(.) = %d entries, want 8", len(ents))
	}
}

// TestDriveFSMissing: a symlink is refused as a link, even a
// dangling one, and a missing file is fs.ErrNotExist (readers rely on it
// for optional files).
func TestDriveFSMissing(t *testing.T) {
	fsys := DriveFS(hostile(t), 0)
	b, err := ReadOptional(fsys, "ok/user-data", MaxFileSize)
	if err != nil || b != nil {
		t.Fatalf("ReadOptional(missing) = %q, %v; want nil, nil", b, err)
	}
	if _, err := ReadOptional(fsys, "dangling", MaxFileSize); err == nil || !strings.Contains(err.Error(), "symbolic link") {
		t.Fatalf("ReadOptional(dangling link) = %v, want the link refused", err)
	}
}

// TestDriveFSNormal: a plain tree reads as through os.DirFS; it passes
// testing/fstest's checks.
func TestDriveFSNormal(t *testing.T) {
	dir := t.TempDir()
	for name, data := range map[string]string{
		"meta-data":                 "instance-id: i-1\n",
		"user-data":                 "#cloud-config\n",
		"openstack/content/0000":    "x",
		"openstack/latest/md.json":  "{}",
		"openstack/latest/empty":    "",
		"openstack/2018-08-27/user": "u",
	} {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	fsys := DriveFS(dir, 0)
	if err := fstest.TestFS(fsys, "meta-data", "user-data", "openstack/content/0000", "openstack/latest/empty"); err != nil {
		t.Fatal(err)
	}
	b, err := ReadFile(fsys, "openstack/latest/md.json", MaxFileSize)
	if err != nil || string(b) != "{}" {
		t.Fatalf("ReadFile = %q, %v", b, err)
	}
}

// TestDriveFSLimits: the total over all files and the per-file limit hold
// even when a reader asks for more, and the error names the file.
func TestDriveFSLimits(t *testing.T) {
	dir := t.TempDir()
	big := filepath.Join(dir, "big")
	f, err := os.Create(big)
	if err != nil {
		t.Fatal(err)
	}
	// Sparse: MaxFileSize+1 bytes cost no disk.
	if err := f.Truncate(MaxFileSize + 1); err != nil {
		t.Fatal(err)
	}
	f.Close()
	if err := os.WriteFile(filepath.Join(dir, "k"), make([]byte, 1024), 0o644); err != nil {
		t.Fatal(err)
	}

	// Per file: a reader that ignores the size still stops at MaxFileSize.
	fsys := DriveFS(dir, 0)
	r, err := fsys.Open("big")
	if err != nil {
		t.Fatal(err)
	}
	_, err = io.ReadAll(r)
	r.Close()
	if err == nil || !strings.Contains(err.Error(), "big: over the 16777216 byte limit for one file") {
		t.Fatalf("ReadAll(big) = %v, want the per-file limit", err)
	}

	// Total: 4 KiB budget, 1 KiB files: the fifth read fails.
	fsys = DriveFS(dir, 4096)
	for i := range 4 {
		if _, err := ReadFile(fsys, "k", MaxFileSize); err != nil {
			t.Fatalf("read %d: %v", i, err)
		}
	}
	_, err = ReadFile(fsys, "k", MaxFileSize)
	if err == nil || !strings.Contains(err.Error(), "read k: over the 4096 byte limit for everything read from the drive") {
		t.Fatalf("fifth ReadFile = %v, want the drive limit", err)
	}
}
