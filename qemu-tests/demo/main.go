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

	"github.com/earlyinit/earlyinit/qemu-tests/vm"
)

func main() {
	kernel := flag.String("kernel", "", "kernel image")
	initrd := flag.String("initrd", "build/initramfs.cpio.gz", "earlyinit's initramfs")
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
	if err := vm.Ext4(img, root, "demo-root", "", 32); err != nil {
		log.Fatal(err)
	}
	cfg := vm.Config{
		Kernel: *kernel, Initrd: *initrd,
		Append:  "console=ttyS0 panic=-1 root=LABEL=demo-root rw quiet",
		Disks:   []vm.Disk{{Path: img}},
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
	if s, err := vm.Cat(img, "/seen/init.txt"); err == nil {
		fmt.Printf("\nWhat the real init saw (from the root disk after power-off):\n%s", indent(s))
	} else {
		log.Fatalf("demo: the real init left no record: %v", err)
	}
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
	for _, m := range stepRE.FindAllStringSubmatch(console, -1) {
		fmt.Fprintf(&b, "earlyinit step %-12s %s %s (finished %ss after earlyinit started)\n", m[2], m[3], m[4], m[1])
	}
	for _, l := range strings.Split(console, "\n") {
		if strings.Contains(l, "switch_root to") {
			fmt.Fprintf(&b, "%s\n", strings.TrimSpace(l[strings.Index(l, "switch_root"):]))
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
