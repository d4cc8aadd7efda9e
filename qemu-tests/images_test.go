//go:build qemu

package qemutests

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/earlyinit/earlyinit/internal/vm"
)

// growCase is a cloud image whose volume is bigger than the image: one
// partition of partMB on a disk of diskMB (a GPT's backup header left
// where the image ended).
type growCase struct {
	name          string
	table         vm.Table
	fstype        string
	subvol        string
	partMB        int
	append        string
	userData      string // with it, a NoCloud seed is attached
	wantNoGrowth  bool
	wantConsoleRe string
}

// TestGrowRoot boots busybox roots on grown volumes: XFS and btrfs (in a
// subvolume, rootflags=subvol=) on GPT, ext4 on MBR; the partition and
// the filesystem must fill the disk, the GPT verify, and a second boot
// change nothing. growpart: {mode: off} with resize_rootfs: false leaves
// everything as built.
func TestGrowRoot(t *testing.T) {
	// Its boots are its subtests': it gives its slot to the first.
	parallel(t)
	const diskMB = 2048
	for _, c := range []growCase{
		{name: "xfs-gpt", table: vm.GPT, fstype: "xfs", partMB: 512, append: "root=PARTLABEL=root"},
		{name: "btrfs-gpt-subvol", table: vm.GPT, fstype: "btrfs", subvol: "@root", partMB: 512, append: "root=PARTLABEL=root rootflags=subvol=@root"},
		{name: "ext4-mbr", table: vm.MBR, fstype: "ext4", partMB: 512, append: "root=LABEL=eiroot"},
		{name: "ext4-gpt-off", table: vm.GPT, fstype: "ext4", partMB: 512, append: "root=PARTLABEL=root",
			userData: "#cloud-config\ngrowpart: {mode: 'off'}\nresize_rootfs: false\n", wantNoGrowth: true},
	} {
		t.Run(c.name, func(t *testing.T) {
			parallel(t)
			testGrow(t, c, diskMB)
		})
	}
}

func testGrow(t *testing.T, c growCase, diskMB int) {
	dir := filepath.Join(t.TempDir(), "root")
	if err := vm.BusyboxRoot(dir); err != nil {
		t.Fatal(err)
	}
	img := filepath.Join(t.TempDir(), "disk.img")
	if err := vm.PartitionedDisk(img, c.table, c.partMB, diskMB, c.fstype, "eiroot", dir, c.subvol); err != nil {
		t.Fatal(err)
	}
	before, err := vm.Partition(img, c.table)
	if err != nil {
		t.Fatal(err)
	}
	if c.table == vm.GPT && strings.Contains(before.Verify, "No problems found") {
		t.Fatalf("the test disk's GPT verifies before any boot: its backup header should be mid-disk:\n%s", before.Verify)
	}
	fsBefore, err := vm.FSSize(img, c.table, c.fstype)
	if err != nil {
		t.Fatal(err)
	}
	cfg := vm.Config{Append: c.append + " rw earlyinit.timeout=20", Disks: []vm.Disk{{Path: img}}, RNG: true, MemoryMB: 768}
	if c.userData != "" {
		cfg.Disks = append(cfg.Disks, vm.Disk{Path: seedISO(t, "cidata", map[string]string{
			"meta-data": "instance-id: iid-grow\n", "user-data": c.userData}), If: "ide-cd"})
	}
	res := boot(t, cfg)
	mustContain(t, "console", res.Console, "step grow done", "TESTINIT: /sbin/init pid=1")
	after, err := vm.Partition(img, c.table)
	if err != nil {
		t.Fatal(err)
	}
	fsAfter, err := vm.FSSize(img, c.table, c.fstype)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("partition %d -> %d sectors (disk %d), %s %d -> %d bytes", before.Size, after.Size, after.DiskSectors, c.fstype, fsBefore, fsAfter)
	if c.wantNoGrowth {
		if after != before || fsAfter != fsBefore {
			t.Errorf("growpart off: partition %+v -> %+v, filesystem %d -> %d", before, after, fsBefore, fsAfter)
		}
		mustContain(t, "console", res.Console, "growpart: disabled", "resizefs: disabled")
		return
	}
	// The partition ends within the table's reserve of the disk's end
	// (GPT: 33 sectors of backup; growpart leaves MBR 33 too).
	end := after.Start + after.Size
	if gap := after.DiskSectors - end; gap < 33 || gap > 34 {
		t.Errorf("partition ends %d sectors before the disk's end, want 33-34", gap)
	}
	if c.table == vm.GPT && !strings.Contains(after.Verify, "No problems found") {
		t.Errorf("sgdisk -v after the grow:\n%s", after.Verify)
	}
	if c.table == vm.MBR && !strings.Contains(after.Verify, "No errors detected") {
		t.Errorf("sfdisk -V after the grow:\n%s", after.Verify)
	}
	// The filesystem fills the partition (XFS and btrfs round to their
	// allocation units: allow 1%).
	if part := after.Size * 512; fsAfter > part || fsAfter < part*99/100 {
		t.Errorf("%s is %d bytes on a partition of %d", c.fstype, fsAfter, part)
	}
	mustContain(t, "console", res.Console, "growpart: /dev/", fmt.Sprintf("resizefs: / (%s) grown from", c.fstype))

	// A second boot: nothing to grow, nothing written.
	hash, err := vm.TableHash(img, c.table)
	if err != nil {
		t.Fatal(err)
	}
	res = boot(t, cfg)
	mustContain(t, "second boot's console", res.Console, "nothing to grow", "TESTINIT: /sbin/init pid=1")
	if strings.Contains(res.Console, "grown from") {
		t.Errorf("the second boot grew something again")
	}
	again, err := vm.TableHash(img, c.table)
	if err != nil {
		t.Fatal(err)
	}
	fsAgain, _ := vm.FSSize(img, c.table, c.fstype)
	if again != hash || fsAgain != fsAfter {
		t.Errorf("the second boot changed the disk: table hash %s -> %s, filesystem %d -> %d", hash, again, fsAfter, fsAgain)
	}
}

