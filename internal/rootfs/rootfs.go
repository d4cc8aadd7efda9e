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
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

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

// WriteFile writes data to name atomically: a temporary file in the same
// directory is written, given mode and owner (uid, gid; -1 keeps the
// caller's), synced and renamed over name, and the directory is synced.
// A Batch writes several files with one flush for all. A
// reader sees the old content or the new, never a mix, and no temporary file
// is left behind. Missing parent directories are created 0755, owned by root.
func (r *Root) WriteFile(name string, data []byte, mode fs.FileMode, uid, gid int) error {
	err := r.writeFile(clean(name), data, mode, uid, gid)
	if err != nil {
		return fmt.Errorf("write %s in %s: %w", clean(name), r.dir, err)
	}
	return nil
}

func (r *Root) writeFile(name string, data []byte, mode fs.FileMode, uid, gid int) error {
	return r.writeFileFrom(name, bytesOf(sysOps{}, data), mode, uid, gid)
}

// WriteFileFrom is WriteFile for content too big to hold in memory (a
// swap file): fill writes it to the new file, open for writing, before
// owner and mode are set and the file is renamed over name. Nothing is
// left behind when fill fails.
func (r *Root) WriteFileFrom(name string, fill func(f *os.File) error, mode fs.FileMode, uid, gid int) error {
	err := r.writeFileFrom(clean(name), func(fd int) error {
		// A new *os.File on a dup: closing it leaves stage's fd open.
		nfd, err := unix.FcntlInt(uintptr(fd), unix.F_DUPFD_CLOEXEC, 0)
		if err != nil {
			return err
		}
		f := os.NewFile(uintptr(nfd), name)
		defer f.Close()
		return fill(f)
	}, mode, uid, gid)
	if err != nil {
		return fmt.Errorf("write %s in %s: %w", clean(name), r.dir, err)
	}
	return nil
}

func (r *Root) writeFileFrom(name string, fill func(fd int) error, mode fs.FileMode, uid, gid int) error {
	e, err := r.stage(sysOps{}, name, fill, mode, uid, gid, true)
	if err != nil {
		return err
	}
	defer unix.Close(e.dirfd)
	if err := unix.Renameat(e.dirfd, e.tmp, e.dirfd, e.base); err != nil {
		unix.Unlinkat(e.dirfd, e.tmp, 0)
		return fmt.Errorf("rename %s to %s: %w", e.tmp, e.base, err)
	}
	if err := unix.Fsync(e.dirfd); err != nil {
		return fmt.Errorf("sync directory: %w", err)
	}
	return nil
}

// AppendFile appends data to name, creating it (with mode and owner) if
// missing. An existing file keeps its mode and owner. The file is synced.
func (r *Root) AppendFile(name string, data []byte, mode fs.FileMode, uid, gid int) error {
	if err := r.appendFile(clean(name), data, mode, uid, gid); err != nil {
		return fmt.Errorf("append to %s in %s: %w", clean(name), r.dir, err)
	}
	return nil
}

