//go:build qemu

package qemutests

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/earlyinit/earlyinit/internal/vm"
)

func lookPath(tool string) (string, error) {
	if filepath.IsAbs(tool) {
		_, err := os.Stat(tool)
		return tool, err
	}
	return exec.LookPath(tool)
}

// busyboxDisk makes an ext4 root disk with the recording busybox init.
func busyboxDisk(t *testing.T, label, uuid string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "root")
	if err := vm.BusyboxRoot(dir); err != nil {
		t.Fatal(err)
	}
	img := filepath.Join(t.TempDir(), "root.img")
	if err := vm.Ext4(img, dir, label, uuid, 32); err != nil {
		t.Fatal(err)
	}
	return img
}

// seen returns what the guest's init recorded, failing the test if it never
// ran.
func seen(t *testing.T, img string) string {
	t.Helper()
	s, err := vm.Cat(img, "/seen/init.txt")
	if err != nil || s == "" {
		t.Fatalf("the real init did not run (no /seen/init.txt on the root disk): %v", err)
	}
	return s
}

func mustContain(t *testing.T, what, s string, wants ...string) {
	t.Helper()
	for _, w := range wants {
		if !strings.Contains(s, w) {
			t.Errorf("%s does not contain %q", what, w)
		}
	}
}
