package rootfs

import (
	"errors"
	"go/build"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/earlyinit/earlyinit/internal/oldkernel"
	"github.com/earlyinit/earlyinit/internal/roottest"
)

// TestOpenat2ENOSYS: on a kernel without openat2 (before 5.6: ENOSYS),
// the path under a user-writable directory is still opened, through the
// O_NOFOLLOW walk, after one try of openat2 per resolution; a symlink a
// user planted there is still refused and its target untouched.
func TestOpenat2ENOSYS(t *testing.T) {
	roottest.Require(t)
	r, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	calls := 0
	r.openat2 = func(int, string, *unix.OpenHow) (int, error) {
		calls++
		return -1, unix.ENOSYS
	}
	userDir(t, r.Dir(), "/home/alice", 1000, 0o755)
	if err := os.MkdirAll(filepath.Join(r.Dir(), "home/alice/a/b"), 0o755); err != nil {
		t.Fatal(err)
	}
	mustWrite(t, filepath.Join(r.Dir(), "etc/shadow"), "root:secret\n")
	mustSymlink(t, "/etc/shadow", filepath.Join(r.Dir(), "home/alice/a/b/link"))

	if err := r.WriteFile("/home/alice/a/b/f", []byte("x"), 0o644, 1000, 1000); err != nil {
		t.Fatalf("WriteFile under a user's directory without openat2: %v", err)
	}
	if b, _ := os.ReadFile(filepath.Join(r.Dir(), "home/alice/a/b/f")); string(b) != "x" {
		t.Errorf("f = %q", b)
	}
	if calls != 1 {
		t.Errorf("openat2 tried %d times for one resolution, want 1 (the fast path first, then the walk)", calls)
	}
	err = r.WriteFile("/home/alice/a/b/link", []byte("owned\n"), 0o644, 0, 0)
	if !errors.Is(err, ErrUnsafe) || !strings.Contains(err.Error(), "/home/alice/a/b/link is a symlink") {
		t.Errorf("WriteFile through a planted link without openat2: %v, want ErrUnsafe", err)
	}
	if b, _ := os.ReadFile(filepath.Join(r.Dir(), "etc/shadow")); string(b) != "root:secret\n" {
		t.Errorf("/etc/shadow = %q", b)
	}
}

// TestNoCryptoRand: rootfs names its temporary files without crypto/rand,
// which on Linux 3.17 to 5.3 blocks PID 1 in getrandom until the kernel's
// pool is ready, and before 3.17 ends the process when /dev/urandom
// cannot be read (see tempName).
func TestNoCryptoRand(t *testing.T) {
	pkg, err := build.ImportDir(".", 0)
	if err != nil {
		t.Fatal(err)
	}
	if slices.Contains(pkg.Imports, "crypto/rand") {
		t.Error("internal/rootfs imports crypto/rand")
	}
	seen := map[string]bool{}
	for range 1000 {
		n := tempName("hostname")
		if !strings.HasPrefix(n, ".hostname.earlyinit-") || len(n) != len(".hostname.earlyinit-")+12 || seen[n] {
			t.Fatalf("tempName = %q (seen before: %v)", n, seen[n])
		}
		seen[n] = true
	}
}

// TestOnLinux310 runs the confinement and user-directory tests, and the
// batch's, with Linux 3.10's system calls: openat2 (5.6) fails with ENOSYS
// from the kernel itself in every mode of those tests, and getrandom
// (3.17) too.
func TestOnLinux310(t *testing.T) {
	roottest.Require(t)
	if !oldkernel.Run(t, oldkernel.Linux310()) {
		return
	}
	if _, err := unix.Openat2(unix.AT_FDCWD, "/", &unix.OpenHow{Flags: unix.O_RDONLY}); !errors.Is(err, unix.ENOSYS) {
		t.Fatalf("openat2 under the filter: %v, want ENOSYS", err)
	}
	for _, tt := range []struct {
		name string
		f    func(*testing.T)
	}{
		{"WriteFileConfined", TestWriteFileConfined},
		{"UserWritableDirs", TestUserWritableDirs},
		{"UserWritableDirsAllowed", TestUserWritableDirsAllowed},
		{"SymlinkReadlinkStat", TestSymlinkReadlinkStat},
		{"ModesAndOwner", TestModesAndOwner},
		{"BatchFaults", TestBatchFaults},
		{"Openat2ENOSYS", TestOpenat2ENOSYS},
	} {
		t.Run(tt.name, tt.f)
	}
}
