package resizefs

import (
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unsafe"
)

// TestIoctlNumbers: the numbers as the kernel headers give them (gcc on
// linux/btrfs.h; xfs_fs.h's by hand).
func TestIoctlNumbers(t *testing.T) {
	for _, tt := range []struct {
		name      string
		got, want uintptr
	}{
		{"EXT4_IOC_RESIZE_FS", ext4IocResizeFS, 0x40086610},
		{"XFS_IOC_FSGEOMETRY", xfsIocFSGeometry, 0x8100587e},
		{"XFS_IOC_FSGEOMETRY_V1", xfsIocFSGeometryV1, 0x80705864},
		{"XFS_IOC_FSGROWFSDATA", xfsIocFSGrowFSData, 0x4010586e},
		{"BTRFS_IOC_RESIZE", btrfsIocResize, 0x50009403},
		{"BTRFS_IOC_DEV_INFO", btrfsIocDevInfo, 0xd000941e},
		{"BTRFS_IOC_FS_INFO", btrfsIocFSInfo, 0x8400941f},
	} {
		if tt.got != tt.want {
			t.Errorf("%s = %#x, want %#x", tt.name, tt.got, tt.want)
		}
	}
	for _, tt := range []struct {
		name      string
		got, want uintptr
	}{
		{"xfs_fsop_geom", unsafe.Sizeof(xfsGeom{}), 256},
		{"xfs_fsop_geom.datablocks", unsafe.Offsetof(xfsGeom{}.Datablocks), 32},
		{"xfs_fsop_geom.dirblocksize", unsafe.Offsetof(xfsGeom{}.Dirblocksize), 104},
		{"xfs_growfs_data", unsafe.Sizeof(xfsGrowFSData{}), 16},
		{"btrfs_ioctl_vol_args", unsafe.Sizeof(btrfsVolArgs{}), 4096},
		{"btrfs_ioctl_fs_info_args", unsafe.Sizeof(btrfsFSInfoArgs{}), 1024},
		{"btrfs_ioctl_fs_info_args.sectorsize", unsafe.Offsetof(btrfsFSInfoArgs{}.Sectorsize), 36},
		{"btrfs_ioctl_dev_info_args", unsafe.Sizeof(btrfsDevInfoArgs{}), 4096},
		{"btrfs_ioctl_dev_info_args.total_bytes", unsafe.Offsetof(btrfsDevInfoArgs{}.TotalBytes), 32},
		{"btrfs_ioctl_dev_info_args.path", unsafe.Offsetof(btrfsDevInfoArgs{}.Path), 3072},
	} {
		if tt.got != tt.want {
			t.Errorf("%s: %d, want %d", tt.name, tt.got, tt.want)
		}
	}
}

func TestReadExtSuper(t *testing.T) {
	le := binary.LittleEndian
	sb := func(f func(b []byte)) *os.File {
		b := make([]byte, 2048)
		le.PutUint16(b[1024+0x38:], 0xEF53)
		le.PutUint32(b[1024+0x18:], 2) // 4096-byte blocks
		le.PutUint32(b[1024+0x04:], 1000)
		copy(b[1024+0x68:], "0123456789abcdef")
		f(b[1024:])
		p := filepath.Join(t.TempDir(), "sb")
		if err := os.WriteFile(p, b, 0o600); err != nil {
			t.Fatal(err)
		}
		fd, err := os.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { fd.Close() })
		return fd
	}
	fsid := le.Uint64([]byte("01234567")) ^ le.Uint64([]byte("89abcdef"))
	wantFsid := [2]int32{int32(uint32(fsid)), int32(uint32(fsid >> 32))}
	for _, tt := range []struct {
		name    string
		f       func(b []byte)
		want    extSuper
		wantErr string
	}{
		{"ext2", func(b []byte) {}, extSuper{fstype: "ext2", blockSize: 4096, blocks: 1000, fsid: wantFsid}, ""},
		{"ext3", func(b []byte) { b[0x5c] = 0x4 }, extSuper{fstype: "ext3", blockSize: 4096, blocks: 1000, fsid: wantFsid}, ""},
		{"ext4 64bit", func(b []byte) { b[0x60] = 0xc0; le.PutUint32(b[0x150:], 2) },
			extSuper{fstype: "ext4", blockSize: 4096, blocks: 2<<32 | 1000, is64: true, fsid: wantFsid}, ""},
		{"ext4 32bit ignores blocks_count_hi", func(b []byte) { b[0x60] = 0x40; le.PutUint32(b[0x150:], 2) },
			extSuper{fstype: "ext4", blockSize: 4096, blocks: 1000, fsid: wantFsid}, ""},
		{"no magic", func(b []byte) { b[0x38] = 0 }, extSuper{}, "no ext2/3/4 superblock"},
		{"huge blocks", func(b []byte) { b[0x18] = 30 }, extSuper{}, "block size 1024<<30"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, err := readExtSuper(sb(tt.f))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("readExtSuper = %+v, %v; want error %q", got, err, tt.wantErr)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("readExtSuper = %+v, %v; want %+v", got, err, tt.want)
			}
		})
	}
}

func TestHugeEncodeDev(t *testing.T) {
	for _, tt := range []struct {
		maj, min uint32
		want     uint64
	}{
		{7, 0, 0x700},
		{259, 1, 0x10301},
		{8, 0x1234, 0x120_0834},
	} {
		if got := hugeEncodeDev(tt.maj, tt.min); got != tt.want {
			t.Errorf("hugeEncodeDev(%d, %#x) = %#x, want %#x", tt.maj, tt.min, got, tt.want)
		}
	}
}

func TestGrowUnsupported(t *testing.T) {
	_, err := Grow("/proc", "/dev/null")
	if !errors.Is(err, ErrUnsupported) || !strings.Contains(err.Error(), "/proc: filesystem magic 0x9fa0") {
		t.Fatalf("Grow(/proc) = %v, want ErrUnsupported naming the mount and magic", err)
	}
	if _, err := Grow("/nonexistent", ""); err == nil || !strings.Contains(err.Error(), "open /nonexistent") {
		t.Fatalf("Grow(/nonexistent) = %v", err)
	}
}
