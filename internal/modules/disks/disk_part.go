package disks

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/earlyinit/earlyinit/internal/ccfg"
	"github.com/earlyinit/earlyinit/internal/modules/core"
)

// partitionDisk is mkpart for disk_setup entry name. A disk it
// partitions is added to ours.
func partitionDisk(ctx context.Context, e *core.Env, aliases ccfg.DeviceAliases, name string, def ccfg.DiskSetup, ours map[string]bool) error {
	var layout ccfg.DiskLayout
	if err := ccfg.DecodeValue(def.Layout, "layout", &layout); err != nil {
		return err
	}
	if layout.Off {
		return nil
	}
	dev, err := resolveDevice(ctx, e, aliases, name)
	if err != nil {
		return err
	}
	table, err := tableType(def)
	if err != nil {
		return err
	}
	overwrite := def.Overwrite
	parts, err := diskLayout(layout, table)
	if err != nil {
		return err
	}
	if err := waitDevice(ctx, e, dev); err != nil {
		return err
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
	if layoutMatches(ents[1:], parts, table, layout.Whole) {
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

// tableType is def's table_type, mbr when not given.
func tableType(def ccfg.DiskSetup) (string, error) {
	if def.TableType == nil {
		return "mbr", nil
	}
	if t := string(*def.TableType); t == "mbr" || t == "gpt" {
		return t, nil
	}
	return "", fmt.Errorf("table_type %q: want mbr or gpt", *def.TableType)
}

// partSpec is one partition of a layout: percent of the disk, type code
// ("" for the default).
type partSpec = ccfg.LayoutPart

// diskLayout is layout's partitions for a table of type table: one for
// the whole disk (true), a list of percentages or [percent, type] pairs,
// or nil for "remove".
func diskLayout(layout ccfg.DiskLayout, table string) ([]partSpec, error) {
	switch {
	case layout.Remove:
		return nil, nil
	case layout.Whole:
		return []partSpec{{Percent: 100}}, nil
	case table == "mbr" && len(layout.Parts) > 4:
		return nil, fmt.Errorf("layout: more than 4 partitions (mbr)")
	}
	return layout.Parts, nil
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
func layoutMatches(parts []blkEntry, want []partSpec, table string, whole bool) bool {
	var found []string
	for _, p := range parts {
		if p.Type == "part" {
			found = append(found, p.PartType)
		}
	}
	if whole {
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
