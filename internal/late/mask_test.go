package late

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/earlyinit/earlyinit/internal/paths"
	"github.com/earlyinit/earlyinit/internal/rootfs"
)

func TestMaskCloudInit(t *testing.T) {
	rootDir, runDir := t.TempDir(), t.TempDir()
	// Debian's cloud-init 22.4 in /lib, an admin's override in /etc.
	for _, p := range []string{
		"lib/systemd/system/cloud-init-local.service",
		"lib/systemd/system/cloud-init.service",
		"lib/systemd/system/cloud-config.service",
		"lib/systemd/system/cloud-init.target",
		"etc/systemd/system/cloud-final.service",
	} {
		if err := os.MkdirAll(filepath.Join(rootDir, filepath.Dir(p)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(rootDir, p), []byte("[Unit]\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	root, err := rootfs.Open(rootDir)
	if err != nil {
		t.Fatal(err)
	}
	run, err := rootfs.Open(runDir)
	if err != nil {
		t.Fatal(err)
	}
	masked, stoodIn, err := MaskCloudInit(root, run, paths.LateBinary)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"cloud-init-local.service", "cloud-init.service", "cloud-config.service"}
	if !slices.Equal(masked, want) {
		t.Errorf("masked %v, want %v", masked, want)
	}
	for _, u := range want {
		if l, err := os.Readlink(filepath.Join(runDir, SystemDir, u)); err != nil || l != "/dev/null" {
			t.Errorf("%s: link %q, %v; want /dev/null", u, l, err)
		}
	}
	// cloud-final.service, defined in /etc (which outranks SystemDir), is
	// stood in for in controlDir, with the drop-in that keeps the image's
	// commands from running.
	if !slices.Equal(stoodIn, []string{cloudFinal}) {
		t.Errorf("stood in for %v, want %s", stoodIn, cloudFinal)
	}
	if b, err := os.ReadFile(filepath.Join(runDir, controlDir, cloudFinal)); err != nil || string(b) != string(standIn(paths.LateBinary)) {
		t.Errorf("stand-in %q, %v", b, err)
	}
	if b, err := os.ReadFile(filepath.Join(runDir, controlDir, cloudFinal+".d", standInDropInName)); err != nil || string(b) != string(standInDropIn(paths.LateBinary)) {
		t.Errorf("stand-in's drop-in %q, %v", b, err)
	}
	for _, u := range []string{"cloud-init.target", "cloud-init-main.service"} {
		if _, err := os.Lstat(filepath.Join(runDir, SystemDir, u)); !os.IsNotExist(err) {
			t.Errorf("%s: masked (%v), want left alone", u, err)
		}
	}
	// The image itself is unchanged.
	if fi, err := os.Lstat(filepath.Join(rootDir, "lib/systemd/system/cloud-init.service")); err != nil || !fi.Mode().IsRegular() {
		t.Errorf("the root's unit changed: %v", err)
	}
	// A root without cloud-init: nothing masked.
	none, err := rootfs.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if masked, stoodIn, err := MaskCloudInit(none, run, paths.LateBinary); err != nil || len(masked)+len(stoodIn) != 0 {
		t.Errorf("no cloud-init: masked %v, stood in for %v, %v", masked, stoodIn, err)
	}
	if _, _, err := MaskCloudInit(root, run, "relative/earlyinit"); err == nil {
		t.Error("relative binary accepted")
	}
}
