// Command demo boots earlyinit's initramfs in QEMU with a sample root disk,
// shows the console live, and ends with what earlyinit did and how long
// each step took. `make demo` runs it.
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/earlyinit/earlyinit/internal/vm"
)

func main() {
	kernel := flag.String("kernel", "", "kernel image")
	initrd := flag.String("initrd", "build/initramfs.img", "earlyinit's initramfs")
	flag.Parse()
	log.SetFlags(0)
	if *kernel == "" {
		log.Fatal("demo: -kernel is required")
	}
	tmp, err := os.MkdirTemp("", "earlyinit-demo")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(tmp)

	root := filepath.Join(tmp, "root")
	img := filepath.Join(tmp, "root.img")
	if err := vm.BusyboxRoot(root); err != nil {
		log.Fatal(err)
	}
	// A root that looks like a systemd distro to renderer detection.
	if err := vm.WriteTree(root, map[string]string{"usr/sbin/ip": "", "bin/systemctl": "", "usr/lib/systemd/systemd-udevd": ""}); err != nil {
		log.Fatal(err)
	}
	if err := vm.Ext4(img, root, "demo-root", "", 32); err != nil {
		log.Fatal(err)
	}
	// An OpenStack config drive, as nova writes it.
	seed := filepath.Join(tmp, "seed")
	iso := filepath.Join(tmp, "config-2.iso")
	if err := vm.WriteTree(seed, vm.DemoDrive()); err != nil {
		log.Fatal(err)
	}
	if err := vm.ISO(iso, seed, "config-2"); err != nil {
		log.Fatal(err)
	}
	cfg := vm.Config{
		Kernel: *kernel, Initrd: *initrd,
		Append:  "console=ttyS0 panic=-1 root=LABEL=demo-root rw quiet",
		Disks:   []vm.Disk{{Path: img}, {Path: iso, If: "ide-cd"}},
		NICs:    []vm.NIC{{MAC: "fa:16:3e:00:00:0b"}, {MAC: "fa:16:3e:00:00:0a"}},
		RNG:     true,
		Console: os.Stdout,
		Timeout: 5 * time.Minute,
	}
	fmt.Printf("demo: booting %s with %s (accel %s)\n\n", *kernel, *initrd, vm.Accel(*kernel))
	res, err := vm.Run(context.Background(), cfg)
	if err != nil {
		log.Fatalf("demo: %v", err)
	}
	fmt.Print(summary(res.Console))
	fmt.Printf("\nWhat earlyinit left in the root disk (read after power-off):\n")
	for _, f := range []string{"/var/lib/earlyinit/data/instance-id", "/etc/hostname", "/etc/hosts",
		"/etc/systemd/network/10-cloud-init-eth0.network", "/etc/systemd/network/10-cloud-init-eth1.network"} {
		s, err := vm.Cat(img, f)
		if err != nil || s == "" {
			fmt.Printf("%s: missing\n", f)
			continue
		}
		fmt.Printf("%s:\n%s", f, indent(s))
	}
	s, err := vm.Cat(img, "/seen/init.txt")
	if err != nil || s == "" {
		log.Fatalf("demo: the real init left no record: %v", err)
	}
	var nics []string
	for _, l := range strings.Split(s, "\n") {
		if strings.HasPrefix(l, "nic ") {
			nics = append(nics, strings.TrimPrefix(l, "nic "))
		}
	}
	fmt.Printf("NICs the real init saw (name MAC): %s\n", strings.Join(nics, "; "))
}

var (
	stepRE = regexp.MustCompile(`earlyinit: \[\s*([0-9.]+)\] step (\S+) (done in|failed after) (\S+)`)
	initRE = regexp.MustCompile(`TESTINIT: (\S+) pid=1 .*uptime=([0-9.]+)`)
	kernRE = regexp.MustCompile(`\[\s*([0-9.]+)\] Run /init as init process`)
)

// summary extracts earlyinit's step timings and the real init's start
// from the console.
func summary(console string) string {
	var b strings.Builder
	b.WriteString("\n==== earlyinit demo summary ====\n")
	if m := kernRE.FindStringSubmatch(console); m != nil {
		fmt.Fprintf(&b, "kernel started /init at      %ss (uptime)\n", m[1])
	}
	// The console shows earlyinit's log twice (live, and again where the
	// late stage replays the initramfs log): each line once.
	seen := map[string]bool{}
	for _, m := range stepRE.FindAllStringSubmatch(console, -1) {
		if seen[m[2]] {
			continue
		}
		seen[m[2]] = true
		fmt.Fprintf(&b, "earlyinit step %-12s %s %s (finished %ss after earlyinit started)\n", m[2], m[3], m[4], m[1])
	}
	for _, l := range strings.Split(console, "\n") {
		if i := strings.Index(l, "switch_root to"); i >= 0 && !seen["switch_root"] {
			seen["switch_root"] = true
			fmt.Fprintf(&b, "%s\n", strings.TrimSpace(l[i:]))
		}
	}
	if m := initRE.FindStringSubmatch(console); m != nil {
		fmt.Fprintf(&b, "real init %s started as PID 1 at %ss (uptime)\n", m[1], m[2])
	} else {
		b.WriteString("the real init did not report in\n")
	}
	return b.String()
}

func indent(s string) string {
	return "  " + strings.ReplaceAll(strings.TrimRight(s, "\n"), "\n", "\n  ") + "\n"
}
