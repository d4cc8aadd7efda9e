package blockdev

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Device is one entry of /sys/class/block.
type Device struct {
	Name      string // "sr0", "vda", "vda1"
	Path      string // devRoot + "/" + Name, e.g. "/dev/vda1"
	Partition bool   // has a "partition" file in sysfs
	Removable bool   // sysfs "removable" == 1 (CD-ROMs)
	Size      int64  // bytes (sysfs size * 512)
	PartUUID  string // partitions only: GPT unique GUID lower-case; MBR "<signature>-<partnum>"
	FS        FS     // result of Probe; zero when not probed or unknown
	ProbeErr  error  // why FS is zero, if probing failed

	Parent  string // partitions only: the whole disk's name ("vda" for "vda1")
	PartNum int    // partitions only: the sysfs "partition" number
}

// String gives a one-line summary for log lines:
// `vda1 ext4 LABEL="root" UUID="..." PARTUUID="..."`, `vdb unknown (reason)`
// or `sr0 no medium`.
func (d Device) String() string {
	var b strings.Builder
	b.WriteString(d.Name)
	switch {
	case d.Size == 0:
		b.WriteString(" no medium")
		return b.String()
	case d.FS.Type == "":
		b.WriteString(" unknown")
		if d.ProbeErr != nil {
			fmt.Fprintf(&b, " (%v)", d.ProbeErr)
		}
	default:
		b.WriteString(" " + d.FS.Type)
		if d.FS.Label != "" {
			fmt.Fprintf(&b, " LABEL=%q", d.FS.Label)
		}
		if d.FS.UUID != "" {
			fmt.Fprintf(&b, " UUID=%q", d.FS.UUID)
		}
	}
	if d.PartUUID != "" {
		fmt.Fprintf(&b, " PARTUUID=%q", d.PartUUID)
	}
	return b.String()
}

// List enumerates sysRoot+"/class/block" (sysRoot is normally "/sys"),
// skipping ram*, loop* and zero-size devices (but keeping sr* as "no
// medium", unprobed), and probes each device through devRoot+"/"+name
// (devRoot is normally "/dev"), read-only. A failure on one device goes
// in its ProbeErr and does not stop the listing. Sorted by name.
func List(sysRoot, devRoot string) ([]Device, error) {
	dir := filepath.Join(sysRoot, "class", "block")
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("list block devices: %w", err)
	}
	devRoot = strings.TrimSuffix(devRoot, "/")
	var devs []Device
	tables := map[string]partTableResult{} // by disk name, read once per listing
	for _, e := range ents {               // ReadDir sorts by name
		name := e.Name()
		if strings.HasPrefix(name, "ram") || strings.HasPrefix(name, "loop") {
			continue
		}
		d := Device{Name: name, Path: devRoot + "/" + name}
		sys := filepath.Join(dir, name)
		sectors, err := readSysInt(filepath.Join(sys, "size"))
		if err != nil {
			d.ProbeErr = err
			devs = append(devs, d)
			continue
		}
		d.Size = sectors * 512
		if n, err := readSysInt(filepath.Join(sys, "removable")); err == nil && n == 1 {
			d.Removable = true
		}
		if n, err := readSysInt(filepath.Join(sys, "partition")); err == nil {
			d.Partition = true
			d.PartNum = int(n)
			if real, err := filepath.EvalSymlinks(sys); err == nil {
				d.Parent = filepath.Base(filepath.Dir(real))
			}
		}
		if d.Size == 0 {
			if strings.HasPrefix(name, "sr") {
				devs = append(devs, d)
			}
			continue
		}
		d.FS, d.ProbeErr = probePath(d.Path, d.Size)
		if d.Partition && d.Parent != "" && d.PartNum > 0 {
			t, ok := tables[d.Parent]
			if !ok {
				t.table, t.err = readDiskTable(filepath.Join(dir, d.Parent), devRoot+"/"+d.Parent)
				tables[d.Parent] = t
			}
			if t.err == nil {
				d.PartUUID = t.table.PartUUID(d.PartNum)
			}
		}
		devs = append(devs, d)
	}
	return devs, nil
}

// probePath opens path read-only and probes its first size bytes.
func probePath(path string, size int64) (FS, error) {
	f, err := os.Open(path)
	if err != nil {
		return FS{}, err
	}
	defer f.Close()
	// The error goes with the device's name wherever it is shown.
	return Probe(f, size)
}

type partTableResult struct {
	table PartTable
	err   error
}

// readDiskTable reads the partition table of the disk whose sysfs
// directory is sys and whose node is path.
func readDiskTable(sys, path string) (PartTable, error) {
	sectors, err := readSysInt(filepath.Join(sys, "size"))
	if err != nil {
		return PartTable{}, err
	}
	f, err := os.Open(path)
	if err != nil {
		return PartTable{}, err
	}
	defer f.Close()
	t, err := ReadPartTable(f, sectors*512)
	if err != nil {
		return PartTable{}, fmt.Errorf("partition table of %s: %w", path, err)
	}
	return t, nil
}

// readSysInt reads a sysfs file holding one decimal number.
func readSysInt(path string) (int64, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	n, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("read %s: %w", path, err)
	}
	if n < 0 {
		return 0, fmt.Errorf("read %s: negative value %d", path, n)
	}
	return n, nil
}
