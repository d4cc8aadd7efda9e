package initramfs

import (
	"os"
	"path/filepath"

	"github.com/earlyinit/earlyinit/internal/imagecfg"
)

// The names distributions give a kernel's initramfs in /boot, where their
// bootloader configuration already looks for it.
const (
	// DebianName is initramfs-tools' name (Debian, Ubuntu).
	DebianName = "initrd.img-"
	// RedHatName is dracut's on Fedora, RHEL and its rebuilds, openEuler
	// (and what kernel-install's BLS entries name).
	RedHatName = "initramfs-"
	// SUSEName is dracut's on SUSE: no suffix.
	SUSEName = "initrd-"
)

// family maps an os-release ID or ID_LIKE word to its initramfs name.
func family(id string) (string, bool) {
	switch id {
	case "debian", "ubuntu":
		return DebianName, true
	case "rhel", "fedora", "centos", "openeuler":
		return RedHatName, true
	case "suse", "opensuse", "sles":
		return SUSEName, true
	}
	return "", false
}

// bootName returns the file name of kver's initramfs: the family's of the
// first of ID and ID_LIKE (closest first) that names one; else the name an
// initramfs for kver already has in /boot (exists is asked in the order
// Debian, Red Hat, SUSE); else Debian's.
func bootName(osr imagecfg.OSRelease, kver string, exists func(name string) bool) string {
	for _, id := range append([]string{osr.ID}, osr.IDLike...) {
		if prefix, ok := family(id); ok {
			return withKVer(prefix, kver)
		}
	}
	for _, prefix := range []string{DebianName, RedHatName, SUSEName} {
		if n := withKVer(prefix, kver); exists(n) {
			return n
		}
	}
	return withKVer(DebianName, kver)
}

func withKVer(prefix, kver string) string {
	if prefix == RedHatName {
		return prefix + kver + ".img"
	}
	return prefix + kver
}

// DefaultOutput returns where kver's initramfs goes in the root at root:
// <root>/boot/<name>, the name the root's distribution gives it (its
// /etc/os-release, else /usr/lib/os-release).
func DefaultOutput(root, kver string) string {
	var osr imagecfg.OSRelease
	for _, f := range []string{"etc/os-release", "usr/lib/os-release"} {
		// A link (etc/os-release -> ../usr/lib/os-release) is not
		// followed: an absolute one would read the build host's.
		p := filepath.Join(root, f)
		if fi, err := os.Lstat(p); err != nil || !fi.Mode().IsRegular() {
			continue
		}
		if b, err := os.ReadFile(p); err == nil {
			osr = imagecfg.ParseOSRelease(string(b))
			break
		}
	}
	boot := filepath.Join(root, "boot")
	return filepath.Join(boot, bootName(osr, kver, func(name string) bool {
		_, err := os.Lstat(filepath.Join(boot, name))
		return err == nil
	}))
}
