package rootfs

import (
	"errors"
	"fmt"
	"io/fs"

	"golang.org/x/sys/unix"
)

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
