//go:build qemu

package qemutests

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/earlyinit/earlyinit/internal/vm"
)

const osUUID = "83679162-1378-4288-a2d4-70e13ec132aa"

// openstackDrive is a config drive as nova writes it, with a content/
// directory (which is not a version) and an unknown future version.
func openstackDrive(uuid, hostname string) map[string]string {
	meta := `{"uuid": "` + uuid + `", "hostname": "` + hostname + `", "name": "test-vm",
  "availability_zone": "nova", "launch_index": 0,
  "public_keys": {"mykey": "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIEarlyinitTestKey test@earlyinit"},
  "files": [{"path": "/etc/injected.conf", "content_path": "/content/0000"}],
  "random_seed": "cmFuZG9tIHNlZWQgYnl0ZXMgZm9yIHRoZSBrZXJuZWwgcG9vbA==",
  "admin_pass": "s3cret-admin", "meta": {"role": "test"}}`
	return map[string]string{
		"openstack/2012-08-10/meta_data.json": `{"uuid": "stale-old-version"}`,
		"openstack/2018-08-27/meta_data.json": meta,
		"openstack/2018-08-27/user_data":      "#cloud-config\nruncmd: [echo hi]\n",
		"openstack/2018-08-27/network_data.json": `{"links": [{"id": "l0", "type": "phy", "ethernet_mac_address": "52:54:00:12:34:56"}],
  "networks": [{"id": "n0", "link": "l0", "type": "ipv4_dhcp"}], "services": []}`,
		"openstack/2018-08-27/vendor_data.json": `{"cloud-init": "#cloud-config\npackages: []\n"}`,
		"openstack/latest/meta_data.json":       meta,
		"openstack/content/0000":                "injected by nova\n",
		"ec2/latest/meta-data.json":             `{"instance-id": "i-0000002a"}`,
	}
}

func nocloudSeed(iid, hostname string) map[string]string {
	return map[string]string{
		"meta-data": "instance-id: " + iid + "\nlocal-hostname: " + hostname + "\n",
		"user-data": "#cloud-config\nfinal_message: nocloud seed done\n",
	}
}

func tree(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "seed")
	if err := vm.WriteTree(dir, files); err != nil {
		t.Fatal(err)
	}
	return dir
}

func catRoot(t *testing.T, img, path string) string {
	t.Helper()
	s, err := vm.Cat(img, path)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return s
}

func wantFile(t *testing.T, img, path, want string) {
	t.Helper()
	if got := catRoot(t, img, path); got != want {
		t.Errorf("%s = %q, want %q", path, got, want)
	}
}

// wantMode checks a file's mode in the root image (debugfs stat).
func wantMode(t *testing.T, img, path, mode string) {
	t.Helper()
	st, err := vm.Stat(img, path)
	if err != nil {
		t.Errorf("%v", err)
		return
	}
	if m := regexp.MustCompile(`Mode:\s+(\d+)`).FindStringSubmatch(st); m == nil || m[1] != mode {
		t.Errorf("%s: mode %v, want %s", path, m, mode)
	}
}

