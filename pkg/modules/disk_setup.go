package modules

import (
	"context"
	"fmt"
	"path"
	"sort"
	"strconv"
	"strings"
)

// diskSetup is cc_disk_setup: disk_setup partitions disks, then fs_setup
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
func diskSetup(ctx context.Context, e *Env) error {
	aliases := map[string]any{}
	if v, ok := e.Cfg["device_aliases"]; ok && v != nil {
		m, ok := v.(map[string]any)
		if !ok {
			return fmt.Errorf("device_aliases: want a map, got %s", kind(v))
		}
		aliases = m
	}
	var errs []string
	if v, ok := e.Cfg["disk_setup"]; ok && v != nil {
		ds, ok := v.(map[string]any)
		if !ok {
			return fmt.Errorf("disk_setup: want a map, got %s", kind(v))
		}
		names := make([]string, 0, len(ds))
		for n := range ds {
			names = append(names, n)
		}
		sort.Strings(names)
		for _, n := range names {
			def, ok := ds[n].(map[string]any)
			if !ok {
				errs = append(errs, fmt.Sprintf("disk_setup.%s: want a map, got %s", n, kind(ds[n])))
				continue
			}
			if err := e.partitionDisk(ctx, aliases, n, def); err != nil {
				errs = append(errs, fmt.Sprintf("disk_setup.%s: %v", n, err))
			}
		}
	}
	if v, ok := e.Cfg["fs_setup"]; ok && v != nil {
		fl, ok := v.([]any)
		if !ok {
			return fmt.Errorf("fs_setup: want a list, got %s", kind(v))
		}
		for i, x := range fl {
			def, ok := x.(map[string]any)
			if !ok {
				errs = append(errs, fmt.Sprintf("fs_setup.%d: want a map, got %s", i, kind(x)))
				continue
			}
			if err := e.makeFS(ctx, aliases, def); err != nil {
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
func (e *Env) resolveDevice(ctx context.Context, aliases map[string]any, name string) (string, error) {
	cand := name
	if a, ok := aliases[name]; ok {
		s, ok := a.(string)
		if !ok {
			return "", fmt.Errorf("device_aliases.%s: want a string, got %s", name, kind(a))
		}
		cand = s
	}
	if !strings.HasPrefix(cand, "/") {
		if dev := e.datasourceDevice(ctx, cand); dev != "" {
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
func (e *Env) datasourceDevice(ctx context.Context, name string) string {
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
	out, err := e.run(ctx, Cmd{Name: "blkid", Args: []string{"-c", "/dev/null", "-l", "-o", "device", "-t", crit}})
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
func (e *Env) lsblk(ctx context.Context, dev string, nodeps bool) ([]blkEntry, error) {
	args := []string{"--pairs", "--output", "NAME,TYPE,FSTYPE,LABEL,PARTTYPE", dev}
	if nodeps {
		args = append(args, "--nodeps")
	}
	out, err := e.run(ctx, Cmd{Name: "lsblk", Args: args})
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
func (e *Env) probe(ctx context.Context, dev string) (fsType, label, ptType string, err error) {
	out, err := e.run(ctx, Cmd{Name: "blkid", Args: []string{"-c", "/dev/null", "-p", "-o", "export", dev}})
	if code, ok := ExitCode(err); ok && code == 2 {
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

// partitionDisk is mkpart for disk_setup entry name.
func (e *Env) partitionDisk(ctx context.Context, aliases map[string]any, name string, def map[string]any) error {
	layout, ok := def["layout"]
	if !ok || layout == nil || layout == false {
		return nil
	}
	dev, err := e.resolveDevice(ctx, aliases, name)
	if err != nil {
		return err
	}
	table := strings.ToLower(cfgString(def, "table_type", "mbr"))
	if table != "mbr" && table != "gpt" {
		return fmt.Errorf("table_type %q: want mbr or gpt", table)
	}
	overwrite := cfgBool(def, "overwrite", false)
	parts, err := diskLayout(layout, table)
	if err != nil {
		return err
	}
	if !e.Root.Exists(dev) {
		e.run(ctx, Cmd{Name: "udevadm", Args: []string{"settle"}})
		if !e.Root.Exists(dev) {
			return fmt.Errorf("%s: no such device", dev)
		}
	}
	ents, err := e.lsblk(ctx, dev, false)
	if err != nil {
		return err
	}
	if len(ents) == 0 || ents[0].Type != "disk" {
		return fmt.Errorf("%s: not a disk", dev)
	}
	fsType, _, ptType, err := e.probe(ctx, dev)
	if err != nil {
		return err
	}
	used := len(ents) > 1 || fsType != "" || ptType != "" || ents[0].FSType != ""
	if parts == nil { // "remove"
		if !overwrite {
			e.logf("disk_setup: %s: layout remove needs overwrite: true: left alone", dev)
			return nil
		}
		return e.purgeDisk(ctx, dev, ents)
	}
	if layoutMatches(ents[1:], parts, table, layout) {
		e.logf("disk_setup: %s: already partitioned as asked", dev)
		return nil
	}
	if used && !overwrite {
		e.logf("disk_setup: %s has a partition table or a file system and overwrite is not true: left alone", dev)
		return nil
	}
	sectors, err := e.diskSectors(ctx, dev)
	if err != nil {
		return err
	}
	if used {
		if err := e.purgeDisk(ctx, dev, ents); err != nil {
			return err
		}
	}
	e.logf("disk_setup: partitioning %s (%s, %d partitions)", dev, table, len(parts))
	if err := e.writePartitions(ctx, dev, table, parts, sectors); err != nil {
		return err
	}
	e.rereadPartitions(ctx, dev)
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
				pct, typ = pair[0], scalarString(pair[1])
				if typ == "" || len(typ) > 36 || strings.Trim(typ, "0123456789abcdefABCDEF-") != "" {
					return nil, fmt.Errorf("layout.%d: partition type %q: want a hexadecimal code", i, typ)
				}
			}
			f, err := strconv.ParseFloat(scalarString(pct), 64)
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
func (e *Env) diskSectors(ctx context.Context, dev string) (int64, error) {
	var v [2]int64
	for i, arg := range []string{"--getsize64", "--getss"} {
		out, err := e.run(ctx, Cmd{Name: "blockdev", Args: []string{arg, dev}})
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
func (e *Env) writePartitions(ctx context.Context, dev, table string, parts []partSpec, sectors int64) error {
	size := func(i int) int64 { return int64(float64(sectors) * parts[i].Percent / 100) }
	if table == "gpt" {
		if _, ok := e.tool("sgdisk"); ok {
			if _, err := e.run(ctx, Cmd{Name: "sgdisk", Args: []string{"-Z", dev}}); err != nil {
				return err
			}
			for i, p := range parts {
				end := "+" + strconv.FormatInt(size(i), 10)
				if i == len(parts)-1 {
					end = "0"
				}
				if _, err := e.run(ctx, Cmd{Name: "sgdisk", Args: []string{"-n", fmt.Sprintf("%d:0:%s", i+1, end), dev}}); err != nil {
					return err
				}
				if p.Type != "" {
					code := p.Type + strings.Repeat("0", max(0, 4-len(p.Type)))
					if _, err := e.run(ctx, Cmd{Name: "sgdisk", Args: []string{"-t", fmt.Sprintf("%d:%s", i+1, code), dev}}); err != nil {
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
	_, err := e.run(ctx, Cmd{Name: "sfdisk", Args: args, Stdin: []byte(script.String())})
	return err
}

// rereadPartitions is read_parttbl: partprobe (or blockdev --rereadpt)
// between udevadm settles; a failure is only logged, as in cloud-init.
func (e *Env) rereadPartitions(ctx context.Context, dev string) {
	e.run(ctx, Cmd{Name: "udevadm", Args: []string{"settle"}})
	c := Cmd{Name: "blockdev", Args: []string{"--rereadpt", dev}}
	if _, ok := e.tool("partprobe"); ok {
		c = Cmd{Name: "partprobe", Args: []string{dev}}
	}
	if _, err := e.run(ctx, c); err != nil {
		e.logf("disk_setup: %v", err)
	}
	e.run(ctx, Cmd{Name: "udevadm", Args: []string{"settle"}})
}

// purgeDisk is purge_disk: every partition's signatures wiped, then the
// disk's own (wipefs --all, where cloud-init zeroes the first and last
// MiB).
func (e *Env) purgeDisk(ctx context.Context, dev string, ents []blkEntry) error {
	for _, d := range ents {
		if d.Type == "disk" || d.Type == "crypt" {
			continue
		}
		p := "/dev/" + d.Name
		if !validDevPath(p) {
			return fmt.Errorf("lsblk name %q: not a device name", d.Name)
		}
		e.logf("disk_setup: purging the file system on %s", p)
		if _, err := e.run(ctx, Cmd{Name: "wipefs", Args: []string{"--all", p}}); err != nil {
			return err
		}
	}
	if _, err := e.run(ctx, Cmd{Name: "wipefs", Args: []string{"--all", "--force", dev}}); err != nil {
		return err
	}
	e.rereadPartitions(ctx, dev)
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

// makeFS is mkfs for one fs_setup entry.
func (e *Env) makeFS(ctx context.Context, aliases map[string]any, def map[string]any) error {
	label := cfgString(def, "label", "")
	if label != "" && !validFSLabel(label) {
		return fmt.Errorf("label %q: want letters, digits and _.:+@- (not starting with -)", label)
	}
	fsType := cfgString(def, "filesystem", "")
	if fsType != "" && strings.Trim(fsType, "abcdefghijklmnopqrstuvwxyz0123456789") != "" {
		return fmt.Errorf("filesystem %q: not a file system type", fsType)
	}
	replace := cfgString(def, "replace_fs", "")
	if replace == "False" {
		replace = ""
	}
	overwrite := cfgBool(def, "overwrite", false)
	partition := strings.ToLower(cfgString(def, "partition", "any"))
	name := cfgString(def, "device", "")
	if name == "" {
		return fmt.Errorf("device: required")
	}
	// expand_dotted_devname: "ephemeral0.1" is partition 1 of ephemeral0.
	if i := strings.LastIndex(name, "."); i > 0 {
		if n := name[i+1:]; n != "" && strings.Trim(n, "0123456789") == "" {
			name, partition = name[:i], n
		}
	}
	dev, err := e.resolveDevice(ctx, aliases, name)
	if err != nil {
		return err
	}
	var opts []string
	if v, ok := def["extra_opts"]; ok && v != nil {
		l, ok := v.([]any)
		if !ok {
			return fmt.Errorf("extra_opts: want a list, got %s", kind(v))
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
		return fmt.Errorf("cmd: want a string, got %s", kind(v))
	}
	if fsType == "" && cmdTmpl == "" {
		return fmt.Errorf("no filesystem nor cmd for label %q", label)
	}
	if !e.Root.Exists(dev) {
		e.run(ctx, Cmd{Name: "udevadm", Args: []string{"settle"}})
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
	case partition == "auto" || partition == "any":
		ents, err := e.lsblk(ctx, dev, false)
		if err != nil {
			return err
		}
		t, reuse := findDeviceNode(dev, ents, fsType, label, partition == "auto", replace)
		if reuse {
			e.logf("fs_setup: %s already has the %s file system %q", t, fsType, label)
			return nil
		}
		if t == "" {
			e.logf("fs_setup: %s: no partition free for %q: skipped", dev, label)
			return nil
		}
		if !validDevPath(t) {
			return fmt.Errorf("lsblk gave %q: not a device path", t)
		}
		target = t
	case partition == "none" || partition == "":
	default:
		return fmt.Errorf("partition %q: want a number, auto, any or none", partition)
	}
	have, haveLabel, pt, err := e.probe(ctx, target)
	if err != nil {
		return err
	}
	if have == fsType && haveLabel == label && have != "" && !overwrite {
		e.logf("fs_setup: %s already has the %s file system %q", target, fsType, label)
		return nil
	}
	if (have != "" || pt != "") && !overwrite && !(replace != "" && have == replace) {
		e.logf("fs_setup: %s has a file system or partition table (%s%s) and overwrite is not true: left alone", target, have, pt)
		return nil
	}
	var c Cmd
	if cmdTmpl != "" {
		r := strings.NewReplacer("%(label)s", label, "%(filesystem)s", fsType, "%(device)s", target, "%%", "%")
		c = Cmd{Name: "sh", Args: []string{"-c", r.Replace(cmdTmpl)}, Output: e.output()}
	} else {
		mkfs, ok := e.tool("mkfs." + fsType)
		if !ok {
			if mkfs, ok = e.tool("mk" + fsType); !ok {
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
		c = Cmd{Name: path.Base(mkfs), Args: args, Output: e.output()}
	}
	e.logf("fs_setup: creating %s file system %q on %s", fsType, label, target)
	_, err = e.run(ctx, c)
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
func findDeviceNode(dev string, ents []blkEntry, fsType, label string, labelMatch bool, replace string) (string, bool) {
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
			if d.Type == "part" && d.FSType == "" {
				return "/dev/" + d.Name, false
			}
		}
	}
	if !rawUsed {
		return dev, false
	}
	return "", false
}
