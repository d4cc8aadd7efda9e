// Package roottest holds what tests that need root share: the check that
// they run as root, a small tmpfs to fill up, and chattr +i.
package roottest

import (
	"os"
	"testing"

	"golang.org/x/sys/unix"
)

// Require fails (never skips) a test that needs root: chown to another
// uid, mount, chattr.
func Require(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Fatalf("this test must run as root (it chowns files to uid 1000, mounts a tmpfs or sets FS_IMMUTABLE_FL); euid is %d", os.Geteuid())
	}
}

// Tmpfs mounts a tmpfs of size ("64k") on a new temporary directory,
// unmounted when the test ends, and returns the directory.
func Tmpfs(t *testing.T, size string) string {
	t.Helper()
	Require(t)
	dir := t.TempDir()
	if err := unix.Mount("tmpfs", dir, "tmpfs", 0, "size="+size+",mode=0755"); err != nil {
		t.Fatalf("mount a %s tmpfs on %s: %v", size, dir, err)
	}
	t.Cleanup(func() { unix.Unmount(dir, unix.MNT_DETACH) })
	return dir
}

// fsImmutableFL is linux/fs.h's FS_IMMUTABLE_FL (chattr +i).
const fsImmutableFL = 0x10

// Immutable sets chattr +i on p, cleared when the test ends.
func Immutable(t *testing.T, p string) {
	t.Helper()
	Require(t)
	if err := setImmutable(p, true); err != nil {
		t.Fatalf("chattr +i %s: %v", p, err)
	}
	t.Cleanup(func() { setImmutable(p, false) })
}

func setImmutable(p string, on bool) error {
	fd, err := unix.Open(p, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	flags, err := unix.IoctlGetUint32(fd, unix.FS_IOC_GETFLAGS)
	if err != nil {
		return err
	}
	if on {
		flags |= fsImmutableFL
	} else {
		flags &^= fsImmutableFL
	}
	return unix.IoctlSetPointerInt(fd, unix.FS_IOC_SETFLAGS, int(flags))
}
