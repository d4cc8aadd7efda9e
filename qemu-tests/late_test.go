//go:build qemu

package qemutests

import (
	"encoding/base64"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/earlyinit/earlyinit/internal/vm"
)

// TestLateRunnerWithoutSystemd boots a busybox root (no systemd), which
// earlyinit enters through `earlyinit late --exec /sbin/init`: the boot
// stage runs before init, the final stage beside it.
func TestLateRunnerWithoutSystemd(t *testing.T) {
	parallel(t, time.Minute)
	root := busyboxDisk(t, "root", "")
	seed := nocloudSeed("iid-late-1", "late-host")
	seed["user-data"] = `#cloud-config
bootcmd:
  - echo "bootcmd $INSTANCE_ID" >> /seen/bootcmd.log
write_files:
  - path: /etc/late/plain.txt
    content: plain text
    permissions: '0640'
  - path: /etc/late/b64.bin
    encoding: b64
    content: ` + base64.StdEncoding.EncodeToString([]byte("binary\x00data")) + `
    permissions: '0600'
runcmd:
  - echo "runcmd ran" >> /seen/runcmd.log
  - [sh, -c, "echo list item with 'quotes' >> /seen/runcmd.log"]
  - [sh, -c, "exit 3"]
final_message: "late final message, up $UPTIME seconds"
vendor_data: {prefix: [/bin/busybox, env, VENDOR_PREFIX=given]}
`
	// A vendor-data script: written apart from user-data's parts, run
	// after the user's scripts, after vendor_data.prefix.
	seed["vendor-data"] = "#!/bin/sh\necho \"vendor script, prefix $VENDOR_PREFIX\" >> /seen/vendor.log\n"
	iso := seedISO(t, "cidata", seed)
	res := boot(t, vm.Config{Append: "root=LABEL=root rw", Disks: []vm.Disk{{Path: root}, {Path: iso, If: "ide-cd"}}, RNG: true})
	mustContain(t, "console", res.Console, "late --exec", "stage boot starting", "TESTINIT: /sbin/init pid=1")
	mustContain(t, "init's record", seen(t, root), "init=/sbin/init", "pid=1\n")
	wantFile(t, root, "/seen/bootcmd.log", "bootcmd iid-late-1\n")
	wantFile(t, root, "/etc/late/plain.txt", "plain text")
	wantMode(t, root, "/etc/late/plain.txt", "0640")
	wantFile(t, root, "/etc/late/b64.bin", "binary\x00data")
	wantMode(t, root, "/etc/late/b64.bin", "0600")
	wantFile(t, root, "/seen/runcmd.log", "runcmd ran\nlist item with quotes\n")
	wantFile(t, root, "/var/lib/earlyinit/instances/iid-late-1/scripts/vendor/part-001", seed["vendor-data"])
	wantFile(t, root, "/seen/vendor.log", "vendor script, prefix given\n")
	// The failing runcmd item leaves status error (exit 1).
	st := catRoot(t, root, "/seen/status.json")
	mustContain(t, "earlyinit status", st, `"status": "error"`, "status-exit=1")
	mustContain(t, "earlyinit analyze", catRoot(t, root, "/seen/analyze.txt"),
		"initramfs (earlyinit", "datasource", "network", "stage boot: ", "bootcmd", "stage final: ", "scripts_user")
	lateLog := catRoot(t, root, "/seen/earlyinit.log")
	mustContain(t, "/var/log/earlyinit.log", lateLog, "late final message, up ", "earlyinit: [")
	if strings.Contains(lateLog, "$UPTIME") {
		t.Errorf("final_message not substituted:\n%s", lateLog)
	}

	// Second boot, same instance: bootcmd runs again, runcmd does not.
	res = boot(t, vm.Config{Append: "root=LABEL=root rw", Disks: []vm.Disk{{Path: root}, {Path: iso, If: "ide-cd"}}, RNG: true})
	wantFile(t, root, "/seen/bootcmd.log", "bootcmd iid-late-1\nbootcmd iid-late-1\n")
	if got := catRoot(t, root, "/seen/runcmd.log"); strings.Count(got, "runcmd ran") != 1 {
		t.Errorf("runcmd ran again on the same instance:\n%s", got)
	}
	wantFile(t, root, "/seen/vendor.log", "vendor script, prefix given\n")

	// Third boot, the seed ISO detached: no source answers, and the
	// instance stays (not None, which a NoCloud seed's instance would get
	// from cloud-init: provision.TestCachedInstanceAgainstCloudInit):
	// bootcmd runs for it, runcmd does not, the host name stays.
	res = boot(t, vm.Config{Append: "root=LABEL=root rw", Disks: []vm.Disk{{Path: root}}, RNG: true})
	mustContain(t, "console", res.Console, `instance "iid-late-1" (cached) stays`, "kept from the cache", "stage boot starting", "TESTINIT: /sbin/init pid=1")
	wantFile(t, root, "/seen/bootcmd.log", "bootcmd iid-late-1\nbootcmd iid-late-1\nbootcmd iid-late-1\n")
	if got := catRoot(t, root, "/seen/runcmd.log"); strings.Count(got, "runcmd ran") != 1 {
		t.Errorf("runcmd ran again with the seed detached:\n%s", got)
	}
	wantFile(t, root, "/var/lib/earlyinit/data/instance-id", "iid-late-1\n")
	wantFile(t, root, "/etc/hostname", "late-host\n")
}

