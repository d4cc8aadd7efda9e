// Package rootfs confines every write earlyinit makes into the real root,
// and keeps non-root users of that root from steering those writes.
//
// A Root is a directory tree: the real root mounted at /newroot at boot, "/"
// in the late stage, a temporary directory in tests. Every name given to a
// Root is an absolute path inside it ("/etc/hostname"). Names are cleaned
// lexically first (path.Clean), so "../../etc/x" is "/etc/x". Then they are
// resolved component by component from an fd of the root, never letting the
// kernel follow a symlink (O_NOFOLLOW), the way openat2(2) resolves with
// RESOLVE_IN_ROOT: ".." never climbs above the root and a symlink's target
// is resolved inside the root, an absolute target being taken relative to
// the root ("/etc -> /tmp/outside" means <root>/tmp/outside). Nothing a Root
// does can read or write outside it, whatever symlinks the root holds.
// Missing parent directories are created by that walk, so a dangling
// symlinked parent gets its target created inside the root.
//
// Links in directories users control are not followed. Once resolution
// enters a directory a non-root user can write (owned by a uid other than
// 0, or group- or other-writable, sticky or not: a home, /tmp), a symlink
// in any later component or in the last one is refused with ErrUnsafe, as
// is an existing file there that is hard-linked (st_nlink > 1) or is not a
// regular file or directory. The rest of such a path is opened with openat2
// RESOLVE_BENEATH|RESOLVE_NO_SYMLINKS when the kernel has it (retried at
// most 64 times on EAGAIN), else one O_NOFOLLOW component at a time. Files
// are created O_EXCL|O_NOFOLLOW and given their owner and mode with
// fchown/fchmod on the open fd. A refused file is left as it is, never
// removed. Symlinks in root's own directories (/home -> /var/home,
// /etc/alternatives) are followed as before.
//
// WriteFile, AppendFile and ReadFile follow a symlink in the last component
// (inside the root, and only in a directory no user can write); Symlink,
// Readlink, Stat, Exists and Remove act on the last component itself.
//
// A Root with a Labeler (SetLabeler) gives every file, directory and
// symlink it creates the SELinux label the Labeler names for its path in
// the root, set on the new object before it gets its name (see label.go).
package rootfs

import (
	"fmt"
	"os"
	"path"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// maxSymlinks bounds symlink resolution, as the kernel's MAXSYMLINKS does.
const maxSymlinks = 40

// Root is a directory tree that all operations are confined to.
type Root struct {
	dir string
	// walkOnly forces the hand-written resolution walk instead of openat2,
	// for kernels without openat2 and for tests of the fallback.
	walkOnly bool
	// openat2 replaces unix.Openat2 in tests; nil is unix.Openat2.
	openat2 func(dirfd int, path string, how *unix.OpenHow) (int, error)
	// labeler, if set, names the SELinux label of what the Root creates.
	labeler Labeler
}

// Open returns the Root for directory dir.
func Open(dir string) (*Root, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("open root %s: %w", dir, err)
	}
	fi, err := os.Stat(abs)
	if err != nil {
		return nil, fmt.Errorf("open root %s: %w", dir, err)
	}
	if !fi.IsDir() {
		return nil, fmt.Errorf("open root %s: not a directory", dir)
	}
	return &Root{dir: abs}, nil
}

// Dir returns the root's directory in the caller's file system.
func (r *Root) Dir() string { return r.dir }

// Path returns the caller's path for name: Dir joined with the cleaned name.
// It is for messages and for tools outside this package; it is not confined.
func (r *Root) Path(name string) string {
	return filepath.Join(r.dir, clean(name))
}

// clean makes name an absolute, lexically clean path inside the root.
func clean(name string) string {
	return path.Clean("/" + name)
}
