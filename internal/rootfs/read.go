package rootfs

import (
	"errors"
	"fmt"
	"io"
	"os"

	"golang.org/x/sys/unix"
)

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