func (r *Root) appendFile(name string, data []byte, mode fs.FileMode, uid, gid int) error {
	d, base, err := r.lookup(name, true, true)
	if err != nil {
		return err
	}
	dirfd := d.fd
	defer unix.Close(dirfd)
	created := true
	fd, err := unix.Openat(dirfd, base, unix.O_WRONLY|unix.O_APPEND|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o600)
	if errors.Is(err, unix.EEXIST) {
		created = false
		fd, err = unix.Openat(dirfd, base, unix.O_WRONLY|unix.O_APPEND|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	}
	if err != nil {
		return err
	}
	f := os.NewFile(uintptr(fd), base)
	defer f.Close()
	if err := regular(f); err != nil {
		return err
	}
	if err := checkFd(fd, join(d.path, base), d.taint); err != nil {
		return err
	}
	if created {
		if err := setOwnerMode(f, mode, uid, gid); err != nil {
			return err
		}
		if err := r.labelFd(fd, join(d.path, base), 0); err != nil {
			return err
		}
	}
	if _, err := f.Write(data); err != nil {
		return err
	}
	if err := f.Sync(); err != nil {
		return err
	}
	if created {
		return unix.Fsync(dirfd)
	}
	return nil
}

// ReadFile reads name. It refuses anything but a regular file (a FIFO planted
// in the root cannot block it).
func (r *Root) ReadFile(name string) ([]byte, error) {
	return r.ReadFileMax(name, maxReadSize)
}

// ReadFileMax is ReadFile with a smaller limit: a file of more than limit
// bytes is refused before it is read. Errors name the file; one over the
// limit ends "N bytes is over the LIMIT byte limit".
func (r *Root) ReadFileMax(name string, limit int) ([]byte, error) {
	limit = min(limit, maxReadSize)
	b, err := r.readFile(clean(name), limit)
	if err != nil {
		return nil, fmt.Errorf("read %s in %s: %w", clean(name), r.dir, err)
	}
	return b, nil
}

func (r *Root) readFile(name string, limit int) ([]byte, error) {
	f, size, err := r.openRead(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if size > int64(limit) {
		return nil, fmt.Errorf("%d bytes is over the %d byte limit", size, limit)
	}
	b, err := readUpTo(f, limit+1, size)
	if err == nil && len(b) > limit {
		return nil, fmt.Errorf("over the %d byte limit", limit)
	}
	return b, err
}

// openRead opens name, a regular file, for reading (confined, no link
// followed, nothing planted under a user-writable directory) and returns
// it with its size, from one fstat.
func (r *Root) openRead(name string) (*os.File, int64, error) {
	d, base, err := r.lookup(name, true, false)
	if err != nil {
		return nil, 0, err
	}
	defer unix.Close(d.fd)
	fd, err := unix.Openat(d.fd, base, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, 0, err
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		unix.Close(fd)
		return nil, 0, err
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG {
		unix.Close(fd)
		return nil, 0, errors.New("not a regular file")
	}
	if d.taint != nil {
		if err := checkFile(&st, join(d.path, base), d.taint); err != nil {
			unix.Close(fd)
			return nil, 0, err
		}
	}
	return os.NewFile(uintptr(fd), base), st.Size, nil
}

// readUpTo reads at most n bytes from f, whose size was size when it was
// opened: into one buffer of that size (and a byte to see the end), as
// os.ReadFile does, growing it only if the file has grown since.
func readUpTo(f *os.File, n int, size int64) ([]byte, error) {
	n = max(n, 0)
	c := n
	if size >= 0 && size < int64(n) {
		c = int(size) + 1
	}
	b := make([]byte, 0, min(c, 1<<20+1))
	lr := io.LimitReader(f, int64(n))
	for {
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)]
		}
		m, err := lr.Read(b[len(b):cap(b)])
		b = b[:len(b)+m]
		if err == io.EOF {
			return b, nil
		}
		if err != nil {
			return b, err
		}
	}
}

// ReadHead reads at most n bytes from the start of name, a regular file
// of any size, opened as ReadFile opens it (confined, no link followed,
// nothing planted under a user-writable directory), and returns them with
// the file's size.
func (r *Root) ReadHead(name string, n int) ([]byte, int64, error) {
	b, size, err := r.readHead(clean(name), n)
	if err != nil {
		return nil, 0, fmt.Errorf("read %s in %s: %w", clean(name), r.dir, err)
	}
	return b, size, nil
}

func (r *Root) readHead(name string, n int) ([]byte, int64, error) {
	f, size, err := r.openRead(name)
	if err != nil {
		return nil, 0, err
	}
	defer f.Close()
	b, err := readUpTo(f, n, size)
	return b, size, err
}

// maxReadSize bounds ReadFile: a user can make the files earlyinit reads in
// their home (authorized_keys) as large as the disk. Nothing earlyinit reads
// from a root is legitimately larger: the instance cache's own files are
// capped at 16 MiB, status files at 64 MiB.
const maxReadSize = 64 << 20

// MkdirAll creates directory name and any missing parents. Parents are
// created 0755 and owned by root; name itself, if created, gets mode and
// owner (uid, gid; -1 keeps the caller's). An existing directory is left as
// it is.
func (r *Root) MkdirAll(name string, mode fs.FileMode, uid, gid int) error {
	n := clean(name)
	if n == "/" {
		return nil
	}
	err := r.mkdirAll(n, mode, uid, gid)
	if err != nil {
		return fmt.Errorf("mkdir %s in %s: %w", n, r.dir, err)
	}
	return nil
}

func (r *Root) mkdirAll(name string, mode fs.FileMode, uid, gid int) error {
	d, base, err := r.lookup(name, true, true)
	if err != nil {
		return err
	}
	dirfd := d.fd
	defer unix.Close(dirfd)
	fd, err := r.mkdirOpen(dirfd, base, join(d.path, base), mode, uid, gid)
	if err != nil {
		if cerr := checkAt(dirfd, base, join(d.path, base), d.taint); cerr != nil {
			return cerr
		}
		return err
	}
	return unix.Close(fd)
}

