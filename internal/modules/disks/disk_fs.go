package disks

import (
	"context"
	"fmt"
	"io"
	"path"
	"strconv"
	"strings"

	"github.com/earlyinit/earlyinit/internal/blockdev"
	"github.com/earlyinit/earlyinit/internal/ccfg"
	"github.com/earlyinit/earlyinit/internal/modules/core"
	"github.com/earlyinit/earlyinit/internal/pyfmt"
)

// fsEntry is one fs_setup entry, read and checked.
type fsEntry struct {
	label     string
	fsType    string // filesystem
	replace   string // replace_fs, "" for none
	overwrite bool
	partition string   // a number, auto, any, none or ""
	dev       string   // device, resolved
	opts      []string // extra_opts
	cmdTmpl   string   // cmd, "" for mkfs
}

// makeFS is mkfs for one fs_setup entry; ours is the disks disk_setup
// partitioned in this run.
func makeFS(ctx context.Context, e *core.Env, aliases ccfg.DeviceAliases, def ccfg.FSSetup, ours map[string]bool) error {
	f, err := readFSEntry(ctx, e, aliases, def)
	if err != nil {
		return err
	}
	if err := waitDevice(ctx, e, f.dev); err != nil {
		return err
	}
	target, done, err := f.target(ctx, e, ours)
	if err != nil || done {
		return err
	}
	if done, err := f.leaveAlone(ctx, e, target); err != nil || done {
		return err
	}
	c, err := f.command(e, target)
	if err != nil {
		return err
	}
	e.Logf("fs_setup: creating %s file system %q on %s", f.fsType, f.label, target)
	_, err = e.Run(ctx, c)
	return err
}

// readFSEntry checks fs_setup entry def, and resolves its device.
func readFSEntry(ctx context.Context, e *core.Env, aliases ccfg.DeviceAliases, def ccfg.FSSetup) (fsEntry, error) {
	f := fsEntry{label: def.Label, fsType: def.Filesystem, replace: string(def.ReplaceFS), overwrite: def.Overwrite, partition: strings.ToLower(def.Partition)}
	if f.label != "" && !validFSLabel(f.label) {
		return f, fmt.Errorf("label %q: want letters, digits and _.:+@- (not starting with -)", f.label)
	}
	if f.fsType != "" && strings.Trim(f.fsType, "abcdefghijklmnopqrstuvwxyz0123456789") != "" {
		return f, fmt.Errorf("filesystem %q: not a file system type", f.fsType)
	}
	name := def.Device
	if name == "" {
		return f, fmt.Errorf("device: required")
	}
	// expand_dotted_devname: "ephemeral0.1" is partition 1 of ephemeral0.
	if i := strings.LastIndex(name, "."); i > 0 {
		if n := name[i+1:]; n != "" && strings.Trim(n, "0123456789") == "" {
			name, f.partition = name[:i], n
		}
	}
	var err error
	if f.dev, err = resolveDevice(ctx, e, aliases, name); err != nil {
		return f, err
	}
	var opts ccfg.MkfsOpts
	if err := ccfg.DecodeValue(def.ExtraOpts, "extra_opts", &opts); err != nil {
		return f, err
	}
	f.opts = opts
	var cmd ccfg.MkfsCmd
	if err := ccfg.DecodeValue(def.Cmd, "cmd", &cmd); err != nil {
		return f, err
	}
	f.cmdTmpl = string(cmd)
	if f.fsType == "" && f.cmdTmpl == "" {
		return f, fmt.Errorf("no filesystem nor cmd for label %q", f.label)
	}
	return f, nil
}

