package growpart

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"unsafe"

	"golang.org/x/sys/unix"
)

// System is where the device layer looks at the machine: sysfs, the
// device nodes and the mount table. The zero value is the machine's.
type System struct {
	// Sys is sysfs ("" for /sys), Dev the device nodes ("" for /dev),
	// MountInfo the mount table ("" for /proc/self/mountinfo).
	Sys, Dev, MountInfo string
}

func (s System) sys() string { return or(s.Sys, "/sys") }
func (s System) dev() string { return or(s.Dev, "/dev") }
func (s System) mountInfo() string {
	return or(s.MountInfo, "/proc/self/mountinfo")
}

func or(v, def string) string {
	if v == "" {
		return def
	}
	return v
}

// Device is a block device as sysfs shows it.
type Device struct {
	// Name is the kernel's name ("vda1", "nvme0n1p2", "dm-0"), Path its
	// node ("/dev/vda1").
	Name, Path   string
	Major, Minor uint32
	// Size is its size in bytes.
	Size int64

	dir string // its directory under /sys/devices
}

// Partition is a partition and its disk, as sysfs shows them.
type Partition struct {
	Device
	// Num is the partition's number, Start its first byte on the disk.
	Num   int
	Start int64
	// Disk is the whole disk; SectorSize its logical sector size, the
	// unit of its partition table.
	Disk       Device
	SectorSize int64
}

// ErrNotPartition is wrapped by System.Partition for a device that is not
// a partition: a whole disk, device-mapper (LVM, LUKS), md RAID, a loop
// device without partitions. Its message says which.
var ErrNotPartition = errors.New("not a partition")

// ErrNotMountPoint is wrapped by System.MountDevice for a path nothing is
// mounted on.
var ErrNotMountPoint = errors.New("not a mount point")

// MountDevice finds the block device of the filesystem mounted at path:
// the last mount on path in the mount table gives major:minor, or, for a
// filesystem without one of its own (btrfs), its source in /dev does.
func (s System) MountDevice(path string) (Device, error) {
	path = filepath.Clean(path)
	if p, err := filepath.EvalSymlinks(path); err == nil {
		path = p
	}
	devno, fstype, source, err := s.findMount(path)
	if err != nil {
		return Device{}, err
	}
	if strings.HasPrefix(devno, "0:") {
		// No block device of its own (btrfs, overlay, tmpfs): the
		// source names it, if it is one.
		devno, err = s.sourceDevno(source)
		if err != nil {
			return Device{}, fmt.Errorf("%s (%s from %q) is not on a block device: %w", path, fstype, source, err)
		}
	}
	return s.device(devno)
}

// findMount reads the mount table for path's last mount: its
// major:minor, type and source.
func (s System) findMount(path string) (devno, fstype, source string, err error) {
	raw, err := os.ReadFile(s.mountInfo())
	if err != nil {
		return "", "", "", fmt.Errorf("read the mount table: %w", err)
	}
	found := false
	sc := bufio.NewScanner(bytes.NewReader(raw))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		// 36 35 98:0 /mnt1 /mnt2 rw,noatime master:1 - ext3 /dev/root rw
		f := strings.Fields(sc.Text())
		sep := -1
		for i := 6; i < len(f); i++ {
			if f[i] == "-" {
				sep = i
				break
			}
		}
		if sep < 0 || sep+2 >= len(f) || unescape(f[4]) != path {
			continue
		}
		devno, fstype, source, found = f[2], f[sep+1], unescape(f[sep+2]), true
	}
	if !found {
		return "", "", "", fmt.Errorf("%s: %w", path, ErrNotMountPoint)
	}
	return devno, fstype, source, nil
}

