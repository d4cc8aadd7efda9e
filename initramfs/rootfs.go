package initramfs

import (
	"bufio"
	"io"
	"path"
	"slices"
	"strings"

	"github.com/earlyinit/earlyinit/internal/kmod"
)

// RootFilesystems are the module set's root filesystem drivers. Each is
// large (xfs.ko 4.2 MB, btrfs.ko 3.9 MB with its compressors and RAID
// code, ext4.ko 2.1 MB with jbd2), and a root has one: a generic image
// built inside a root (ROOTFS=auto) keeps the one its fstab names.
var RootFilesystems = []string{"ext4", "xfs", "btrfs"}

// rootFSModule is the driver of a filesystem type in fstab: ext4.ko
// mounts ext2 and ext3 too.
func rootFSModule(fstype string) (string, bool) {
	switch fstype {
	case "ext2", "ext3", "ext4":
		return "ext4", true
	case "xfs", "btrfs":
		return fstype, true
	}
	return "", false
}

// MaxFstab bounds the fstab FstabRootFS reads.
const MaxFstab = 1 << 20

// FstabRootFS returns the drivers (RootFilesystems) of the root that an
// /etc/fstab mounts on "/": one for a type ("xfs"), several for a list of
// types ("btrfs,ext4", which mount tries in turn) or several "/" lines.
// ok is false when no line mounts "/", or one names another type or
// "auto": then nothing says which drivers the root needs.
func FstabRootFS(r io.Reader) (mods []string, ok bool) {
	s := bufio.NewScanner(io.LimitReader(r, MaxFstab))
	s.Buffer(make([]byte, 4096), MaxFstab)
	for s.Scan() {
		f := strings.Fields(s.Text())
		if len(f) < 3 || strings.HasPrefix(f[0], "#") || f[1] != "/" {
			continue
		}
		for _, t := range strings.Split(f[2], ",") {
			m, known := rootFSModule(t)
			if !known {
				return nil, false
			}
			if !slices.Contains(mods, m) {
				mods = append(mods, m)
			}
		}
	}
	if s.Err() != nil || len(mods) == 0 {
		return nil, false
	}
	return mods, true
}

// OtherRootFS are the RootFilesystems a root whose drivers are keep does
// not need, less those add names or its path globs match (MODULES_ADD
// keeps a module on purpose).
func OtherRootFS(keep, add []string) []string {
	var out []string
	for _, m := range RootFilesystems {
		added := func(a string) bool {
			if strings.Contains(a, "/") {
				ok, _ := path.Match(a, "fs/"+m+"/"+m+".ko")
				return ok
			}
			return kmod.Normalize(a) == m
		}
		if slices.Contains(keep, m) || slices.ContainsFunc(add, added) {
			continue
		}
		out = append(out, m)
	}
	return out
}
