//go:build qemu

package qemutests

import (
	"crypto/sha256"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/earlyinit/earlyinit/internal/vm"
)

// TestPanicInEachStep boots the faultinject build with a panic injected at
// the start of steps: each is recovered, logged with its stack, recorded as
// the step's error, and the boot reaches the real init. A panic in the root
// step before the root is mounted is the one case that stops the boot, with
// the same clear message as a root that cannot be mounted.
func TestPanicInEachStep(t *testing.T) {
	// Its boots are its subtests': it gives its slot to the first.
	parallel(t)
	for _, tc := range []struct {
		name   string
		steps  []string
		record bool // boot.json is written (the handoff step did not panic)
	}{
		// modules: the root wait starts coldplug itself and finds virtio.
		// network and runner: provisioning went as far as it could.
		{"modules-network-runner-handoff", []string{"modules", "network", "runner", "handoff"}, false},
		{"datasource", []string{"datasource"}, true},
		{"instance", []string{"instance"}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			parallel(t)
			root := busyboxDisk(t, "root", "")
			iso := seedISO(t, "cidata", nocloudSeed("iid-panic", "panic-host"))
			res := boot(t, vm.Config{Initrd: faultInitrd, Append: "root=LABEL=root rw earlyinit.test_panic=" + strings.Join(tc.steps, ","),
				Disks: []vm.Disk{{Path: root}, {Path: iso, If: "ide-cd"}}, RNG: true})
			for _, s := range tc.steps {
				mustContain(t, "console", res.Console,
					"step "+s+" panicked: fault injected by earlyinit.test_panic="+s,
					"internal/boot.injectFault(", // the stack
					"step "+s+" failed after")
			}
			mustContain(t, "console", res.Console, "TESTINIT: /sbin/init pid=1")
			mustContain(t, "init's record", seen(t, root), "init=/sbin/init", "pid=1\n")
			if !tc.record {
				return
			}
			failed := map[string]string{}
			for _, st := range record(t, root).Steps {
				if st.Error != "" {
					failed[st.Name] = st.Error
				}
			}
			for _, s := range tc.steps {
				if !strings.HasPrefix(failed[s], "panic: fault injected") {
					t.Errorf("boot record: step %s error %q", s, failed[s])
				}
				delete(failed, s)
			}
			if len(failed) > 0 {
				t.Errorf("other steps failed: %v", failed)
			}
		})
	}
	t.Run("root", func(t *testing.T) {
		parallel(t)
		root := busyboxDisk(t, "root", "")
		res := boot(t, vm.Config{Initrd: faultInitrd, Append: "root=LABEL=root rw earlyinit.test_panic=root",
			Disks: []vm.Disk{{Path: root}}, RNG: true, Timeout: 3 * time.Minute})
		mustContain(t, "console", res.Console, "step root panicked", "earlyinit: FATAL: panic: fault injected by earlyinit.test_panic=root", "Kernel panic")
		if strings.Contains(res.Console, "TESTINIT") {
			t.Errorf("an init ran without a root")
		}
	})
}

// TestReadOnlyRootDevice boots roots that only mount read-only: a
// write-protected disk, an ext4 with a read-only-compat feature the kernel
// does not know, and an ISO9660 root. Each is mounted read-only after the
// read-write mount fails, earlyinit writes nothing (one line says so), and
// the real init runs.
func TestReadOnlyRootDevice(t *testing.T) {
	// Its boots are its subtests': it gives its slot to the first.
	parallel(t)
	// With nothing writable, init prints the root's /proc/mounts line.
	const show = `init=/bin/sh -- -c "/bin/busybox grep -E ' / (ext4|iso9660) ' /proc/mounts; echo TESTINIT-RO; /bin/busybox poweroff -f"`
	for _, tc := range []struct {
		name, fstype string
		disk         func(t *testing.T) vm.Disk
	}{
		{"write-protected", "ext4", func(t *testing.T) vm.Disk {
			return vm.Disk{Path: busyboxDisk(t, "root", ""), ReadOnly: true}
		}},
		{"unknown-ro-compat-feature", "ext4", func(t *testing.T) vm.Disk {
			img := busyboxDisk(t, "root", "")
			if out, err := exec.Command("debugfs", "-w", "-R", "feature FEATURE_R30", img).CombinedOutput(); err != nil {
				t.Fatalf("debugfs: %v\n%s", err, out)
			}
			return vm.Disk{Path: img}
		}},
		{"iso9660", "iso9660", func(t *testing.T) vm.Disk {
			dir := filepath.Join(t.TempDir(), "root")
			if err := vm.BusyboxRoot(dir); err != nil {
				t.Fatal(err)
			}
			iso := filepath.Join(t.TempDir(), "root.iso")
			if err := vm.ISO(iso, dir, "root"); err != nil {
				t.Fatal(err)
			}
			return vm.Disk{Path: iso, If: "ide-cd"}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			parallel(t)
			d := tc.disk(t)
			before := fileSum(t, d.Path)
			seed := seedISO(t, "cidata", nocloudSeed("iid-ro", "ro-host"))
			res := boot(t, vm.Config{Append: "root=LABEL=root rw " + show,
				Disks: []vm.Disk{d, {Path: seed, If: "ide-cd"}}, RNG: true})
			mustContain(t, "console", res.Console,
				"read-write: ", "mounted it read-only instead",
				"the root is read-only: earlyinit writes nothing into it this boot",
				"TESTINIT-RO")
			if !regexp.MustCompile(` / ` + tc.fstype + ` ro[,\s]`).MatchString(res.Console) {
				t.Errorf("root not mounted read-only")
			}
			if strings.Contains(res.Console, "step instance") || strings.Contains(res.Console, "FATAL") {
				t.Errorf("earlyinit tried to provision a read-only root, or gave up")
			}
			if fileSum(t, d.Path) != before {
				t.Errorf("the root image changed")
			}
		})
	}
}

func fileSum(t *testing.T, path string) [32]byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return sha256.Sum256(b)
}
