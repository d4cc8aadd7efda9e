package vm

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
)

// Roots that boot their own kernel with their own initramfs, as an image a
// user uploads does: the package tests install earlyinit's .deb into them
// and regenerate that initramfs inside them.

// DebianKernelPackages are the packages of a root with Debian's kernel
// and initramfs-tools (DebianPackages and linux-image-amd64,
// initramfs-tools, zstd for its default compression, lvm2 and kpartx for
// a root on LVM and for dracut's dependencies).
func DebianKernelPackages() []string {
	return append(DebianPackages(), "linux-image-amd64", "initramfs-tools", "zstd", "lvm2", "kpartx")
}

// dracutRecipe names DebianDracutRoot's change to the kernel root; change
// it when that changes.
const dracutRecipe = "dracut-instead-of-initramfs-tools/2"

// dracutDrivers makes dracut put BootModules in the initramfs instead of
// every driver it knows (hostonly=no, the default for an image built
// elsewhere than it boots): 62 s to 26 s per dracut run here, 40 MB to
// 18 MB. dracut's modules (earlyinit's among them) still add their own.
var dracutDrivers = "drivers=\"" + strings.Join(BootModules, " ") + "\"\n"

// debianDracutTarball is DebianDracutRoot's cache file.
func debianDracutTarball(cacheDir, mirror string) string {
	base := DebianTarballOf(cacheDir, mirror, DebianKernelPackages())
	h := sha256.Sum256([]byte(filepath.Base(base) + "\n" + dracutRecipe))
	return filepath.Join(cacheDir, "debian-dracut-"+hex.EncodeToString(h[:])[:16]+".tar")
}

// DebianDracutRoot returns a tarball of the DebianKernelPackages root with
// dracut as its initramfs generator instead of initramfs-tools (Debian's
// dracut conflicts with it; debootstrap would take initramfs-tools for the
// kernel's dependency): dracut's packages are downloaded with the host's
// apt-get (this machine is Debian bookworm too), initramfs-tools is purged
// and dracut builds the kernel's initramfs. Cached like DebianRoot.
func DebianDracutRoot(cacheDir string) (string, error) {
	cacheDir, err := filepath.Abs(cacheDir)
	if err != nil {
		return "", err
	}
	base, err := DebianRootOf(cacheDir, DebianKernelPackages())
	if err != nil {
		return "", err
	}
	out := debianDracutTarball(cacheDir, DebianMirror())
	if _, err := os.Stat(out); err == nil {
		return out, nil
	}
	unlock, err := lockFile(filepath.Join(cacheDir, "debian.lock"))
	if err != nil {
		return "", fmt.Errorf("dracut root: %w", err)
	}
	defer unlock()
	if _, err := os.Stat(out); err == nil {
		return out, nil
	}
	tmp, err := os.MkdirTemp(cacheDir, "build-")
	if err != nil {
		return "", fmt.Errorf("dracut root: %w", err)
	}
	defer os.RemoveAll(tmp)
	root := filepath.Join(tmp, "root")
	if err := Untar(base, root); err != nil {
		return "", fmt.Errorf("dracut root: %w", err)
	}
	if err := WriteTree(root, map[string]string{"etc/dracut.conf.d/e2e-drivers.conf": dracutDrivers}); err != nil {
		return "", fmt.Errorf("dracut root: %w", err)
	}
	debs := filepath.Join(root, "tmp/dracut-debs")
	if err := os.MkdirAll(debs, 0o755); err != nil {
		return "", err
	}
	dl := exec.Command("apt-get", "download", "dracut", "dracut-core")
	dl.Dir = debs
	if out, err := dl.CombinedOutput(); err != nil {
		return "", fmt.Errorf("dracut root: apt-get download dracut dracut-core: %w\n%s", err, out)
	}
	steps := [][]string{
		{"dpkg", "--purge", "--force-depends", "initramfs-tools", "initramfs-tools-core"},
		{"sh", "-c", "dpkg -i /tmp/dracut-debs/*.deb"},
		{"sh", "-c", "for k in /lib/modules/*; do dracut --force --kver \"${k##*/}\"; done"},
	}
	for _, s := range steps {
		if out, err := Chroot(root, s...); err != nil {
			return "", fmt.Errorf("dracut root: %w\n%s", err, tail(out, 4000))
		}
	}
	if err := os.RemoveAll(debs); err != nil {
		return "", err
	}
	part := filepath.Join(tmp, "root.tar")
	if err := run("tar", "--numeric-owner", "--one-file-system", "-C", root, "-cf", part, "."); err != nil {
		return "", fmt.Errorf("dracut root: %w", err)
	}
	if err := os.Rename(part, out); err != nil {
		return "", fmt.Errorf("dracut root: %w", err)
	}
	return out, nil
}

