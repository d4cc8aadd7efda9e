package vm

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
)

// The Debian root DebianRoot builds: debootstrap's minbase plus what a
// cloud image needs for earlyinit's end-to-end test.
const (
	debianSuite   = "bookworm"
	debianVariant = "minbase"
	// debianRecipe names the customisation below; change it when that
	// changes, so cached tarballs are rebuilt.
	debianRecipe = "networkd-fstab-hostname-unsafeio/1"
	// sysvinitRecipe is debianRecipe for roots without systemd.
	sysvinitRecipe = "inittab-ttyS0-fstab-hostname-unsafeio/1"
	// kernelRecipe is added for roots with initramfs-tools
	// (initramfsModules).
	kernelRecipe = "initramfs-modules-list/1"
	// defaultDebianMirror is used when apt's sources name no Debian
	// mirror.
	defaultDebianMirror = "http://deb.debian.org/debian"
)

// DebianPackages are the packages installed on top of minbase: systemd as
// init, udev, ip, sshd (host keys to regenerate) and sudo. No ifupdown:
// the network is systemd-networkd's.
func DebianPackages() []string {
	return []string{"systemd-sysv", "udev", "iproute2", "openssh-server", "sudo"}
}

// CacheDir is where the test roots (tarballs keyed by their recipe) and
// their .debs are kept between runs: $EARLYINIT_CACHE, else earlyinit/
// under the user's cache directory ($XDG_CACHE_HOME or ~/.cache), else
// /var/cache/earlyinit. Outside the repository, so a clean clone on the
// same machine finds the roots a previous run built.
func CacheDir() string {
	if d := os.Getenv("EARLYINIT_CACHE"); d != "" {
		return d
	}
	if d, err := os.UserCacheDir(); err == nil {
		return filepath.Join(d, "earlyinit")
	}
	return "/var/cache/earlyinit"
}

// DebianMirror returns the Debian archive apt uses on this machine (the
// first deb line or deb822 URIs of /etc/apt/sources.list{,.d/*} whose path
// ends in /debian), else defaultDebianMirror.
func DebianMirror() string {
	files := []string{"/etc/apt/sources.list"}
	more, _ := filepath.Glob("/etc/apt/sources.list.d/*")
	files = append(files, more...)
	for _, f := range files {
		if m := mirrorIn(f); m != "" {
			return m
		}
	}
	return defaultDebianMirror
}

func mirrorIn(file string) string {
	f, err := os.Open(file)
	if err != nil {
		return ""
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		var uris []string
		switch {
		case len(fields) >= 3 && fields[0] == "deb":
			// deb [opts] URI suite...
			for _, x := range fields[1:] {
				if !strings.HasPrefix(x, "[") && !strings.HasSuffix(x, "]") && strings.Contains(x, "://") {
					uris = append(uris, x)
					break
				}
			}
		case len(fields) >= 2 && fields[0] == "URIs:":
			uris = fields[1:]
		}
		for _, u := range uris {
			u = strings.TrimSuffix(u, "/")
			if strings.HasSuffix(u, "/debian") && (strings.HasPrefix(u, "http://") || strings.HasPrefix(u, "https://")) {
				return u
			}
		}
	}
	return ""
}

// DebianTarball is the cache file DebianRoot makes in cacheDir for mirror:
// its name carries a hash of the suite, variant, packages, mirror and
// recipe, so any change makes a new one.
func DebianTarball(cacheDir, mirror string) string {
	return DebianTarballWith(cacheDir, mirror, nil)
}

// DebianTarballWith is DebianTarball for a root with extra packages; with
// none it is DebianTarball's file.
func DebianTarballWith(cacheDir, mirror string, extra []string) string {
	return DebianTarballOf(cacheDir, mirror, append(DebianPackages(), extra...))
}

// DebianTarballOf is DebianRootOf's cache file for pkgs.
func DebianTarballOf(cacheDir, mirror string, pkgs []string) string {
	recipe := debianRecipe
	if !systemdInit(pkgs) {
		recipe = sysvinitRecipe
	}
	if slices.Contains(pkgs, "initramfs-tools") {
		recipe += "\n" + kernelRecipe
	}
	h := sha256.New()
	fmt.Fprintf(h, "%s\n%s\n%s\n%s\n%s\n", debianSuite, debianVariant, strings.Join(pkgs, ","), mirror, recipe)
	return filepath.Join(cacheDir, "debian-"+debianSuite+"-"+hex.EncodeToString(h.Sum(nil))[:16]+".tar")
}

// DebianRoot returns a tarball of a Debian bookworm root (owners kept as
// numbers) built with debootstrap from the mirror apt uses here, with
// DebianPackages, systemd-networkd enabled, an fstab mounting LABEL=root
// on / and the hostname "debian". The tarball is cached in cacheDir
// (the .debs in cacheDir/debs): a later call returns it at once. Callers
// in several processes may race: a lock file in cacheDir serialises the
// build. It needs root (debootstrap, chroot).
func DebianRoot(cacheDir string) (string, error) {
	return DebianRootWith(cacheDir, nil)
}

