package disks

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/earlyinit/earlyinit/internal/ccfg"
	"github.com/earlyinit/earlyinit/internal/modules/core"
)

// DiskSetup is cc_disk_setup: disk_setup partitions disks, then fs_setup
// makes file systems, with the root's own tools (lsblk, blkid, blockdev,
// sfdisk or sgdisk, wipefs, mkfs.*). Unlike cloud-init, a disk or
// partition that has a partition table or a file system is never touched
// without overwrite: true (cloud-init runs mkfs on a used partition when
// its label or type differ, and "remove" purges a disk regardless).
//
// Devices are /dev paths, or names mapped by device_aliases and then, as
// cloud-init's datasources do, by the EC2 block-device-mapping of the
// metadata or (ephemeralN, swap) by the file system label or type; "dev.N"
// in fs_setup is partition N of dev. Everything given to a tool is
// checked first (paths under /dev, labels and types of plain characters);
// a failing entry is reported and the others go on.
//
// Stricter than cloud-init, because "no signature" is not "blank" (GRUB's
// BIOS boot partition, an empty ESP, a raw database partition have none)
// and blkid's exit status 2 means both "nothing found" and "could not
// read", and because a device name can move between boots (NVMe), so the
// partition a config names may be another disk's. Without overwrite: true:
//
//   - Every device about to be partitioned or formatted is also read with
//     earlyinit's own probes (internal/blockdev, and the LVM2, swap, RAID and
//     LUKS signatures): one that cannot be read (its first or last MiB, or
//     the open fails, or it is empty) is an error, treated as in use; one
//     where they find what blkid did not is an error too.
//   - fs_setup's partition any and auto (cloud-init's find_device_node)
//     choose a partition only on a disk disk_setup partitioned in this run
//     (found blank, or wiped with its overwrite: true): there the search
//     passes over partitions of a system type unless the type is for the
//     file system asked (swap on a swap partition, vfat on an ESP). On
//     any other disk with a partition table the entry fails, naming the
//     partition cloud-init would have formatted and why: a system type
//     (BIOS boot, ESP, MSR, PReP, swap, LVM, RAID, an MBR extended or GPT
//     protective entry), used partitions (a file system or other
//     signature, a system type, unreadable), or, when every partition
//     looks blank, that a raw partition holds data without any signature.
//     A partition holding replace_fs's file system stays replaceable.
//   - partition N (and "dev.N") of a system type is not formatted unless
//     the type is for the file system asked; the type is read from the
//     disk's own table, else lsblk's PARTTYPE.
//
// The search itself sees earlyinit's own probe of each partition where
// lsblk has no FSTYPE (no udev database), so a file system made by an
// earlier entry is found without waiting for udev.
func DiskSetup(ctx context.Context, e *core.Env) error {
	aliases, _, err := ccfg.Decode[ccfg.DeviceAliases](e.Cfg, "device_aliases")
	if err != nil {
		return err
	}
	disks, _, err := ccfg.Decode[ccfg.DiskSetups](e.Cfg, "disk_setup")
	if err != nil {
		return err
	}
	var errs []string
	// ours is the disks (lsblk's kernel names) disk_setup partitioned in
	// this run: only there may fs_setup's any and auto choose a partition
	// without overwrite: true.
	ours := map[string]bool{}
	for _, n := range slices.Sorted(maps.Keys(disks)) {
		def := disks[n]
		if err := def.Err(); err != nil {
			errs = append(errs, err.Error())
			continue
		}
		if err := partitionDisk(ctx, e, aliases, n, def, ours); err != nil {
			errs = append(errs, fmt.Sprintf("disk_setup.%s: %v", n, err))
		}
	}
	// fs_setup is read once the disks are partitioned: one that is not a
	// list is an error, but does not stop disk_setup's entries.
	fss, _, err := ccfg.Decode[[]ccfg.FSSetup](e.Cfg, "fs_setup")
	if err != nil {
		return err
	}
	for i, def := range fss {
		if err := def.Err(); err != nil {
			errs = append(errs, err.Error())
			continue
		}
		if err := makeFS(ctx, e, aliases, def, ours); err != nil {
			errs = append(errs, fmt.Sprintf("fs_setup.%d: %v", i, err))
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("%s", strings.Join(errs, "; "))
	}
	return nil
}

// validDevPath is a device path: /dev/ and plain characters, no "..".
func validDevPath(s string) bool {
	if !strings.HasPrefix(s, "/dev/") || strings.Contains(s, "..") || len(s) > 255 {
		return false
	}
	for _, r := range s[5:] {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("_.:+@/-", r)) {
			return false
		}
	}
	return !strings.HasSuffix(s, "/")
}

// validFSLabel is a file system label: 1 to 64 letters, digits and
// "_.:+@-", not starting with "-".
func validFSLabel(s string) bool {
	if s == "" || s[0] == '-' || len(s) > 64 {
		return false
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("_.:+@-", r)) {
			return false
		}
	}
	return true
}

