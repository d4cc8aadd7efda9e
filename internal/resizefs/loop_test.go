package resizefs

import (
	"errors"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/earlyinit/earlyinit/internal/looptest"
)

const mib = int64(1) << 20

// TestGrowLoop grows ext4, XFS and btrfs, each mounted from a loop device
// whose file grew after mkfs, to the device's size; a second Grow changes
// nothing.
func TestGrowLoop(t *testing.T) {
	looptest.Require(t)
	for _, tt := range []struct {
		fstype     string
		size, grow int64
	}{
		{"ext4", 64 * mib, 160 * mib},
		{"ext3", 64 * mib, 96 * mib},
		{"xfs", 320 * mib, 700 * mib}, // mkfs.xfs wants 300 MiB
		{"btrfs", 128 * mib, 300 * mib},
	} {
		t.Run(tt.fstype, func(t *testing.T) {
			file := looptest.Image(t, tt.size)
			loop := looptest.Attach(t, file, 512)
			looptest.Mkfs(t, tt.fstype, loop)
			dir := looptest.Mount(t, loop, tt.fstype)
			before := looptest.Statfs(t, dir)

			r, err := Grow(dir, loop)
			if err != nil || r.Grown() || r.FSType != tt.fstype || r.Old == 0 || r.Old > tt.size {
				t.Fatalf("Grow before the device grew = %+v, %v; want no change", r, err)
			}

			looptest.Resize(t, file, tt.grow)
			looptest.Run(t, "losetup", "--set-capacity", loop)
			r, err = Grow(dir, loop)
			if strings.HasPrefix(tt.fstype, "ext") && !looptest.HasCap(t, unix.CAP_SYS_RESOURCE) {
				// The refusal, then: clear, and nothing changed.
				if !errors.Is(err, unix.EPERM) || !strings.Contains(err.Error(), "EXT4_IOC_RESIZE_FS") || r.Grown() || looptest.Statfs(t, dir) != before {
					t.Fatalf("Grow without CAP_SYS_RESOURCE = %+v, %v; want EPERM and no change", r, err)
				}
				t.Logf("no CAP_SYS_RESOURCE: the kernel refuses ext4 online resize (%v); growth not checked", err)
				return
			}
			if err != nil {
				t.Fatalf("Grow: %v", err)
			}
			if !r.Grown() || r.FSType != tt.fstype || r.New > tt.grow || r.New < tt.grow-16*mib {
				t.Fatalf("Grow = %+v, want about %d bytes", r, tt.grow)
			}
			after := looptest.Statfs(t, dir)
			if after-before < (tt.grow-tt.size)*3/4 {
				t.Fatalf("statfs: %d bytes before, %d after; want about %d more", before, after, tt.grow-tt.size)
			}

			if tt.fstype == "xfs" {
				checkImaxpct(t, dir)
			}
			r2, err := Grow(dir, loop)
			if err != nil || r2.Grown() || r2.Old != r.New {
				t.Fatalf("second Grow = %+v, %v; want nothing to do at %d bytes", r2, err, r.New)
			}
			if got := looptest.Statfs(t, dir); got != after {
				t.Fatalf("second Grow changed statfs from %d to %d bytes", after, got)
			}
		})
	}
}

// TestGrowOtherDevice: a device that does not hold the mounted filesystem
// is refused before any resize.
func TestGrowOtherDevice(t *testing.T) {
	looptest.Require(t)
	for _, fstype := range []string{"ext4", "xfs", "btrfs"} {
		t.Run(fstype, func(t *testing.T) {
			size := 128 * mib
			if fstype == "xfs" {
				size = 320 * mib
			}
			a := looptest.Attach(t, looptest.Image(t, size), 512)
			b := looptest.Attach(t, looptest.Image(t, 2*size), 512)
			looptest.Mkfs(t, fstype, a)
			looptest.Mkfs(t, fstype, b)
			dir := looptest.Mount(t, a, fstype)
			r, err := Grow(dir, b)
			if err == nil || !strings.Contains(err.Error(), b) || r.Grown() {
				t.Fatalf("Grow with another device = %+v, %v; want an error naming %s", r, err, b)
			}
		})
	}
}

// checkImaxpct: the grown XFS kept mkfs.xfs's imaxpct (25 below 1 TiB).
func checkImaxpct(t *testing.T, dir string) {
	t.Helper()
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(fd)
	g, err := xfsGeometry(fd)
	if err != nil || g.Imaxpct != 25 {
		t.Fatalf("XFS geometry after the grow: imaxpct %d, %v; want 25", g.Imaxpct, err)
	}
}