// testPolicy is a small SELinux policy's file_contexts: types a real
// policy gives these paths.
const testPolicy = `/.*			system_u:object_r:default_t:s0
/etc(/.*)?		system_u:object_r:etc_t:s0
/etc/hostname	--	system_u:object_r:hostname_etc_t:s0
/etc/hosts	--	system_u:object_r:net_conf_t:s0
/etc/systemd/network(/.*)?	system_u:object_r:net_conf_t:s0
/var/lib/cloud(/.*)?	system_u:object_r:cloud_var_lib_t:s0
/var/lib/earlyinit(/.*)?	system_u:object_r:cloud_var_lib_t:s0
/var/lib/earlyinit/instance	-l	system_u:object_r:cloud_link_t:s0
`

// TestSELinuxLabels boots a root whose /etc/selinux/config says enforcing:
// what earlyinit writes from the initramfs carries the labels of the
// root's file_contexts (the kernel need not enforce: labels are xattrs).
func TestSELinuxLabels(t *testing.T) {
	parallel(t)
	dir := filepath.Join(t.TempDir(), "root")
	if err := vm.BusyboxRoot(dir); err != nil {
		t.Fatal(err)
	}
	if err := vm.WriteTree(dir, map[string]string{
		"etc/selinux/config":                              "SELINUX=enforcing\nSELINUXTYPE=eitest\n",
		"etc/selinux/eitest/contexts/files/file_contexts": testPolicy,
	}); err != nil {
		t.Fatal(err)
	}
	img := filepath.Join(t.TempDir(), "disk.img")
	if err := vm.PartitionedDisk(img, vm.GPT, 64, 66, "ext4", "eiroot", dir, ""); err != nil {
		t.Fatal(err)
	}
	seed := seedISO(t, "cidata", map[string]string{
		"meta-data":      "instance-id: iid-selinux\nlocal-hostname: labelled\n",
		"network-config": "version: 2\nethernets:\n  eth0:\n    match: {macaddress: '52:54:00:12:34:61'}\n    addresses: [192.0.2.61/24]\n",
	})
	res := boot(t, vm.Config{Append: "root=PARTLABEL=root rw earlyinit.renderer=networkd earlyinit.timeout=20",
		Disks: []vm.Disk{{Path: img}, {Path: seed, If: "ide-cd"}}, NICs: []vm.NIC{{MAC: "52:54:00:12:34:61"}}, RNG: true})
	mustContain(t, "console", res.Console, "selinux: labels from policy eitest", "TESTINIT: /sbin/init pid=1")
	err := vm.MountPart(img, vm.GPT, "ext4", "", func(root, _ string) error {
		label := func(p string) string {
			l, err := vm.SELinuxLabel(filepath.Join(root, p))
			if err != nil {
				return "(" + err.Error() + ")"
			}
			return l
		}
		nets, _ := filepath.Glob(filepath.Join(root, "etc/systemd/network/*.network"))
		if len(nets) == 0 {
			t.Errorf("no .network file written")
		}
		want := map[string]string{
			"/etc/hostname":                            "system_u:object_r:hostname_etc_t:s0",
			"/etc/hosts":                               "system_u:object_r:net_conf_t:s0",
			"/var/lib/earlyinit/instance":              "system_u:object_r:cloud_link_t:s0",
			"/var/lib/earlyinit/instances/iid-selinux": "system_u:object_r:cloud_var_lib_t:s0",
			"/var/lib/earlyinit/data/instance-id":      "system_u:object_r:cloud_var_lib_t:s0",
		}
		for _, n := range nets {
			want[strings.TrimPrefix(n, root)] = "system_u:object_r:net_conf_t:s0"
		}
		for p, w := range want {
			if got := label(p); got != w {
				t.Errorf("%s: security.selinux %q, want %q", p, got, w)
			}
		}
		// The image's own files are not relabelled.
		if got := label("/etc/passwd"); !strings.HasPrefix(got, "(") {
			t.Errorf("/etc/passwd got a label %q: earlyinit did not write it", got)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestSysvinitReadOnlyRoot boots a Debian root with sysvinit, ro on the
// command line: the late stages wait for the init to remount the root
// read-write, then bootcmd, runcmd and power_state run.
func TestSysvinitReadOnlyRoot(t *testing.T) {
	parallel(t)
	t0 := time.Now()
	tarball, err := vm.DebianRootOf(debianCache(), vm.DebianSysvinitPackages())
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("Debian sysvinit root %s in %s", filepath.Base(tarball), time.Since(t0).Round(time.Millisecond))
	dir := filepath.Join(t.TempDir(), "root")
	if err := vm.Untar(tarball, dir); err != nil {
		t.Fatal(err)
	}
	img := filepath.Join(t.TempDir(), "root.img")
	if err := vm.Ext4(img, dir, "root", "", 1024); err != nil {
		t.Fatal(err)
	}
	defer dumpLogs(t, img)
	seed := seedISO(t, "cidata", map[string]string{
		"meta-data": "instance-id: iid-sysv\nlocal-hostname: sysv-host\n",
		"user-data": "#cloud-config\nbootcmd:\n  - echo bootcmd-ran > /var/log/e2e-bootcmd.txt\nruncmd:\n  - echo runcmd-ran > /var/log/e2e-runcmd.txt\npower_state:\n  mode: poweroff\n",
	})
	res := boot(t, vm.Config{
		Append:   "root=LABEL=root ro earlyinit.timeout=30",
		Disks:    []vm.Disk{{Path: img}, {Path: seed, If: "ide-cd"}},
		RNG:      true,
		MemoryMB: 768,
		Timeout:  5 * time.Minute,
	})
	mustContain(t, "console", res.Console, "is read-only: the late stages run once", "is writable after", "running [shutdown -h -P now]")
	// This root has no openssh-server: the host keys are earlyinit's own;
	// hostname and groupadd are the root's.
	if strings.Contains(res.Console, `"hostname": executable file not found`) || strings.Contains(res.Console, `"groupadd": executable file not found`) {
		t.Errorf("the late stages could not find the root's tools (no PATH?)")
	}
	wantFile(t, img, "/var/log/e2e-bootcmd.txt", "bootcmd-ran\n")
	wantFile(t, img, "/var/log/e2e-runcmd.txt", "runcmd-ran\n")
	wantFile(t, img, "/etc/hostname", "sysv-host\n")
}

// TestGrowRootKeepsOtherPartitions boots an ext4 root in MBR partition 1
// with a partition after it that a reading of the table by type alone
// would miss: an MBR slot of type 0x00 with a size (the kernel's
// /dev/vda2), and a logical partition that an EBR's first entry puts
// outside its extended partition (the kernel's /dev/vda5). The root
// grows up to it, never over it; the other partition's bytes are the
// same after two boots, and the second boot changes nothing.
func TestGrowRootKeepsOtherPartitions(t *testing.T) {
	// Its boots are its subtests': it gives its slot to the first.
	parallel(t)
	const diskMB, otherAt, otherMB = 2048, 1200 << 11, 64 // otherAt in sectors
	for _, c := range []struct {
		name, dev string
		table     func(mbr []byte, f *os.File) error
	}{
		{"type-00-slot", "vda2", func(mbr []byte, f *os.File) error {
			putMBREntry(mbr[446+16:], 0x00, otherAt, otherMB<<11)
			return nil
		}},
		{"logical-outside-extended", "vda5", func(mbr []byte, f *os.File) error {
			// The extended partition is the 1 MiB gap before the root;
			// its EBR's entry points 1200 MiB into the disk.
			putMBREntry(mbr[446+16:], 0x05, 2, 2046)
			ebr := make([]byte, 512)
			putMBREntry(ebr[446:], 0x83, otherAt-2, otherMB<<11)
			ebr[510], ebr[511] = 0x55, 0xAA
			_, err := f.WriteAt(ebr, 2*512)
			return err
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			parallel(t)
			dir := filepath.Join(t.TempDir(), "root")
			if err := vm.BusyboxRoot(dir); err != nil {
				t.Fatal(err)
			}
			img := filepath.Join(t.TempDir(), "disk.img")
			if err := vm.PartitionedDisk(img, vm.MBR, 512, diskMB, "ext4", "eiroot", dir, ""); err != nil {
				t.Fatal(err)
			}
			f, err := os.OpenFile(img, os.O_RDWR, 0)
			if err != nil {
				t.Fatal(err)
			}
			mbr := make([]byte, 512)
			if _, err := f.ReadAt(mbr, 0); err != nil {
				t.Fatal(err)
			}
			if err := c.table(mbr, f); err != nil {
				t.Fatal(err)
			}
			if _, err := f.WriteAt(mbr, 0); err != nil {
				t.Fatal(err)
			}
			// Someone's data in the other partition.
			data := make([]byte, otherMB<<20)
			for i := range data {
				data[i] = byte(i*7 + i>>12)
			}
			if _, err := f.WriteAt(data, otherAt*512); err != nil {
				t.Fatal(err)
			}
			f.Close()
			cfg := vm.Config{Append: "root=LABEL=eiroot rw earlyinit.timeout=20", Disks: []vm.Disk{{Path: img}}, RNG: true, MemoryMB: 768}
			for i := 1; i <= 2; i++ {
				res := boot(t, cfg)
				mustContain(t, fmt.Sprintf("boot %d's console", i), res.Console, "step grow done", "TESTINIT: /sbin/init pid=1")
				after, err := vm.Partition(img, vm.MBR)
				if err != nil {
					t.Fatal(err)
				}
				if end := after.Start + after.Size; end != otherAt {
					t.Errorf("boot %d: partition 1 ends at sector %d, want %d (where %s starts)", i, end, otherAt, c.dev)
				}
				got := make([]byte, len(data))
				g, err := os.Open(img)
				if err != nil {
					t.Fatal(err)
				}
				_, err = g.ReadAt(got, otherAt*512)
				g.Close()
				if err != nil || !bytes.Equal(got, data) {
					t.Fatalf("boot %d: %s's bytes changed (%v)", i, c.dev, err)
				}
				fs, err := vm.FSSize(img, vm.MBR, "ext4")
				if err != nil {
					t.Fatal(err)
				}
				if fs > after.Size*512 {
					t.Errorf("boot %d: ext4 of %d bytes on a partition of %d", i, fs, after.Size*512)
				}
				if i == 1 {
					mustContain(t, "console", res.Console, "growpart: /dev/vda1 grown from", "resizefs: / (ext4) grown from")
				} else {
					mustContain(t, "second boot's console", res.Console, "nothing to grow")
				}
			}
		})
	}
}

// putMBREntry writes an MBR partition entry (no CHS: LBA only).
func putMBREntry(e []byte, typ byte, start, size int64) {
	e[4] = typ
	binary.LittleEndian.PutUint32(e[8:], uint32(start))
	binary.LittleEndian.PutUint32(e[12:], uint32(size))
}