// resolveDevice is cloud-init's alias_to_device: device_aliases, then the
// datasource's names; the result must be a /dev path.
func resolveDevice(ctx context.Context, e *core.Env, aliases ccfg.DeviceAliases, name string) (string, error) {
	cand := name
	if a, ok := aliases[name]; ok {
		if a.Kind != "a string" {
			return "", fmt.Errorf("device_aliases.%s: want a string, got %s", name, a.Kind)
		}
		cand = a.Device
	}
	if !strings.HasPrefix(cand, "/") {
		if dev := datasourceDevice(ctx, e, cand); dev != "" {
			cand = dev
		}
	}
	if !validDevPath(cand) {
		return "", fmt.Errorf("device %q: not a /dev path, nor a name the datasource maps", cand)
	}
	return cand, nil
}

// datasourceDevice is device_name_to_device: the metadata's EC2
// block-device-mapping (ephemeral for ephemeral0 too), else, as OpenStack,
// the device labelled name (of type swap for swap).
func datasourceDevice(ctx context.Context, e *core.Env, name string) string {
	if e.Data != nil {
		if bdm, ok := e.Data.Meta["block-device-mapping"].(map[string]any); ok {
			for k, v := range bdm {
				if s, ok := v.(string); ok && (k == name || k == "ephemeral" && name == "ephemeral0") {
					if !strings.HasPrefix(s, "/") {
						s = "/dev/" + s
					}
					if validDevPath(s) && e.Root.Exists(s) {
						return s
					}
				}
			}
		}
	}
	if !validFSLabel(name) {
		return ""
	}
	crit := "LABEL=" + name
	if name == "swap" {
		crit = "TYPE=swap"
	}
	out, err := e.Run(ctx, core.Cmd{Name: "blkid", Args: []string{"-c", "/dev/null", "-l", "-o", "device", "-t", crit}})
	if err != nil {
		return ""
	}
	dev := strings.TrimSpace(strings.SplitN(string(out), "\n", 2)[0])
	if validDevPath(dev) {
		return dev
	}
	return ""
}

// blkEntry is one lsblk --pairs line.
type blkEntry struct{ Name, Type, FSType, Label, PartType string }

// lsblk is enumerate_disk.
func lsblk(ctx context.Context, e *core.Env, dev string, nodeps bool) ([]blkEntry, error) {
	args := []string{"--pairs", "--output", "NAME,TYPE,FSTYPE,LABEL,PARTTYPE", dev}
	if nodeps {
		args = append(args, "--nodeps")
	}
	out, err := e.Run(ctx, core.Cmd{Name: "lsblk", Args: args})
	if err != nil {
		return nil, err
	}
	var ents []blkEntry
	for _, line := range strings.Split(string(out), "\n") {
		kv := pairsLine(line)
		if len(kv) == 0 {
			continue
		}
		ents = append(ents, blkEntry{kv["NAME"], strings.ToLower(kv["TYPE"]), kv["FSTYPE"], kv["LABEL"], strings.ToLower(kv["PARTTYPE"])})
	}
	return ents, nil
}

// pairsLine reads KEY="value" pairs (lsblk --pairs, blkid -o export).
func pairsLine(line string) map[string]string {
	kv := map[string]string{}
	for line = strings.TrimSpace(line); line != ""; line = strings.TrimSpace(line) {
		k, rest, ok := strings.Cut(line, "=")
		if !ok {
			break
		}
		if strings.HasPrefix(rest, `"`) {
			end := strings.Index(rest[1:], `"`)
			if end < 0 {
				break
			}
			kv[k], line = rest[1:end+1], rest[end+2:]
		} else {
			v, r, _ := strings.Cut(rest, " ")
			kv[k], line = v, r
		}
	}
	return kv
}

// probe is blkid's low-level probe of dev: its file system type, label and
// partition table type ("" for none).
func probe(ctx context.Context, e *core.Env, dev string) (fsType, label, ptType string, err error) {
	out, err := e.Run(ctx, core.Cmd{Name: "blkid", Args: []string{"-c", "/dev/null", "-p", "-o", "export", dev}})
	if code, ok := core.ExitCode(err); ok && code == 2 {
		return "", "", "", nil // nothing found
	}
	if err != nil {
		return "", "", "", err
	}
	kv := map[string]string{}
	for _, line := range strings.Split(string(out), "\n") {
		if k, v, ok := strings.Cut(strings.TrimSpace(line), "="); ok {
			kv[k] = v
		}
	}
	return kv["TYPE"], kv["LABEL"], kv["PTTYPE"], nil
}

// waitDevice waits for udev once when dev is not there yet.
func waitDevice(ctx context.Context, e *core.Env, dev string) error {
	if !e.Root.Exists(dev) {
		e.Run(ctx, core.Cmd{Name: "udevadm", Args: []string{"settle"}})
		if !e.Root.Exists(dev) {
			return fmt.Errorf("%s: no such device", dev)
		}
	}
	return nil
}
