package rootfs

import (
	"fmt"
	"io/fs"
	"strconv"

	"golang.org/x/sys/unix"
)

// Labeler names the SELinux context of a new file, directory or symlink
// from its path in the root ("/etc/hostname") and its type (mode.Type():
// 0 for a regular file, fs.ModeDir, fs.ModeSymlink); ok false means no
// label. A *selinux.Policy is one.
type Labeler interface {
	Lookup(path string, mode fs.FileMode) (context string, ok bool)
}

// XattrSELinux is the extended attribute holding an SELinux label.
const XattrSELinux = "security.selinux"

// SetLabeler makes r label everything it creates from then on: WriteFile's
// temporary file before it is renamed into place, the file AppendFile
// creates, the directories MkdirAll and the missing parents of any write
// create, and the symlink Symlink makes, each labelled before it gets its
// name. The path given to l is the object's path in the root, with the
// symlinks on the way resolved ("/etc/resolv.conf" -> "../run/x" labels
// "/run/x"). A label that cannot be set fails the write, naming the path.
// nil removes the labeler: r then writes no labels at all.
func (r *Root) SetLabeler(l Labeler) { r.labeler = l }

// Labeler returns r's labeler, nil if it has none.
func (r *Root) Labeler() Labeler { return r.labeler }

// label is the xattr value for p: the context and a NUL, as libselinux
// writes it; ok false when there is no labeler or no label for p.
func (r *Root) label(p string, mode fs.FileMode) (ctx string, value []byte, ok bool) {
	if r.labeler == nil {
		return "", nil, false
	}
	ctx, ok = r.labeler.Lookup(p, mode)
	if !ok || ctx == "" {
		return "", nil, false
	}
	return ctx, append([]byte(ctx), 0), true
}

// labelFd labels the open file or directory fd, whose path in the root is
// p, if r has a labeler with a label for p.
func (r *Root) labelFd(fd int, p string, mode fs.FileMode) error {
	ctx, v, ok := r.label(p, mode)
	if !ok {
		return nil
	}
	if err := unix.Fsetxattr(fd, XattrSELinux, v, 0); err != nil {
		return fmt.Errorf("label %s %s: %w", p, ctx, err)
	}
	return nil
}

// labelAt labels name in dirfd itself, never what it points to: the
// symlink whose path in the root is p. A symlink cannot be opened for
// fsetxattr (an O_PATH fd gets EBADF), so the label goes through the
// directory's fd in /proc: /proc/self/fd/<dirfd> is resolved to the
// directory already held, and lsetxattr does not follow name.
func (r *Root) labelAt(dirfd int, name, p string, mode fs.FileMode) error {
	ctx, v, ok := r.label(p, mode)
	if !ok {
		return nil
	}
	at := "/proc/self/fd/" + strconv.Itoa(dirfd) + "/" + name
	if err := unix.Lsetxattr(at, XattrSELinux, v, 0); err != nil {
		return fmt.Errorf("label %s %s (through %s): %w", p, ctx, at, err)
	}
	return nil
}
