package resizefs

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"os"
	"strconv"

	"golang.org/x/sys/unix"
)

// extSuper is what growExt reads of an ext2/3/4 superblock.
type extSuper struct {
	fstype    string
	blockSize int64
	blocks    int64
	is64      bool
	fsid      [2]int32 // what statfs reports for it
}

// readExtSuper reads the superblock at byte 1024 of dev.
func readExtSuper(dev *os.File) (extSuper, error) {
	b := make([]byte, 1024)
	if _, err := dev.ReadAt(b, 1024); err != nil {
		return extSuper{}, fmt.Errorf("read the superblock: %w", err)
	}
	le := binary.LittleEndian
	if le.Uint16(b[0x38:]) != 0xEF53 {
		return extSuper{}, errors.New("no ext2/3/4 superblock")
	}
	logBS := le.Uint32(b[0x18:])
	if logBS > 6 {
		return extSuper{}, fmt.Errorf("superblock: block size 1024<<%d", logBS)
	}
	compat, incompat := le.Uint32(b[0x5c:]), le.Uint32(b[0x60:])
	s := extSuper{fstype: "ext2", blockSize: 1024 << logBS, blocks: int64(le.Uint32(b[0x04:])), is64: incompat&0x80 != 0}
	if s.is64 {
		s.blocks |= int64(le.Uint32(b[0x150:])) << 32
	}
	switch {
	case incompat&(0x40|0x80|0x200) != 0: // extents, 64bit, flex_bg
		s.fstype = "ext4"
	case compat&0x4 != 0: // has_journal
		s.fstype = "ext3"
	}
	// fs/ext4/super.c ext4_statfs: f_fsid is uuid_to_fsid(s_uuid).
	fsid := le.Uint64(b[0x68:]) ^ le.Uint64(b[0x70:])
	s.fsid = [2]int32{int32(uint32(fsid)), int32(uint32(fsid >> 32))}
	return s, nil
}

// growExt grows the ext2/3/4 filesystem open as fd to fill device.
func growExt(fd int, st unix.Statfs_t, device string) (Result, error) {
	dev, size, _, err := openDevice(device)
	if err != nil {
		return Result{FSType: "ext4"}, err
	}
	defer dev.Close()
	s, err := readExtSuper(dev)
	if err != nil {
		return Result{FSType: "ext4"}, fmt.Errorf("%s: %w", device, err)
	}
	r := Result{FSType: s.fstype, Old: s.blocks * s.blockSize}
	r.New = r.Old
	if s.fsid != st.Fsid.Val {
		return r, fmt.Errorf("%s holds another filesystem than the one mounted (its UUID does not give the mount's fsid)", device)
	}
	blocks := size / s.blockSize
	if !s.is64 {
		// Block numbers are 32-bit without the 64bit feature.
		blocks = min(blocks, math.MaxUint32)
	}
	if blocks <= s.blocks {
		return r, nil
	}
	n := uint64(blocks)
	if err := ioctl(fd, ext4IocResizeFS, &n); err != nil {
		hint := ""
		if errors.Is(err, unix.EPERM) {
			hint = " (online resize needs CAP_SYS_RESOURCE and a filesystem without errors)"
		}
		return r, fmt.Errorf("EXT4_IOC_RESIZE_FS to %d blocks of %d bytes: %w%s", blocks, s.blockSize, err, hint)
	}
	after, err := readExtSuper(dev)
	if err != nil {
		return r, fmt.Errorf("%s after the resize: %w", device, err)
	}
	r.New = after.blocks * after.blockSize
	return r, nil
}

// xfsMinAGBlocks is XFS_MIN_AG_BLOCKS (fs/xfs/libxfs/xfs_fs.h): the kernel
// does not add a last allocation group smaller than this.
const xfsMinAGBlocks = 64

// xfsGeometry reads the geometry of the XFS filesystem open as fd.
func xfsGeometry(fd int) (xfsGeom, error) {
	var g xfsGeom
	err := ioctl(fd, xfsIocFSGeometry, &g)
	if errors.Is(err, unix.ENOTTY) || errors.Is(err, unix.EINVAL) {
		// Before Linux 5.1 the request is unknown (xfs_file_ioctl
		// answers ENOTTY; EINVAL is taken alike): version 1, the first
		// 112 bytes, which every kernel with XFS has.
		g = xfsGeom{}
		err = ioctl(fd, xfsIocFSGeometryV1, &g)
	}
	if err != nil {
		return g, fmt.Errorf("XFS_IOC_FSGEOMETRY: %w", err)
	}
	if g.Blocksize < 512 || g.Blocksize > 65536 || g.Agblocks == 0 || g.Datablocks > math.MaxInt64/uint64(g.Blocksize) {
		return g, fmt.Errorf("XFS_IOC_FSGEOMETRY: block size %d, %d blocks per AG, %d data blocks", g.Blocksize, g.Agblocks, g.Datablocks)
	}
	return g, nil
}