// Symlink makes name a symlink to target, replacing whatever file or symlink
// name was, atomically (a temporary symlink renamed over name). target is
// stored as given: it is only ever resolved inside the root by this package.
func (r *Root) Symlink(target, name string) error {
	if err := r.symlink(target, clean(name)); err != nil {
		return fmt.Errorf("symlink %s -> %s in %s: %w", clean(name), target, r.dir, err)
	}
	return nil
}

func (r *Root) symlink(target, name string) error {
	d, base, err := r.lookup(name, false, true)
	if err != nil {
		return err
	}
	dirfd := d.fd
	defer unix.Close(dirfd)
	var tmp string
	for range 10 {
		tmp = tempName(base)
		err = unix.Symlinkat(target, dirfd, tmp)
		if !errors.Is(err, unix.EEXIST) {
			break
		}
	}
	if err != nil {
		return err
	}
	if err := r.labelAt(dirfd, tmp, join(d.path, base), fs.ModeSymlink); err != nil {
		unix.Unlinkat(dirfd, tmp, 0)
		return err
	}
	if err := unix.Renameat(dirfd, tmp, dirfd, base); err != nil {
		unix.Unlinkat(dirfd, tmp, 0)
		return fmt.Errorf("rename %s to %s: %w", tmp, base, err)
	}
	return unix.Fsync(dirfd)
}

// Readlink returns the target of symlink name, as stored.
func (r *Root) Readlink(name string) (string, error) {
	n := clean(name)
	d, base, err := r.lookup(n, false, false)
	if err == nil {
		defer unix.Close(d.fd)
		var t string
		t, err = readlinkat(d.fd, base)
		if err == nil {
			return t, nil
		}
	}
	return "", fmt.Errorf("readlink %s in %s: %w", n, r.dir, err)
}

// Stat returns the file info of name, not following a symlink in the last
// component (lstat). Sys() is a *syscall.Stat_t, as with os.Lstat.
func (r *Root) Stat(name string) (fs.FileInfo, error) {
	n := clean(name)
	fi, err := r.stat(n)
	if err != nil {
		return nil, fmt.Errorf("stat %s in %s: %w", n, r.dir, err)
	}
	return fi, nil
}