// unescape undoes the mount table's octal escapes (\040 for a space).
func unescape(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+4 <= len(s) {
			if n, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(n))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// sourceDevno gives the major:minor of a mount source in /dev.
func (s System) sourceDevno(source string) (string, error) {
	rel, ok := strings.CutPrefix(source, "/dev/")
	if !ok || rel == "" {
		return "", errors.New("the source is not in /dev")
	}
	node := filepath.Join(s.dev(), filepath.Clean("/"+rel))
	if p, err := filepath.EvalSymlinks(node); err == nil {
		node = p
	}
	name := filepath.Base(node)
	raw, err := os.ReadFile(filepath.Join(s.sys(), "class", "block", name, "dev"))
	if err != nil {
		return "", fmt.Errorf("no block device %q in sysfs: %w", name, err)
	}
	return strings.TrimSpace(string(raw)), nil
}

// device reads the block device major:minor from sysfs.
func (s System) device(devno string) (Device, error) {
	maj, min, ok := parseDevno(devno)
	if !ok {
		return Device{}, fmt.Errorf("bad device number %q", devno)
	}
	link := filepath.Join(s.sys(), "dev", "block", devno)
	dir, err := filepath.EvalSymlinks(link)
	if err != nil {
		return Device{}, fmt.Errorf("no block device %s in sysfs: %w", devno, err)
	}
	return s.deviceAt(dir, maj, min)
}

// deviceAt reads the block device whose sysfs directory is dir.
func (s System) deviceAt(dir string, maj, min uint32) (Device, error) {
	d := Device{Major: maj, Minor: min, dir: dir, Name: filepath.Base(dir)}
	// DEVNAME is the node's path under /dev ("cciss/c0d0" where the
	// directory says "cciss!c0d0").
	if raw, err := os.ReadFile(filepath.Join(dir, "uevent")); err == nil {
		for line := range strings.Lines(string(raw)) {
			if v, ok := strings.CutPrefix(strings.TrimSpace(line), "DEVNAME="); ok && v != "" && !strings.Contains(v, "..") {
				d.Name = v
			}
		}
	}
	d.Path = filepath.Join(s.dev(), d.Name)
	sectors, err := readInt(dir, "size")
	if err != nil {
		return Device{}, err
	}
	d.Size = sectors * 512
	return d, nil
}

func parseDevno(s string) (maj, min uint32, ok bool) {
	a, b, ok := strings.Cut(strings.TrimSpace(s), ":")
	if !ok {
		return 0, 0, false
	}
	x, err1 := strconv.ParseUint(a, 10, 32)
	y, err2 := strconv.ParseUint(b, 10, 32)
	return uint32(x), uint32(y), err1 == nil && err2 == nil
}

// readInt reads a sysfs file holding one non-negative number.
func readInt(dir, name string) (int64, error) {
	raw, err := os.ReadFile(filepath.Join(dir, name))
	if err != nil {
		return 0, fmt.Errorf("sysfs: %w", err)
	}
	n, err := strconv.ParseInt(strings.TrimSpace(string(raw)), 10, 64)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("sysfs: %s: not a number: %q", filepath.Join(dir, name), bytes.TrimSpace(raw))
	}
	return n, nil
}

// Partition reads d as a partition: its number, start and disk. A device
// that is not a partition is an error wrapping ErrNotPartition that says
// what it is.
func (s System) Partition(d Device) (Partition, error) {
	if _, err := os.Stat(filepath.Join(d.dir, "partition")); err != nil {
		what := "a whole disk"
		switch {
		case exists(filepath.Join(d.dir, "dm")):
			what = "a device-mapper device (LVM, LUKS or multipath)"
		case exists(filepath.Join(d.dir, "md")):
			what = "an md RAID device"
		case strings.HasPrefix(d.Name, "loop"):
			what = "a loop device without partitions"
		}
		return Partition{}, fmt.Errorf("%s is %s: %w", d.Path, what, ErrNotPartition)
	}
	p := Partition{Device: d}
	num, err := readInt(d.dir, "partition")
	if err != nil {
		return Partition{}, err
	}
	start, err := readInt(d.dir, "start")
	if err != nil {
		return Partition{}, err
	}
	if num < 1 || num > 1<<20 || start > 1<<53 {
		return Partition{}, fmt.Errorf("%s: sysfs says partition %d at sector %d", d.Path, num, start)
	}
	p.Num, p.Start = int(num), start*512
	diskDir := filepath.Dir(d.dir)
	raw, err := os.ReadFile(filepath.Join(diskDir, "dev"))
	if err != nil {
		return Partition{}, fmt.Errorf("%s: its disk: %w", d.Path, err)
	}
	maj, min, ok := parseDevno(string(raw))
	if !ok {
		return Partition{}, fmt.Errorf("%s: its disk: bad device number %q", d.Path, bytes.TrimSpace(raw))
	}
	if p.Disk, err = s.deviceAt(diskDir, maj, min); err != nil {
		return Partition{}, fmt.Errorf("%s: its disk: %w", d.Path, err)
	}
	if p.SectorSize, err = readInt(diskDir, "queue/logical_block_size"); err != nil {
		return Partition{}, fmt.Errorf("%s: %w", p.Disk.Path, err)
	}
	return p, nil
}

