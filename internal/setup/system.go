package setup

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// Generator is a distribution's initramfs generator.
type Generator int

// The generators earlyinit's distro mode plugs into.
const (
	// NoGenerator: neither initramfs-tools nor dracut is installed.
	NoGenerator Generator = iota
	// InitramfsTools is Debian's and Ubuntu's (update-initramfs).
	InitramfsTools
	// Dracut is Fedora's, RHEL's, openEuler's, SUSE's, and Debian's
	// package dracut.
	Dracut
)

func (g Generator) String() string {
	switch g {
	case InitramfsTools:
		return "initramfs-tools"
	case Dracut:
		return "dracut"
	}
	return "none"
}

// Files that tell the generators apart on an installed system. Debian's
// dracut package (which conflicts with initramfs-tools) ships the kernel
// hook /etc/kernel/postinst.d/dracut and no update-initramfs; its
// dracut-core (the dracut binary alone) can be installed beside
// initramfs-tools, whose kernel hook then still makes the images. Fedora
// and RHEL have the dracut binary and run it from kernel-install.
var (
	debianDracutHook = "/etc/kernel/postinst.d/dracut"
	updateInitramfs  = []string{"/usr/sbin/update-initramfs", "/sbin/update-initramfs"}
	hookFunctions    = "/usr/share/initramfs-tools/hook-functions"
	dracutBinaries   = []string{"/usr/bin/dracut", "/usr/sbin/dracut", "/sbin/dracut"}
)

// DetectGenerator returns the initramfs generator installed under root:
// dracut when Debian's dracut kernel hook is there; else initramfs-tools
// when update-initramfs and its hook-functions are; else dracut when its
// binary is; else NoGenerator.
func DetectGenerator(root string) Generator {
	if isFile(root, debianDracutHook) {
		return Dracut
	}
	if isFile(root, hookFunctions) && slices.ContainsFunc(updateInitramfs, func(p string) bool { return isFile(root, p) }) {
		return InitramfsTools
	}
	if slices.ContainsFunc(dracutBinaries, func(p string) bool { return isFile(root, p) }) {
		return Dracut
	}
	return NoGenerator
}

// isFile reports whether name under root exists and is not a directory
// (following symlinks: /sbin -> usr/sbin on merged-/usr systems is
// relative).
func isFile(root, name string) bool {
	fi, err := os.Stat(filepath.Join(root, name))
	return err == nil && !fi.IsDir()
}

// Kernels returns the kernel versions installed under root, oldest first:
// the directories in /lib/modules (or /usr/lib/modules) that have a kernel
// image /boot/vmlinuz-KVER (or vmlinux-KVER). A modules directory left
// behind by a removed kernel has none.
func Kernels(root string) ([]string, error) {
	seen := map[string]bool{}
	var kvers []string
	for _, dir := range []string{"/lib/modules", "/usr/lib/modules"} {
		ents, err := os.ReadDir(filepath.Join(root, dir))
		if os.IsNotExist(err) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("installed kernels: %w", err)
		}
		for _, e := range ents {
			k := e.Name()
			if seen[k] || !validKVer(k) {
				continue
			}
			if fi, err := os.Stat(filepath.Join(root, dir, k)); err != nil || !fi.IsDir() {
				continue
			}
			if !isFile(root, "/boot/vmlinuz-"+k) && !isFile(root, "/boot/vmlinux-"+k) {
				continue
			}
			seen[k] = true
			kvers = append(kvers, k)
		}
	}
	slices.SortFunc(kvers, CompareVersions)
	return kvers, nil
}

// validKVer reports whether k can be a kernel version handed to a command
// and used in a file name: no path separators, no leading dash or dot.
func validKVer(k string) bool {
	if k == "" || strings.HasPrefix(k, "-") || strings.HasPrefix(k, ".") {
		return false
	}
	for _, c := range k {
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		case strings.ContainsRune(".-_+~", c):
		default:
			return false
		}
	}
	return true
}

// CompareVersions orders kernel versions as `sort -V` does for the usual
// ones: runs of digits compare as numbers, the rest byte by byte.
func CompareVersions(a, b string) int {
	for a != "" && b != "" {
		ad, bd := isDigit(a[0]), isDigit(b[0])
		if ad != bd {
			if ad {
				return -1
			}
			return 1
		}
		na, nb := run(a, ad), run(b, bd)
		x, y := a[:na], b[:nb]
		if ad {
			x, y = strings.TrimLeft(x, "0"), strings.TrimLeft(y, "0")
			if len(x) != len(y) {
				return cmpInt(len(x), len(y))
			}
		}
		if c := strings.Compare(x, y); c != 0 {
			return c
		}
		a, b = a[na:], b[nb:]
	}
	return cmpInt(len(a), len(b))
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// run returns the length of s's leading run of digits (digits) or of
// non-digits.
func run(s string, digits bool) int {
	i := 0
	for i < len(s) && isDigit(s[i]) == digits {
		i++
	}
	return i
}

func cmpInt(a, b int) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
