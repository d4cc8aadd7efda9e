package resizefs

import (
	"strconv"
	"unsafe"

	"golang.org/x/sys/unix"
)

// The _IOC layout of include/uapi/asm-generic/ioctl.h: direction in bits
// 30-31, size in 16-29, type in 8-15, number in 0-7.
const (
	iocWrite = 1
	iocRead  = 2
)

func ioc(dir, typ, nr, size uintptr) uintptr { return dir<<30 | size<<16 | typ<<8 | nr }

// Ioctl numbers x/sys/unix does not have.
var (
	// EXT4_IOC_RESIZE_FS, fs/ext4/ext4.h: _IOW('f', 16, __u64), the new
	// block count.
	ext4IocResizeFS = ioc(iocWrite, 'f', 16, 8)

	// XFS_IOC_FSGEOMETRY, fs/xfs/libxfs/xfs_fs.h: _IOR('X', 126,
	// struct xfs_fsop_geom) (Linux 5.1); XFS_IOC_FSGEOMETRY_V1:
	// _IOR('X', 100, struct xfs_fsop_geom_v1), its first 112 bytes.
	xfsIocFSGeometry   = ioc(iocRead, 'X', 126, unsafe.Sizeof(xfsGeom{}))
	xfsIocFSGeometryV1 = ioc(iocRead, 'X', 100, xfsGeomV1Size)
	// XFS_IOC_FSGROWFSDATA, fs/xfs/libxfs/xfs_fs.h: _IOW('X', 110,
	// struct xfs_growfs_data).
	xfsIocFSGrowFSData = ioc(iocWrite, 'X', 110, unsafe.Sizeof(xfsGrowFSData{}))

	// BTRFS_IOC_RESIZE, BTRFS_IOC_DEV_INFO and BTRFS_IOC_FS_INFO,
	// include/uapi/linux/btrfs.h: _IOW(0x94, 3, struct
	// btrfs_ioctl_vol_args), _IOWR(0x94, 30, struct
	// btrfs_ioctl_dev_info_args), _IOR(0x94, 31, struct
	// btrfs_ioctl_fs_info_args).
	btrfsIocResize  = ioc(iocWrite, 0x94, 3, unsafe.Sizeof(btrfsVolArgs{}))
	btrfsIocDevInfo = ioc(iocWrite|iocRead, 0x94, 30, unsafe.Sizeof(btrfsDevInfoArgs{}))
	btrfsIocFSInfo  = ioc(iocRead, 0x94, 31, unsafe.Sizeof(btrfsFSInfoArgs{}))
)

// xfsGeom is struct xfs_fsop_geom, fs/xfs/libxfs/xfs_fs.h (version 5, 256
// bytes). The version 1 struct is its first xfsGeomV1Size bytes.
type xfsGeom struct {
	Blocksize, Rtextsize, Agblocks, Agcount, Logblocks, Sectsize, Inodesize, Imaxpct uint32
	Datablocks, Rtblocks, Rtextents, Logstart                                        uint64
	UUID                                                                             [16]byte
	Sunit, Swidth                                                                    uint32
	Version                                                                          int32
	Flags, Logsectsize, Rtsectsize, Dirblocksize, Logsunit, Sick, Checked            uint32
	Reserved                                                                         [17]uint64
}

// xfsGeomV1Size is sizeof(struct xfs_fsop_geom_v1): up to dirblocksize,
// padded to 8 bytes.
const xfsGeomV1Size = 112

// xfsGrowFSData is struct xfs_growfs_data, fs/xfs/libxfs/xfs_fs.h.
type xfsGrowFSData struct {
	Newblocks uint64 // new data subvolume size, in filesystem blocks
	Imaxpct   uint32 // new inode space percentage limit
	_         uint32
}

// btrfsVolArgs is struct btrfs_ioctl_vol_args, include/uapi/linux/btrfs.h.
type btrfsVolArgs struct {
	Fd   int64
	Name [4088]byte // BTRFS_PATH_NAME_MAX + 1
}

// btrfsFSInfoArgs is struct btrfs_ioctl_fs_info_args,
// include/uapi/linux/btrfs.h.
type btrfsFSInfoArgs struct {
	MaxID, NumDevices                    uint64
	Fsid                                 [16]byte
	Nodesize, Sectorsize, CloneAlignment uint32
	CsumType, CsumSize                   uint16
	Flags, Generation                    uint64
	MetadataUUID                         [16]byte
	_                                    [944]byte
}

// btrfsDevInfoArgs is struct btrfs_ioctl_dev_info_args,
// include/uapi/linux/btrfs.h.
type btrfsDevInfoArgs struct {
	Devid                 uint64
	UUID                  [16]byte
	BytesUsed, TotalBytes uint64
	Fsid                  [16]byte // Linux 6.3; zero before
	_                     [377]uint64
	Path                  [1024]byte // BTRFS_DEVICE_PATH_NAME_MAX
}

// ioctl runs ioctl req on fd with arg. A positive return (btrfs's own
// error codes) is an error too.
func ioctl[T any](fd int, req uintptr, arg *T) error {
	r, errno := sysIoctl(fd, req, unsafe.Pointer(arg))
	if errno != 0 {
		return errno
	}
	if r != 0 {
		return ioctlCode(r)
	}
	return nil
}

// sysIoctl is the ioctl system call; tests replace it to answer as an
// older kernel does (ENOTTY for a request it does not know).
var sysIoctl = func(fd int, req uintptr, arg unsafe.Pointer) (uintptr, unix.Errno) {
	r, _, errno := unix.Syscall(unix.SYS_IOCTL, uintptr(fd), req, uintptr(arg))
	return r, errno
}

// ioctlCode is a positive ioctl return value: btrfs's enum
// btrfs_err_code (include/uapi/linux/btrfs.h).
type ioctlCode uintptr

func (c ioctlCode) Error() string {
	return "ioctl returned error code " + strconv.FormatUint(uint64(c), 10) + " (btrfs_err_code)"
}