func exists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// KernelPartition is a partition the kernel lists for a disk in sysfs
// (/sys/block/<disk>/<part>/): primaries, logical partitions, BSD,
// Solaris and other slices alike.
type KernelPartition struct {
	Name string
	Num  int
	// Start and Size are in bytes (sysfs counts 512-byte sectors).
	Start, Size int64
}

// End is the first byte after the partition.
func (k KernelPartition) End() int64 { return k.Start + k.Size }

// KernelPartitions lists every partition the kernel has registered for
// disk, from sysfs. A listing that cannot be read is an error: the
// checks it feeds must fail closed.
func (s System) KernelPartitions(disk Device) ([]KernelPartition, error) {
	ents, err := os.ReadDir(disk.dir)
	if err != nil {
		return nil, fmt.Errorf("%s: the kernel's partitions: %w", disk.Path, err)
	}
	var out []KernelPartition
	for _, e := range ents {
		dir := filepath.Join(disk.dir, e.Name())
		if !e.IsDir() || !exists(filepath.Join(dir, "partition")) {
			continue
		}
		var v [3]int64
		for i, f := range []string{"partition", "start", "size"} {
			if v[i], err = readInt(dir, f); err != nil {
				return nil, fmt.Errorf("%s: the kernel's partition %s: %w", disk.Path, e.Name(), err)
			}
		}
		if v[1] > 1<<53 || v[2] > 1<<53 {
			return nil, fmt.Errorf("%s: sysfs says partition %s at sector %d, %d sectors", disk.Path, e.Name(), v[1], v[2])
		}
		out = append(out, KernelPartition{Name: e.Name(), Num: int(v[0]), Start: v[1] * 512, Size: v[2] * 512})
	}
	return out, nil
}

// Overlap returns an error naming the first partition of others, p's
// own entry aside, that bytes [start, start+length) of the disk overlap.
func Overlap(others []KernelPartition, num int, start, length int64) error {
	for _, o := range others {
		if o.Num == num || o.Size == 0 {
			continue
		}
		if start < o.End() && o.Start < start+length {
			return fmt.Errorf("partition %d's range (sectors %d..%d of 512 bytes) would overlap %s (partition %d, sectors %d..%d), which the kernel lists",
				num, start/512, (start+length)/512-1, o.Name, o.Num, o.Start/512, o.End()/512-1)
		}
	}
	return nil
}

// CheckOverlap tells whether p, as the kernel sees it now, overlaps
// another partition the kernel lists for its disk: before a filesystem
// is grown to fill p, which would write over that partition's data.
func (s System) CheckOverlap(p Partition) error {
	others, err := s.KernelPartitions(p.Disk)
	if err != nil {
		return err
	}
	if err := Overlap(others, p.Num, p.Start, p.Size); err != nil {
		return fmt.Errorf("%s: %w", p.Disk.Path, err)
	}
	return nil
}

