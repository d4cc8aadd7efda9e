// Package resizefs grows a mounted filesystem online to fill its block
// device, as cloud-init's cc_resizefs does with resize2fs, xfs_growfs and
// btrfs filesystem resize, but with the kernel's ioctls and no external
// tools: ext2/3/4 with EXT4_IOC_RESIZE_FS, XFS with XFS_IOC_FSGEOMETRY and
// XFS_IOC_FSGROWFSDATA, btrfs with BTRFS_IOC_RESIZE to "max". The type
// comes from statfs's magic. When the filesystem already fills its
// device, Grow costs a statfs, the device's size and one superblock or
// geometry read, and changes nothing.
//
// The ioctl numbers and structs x/sys/unix lacks are defined here, each
// citing its kernel header, with the asm-generic _IOC layout (x86, arm,
// arm64, riscv).
package resizefs

import (
	"errors"
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// Result is what Grow did.
type Result struct {
	// FSType is the filesystem's type: ext2, ext3, ext4, xfs or btrfs.
	FSType string
	// Old and New are its size in bytes before and after (for btrfs,
	// the size it uses of the device grown).
	Old, New int64
}

// Grown tells whether the filesystem grew.
func (r Result) Grown() bool { return r.New > r.Old }

// ErrUnsupported is wrapped by Grow for a filesystem type it does not
// grow (vfat, tmpfs, ...).
var ErrUnsupported = errors.New("not a filesystem resizefs grows (ext2/3/4, xfs, btrfs)")

// Grow grows the filesystem mounted at mount to fill device, its block
// device (for btrfs on several devices, the device with id 1, found by
// the filesystem itself). It never shrinks one. Errors name the mount
// point or the device and the reason.
func Grow(mount, device string) (Result, error) {
	fd, err := unix.Open(mount, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return Result{}, fmt.Errorf("open %s: %w", mount, err)
	}
	defer unix.Close(fd)
	var st unix.Statfs_t
	if err := unix.Fstatfs(fd, &st); err != nil {
		return Result{}, fmt.Errorf("statfs %s: %w", mount, err)
	}
	var r Result
	switch uint32(st.Type) {
	case unix.EXT4_SUPER_MAGIC:
		r, err = growExt(fd, st, device)
	case unix.XFS_SUPER_MAGIC:
		r, err = growXFS(fd, st, device)
	case unix.BTRFS_SUPER_MAGIC:
		r, err = growBtrfs(fd, device)
	default:
		return Result{}, fmt.Errorf("%s: filesystem magic %#x: %w", mount, st.Type, ErrUnsupported)
	}
	if err != nil {
		return r, fmt.Errorf("%s (%s): %w", mount, or(r.FSType, "?"), err)
	}
	return r, nil
}

func or(v, def string) string {
	if v == "" {
		return def
	}
	return v
}

// openDevice opens device read-only and returns it with its size in
// bytes and device number.
func openDevice(device string) (*os.File, int64, uint64, error) {
	f, err := os.OpenFile(device, os.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, 0, 0, err
	}
	var st unix.Stat_t
	if err := unix.Fstat(int(f.Fd()), &st); err != nil {
		f.Close()
		return nil, 0, 0, fmt.Errorf("%s: %w", device, err)
	}
	if st.Mode&unix.S_IFMT != unix.S_IFBLK {
		f.Close()
		return nil, 0, 0, fmt.Errorf("%s is not a block device", device)
	}
	var size uint64
	if err := ioctl(int(f.Fd()), unix.BLKGETSIZE64, &size); err != nil {
		f.Close()
		return nil, 0, 0, fmt.Errorf("%s: BLKGETSIZE64: %w", device, err)
	}
	if size > 1<<62 {
		f.Close()
		return nil, 0, 0, fmt.Errorf("%s: size %d", device, size)
	}
	return f, int64(size), st.Rdev, nil
}