// bgChildHook is the test init's hook for TestLateBootcmdBackgroundChild:
// it records whether bootcmd's background child still runs once the real
// init is up.
const bgChildHook = `#!/bin/busybox sh
p=$(/bin/busybox cat /seen/bg.pid)
c=
[ -n "$p" ] && read -r c < /proc/$p/comm
echo "background child pid=$p comm=$c" > /seen/bgchild.txt
`

// TestLateBootcmdBackgroundChild boots a busybox root (no systemd) whose
// bootcmd leaves a child in the background holding its output (`sleep 900
// &`, the common `mydaemon &`): the boot stage ends when bootcmd's shell
// does, and late --exec starts the real init within the usual bound,
// with the child still running. Before (issue 26) the boot stage waited
// for the child's output to end, 900s, and the init never started within
// the VM's timeout.
func TestLateBootcmdBackgroundChild(t *testing.T) {
	parallel(t)
	dir := filepath.Join(t.TempDir(), "root")
	if err := vm.BusyboxRoot(dir); err != nil {
		t.Fatal(err)
	}
	if err := vm.WriteTree(dir, map[string]string{"seen/hook": bgChildHook}); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(filepath.Join(dir, "seen/hook"), 0o755); err != nil {
		t.Fatal(err)
	}
	root := filepath.Join(t.TempDir(), "root.img")
	if err := vm.Ext4(root, dir, "root", "", 32); err != nil {
		t.Fatal(err)
	}
	seed := nocloudSeed("iid-late-bg", "late-bg")
	seed["user-data"] = `#cloud-config
bootcmd:
  - echo "bootcmd $INSTANCE_ID" >> /seen/bootcmd.log
  - sleep 900 & echo $! > /seen/bg.pid
  - echo "after the background child" >> /seen/bootcmd.log
`
	iso := seedISO(t, "cidata", seed)
	res := boot(t, vm.Config{Append: "root=LABEL=root rw", Disks: []vm.Disk{{Path: root}, {Path: iso, If: "ide-cd"}}, RNG: true})
	mustContain(t, "console", res.Console, "late --exec", "stage boot starting", "TESTINIT: /sbin/init pid=1")
	mustContain(t, "init's record", seen(t, root), "init=/sbin/init", "pid=1\n")
	wantFile(t, root, "/seen/bootcmd.log", "bootcmd iid-late-bg\nafter the background child\n")
	mustContain(t, "the hook's record", catRoot(t, root, "/seen/bgchild.txt"), "comm=sleep\n")
	if i := strings.Index(res.Console, "TESTINIT: "); i >= 0 {
		t.Logf("the init's line: %s", strings.SplitN(res.Console[i:], "\n", 2)[0])
	}
}
