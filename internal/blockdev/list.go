package blockdev

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Device is one entry of /sys/class/block.
type Device struct {
	Name      string // "sr0", "vda", "vda1"
	Path      string // devRoot + "/" + Name, e.g. "/dev/vda1"
	Partition bool   // has a "partition" file in sysfs
	Removable bool   // sysfs "removable" == 1 (CD-ROMs)
	Size      int64  // bytes (sysfs size * 512)
	PartUUID  string // partitions only: GPT unique GUID lower-case; MBR "<signature>-<partnum>"
	PartLabel string // GPT partitions only: the partition name, as blkid's PART_ENTRY_NAME
	FS        FS     // result of Probe; zero when not probed or unknown
	ProbeErr  error  // why FS is zero, if probing failed

	Parent  string // partitions only: the whole disk's name ("vda" for "vda1")
	PartNum int    // partitions only: the sysfs "partition" number
}

// String gives a one-line summary for log lines:
// `vda1 ext4 LABEL="root" UUID="..." PARTUUID="..." PARTLABEL="..."`, `vdb unknown (reason)`
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
	if d.PartLabel != "" {
		fmt.Fprintf(&b, " PARTLABEL=%q", d.PartLabel)
	}
	return b.String()
}

// listContext enumerates sysRoot+"/class/block" (sysRoot is normally
// "/sys"), skipping ram*, loop* and zero-size devices (but keeping sr* as
// "no medium", unprobed), and probes each device through devRoot+"/"+name
// (devRoot is normally "/dev"), read-only. A failure on one device goes
// in its ProbeErr and does not stop the listing. Sorted by name.
//
// The device reads, run concurrently, end by ctx's
// deadline or ProbeTimeout from the call, whichever comes first. A device whose open or
// read has not returned by then gets a ProbeErr wrapping errProbeTimeout and
// its read is abandoned: it is not started again while it is still stuck,
// so a later listing reports it at once and leaks nothing more.
func listContext(ctx context.Context, sysRoot, devRoot string) ([]Device, error) {
	ctx, cancel := context.WithTimeout(ctx, probeTimeout)
	defer cancel()
	dir := filepath.Join(sysRoot, "class", "block")
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("list block devices: %w", err)
	}
	devRoot = strings.TrimSuffix(devRoot, "/")
	var devs []Device
	var probe []int                         // indexes in devs of the devices to probe
	tables := map[string]*partTableResult{} // by disk name, read once per listing
	for _, e := range ents {                // ReadDir sorts by name
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
		if d.Partition && d.Parent != "" && d.PartNum > 0 && tables[d.Parent] == nil {
			tables[d.Parent] = &partTableResult{}
		}
		probe = append(probe, len(devs))
		devs = append(devs, d)
	}
	// Every read runs at once, so stuck devices cost one bound together,
	// and the healthy ones are probed in the same listing.
	var wg sync.WaitGroup
	for _, i := range probe {
		wg.Go(func() { devs[i].FS, devs[i].ProbeErr = probePath(ctx, devs[i].Path, devs[i].Size) })
	}
	for parent, t := range tables {
		wg.Go(func() { t.table, t.err = readDiskTable(ctx, filepath.Join(dir, parent), devRoot+"/"+parent) })
	}
	wg.Wait()
	for i := range devs {
		if t := tables[devs[i].Parent]; devs[i].Partition && devs[i].PartNum > 0 && t != nil && t.err == nil {
			devs[i].PartUUID = t.table.PartUUID(devs[i].PartNum)
			devs[i].PartLabel = t.table.PartLabel(devs[i].PartNum)
		}
	}
	return devs, nil
}

// probePath opens path read-only and probes its first size bytes, within
// ctx.
func probePath(ctx context.Context, path string, size int64) (FS, error) {
	// The error goes with the device's name wherever it is shown.
	return bounded(ctx, "probe "+path, func() (FS, error) {
		f, err := openDevice(path)
		if err != nil {
			return FS{}, err
		}
		defer f.Close()
		return Probe(f, size)
	})
}

type partTableResult struct {
	table PartTable
	err   error
}

// readDiskTable reads the partition table of the disk whose sysfs
// directory is sys and whose node is path, within ctx.
func readDiskTable(ctx context.Context, sys, path string) (PartTable, error) {
	sectors, err := readSysInt(filepath.Join(sys, "size"))
	if err != nil {
		return PartTable{}, err
	}
	return bounded(ctx, "partition table "+path, func() (PartTable, error) {
		f, err := openDevice(path)
		if err != nil {
			return PartTable{}, err
		}
		defer f.Close()
		t, err := ReadPartTable(f, sectors*512)
		if err != nil {
			return PartTable{}, fmt.Errorf("partition table of %s: %w", path, err)
		}
		return t, nil
	})
}

// ProbeTimeout bounds how long one listing waits for device reads, all
// devices together: a healthy device answers a few sector reads in
// milliseconds, a CD-ROM spinning up in a second or two.
const ProbeTimeout = 5 * time.Second

// probeTimeout is ProbeTimeout; tests shorten it.
var probeTimeout = ProbeTimeout

// errProbeTimeout is wrapped by a device's ProbeErr when reading it did not
// finish in time.
var errProbeTimeout = errors.New("probe timed out")

// device is what probing needs of an open device node.
type device interface {
	io.ReaderAt
	io.Closer
}

// openDevice opens a device node read-only; tests replace it.
var openDevice = func(path string) (device, error) { return os.Open(path) }

// stuck holds the reads (by key) that timed out and have not returned yet.
var stuck sync.Map

// bounded runs fn in its own goroutine and waits for it until ctx ends. On
// timeout the goroutine is abandoned (a read from a stuck device cannot be
// interrupted) and key is marked stuck until fn returns; while it is, bounded
// does not start fn again and fails at once.
func bounded[T any](ctx context.Context, key string, fn func() (T, error)) (T, error) {
	var zero T
	if _, ok := stuck.Load(key); ok {
		return zero, fmt.Errorf("%w: an earlier read has not returned yet", errProbeTimeout)
	}
	if err := ctx.Err(); err != nil {
		return zero, fmt.Errorf("%w: not started: %w", errProbeTimeout, err)
	}
	type result struct {
		v   T
		err error
	}
	done := make(chan result, 1)
	var abandoned atomic.Bool
	start := time.Now()
	go func() {
		var r result
		// A probe parses bytes from the device: hostile input. PID 1
		// must not die of a panic in a goroutine, which no caller's
		// recover can catch.
		defer func() {
			if p := recover(); p != nil {
				r.err = fmt.Errorf("probe panicked: %v", p)
			}
			done <- r
			if abandoned.Load() {
				stuck.Delete(key)
			}
		}()
		r.v, r.err = fn()
	}()
	select {
	case r := <-done:
		return r.v, r.err
	case <-ctx.Done():
		stuck.Store(key, true)
		abandoned.Store(true)
		// fn may have finished in between: then nothing is stuck.
		select {
		case r := <-done:
			stuck.Delete(key)
			return r.v, r.err
		default:
		}
		return zero, fmt.Errorf("%w after %s", errProbeTimeout, time.Since(start).Round(time.Millisecond))
	}
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
