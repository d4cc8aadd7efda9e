//go:build qemu

package qemutests

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/earlyinit/earlyinit/internal/vm"
)

// debianCache is where the test roots and their .debs are kept between
// runs: vm.CacheDir.
func debianCache() string {
	return vm.CacheDir()
}

// debianDir unpacks the cached Debian root (building it the first time)
// into a temp dir.
func debianDir(t *testing.T) string {
	t.Helper()
	t0 := time.Now()
	tarball, err := vm.DebianRoot(debianCache())
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("Debian root %s in %s", filepath.Base(tarball), time.Since(t0).Round(time.Millisecond))
	dir := filepath.Join(t.TempDir(), "root")
	if err := vm.Untar(tarball, dir); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestDebianRoot checks the root builder: the tarball is a bootable
// systemd root with what the e2e test needs, and a second call is a cache
// hit.
func TestDebianRoot(t *testing.T) {
	parallel(t)
	dir := debianDir(t)
	for _, p := range []string{"sbin/init", "usr/sbin/sshd", "usr/bin/sudo", "bin/ip", "usr/sbin/useradd", "usr/bin/ssh-keygen",
		"lib/systemd/systemd-networkd", "etc/ssh/ssh_host_ed25519_key.pub"} {
		if _, err := os.Stat(filepath.Join(dir, p)); err != nil {
			t.Errorf("root lacks %s: %v", p, err)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "sbin/ifup")); err == nil {
		t.Errorf("ifupdown is installed: the network must be networkd's alone")
	}
	if l, err := os.Readlink(filepath.Join(dir, "sbin/init")); err != nil || !strings.Contains(l, "systemd") {
		t.Errorf("/sbin/init -> %q (%v), want systemd", l, err)
	}
	for _, l := range []string{"multi-user.target.wants/systemd-networkd.service", "sockets.target.wants/systemd-networkd.socket",
		"network-online.target.wants/systemd-networkd-wait-online.service"} {
		target, err := os.Readlink(filepath.Join(dir, "etc/systemd/system", l))
		if err != nil {
			t.Errorf("networkd not enabled: %v", err)
			continue
		}
		if _, err := os.Stat(filepath.Join(dir, target)); err != nil {
			t.Errorf("%s -> %s, which is not in the root", l, target)
		}
	}
	fstab, err := os.ReadFile(filepath.Join(dir, "etc/fstab"))
	if err != nil || !strings.Contains(string(fstab), "LABEL=root / ext4 defaults 0 1\n") {
		t.Errorf("/etc/fstab = %q (%v)", fstab, err)
	}
	// /etc/shadow is root:shadow: numeric owners survived the tarball.
	if fi, err := os.Stat(filepath.Join(dir, "etc/shadow")); err != nil || fi.Sys().(*syscall.Stat_t).Gid == 0 {
		t.Errorf("/etc/shadow: %v, want group shadow (not 0)", err)
	}
	debs, _ := filepath.Glob(filepath.Join(dir, "var/cache/apt/archives/*.deb"))
	if len(debs) != 0 {
		t.Errorf("%d .debs left in the image", len(debs))
	}

	// Cached: the same tarball, untouched, at once.
	tarball := vm.DebianTarball(debianCache(), vm.DebianMirror())
	before, err := os.Stat(tarball)
	if err != nil {
		t.Fatal(err)
	}
	again, err := vm.DebianRoot(debianCache())
	if err != nil || again != tarball {
		t.Fatalf("second DebianRoot = %s, %v; want %s", again, err, tarball)
	}
	after, _ := os.Stat(tarball)
	if !after.ModTime().Equal(before.ModTime()) {
		t.Errorf("second DebianRoot rewrote the tarball: not a cache hit")
	}
}
