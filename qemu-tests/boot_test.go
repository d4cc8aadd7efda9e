//go:build qemu

package qemutests

import (
	"encoding/json"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/earlyinit/earlyinit/internal/vm"
)

// bootRecord is the part of /run/earlyinit/boot.json the tests read.
type bootRecord struct {
	Steps []struct {
		Name  string `json:"name"`
		Error string `json:"error"`
	} `json:"steps"`
	Init     string `json:"init"`
	Disabled bool   `json:"disabled"`
}

func record(t *testing.T, img string) bootRecord {
	t.Helper()
	s, err := vm.Cat(img, "/seen/boot.json")
	if err != nil {
		t.Fatal(err)
	}
	var r bootRecord
	if err := json.Unmarshal([]byte(s), &r); err != nil {
		t.Fatalf("boot.json: %v\n%s", err, s)
	}
	return r
}

func TestRootSpecs(t *testing.T) {
	// Its boots are its subtests': it gives its slot to the first.
	parallel(t)
	const uuid = "5a1e6c1d-2b3c-4d5e-8f90-0123456789ab"
	for _, tt := range []struct {
		name, root string
	}{
		{"device", "/dev/vda"},
		{"label", "LABEL=eiroot"},
		{"uuid", "UUID=" + strings.ToUpper(uuid)},
	} {
		t.Run(tt.name, func(t *testing.T) {
			parallel(t)
			img := busyboxDisk(t, "eiroot", uuid)
			res := boot(t, vm.Config{Append: "root=" + tt.root + " rw earlyinit.timeout=20 -- single extra", Disks: []vm.Disk{{Path: img}}, RNG: true})
			s := seen(t, img)
			mustContain(t, "init's record", s, "init=/sbin/init", "pid=1\n", "args=single extra\n", "root="+tt.root)
			// The kernel mounts moved into the real root, nothing of the
			// initramfs left mounted.
			for _, m := range []string{" /proc proc ", " /sys sysfs ", " /dev devtmpfs ", " /run tmpfs "} {
				mustContain(t, "/proc/mounts", s, m)
			}
			if strings.Contains(s, "/newroot") {
				t.Errorf("a mount under /newroot was left behind:\n%s", s)
			}
			mustContain(t, "console", res.Console, "earlyinit: ", "step modules done", "step root done", "switch_root to /sbin/init", "TESTINIT: /sbin/init pid=1")
			r := record(t, img)
			if r.Init != "/sbin/init" || r.Disabled || len(r.Steps) < 2 || r.Steps[0].Name != "modules" || r.Steps[1].Name != "root" {
				t.Errorf("boot record %+v", r)
			}
			for _, st := range r.Steps {
				if st.Error != "" {
					t.Errorf("step %s failed: %s", st.Name, st.Error)
				}
			}
		})
	}
}

func TestInitArgument(t *testing.T) {
	parallel(t)
	img := busyboxDisk(t, "", "")
	res := boot(t, vm.Config{Append: "root=/dev/vda rw init=/bin/altinit", Disks: []vm.Disk{{Path: img}}, RNG: true})
	mustContain(t, "init's record", seen(t, img), "init=/bin/altinit", "pid=1\n")
	mustContain(t, "console", res.Console, "switch_root to /bin/altinit")
}

func TestReadOnlyRoot(t *testing.T) {
	parallel(t)
	img := busyboxDisk(t, "", "")
	// With ro the init cannot record to the disk: it prints the root's
	// line of /proc/mounts on the console instead.
	res := boot(t, vm.Config{Append: `root=/dev/vda ro init=/bin/sh -- -c "/bin/busybox grep -w ext4 /proc/mounts; /bin/busybox poweroff -f"`, Disks: []vm.Disk{{Path: img}}, RNG: true})
	if !regexp.MustCompile(`/dev/vda / ext4 ro[,\s]`).MatchString(res.Console) {
		t.Errorf("root not mounted read-only as the cmdline asked")
	}
}

func TestDisabled(t *testing.T) {
	parallel(t)
	img := busyboxDisk(t, "", "")
	res := boot(t, vm.Config{Append: "root=/dev/vda rw earlyinit=disabled", Disks: []vm.Disk{{Path: img}}, RNG: true})
	mustContain(t, "console", res.Console, "earlyinit=disabled on the command line", "TESTINIT: /sbin/init pid=1")
	if r := record(t, img); !r.Disabled {
		t.Errorf("boot record does not say disabled: %+v", r)
	}
}

func TestMissingRoot(t *testing.T) {
	parallel(t)
	img := busyboxDisk(t, "other", "")
	res := boot(t, vm.Config{Append: "root=LABEL=nosuchroot rw earlyinit.timeout=3", Disks: []vm.Disk{{Path: img}}, RNG: true, Timeout: 3 * time.Minute})
	mustContain(t, "console", res.Console,
		"block devices seen:",
		`vda ext4 LABEL="other"`,
		"filesystems known to the kernel:",
		"earlyinit: FATAL: cannot mount root",
		"Kernel panic")
	if strings.Contains(res.Console, "TESTINIT") {
		t.Errorf("an init ran without a root")
	}
	// The wait gave up at the bound: a module load already in the kernel
	// when the bound passes (seconds under TCG) finishes first, no more.
	m := regexp.MustCompile(`cannot mount root root=LABEL=nosuchroot after ([0-9.]+)s: no such device`).FindStringSubmatch(res.Console)
	if m == nil {
		t.Fatalf("no clear root error on the console")
	}
	waited, _ := strconv.ParseFloat(m[1], 64)
	if waited < 3 || waited > 3+15 {
		t.Errorf("waited %.1fs for the root with earlyinit.timeout=3", waited)
	}
}

func TestNoRNG(t *testing.T) {
	parallel(t)
	img := busyboxDisk(t, "", "")
	res := boot(t, vm.Config{Append: "root=/dev/vda rw", Disks: []vm.Disk{{Path: img}}, RNG: false})
	mustContain(t, "console", res.Console, "TESTINIT: /sbin/init pid=1")
	seen(t, img)
}
