package rootfs

import (
	"errors"
	"fmt"
	"path"
	"slices"
	"strings"

	"golang.org/x/sys/unix"
)

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
