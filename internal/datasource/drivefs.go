package datasource

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"strings"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"github.com/earlyinit/earlyinit/internal/rootfs"
)

// MaxDriveTotal is the most DriveFS reads from one drive or seed directory,
// all files together: 64 MiB, so that a 64 MB config drive (the size some
// private clouds give config-2 and vfat drives) can be read whole, while 200
// "files" entries of MaxFileSize each (3.2 GiB) cannot exhaust the
// initramfs's memory.
const MaxDriveTotal = 64 << 20

// DriveFS returns a read-only fs.FS over the directory dir (a mounted config
// drive or a seed directory) that is safe to read from PID 1 whatever the
// drive holds:
//
//   - no symlink is followed, at any component of a name: a link is an error
//     naming it, so nothing outside dir (/proc, /dev, /etc/shadow) is read;
//   - only regular files and directories are opened; a FIFO, socket or
//     device node is refused before it is opened (opening a FIFO blocks, and
//     opening a device can have effects), and the opened file is checked
//     again with fstat to be the one that was looked at;
//   - files are opened O_RDONLY|O_NONBLOCK|O_NOFOLLOW|O_CLOEXEC;
//   - one file yields at most MaxFileSize bytes and all files together at
//     most total bytes (MaxDriveTotal when total <= 0); past either, Read
//     fails with an error naming the file and the limit.
//
// dir itself is opened as given (it is the caller's mount point or seed
// directory). Errors are *fs.PathError naming the file inside dir, and a
// missing file is still fs.ErrNotExist.
func DriveFS(dir string, total int64) fs.FS {
	if total <= 0 {
		total = MaxDriveTotal
	}
	return &driveFS{dir: dir, perFile: MaxFileSize, budget: &budget{left: total, total: total}}
}

type driveFS struct {
	dir     string
	perFile int64
	budget  *budget
}

// budget is what is left to read from one drive, shared by its files.
type budget struct {
	mu          sync.Mutex
	left, total int64
}

// take accounts n more bytes read; it fails once the total is exceeded.
func (b *budget) take(n int64) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.left -= n
	if b.left < 0 {
		return fmt.Errorf("over the %d byte limit for everything read from the drive", b.total)
	}
	return nil
}

func (d *driveFS) Open(name string) (fs.File, error) {
	if !fs.ValidPath(name) {
		return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrInvalid}
	}
	fd, err := unix.Open(d.dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC|unix.O_NONBLOCK, 0)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: name, Err: fmt.Errorf("open drive directory %s: %w", d.dir, err)}
	}
	if name != "." {
		parts := strings.Split(name, "/")
		for i, p := range parts {
			last := i == len(parts)-1
			nfd, err := openBeneath(fd, p, last)
			unix.Close(fd)
			if err != nil {
				return nil, &fs.PathError{Op: "open", Path: strings.Join(parts[:i+1], "/"), Err: err}
			}
			fd = nfd
		}
	}
	f := os.NewFile(uintptr(fd), name)
	if f == nil {
		unix.Close(fd)
		return nil, &fs.PathError{Op: "open", Path: name, Err: errors.New("bad file descriptor")}
	}
	return &driveFile{f: f, name: name, perFile: d.perFile, budget: d.budget}, nil
}

// errSymlink is the reason a symlink on a drive is refused.
var errSymlink = errors.New("is a symbolic link; links on a drive are not followed")

// openBeneath opens the entry name of the directory dirfd without following
// a symlink and only if it is a directory, or a regular file when last. The
// type is checked with fstatat before opening and with fstat after, on the
// same inode, so neither a FIFO nor a device is ever opened.
func openBeneath(dirfd int, name string, last bool) (int, error) {
	var st unix.Stat_t
	if err := unix.Fstatat(dirfd, name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return -1, err
	}
	if err := checkType(st.Mode, last); err != nil {
		return -1, err
	}
	flags := unix.O_RDONLY | unix.O_NONBLOCK | unix.O_NOFOLLOW | unix.O_CLOEXEC | unix.O_NOCTTY
	if !last {
		flags |= unix.O_DIRECTORY
	}
	fd, err := unix.Openat(dirfd, name, flags, 0)
	if errors.Is(err, unix.ELOOP) {
		return -1, errSymlink
	}
	if err != nil {
		return -1, err
	}
	var st2 unix.Stat_t
	if err := unix.Fstat(fd, &st2); err != nil {
		unix.Close(fd)
		return -1, fmt.Errorf("fstat: %w", err)
	}
	if err := checkType(st2.Mode, last); err != nil {
		unix.Close(fd)
		return -1, err
	}
	if st2.Dev != st.Dev || st2.Ino != st.Ino {
		unix.Close(fd)
		return -1, errors.New("changed while being opened")
	}
	return fd, nil
}

