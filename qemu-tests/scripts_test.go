//go:build qemu

package qemutests

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/earlyinit/earlyinit/internal/vm"
)

// rebootStub stands for sysvinit's shutdown in a busybox root: it records
// the request on the root's disk, says so on the console and reboots at
// once (QEMU's -no-reboot ends the run).
const rebootStub = `#!/bin/busybox sh
echo "shutdown $*" >> /seen/shutdown.log
: > /run/shutdown-requested
/bin/busybox sync
echo "TESTSHUTDOWN: $*" > /dev/console
/bin/busybox reboot -f
`

// waitForShutdown is the test init's hook: after the final stage wrote
// result.json, a reboot the runner asked for is given 10 s to happen
// before the test init powers off, so that what the console shows is the
// runner's decision, not a race.
const waitForShutdown = `#!/bin/busybox sh
i=0
while [ $i -lt 50 ]; do [ -f /run/shutdown-requested ] && /bin/busybox sleep 30; /bin/busybox sleep 0.2; i=$((i+1)); done
`

// TestScriptExitCodesAcrossBoots boots a root without systemd twice with
// a user-data script that exits with one of cloudbase-init's codes, and
// counts its runs and the reboots it asked for. cloudbase-init's meanings,
// as its documentation and the reference notes
// (../shared/seeds/002_6dcf7c1d94353b3f.txt) give them: "1001 - 立刻重启，并且
// 下次重启不再执行" (reboot now, do not run it again), "1002 - 现在不重启，下次
// 重启再次执行该plugin" (do not reboot now, run it again at the next boot),
// "1003 - 重启并且下次开机再次执行" (reboot, run it again at the next boot).
func TestScriptExitCodesAcrossBoots(t *testing.T) {
	// Its boots are its subtests': it gives its slot to the first.
	parallel(t)
	for _, c := range []struct {
		code        int
		wantRuns    int  // after two boots
		wantReboots int  // reboot requests over two boots
		firstReboot bool // the first boot ends in the script's reboot
	}{
		// Runs once; the first boot reboots; the second runs nothing.
		{1001, 1, 1, true},
		// Runs at both boots, never reboots.
		{1002, 2, 0, false},
		// Runs at both boots and reboots after each.
		{1003, 2, 2, true},
	} {
		t.Run(fmt.Sprint(c.code), func(t *testing.T) {
			parallel(t)
			dir := filepath.Join(t.TempDir(), "root")
			if err := vm.BusyboxRoot(dir); err != nil {
				t.Fatal(err)
			}
			if err := vm.WriteTree(dir, map[string]string{"sbin/shutdown": rebootStub, "seen/hook": waitForShutdown}); err != nil {
				t.Fatal(err)
			}
			for _, p := range []string{"sbin/shutdown", "seen/hook"} {
				if err := os.Chmod(filepath.Join(dir, p), 0o755); err != nil {
					t.Fatal(err)
				}
			}
			img := filepath.Join(t.TempDir(), "root.img")
			if err := vm.Ext4(img, dir, "root", "", 64); err != nil {
				t.Fatal(err)
			}
			seed := nocloudSeed(fmt.Sprintf("iid-exit-%d", c.code), "exit-host")
			seed["user-data"] = fmt.Sprintf("#!/bin/sh\necho run >> /seen/runs\nexit %d\n", c.code)
			iso := seedISO(t, "cidata", seed)
			cfg := vm.Config{Append: "root=LABEL=root rw", Disks: []vm.Disk{{Path: img}, {Path: iso, If: "ide-cd"}}, RNG: true}
			var consoles []string
			for i := 1; i <= 2; i++ {
				res := boot(t, cfg)
				consoles = append(consoles, res.Console)
				rebooted := strings.Contains(res.Console, "TESTSHUTDOWN: -r now")
				if i == 1 && rebooted != c.firstReboot {
					t.Errorf("exit %d, boot 1: rebooted %v, want %v", c.code, rebooted, c.firstReboot)
				}
				if !rebooted && !strings.Contains(res.Console, "TESTINIT: /sbin/init pid=1") {
					t.Errorf("exit %d, boot %d: neither a reboot nor the init's end on the console", c.code, i)
				}
			}
			runs := strings.Count(catRoot(t, img, "/seen/runs"), "run\n")
			if runs != c.wantRuns {
				t.Errorf("exit %d: the script ran %d times over two boots, want %d", c.code, runs, c.wantRuns)
			}
			reboots := 0
			if log, err := vm.Cat(img, "/seen/shutdown.log"); err == nil {
				reboots = strings.Count(log, "shutdown -r now")
			}
			if reboots != c.wantReboots {
				t.Errorf("exit %d: %d reboot requests over two boots, want %d", c.code, reboots, c.wantReboots)
			}
		})
	}
}