// DebianRootWith is DebianRoot with extra packages installed on top of
// DebianPackages (their cache file is DebianTarballWith's).
func DebianRootWith(cacheDir string, extra []string) (string, error) {
	return DebianRootOf(cacheDir, append(DebianPackages(), extra...))
}

// DebianSysvinitPackages are the packages of a Debian root with sysvinit
// as init instead of systemd (sysvinit-core conflicts with systemd-sysv):
// udev and ip, no networkd, no sshd.
func DebianSysvinitPackages() []string {
	return []string{"sysvinit-core", "udev", "iproute2"}
}

// DebianCloudInitPackages are the extra packages (DebianRootWith's extra)
// of a root with the distribution's cloud-init installed, as in a cloud
// image: cloud-init, and python3-cffi-backend, which provides virtual
// packages python3-cryptography depends on (debootstrap does not resolve
// virtual packages). Recommends are not installed.
func DebianCloudInitPackages() []string {
	return []string{"cloud-init", "python3-cffi-backend"}
}

// systemdInit tells whether a package list makes systemd the init.
func systemdInit(pkgs []string) bool {
	for _, p := range pkgs {
		if p == "systemd-sysv" {
			return true
		}
	}
	return false
}

// DebianRootOf is DebianRoot with exactly the packages pkgs on top of
// minbase (DebianRootWith's are DebianPackages and more); its cache file
// is DebianTarballOf's. Without systemd-sysv in pkgs (a sysvinit root,
// DebianSysvinitPackages) the root gets the same fstab and hostname,
// nothing of networkd, and a getty on the serial console in
// /etc/inittab.
func DebianRootOf(cacheDir string, pkgs []string) (string, error) {
	cacheDir, err := filepath.Abs(cacheDir)
	if err != nil {
		return "", err
	}
	if err := os.MkdirAll(filepath.Join(cacheDir, "debs"), 0o755); err != nil {
		return "", fmt.Errorf("debian root: %w", err)
	}
	mirror := DebianMirror()
	out := DebianTarballOf(cacheDir, mirror, pkgs)
	if _, err := os.Stat(out); err == nil {
		return out, nil
	}
	unlock, err := lockFile(filepath.Join(cacheDir, "debian.lock"))
	if err != nil {
		return "", fmt.Errorf("debian root: %w", err)
	}
	defer unlock()
	// Someone else may have built it while we waited for the lock.
	if _, err := os.Stat(out); err == nil {
		return out, nil
	}
	tmp, err := os.MkdirTemp(cacheDir, "build-")
	if err != nil {
		return "", fmt.Errorf("debian root: %w", err)
	}
	defer os.RemoveAll(tmp)
	target := filepath.Join(tmp, "root")
	if err := debootstrap(target, filepath.Join(cacheDir, "debs"), mirror, pkgs); err != nil {
		return "", fmt.Errorf("debian root: %w", err)
	}
	if err := customise(target, systemdInit(pkgs)); err != nil {
		return "", fmt.Errorf("debian root: customise %s: %w", target, err)
	}
	// --one-file-system: a /proc that debootstrap could not unmount
	// (something on this machine walking the tree keeps it busy) is not
	// archived.
	part := filepath.Join(tmp, "root.tar")
	if err := run("tar", "--numeric-owner", "--one-file-system", "-C", target, "-cf", part, "."); err != nil {
		return "", fmt.Errorf("debian root: %w", err)
	}
	if err := os.Rename(part, out); err != nil {
		return "", fmt.Errorf("debian root: %w", err)
	}
	return out, nil
}

// debootstrap runs both stages, the second with dpkg's fsyncs off (the
// root is thrown away and re-made if the machine dies meanwhile): that
// halves the build.
func debootstrap(target, debs, mirror string, pkgs []string) error {
	if _, err := lookPathAny("debootstrap", "/usr/sbin/debootstrap"); err != nil {
		return fmt.Errorf("debootstrap missing (apt-get install debootstrap): %w", err)
	}
	if err := run("debootstrap", "--foreign", "--variant="+debianVariant, "--include="+strings.Join(pkgs, ","),
		"--cache-dir="+debs, debianSuite, target, mirror); err != nil {
		return err
	}
	files := map[string]string{"etc/dpkg/dpkg.cfg.d/e2e-unsafe-io": "force-unsafe-io\n"}
	if slices.Contains(pkgs, "initramfs-tools") {
		maps.Copy(files, initramfsModules)
	}
	if err := WriteTree(target, files); err != nil {
		return err
	}
	if err := run("chroot", target, "/debootstrap/debootstrap", "--second-stage"); err != nil {
		log, _ := os.ReadFile(filepath.Join(target, "debootstrap/debootstrap.log"))
		return fmt.Errorf("%w\ndebootstrap.log (end):\n%s", err, tail(string(log), 4000))
	}
	return os.Remove(filepath.Join(target, "etc/dpkg/dpkg.cfg.d/e2e-unsafe-io"))
}

