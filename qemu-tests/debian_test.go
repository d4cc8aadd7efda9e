//go:build qemu

package qemutests

import (
	"encoding/base64"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/earlyinit/earlyinit/internal/vm"
)

const (
	e2eMAC   = "52:54:00:12:34:01"
	aliceKey = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIGuJbD/mAw1Xx0vV+jXz/cD7eOGBx5CYI2UBBLPW8qHq alice@e2e"
	// e2eBin is what the b64 write_files entry holds: bytes that are not
	// text, so a decoding slip shows.
	e2eBin = "\x00\x01binary\xff\xfe e2e\n"
)

// e2eNetwork renames the NIC by its MAC and gives it a static address.
const e2eNetwork = `version: 2
ethernets:
  nic0:
    match:
      macaddress: "` + e2eMAC + `"
    set-name: lan0
    addresses: [192.0.2.50/24]
`

// e2eUserData is the cloud-config of the end-to-end boots. runcmd writes a
// marker line each time it runs, then the NIC as it sees it; bootcmd a
// line each boot. final is appended (power_state, or a failing runcmd).
func e2eUserData(runcmd []string, final string) string {
	var rc strings.Builder
	for _, c := range runcmd {
		fmt.Fprintf(&rc, "  - %s\n", c)
	}
	return `#cloud-config
users:
  - default
  - name: alice
    gecos: Alice
    groups: [sudo]
    shell: /bin/bash
    sudo: "ALL=(ALL) NOPASSWD:ALL"
    ssh_authorized_keys:
      - ` + aliceKey + `
write_files:
  - path: /etc/e2e/plain.txt
    content: |
      plain text from user-data
    owner: root:root
    permissions: '0640'
  - path: /etc/e2e/b64.bin
    encoding: b64
    content: ` + base64.StdEncoding.EncodeToString([]byte(e2eBin)) + `
    owner: alice:alice
    permissions: '0600'
    # alice does not exist before users_groups: cloud-init's way is defer.
    defer: true
bootcmd:
  - echo "bootcmd $INSTANCE_ID $(date -u +%s)" >> /var/log/e2e-bootcmd.log
runcmd:
` + rc.String() + final
}

var e2eRuncmd = []string{
	`echo "runcmd ran" >> /var/log/e2e-runcmd.log`,
	`ip -o addr show lan0 >> /var/log/e2e-runcmd.log`,
	`ip -o link >> /var/log/e2e-runcmd.log`,
	// alice's sudoers entry works, without a password.
	`runuser -u alice -- sudo -n id -u > /var/log/e2e-sudo.log 2>&1`,
	// sshd accepts its configuration with the regenerated host keys.
	`/usr/sbin/sshd -t > /var/log/e2e-sshd.log 2>&1 && echo sshd-config-ok >> /var/log/e2e-sshd.log`,
}

func e2eSeed(t *testing.T, iid, userData string) string {
	t.Helper()
	return seedISO(t, "cidata", map[string]string{
		"meta-data":      "instance-id: " + iid + "\nlocal-hostname: e2e-host\n",
		"network-config": e2eNetwork,
		"user-data":      userData,
	})
}

// bootDebian boots the Debian root disk with a NoCloud drive until the
// guest powers itself off.
func bootDebian(t *testing.T, root, seed string) *vm.Result {
	t.Helper()
	res := boot(t, vm.Config{
		Append:   "root=LABEL=root rw console=ttyS0 panic=-1 earlyinit.timeout=30",
		Disks:    []vm.Disk{{Path: root}, {Path: seed, If: "ide-cd"}},
		NICs:     []vm.NIC{{MAC: e2eMAC}},
		RNG:      true,
		MemoryMB: 1024,
		Timeout:  6 * time.Minute,
	})
	t.Logf("boot took %s (%s)", res.Duration.Round(time.Second), res.Accel)
	return res
}

// dumpLogs logs the runner's logs from the disk when the test failed.
func dumpLogs(t *testing.T, img string) {
	t.Helper()
	if !t.Failed() {
		return
	}
	for _, f := range []string{"/var/log/earlyinit.log", "/var/log/earlyinit-output.log", "/var/log/e2e-record.log"} {
		s, err := vm.Cat(img, f)
		t.Logf("%s (%v):\n%s", f, err, s)
	}
}

var ownerRe = regexp.MustCompile(`User:\s+(\d+)\s+Group:\s+(\d+)`)

