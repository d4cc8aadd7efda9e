package vm

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestLVMDisk makes a small LVM disk and reads it back with lvm2 and
// blkid: the group holds the one linear volume of the asked size, and the
// filesystem Extract gives is the tree's, labelled.
func TestLVMDisk(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root (losetup)")
	}
	for _, tool := range []string{"pvcreate", "sgdisk", "mkfs.ext4", "debugfs"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("%s missing: make deps installs it", tool)
		}
	}
	dir := t.TempDir()
	tree := filepath.Join(dir, "tree")
	if err := WriteTree(tree, map[string]string{"etc/hostname": "lvm\n"}); err != nil {
		t.Fatal(err)
	}
	disk := filepath.Join(dir, "disk.img")
	lv, err := LVMDisk(disk, 64, 100, 32, "vgunit", "unitroot", tree)
	if err != nil {
		t.Fatal(err)
	}
	if lv.Size != 32<<20 || lv.Offset <= PartStart {
		t.Errorf("volume at %d, %d bytes; want 32 MiB after the partition start", lv.Offset, lv.Size)
	}
	// lvm2 sees the group and the volume on the partition.
	out, err := exec.Command("losetup", "--find", "--show", "--offset", "1048576", "--sizelimit", "67108864", disk).Output()
	if err != nil {
		t.Fatal(err)
	}
	loop := strings.TrimSpace(string(out))
	defer exec.Command("losetup", "-d", loop).Run()
	filter := "--config=devices { filter=[\"a|^" + loop + "$|\", \"r|.*|\"] }"
	lvs, _ := exec.Command("lvs", filter, "--noheadings", "--units", "m", "-o", "vg_name,lv_name,lv_size,seg_pe_ranges").CombinedOutput()
	if !regexp.MustCompile(`vgunit\s+root\s+32\.00m\s+` + regexp.QuoteMeta(loop) + `:0-7`).Match(lvs) {
		t.Errorf("lvs:\n%s", lvs)
	}
	fs := filepath.Join(dir, "lv.img")
	if err := lv.Extract(disk, fs); err != nil {
		t.Fatal(err)
	}
	if s, err := Cat(fs, "/etc/hostname"); err != nil || s != "lvm\n" {
		t.Errorf("hostname in the volume = %q, %v", s, err)
	}
	if l, _ := exec.Command("blkid", "-o", "value", "-s", "LABEL", fs).Output(); strings.TrimSpace(string(l)) != "unitroot" {
		t.Errorf("label = %q", l)
	}
}

func TestLVMID(t *testing.T) {
	id := lvmID("root")
	if !regexp.MustCompile(`^[0-9a-zA-Z]{6}(-[0-9a-zA-Z]{4}){5}-[0-9a-zA-Z]{6}$`).MatchString(id) || id != lvmID("root") || id == lvmID("other") {
		t.Errorf("lvmID = %q", id)
	}
}

// TestSMBIOSArgs: each SMBIOS table becomes one -smbios argument, as
// given.
func TestSMBIOSArgs(t *testing.T) {
	c := Config{Kernel: "k", Initrd: "i", SMBIOS: []string{"type=1,manufacturer=OpenStack Foundation,product=OpenStack Nova", "type=3,asset=OpenTelekomCloud"}}
	args := strings.Join(c.Args(), "\x00")
	for _, want := range []string{"-smbios\x00type=1,manufacturer=OpenStack Foundation,product=OpenStack Nova\x00", "-smbios\x00type=3,asset=OpenTelekomCloud"} {
		if !strings.Contains(args, want) {
			t.Errorf("args lack %q: %q", want, c.Args())
		}
	}
}
