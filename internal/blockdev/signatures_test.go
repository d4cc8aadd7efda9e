package blockdev

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// blkidAmbivalent reports whether `blkid -p` refuses file for carrying
// more than one filesystem (its exit status 8).
func blkidAmbivalent(t testing.TB, file string) bool {
	t.Helper()
	need(t, "blkid")
	path, err := exec.LookPath("blkid")
	if err != nil {
		path = "/usr/sbin/blkid"
	}
	out, err := exec.Command(path, "-p", "-o", "export", file).CombinedOutput()
	var ee *exec.ExitError
	if errors.As(err, &ee) && ee.ExitCode() == 8 {
		if !strings.Contains(string(out), "ambivalent") {
			t.Fatalf("blkid -p %s: exit 8 but %s", file, out)
		}
		return true
	}
	return false
}

// plant copies n bytes at off of the file from into the file to.
func plant(t testing.TB, to, from string, off int64, n int) {
	t.Helper()
	src := readHead(t, from, int(off)+n)
	f, err := os.OpenFile(to, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteAt(src[off:off+int64(n)], off); err != nil {
		t.Fatal(err)
	}
}

// An image with two signatures is decided as blkid decides. A mkfs over
// another filesystem wipes the old signature, so only the new one is
// seen. A signature planted beside another (as an old mkfs or dd leaves
// them) makes blkid report nothing ("ambivalent result") on a device over
// 1440 KiB, and Probe an error wrapping ErrAmbivalent; on a smaller
// device the first in libblkid's order wins. A signature that fails its
// checks does not count.
func TestProbeTwoSignatures(t *testing.T) {
	need(t, "mkfs.xfs", "mkfs.btrfs", "mkfs.ext4", "mkfs.vfat")
	dir := t.TempDir()
	// Donors of superblocks: xfs (sector 0), btrfs (64 KiB), ext (1 KiB).
	xfs := mkxfs(t, dir, "donor.xfs", "-L", "donor")
	btrfs := mkbtrfs(t, dir, "donor.btrfs", "-L", "donor")
	badXFS := filepath.Join(dir, "bad.xfs")
	b := readHead(t, xfs, 4096)
	b[88+3] = 0 // agcount 0 (the mkfs default of 4 is in the low byte)
	if err := os.WriteFile(badXFS, b, 0o644); err != nil {
		t.Fatal(err)
	}
	ext := func(name string, size int64, mkfs string) string {
		img := sparse(t, dir, name, size)
		run(t, mkfs, "-q", "-F", "-L", "new", img)
		return img
	}
	over := func(name, first string, firstArgs []string, then string, thenArgs ...string) string {
		img := sparse(t, dir, name, xfsSize)
		run(t, first, append(firstArgs, img)...)
		run(t, then, append(thenArgs, img)...)
		return img
	}
	for _, tc := range []struct {
		name string
		img  func() string
		want string // the type found, or "ambivalent"
	}{
		{"ext4 over xfs", func() string {
			return over("a", "mkfs.xfs", []string{"-q", "-L", "old"}, "mkfs.ext4", "-q", "-F", "-L", "new")
		}, "ext4"},
		{"xfs over ext4", func() string {
			return over("b", "mkfs.ext4", []string{"-q", "-L", "old"}, "mkfs.xfs", "-q", "-f", "-L", "new")
		}, "xfs"},
		{"ext4 over btrfs", func() string {
			return over("c", "mkfs.btrfs", []string{"-q", "-L", "old"}, "mkfs.ext4", "-q", "-F", "-L", "new")
		}, "ext4"},
		{"btrfs over ext4", func() string {
			return over("d", "mkfs.ext4", []string{"-q", "-L", "old"}, "mkfs.btrfs", "-q", "-f", "-L", "new")
		}, "btrfs"},
		{"btrfs over xfs", func() string {
			return over("e", "mkfs.xfs", []string{"-q", "-L", "old"}, "mkfs.btrfs", "-q", "-f", "-L", "new")
		}, "btrfs"},
		{"xfs over btrfs", func() string {
			return over("f", "mkfs.btrfs", []string{"-q", "-L", "old"}, "mkfs.xfs", "-q", "-f", "-L", "new")
		}, "xfs"},
		{"vfat over xfs", func() string {
			return over("g", "mkfs.xfs", []string{"-q", "-L", "old"}, "mkfs.vfat", "-n", "NEW")
		}, "vfat"},
		{"vfat over btrfs", func() string {
			return over("h", "mkfs.btrfs", []string{"-q", "-L", "old"}, "mkfs.vfat", "-n", "NEW")
		}, "vfat"},
		{"xfs sector in ext4", func() string {
			img := ext("i", 64<<20, "mkfs.ext4")
			plant(t, img, xfs, 0, 512)
			return img
		}, "ambivalent"},
		{"ext4 superblock in btrfs", func() string {
			img := mkbtrfs(t, dir, "j", "-L", "new")
			plant(t, img, ext("j.ext4", 8<<20, "mkfs.ext4"), 1024, 1024)
			return img
		}, "ambivalent"},
		{"btrfs superblock in xfs", func() string {
			img := mkxfs(t, dir, "k", "-L", "new")
			plant(t, img, btrfs, btrfsSuperOff, btrfsSuperSize)
			return img
		}, "ambivalent"},
		{"btrfs superblock in vfat", func() string {
			img := sparse(t, dir, "l", 32<<20)
			run(t, "mkfs.vfat", "-F", "16", "-n", "NEW", img)
			plant(t, img, btrfs, btrfsSuperOff, btrfsSuperSize)
			return img
		}, "ambivalent"},
		{"xfs sector in a padded iso9660", func() string {
			img := mkiso(t, filepath.Join(dir, "m.iso"), "-V", "new")
			if err := os.Truncate(img, 2<<20); err != nil {
				t.Fatal(err)
			}
			plant(t, img, xfs, 0, 512)
			return img
		}, "ambivalent"},
		{"tiny: xfs sector in iso9660", func() string {
			img := mkiso(t, filepath.Join(dir, "n.iso"), "-V", "new")
			plant(t, img, xfs, 0, 512)
			return img
		}, "xfs"},
		{"tiny: xfs sector in ext2", func() string {
			img := ext("o", 1400<<10, "mkfs.ext2")
			plant(t, img, xfs, 0, 512)
			return img
		}, "xfs"},
		{"tiny: btrfs superblock in ext2", func() string {
			img := ext("p", 1400<<10, "mkfs.ext2")
			plant(t, img, btrfs, btrfsSuperOff, btrfsSuperSize)
			return img
		}, "ext2"},
		{"damaged xfs sector in ext4", func() string {
			img := ext("q", 64<<20, "mkfs.ext4")
			plant(t, img, badXFS, 0, 512)
			return img
		}, "ext4"},
	} {
		t.Run(strings.ReplaceAll(tc.name, " ", "-"), func(t *testing.T) {
			img := tc.img()
			got, err := probeFile(t, img)
			if blkidAmbivalent(t, img) {
				if tc.want != "ambivalent" {
					t.Fatalf("blkid says ambivalent, the test wants %s", tc.want)
				}
				if !errors.Is(err, ErrAmbivalent) || got != (FS{}) {
					t.Errorf("got %+v, %v; want ErrAmbivalent as blkid", got, err)
				}
				return
			}
			want := checkBlkid(t, img)
			if want.Type != tc.want {
				t.Errorf("blkid and Probe say %s, the test wants %s", want.Type, tc.want)
			}
		})
	}
}
