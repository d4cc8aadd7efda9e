package vm

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// Table is a partition table kind.
type Table string

// The tables PartitionedDisk makes.
const (
	GPT Table = "gpt"
	MBR Table = "mbr"
)

// PartStart is where PartitionedDisk's partition starts, in bytes.
const PartStart = 1 << 20

// PartName is the GPT partition name (PARTLABEL) PartitionedDisk gives.
const PartName = "root"

// gptDisk makes a GPT disk image as a cloud image is and as it lands on a
// bigger volume: one partition of partMB named PartName (root=PARTLABEL=root)
// holding a filesystem of fstype (ext4, xfs or btrfs) labelled label with
// dir's tree, in a disk of partMB+2 MiB; then the file is grown to diskMB
// without fixing the table, so the backup GPT header stays where the image
// ended. See PartitionedDisk.
func gptDisk(img string, partMB, diskMB int, fstype, label, dir string) error {
	return PartitionedDisk(img, GPT, partMB, diskMB, fstype, label, dir, "")
}

// mbrDisk is gptDisk with an MBR: one primary partition (type 83).
func mbrDisk(img string, partMB, diskMB int, fstype, label, dir string) error {
	return PartitionedDisk(img, MBR, partMB, diskMB, fstype, label, dir, "")
}

// PartitionedDisk makes gptDisk's or mbrDisk's disk (by table); subvol,
// for btrfs, puts dir's tree in a new subvolume of that name instead of the
// top level (boot it with rootflags=subvol=NAME). The files are sparse.
// It needs root: xfs, and btrfs with a subvolume, are filled through a
// loop mount of the filesystem image (mkfs.ext4 -d and mkfs.btrfs
// --rootdir fill the others). xfs needs partMB >= 300.
func PartitionedDisk(img string, table Table, partMB, diskMB int, fstype, label, dir, subvol string) error {
	if diskMB < partMB+2 {
		return fmt.Errorf("disk %s: %d MiB cannot hold a partition of %d MiB and its table", img, diskMB, partMB)
	}
	if table != GPT && table != MBR {
		return fmt.Errorf("disk %s: partition table %q: want gpt or mbr", img, table)
	}
	if subvol != "" && fstype != "btrfs" {
		return fmt.Errorf("disk %s: a subvolume needs btrfs, not %s", img, fstype)
	}
	part := img + ".part"
	defer os.Remove(part)
	if err := makeFS(part, partMB, fstype, label, dir, subvol); err != nil {
		return fmt.Errorf("disk %s: %s: %w", img, fstype, err)
	}
	if err := sparseFile(img, int64(partMB+2)<<20); err != nil {
		return fmt.Errorf("disk %s: %w", img, err)
	}
	first := PartStart / 512
	if table == GPT {
		if err := run("sgdisk", "-n", fmt.Sprintf("1:%d:+%dM", first, partMB), "-c", "1:"+PartName, "-t", "1:8300", img); err != nil {
			return fmt.Errorf("disk %s: %w", img, err)
		}
	} else {
		if err := runIn(fmt.Sprintf("label: dos\nstart=%d, size=%d, type=83\n", first, partMB<<11), "sfdisk", "-q", img); err != nil {
			return fmt.Errorf("disk %s: %w", img, err)
		}
	}
	if err := run("dd", "if="+part, "of="+img, "bs=1M", fmt.Sprintf("seek=%d", PartStart>>20), "conv=notrunc,sparse", "status=none"); err != nil {
		return fmt.Errorf("disk %s: %w", img, err)
	}
	// The volume is bigger than the image; nothing else changes.
	return os.Truncate(img, int64(diskMB)<<20)
}

// sparseFile makes path an empty (sparse) file of size bytes.
func sparseFile(path string, size int64) error {
	if err := os.WriteFile(path, nil, 0o644); err != nil {
		return err
	}
	return os.Truncate(path, size)
}