// checkIdentity asserts what every datasource leaves in the root.
func checkIdentity(t *testing.T, img, iid, short string) {
	t.Helper()
	wantFile(t, img, "/var/lib/earlyinit/data/instance-id", iid+"\n")
	wantFile(t, img, "/etc/hostname", short+"\n")
	hosts := catRoot(t, img, "/etc/hosts")
	mustContain(t, "/etc/hosts", hosts, "127.0.0.1\tlocalhost\n")
	if !regexp.MustCompile(`(?m)^127\.0\.1\.1\s.*\b` + regexp.QuoteMeta(short) + `$`).MatchString(hosts) {
		t.Errorf("/etc/hosts has no 127.0.1.1 line for %s:\n%s", short, hosts)
	}
	link, err := vm.Stat(img, "/var/lib/earlyinit/instance")
	if err != nil || !strings.Contains(link, `Fast link dest: "instances/`+iid+`"`) {
		t.Errorf("instance symlink: %v\n%s", err, link)
	}
	wantMode(t, img, "/var/lib/earlyinit/instances/"+iid+"/user-data.txt", "0600")
	ls := catRoot(t, img, "/seen/run-earlyinit.ls")
	if !regexp.MustCompile(`-rw-------\s+1 0\s+0 .* instance-data-sensitive.json`).MatchString(ls) ||
		!regexp.MustCompile(`-rw-r--r--\s+1 0\s+0 .* instance-data.json`).MatchString(ls) {
		t.Errorf("instance-data files in /run/earlyinit:\n%s", ls)
	}
	data := catRoot(t, img, "/seen/run-earlyinit/instance-data.json")
	mustContain(t, "instance-data.json", data, `"instance_id": "`+iid+`"`)
}

func TestConfigDriveISO(t *testing.T) {
	parallel(t)
	root := busyboxDisk(t, "root", "")
	iso := filepath.Join(t.TempDir(), "config.iso")
	if err := vm.ISO(iso, tree(t, openstackDrive(osUUID, "os-vm.example.com")), "config-2"); err != nil {
		t.Fatal(err)
	}
	res := boot(t, vm.Config{Append: "root=LABEL=root rw", Disks: []vm.Disk{{Path: root}, {Path: iso, If: "ide-cd"}}, RNG: true})
	mustContain(t, "console", res.Console, `datasource configdrive: instance "`+osUUID+`"`, "config-disk (/dev/sr", "random_seed: 37 bytes", "TESTINIT: /sbin/init pid=1")
	checkIdentity(t, root, osUUID, "os-vm")
	mustContain(t, "/etc/hosts", catRoot(t, root, "/etc/hosts"), "127.0.1.1\tos-vm.example.com os-vm\n")
	wantFile(t, root, "/etc/injected.conf", "injected by nova\n")
	wantMode(t, root, "/etc/injected.conf", "0644")
	wantFile(t, root, "/var/lib/earlyinit/instances/"+osUUID+"/user-data.txt", "#cloud-config\nruncmd: [echo hi]\n")
	wantFile(t, root, "/var/lib/earlyinit/instances/"+osUUID+"/vendor-data.txt", "#cloud-config\npackages: []\n")
	wantFile(t, root, "/var/lib/earlyinit/data/previous-instance-id", "NO_PREVIOUS_INSTANCE_ID\n")
	// Secrets only in the 0600 file.
	pub := catRoot(t, root, "/seen/run-earlyinit/instance-data.json")
	sens := catRoot(t, root, "/seen/run-earlyinit/instance-data-sensitive.json")
	if strings.Contains(pub, "s3cret-admin") || !strings.Contains(sens, "s3cret-admin") {
		t.Errorf("admin_pass: in public file %v, in sensitive file %v", strings.Contains(pub, "s3cret-admin"), strings.Contains(sens, "s3cret-admin"))
	}
	mustContain(t, "instance-data.json", pub, `"cloud_name": "openstack"`, `"availability_zone": "nova"`, "redacted for non-root user", "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIEarlyinitTestKey")
	// The drive was unmounted before switch_root. (A mount left in the
	// initramfs would not show in the real root's /proc/mounts, so the
	// console says so.)
	mustContain(t, "console", res.Console, "unmounted /mnt/earlyinit-sr")
}

func TestConfigDriveVFAT(t *testing.T) {
	parallel(t)
	root := busyboxDisk(t, "root", "")
	drive := filepath.Join(t.TempDir(), "config.img")
	if err := vm.VFAT(drive, tree(t, openstackDrive(osUUID, "vfat-vm")), "CONFIG-2", 8); err != nil {
		t.Fatal(err)
	}
	res := boot(t, vm.Config{Append: "root=LABEL=root rw", Disks: []vm.Disk{{Path: root}, {Path: drive}}, RNG: true})
	mustContain(t, "console", res.Console, `datasource configdrive: instance "`+osUUID+`"`, "config-disk (/dev/vdb)")
	checkIdentity(t, root, osUUID, "vfat-vm")
	wantFile(t, root, "/etc/injected.conf", "injected by nova\n")
}