// BootModules are the kernel modules a test root's own initramfs needs to
// mount its root in the test VMs (virtio and SCSI disks, the IDE CD-ROM,
// ext4, XFS, device-mapper for LVM) and to reach the network; earlyinit's
// initramfs hooks add what it needs itself (config drive filesystems,
// NICs), which the tests so check.
var BootModules = []string{"virtio_pci", "virtio_blk", "virtio_scsi", "virtio_net", "sd_mod", "sr_mod",
	"ata_piix", "ata_generic", "ext4", "xfs", "crc32c_generic", "crc32c_intel", "dm_mod"}

// initramfsModules makes initramfs-tools put BootModules alone in the
// kernel roots' initramfs (MODULES=list), as an image builder who knows
// the hardware does, instead of MODULES=most's ~800 modules: that takes
// update-initramfs from 72 s to 9 s here (13,000 fork+execs to 1,000, each
// of the package tests' dpkg -i and --purge runs it) and the initrd from
// 32 MB to 9 MB, which a TCG guest unpacks on every boot. Written before
// the kernel's package is configured; files no package owns (the
// modules list proper, /etc/initramfs-tools/modules, is a conffile).
var initramfsModules = map[string]string{
	"etc/initramfs-tools/conf.d/e2e-modules.conf": "MODULES=list\n",
	"usr/share/initramfs-tools/modules.d/e2e":     strings.Join(BootModules, "\n") + "\n",
}

func lookPathAny(names ...string) (string, error) {
	var err error
	for _, n := range names {
		if filepath.IsAbs(n) {
			if _, err = os.Stat(n); err == nil {
				return n, nil
			}
			continue
		}
		var p string
		if p, err = exec.LookPath(n); err == nil {
			return p, nil
		}
	}
	return "", err
}

func tail(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}

// customise makes the bootstrapped tree a cloud image template, with
// networkd enabled when systemd is the init, else a serial getty.
func customise(root string, systemd bool) error {
	if err := WriteTree(root, map[string]string{
		"etc/fstab":    "# <file system> <mount point> <type> <options> <dump> <pass>\nLABEL=root / ext4 defaults 0 1\n",
		"etc/hostname": "debian\n",
		// debootstrap copied the host's: the image gets its own from
		// the network at boot.
		"etc/resolv.conf": "",
	}); err != nil {
		return err
	}
	if systemd {
		if err := enableNetworkd(root); err != nil {
			return err
		}
	} else if err := serialGetty(root); err != nil {
		return err
	}
	// What apt downloaded is not part of an image.
	for _, g := range []string{"var/cache/apt/archives/*.deb", "var/cache/apt/*.bin", "var/lib/apt/lists/*_*"} {
		m, _ := filepath.Glob(filepath.Join(root, g))
		for _, f := range m {
			if err := os.Remove(f); err != nil {
				return err
			}
		}
	}
	return nil
}

// enableNetworkd is systemctl enable systemd-networkd, by hand: the
// service, its socket and wait-online (its Also=), so
// network-online.target means something.
func enableNetworkd(root string) error {
	for link, unit := range map[string]string{
		"etc/systemd/system/multi-user.target.wants/systemd-networkd.service":                 "systemd-networkd.service",
		"etc/systemd/system/sockets.target.wants/systemd-networkd.socket":                     "systemd-networkd.socket",
		"etc/systemd/system/network-online.target.wants/systemd-networkd-wait-online.service": "systemd-networkd-wait-online.service",
		"etc/systemd/system/dbus-org.freedesktop.network1.service":                            "systemd-networkd.service",
	} {
		target := "/lib/systemd/system/" + unit
		if _, err := os.Stat(filepath.Join(root, target)); err != nil {
			return fmt.Errorf("enable %s: %w", unit, err)
		}
		full := filepath.Join(root, link)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			return err
		}
		if err := os.Remove(full); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		if err := os.Symlink(target, full); err != nil {
			return err
		}
	}
	return nil
}

// serialGetty adds a getty on ttyS0 to sysvinit's /etc/inittab, as cloud
// images have, so the console shows the boot reach its runlevel.
func serialGetty(root string) error {
	p := filepath.Join(root, "etc/inittab")
	b, err := os.ReadFile(p)
	if err != nil {
		return fmt.Errorf("inittab: %w", err)
	}
	if strings.Contains(string(b), "\nT0:") {
		return nil
	}
	b = append(b, "T0:2345:respawn:/sbin/getty -L ttyS0 115200 vt100\n"...)
	return os.WriteFile(p, b, 0o644)
}

// lockFile takes an exclusive flock on path, waiting for it.
func lockFile(path string) (func(), error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		f.Close()
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	return func() {
		syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		f.Close()
	}, nil
}

// Untar unpacks a tarball made by DebianRoot into dir, owners and modes
// kept (as root).
func Untar(tarball, dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	return run("tar", "--numeric-owner", "--same-permissions", "-C", dir, "-xf", tarball)
}