// makeFS makes the filesystem image part of sizeMB with dir's tree.
func makeFS(part string, sizeMB int, fstype, label, dir, subvol string) error {
	if err := sparseFile(part, int64(sizeMB)<<20); err != nil {
		return err
	}
	switch {
	case fstype == "ext4":
		return Ext4(part, dir, label, "", sizeMB)
	case fstype == "btrfs" && subvol == "":
		// --rootdir keeps owners, modes and xattrs (TestPartitionedDisks).
		return run("mkfs.btrfs", "-q", "-f", "-L", label, "--rootdir", dir, part)
	case fstype == "btrfs":
		// btrfs-progs 6.2 has no --subvol: make the subvolume in a mount.
		if err := run("mkfs.btrfs", "-q", "-f", "-L", label, part); err != nil {
			return err
		}
		return fillMounted(part, dir, subvol)
	case fstype == "xfs":
		if sizeMB < 300 {
			return fmt.Errorf("%d MiB: xfs needs at least 300", sizeMB)
		}
		if err := run("mkfs.xfs", "-q", "-f", "-L", label, part); err != nil {
			return err
		}
		return fillMounted(part, dir, "")
	}
	return fmt.Errorf("filesystem %q: want ext4, xfs or btrfs", fstype)
}

// fillMounted copies dir's tree (owners, modes, xattrs, links) into the
// filesystem image part through a loop mount, into a new btrfs subvolume
// when subvol is set. The mount is undone on every path.
func fillMounted(part, dir, subvol string) (err error) {
	mnt, err := os.MkdirTemp("", "vm-fill-")
	if err != nil {
		return err
	}
	defer os.Remove(mnt)
	// -o loop: the loop device goes away with the unmount.
	if err := run("mount", "-o", "loop", part, mnt); err != nil {
		return err
	}
	defer func() {
		if uerr := run("umount", mnt); err == nil {
			err = uerr
		}
	}()
	dst := mnt
	if subvol != "" {
		dst = filepath.Join(mnt, subvol)
		if err := run("btrfs", "-q", "subvolume", "create", dst); err != nil {
			return err
		}
	}
	return run("cp", "-a", dir+"/.", dst)
}

// partitionFacts are what a test checks of a PartitionedDisk disk after
// a boot.
type partitionFacts struct {
	// Start and Size of partition 1, in 512-byte sectors.
	Start, Size int64
	// DiskSectors is the disk's size in 512-byte sectors.
	DiskSectors int64
	// LastLBA is the GPT header's last usable sector (0 for MBR).
	LastLBA int64
	// Verify is sgdisk -v's output (GPT) or sfdisk -V's (MBR).
	Verify string
}

// End is partition 1's last sector.
func (f partitionFacts) End() int64 { return f.Start + f.Size - 1 }

// GrowEnd is the last sector growpart grows partition 1 to on this disk:
// the last usable sector of a GPT whose backup is at the disk's end, and
// as much for MBR (growpart keeps the room of a backup GPT there too).
func (f partitionFacts) GrowEnd() int64 { return f.DiskSectors - 34 }

// Verified tells whether the table verifies: sgdisk -v found no problems
// (GPT), sfdisk -V detected no errors (MBR).
func (f partitionFacts) Verified(table Table) bool {
	if table == GPT {
		return strings.Contains(f.Verify, "No problems found")
	}
	return strings.Contains(f.Verify, "No errors detected")
}