// GrowPartition grows p to the end of the free space after it in its
// disk's partition table, and tells the kernel its new size
// (BLKPG_RESIZE_PARTITION, which works while p is mounted). A table the
// kernel did not read p from (the starts differ) is not touched, nor one
// whose new range would overlap any partition the kernel lists for the
// disk (KernelPartitions). When the table already gives p more room than
// the kernel knows (an earlier run stopped between the two), only the
// kernel is told; KernelResized says so. When the kernel refuses the new
// size, the old table is written back and verified before the error is
// returned, so the next boot does not read a table the kernel refused.
// The Change is nil on an error before the table was read.
func (s System) GrowPartition(p Partition) (*Change, error) {
	f, err := openBlock(p.Disk)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	others, err := s.KernelPartitions(p.Disk)
	if err != nil {
		return nil, err
	}
	size, err := blkGetSize64(int(f.Fd()))
	if err != nil {
		return nil, fmt.Errorf("%s: BLKGETSIZE64: %w", p.Disk.Path, err)
	}
	if size > 1<<62 {
		return nil, fmt.Errorf("%s: size %d", p.Disk.Path, size)
	}
	d := Disk{Name: p.Disk.Path, RW: f, SectorSize: p.SectorSize, Size: int64(size)}
	return grow(d, p, others, f.Sync, func(num int, start, length int64) error {
		return blkpgResize(int(f.Fd()), num, start, length)
	})
}

// grow is GrowPartition on an open disk: others are the partitions the
// kernel lists for it, sync flushes the disk's writes, tell resizes the
// kernel's partition (byte start and length).
func grow(d Disk, p Partition, others []KernelPartition, sync func() error, tell func(num int, start, length int64) error) (*Change, error) {
	c, err := Plan(d, p.Num)
	if err != nil {
		return nil, err
	}
	if c.OldSize == 0 {
		// A logical partition: not grown, nothing to compare.
		return c, nil
	}
	if got := c.Start * d.SectorSize; got != p.Start {
		return c, fmt.Errorf("%s: its table puts partition %d at byte %d, the kernel at byte %d: not touched", d.Name, p.Num, got, p.Start)
	}
	length := c.NewSize * d.SectorSize
	if length <= p.Size {
		return c, nil
	}
	if err := Overlap(others, p.Num, p.Start, length); err != nil {
		return nil, fmt.Errorf("%s: %w: nothing written", d.Name, err)
	}
	if c.Grown() {
		if err := c.Write(); err != nil {
			sync()
			return c, err
		}
		if err := sync(); err != nil {
			return c, c.undone(fmt.Errorf("%s: sync: %w", d.Name, err), d, sync)
		}
	}
	if err := tell(p.Num, p.Start, length); err != nil {
		err = fmt.Errorf("%s: tell the kernel partition %d's new size (BLKPG_RESIZE_PARTITION): %w", d.Name, p.Num, err)
		if c.Grown() {
			return c, c.undone(err, d, sync)
		}
		return c, err
	}
	c.KernelResized = true
	return c, nil
}

// undone restores the old table after err, syncs it and verifies it
// (read back byte for byte, and planned again: the partition has its old
// size), and says how that went.
func (c *Change) undone(err error, d Disk, sync func() error) error {
	if rerr := c.Restore(); rerr != nil {
		return fmt.Errorf("%w; restoring the old table FAILED: %v", err, rerr)
	}
	if serr := sync(); serr != nil {
		return fmt.Errorf("%w; the old table was written back, but sync failed: %v", err, serr)
	}
	back, perr := plan(d, c.Part, false)
	if perr == nil && (back.Start != c.Start || back.OldSize != c.OldSize) {
		perr = fmt.Errorf("partition %d reads back as sectors %d+%d, not %d+%d", c.Part, back.Start, back.OldSize, c.Start, c.OldSize)
	}
	if perr != nil {
		return fmt.Errorf("%w; the old table was written back but does not verify: %v", err, perr)
	}
	c.NewSize = c.OldSize
	c.Reason = "the kernel refused the new size; the old table was restored"
	return fmt.Errorf("%w; the old table was restored and verifies", err)
}