// Chroot runs argv in root with /proc, /sys and /dev mounted (what
// update-initramfs, dracut and dpkg's scripts want), and returns its
// combined output. The mounts are undone before it returns.
func Chroot(root string, argv ...string) (string, error) {
	var mounted []string
	defer func() {
		for i := len(mounted) - 1; i >= 0; i-- {
			exec.Command("umount", "-l", mounted[i]).Run()
		}
	}()
	for _, m := range []struct{ src, dst, fstype string }{
		{"proc", "proc", "proc"}, {"sysfs", "sys", "sysfs"}, {"/dev", "dev", ""},
	} {
		dst := filepath.Join(root, m.dst)
		if err := os.MkdirAll(dst, 0o755); err != nil {
			return "", err
		}
		args := []string{"-t", m.fstype, m.src, dst}
		if m.fstype == "" {
			args = []string{"--bind", m.src, dst}
		}
		if err := run("mount", args...); err != nil {
			return "", err
		}
		mounted = append(mounted, dst)
	}
	cmd := exec.Command("chroot", append([]string{root}, argv...)...)
	cmd.Env = []string{"PATH=/usr/sbin:/usr/bin:/sbin:/bin", "DEBIAN_FRONTEND=noninteractive", "LANG=C.UTF-8", "HOME=/root"}
	out, err := cmd.CombinedOutput()
	if err != nil {
		return string(out), fmt.Errorf("chroot %s %s: %w", root, strings.Join(argv, " "), err)
	}
	return string(out), nil
}

// InstalledKernels returns the kernel releases with a /boot/vmlinuz-* in
// root, sorted.
func InstalledKernels(root string) ([]string, error) {
	m, err := filepath.Glob(filepath.Join(root, "boot/vmlinuz-*"))
	if err != nil {
		return nil, err
	}
	var k []string
	for _, p := range m {
		k = append(k, strings.TrimPrefix(filepath.Base(p), "vmlinuz-"))
	}
	sort.Strings(k)
	if len(k) == 0 {
		return nil, fmt.Errorf("no kernel in %s/boot", root)
	}
	return k, nil
}

// LVMDisk makes a disk image of diskMB with one GPT partition of partMB
// (from PartStart) that is an LVM physical volume of volume group vg, with
// one linear logical volume "root" of lvMB holding an ext4 filesystem
// labelled label made from dir. The guest's device is /dev/vg/root.
//
// This machine's kernel has no device-mapper targets, so nothing is
// activated: lvm2 writes the physical volume and the group, the logical
// volume enters the group's metadata through vgcfgrestore (LVM's own text
// format), and the filesystem is written where a linear volume's extents
// are, pe_start into the partition.
//
// It returns where the volume's filesystem is on the disk, for
// logicalVolume.Extract.
func LVMDisk(img string, partMB, diskMB, lvMB int, vg, label, dir string) (lv logicalVolume, err error) {
	if err := sparseFile(img, int64(diskMB)<<20); err != nil {
		return lv, err
	}
	if err := run("sgdisk", "-n", fmt.Sprintf("1:%d:+%dM", PartStart/512, partMB), "-t", "1:8e00", "-c", "1:"+PartName, img); err != nil {
		return lv, err
	}
	out, err := exec.Command("losetup", "--find", "--show", "--offset", fmt.Sprint(PartStart), "--sizelimit", fmt.Sprint(int64(partMB)<<20), img).Output()
	if err != nil {
		return lv, fmt.Errorf("losetup %s: %w", img, err)
	}
	loop := strings.TrimSpace(string(out))
	defer func() {
		if loop != "" {
			exec.Command("losetup", "-d", loop).Run()
		}
	}()
	lvmcfg := "--config=devices { filter=[\"a|^" + loop + "$|\", \"r|.*|\"] } activation { udev_sync=0 udev_rules=0 } backup { backup=0 archive=0 }"
	if err := run("pvcreate", lvmcfg, "-ff", "-y", loop); err != nil {
		return lv, err
	}
	if err := run("vgcreate", lvmcfg, vg, loop); err != nil {
		return lv, err
	}
	backup := img + ".vg"
	defer os.Remove(backup)
	if err := run("vgcfgbackup", lvmcfg, "-f", backup, vg); err != nil {
		return lv, err
	}
	meta, err := os.ReadFile(backup)
	if err != nil {
		return lv, err
	}
	extentSize, peStart, err := vgFacts(string(meta))
	if err != nil {
		return lv, fmt.Errorf("%s: %w", backup, err)
	}
	extents := (int64(lvMB)<<20 + extentSize*512 - 1) / (extentSize * 512)
	meta, err = withLinearLV(meta, vg, "root", extents)
	if err != nil {
		return lv, err
	}
	if err := os.WriteFile(backup, meta, 0o600); err != nil {
		return lv, err
	}
	// vgcfgrestore complains that it cannot reach device-mapper (to check
	// for active volumes) and restores all the same.
	if out, err := exec.Command("vgcfgrestore", lvmcfg, "-f", backup, vg).CombinedOutput(); err != nil {
		return lv, fmt.Errorf("vgcfgrestore: %w\n%s", err, out)
	}
	fs := img + ".lv"
	defer os.Remove(fs)
	if err := Ext4(fs, dir, label, "", int(extents*extentSize*512>>20)); err != nil {
		return lv, err
	}
	seek := PartStart + peStart*512
	if err := run("dd", "if="+fs, "of="+img, "bs=1M", "oflag=seek_bytes", "seek="+fmt.Sprint(seek), "conv=notrunc,sparse", "status=none"); err != nil {
		return lv, err
	}
	if err := run("losetup", "-d", loop); err != nil {
		return lv, err
	}
	loop = ""
	return logicalVolume{Offset: seek, Size: extents * extentSize * 512}, nil
}

