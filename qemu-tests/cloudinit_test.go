//go:build qemu

package qemutests

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/earlyinit/earlyinit/internal/vm"
)

// The Debian root with cloud-init: earlyinit provisions it with cloud-init
// installed, and cloud-init and earlyinit boot one instance in turn. Among
// the longest tests: see main_test.go on why this file's name sorts first.

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
	parallel(t, 10*time.Minute) // three Debian boots, two with cloud-init
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
	parallel(t, 3*time.Minute) // one Debian boot with cloud-init installed
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
	}); err != nil {
		t.Fatal(err)
	}
	withRecorder(t, dir)
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
