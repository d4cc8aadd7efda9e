package rootfs

import (
	"errors"
	"fmt"

	"golang.org/x/sys/unix"
)

// ErrUnsafe is what every refusal to act on a path a non-root user could
// have planted wraps (errors.Is(err, ErrUnsafe)): a symlink, a hard link or
// something not a regular file or directory, found under a directory a
// non-root user can write.
var ErrUnsafe = errors.New("unsafe path")

// taint is the first directory of a resolution that a non-root user can
// write (owned by a uid other than 0, or group- or other-writable, sticky
// or not): from it on, nothing in the path may be a symlink and no file may
// be hard-linked, or that user could send a write of root's anywhere.
type taint struct {
	dir  string // the directory, as a path in the root
	uid  uint32
	mode uint32
}

func (t *taint) who() string {
	if t.uid != 0 {
		return fmt.Sprintf("uid %d", t.uid)
	}
	return fmt.Sprintf("a non-root user (mode %#o)", t.mode&0o7777)
}

// unsafeError is a refusal: path is what was refused, why the reason.
type unsafeError struct {
	path, why string
	t         *taint
}

func (e *unsafeError) Error() string {
	return fmt.Sprintf("%s %s under %s, which %s can write: refused", e.path, e.why, e.t.dir, e.t.who())
}

func (e *unsafeError) Is(target error) bool { return target == ErrUnsafe }

// userWritable tells whether a non-root user can change the entries of
// the directory st describes.
func userWritable(st *unix.Stat_t) bool {
	return st.Uid != 0 || st.Mode&0o022 != 0
}

// checkFile refuses an existing object in a tainted directory that is a
// symlink, not a regular file or directory, or a regular file with more
// than one link (a hard link to /etc/shadow). t nil accepts anything.
func checkFile(st *unix.Stat_t, path string, t *taint) error {
	if t == nil {
		return nil
	}
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFREG:
		if st.Nlink > 1 {
			return &unsafeError{path, fmt.Sprintf("has %d hard links", st.Nlink), t}
		}
	case unix.S_IFDIR:
	case unix.S_IFLNK:
		return &unsafeError{path, "is a symlink", t}
	default:
		return &unsafeError{path, "is not a regular file or directory", t}
	}
	return nil
}

// checkAt is checkFile for base in dirfd, not following a symlink; a
// missing base is fine.
func checkAt(dirfd int, base, path string, t *taint) error {
	if t == nil {
		return nil
	}
	var st unix.Stat_t
	err := unix.Fstatat(dirfd, base, &st, unix.AT_SYMLINK_NOFOLLOW)
	if errors.Is(err, unix.ENOENT) {
		return nil
	}
	if err != nil {
		return err
	}
	return checkFile(&st, path, t)
}

// checkFd is checkFile for an open file.
func checkFd(fd int, path string, t *taint) error {
	if t == nil {
		return nil
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return err
	}
	return checkFile(&st, path, t)
}

// taintOf is the taint of directory fd at path, entered with parent's
// taint: the parent's if any, a new one if fd is user-writable, else nil.
func taintOf(fd int, path string, parent *taint) (*taint, error) {
	if parent != nil {
		return parent, nil
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return nil, err
	}
	if userWritable(&st) {
		return &taint{dir: path, uid: st.Uid, mode: st.Mode}, nil
	}
	return nil, nil
}
