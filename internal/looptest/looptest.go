// Package looptest gives tests that need root real block devices: sparse
// disk image files attached to loop devices with their partitions, file
// systems made and mounted, all undone when the test ends. The tools are
// losetup, partx, sfdisk and mkfs.* (scripts/deps.sh installs them).
package looptest

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// Require skips t, saying why, unless it runs as root: loop devices,
// mkfs and mount need it. CI runs as root.
func Require(t testing.TB) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skipf("needs root for loop devices and mounts (euid %d)", os.Geteuid())
	}
}

// Run runs a command and returns its combined output; a failure fails t.
func Run(t testing.TB, name string, args ...string) string {
	t.Helper()
	return RunIn(t, "", name, args...)
}

// RunIn is Run with stdin.
func RunIn(t testing.TB, stdin, name string, args ...string) string {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Stdin = strings.NewReader(stdin)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
	return string(out)
}

// Image creates a sparse file of size bytes in a temporary directory.
func Image(t testing.TB, size int64) string {
	t.Helper()
	file := filepath.Join(t.TempDir(), "disk.img")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	Resize(t, file, size)
	return file
}

// Resize makes file size bytes long (sparse).
func Resize(t testing.TB, file string, size int64) {
	t.Helper()
	if err := os.Truncate(file, size); err != nil {
		t.Fatal(err)
	}
}

// Attach attaches file to a free loop device with its partitions
// (losetup -P) and logical sectors of sectorSize bytes, and returns the
// device, detached when the test ends (after what was mounted from it is
// unmounted, if that was registered later).
func Attach(t testing.TB, file string, sectorSize int) string {
	t.Helper()
	args := []string{"--find", "--show", "--partscan"}
	if sectorSize != 512 {
		args = append(args, "--sector-size", strconv.Itoa(sectorSize))
	}
	dev := strings.TrimSpace(Run(t, "losetup", append(args, file)...))
	t.Cleanup(func() {
		if out, err := exec.Command("losetup", "--detach", dev).CombinedOutput(); err != nil {
			t.Errorf("losetup --detach %s: %v\n%s", dev, err, out)
		}
	})
	// A kernel without the partition table parsers (no
	// CONFIG_MSDOS_PARTITION, CONFIG_EFI_PARTITION) finds no partitions:
	// partx reads the table and adds them with BLKPG. A file without a
	// table has none either way.
	if parts, _ := filepath.Glob(filepath.Join("/sys/class/block", filepath.Base(dev), filepath.Base(dev)+"p*")); len(parts) == 0 {
		exec.Command("partx", "--add", dev).Run()
	}
	return dev
}

// WaitBlock waits up to 5 seconds for the block device node path.
func WaitBlock(t testing.TB, path string) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		var st unix.Stat_t
		if unix.Stat(path, &st) == nil && st.Mode&unix.S_IFMT == unix.S_IFBLK {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("no block device %s after 5s", path)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Mkfs makes a filesystem of type fstype (ext4, xfs, btrfs) on dev.
func Mkfs(t testing.TB, fstype, dev string) {
	t.Helper()
	var args []string
	switch fstype {
	case "ext4", "ext3", "ext2":
		args = []string{"-q", "-F"}
	case "xfs", "btrfs":
		args = []string{"-q", "-f"}
	}
	Run(t, "mkfs."+fstype, append(args, dev)...)
}

// Mount mounts dev (fstype) on a new temporary directory, unmounted when
// the test ends, and returns the directory.
func Mount(t testing.TB, dev, fstype string) string {
	t.Helper()
	dir := t.TempDir()
	if err := unix.Mount(dev, dir, fstype, 0, ""); err != nil {
		t.Fatalf("mount %s (%s) on %s: %v", dev, fstype, dir, err)
	}
	t.Cleanup(func() {
		if err := unix.Unmount(dir, 0); err != nil {
			t.Errorf("unmount %s: %v", dir, err)
			unix.Unmount(dir, unix.MNT_DETACH)
		}
	})
	return dir
}

// SysSize is the size in bytes sysfs gives the block device /dev/name.
func SysSize(t testing.TB, name string) int64 {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("/sys/class/block", filepath.Base(name), "size"))
	if err != nil {
		t.Fatal(err)
	}
	n, err := strconv.ParseInt(strings.TrimSpace(string(raw)), 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	return n * 512
}

// Statfs is the size in bytes statfs gives the filesystem at dir.
func Statfs(t testing.TB, dir string) int64 {
	t.Helper()
	var st unix.Statfs_t
	if err := unix.Statfs(dir, &st); err != nil {
		t.Fatal(err)
	}
	return int64(st.Blocks) * st.Bsize
}

// HasCap tells whether this process has capability c (unix.CAP_*) in its
// effective set. Some sandboxes run root without CAP_SYS_RESOURCE, which
// ext4's online resize needs (resize2fs fails there the same way).
func HasCap(t testing.TB, c int) bool {
	t.Helper()
	raw, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Fatal(err)
	}
	for line := range strings.Lines(string(raw)) {
		if v, ok := strings.CutPrefix(line, "CapEff:"); ok {
			n, err := strconv.ParseUint(strings.TrimSpace(v), 16, 64)
			if err != nil {
				t.Fatalf("CapEff %q: %v", v, err)
			}
			return n&(1<<c) != 0
		}
	}
	t.Fatal("no CapEff in /proc/self/status")
	return false
}