func (r *Root) stat(name string) (fs.FileInfo, error) {
	if name == "/" {
		fd, err := unix.Open(r.dir, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
		if err != nil {
			return nil, err
		}
		defer unix.Close(fd)
		return fstat(fd, "/")
	}
	d, base, err := r.lookup(name, false, false)
	if err != nil {
		return nil, err
	}
	dirfd := d.fd
	defer unix.Close(dirfd)
	fd, err := unix.Openat(dirfd, base, unix.O_PATH|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	defer unix.Close(fd)
	return fstat(fd, base)
}

// Exists tells whether name exists (a dangling symlink exists).
func (r *Root) Exists(name string) bool {
	_, err := r.Stat(name)
	return err == nil
}

// Remove removes the file, symlink or empty directory name.
func (r *Root) Remove(name string) error {
	n := clean(name)
	err := errors.New("cannot remove the root")
	if n != "/" {
		err = r.remove(n)
	}
	if err != nil {
		return fmt.Errorf("remove %s in %s: %w", n, r.dir, err)
	}
	return nil
}

func (r *Root) remove(name string) error {
	d, base, err := r.lookup(name, false, false)
	if err != nil {
		return err
	}
	dirfd := d.fd
	defer unix.Close(dirfd)
	err = unix.Unlinkat(dirfd, base, 0)
	if errors.Is(err, unix.EISDIR) {
		err = unix.Unlinkat(dirfd, base, unix.AT_REMOVEDIR)
	}
	if err != nil {
		return err
	}
	return unix.Fsync(dirfd)
}

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

// resolved is a directory resolved in the root: an open fd, its path in
// the root, and its taint (nil when no directory on the way is
// user-writable).
type resolved struct {
	fd    int
	path  string
	taint *taint
}

// join is a path in the root: dir and base.
func join(dir, base string) string {
	return strings.TrimSuffix(dir, "/") + "/" + base
}

// lookup resolves the parent directory of name inside the root and returns
// it and the last component. With follow, a symlink in the last component
// is resolved inside the root, repeatedly, unless the directory holding it
// is tainted: then it is refused (ErrUnsafe). With create, missing
// directories are created 0755, owned by root.
//
// name is a raw absolute path: it is not cleaned again, so a ".." that came
// from a symlink target is resolved physically, as the kernel does.
func (r *Root) lookup(name string, follow, create bool) (resolved, string, error) {
	for range maxSymlinks + 1 {
		dir, base := split(name)
		if base == "" || base == "." || base == ".." {
			return resolved{fd: -1}, "", fmt.Errorf("%q does not name a file", name)
		}
		d, err := r.openDir(dir, create)
		if err != nil {
			return resolved{fd: -1}, "", err
		}
		if !follow {
			return d, base, nil
		}
		target, err := readlinkat(d.fd, base)
		if errors.Is(err, unix.EINVAL) || errors.Is(err, unix.ENOENT) {
			return d, base, nil // not a symlink, or missing
		}
		unix.Close(d.fd)
		if err != nil {
			return resolved{fd: -1}, "", err
		}
		if d.taint != nil {
			return resolved{fd: -1}, "", &unsafeError{join(d.path, base), "is a symlink", d.taint}
		}
		if strings.HasPrefix(target, "/") {
			name = target
		} else {
			name = strings.TrimSuffix(dir, "/") + "/" + target
		}
	}
	return resolved{fd: -1}, "", unix.ELOOP
}

// split splits a raw absolute path into its directory and last component,
// ignoring trailing slashes.
func split(name string) (dir, base string) {
	name = strings.TrimRight(name, "/")
	i := strings.LastIndex(name, "/")
	if i < 0 {
		return "/", name
	}
	dir = name[:i]
	if dir == "" {
		dir = "/"
	}
	return dir, name[i+1:]
}

// openDir opens directory dir (a raw path resolved inside the root) O_RDONLY.
func (r *Root) openDir(dir string, create bool) (resolved, error) {
	rootfd, err := unix.Open(r.dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return resolved{fd: -1}, fmt.Errorf("open root: %w", err)
	}
	defer unix.Close(rootfd)
	return r.walk(rootfd, strings.TrimLeft(dir, "/"), create)
}

// maxOpenat2Tries bounds the retries openat2 asks for with EAGAIN (a
// concurrent rename or mount somewhere in the system) or EINTR: after as
// many, the component walk, which never needs a retry, does the job.
const maxOpenat2Tries = 64

// openat2Beneath opens directory rel under dirfd without following any
// symlink and without leaving dirfd (RESOLVE_BENEATH|RESOLVE_NO_SYMLINKS),
// retrying at most maxOpenat2Tries times.
func (r *Root) openat2Beneath(dirfd int, rel string) (int, error) {
	openat2 := r.openat2
	if openat2 == nil {
		openat2 = unix.Openat2
	}
	how := unix.OpenHow{
		Flags:   unix.O_RDONLY | unix.O_DIRECTORY | unix.O_CLOEXEC,
		Resolve: unix.RESOLVE_BENEATH | unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS,
	}
	for range maxOpenat2Tries {
		fd, err := openat2(dirfd, rel, &how)
		if errors.Is(err, unix.EAGAIN) || errors.Is(err, unix.EINTR) {
			continue
		}
		return fd, err
	}
	return -1, fmt.Errorf("openat2 %s: %w %d times", rel, unix.EAGAIN, maxOpenat2Tries)
}

// walk resolves directory path rel under rootfd component by component,
// never letting the kernel follow a symlink: each symlink is read and its
// target spliced into the components still to walk, an absolute target
// restarting from the root, and ".." never leaving the root. With create,
// missing directories are made 0755, owned by root.
//
// Each directory is fstat'ed: from the first one a non-root user can write
// on, a symlink is refused (ErrUnsafe), not followed. What is left of the
// path from there is opened in one openat2 with RESOLVE_NO_SYMLINKS when
// the kernel has it; any failure of that (a missing directory to create,
// a symlink to name in the error, no openat2) goes on component by
// component.
func (r *Root) walk(rootfd int, rel string, create bool) (resolved, error) {
	first, err := unix.Openat(rootfd, ".", unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return resolved{fd: -1}, err
	}
	// stack holds the directories walked through; stack[0] is the root.
	// ".." pops, which is how it stays inside, and gives the parent's
	// taint back: the user cannot change where ".." of a held fd leads.
	t, err := taintOf(first, "/", nil)
	if err != nil {
		unix.Close(first)
		return resolved{fd: -1}, err
	}
	stack := []resolved{{fd: first, path: "/", taint: t}}
	defer func() {
		for _, d := range stack {
			unix.Close(d.fd)
		}
	}()
	comps := strings.Split(rel, "/")
	links := 0
	tried := r.walkOnly // openat2 once per walk at most
	for len(comps) > 0 {
		cur := stack[len(stack)-1]
		if cur.taint != nil && !tried && !slices.Contains(comps, "..") {
			tried = true
			rest := strings.Trim(strings.Join(comps, "/"), "/")
			if rest == "" {
				break
			}
			if fd, err := r.openat2Beneath(cur.fd, rest); err == nil {
				stack = append(stack, resolved{fd: fd, path: path.Clean(join(cur.path, rest)), taint: cur.taint})
				break
			}
			// Walk on, one component at a time.
		}
		c := comps[0]
		comps = comps[1:]
		switch c {
		case "", ".":
			continue
		case "..":
			if len(stack) > 1 {
				unix.Close(cur.fd)
				stack = stack[:len(stack)-1]
			}
			continue
		}
		fd, err := unix.Openat(cur.fd, c, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		if errors.Is(err, unix.ENOENT) && create {
			fd, err = r.mkdirOpen(cur.fd, c, join(cur.path, c), 0o755, 0, 0)
		}
		if err != nil {
			links++
			target, err := linkTarget(cur, c, err, links)
			if err != nil {
				return resolved{fd: -1}, err
			}
			if strings.HasPrefix(target, "/") {
				for _, d := range stack[1:] {
					unix.Close(d.fd)
				}
				stack = stack[:1]
			}
			comps = append(strings.Split(target, "/"), comps...)
			continue
		}
		p := join(cur.path, c)
		t, err := taintOf(fd, p, cur.taint)
		if err != nil {
			unix.Close(fd)
			return resolved{fd: -1}, err
		}
		stack = append(stack, resolved{fd: fd, path: p, taint: t})
	}
	d := stack[len(stack)-1]
	stack = stack[:len(stack)-1]
	return d, nil
}

// linkTarget is, for walk, the target of c under cur when opening it as a
// directory failed with openErr: c must be a symlink (else openErr, named),
// not under a user-writable directory (ErrUnsafe), and the walk's links-th
// at most maxSymlinks (ELOOP).
func linkTarget(cur resolved, c string, openErr error, links int) (string, error) {
	var st unix.Stat_t
	if serr := unix.Fstatat(cur.fd, c, &st, unix.AT_SYMLINK_NOFOLLOW); serr != nil || st.Mode&unix.S_IFMT != unix.S_IFLNK {
		return "", fmt.Errorf("%s: %w", c, openErr)
	}
	if cur.taint != nil {
		return "", &unsafeError{join(cur.path, c), "is a symlink", cur.taint}
	}
	if links > maxSymlinks {
		return "", unix.ELOOP
	}
	return readlinkat(cur.fd, c)
}

// mkdirOpen creates directory name in dirfd with mode and owner unless it
// exists, and opens it (O_RDONLY, not following a symlink). A directory it
// creates gets the label of p, its path in the root.
func (r *Root) mkdirOpen(dirfd int, name, p string, mode fs.FileMode, uid, gid int) (int, error) {
	err := unix.Mkdirat(dirfd, name, 0o700)
	if err != nil && !errors.Is(err, unix.EEXIST) {
		return -1, err
	}
	created := err == nil
	fd, err := unix.Openat(dirfd, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1, err
	}
	if created {
		// Owner first: chown clears the set-id bits chmod sets.
		if err := unix.Fchown(fd, uid, gid); err != nil {
			unix.Close(fd)
			return -1, err
		}
		if err := unix.Fchmod(fd, unixMode(mode)); err != nil {
			unix.Close(fd)
			return -1, err
		}
		if err := r.labelFd(fd, p, fs.ModeDir); err != nil {
			unix.Close(fd)
			return -1, err
		}
	}
	return fd, nil
}

// createTemp creates a new temporary file next to base in dirfd.
func createTemp(ops fileOps, dirfd int, base string) (string, int, error) {
	for range 10 {
		tmp := tempName(base)
		fd, err := ops.create(dirfd, tmp)
		if errors.Is(err, unix.EEXIST) {
			continue
		}
		return tmp, fd, err
	}
	return "", -1, fmt.Errorf("create temporary file for %s: too many collisions", base)
}

// tempName is a hidden name next to base: ".base.earlyinit-<random>".
//
// The random part comes from math/rand/v2 (the runtime's generator,
// seeded from the kernel's AT_RANDOM at exec), as os.CreateTemp's does,
// not from crypto/rand: getrandom(2) (Linux 3.17 to 5.3) blocks PID 1
// until the kernel's pool is initialised, which early in the boot of a VM
// without a hardware RNG can take minutes, and before 3.17 crypto/rand reads
// /dev/urandom and ends the process, beyond any recover, when it cannot.
// A name only has to be unlikely to be taken: the file is created
// O_EXCL|O_NOFOLLOW, a taken name is tried again (createTemp), and the
// generator's state is not visible to another user.
func tempName(base string) string {
	if len(base) > 200 {
		base = base[:200]
	}
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], rand.Uint64())
	return "." + base + ".earlyinit-" + hex.EncodeToString(b[:6])
}

func setOwnerMode(f *os.File, mode fs.FileMode, uid, gid int) error {
	// Owner first: chown clears the set-id bits chmod sets.
	if err := unix.Fchown(int(f.Fd()), uid, gid); err != nil {
		return fmt.Errorf("chown %d:%d: %w", uid, gid, err)
	}
	if err := unix.Fchmod(int(f.Fd()), unixMode(mode)); err != nil {
		return fmt.Errorf("chmod %o: %w", unixMode(mode), err)
	}
	return nil
}

func regular(f *os.File) error {
	var st unix.Stat_t
	if err := unix.Fstat(int(f.Fd()), &st); err != nil {
		return err
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG {
		return errors.New("not a regular file")
	}
	return nil
}

// unixMode converts permission and set-id/sticky bits of an fs.FileMode.
func unixMode(m fs.FileMode) uint32 {
	u := uint32(m.Perm())
	if m&fs.ModeSetuid != 0 {
		u |= unix.S_ISUID
	}
	if m&fs.ModeSetgid != 0 {
		u |= unix.S_ISGID
	}
	if m&fs.ModeSticky != 0 {
		u |= unix.S_ISVTX
	}
	return u
}

func readlinkat(dirfd int, name string) (string, error) {
	for size := 256; ; size *= 2 {
		buf := make([]byte, size)
		n, err := unix.Readlinkat(dirfd, name, buf)
		if err != nil {
			return "", err
		}
		if n < size {
			return string(buf[:n]), nil
		}
	}
}

// fileInfo is an fs.FileInfo from fstat.
type fileInfo struct {
	name string
	st   syscall.Stat_t
}

func fstat(fd int, name string) (fs.FileInfo, error) {
	fi := &fileInfo{name: name}
	if err := syscall.Fstat(fd, &fi.st); err != nil {
		return nil, err
	}
	return fi, nil
}

func (fi *fileInfo) Name() string       { return fi.name }
func (fi *fileInfo) Size() int64        { return fi.st.Size }
func (fi *fileInfo) ModTime() time.Time { return time.Unix(fi.st.Mtim.Unix()) }
func (fi *fileInfo) IsDir() bool        { return fi.Mode().IsDir() }
func (fi *fileInfo) Sys() any           { return &fi.st }

func (fi *fileInfo) Mode() fs.FileMode { return FileMode(fi.st.Mode) }

// FileMode turns a stat(2) st_mode into an fs.FileMode, as os.Stat does.
func FileMode(mode uint32) fs.FileMode {
	m := fs.FileMode(mode & 0o777)
	switch mode & syscall.S_IFMT {
	case syscall.S_IFDIR:
		m |= fs.ModeDir
	case syscall.S_IFLNK:
		m |= fs.ModeSymlink
	case syscall.S_IFIFO:
		m |= fs.ModeNamedPipe
	case syscall.S_IFSOCK:
		m |= fs.ModeSocket
	case syscall.S_IFCHR:
		m |= fs.ModeDevice | fs.ModeCharDevice
	case syscall.S_IFBLK:
		m |= fs.ModeDevice
	}
	if mode&syscall.S_ISUID != 0 {
		m |= fs.ModeSetuid
	}
	if mode&syscall.S_ISGID != 0 {
		m |= fs.ModeSetgid
	}
	if mode&syscall.S_ISVTX != 0 {
		m |= fs.ModeSticky
	}
	return m
}