// target is the device f formats: its device, or the partition it names
// or any and auto choose. done is true when nothing is to be made (a
// reason was logged).
func (f *fsEntry) target(ctx context.Context, e *core.Env, ours map[string]bool) (target string, done bool, err error) {
	switch {
	case f.partition != "" && strings.Trim(f.partition, "0123456789") == "":
		target = partitionPath(f.dev, f.partition)
		if !e.Root.Exists(target) {
			return "", false, fmt.Errorf("%s: no such partition", target)
		}
		if !f.overwrite {
			if err := checkPartitionType(ctx, e, f.dev, f.partition, target, f.fsType); err != nil {
				return "", false, err
			}
		}
		return target, false, nil
	case f.partition == "auto" || f.partition == "any":
		return f.choose(ctx, e, ours)
	case f.partition == "none" || f.partition == "":
		return f.dev, false, nil
	default:
		return "", false, fmt.Errorf("partition %q: want a number, auto, any or none", f.partition)
	}
}

// choose is partition any or auto: find_device_node on f's disk, then,
// without overwrite: true, earlyinit's rule for the partition chosen.
func (f *fsEntry) choose(ctx context.Context, e *core.Env, ours map[string]bool) (target string, done bool, err error) {
	ents, err := lsblk(ctx, e, f.dev, false)
	if err != nil {
		return "", false, err
	}
	if len(ents) == 0 {
		return "", false, fmt.Errorf("%s: lsblk lists nothing", f.dev)
	}
	disk := ents[0].Name
	view, err := readDisk(ctx, e, f.dev, ents)
	if err != nil && !f.overwrite {
		return "", false, fmt.Errorf("%s: partition: %s: %w", f.dev, f.partition, unreadable(f.dev, err, "no partition of it chosen"))
	}
	var skip func(string) bool
	if ours[disk] && !f.overwrite {
		// A disk disk_setup partitioned in this run: the search
		// passes over system partitions not made for fsType.
		skip = func(p string) bool {
			what, _ := view.systemType(p)
			return what != "" && !typeFits(what, f.fsType)
		}
	}
	t, reuse := findDeviceNode(f.dev, view.enrich(ents), f.fsType, f.label, f.partition == "auto", f.replace, skip)
	if reuse {
		e.Logf("fs_setup: %s already has the %s file system %q", t, f.fsType, f.label)
		return "", true, nil
	}
	if t == "" {
		e.Logf("fs_setup: %s: no partition free for %q: skipped", f.dev, f.label)
		return "", true, nil
	}
	if !validDevPath(t) {
		return "", false, fmt.Errorf("lsblk gave %q: not a device path", t)
	}
	if !f.overwrite {
		if err := view.mayFormat(t, "/dev/"+disk, f.fsType, f.replace, f.partition == "auto", ours[disk]); err != nil {
			return "", false, fmt.Errorf("%s: partition: %s: %w", f.dev, f.partition, err)
		}
	}
	return t, false, nil
}

// leaveAlone tells whether target is to be left as it is (the reason
// logged): it already has the file system asked for, or, without
// overwrite: true, another one or a partition table. The error refuses
// a target earlyinit's own read cannot read or finds in use, or a
// system partition.
func (f *fsEntry) leaveAlone(ctx context.Context, e *core.Env, target string) (bool, error) {
	var found bytesFound
	if !f.overwrite {
		// blkid's exit status 2 is also "could not read": earlyinit's
		// own read of target comes first.
		var err error
		if found, err = deviceUse(ctx, e, target); err != nil {
			return false, unreadable(target, err, "not formatted")
		}
		if f.partition == "none" || f.partition == "" {
			if err := checkPartitionType(ctx, e, "", "", target, f.fsType); err != nil {
				return false, err
			}
		}
	}
	have, haveLabel, pt, err := probe(ctx, e, target)
	if err != nil {
		return false, err
	}
	if have == f.fsType && haveLabel == f.label && have != "" && !f.overwrite {
		e.Logf("fs_setup: %s already has the %s file system %q", target, f.fsType, f.label)
		return true, nil
	}
	replacing := f.replace != "" && have == f.replace
	if (have != "" || pt != "") && !f.overwrite && !replacing {
		e.Logf("fs_setup: %s has a file system or partition table (%s%s) and overwrite is not true: left alone", target, have, pt)
		return true, nil
	}
	if found.What != "" && !f.overwrite && !replacing {
		return false, fmt.Errorf("%s: blkid found nothing, but it holds %s: treated as in use, not formatted without overwrite: true", target, found.What)
	}
	return false, nil
}