// checkType allows a directory anywhere and a regular file as the last
// component.
func checkType(mode uint32, last bool) error {
	switch mode & unix.S_IFMT {
	case unix.S_IFDIR:
		return nil
	case unix.S_IFREG:
		if last {
			return nil
		}
		return unix.ENOTDIR
	case unix.S_IFLNK:
		return errSymlink
	case unix.S_IFIFO:
		return errors.New("is a FIFO, not a regular file or directory")
	case unix.S_IFSOCK:
		return errors.New("is a socket, not a regular file or directory")
	case unix.S_IFCHR:
		return errors.New("is a character device, not a regular file or directory")
	case unix.S_IFBLK:
		return errors.New("is a block device, not a regular file or directory")
	default:
		return fmt.Errorf("has unknown file type %#o", mode&unix.S_IFMT)
	}
}

// driveFile counts what is read against the per-file and drive limits. It
// offers only Read, Stat, ReadDir and Close (no ReadAt, Seek or WriteTo that
// would bypass the count). Directory entries come from lstat and are never
// followed.
type driveFile struct {
	f       *os.File
	name    string
	read    int64
	perFile int64
	budget  *budget
}

var _ fs.ReadDirFile = (*driveFile)(nil)

func (f *driveFile) Stat() (fs.FileInfo, error) { return f.f.Stat() }
func (f *driveFile) Close() error               { return f.f.Close() }

// ReadDir lists names with getdents and describes each with fstatat on the
// directory's fd, never following a link (os.File.ReadDir would lstat a path
// made from the name, relative to the working directory).
func (f *driveFile) ReadDir(n int) ([]fs.DirEntry, error) {
	names, err := f.f.Readdirnames(n)
	var out []fs.DirEntry
	for _, name := range names {
		var st unix.Stat_t
		if serr := unix.Fstatat(int(f.f.Fd()), name, &st, unix.AT_SYMLINK_NOFOLLOW); serr != nil {
			if errors.Is(serr, unix.ENOENT) {
				continue // removed since listed
			}
			return out, &fs.PathError{Op: "readdir", Path: path.Join(f.name, name), Err: serr}
		}
		out = append(out, fs.FileInfoToDirEntry(statInfo{name: name, st: st}))
	}
	return out, err
}

// statInfo is an fs.FileInfo from a Stat_t.
type statInfo struct {
	name string
	st   unix.Stat_t
}

func (i statInfo) Name() string       { return i.name }
func (i statInfo) Size() int64        { return i.st.Size }
func (i statInfo) ModTime() time.Time { return time.Unix(i.st.Mtim.Unix()) }
func (i statInfo) IsDir() bool        { return i.st.Mode&unix.S_IFMT == unix.S_IFDIR }
func (i statInfo) Sys() any           { return &i.st }

func (i statInfo) Mode() fs.FileMode { return rootfs.FileMode(i.st.Mode) }

func (f *driveFile) Read(p []byte) (int, error) {
	n, err := f.f.Read(p)
	if n > 0 {
		f.read += int64(n)
		if f.read > f.perFile {
			return 0, &fs.PathError{Op: "read", Path: f.name, Err: fmt.Errorf("over the %d byte limit for one file", f.perFile)}
		}
		if berr := f.budget.take(int64(n)); berr != nil {
			return 0, &fs.PathError{Op: "read", Path: f.name, Err: berr}
		}
	}
	// An error from f.f is an *fs.PathError naming f.name already.
	return n, err
}
