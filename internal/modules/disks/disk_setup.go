package disks

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/earlyinit/earlyinit/internal/blockdev"
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
	aliases := map[string]any{}
	if v, ok := e.Cfg["device_aliases"]; ok && v != nil {
		m, ok := v.(map[string]any)
		if !ok {
			return fmt.Errorf("device_aliases: want a map, got %s", core.Kind(v))
		}
		aliases = m
	}
	var errs []string
	// ours is the disks (lsblk's kernel names) disk_setup partitioned in
	// this run: only there may fs_setup's any and auto choose a partition
	// without overwrite: true.
	ours := map[string]bool{}
	if v, ok := e.Cfg["disk_setup"]; ok && v != nil {
		ds, ok := v.(map[string]any)
		if !ok {
			return fmt.Errorf("disk_setup: want a map, got %s", core.Kind(v))
		}
		names := make([]string, 0, len(ds))
		for n := range ds {
			names = append(names, n)
		}
		sort.Strings(names)
		for _, n := range names {
			def, ok := ds[n].(map[string]any)
			if !ok {
				errs = append(errs, fmt.Sprintf("disk_setup.%s: want a map, got %s", n, core.Kind(ds[n])))
				continue
			}
			if err := partitionDisk(ctx, e, aliases, n, def, ours); err != nil {
				errs = append(errs, fmt.Sprintf("disk_setup.%s: %v", n, err))
			}
		}
	}
	if v, ok := e.Cfg["fs_setup"]; ok && v != nil {
		fl, ok := v.([]any)
		if !ok {
			return fmt.Errorf("fs_setup: want a list, got %s", core.Kind(v))
		}
		for i, x := range fl {
			def, ok := x.(map[string]any)
			if !ok {
				errs = append(errs, fmt.Sprintf("fs_setup.%d: want a map, got %s", i, core.Kind(x)))
				continue
			}
			if err := makeFS(ctx, e, aliases, def, ours); err != nil {
				errs = append(errs, fmt.Sprintf("fs_setup.%d: %v", i, err))
			}
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
func resolveDevice(ctx context.Context, e *core.Env, aliases map[string]any, name string) (string, error) {
	cand := name
	if a, ok := aliases[name]; ok {
		s, ok := a.(string)
		if !ok {
			return "", fmt.Errorf("device_aliases.%s: want a string, got %s", name, core.Kind(a))
		}
		cand = s
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

// partitionDisk is mkpart for disk_setup entry name. A disk it
// partitions is added to ours.
func partitionDisk(ctx context.Context, e *core.Env, aliases map[string]any, name string, def map[string]any, ours map[string]bool) error {
	layout, ok := def["layout"]
	if !ok || layout == nil || layout == false {
		return nil
	}
	dev, err := resolveDevice(ctx, e, aliases, name)
	if err != nil {
		return err
	}
	table := strings.ToLower(core.CfgString(def, "table_type", "mbr"))
	if table != "mbr" && table != "gpt" {
		return fmt.Errorf("table_type %q: want mbr or gpt", table)
	}
	overwrite := core.CfgBool(def, "overwrite", false)
	parts, err := diskLayout(layout, table)
	if err != nil {
		return err
	}
	if !e.Root.Exists(dev) {
		e.Run(ctx, core.Cmd{Name: "udevadm", Args: []string{"settle"}})
		if !e.Root.Exists(dev) {
			return fmt.Errorf("%s: no such device", dev)
		}
	}
	ents, err := lsblk(ctx, e, dev, false)
	if err != nil {
		return err
	}
	if len(ents) == 0 || ents[0].Type != "disk" {
		return fmt.Errorf("%s: not a disk", dev)
	}
	fsType, _, ptType, err := probe(ctx, e, dev)
	if err != nil {
		return err
	}
	used := len(ents) > 1 || fsType != "" || ptType != "" || ents[0].FSType != ""
	if parts == nil { // "remove"
		if !overwrite {
			e.Logf("disk_setup: %s: layout remove needs overwrite: true: left alone", dev)
			return nil
		}
		return purgeDisk(ctx, e, dev, ents)
	}
	if layoutMatches(ents[1:], parts, table, layout) {
		e.Logf("disk_setup: %s: already partitioned as asked", dev)
		return nil
	}
	if !used && !overwrite {
		// blkid's exit status 2 is also "could not read": earlyinit's
		// own read must find the disk blank too.
		found, err := deviceUse(ctx, e, dev)
		if err != nil {
			return unreadable(dev, err, "not partitioned")
		}
		if found.What != "" {
			return fmt.Errorf("%s: blkid found nothing, but it holds %s: treated as in use, not partitioned without overwrite: true", dev, found.What)
		}
	}
	if used && !overwrite {
		e.Logf("disk_setup: %s has a partition table or a file system and overwrite is not true: left alone", dev)
		return nil
	}
	sectors, err := diskSectors(ctx, e, dev)
	if err != nil {
		return err
	}
	if used {
		if err := purgeDisk(ctx, e, dev, ents); err != nil {
			return err
		}
	}
	e.Logf("disk_setup: partitioning %s (%s, %d partitions)", dev, table, len(parts))
	if err := writePartitions(ctx, e, dev, table, parts, sectors); err != nil {
		return err
	}
	ours[ents[0].Name] = true
	rereadPartitions(ctx, e, dev)
	return nil
}

// partSpec is one partition of a layout: percent of the disk, type code
// ("" for the default).
type partSpec struct {
	Percent float64
	Type    string
}

// diskLayout reads layout: true (one partition), a list of percentages
// or [percent, type] pairs, or "remove" (nil, nil).
func diskLayout(layout any, table string) ([]partSpec, error) {
	switch t := layout.(type) {
	case bool:
		return []partSpec{{Percent: 100}}, nil
	case string:
		if strings.ToLower(t) == "remove" {
			return nil, nil
		}
	case []any:
		if len(t) == 0 {
			return nil, fmt.Errorf("layout: empty")
		}
		if table == "mbr" && len(t) > 4 {
			return nil, fmt.Errorf("layout: more than 4 partitions (mbr)")
		}
		var out []partSpec
		for i, p := range t {
			var pct any = p
			typ := ""
			if pair, ok := p.([]any); ok {
				if len(pair) != 2 {
					return nil, fmt.Errorf("layout.%d: want percent or [percent, type]", i)
				}
				pct, typ = pair[0], core.ScalarString(pair[1])
				if typ == "" || len(typ) > 36 || strings.Trim(typ, "0123456789abcdefABCDEF-") != "" {
					return nil, fmt.Errorf("layout.%d: partition type %q: want a hexadecimal code", i, typ)
				}
			}
			f, err := strconv.ParseFloat(core.ScalarString(pct), 64)
			if err != nil || f <= 0 || f > 100 {
				return nil, fmt.Errorf("layout.%d: size %v: want a percentage", i, pct)
			}
			out = append(out, partSpec{Percent: f, Type: typ})
		}
		return out, nil
	}
	return nil, fmt.Errorf("layout: want true, a list of partitions or remove, got %v", layout)
}

// gptTypeGUID is the GPT type GUID of an MBR-style code cloud-init's
// layouts use (sgdisk's codes, "83" being 8300), lower case; "" for
// another code.
func gptTypeGUID(code string) string {
	switch code {
	case "83", "8300":
		return "0fc63daf-8483-4772-8e79-3d69d8477de4"
	case "82", "8200":
		return "0657fd6d-a4ab-43c4-84e5-0933c84b4f4f"
	case "ef00":
		return "c12a7328-f81f-11d2-ba4b-00a0c93ec93b"
	case "8e00":
		return "e6d6d379-f507-44c2-a23c-238f2a3df928"
	case "fd00":
		return "a19d880f-05fc-4d3b-a006-743f0f84911e"
	}
	return ""
}

// layoutMatches is check_partition_layout over lsblk's partitions: the
// same number (at least one for layout true) and the types asked for.
func layoutMatches(parts []blkEntry, want []partSpec, table string, layout any) bool {
	var found []string
	for _, p := range parts {
		if p.Type == "part" {
			found = append(found, p.PartType)
		}
	}
	if _, ok := layout.(bool); ok {
		return len(found) >= 1
	}
	if len(found) != len(want) {
		return false
	}
	for i, w := range want {
		if w.Type == "" {
			continue
		}
		got := found[i]
		if table == "mbr" {
			n, err1 := strconv.ParseUint(strings.TrimPrefix(got, "0x"), 16, 8)
			m, err2 := strconv.ParseUint(w.Type, 16, 8)
			if err1 != nil || err2 != nil || n != m {
				return false
			}
		} else if guid := gptTypeGUID(strings.ToLower(w.Type)); guid == "" || guid != got {
			return false
		}
	}
	return true
}

// diskSectors is get_hdd_size: the size in logical sectors.
func diskSectors(ctx context.Context, e *core.Env, dev string) (int64, error) {
	var v [2]int64
	for i, arg := range []string{"--getsize64", "--getss"} {
		out, err := e.Run(ctx, core.Cmd{Name: "blockdev", Args: []string{arg, dev}})
		if err != nil {
			return 0, err
		}
		if v[i], err = strconv.ParseInt(strings.TrimSpace(string(out)), 10, 64); err != nil || v[i] <= 0 {
			return 0, fmt.Errorf("blockdev %s %s: %q is not a size", arg, dev, out)
		}
	}
	return v[0] / v[1], nil
}

// writePartitions is exec_mkpart: sfdisk for MBR (cloud-init's script of
// ",size,type" lines), sgdisk for GPT when the root has it (cloud-init's
// commands), else sfdisk with a GPT script.
func writePartitions(ctx context.Context, e *core.Env, dev, table string, parts []partSpec, sectors int64) error {
	size := func(i int) int64 { return int64(float64(sectors) * parts[i].Percent / 100) }
	if table == "gpt" {
		if _, ok := e.Tool("sgdisk"); ok {
			if _, err := e.Run(ctx, core.Cmd{Name: "sgdisk", Args: []string{"-Z", dev}}); err != nil {
				return err
			}
			for i, p := range parts {
				end := "+" + strconv.FormatInt(size(i), 10)
				if i == len(parts)-1 {
					end = "0"
				}
				if _, err := e.Run(ctx, core.Cmd{Name: "sgdisk", Args: []string{"-n", fmt.Sprintf("%d:0:%s", i+1, end), dev}}); err != nil {
					return err
				}
				if p.Type != "" {
					code := p.Type + strings.Repeat("0", max(0, 4-len(p.Type)))
					if _, err := e.Run(ctx, core.Cmd{Name: "sgdisk", Args: []string{"-t", fmt.Sprintf("%d:%s", i+1, code), dev}}); err != nil {
						return err
					}
				}
			}
			return nil
		}
	}
	var script strings.Builder
	if table == "gpt" {
		script.WriteString("label: gpt\n")
	}
	for i, p := range parts {
		typ := p.Type
		if typ == "" {
			typ = "83"
		}
		if table == "gpt" {
			typ = gptTypeGUID(strings.ToLower(typ))
			if typ == "" {
				return fmt.Errorf("partition type %q: unknown for GPT without sgdisk", p.Type)
			}
		}
		if i == len(parts)-1 {
			fmt.Fprintf(&script, ",,%s\n", typ)
		} else {
			fmt.Fprintf(&script, ",%d,%s\n", size(i), typ)
		}
	}
	args := []string{"--Linux", "--unit=S", "--force", dev}
	if table == "gpt" {
		args = []string{"--force", dev}
	}
	_, err := e.Run(ctx, core.Cmd{Name: "sfdisk", Args: args, Stdin: []byte(script.String())})
	return err
}

// rereadPartitions is read_parttbl: partprobe (or blockdev --rereadpt)
// between udevadm settles; a failure is only logged, as in cloud-init.
func rereadPartitions(ctx context.Context, e *core.Env, dev string) {
	e.Run(ctx, core.Cmd{Name: "udevadm", Args: []string{"settle"}})
	c := core.Cmd{Name: "blockdev", Args: []string{"--rereadpt", dev}}
	if _, ok := e.Tool("partprobe"); ok {
		c = core.Cmd{Name: "partprobe", Args: []string{dev}}
	}
	if _, err := e.Run(ctx, c); err != nil {
		e.Logf("disk_setup: %v", err)
	}
	e.Run(ctx, core.Cmd{Name: "udevadm", Args: []string{"settle"}})
}

// purgeDisk is purge_disk: every partition's signatures wiped, then the
// disk's own (wipefs --all, where cloud-init zeroes the first and last
// MiB).
func purgeDisk(ctx context.Context, e *core.Env, dev string, ents []blkEntry) error {
	for _, d := range ents {
		if d.Type == "disk" || d.Type == "crypt" {
			continue
		}
		p := "/dev/" + d.Name
		if !validDevPath(p) {
			return fmt.Errorf("lsblk name %q: not a device name", d.Name)
		}
		e.Logf("disk_setup: purging the file system on %s", p)
		if _, err := e.Run(ctx, core.Cmd{Name: "wipefs", Args: []string{"--all", p}}); err != nil {
			return err
		}
	}
	if _, err := e.Run(ctx, core.Cmd{Name: "wipefs", Args: []string{"--all", "--force", dev}}); err != nil {
		return err
	}
	rereadPartitions(ctx, e, dev)
	return nil
}

// partitionPath is partition n of dev ("/dev/vdb" 1 is /dev/vdb1,
// "/dev/nvme0n1" 1 is /dev/nvme0n1p1).
func partitionPath(dev, n string) string {
	if c := dev[len(dev)-1]; c >= '0' && c <= '9' {
		return dev + "p" + n
	}
	return dev + n
}

// makeFS is mkfs for one fs_setup entry; ours is the disks disk_setup
// partitioned in this run.
func makeFS(ctx context.Context, e *core.Env, aliases map[string]any, def map[string]any, ours map[string]bool) error {
	label := core.CfgString(def, "label", "")
	if label != "" && !validFSLabel(label) {
		return fmt.Errorf("label %q: want letters, digits and _.:+@- (not starting with -)", label)
	}
	fsType := core.CfgString(def, "filesystem", "")
	if fsType != "" && strings.Trim(fsType, "abcdefghijklmnopqrstuvwxyz0123456789") != "" {
		return fmt.Errorf("filesystem %q: not a file system type", fsType)
	}
	replace := core.CfgString(def, "replace_fs", "")
	if replace == "False" {
		replace = ""
	}
	overwrite := core.CfgBool(def, "overwrite", false)
	partition := strings.ToLower(core.CfgString(def, "partition", "any"))
	name := core.CfgString(def, "device", "")
	if name == "" {
		return fmt.Errorf("device: required")
	}
	// expand_dotted_devname: "ephemeral0.1" is partition 1 of ephemeral0.
	if i := strings.LastIndex(name, "."); i > 0 {
		if n := name[i+1:]; n != "" && strings.Trim(n, "0123456789") == "" {
			name, partition = name[:i], n
		}
	}
	dev, err := resolveDevice(ctx, e, aliases, name)
	if err != nil {
		return err
	}
	var opts []string
	if v, ok := def["extra_opts"]; ok && v != nil {
		l, ok := v.([]any)
		if !ok {
			return fmt.Errorf("extra_opts: want a list, got %s", core.Kind(v))
		}
		for i, o := range l {
			s, ok := o.(string)
			if !ok || strings.ContainsAny(s, "\n\x00") {
				return fmt.Errorf("extra_opts.%d: want a string without line breaks", i)
			}
			opts = append(opts, s)
		}
	}
	cmdTmpl, _ := def["cmd"].(string)
	if v, ok := def["cmd"]; ok && v != nil && cmdTmpl == "" {
		return fmt.Errorf("cmd: want a string, got %s", core.Kind(v))
	}
	if fsType == "" && cmdTmpl == "" {
		return fmt.Errorf("no filesystem nor cmd for label %q", label)
	}
	if !e.Root.Exists(dev) {
		e.Run(ctx, core.Cmd{Name: "udevadm", Args: []string{"settle"}})
		if !e.Root.Exists(dev) {
			return fmt.Errorf("%s: no such device", dev)
		}
	}
	target := dev
	switch {
	case partition != "" && strings.Trim(partition, "0123456789") == "":
		target = partitionPath(dev, partition)
		if !e.Root.Exists(target) {
			return fmt.Errorf("%s: no such partition", target)
		}
		if !overwrite {
			if err := checkPartitionType(ctx, e, dev, partition, target, fsType); err != nil {
				return err
			}
		}
	case partition == "auto" || partition == "any":
		ents, err := lsblk(ctx, e, dev, false)
		if err != nil {
			return err
		}
		if len(ents) == 0 {
			return fmt.Errorf("%s: lsblk lists nothing", dev)
		}
		disk := ents[0].Name
		view, err := readDisk(ctx, e, dev, ents)
		if err != nil && !overwrite {
			return fmt.Errorf("%s: partition: %s: %w", dev, partition, unreadable(dev, err, "no partition of it chosen"))
		}
		var skip func(string) bool
		if ours[disk] && !overwrite {
			// A disk disk_setup partitioned in this run: the search
			// passes over system partitions not made for fsType.
			skip = func(p string) bool {
				what, _ := view.systemType(p)
				return what != "" && !typeFits(what, fsType)
			}
		}
		t, reuse := findDeviceNode(dev, view.enrich(ents), fsType, label, partition == "auto", replace, skip)
		if reuse {
			e.Logf("fs_setup: %s already has the %s file system %q", t, fsType, label)
			return nil
		}
		if t == "" {
			e.Logf("fs_setup: %s: no partition free for %q: skipped", dev, label)
			return nil
		}
		if !validDevPath(t) {
			return fmt.Errorf("lsblk gave %q: not a device path", t)
		}
		if !overwrite {
			if err := view.mayFormat(t, "/dev/"+disk, fsType, replace, partition == "auto", ours[disk]); err != nil {
				return fmt.Errorf("%s: partition: %s: %w", dev, partition, err)
			}
		}
		target = t
	case partition == "none" || partition == "":
	default:
		return fmt.Errorf("partition %q: want a number, auto, any or none", partition)
	}
	var found bytesFound
	if !overwrite {
		// blkid's exit status 2 is also "could not read": earlyinit's
		// own read of target comes first.
		if found, err = deviceUse(ctx, e, target); err != nil {
			return unreadable(target, err, "not formatted")
		}
		if partition == "none" || partition == "" {
			if err := checkPartitionType(ctx, e, "", "", target, fsType); err != nil {
				return err
			}
		}
	}
	have, haveLabel, pt, err := probe(ctx, e, target)
	if err != nil {
		return err
	}
	if have == fsType && haveLabel == label && have != "" && !overwrite {
		e.Logf("fs_setup: %s already has the %s file system %q", target, fsType, label)
		return nil
	}
	replacing := replace != "" && have == replace
	if (have != "" || pt != "") && !overwrite && !replacing {
		e.Logf("fs_setup: %s has a file system or partition table (%s%s) and overwrite is not true: left alone", target, have, pt)
		return nil
	}
	if found.What != "" && !overwrite && !replacing {
		return fmt.Errorf("%s: blkid found nothing, but it holds %s: treated as in use, not formatted without overwrite: true", target, found.What)
	}
	var c core.Cmd
	if cmdTmpl != "" {
		r := strings.NewReplacer("%(label)s", label, "%(filesystem)s", fsType, "%(device)s", target, "%%", "%")
		c = core.Cmd{Name: "sh", Args: []string{"-c", r.Replace(cmdTmpl)}, Output: e.Out()}
	} else {
		mkfs, ok := e.Tool("mkfs." + fsType)
		if !ok {
			if mkfs, ok = e.Tool("mk" + fsType); !ok {
				return fmt.Errorf("filesystem %s: no mkfs.%s nor mk%s in the root", fsType, fsType, fsType)
			}
		}
		args := []string{}
		if label != "" {
			args = append(args, "-L", label)
		}
		if overwrite || target == dev {
			if f := forceFlag(fsType); f != "" {
				args = append(args, f)
			}
		}
		args = append(append(args, opts...), target)
		c = core.Cmd{Name: path.Base(mkfs), Args: args, Output: e.Out()}
	}
	e.Logf("fs_setup: creating %s file system %q on %s", fsType, label, target)
	_, err = e.Run(ctx, c)
	return err
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

// diskPart is one partition of a disk as lsblk and earlyinit's own read
// see it.
type diskPart struct {
	Path          string     // /dev/ and the kernel's name
	Type          string     // from the disk's own table: GPT type GUID, MBR type ("83")
	LsType        string     // lsblk's PARTTYPE
	FSType, Label string     // lsblk's FSTYPE and LABEL
	Found         bytesFound // earlyinit's own probe of its bytes
	ReadErr       error      // its first or last MiB could not be read
}

// diskView is a disk any and auto choose on.
type diskView struct {
	tableErr error      // the disk's table is there but not readable
	parts    []diskPart // the table's partitions, then those only lsblk lists
	holders  []blkEntry // lsblk's other entries: LVM volumes, crypt, RAID built on it
}

// readDisk reads dev's partition table and each partition's bytes, and
// puts them with lsblk's entries (ents[0] being dev). The error is dev's
// own read failing; the view then has lsblk's entries only.
func readDisk(ctx context.Context, e *core.Env, dev string, ents []blkEntry) (diskView, error) {
	type region struct {
		num   int
		typ   string
		found bytesFound
		err   error
	}
	type result struct {
		tableErr error
		parts    []region
	}
	res, err := readDevice(ctx, e, dev, func(r io.ReaderAt, size int64) (result, error) {
		var res result
		if err := readEnds(r, size); err != nil {
			return res, err
		}
		t, err := blockdev.ReadPartTable(r, size)
		if err != nil {
			if !errors.Is(err, blockdev.ErrNoPartTable) {
				res.tableErr = err
			}
			return res, nil
		}
		for _, p := range t.Parts {
			rg := region{num: p.Num, typ: p.Type}
			sr := io.NewSectionReader(r, p.Start, p.Size)
			if rg.err = readEnds(sr, p.Size); rg.err == nil {
				rg.found = bytesUse(sr, p.Size)
			}
			res.parts = append(res.parts, rg)
		}
		return res, nil
	})
	var v diskView
	base := "/dev/" + ents[0].Name
	if ents[0].Type == "part" { // dev is itself a partition
		v.parts = append(v.parts, diskPart{Path: base, LsType: ents[0].PartType, FSType: ents[0].FSType, Label: ents[0].Label})
	}
	if err == nil {
		v.tableErr = res.tableErr
		for _, rg := range res.parts {
			v.parts = append(v.parts, diskPart{Path: partitionPath(base, strconv.Itoa(rg.num)), Type: rg.typ, Found: rg.found, ReadErr: rg.err})
		}
	}
	for _, d := range ents[1:] {
		if d.Type != "part" {
			v.holders = append(v.holders, d)
			continue
		}
		p := v.part("/dev/" + d.Name)
		if p == nil {
			v.parts = append(v.parts, diskPart{Path: "/dev/" + d.Name})
			p = &v.parts[len(v.parts)-1]
		}
		p.LsType, p.FSType, p.Label = d.PartType, d.FSType, d.Label
	}
	return v, err
}

func (v *diskView) part(path string) *diskPart {
	for i := range v.parts {
		if v.parts[i].Path == path {
			return &v.parts[i]
		}
	}
	return nil
}

// systemType is the system partition path is, by the disk's own table
// or by lsblk.
func (v *diskView) systemType(path string) (what, shown string) {
	p := v.part(path)
	if p == nil {
		return "", ""
	}
	if what, shown = systemPart(p.Type); what == "" {
		what, shown = systemPart(p.LsType)
	}
	return what, shown
}

// used is why partition p counts as used ("" when it looks blank).
func (v *diskView) used(p diskPart) string {
	switch {
	case p.ReadErr != nil:
		return "could not be read"
	case p.FSType != "":
		return p.FSType
	case p.Found.What != "":
		return p.Found.What
	}
	what, _ := v.systemType(p.Path)
	return what
}

// enrich is ents with the file system earlyinit's probe found where lsblk
// has none (lsblk knows only what the udev database holds).
func (v *diskView) enrich(ents []blkEntry) []blkEntry {
	out := append([]blkEntry(nil), ents...)
	for i, d := range out {
		if p := v.part("/dev/" + d.Name); d.Type == "part" && d.FSType == "" && p != nil && p.Found.Type != "" {
			out[i].FSType, out[i].Label = p.Found.Type, p.Found.Label
		}
	}
	return out
}

// mayFormat is earlyinit's rule for t, which any or auto chose on disk,
// without overwrite: true. A system partition only when it is made for
// fsType on a disk of ours; a partition only on a disk of ours (whose
// table disk_setup wrote in this run), or when it holds replace_fs's
// file system. Anywhere else a partition without a signature may be raw
// data (a database's, GRUB's core.img), so a table not ours is refused
// even when all of it looks blank.
func (v *diskView) mayFormat(t, disk, fsType, replace string, auto, ours bool) error {
	if what, shown := v.systemType(t); what != "" && !(ours && typeFits(what, fsType)) {
		return notFormatted(t, what, shown)
	}
	if t == disk {
		return nil // nothing on it is used; its own bytes are checked next
	}
	if v.tableErr != nil {
		return fmt.Errorf("%s has a partition table earlyinit cannot read (%v): not chosen without overwrite: true", disk, v.tableErr)
	}
	if ours {
		return nil
	}
	if p := v.part(t); replace != "" && !auto && p != nil && (p.FSType == replace || p.Found.Type == replace) {
		return nil
	}
	var used []string
	for _, p := range v.parts {
		if why := v.used(p); why != "" {
			used = append(used, p.Path+": "+why)
		}
	}
	for _, h := range v.holders {
		used = append(used, h.Name+": "+h.Type)
	}
	if len(used) > 0 {
		return fmt.Errorf("%s has a partition table with used partitions (%s): not chosen without overwrite: true", disk, strings.Join(used, ", "))
	}
	return fmt.Errorf("%s has a partition table disk_setup did not write in this run: its partitions show no signature, but a raw partition holds data without one: not chosen without overwrite: true", disk)
}

// probeSpan is how much of each end of a device must read back for it to
// count as readable.
const probeSpan = 1 << 20

// readEnds reads the first and last MiB of r (size bytes): the
// places signatures and partition tables live.
func readEnds(r io.ReaderAt, size int64) error {
	if size <= 0 {
		return errors.New("empty device")
	}
	n := min(size, probeSpan)
	buf := make([]byte, n)
	for _, off := range []int64{0, size - n} {
		m, err := r.ReadAt(buf, off)
		if int64(m) == n {
			continue
		}
		if err == nil || err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return fmt.Errorf("read %d bytes at offset %d: %w", n, off, err)
	}
	return nil
}

// bytesFound is what earlyinit's own probes found on a device.
type bytesFound struct {
	Type, Label string // a file system or other signature, named as blkid's TYPE
	What        string // what makes the device used, for a message; "" for nothing found
}

// bytesUse probes r (size bytes, its ends readable): a file system
// (internal/blockdev), a signature blockdev does not know (otherSignature), a
// partition table. A damaged or ambivalent signature counts as used.
func bytesUse(r io.ReaderAt, size int64) bytesFound {
	fs, err := blockdev.Probe(r, size)
	switch {
	case err == nil:
		return bytesFound{Type: fs.Type, Label: fs.Label, What: fs.Type}
	case errors.Is(err, blockdev.ErrAmbivalent):
		return bytesFound{What: "more than one file system signature"}
	case !errors.Is(err, blockdev.ErrUnknown):
		return bytesFound{What: fmt.Sprintf("a damaged file system signature (%v)", err)}
	}
	if typ := otherSignature(r, size); typ != "" {
		return bytesFound{Type: typ, What: typ}
	}
	t, err := blockdev.ReadPartTable(r, size)
	switch {
	case err == nil:
		return bytesFound{What: "a " + t.Type + " partition table"}
	case !errors.Is(err, blockdev.ErrNoPartTable):
		return bytesFound{What: fmt.Sprintf("a damaged partition table (%v)", err)}
	}
	return bytesFound{}
}

// otherSignature finds signatures blkid reports and internal/blockdev does not
// know, by blkid's TYPE name: LVM2 physical volumes, swap and hibernation
// images, Linux RAID members (metadata 0.90 and 1.x), LUKS.
func otherSignature(r io.ReaderAt, size int64) string {
	at := func(off int64, n int) []byte {
		if off < 0 || off+int64(n) > size {
			return nil
		}
		b := make([]byte, n)
		if m, _ := r.ReadAt(b, off); m != n {
			return nil
		}
		return b
	}
	if b := at(0, 6); string(b) == "LUKS\xba\xbe" {
		return "crypto_LUKS"
	}
	for s := int64(0); s < 4; s++ { // the LVM2 label is in one of the first four sectors
		if b := at(s*512, 32); b != nil && string(b[:8]) == "LABELONE" && string(b[24:32]) == "LVM2 001" {
			return "LVM2_member"
		}
	}
	for _, page := range []int64{4096, 8192, 16384, 32768, 65536} {
		if b := at(page-10, 10); b != nil {
			switch string(b) {
			case "SWAPSPACE2", "SWAP-SPACE":
				return "swap"
			case "S1SUSPEND\x00", "S2SUSPEND\x00", "ULSUSPEND\x00", "LINHIB0001":
				return "swsuspend"
			}
		}
	}
	sectors := size / 512
	for _, off := range []int64{0, 4096, ((sectors - 16) &^ 7) * 512, (sectors&^127 - 128) * 512} {
		if b := at(off, 4); b != nil && (string(b) == "\xfc\x4e\x2b\xa9" || string(b) == "\xa9\x2b\x4e\xfc") {
			return "linux_raid_member"
		}
	}
	return ""
}

// deviceReadTimeout bounds earlyinit's own read of one device: a healthy
// one answers in milliseconds; one that hangs is treated as in use.
const deviceReadTimeout = 30 * time.Second

// deviceUse is what earlyinit's own probes find on dev; an error when
// its ends cannot be read.
func deviceUse(ctx context.Context, e *core.Env, dev string) (bytesFound, error) {
	return readDevice(ctx, e, dev, func(r io.ReaderAt, size int64) (bytesFound, error) {
		if err := readEnds(r, size); err != nil {
			return bytesFound{}, err
		}
		return bytesUse(r, size), nil
	})
}

// deviceOpener is implemented by an Exec that also reads devices (tests
// give disk images, some with unreadable sectors); any other Exec means
// the device nodes under e.Root.
type deviceOpener interface {
	OpenDevice(path string) (r io.ReaderAt, size int64, c io.Closer, err error)
}

// openDevice opens dev read-only: through the Exec when it is a
// deviceOpener, else the node in the root, which must be a block device
// (or, for images, a regular file), its size from seeking to its end.
func openDevice(e *core.Env, dev string) (io.ReaderAt, int64, io.Closer, error) {
	if o, ok := e.Exec.(deviceOpener); ok {
		return o.OpenDevice(dev)
	}
	// O_NONBLOCK: a FIFO planted at the path must not block the open.
	f, err := os.OpenFile(e.Root.Path(dev), os.O_RDONLY|syscall.O_NONBLOCK|syscall.O_NOCTTY|syscall.O_CLOEXEC, 0)
	if err != nil {
		return nil, 0, nil, err
	}
	fi, err := f.Stat()
	if err == nil && fi.Mode().Type() != os.ModeDevice && !fi.Mode().IsRegular() {
		err = fmt.Errorf("not a block device (%v)", fi.Mode().Type())
	}
	if err == nil {
		// Reads block, as on any disk (O_NONBLOCK was for the open).
		err = syscall.SetNonblock(int(f.Fd()), false)
	}
	var size int64
	if err == nil {
		size, err = f.Seek(0, io.SeekEnd)
	}
	if err != nil {
		f.Close()
		return nil, 0, nil, err
	}
	return f, size, f, nil
}

// readDevice opens dev and runs fn on it in a goroutine, bounded by ctx
// and deviceReadTimeout: a read of a stuck device cannot be interrupted,
// so it is abandoned and the device counts as unreadable. A panic in fn
// (bytes of the device are hostile input) is an error.
func readDevice[T any](ctx context.Context, e *core.Env, dev string, fn func(r io.ReaderAt, size int64) (T, error)) (T, error) {
	type result struct {
		v   T
		err error
	}
	done := make(chan result, 1)
	go func() {
		var res result
		defer func() {
			if p := recover(); p != nil {
				res = result{err: fmt.Errorf("probe panicked: %v", p)}
			}
			done <- res
		}()
		r, size, c, err := openDevice(e, dev)
		if err != nil {
			res.err = err
			return
		}
		defer c.Close()
		res.v, res.err = fn(r, size)
	}()
	ctx, cancel := context.WithTimeout(ctx, deviceReadTimeout)
	defer cancel()
	select {
	case res := <-done:
		return res.v, res.err
	case <-ctx.Done():
		var zero T
		return zero, fmt.Errorf("no answer: %w", ctx.Err())
	}
}
