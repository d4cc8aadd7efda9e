package vm

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestDebianTarballNames checks the cache file names: DebianRoot's is
// the one it always was (cached tarballs stay valid), and every other
// package set, the sysvinit root and the root with cloud-init, gets its own.
func TestDebianTarballNames(t *testing.T) {
	const cache, mirror = "/cache", "http://deb.example/debian"
	h := sha256.New()
	fmt.Fprintf(h, "bookworm\nminbase\nsystemd-sysv,udev,iproute2,openssh-server,sudo\n%s\nnetworkd-fstab-hostname-unsafeio/1\n", mirror)
	old := filepath.Join(cache, "debian-bookworm-"+hex.EncodeToString(h.Sum(nil))[:16]+".tar")
	if got := DebianTarball(cache, mirror); got != old {
		t.Errorf("DebianTarball = %s, want the name it had before variants: %s", got, old)
	}
	if got := DebianTarballWith(cache, mirror, nil); got != old {
		t.Errorf("DebianTarballWith(nil) = %s, want %s", got, old)
	}
	if got := DebianTarballOf(cache, mirror, DebianPackages()); got != old {
		t.Errorf("DebianTarballOf(DebianPackages()) = %s, want %s", got, old)
	}
	names := map[string]string{}
	for what, name := range map[string]string{
		"default":    old,
		"cloud-init": DebianTarballWith(cache, mirror, DebianCloudInitPackages()),
		"sysvinit":   DebianTarballOf(cache, mirror, DebianSysvinitPackages()),
		"kernel":     DebianTarballOf(cache, mirror, DebianKernelPackages()),
		"mirror":     DebianTarball(cache, "http://other.example/debian"),
	} {
		if prev, ok := names[name]; ok {
			t.Errorf("%s and %s share the cache file %s", what, prev, name)
		}
		names[name] = what
	}
}

// TestDebianPackageSets checks what the variants install: sysvinit
// instead of systemd-sysv (they conflict), cloud-init with what
// debootstrap cannot resolve by itself.
func TestDebianPackageSets(t *testing.T) {
	sysv := strings.Join(DebianSysvinitPackages(), " ")
	if !strings.Contains(sysv, "sysvinit-core") || strings.Contains(sysv, "systemd-sysv") {
		t.Errorf("DebianSysvinitPackages = %s", sysv)
	}
	if systemdInit(DebianSysvinitPackages()) || !systemdInit(DebianPackages()) {
		t.Errorf("systemdInit: sysvinit %v, default %v", systemdInit(DebianSysvinitPackages()), systemdInit(DebianPackages()))
	}
	ci := strings.Join(DebianCloudInitPackages(), " ")
	if !strings.Contains(ci, "cloud-init") || !strings.Contains(ci, "python3-cffi-backend") {
		t.Errorf("DebianCloudInitPackages = %s", ci)
	}
}

// TestCustomiseSysvinit runs the customisation on a tree shaped like a
// bootstrapped sysvinit root: fstab and hostname as the systemd root's,
// a serial getty added to inittab once, apt's downloads removed; and on
// a systemd-less tree asked to enable networkd, a clear error.
func TestCustomiseSysvinit(t *testing.T) {
	root := t.TempDir()
	inittab := "id:2:initdefault:\n1:2345:respawn:/sbin/getty --noclear 38400 tty1\n"
	if err := WriteTree(root, map[string]string{
		"etc/inittab":                         inittab,
		"var/cache/apt/archives/x_1_all.deb":  "deb",
		"var/lib/apt/lists/deb_dists_Release": "lists",
	}); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 2; i++ {
		if err := customise(root, false); err != nil {
			t.Fatal(err)
		}
	}
	for path, want := range map[string]string{
		"etc/fstab":    "LABEL=root / ext4 defaults 0 1\n",
		"etc/hostname": "debian\n",
		"etc/inittab":  inittab + "T0:2345:respawn:/sbin/getty -L ttyS0 115200 vt100\n",
	} {
		b, err := os.ReadFile(filepath.Join(root, path))
		if err != nil || !strings.HasSuffix(string(b), want) || (path == "etc/inittab" && string(b) != want) {
			t.Errorf("%s = %q (%v), want %q", path, b, err, want)
		}
	}
	for _, p := range []string{"var/cache/apt/archives/x_1_all.deb", "var/lib/apt/lists/deb_dists_Release"} {
		if _, err := os.Stat(filepath.Join(root, p)); err == nil {
			t.Errorf("%s left in the image", p)
		}
	}
	if _, err := os.Stat(filepath.Join(root, "etc/systemd/system")); err == nil {
		t.Errorf("networkd links made in a sysvinit root")
	}
	if err := customise(root, true); err == nil || !strings.Contains(err.Error(), "systemd-networkd") {
		t.Errorf("customise(systemd) of a root without networkd: %v, want an error naming the unit", err)
	}
	if err := customise(t.TempDir(), false); err == nil || !strings.Contains(err.Error(), "inittab") {
		t.Errorf("customise(sysvinit) without /etc/inittab: %v, want an error naming it", err)
	}
}