// wantOwner checks a path's numeric owner in the image.
func wantOwner(t *testing.T, img, path string, uid, gid int) {
	t.Helper()
	st, err := vm.Stat(img, path)
	if err != nil {
		t.Errorf("%v", err)
		return
	}
	m := ownerRe.FindStringSubmatch(st)
	if m == nil || m[1] != strconv.Itoa(uid) || m[2] != strconv.Itoa(gid) {
		t.Errorf("%s: owner %v, want %d:%d", path, m, uid, gid)
	}
}

// passwdEntry returns a user's uid and gid from the image's /etc/passwd.
func passwdEntry(t *testing.T, img, name string) (line string, uid, gid int) {
	t.Helper()
	for _, l := range strings.Split(catRoot(t, img, "/etc/passwd"), "\n") {
		f := strings.Split(l, ":")
		if len(f) == 7 && f[0] == name {
			uid, _ = strconv.Atoi(f[2])
			gid, _ = strconv.Atoi(f[3])
			return l, uid, gid
		}
	}
	t.Fatalf("/etc/passwd has no user %s", name)
	return "", 0, 0
}

// countLines counts the lines of path in img that match re.
func countLines(t *testing.T, img, path, re string) int {
	t.Helper()
	return len(regexp.MustCompile("(?m)"+re).FindAllString(catRoot(t, img, path), -1))
}

