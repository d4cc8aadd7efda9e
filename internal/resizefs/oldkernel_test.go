package resizefs

import (
	"errors"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/earlyinit/earlyinit/internal/looptest"
	"github.com/earlyinit/earlyinit/internal/oldkernel"
)

// TestXFSGeometryV1: a kernel before 5.1 does not know XFS_IOC_FSGEOMETRY
// (version 5) and answers ENOTTY; the geometry is read with
// XFS_IOC_FSGEOMETRY_V1, which it has. Version 5 is asked first.
func TestXFSGeometryV1(t *testing.T) {
	defer func(f func(int, uintptr, unsafe.Pointer) (uintptr, unix.Errno)) { sysIoctl = f }(sysIoctl)
	for _, tt := range []struct {
		name  string
		v5Err unix.Errno // 0: version 5 answers
		want  []uintptr
	}{
		{"Linux 5.1 and later", 0, []uintptr{xfsIocFSGeometry}},
		{"before 5.1: ENOTTY", unix.ENOTTY, []uintptr{xfsIocFSGeometry, xfsIocFSGeometryV1}},
		{"EINVAL", unix.EINVAL, []uintptr{xfsIocFSGeometry, xfsIocFSGeometryV1}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var asked []uintptr
			sysIoctl = func(fd int, req uintptr, arg unsafe.Pointer) (uintptr, unix.Errno) {
				asked = append(asked, req)
				switch {
				case req == xfsIocFSGeometry && tt.v5Err != 0:
					return 0, tt.v5Err
				case req == xfsIocFSGeometry, req == xfsIocFSGeometryV1:
					g := (*xfsGeom)(arg)
					if req == xfsIocFSGeometryV1 && *g != (xfsGeom{}) {
						t.Error("version 1 asked with version 5's answer left in the struct")
					}
					g.Blocksize, g.Agblocks, g.Agcount, g.Datablocks, g.Imaxpct = 4096, 16384, 4, 65536, 25
					return 0, 0
				}
				return 0, unix.ENOTTY
			}
			g, err := xfsGeometry(3)
			if err != nil {
				t.Fatalf("xfsGeometry: %v", err)
			}
			if g.Blocksize != 4096 || g.Datablocks != 65536 || g.Imaxpct != 25 {
				t.Errorf("geometry %+v", g)
			}
			if len(asked) != len(tt.want) || asked[0] != tt.want[0] || asked[len(asked)-1] != tt.want[len(tt.want)-1] {
				t.Errorf("requests %#x, want %#x", asked, tt.want)
			}
		})
	}
	// Another error is not a kernel that lacks the request.
	sysIoctl = func(int, uintptr, unsafe.Pointer) (uintptr, unix.Errno) { return 0, unix.EIO }
	if _, err := xfsGeometry(3); !errors.Is(err, unix.EIO) {
		t.Errorf("xfsGeometry with EIO: %v", err)
	}
}

// TestGrowOnLinux310 grows ext4, XFS and btrfs on loop devices (the
// tests TestGrowLoop and TestGrowOtherDevice) with Linux 3.10's system
// calls and XFS_IOC_FSGEOMETRY answered as before 5.1 (ENOTTY): the grows
// read XFS's version 1 geometry; EXT4_IOC_RESIZE_FS (3.3) and the btrfs
// ioctls (3.3) are 3.10's own.
func TestGrowOnLinux310(t *testing.T) {
	looptest.Require(t)
	k := oldkernel.Linux310().With(
		oldkernel.CallArg("ioctl XFS_IOC_FSGEOMETRY", unix.SYS_IOCTL, 1, uint32(xfsIocFSGeometry), unix.ENOTTY))
	if !oldkernel.Run(t, k) {
		return
	}
	// The filter answers for version 5 on a real XFS.
	loop := looptest.Attach(t, looptest.Image(t, 320*mib), 512)
	looptest.Mkfs(t, "xfs", loop)
	dir := looptest.Mount(t, loop, "xfs")
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY, 0)
	if err != nil {
		t.Fatal(err)
	}
	var g xfsGeom
	err = ioctl(fd, xfsIocFSGeometry, &g)
	unix.Close(fd)
	if !errors.Is(err, unix.ENOTTY) {
		t.Fatalf("XFS_IOC_FSGEOMETRY under the filter: %v, want ENOTTY", err)
	}
	t.Run("GrowLoop", TestGrowLoop)
	t.Run("GrowOtherDevice", TestGrowOtherDevice)
}