func TestNoCloudISO(t *testing.T) {
	parallel(t)
	root := busyboxDisk(t, "root", "")
	iso := filepath.Join(t.TempDir(), "seed.iso")
	if err := vm.ISO(iso, tree(t, nocloudSeed("iid-nocloud-iso", "nc-iso")), "cidata"); err != nil {
		t.Fatal(err)
	}
	res := boot(t, vm.Config{Append: "root=LABEL=root rw", Disks: []vm.Disk{{Path: root}, {Path: iso, If: "ide-cd"}}, RNG: true})
	mustContain(t, "console", res.Console, `datasource nocloud: instance "iid-nocloud-iso"`)
	checkIdentity(t, root, "iid-nocloud-iso", "nc-iso")
	wantFile(t, root, "/var/lib/earlyinit/instances/iid-nocloud-iso/user-data.txt", "#cloud-config\nfinal_message: nocloud seed done\n")
}

func TestNoCloudVFATPartition(t *testing.T) {
	parallel(t)
	root := busyboxDisk(t, "root", "")
	disk := filepath.Join(t.TempDir(), "seed.img")
	if err := vm.VFATPartition(disk, tree(t, nocloudSeed("iid-nocloud-part", "nc-part")), "CIDATA", 10); err != nil {
		t.Fatal(err)
	}
	res := boot(t, vm.Config{Append: "root=LABEL=root rw", Disks: []vm.Disk{{Path: root}, {Path: disk}}, RNG: true})
	mustContain(t, "console", res.Console, `datasource nocloud: instance "iid-nocloud-part"`, "config-disk (/dev/vdb1)")
	checkIdentity(t, root, "iid-nocloud-part", "nc-part")
}

func TestSeedDirectory(t *testing.T) {
	parallel(t)
	dir := filepath.Join(t.TempDir(), "root")
	if err := vm.BusyboxRoot(dir); err != nil {
		t.Fatal(err)
	}
	if err := vm.WriteTree(filepath.Join(dir, "var/lib/cloud/seed/nocloud"), nocloudSeed("iid-seed-dir", "seeded")); err != nil {
		t.Fatal(err)
	}
	img := filepath.Join(t.TempDir(), "root.img")
	if err := vm.Ext4(img, dir, "root", "", 32); err != nil {
		t.Fatal(err)
	}
	// ds=nocloud's h= overrides the seed's local-hostname, as in cloud-init.
	res := boot(t, vm.Config{Append: "root=LABEL=root rw ds=nocloud;h=from-cmdline", Disks: []vm.Disk{{Path: img}}, RNG: true})
	mustContain(t, "console", res.Console, `datasource nocloud: instance "iid-seed-dir", hostname "from-cmdline" (seed-dir (/var/lib/cloud/seed/nocloud))`)
	checkIdentity(t, img, "iid-seed-dir", "from-cmdline")
}