// openBlock opens d's node read-write and checks that it is d.
func openBlock(d Device) (*os.File, error) {
	f, err := os.OpenFile(d.Path, os.O_RDWR|unix.O_CLOEXEC|unix.O_NOFOLLOW, 0)
	if err != nil {
		return nil, fmt.Errorf("open the disk: %w", err)
	}
	var st unix.Stat_t
	if err := unix.Fstat(int(f.Fd()), &st); err != nil {
		f.Close()
		return nil, fmt.Errorf("%s: %w", d.Path, err)
	}
	if st.Mode&unix.S_IFMT != unix.S_IFBLK || st.Rdev != unix.Mkdev(d.Major, d.Minor) {
		f.Close()
		return nil, fmt.Errorf("%s is not the block device %d:%d", d.Path, d.Major, d.Minor)
	}
	return f, nil
}

// blkpgResize tells the kernel that partition num of the disk open as fd
// now has length bytes from start: BLKPG with BLKPG_RESIZE_PARTITION
// (linux/blkpg.h; x/sys/unix has the structs and numbers). The operation
// is Linux 3.6: an older kernel answers EINVAL, and grow writes the old
// table back as for any refusal.
func blkpgResize(fd, num int, start, length int64) error {
	part := &unix.BlkpgPartition{Start: start, Length: length, Pno: int32(num)}
	arg := &unix.BlkpgIoctlArg{Op: unix.BLKPG_RESIZE_PARTITION, Datalen: int32(unsafe.Sizeof(*part)), Data: (*byte)(unsafe.Pointer(part))}
	_, _, errno := unix.Syscall(unix.SYS_IOCTL, uintptr(fd), unix.BLKPG, uintptr(unsafe.Pointer(arg)))
	runtime.KeepAlive(part)
	runtime.KeepAlive(arg)
	if errno != 0 {
		return errno
	}
	return nil
}

// blkGetSize64 is the size in bytes of the block device open as fd.
func blkGetSize64(fd int) (uint64, error) {
	var n uint64
	_, _, errno := unix.Syscall(unix.SYS_IOCTL, uintptr(fd), unix.BLKGETSIZE64, uintptr(unsafe.Pointer(&n)))
	if errno != 0 {
		return 0, errno
	}
	return n, nil
}

// NodeDevice is the block device whose node is path (a /dev path, links
// such as /dev/disk/by-label/data resolved), as sysfs shows it.
func (s System) NodeDevice(path string) (Device, error) {
	node := path
	if p, err := filepath.EvalSymlinks(path); err == nil {
		node = p
	}
	var st unix.Stat_t
	if err := unix.Stat(node, &st); err != nil {
		return Device{}, fmt.Errorf("%s: %w", path, err)
	}
	if st.Mode&unix.S_IFMT != unix.S_IFBLK {
		return Device{}, fmt.Errorf("%s is not a block device", path)
	}
	return s.device(fmt.Sprintf("%d:%d", unix.Major(st.Rdev), unix.Minor(st.Rdev)))
}

// GrowDevice grows the partition that is dev (GrowPartition) and says in
// one line, for a log, what happened: grown, only the kernel told, nothing
// to grow and why, or skipped because dev is not a partition (no error).
func (s System) GrowDevice(dev Device) (string, error) {
	p, err := s.Partition(dev)
	if errors.Is(err, ErrNotPartition) {
		return fmt.Sprintf("skipped: %v", err), nil
	}
	if err != nil {
		return "", err
	}
	c, err := s.GrowPartition(p)
	if err != nil {
		return "", err
	}
	switch {
	case c.Grown():
		how := ""
		if c.BackupMoved {
			how = " (GPT backup header moved)"
		}
		return fmt.Sprintf("%s grown from %d to %d sectors%s", p.Path, c.OldSize, c.NewSize, how), nil
	case c.KernelResized:
		return fmt.Sprintf("%s: the table already gives it %d sectors; the kernel was told", p.Path, c.NewSize), nil
	}
	return fmt.Sprintf("%s: nothing to grow: %s", p.Path, c.Reason), nil
}