// Partition reads partition 1 of img with sfdisk --json and verifies the
// table: sgdisk -v for GPT, sfdisk -V for MBR.
func Partition(img string, table Table) (partitionFacts, error) {
	var f partitionFacts
	out, err := exec.Command("sfdisk", "--json", img).Output()
	if err != nil {
		return f, fmt.Errorf("sfdisk --json %s: %w", img, err)
	}
	var pt struct {
		PartitionTable struct {
			Label      string `json:"label"`
			LastLBA    int64  `json:"lastlba"`
			Partitions []struct {
				Start int64 `json:"start"`
				Size  int64 `json:"size"`
			} `json:"partitions"`
		} `json:"partitiontable"`
	}
	if err := json.Unmarshal(out, &pt); err != nil {
		return f, fmt.Errorf("sfdisk --json %s: %w: %s", img, err, out)
	}
	want := map[Table]string{GPT: "gpt", MBR: "dos"}[table]
	if pt.PartitionTable.Label != want || len(pt.PartitionTable.Partitions) == 0 {
		return f, fmt.Errorf("sfdisk --json %s: want a %s table with a partition: %s", img, want, out)
	}
	p := pt.PartitionTable.Partitions[0]
	f.Start, f.Size, f.LastLBA = p.Start, p.Size, pt.PartitionTable.LastLBA
	fi, err := os.Stat(img)
	if err != nil {
		return f, err
	}
	f.DiskSectors = fi.Size() / 512
	var v []byte
	if table == GPT {
		v, _ = exec.Command("sgdisk", "-v", img).CombinedOutput()
	} else {
		v, _ = exec.Command("sfdisk", "-V", img).CombinedOutput()
	}
	f.Verify = string(v)
	return f, nil
}

// attach makes a loop device of partition 1 of img, read-write (so that a
// mount replays a journal or log, as the next boot would).
func attach(img string, table Table) (string, error) {
	f, err := Partition(img, table)
	if err != nil {
		return "", err
	}
	out, err := exec.Command("losetup", "-f", "--show", "-o", strconv.FormatInt(f.Start*512, 10),
		"--sizelimit", strconv.FormatInt(f.Size*512, 10), img).Output()
	if err != nil {
		return "", fmt.Errorf("losetup %s: %w", img, err)
	}
	return strings.TrimSpace(string(out)), nil
}

// MountPart calls fn with partition 1 of img (a PartitionedDisk disk)
// mounted read-only, the btrfs subvolume subvol ("" the top level), then
// unmounts it and detaches the loop device, whatever happens. The loop
// device is writable: a journal or log the guest left is replayed, as the
// next boot would. dev is the loop device.
func MountPart(img string, table Table, fstype, subvol string, fn func(dir, dev string) error) (err error) {
	loop, err := attach(img, table)
	if err != nil {
		return err
	}
	defer func() {
		if derr := run("losetup", "-d", loop); err == nil {
			err = derr
		}
	}()
	mnt, err := os.MkdirTemp("", "vm-mount-")
	if err != nil {
		return err
	}
	defer os.Remove(mnt)
	opts := "ro"
	if subvol != "" {
		opts += ",subvol=" + subvol
	}
	if err := run("mount", "-t", fstype, "-o", opts, loop, mnt); err != nil {
		return err
	}
	defer func() {
		if uerr := run("umount", mnt); err == nil {
			err = uerr
		}
	}()
	return fn(mnt, loop)
}

// ReadPartFile returns a file's content from partition 1 of img (a
// PartitionedDisk disk), mounted read-only.
func ReadPartFile(img string, table Table, fstype, subvol, path string) (string, error) {
	var s string
	err := MountPart(img, table, fstype, subvol, func(dir, _ string) error {
		b, err := os.ReadFile(filepath.Join(dir, path))
		s = string(b)
		return err
	})
	return s, err
}

var (
	xfsBlocks   = regexp.MustCompile(`(?m)^data\s+=\s+bsize=(\d+)\s+blocks=(\d+),`)
	btrfsDevice = regexp.MustCompile(`(?m)^\s*devid\s+1\s+size\s+(\d+)\s`)
	ext4Field   = regexp.MustCompile(`(?m)^(Block count|Block size):\s+(\d+)$`)
)