func TestInstanceIDChange(t *testing.T) {
	parallel(t)
	root := busyboxDisk(t, "root", "")
	first := filepath.Join(t.TempDir(), "a.iso")
	second := filepath.Join(t.TempDir(), "b.iso")
	if err := vm.ISO(first, tree(t, nocloudSeed("iid-first", "first-host")), "cidata"); err != nil {
		t.Fatal(err)
	}
	if err := vm.ISO(second, tree(t, nocloudSeed("iid-second", "second-host")), "cidata"); err != nil {
		t.Fatal(err)
	}
	res := boot(t, vm.Config{Append: "root=LABEL=root rw", Disks: []vm.Disk{{Path: root}, {Path: first, If: "ide-cd"}}, RNG: true})
	mustContain(t, "console", res.Console, `instance "iid-first": first boot`)
	checkIdentity(t, root, "iid-first", "first-host")

	res = boot(t, vm.Config{Append: "root=LABEL=root rw", Disks: []vm.Disk{{Path: root}, {Path: second, If: "ide-cd"}}, RNG: true})
	mustContain(t, "console", res.Console, `instance "iid-second": new instance (was "iid-first")`)
	checkIdentity(t, root, "iid-second", "second-host")
	wantFile(t, root, "/var/lib/earlyinit/data/previous-instance-id", "iid-first\n")
	// The old instance's directory is kept.
	wantFile(t, root, "/var/lib/earlyinit/instances/iid-first/user-data.txt", "#cloud-config\nfinal_message: nocloud seed done\n")
}

func TestCorruptDrives(t *testing.T) {
	parallel(t)
	root := busyboxDisk(t, "root", "")
	// A config-2 ISO whose meta_data.json is not JSON...
	bad := openstackDrive(osUUID, "never")
	bad["openstack/latest/meta_data.json"] = `{"uuid": "x",,}`
	bad["openstack/2018-08-27/meta_data.json"] = `{"uuid": "x",,}`
	iso := filepath.Join(t.TempDir(), "bad.iso")
	if err := vm.ISO(iso, tree(t, bad), "config-2"); err != nil {
		t.Fatal(err)
	}
	// ...and a CIDATA vfat whose FATs and root directory are zeroed.
	fat := filepath.Join(t.TempDir(), "bad.img")
	if err := vm.VFAT(fat, tree(t, nocloudSeed("iid-never", "never")), "CIDATA", 8); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(fat, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt(make([]byte, 1<<20), 4096); err != nil {
		t.Fatal(err)
	}
	f.Close()
	res := boot(t, vm.Config{Append: "root=LABEL=root rw", Disks: []vm.Disk{{Path: root}, {Path: iso, If: "ide-cd"}, {Path: fat}}, RNG: true})
	mustContain(t, "console", res.Console, "datasource configdrive: drive sr", "meta_data.json", "rejected", "datasource nocloud: drive vdb", "step datasource failed", "TESTINIT: /sbin/init pid=1")
	if _, err := vm.Stat(root, "/var/lib/earlyinit/data/instance-id"); err == nil {
		t.Errorf("a rejected datasource left an instance cache")
	}
	wantFile(t, root, "/etc/hostname", "image-template\n")
}

// TestNoCloudWordsAlone: ds=nocloud;i=;h= with no seed and no drive is a
// NoCloud instance by itself, as cloud-init's NoCloud claims it from the
// kernel command line ("cmdline") or the SMBIOS system serial ("dmi"),
// which Proxmox and libvirt users set with -smbios type=1,serial=...
func TestNoCloudWordsAlone(t *testing.T) {
	// Its boots are its subtests': it gives its slot to the first.
	parallel(t)
	for _, tc := range []struct {
		name, append string
		smbios       []string
		iid, host    string
		from         string
	}{
		{"cmdline", "ds=nocloud;i=iid-words;h=wordshost", nil, "iid-words", "wordshost", "cmdline"},
		{"serial", "", []string{"type=1,serial=ds=nocloud;i=iid-serial;h=serialhost"}, "iid-serial", "serialhost", "dmi"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			parallel(t)
			root := busyboxDisk(t, "root", "")
			res := boot(t, vm.Config{Append: "root=LABEL=root rw " + tc.append, Disks: []vm.Disk{{Path: root}}, RNG: true, SMBIOS: tc.smbios})
			mustContain(t, "console", res.Console, "TESTINIT: /sbin/init pid=1",
				`datasource nocloud: instance "`+tc.iid+`", hostname "`+tc.host+`" (seed-dir (`+tc.from+`))`)
			checkIdentity(t, root, tc.iid, tc.host)
		})
	}
}
