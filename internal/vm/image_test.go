package vm

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

// imageTree writes a small root with what a builder must keep: an owner
// other than root, modes, a symlink and a security.selinux label.
func imageTree(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "tree")
	if err := WriteTree(dir, map[string]string{"etc/hostname": "image-template\n", "home/u/secret": "s\n"}); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		path string
		mode os.FileMode
	}{{"home/u", 0o700}, {"home/u/secret", 0o640}} {
		p := filepath.Join(dir, c.path)
		if err := os.Chown(p, 1234, 5678); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(p, c.mode); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink("../etc/hostname", filepath.Join(dir, "home/link")); err != nil {
		t.Fatal(err)
	}
	if err := unix.Lsetxattr(filepath.Join(dir, "etc/hostname"), "security.selinux", []byte("system_u:object_r:etc_t:s0\x00"), 0); err != nil {
		t.Fatalf("set a label in the tree: %v", err)
	}
	return dir
}

// TestPartitionedDisks builds each kind of disk the QEMU tests boot and
// reads back what they assert on: before any boot, a GPT disk's backup
// header is not at the disk's end (sgdisk -v complains: that is the
// point), the partition and the filesystem have the image's size, and the
// tree is there with its owners, modes, link and label. Then a GPT is
// fixed and the partition grown with sgdisk, as growpart would, to check
// the facts a test compares: GrowEnd, LastLBA, Verified, TableHash.
func TestPartitionedDisks(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root: loop mounts")
	}
	tree := imageTree(t)
	for _, c := range []struct {
		name           string
		table          Table
		fstype, subvol string
		partMB, diskMB int
	}{
		{"gpt-ext4", GPT, "ext4", "", 64, 256},
		{"gpt-xfs", GPT, "xfs", "", 320, 1024},
		{"gpt-btrfs", GPT, "btrfs", "", 128, 512},
		{"gpt-btrfs-subvol", GPT, "btrfs", "@root", 128, 512},
		{"mbr-ext4", MBR, "ext4", "", 64, 256},
	} {
		t.Run(c.name, func(t *testing.T) {
			img := filepath.Join(t.TempDir(), "disk.img")
			if err := PartitionedDisk(img, c.table, c.partMB, c.diskMB, c.fstype, "root", tree, c.subvol); err != nil {
				t.Fatal(err)
			}
			fi, err := os.Stat(img)
			if err != nil {
				t.Fatal(err)
			}
			if fi.Size() != int64(c.diskMB)<<20 {
				t.Errorf("disk is %d bytes, want %d", fi.Size(), int64(c.diskMB)<<20)
			}
			if used := fi.Sys().(*syscall.Stat_t).Blocks * 512; used >= fi.Size()/2 {
				t.Errorf("disk uses %d of %d bytes: not sparse", used, fi.Size())
			}
			if _, err := os.Stat(img + ".part"); err == nil {
				t.Errorf("the filesystem image was left behind")
			}

			f, err := Partition(img, c.table)
			if err != nil {
				t.Fatal(err)
			}
			if f.Start != PartStart/512 || f.Size != int64(c.partMB)<<11 || f.DiskSectors != int64(c.diskMB)<<11 {
				t.Errorf("partition %+v, want start %d, %d sectors on a disk of %d", f, PartStart/512, c.partMB<<11, c.diskMB<<11)
			}
			if f.End() >= f.GrowEnd() {
				t.Errorf("partition ends at %d, the disk's last usable sector is %d: nothing to grow", f.End(), f.GrowEnd())
			}
			switch c.table {
			case GPT:
				if f.Verified(GPT) || !strings.Contains(f.Verify, "secondary header") {
					t.Errorf("sgdisk -v of a GPT grown without moving its backup:\n%s", f.Verify)
				}
				if want := int64(c.partMB+2)<<11 - 34; f.LastLBA != want {
					t.Errorf("last usable LBA %d, want %d (the image's end)", f.LastLBA, want)
				}
			case MBR:
				if !f.Verified(MBR) {
					t.Errorf("sfdisk -V:\n%s", f.Verify)
				}
			}

			size, err := FSSize(img, c.table, c.fstype)
			if err != nil {
				t.Fatal(err)
			}
			if want := int64(c.partMB) << 20; size > want || size < want-4<<20 {
				t.Errorf("filesystem of %d bytes in a partition of %d", size, want)
			}

			err = MountPart(img, c.table, c.fstype, c.subvol, func(dir, dev string) error {
				if !strings.HasPrefix(dev, "/dev/loop") {
					t.Errorf("device %q", dev)
				}
				b, err := os.ReadFile(filepath.Join(dir, "home/link"))
				if err != nil || string(b) != "image-template\n" {
					t.Errorf("home/link: %q, %v", b, err)
				}
				for _, w := range []struct {
					path string
					mode os.FileMode
				}{{"home/u", os.ModeDir | 0o700}, {"home/u/secret", 0o640}} {
					fi, err := os.Lstat(filepath.Join(dir, w.path))
					if err != nil {
						t.Error(err)
						continue
					}
					st := fi.Sys().(*syscall.Stat_t)
					if fi.Mode() != w.mode || st.Uid != 1234 || st.Gid != 5678 {
						t.Errorf("%s: %v %d:%d, want %v 1234:5678", w.path, fi.Mode(), st.Uid, st.Gid, w.mode)
					}
				}
				l, err := SELinuxLabel(filepath.Join(dir, "etc/hostname"))
				if err != nil || l != "system_u:object_r:etc_t:s0" {
					t.Errorf("label %q, %v", l, err)
				}
				if _, err := SELinuxLabel(filepath.Join(dir, "home/u/secret")); err == nil {
					t.Errorf("a file without a label has one")
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			if s, err := ReadPartFile(img, c.table, c.fstype, c.subvol, "etc/hostname"); err != nil || s != "image-template\n" {
				t.Errorf("ReadPartFile: %q, %v", s, err)
			}
			if c.subvol != "" {
				// The top level has only the subvolume.
				if _, err := ReadPartFile(img, c.table, c.fstype, "", "etc/hostname"); err == nil {
					t.Errorf("the tree is at the top level too, not only in %s", c.subvol)
				}
			}

			h1, err := TableHash(img, c.table)
			if err != nil {
				t.Fatal(err)
			}
			if h2, _ := TableHash(img, c.table); h2 != h1 {
				t.Errorf("TableHash is not stable")
			}
			if c.table != GPT {
				return
			}
			// What growpart does: the backup GPT to the end, partition 1
			// to the last usable sector.
			if err := run("sgdisk", "-e", img); err != nil {
				t.Fatal(err)
			}
			if err := run("sgdisk", "-d", "1", "-n", "1:2048:0", "-c", "1:root", img); err != nil {
				t.Fatal(err)
			}
			g, err := Partition(img, GPT)
			if err != nil {
				t.Fatal(err)
			}
			if !g.Verified(GPT) || g.End() != g.GrowEnd() || g.LastLBA != g.GrowEnd() {
				t.Errorf("after growing: %+v, want the end and last LBA at %d, verified", g, g.GrowEnd())
			}
			if h3, _ := TableHash(img, GPT); h3 == h1 {
				t.Errorf("TableHash did not change with the table")
			}
		})
	}
}

// TestPartitionedDiskErrors checks the arguments are refused with the
// disk's name, before anything runs.
func TestPartitionedDiskErrors(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		name                   string
		table                  Table
		partMB, diskMB         int
		fstype, subvol, reason string
	}{
		{"small", GPT, 64, 65, "ext4", "", "cannot hold"},
		{"subvol-ext4", GPT, 64, 128, "ext4", "@", "needs btrfs"},
		{"fstype", GPT, 64, 128, "zfs", "", `"zfs"`},
		{"table", "sun", 64, 128, "ext4", "", `"sun"`},
		{"xfs-small", GPT, 64, 128, "xfs", "", "at least 300"},
	} {
		t.Run(c.name, func(t *testing.T) {
			img := filepath.Join(dir, c.name+".img")
			err := PartitionedDisk(img, c.table, c.partMB, c.diskMB, c.fstype, "root", dir, c.subvol)
			if err == nil || !strings.Contains(err.Error(), c.reason) || !strings.Contains(err.Error(), img) {
				t.Errorf("err = %v, want one naming %s and saying %s", err, img, c.reason)
			}
		})
	}
}

// TestUserNetdevRestricted: a user-network NIC is always restrict=on, its
// forwards bound to 127.0.0.1; a forward to another address leaves the
// card without a backend.
func TestUserNetdevRestricted(t *testing.T) {
	c := Config{Kernel: "k", Initrd: "i", NICs: []NIC{
		{MAC: "52:54:00:00:00:01", Netdev: "user", HostFwd: []string{"tcp:127.0.0.1:2222-:22"}},
		{MAC: "52:54:00:00:00:02", Netdev: "user", HostFwd: []string{"tcp:0.0.0.0:2223-:22"}},
	}}
	args := strings.Join(c.Args(), " ")
	if !strings.Contains(args, "-netdev user,id=n0,restrict=on,hostfwd=tcp:127.0.0.1:2222-:22 ") {
		t.Errorf("args: %s", args)
	}
	if strings.Contains(args, "id=n1") || strings.Contains(args, "0.0.0.0") || strings.Count(args, "-netdev") != 1 {
		t.Errorf("a forward on another address got a backend: %s", args)
	}
	if strings.Count(args, "user,") != strings.Count(args, "restrict=on") {
		t.Errorf("a user network without restrict=on: %s", args)
	}
}
