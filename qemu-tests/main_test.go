//go:build qemu

// Package qemutests boots earlyinit's initramfs with the real Debian kernel
// under QEMU and asserts on the serial console and on the disks the guest
// leaves behind.
//
// Every test runs in parallel, -parallel boots at a time (two under make
// test), the longest first: see sched_test.go.
package qemutests

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/earlyinit/earlyinit/initramfs"
	"github.com/earlyinit/earlyinit/initramfs/gobuild"
	"github.com/earlyinit/earlyinit/internal/vm"
)

var (
	kver   string
	kernel string
	initrd string
	// faultInitrd is built with the faultinject tag: earlyinit.test_panic=
	// panics in the named steps.
	faultInitrd string
)

// TestMain builds the initramfs once per run, unless EARLYINIT_INITRAMFS
// names one already built (make test passes build/initramfs.img).
func TestMain(m *testing.M) {
	os.Exit(testMain(m))
}

func testMain(m *testing.M) int {
	flag.Parse()
	configureSched()
	kver = os.Getenv("EARLYINIT_KVER")
	if kver == "" {
		k, err := initramfs.NewestKernel("/boot")
		if err != nil {
			fmt.Fprintln(os.Stderr, "qemu-tests:", err, "(make deps installs it)")
			return 1
		}
		kver = k
	}
	kernel = vm.Kernel(kver)
	tmp, err := os.MkdirTemp("", "qemu-tests")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(tmp)
	for _, b := range []struct {
		dest *string
		env  string
		tags []string
	}{{&initrd, "EARLYINIT_INITRAMFS", nil}, {&faultInitrd, "EARLYINIT_INITRAMFS_FAULTINJECT", []string{"faultinject"}}} {
		if *b.dest = os.Getenv(b.env); *b.dest != "" {
			continue
		}
		_, file, _, _ := runtime.Caller(0)
		top := filepath.Dir(filepath.Dir(file))
		*b.dest = filepath.Join(tmp, b.env+".img")
		t0 := time.Now()
		binDir := filepath.Join(tmp, b.env)
		if err := os.MkdirAll(binDir, 0o755); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		bin, err := gobuild.Compile(filepath.Join(top, "cmd/earlyinit"), b.tags, binDir)
		if err != nil {
			fmt.Fprintln(os.Stderr, "qemu-tests: build earlyinit:", err)
			return 1
		}
		res, err := initramfs.Build(initramfs.Options{KVer: kver, ModulesRoot: "/", Config: filepath.Join(top, "initramfs/modules.conf"),
			Binary: bin, Output: *b.dest})
		if err != nil {
			fmt.Fprintln(os.Stderr, "qemu-tests: build initramfs:", err)
			return 1
		}
		fmt.Fprintf(os.Stderr, "qemu-tests: built initramfs %v (%d modules, %.2f MB) in %s\n", b.tags, res.Modules, float64(res.Size)/1e6, time.Since(t0).Round(time.Millisecond))
	}
	for _, tool := range []string{"qemu-system-x86_64", "mkfs.ext4", "debugfs", "/bin/busybox"} {
		if _, err := lookPath(tool); err != nil {
			fmt.Fprintf(os.Stderr, "qemu-tests: %s missing: run make deps\n", tool)
			return 1
		}
	}
	fmt.Fprintf(os.Stderr, "qemu-tests: kernel %s, accel %s\n", kver, vm.Accel(kernel))
	return m.Run()
}

// boot runs a VM with our kernel and initramfs and logs its console.
func boot(t *testing.T, c vm.Config) *vm.Result {
	t.Helper()
	if c.Kernel == "" {
		c.Kernel = kernel
	}
	if c.Initrd == "" {
		c.Initrd = initrd
	}
	if !strings.Contains(c.Append, "console=") {
		c.Append = "console=ttyS0 panic=-1 " + c.Append
	}
	if c.Timeout == 0 {
		c.Timeout = 4 * time.Minute
	}
	res, err := vm.Run(context.Background(), c)
	if res != nil {
		t.Logf("console (%s, %s):\n%s", res.Accel, res.Duration.Round(time.Millisecond), res.Console)
	}
	if err != nil {
		t.Fatalf("VM: %v", err)
	}
	return res
}