// FSSize returns the size in bytes the filesystem in partition 1 of img
// has, as the kernel sees it once mounted: ext4 the superblock's block
// count × block size (dumpe2fs -h), xfs the data section's blocks
// (xfs_info), btrfs the device's size (btrfs filesystem show --raw).
func FSSize(img string, table Table, fstype string) (int64, error) {
	var size int64
	err := MountPart(img, table, fstype, "", func(dir, dev string) error {
		var err error
		size, err = mountedSize(fstype, dir, dev)
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("%s size in %s: %w", fstype, img, err)
	}
	return size, nil
}

func mountedSize(fstype, dir, dev string) (int64, error) {
	product := func(a, b string) int64 {
		x, _ := strconv.ParseInt(a, 10, 64)
		y, _ := strconv.ParseInt(b, 10, 64)
		return x * y
	}
	switch fstype {
	case "ext4":
		out, err := exec.Command("dumpe2fs", "-h", dev).Output()
		if err != nil {
			return 0, fmt.Errorf("dumpe2fs -h %s: %w", dev, err)
		}
		f := map[string]string{}
		for _, m := range ext4Field.FindAllStringSubmatch(string(out), -1) {
			f[m[1]] = m[2]
		}
		if f["Block count"] == "" || f["Block size"] == "" {
			return 0, fmt.Errorf("dumpe2fs -h %s: no block count and size:\n%s", dev, out)
		}
		return product(f["Block count"], f["Block size"]), nil
	case "xfs":
		out, err := exec.Command("xfs_info", dir).Output()
		if err != nil {
			return 0, fmt.Errorf("xfs_info: %w", err)
		}
		m := xfsBlocks.FindStringSubmatch(string(out))
		if m == nil {
			return 0, fmt.Errorf("xfs_info: no data blocks:\n%s", out)
		}
		return product(m[1], m[2]), nil
	case "btrfs":
		out, err := exec.Command("btrfs", "filesystem", "show", "--raw", dir).Output()
		if err != nil {
			return 0, fmt.Errorf("btrfs filesystem show: %w", err)
		}
		m := btrfsDevice.FindStringSubmatch(string(out))
		if m == nil {
			return 0, fmt.Errorf("btrfs filesystem show: no devid 1:\n%s", out)
		}
		return strconv.ParseInt(m[1], 10, 64)
	}
	return 0, fmt.Errorf("filesystem %q: want ext4, xfs or btrfs", fstype)
}

// TableHash is a hash of the sectors a partition table lives in: the first
// 34 (the MBR, and a GPT's primary header and entries) and, for GPT, the
// last 33 (the backup entries and header where a verified GPT has them).
// Nothing else: a filesystem may write its own blocks on any boot.
func TableHash(img string, table Table) (string, error) {
	f, err := os.Open(img)
	if err != nil {
		return "", err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return "", err
	}
	h := sha256.New()
	read := func(off, n int64) error {
		buf := make([]byte, n)
		if _, err := f.ReadAt(buf, off); err != nil {
			return fmt.Errorf("%s: read %d bytes at %d: %w", img, n, off, err)
		}
		h.Write(buf)
		return nil
	}
	if err := read(0, 34*512); err != nil {
		return "", err
	}
	if table == GPT {
		if err := read(fi.Size()-33*512, 33*512); err != nil {
			return "", err
		}
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// SELinuxLabel returns the security.selinux extended attribute of path
// itself (a symlink's own), without its trailing NUL; "" and an error
// when it has none. getfattr is not needed.
func SELinuxLabel(path string) (string, error) {
	buf := make([]byte, 256)
	for {
		n, err := unix.Lgetxattr(path, "security.selinux", buf)
		if errors.Is(err, unix.ERANGE) && len(buf) < 1<<16 {
			buf = make([]byte, 2*len(buf))
			continue
		}
		if err != nil {
			return "", fmt.Errorf("security.selinux of %s: %w", path, err)
		}
		return strings.TrimRight(string(buf[:n]), "\x00"), nil
	}
}