// hugeEncodeDev is include/linux/kdev_t.h's huge_encode_dev, which XFS's
// statfs reports as f_fsid: the data device's number.
func hugeEncodeDev(maj, min uint32) uint64 {
	return uint64(min&0xff) | uint64(maj)<<8 | uint64(min&^0xff)<<12
}

// growXFS grows the XFS filesystem open as fd to fill device, keeping its
// imaxpct.
func growXFS(fd int, st unix.Statfs_t, device string) (Result, error) {
	r := Result{FSType: "xfs"}
	g, err := xfsGeometry(fd)
	if err != nil {
		return r, err
	}
	bs := int64(g.Blocksize)
	r.Old = int64(g.Datablocks) * bs
	r.New = r.Old
	dev, size, rdev, err := openDevice(device)
	if err != nil {
		return r, err
	}
	dev.Close()
	fsid := hugeEncodeDev(unix.Major(rdev), unix.Minor(rdev))
	if st.Fsid.Val != [2]int32{int32(uint32(fsid)), int32(uint32(fsid >> 32))} {
		return r, fmt.Errorf("%s is not the filesystem's data device", device)
	}
	blocks := size / bs
	// What the kernel will make of it (xfs_growfs_data_private): a
	// last allocation group under XFS_MIN_AG_BLOCKS is not added.
	usable := blocks
	if m := usable % int64(g.Agblocks); m != 0 && m < xfsMinAGBlocks {
		usable -= m
	}
	if usable <= int64(g.Datablocks) {
		return r, nil
	}
	in := xfsGrowFSData{Newblocks: uint64(blocks), Imaxpct: g.Imaxpct}
	if err := ioctl(fd, xfsIocFSGrowFSData, &in); err != nil {
		return r, fmt.Errorf("XFS_IOC_FSGROWFSDATA to %d blocks of %d bytes: %w", blocks, bs, err)
	}
	if g, err = xfsGeometry(fd); err != nil {
		return r, fmt.Errorf("after the resize: %w", err)
	}
	r.New = int64(g.Datablocks) * bs
	return r, nil
}

// growBtrfs grows the btrfs filesystem open as fd to "max" on its one
// device, which is device, or on the device with id 1 of several (as
// btrfs filesystem resize max does).
func growBtrfs(fd int, device string) (Result, error) {
	r := Result{FSType: "btrfs"}
	var fi btrfsFSInfoArgs
	if err := ioctl(fd, btrfsIocFSInfo, &fi); err != nil {
		return r, fmt.Errorf("BTRFS_IOC_FS_INFO: %w", err)
	}
	if fi.NumDevices == 0 || fi.MaxID > 1<<16 {
		return r, fmt.Errorf("BTRFS_IOC_FS_INFO: %d devices, largest id %d", fi.NumDevices, fi.MaxID)
	}
	var di btrfsDevInfoArgs
	found := false
	for id := uint64(1); id <= fi.MaxID && !found; id++ {
		di = btrfsDevInfoArgs{Devid: id}
		err := ioctl(fd, btrfsIocDevInfo, &di)
		switch {
		case err == nil:
			found = true
		case !errors.Is(err, unix.ENODEV):
			return r, fmt.Errorf("BTRFS_IOC_DEV_INFO %d: %w", id, err)
		case fi.NumDevices > 1:
			return r, fmt.Errorf("BTRFS_IOC_DEV_INFO: no device 1 of %d", fi.NumDevices)
		}
	}
	if !found {
		return r, errors.New("BTRFS_IOC_DEV_INFO: no device")
	}
	r.Old = int64(min(di.TotalBytes, math.MaxInt64))
	r.New = r.Old
	path := string(di.Path[:])
	if i := bytes.IndexByte(di.Path[:], 0); i >= 0 {
		path = path[:i]
	}
	if fi.NumDevices > 1 {
		device = path
	}
	dev, size, rdev, err := openDevice(device)
	if err != nil {
		return r, err
	}
	dev.Close()
	if fi.NumDevices == 1 {
		var st unix.Stat_t
		if unix.Stat(path, &st) == nil && st.Rdev != rdev {
			return r, fmt.Errorf("%s is not the filesystem's device %s", device, path)
		}
	}
	// The kernel rounds "max" down to the sector size.
	target := size
	if fi.Sectorsize > 0 {
		target -= size % int64(fi.Sectorsize)
	}
	if target <= r.Old {
		return r, nil
	}
	var va btrfsVolArgs
	copy(va.Name[:], strconv.FormatUint(di.Devid, 10)+":max")
	if err := ioctl(fd, btrfsIocResize, &va); err != nil {
		return r, fmt.Errorf("BTRFS_IOC_RESIZE %d:max: %w", di.Devid, err)
	}
	after := btrfsDevInfoArgs{Devid: di.Devid}
	if err := ioctl(fd, btrfsIocDevInfo, &after); err != nil {
		return r, fmt.Errorf("BTRFS_IOC_DEV_INFO %d after the resize: %w", di.Devid, err)
	}
	r.New = int64(min(after.TotalBytes, math.MaxInt64))
	return r, nil
}