// command is f's cmd for target, filled in as cloud-init's
// cmd % {"label": ..., "filesystem": ..., "device": ...} (pyfmt), else the
// root's mkfs.TYPE (or mkTYPE) with the label, force flag and extra_opts.
// A cmd Python's % raises on (a name not among those three, a lone "%",
// a conversion a string cannot take) is an error, as the exception fails
// the entry in cloud-init; the error names the reason, never the whole
// cmd (user text).
func (f *fsEntry) command(e *core.Env, target string) (core.Cmd, error) {
	if f.cmdTmpl != "" {
		cmd, err := pyfmt.Format(f.cmdTmpl, map[string]string{"label": f.label, "filesystem": f.fsType, "device": target})
		if err != nil {
			return core.Cmd{}, fmt.Errorf("cmd: %w", err)
		}
		return core.Cmd{Name: "sh", Args: []string{"-c", cmd}, Output: e.Out()}, nil
	}
	mkfs, ok := e.Tool("mkfs." + f.fsType)
	if !ok {
		if mkfs, ok = e.Tool("mk" + f.fsType); !ok {
			return core.Cmd{}, fmt.Errorf("filesystem %s: no mkfs.%s nor mk%s in the root", f.fsType, f.fsType, f.fsType)
		}
	}
	args := []string{}
	if f.label != "" {
		args = append(args, "-L", f.label)
	}
	if f.overwrite || target == f.dev {
		if ff := forceFlag(f.fsType); ff != "" {
			args = append(args, ff)
		}
	}
	args = append(append(args, f.opts...), target)
	return core.Cmd{Name: path.Base(mkfs), Args: args, Output: e.Out()}, nil
}

// forceFlag is lookup_force_flag.
func forceFlag(fs string) string {
	switch {
	case strings.Contains(fs, "ext"):
		return "-F"
	case fs == "btrfs", fs == "xfs", fs == "reiserfs", fs == "swap":
		return "-f"
	}
	return ""
}

// findDeviceNode is find_device_node over lsblk's entries: the first
// partition with the file system asked for (and label with labelMatch),
// or the first one with replace's file system, or the first partition
// with none, or the disk itself when nothing of it is used.
//
// skip, when set, passes over partitions it is true for (earlyinit's
// rule: system partitions on a disk disk_setup partitioned in this run).
func findDeviceNode(dev string, ents []blkEntry, fsType, label string, labelMatch bool, replace string, skip func(path string) bool) (string, bool) {
	rawUsed := false
	for _, d := range ents {
		if replace != "" && d.FSType == replace && !labelMatch {
			return "/dev/" + d.Name, false
		}
		if d.FSType == fsType && (!labelMatch || d.Label == label) {
			return "/dev/" + d.Name, true
		}
		if d.Type == "disk" || d.Type == "part" {
			if d.Type != "disk" || d.FSType != "" {
				rawUsed = true
			}
			if d.Type == "part" && d.FSType == "" && (skip == nil || !skip("/dev/"+d.Name)) {
				return "/dev/" + d.Name, false
			}
		}
	}
	if !rawUsed {
		return dev, false
	}
	return "", false
}

