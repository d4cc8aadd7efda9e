package rootfs

import (
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"

	"golang.org/x/sys/unix"
)

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