// TestDebianEndToEnd boots a real Debian bookworm root (systemd,
// networkd) through earlyinit's initramfs with a NoCloud drive, and
// checks on the disk, after the guest powered itself off, that the late
// stages applied the user-data: on a first boot, on a second boot of the
// same instance, and on a boot with a new instance id. A second copy of
// the root checks that a failing runcmd leaves status error and the
// system still reaches multi-user.target.
func TestDebianEndToEnd(t *testing.T) {
	parallel(t, 4*time.Minute) // four Debian boots
	dir := debianDir(t)
	t0 := time.Now()
	// Both roots carry a recorder, ordered after multi-user.target and
	// the final stage: it saves what /run (a tmpfs) knows to /var/log and
	// powers off. When power_state already powered off, the shutdown
	// cancels it, so it runs only on boots without a power_state action.
	withRecorder(t, dir)
	root := filepath.Join(t.TempDir(), "root.img")
	failRoot := filepath.Join(t.TempDir(), "fail.img")
	for _, img := range []string{root, failRoot} {
		if err := vm.Ext4(img, dir, "root", "", 1024); err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("root images made in %s", time.Since(t0).Round(time.Millisecond))

	t.Run("instance", func(t *testing.T) {
		testInstanceBoots(t, root)
	})
	t.Run("failing-runcmd", func(t *testing.T) {
		testFailingRuncmd(t, failRoot)
	})
}

func testInstanceBoots(t *testing.T, root string) {
	defer dumpLogs(t, root)
	imageKey := catRoot(t, root, "/etc/ssh/ssh_host_ed25519_key.pub")
	userData := e2eUserData(e2eRuncmd, "power_state:\n  mode: poweroff\n")
	seed1 := e2eSeed(t, "iid-e2e-1", userData)

	// Boot 1: a first boot of instance iid-e2e-1.
	poweredOffByPowerState(t, bootDebian(t, root, seed1))
	passwd, uid, gid := passwdEntry(t, root, "alice")
	if !strings.HasPrefix(passwd, "alice:x:") || !strings.HasSuffix(passwd, ":Alice:/home/alice:/bin/bash") {
		t.Errorf("alice in /etc/passwd: %q", passwd)
	}
	passwdEntry(t, root, "debian") // the default user
	if !regexp.MustCompile(`(?m)^sudo:x:27:(.*,)?alice(,.*)?$`).MatchString(catRoot(t, root, "/etc/group")) {
		t.Errorf("alice is not in group sudo:\n%s", catRoot(t, root, "/etc/group"))
	}
	wantFile(t, root, "/home/alice/.ssh/authorized_keys", aliceKey+"\n")
	wantMode(t, root, "/home/alice/.ssh/authorized_keys", "0600")
	wantOwner(t, root, "/home/alice/.ssh/authorized_keys", uid, gid)
	wantMode(t, root, "/home/alice/.ssh", "0700")
	wantOwner(t, root, "/home/alice/.ssh", uid, gid)
	mustContain(t, "sudoers", catRoot(t, root, "/etc/sudoers.d/90-earlyinit-users"), "alice ALL=(ALL) NOPASSWD:ALL\n")
	wantMode(t, root, "/etc/sudoers.d/90-earlyinit-users", "0440")
	wantFile(t, root, "/var/log/e2e-sudo.log", "0\n")
	wantFile(t, root, "/var/log/e2e-sshd.log", "sshd-config-ok\n")

	wantFile(t, root, "/etc/e2e/plain.txt", "plain text from user-data\n")
	wantMode(t, root, "/etc/e2e/plain.txt", "0640")
	wantOwner(t, root, "/etc/e2e/plain.txt", 0, 0)
	wantFile(t, root, "/etc/e2e/b64.bin", e2eBin)
	wantMode(t, root, "/etc/e2e/b64.bin", "0600")
	wantOwner(t, root, "/etc/e2e/b64.bin", uid, gid)

	key1 := catRoot(t, root, "/etc/ssh/ssh_host_ed25519_key.pub")
	if !strings.HasPrefix(key1, "ssh-ed25519 ") || key1 == imageKey {
		t.Errorf("host key not regenerated: image %q, after boot %q", imageKey, key1)
	}
	wantMode(t, root, "/etc/ssh/ssh_host_ed25519_key", "0600")
	wantFile(t, root, "/etc/hostname", "e2e-host\n")

	// runcmd ran in the final stage with the NIC renamed and addressed.
	rc := catRoot(t, root, "/var/log/e2e-runcmd.log")
	if !regexp.MustCompile(`(?m)^\d+: lan0\s+inet 192\.0\.2\.50/24 `).MatchString(rc) {
		t.Errorf("runcmd did not see lan0 with 192.0.2.50/24:\n%s", rc)
	}
	if !regexp.MustCompile(`(?m)^\d+: lan0: <[^>]*\bUP\b.*link/ether ` + e2eMAC).MatchString(rc) {
		t.Errorf("runcmd did not see lan0 up with MAC %s:\n%s", e2eMAC, rc)
	}
	if n := countLines(t, root, "/var/log/e2e-runcmd.log", `^runcmd ran$`); n != 1 {
		t.Errorf("runcmd ran %d times on the first boot", n)
	}
	if n := countLines(t, root, "/var/log/e2e-bootcmd.log", `^bootcmd iid-e2e-1 \d+$`); n != 1 {
		t.Errorf("bootcmd ran %d times with INSTANCE_ID=iid-e2e-1 on the first boot:\n%s", n, catRoot(t, root, "/var/log/e2e-bootcmd.log"))
	}
	if log := catRoot(t, root, "/var/log/earlyinit.log"); strings.Contains(log, "ERROR") {
		t.Errorf("the runner logged errors on the first boot")
	}
	if t.Failed() {
		t.FailNow()
	}

	// Boot 2: the same instance. bootcmd runs every boot; runcmd and the
	// host keys are per instance.
	// power_state is per instance too: the recorder powers off.
	res2 := bootDebian(t, root, seed1)
	// The network config is the same as last written: it is left alone.
	mustContain(t, "console", res2.Console, "network: config unchanged since last written; left as is")
	st, rec := recorded(t, root, res2)
	if st.Status != "done" || len(st.Errors) != 0 {
		t.Errorf("earlyinit status on the second boot = %q, errors %q; want done", st.Status, st.Errors)
	}
	mustContain(t, "recorder", rec, "status exit: 0\n")
	if n := countLines(t, root, "/var/log/e2e-bootcmd.log", `^bootcmd iid-e2e-1 \d+$`); n != 2 {
		t.Errorf("bootcmd ran %d times in two boots", n)
	}
	if n := countLines(t, root, "/var/log/e2e-runcmd.log", `^runcmd ran$`); n != 1 {
		t.Errorf("runcmd ran %d times in two boots of one instance", n)
	}
	if k := catRoot(t, root, "/etc/ssh/ssh_host_ed25519_key.pub"); k != key1 {
		t.Errorf("host key changed on a second boot of the same instance")
	}

	// Boot 3: a new instance id on the same root reruns the per-instance
	// modules.
	poweredOffByPowerState(t, bootDebian(t, root, e2eSeed(t, "iid-e2e-2", userData)))
	wantFile(t, root, "/var/lib/earlyinit/data/instance-id", "iid-e2e-2\n")
	if n := countLines(t, root, "/var/log/e2e-runcmd.log", `^runcmd ran$`); n != 2 {
		t.Errorf("runcmd ran %d times, want 2 (once per instance)", n)
	}
	if n := countLines(t, root, "/var/log/e2e-bootcmd.log", `^bootcmd iid-e2e-2 \d+$`); n != 1 {
		t.Errorf("bootcmd ran %d times with INSTANCE_ID=iid-e2e-2", n)
	}
	if k := catRoot(t, root, "/etc/ssh/ssh_host_ed25519_key.pub"); k == key1 || k == imageKey {
		t.Errorf("host key not regenerated for the new instance")
	}
	if _, uid2, _ := passwdEntry(t, root, "alice"); uid2 != uid {
		t.Errorf("alice's uid changed from %d to %d", uid, uid2)
	}
}

// The recorder: once multi-user.target is reached and the final stage is
// over, it saves earlyinit status and the state of multi-user.target to
// /var/log, and powers off.
const recordUnit = `[Unit]
Description=e2e: record earlyinit status, then power off
After=multi-user.target earlyinit-final.service

[Service]
Type=oneshot
ExecStart=/bin/sh /usr/local/sbin/e2e-record
StandardOutput=journal+console

[Install]
WantedBy=multi-user.target
`

const recordScript = `#!/bin/sh
exec > /var/log/e2e-record.log 2>&1
echo "multi-user.target: $(systemctl is-active multi-user.target)"
echo "earlyinit-final.service: $(systemctl is-active earlyinit-final.service)"
timeout 120 /run/earlyinit/earlyinit status --wait --format json > /var/log/e2e-status.json
echo "status exit: $?"
/run/earlyinit/earlyinit analyze > /var/log/e2e-analyze.txt 2>&1
/run/earlyinit/earlyinit analyze plot > /var/log/e2e-plot.svg 2>/var/log/e2e-plot.err
sync
echo "E2E-RECORDED" > /dev/console
systemctl poweroff --no-block
`

// e2eStatus is what `earlyinit status --format json` printed, as the
// recorder saved it.
type e2eStatus struct {
	Status string   `json:"status"`
	Errors []string `json:"errors"`
}

// recorded checks that the recorder ran on the last boot (and so that
// power_state did not power off) and returns the status it saved and its
// log.
func recorded(t *testing.T, img string, res *vm.Result) (e2eStatus, string) {
	t.Helper()
	var st e2eStatus
	if !strings.Contains(res.Console, "E2E-RECORDED") {
		t.Fatalf("the recorder did not run")
	}
	rec := catRoot(t, img, "/var/log/e2e-record.log")
	mustContain(t, "recorder", rec, "multi-user.target: active\n")
	if a, err := vm.Cat(img, "/var/log/e2e-analyze.txt"); err == nil {
		t.Logf("earlyinit analyze:\n%s", a)
	}
	// The timeline: a well-formed SVG with the initramfs steps, the
	// switch and the late stages' modules on it.
	plot := catRoot(t, img, "/var/log/e2e-plot.svg")
	if err := xml.Unmarshal([]byte(plot), new(struct{})); err != nil || !strings.HasPrefix(plot, "<?xml") {
		t.Errorf("earlyinit analyze plot: not an SVG document (%v): %.200s\n%s", err, plot, catRoot(t, img, "/var/log/e2e-plot.err"))
	}
	mustContain(t, "analyze plot", plot, ">datasource (", "switch to /sbin/init at ", ">boot stage (", ">final stage (", ">bootcmd (")
	s := catRoot(t, img, "/var/log/e2e-status.json")
	if err := json.Unmarshal([]byte(s), &st); err != nil {
		t.Fatalf("earlyinit status --format json: %v\n%s\nrecorder: %s", err, s, rec)
	}
	return st, rec
}

// poweredOffByPowerState checks that power_state, not the recorder, ended
// the last boot.
func poweredOffByPowerState(t *testing.T, res *vm.Result) {
	t.Helper()
	if strings.Contains(res.Console, "E2E-RECORDED") {
		t.Errorf("the recorder powered off: power_state did not")
	}
	mustContain(t, "console", res.Console, "running [shutdown -P now]", "reboot: Power down")
}

func testFailingRuncmd(t *testing.T, root string) {
	defer dumpLogs(t, root)
	runcmd := []string{`echo "runcmd ran" >> /var/log/e2e-runcmd.log`, `"false"`}
	res := bootDebian(t, root, e2eSeed(t, "iid-e2e-fail", e2eUserData(runcmd, "")))
	st, rec := recorded(t, root, res)
	mustContain(t, "recorder", rec, "status exit: 1\n")
	if st.Status != "error" || len(st.Errors) == 0 || !strings.Contains(strings.Join(st.Errors, "\n"), "runcmd") {
		t.Errorf("earlyinit status = %q, errors %q; want error naming runcmd", st.Status, st.Errors)
	}
	// The modules around the failing one still ran.
	if n := countLines(t, root, "/var/log/e2e-runcmd.log", `^runcmd ran$`); n != 1 {
		t.Errorf("runcmd's first command ran %d times", n)
	}
	wantFile(t, root, "/etc/e2e/b64.bin", e2eBin)
	wantFile(t, root, "/etc/hostname", "e2e-host\n")
}