// systemPart names the system partition a partition type (a GPT type
// GUID, an MBR type in hex, "83", "0x83" or "0x5" as lsblk gives it) is
// for, and the type as shown in a message; "" for any other type. The
// GUIDs and codes are util-linux's (sfdisk --list-types).
func systemPart(typ string) (what, shown string) {
	typ = strings.ToLower(strings.TrimSpace(typ))
	if typ == "" {
		return "", ""
	}
	if strings.Contains(typ, "-") {
		what = map[string]string{
			"21686148-6449-6e6f-744e-656564454649": "BIOS boot partition",
			"c12a7328-f81f-11d2-ba4b-00a0c93ec93b": "EFI system partition",
			"e3c9e316-0b5c-4db8-817d-f92df00215ae": "Microsoft reserved partition",
			"9e1a2d38-c612-4316-aa26-8b49521e5a8b": "PReP boot partition",
			"0657fd6d-a4ab-43c4-84e5-0933c84b4f4f": "Linux swap partition",
			"e6d6d379-f507-44c2-a23c-238f2a3df928": "Linux LVM partition",
			"a19d880f-05fc-4d3b-a006-743f0f84911e": "Linux RAID partition",
		}[typ]
		return what, "GPT type " + typ
	}
	n, err := strconv.ParseUint(strings.TrimPrefix(typ, "0x"), 16, 8)
	if err != nil {
		return "", ""
	}
	what = map[uint64]string{
		0x05: "extended partition", // the logical partitions' chain
		0x0f: "extended partition",
		0x85: "extended partition",
		0x41: "PReP boot partition",
		0x82: "Linux swap partition",
		0x8e: "Linux LVM partition",
		0xee: "GPT protective partition",
		0xef: "EFI system partition",
		0xfd: "Linux RAID partition",
	}[n]
	return what, fmt.Sprintf("MBR type 0x%02x", n)
}

// typeFits tells whether a system partition of kind what is made for
// file system fsType: swap on a swap partition, FAT on an ESP.
func typeFits(what, fsType string) bool {
	switch what {
	case "Linux swap partition":
		return fsType == "swap"
	case "EFI system partition":
		return fsType == "vfat" || fsType == "fat" || fsType == "msdos"
	}
	return false
}

// aOrAn is s with its indefinite article.
func aOrAn(s string) string {
	if s != "" && strings.ContainsRune("aeiouAEIOU", rune(s[0])) {
		return "an " + s
	}
	return "a " + s
}

// notFormatted is the error for a system partition.
func notFormatted(dev, what, shown string) error {
	return fmt.Errorf("%s is %s (%s): not formatted without overwrite: true", dev, aOrAn(what), shown)
}

// unreadable is the error for a device earlyinit's own read failed on:
// blkid's exit status 2 may mean the same, so it counts as in use.
// what says what was not done ("not formatted").
func unreadable(dev string, err error, what string) error {
	return fmt.Errorf("%s could not be read (%v): treated as in use, %s without overwrite: true", dev, err, what)
}

// checkPartitionType refuses target when it is a system partition not
// made for fsType: partition num of dev by dev's own table (dev "" for
// partition none), else by lsblk's PARTTYPE.
func checkPartitionType(ctx context.Context, e *core.Env, dev, num, target, fsType string) error {
	typ := ""
	if dev != "" {
		n, _ := strconv.Atoi(num)
		var err error
		typ, err = readDevice(ctx, e, dev, func(r io.ReaderAt, size int64) (string, error) {
			if err := readEnds(r, size); err != nil {
				return "", err
			}
			t, err := blockdev.ReadPartTable(r, size)
			if err != nil {
				return "", nil // lsblk's word, below
			}
			for _, p := range t.Parts {
				if p.Num == n {
					return p.Type, nil
				}
			}
			return "", nil
		})
		if err != nil {
			return unreadable(dev, err, target+" not formatted")
		}
	}
	if typ == "" {
		ents, err := lsblk(ctx, e, target, true)
		if err != nil {
			return err
		}
		if len(ents) > 0 && ents[0].Type == "part" {
			typ = ents[0].PartType
		}
	}
	if what, shown := systemPart(typ); what != "" && !typeFits(what, fsType) {
		return notFormatted(target, what, shown)
	}
	return nil
}
