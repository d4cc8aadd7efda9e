//go:build qemu

package qemutests

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"os"
	"os/exec"
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
	const diskMB = 2048
	for _, c := range []growCase{
		{name: "xfs-gpt", table: vm.GPT, fstype: "xfs", partMB: 512, append: "root=PARTLABEL=root"},
		{name: "btrfs-gpt-subvol", table: vm.GPT, fstype: "btrfs", subvol: "@root", partMB: 512, append: "root=PARTLABEL=root rootflags=subvol=@root"},
		{name: "ext4-mbr", table: vm.MBR, fstype: "ext4", partMB: 512, append: "root=LABEL=eiroot"},
		{name: "ext4-gpt-off", table: vm.GPT, fstype: "ext4", partMB: 512, append: "root=PARTLABEL=root",
			userData: "#cloud-config\ngrowpart: {mode: 'off'}\nresize_rootfs: false\n", wantNoGrowth: true},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
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
	t.Parallel()
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

// cloudInitRoot is the cached Debian root with cloud-init installed.
func cloudInitRoot(t *testing.T) string {
	t.Helper()
	t0 := time.Now()
	tarball, err := vm.DebianRootWith(debianCache(), vm.DebianCloudInitPackages())
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("Debian root with cloud-init %s in %s", filepath.Base(tarball), time.Since(t0).Round(time.Millisecond))
	dir := filepath.Join(t.TempDir(), "root")
	if err := vm.Untar(tarball, dir); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestImageWithCloudInit boots a Debian root that still has cloud-init
// and a tuned cloud.cfg (another default user, preserve_hostname, network
// off, datasource_list choosing the config drive of two attached drives).
// earlyinit provisions it as that configuration says and cloud-init does
// not run (with earlyinit=disabled cloud-init does: TestCloudInitMigration's
// first boot, on the same root).
func TestImageWithCloudInit(t *testing.T) {
	t.Parallel()
	dir := cloudInitRoot(t)
	if err := vm.WriteTree(dir, map[string]string{
		"etc/cloud/cloud.cfg.d/50-image.cfg": `system_info:
  default_user:
    name: cloudy
    gecos: Cloudy
    groups: [adm]
    shell: /bin/bash
    lock_passwd: true
preserve_hostname: true
network: {config: disabled}
datasource_list: [NoCloud]
`,
		"etc/systemd/system/e2e-record.service": recordUnit,
		"usr/local/sbin/e2e-record":             recordScript,
	}); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("../e2e-record.service", filepath.Join(dir, "etc/systemd/system/multi-user.target.wants/e2e-record.service")); err != nil {
		t.Fatal(err)
	}
	img := filepath.Join(t.TempDir(), "root.img")
	if err := vm.Ext4(img, dir, "root", "", 1536); err != nil {
		t.Fatal(err)
	}
	defer dumpLogs(t, img)
	nocloud := seedISO(t, "cidata", nocloudSeed("iid-nocloud-side", "nocloud-host"))
	configDrive := seedISO(t, "config-2", openstackDrive(osUUID, "configdrive-host"))
	cfg := vm.Config{
		Append:   "root=LABEL=root rw earlyinit.timeout=30",
		Disks:    []vm.Disk{{Path: img}, {Path: nocloud, If: "ide-cd"}, {Path: configDrive, If: "ide-cd"}},
		NICs:     []vm.NIC{{MAC: e2eMAC}},
		RNG:      true,
		MemoryMB: 1024,
		Timeout:  6 * time.Minute,
	}
	res := boot(t, cfg)
	mustContain(t, "console", res.Console, "E2E-RECORDED", "cloud-init is installed: masked for this boot",
		"datasource nocloud:", "network: config disabled by")
	if strings.Contains(res.Console, "Cloud-init v.") {
		t.Errorf("cloud-init ran on a boot earlyinit provisioned")
	}
	if _, err := vm.Stat(img, "/var/log/cloud-init.log"); err == nil {
		t.Errorf("/var/log/cloud-init.log exists: cloud-init ran")
	}
	passwd := catRoot(t, img, "/etc/passwd")
	mustContain(t, "/etc/passwd", passwd, "\ncloudy:x:")
	if strings.Contains(passwd, "\ndebian:x:") {
		t.Errorf("user debian created on an image whose default user is cloudy:\n%s", passwd)
	}
	wantFile(t, img, "/etc/hostname", "debian\n")
	if ds := catRoot(t, img, "/var/lib/earlyinit/instances/iid-nocloud-side/datasource"); !strings.Contains(ds, "NoCloud") {
		t.Errorf("datasource %q, want NoCloud (the image's datasource_list), not the config drive tried first by default", ds)
	}
	for _, f := range []string{"/etc/systemd/network/10-cloud-init-eth0.network", "/etc/systemd/network/10-earlyinit-eth0.link"} {
		if _, err := vm.Stat(img, f); err == nil {
			t.Errorf("%s written with network: {config: disabled}", f)
		}
	}

	// With earlyinit=disabled cloud-init provisions, as it would without
	// us: TestCloudInitMigration's first boot shows it on the same root.
}

// TestSysvinitReadOnlyRoot boots a Debian root with sysvinit, ro on the
// command line: the late stages wait for the init to remount the root
// read-write, then bootcmd, runcmd and power_state run.
func TestSysvinitReadOnlyRoot(t *testing.T) {
	t.Parallel()
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
	// This root has no ssh-keygen (no openssh-server): the ssh module's
	// failure is expected; hostname and groupadd are there.
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
			t.Parallel()
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

// TestCloudInitMigration boots one Debian root with cloud-init installed
// alternately with cloud-init (earlyinit=disabled: earlyinit only mounts
// the root) and with earlyinit, three times on one instance: cloud-init
// provisions, earlyinit boots it for the first time, cloud-init boots it
// again (the way back). The way back on an instance earlyinit provisioned
// is late.TestMigrationToCloudInit's, judged by cloud-init's own code: a
// QEMU boot for it would add 7 min under TCG. It checks that neither provisions again what the other did: the
// SSH host keys, alice's password hash (chpasswd sets it with a new salt
// each time it runs) and the users stay as the first provisioning left
// them, runcmd's marker is written once per instance, and cloud-init's log
// says the instance is not new. Its recorder is ordered after
// cloud-final.service and wanted by cloud-init.target: on a boot earlyinit
// provisions, the stand-in for cloud-final.service holds it until
// earlyinit's final stage is over, where cloud-init's own `status` must
// say done (without --wait), `status --long` name the datasource and
// `query` answer.
func TestCloudInitMigration(t *testing.T) {
	t.Parallel()
	const recorderUnit = `[Unit]
Description=migration test: record what cloud-init's CLI says, then power off
After=cloud-final.service

[Service]
Type=oneshot
ExecStart=/bin/sh /usr/local/sbin/mig-record
StandardOutput=journal+console

[Install]
WantedBy=cloud-init.target
`
	const recorderScript = `#!/bin/sh
n=$(( $(cat /var/log/mig-boots 2>/dev/null || echo 0) + 1 ))
echo $n > /var/log/mig-boots
exec > /var/log/mig-record-$n.log 2>&1
cloud-init status --long > /var/log/mig-status-$n.txt
echo "status exit: $?"
timeout 120 cloud-init status --wait > /var/log/mig-wait-$n.txt
echo "status --wait exit: $?"
cloud-init query instance_id > /var/log/mig-query-$n.txt
echo "query instance_id exit: $?"
cloud-init query ds > /dev/null && echo "query ds ok"
cloud-init query v1 > /dev/null && echo "query v1 ok"
cat /etc/ssh/ssh_host_*_key.pub | sha256sum > /var/log/mig-hostkeys-$n.txt
getent shadow alice | cut -d: -f2 > /var/log/mig-hash-$n.txt
getent passwd debian alice > /var/log/mig-passwd-$n.txt
sync
echo "MIG-RECORDED $n" > /dev/console
systemctl poweroff --no-block
`
	userData := `#cloud-config
users:
  - default
  - name: alice
    shell: /bin/bash
    lock_passwd: false
chpasswd:
  expire: false
  users:
    - {name: alice, password: "Mig-Pass-1", type: text}
runcmd:
  - echo "runcmd $(cat /var/log/mig-boots 2>/dev/null || echo 0)" >> /var/log/mig-runcmd.log
# The root has no locales package: cloud-init's locale module would fail
# (locale-gen), and the status with it.
locale: false
`
	dir := cloudInitRoot(t)
	// cloud-init mounts the seed ISO itself (earlyinit=disabled loads no
	// filesystem module): the root gets the boot kernel's isofs, loaded
	// by systemd-modules-load (libkmod; the root has no modprobe).
	withKernelModules(t, dir, "kernel/fs/isofs")
	if err := vm.WriteTree(dir, map[string]string{
		"etc/modules-load.d/mig-isofs.conf":     "isofs\n",
		"etc/systemd/system/mig-record.service": recorderUnit,
		"usr/local/sbin/mig-record":             recorderScript,
	}); err != nil {
		t.Fatal(err)
	}
	wants := filepath.Join(dir, "etc/systemd/system/cloud-init.target.wants")
	if err := os.MkdirAll(wants, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("../mig-record.service", filepath.Join(wants, "mig-record.service")); err != nil {
		t.Fatal(err)
	}
	img := filepath.Join(t.TempDir(), "root.img")
	if err := vm.Ext4(img, dir, "root", "", 1536); err != nil {
		t.Fatal(err)
	}
	defer func() {
		dumpLogs(t, img)
		if t.Failed() {
			s, err := vm.Cat(img, "/var/log/cloud-init.log")
			t.Logf("/var/log/cloud-init.log (%v):\n%s", err, s)
		}
	}()
	seeds := map[string]string{}
	for _, iid := range []string{"iid-mig"} {
		seeds[iid] = seedISO(t, "cidata", map[string]string{
			"meta-data": "instance-id: " + iid + "\nlocal-hostname: mig-host\n",
			"user-data": userData,
		})
	}
	type state struct{ keys, hash, passwd string }
	var first state // what the instance's provisioning left
	for i, b := range []struct {
		iid       string
		cloudInit bool // earlyinit=disabled: cloud-init boots it
		newInst   bool // the first boot of the instance
	}{
		{"iid-mig", true, true},   // cloud-init provisions
		{"iid-mig", false, false}, // earlyinit, first time: nothing again
		{"iid-mig", true, false},  // back to cloud-init: nothing again
	} {
		n := i + 1
		cfg := vm.Config{
			Append:   "root=LABEL=root rw earlyinit.timeout=30",
			Disks:    []vm.Disk{{Path: img}, {Path: seeds[b.iid], If: "ide-cd"}},
			NICs:     []vm.NIC{{MAC: e2eMAC}},
			RNG:      true,
			MemoryMB: 1024,
			Timeout:  6 * time.Minute,
		}
		if b.cloudInit {
			cfg.Append += " earlyinit=disabled"
		}
		res := boot(t, cfg)
		mustContain(t, fmt.Sprintf("boot %d's console", n), res.Console, fmt.Sprintf("MIG-RECORDED %d", n))
		if b.cloudInit {
			mustContain(t, fmt.Sprintf("boot %d's console", n), res.Console, "earlyinit=disabled on the command line", "Cloud-init v. 22.4.2")
		}
		if got := strings.Contains(res.Console, "Cloud-init v. 22.4"); got != b.cloudInit {
			t.Errorf("boot %d: cloud-init ran: %v, want %v", n, got, b.cloudInit)
		}
		if !b.cloudInit {
			mustContain(t, fmt.Sprintf("boot %d's console", n), res.Console, "cloud-init is installed: masked for this boot",
				"stood in for by units ordered after earlyinit's stages: cloud-final.service")
			if !b.newInst {
				mustContain(t, fmt.Sprintf("boot %d's console", n), res.Console, fmt.Sprintf("instance %q: same as last boot", b.iid))
				mustContain(t, "earlyinit.log", catRoot(t, img, "/var/log/earlyinit.log"),
					"module ssh: already ran (once-per-instance, by cloud-init)",
					"module runcmd: already ran (once-per-instance, by cloud-init)")
			}
		}
		// cloud-init's CLI, run once cloud-final.service (or its stand-in)
		// was over.
		rec := catRoot(t, img, fmt.Sprintf("/var/log/mig-record-%d.log", n))
		mustContain(t, fmt.Sprintf("boot %d's recorder", n), rec, "status exit: 0\n", "status --wait exit: 0\n",
			"query instance_id exit: 0\n", "query ds ok\n", "query v1 ok\n")
		st := catRoot(t, img, fmt.Sprintf("/var/log/mig-status-%d.txt", n))
		if !strings.HasPrefix(st, "status: done\n") || !strings.Contains(st, "boot_status_code: enabled-by-generator\n") || !strings.Contains(st, "detail:\nDataSourceNoCloud") {
			t.Errorf("boot %d: cloud-init status --long, after cloud-final.service:\n%s", n, st)
		}
		wantFile(t, img, fmt.Sprintf("/var/log/mig-wait-%d.txt", n), "\nstatus: done\n")
		wantFile(t, img, fmt.Sprintf("/var/log/mig-query-%d.txt", n), b.iid+"\n")

		now := state{
			keys:   catRoot(t, img, fmt.Sprintf("/var/log/mig-hostkeys-%d.txt", n)),
			hash:   catRoot(t, img, fmt.Sprintf("/var/log/mig-hash-%d.txt", n)),
			passwd: catRoot(t, img, fmt.Sprintf("/var/log/mig-passwd-%d.txt", n)),
		}
		if !strings.HasPrefix(now.hash, "$") || !strings.Contains(now.passwd, "\nalice:") && !strings.HasPrefix(now.passwd, "alice:") || !strings.Contains(now.passwd, "debian:") {
			t.Errorf("boot %d: alice's hash %q, users:\n%s", n, now.hash, now.passwd)
		}
		if b.newInst {
			if n > 1 && (now.keys == first.keys || now.hash == first.hash) {
				t.Errorf("boot %d: a new instance kept the host keys (%v) or alice's hash (%v)", n, now.keys == first.keys, now.hash == first.hash)
			}
			first = now
		} else {
			for what, pair := range map[string][2]string{"host keys": {first.keys, now.keys}, "alice's password hash": {first.hash, now.hash}, "users": {first.passwd, now.passwd}} {
				if pair[0] != pair[1] {
					t.Errorf("boot %d: %s changed: provisioned again\n was %q\n now %q", n, what, pair[0], pair[1])
				}
			}
		}
		if got := countLines(t, img, "/var/log/mig-runcmd.log", `^runcmd `); got != 1 {
			t.Errorf("boot %d: runcmd ran %d times for one instance:\n%s", n, got, catRoot(t, img, "/var/log/mig-runcmd.log"))
		}
		// cloud-init's own view, on the boots it ran: the instance is new
		// only on the first boot cloud-init provisioned.
		if b.cloudInit {
			// "[local] init will ..." or "[net] ...": NoCloud on a CD
			// is found by either stage.
			log := catRoot(t, img, "/var/log/cloud-init.log")
			target := " init will now be targeting instance id: " + b.iid + ". new="
			want := target + map[bool]string{true: "True", false: "False"}[b.newInst]
			if !strings.Contains(log, want) {
				t.Errorf("boot %d: cloud-init.log lacks %q", n, want)
			}
			wantNew := 0
			if b.iid == "iid-mig" {
				wantNew = 1 // boot 1
			}
			if got := strings.Count(log, target+"True"); got != wantNew {
				t.Errorf("boot %d: cloud-init took %s for a new instance %d times, want %d", n, b.iid, got, wantNew)
			}
		}
	}
	// earlyinit's cache and cloud-init's name the instance.
	wantFile(t, img, "/var/lib/earlyinit/data/instance-id", "iid-mig\n")
	wantFile(t, img, "/var/lib/cloud/data/instance-id", "iid-mig\n")
}

// withKernelModules copies the boot kernel's modules under the given
// directories of /lib/modules/<kver> into root, with the files depmod
// needs, and indexes them there: what a root without the kernel's package
// needs to load them (modprobe, the kernel's request_module on mount).
func withKernelModules(t *testing.T, root string, dirs ...string) {
	t.Helper()
	src := filepath.Join("/lib/modules", kver)
	dst := filepath.Join(root, "lib/modules", kver)
	for _, d := range dirs {
		if err := os.CopyFS(filepath.Join(dst, d), os.DirFS(filepath.Join(src, d))); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []string{"modules.order", "modules.builtin", "modules.builtin.modinfo"} {
		b, err := os.ReadFile(filepath.Join(src, f))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dst, f), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if out, err := exec.Command("depmod", "-b", root, kver).CombinedOutput(); err != nil {
		t.Fatalf("depmod -b %s %s: %v\n%s", root, kver, err, out)
	}
}