// logicalVolume is where a linear logical volume's data is on its disk.
type logicalVolume struct{ Offset, Size int64 }

// Extract copies the volume's data out of disk into out (sparse), so
// debugfs (Cat, Stat) can read the filesystem in it.
func (lv logicalVolume) Extract(disk, out string) error {
	return run("dd", "if="+disk, "of="+out, "bs=1M", "iflag=skip_bytes,count_bytes", "skip="+fmt.Sprint(lv.Offset),
		"count="+fmt.Sprint(lv.Size), "conv=sparse", "status=none")
}

// vgFacts reads extent_size and pe_start (in sectors) from a vgcfgbackup
// file of a group with one physical volume.
func vgFacts(meta string) (extentSize, peStart int64, err error) {
	for _, l := range strings.Split(meta, "\n") {
		f := strings.Fields(l)
		if len(f) < 3 || f[1] != "=" {
			continue
		}
		switch f[0] {
		case "extent_size":
			fmt.Sscan(f[2], &extentSize)
		case "pe_start":
			fmt.Sscan(f[2], &peStart)
		}
	}
	if extentSize <= 0 || peStart <= 0 {
		return 0, 0, errors.New("no extent_size or pe_start")
	}
	return extentSize, peStart, nil
}

// withLinearLV adds a logical volume of extents on pv0, from extent 0, to
// a vgcfgbackup file of group vg, and bumps its sequence number.
func withLinearLV(meta []byte, vg, name string, extents int64) ([]byte, error) {
	s := string(meta)
	end := strings.LastIndex(s, "}")
	if end < 0 || !strings.Contains(s, vg+" {") || strings.Contains(s, "logical_volumes") {
		return nil, fmt.Errorf("vgcfgbackup of %s: unexpected shape", vg)
	}
	lv := fmt.Sprintf(`
	logical_volumes {
		%s {
			id = "%s"
			status = ["READ", "WRITE", "VISIBLE"]
			flags = []
			segment_count = 1
			segment1 {
				start_extent = 0
				extent_count = %d
				type = "striped"
				stripe_count = 1
				stripes = [
					"pv0", 0
				]
			}
		}
	}
`, name, lvmID(name), extents)
	s = s[:end] + lv + s[end:]
	var seq int
	for _, l := range strings.Split(s, "\n") {
		if f := strings.Fields(l); len(f) == 3 && f[0] == "seqno" {
			fmt.Sscan(f[2], &seq)
			s = strings.Replace(s, l, strings.Replace(l, f[2], fmt.Sprint(seq+1), 1), 1)
			break
		}
	}
	return []byte(s), nil
}

// lvmID makes an LVM UUID (32 characters in groups 6-4-4-4-4-4-6) from a
// hash of seed, so the same disk gets the same id.
func lvmID(seed string) string {
	const chars = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
	h := sha256.Sum256([]byte("earlyinit-lv-" + seed))
	var b strings.Builder
	for i, n := range []int{6, 4, 4, 4, 4, 4, 6} {
		if i > 0 {
			b.WriteByte('-')
		}
		for j := 0; j < n; j++ {
			b.WriteByte(chars[int(h[b.Len()%32])%len(chars)])
		}
	}
	return b.String()
}
