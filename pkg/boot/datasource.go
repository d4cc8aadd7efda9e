package boot

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"time"

	"github.com/earlyinit/earlyinit/pkg/blockdev"
	"github.com/earlyinit/earlyinit/pkg/datasource"
	"github.com/earlyinit/earlyinit/pkg/datasource/configdrive"
	"github.com/earlyinit/earlyinit/pkg/datasource/nocloud"
	"github.com/earlyinit/earlyinit/pkg/instance"
	"github.com/earlyinit/earlyinit/pkg/nic"
	"github.com/earlyinit/earlyinit/pkg/settings"
	"golang.org/x/sys/unix"
)

// Datasource names for earlyinit.ds=.
const (
	DSConfigDrive = "configdrive"
	DSNoCloud     = "nocloud"
)

// DefaultDatasources is the order tried without earlyinit.ds=.
var DefaultDatasources = []string{DSConfigDrive, DSNoCloud, DSOpenStack, DSEC2}

// knownDatasources are the names earlyinit.ds= accepts.
var knownDatasources = map[string]bool{DSConfigDrive: true, DSNoCloud: true, DSOpenStack: true, DSEC2: true}

// isMetadata tells the sources read over the network.
func isMetadata(name string) bool { return name == DSOpenStack || name == DSEC2 }

// driveLabels are the filesystem labels each drive datasource accepts,
// compared exactly: vfat labels are often upper-cased.
var driveLabels = map[string][]string{
	DSConfigDrive: {"config-2", "CONFIG-2"},
	DSNoCloud:     {"cidata", "CIDATA"},
}

// seedDirs are the seed directories in the real root, read before drives
// as cloud-init does.
var seedDirs = map[string][]string{
	DSConfigDrive: {"/var/lib/cloud/seed/config_drive"},
	DSNoCloud:     {"/var/lib/cloud/seed/nocloud", "/var/lib/cloud/seed/nocloud-net"},
}

// driveGrace is how long earlyinit polls for a config drive that is not
// there yet when earlyinit.ds= did not ask for one explicitly: by then
// coldplug has settled and the root is mounted, so every disk the VM has
// is normally listed. With earlyinit.ds= naming a drive source, the wait
// is earlyinit.timeout.
const driveGrace = 2 * time.Second

// DatasourceOrder returns the datasources to try, from earlyinit.ds=
// (comma separated), or the default order. Unknown names are reported and
// skipped.
func DatasourceOrder(c settings.Settings) (order []string, explicit bool, errs []error) {
	v := c.Datasources
	if v == "" {
		return DefaultDatasources, false, nil
	}
	for _, n := range strings.Split(v, ",") {
		n = strings.ToLower(strings.TrimSpace(n))
		switch {
		case n == "":
		case knownDatasources[n]:
			order = append(order, n)
		default:
			errs = append(errs, fmt.Errorf("earlyinit.ds=%s: unknown datasource %q (known: configdrive, nocloud, openstack, ec2)", v, n))
		}
	}
	return order, true, errs
}

// reader reads one kind of seed from a filesystem.
var readers = map[string]func(fs.FS) (*instance.Data, error){
	DSConfigDrive: configdrive.Read,
	DSNoCloud:     nocloud.Read,
}

// findDatasource tries the datasources in order and returns the first that
// reads cleanly. A rejected source is logged with its reason and nothing of
// it is kept.
func (b *Boot) findDatasource() (*instance.Data, error) {
	order, explicit, errs := DatasourceOrder(b.Cmd)
	for _, e := range errs {
		b.Log.Errorf("%v", e)
	}
	// ds=nocloud[;s=...;i=...;h=...] on the command line: its seed comes
	// first, and its i= and h= override whatever NoCloud source is used.
	var nc *nocloud.Cmdline
	if v, ok := b.Cmd.Params["ds"]; ok {
		c, isNoCloud, err := nocloud.ParseCmdline(v)
		switch {
		case err != nil:
			b.Log.Errorf("cmdline ds=%s: %v", v, err)
		case isNoCloud:
			nc = &c
			if !contains(order, DSNoCloud) {
				order = append(order, DSNoCloud)
			}
		}
	}
	if nc != nil && nc.Seed != "" {
		if d, err := b.readCmdlineSeed(*nc); err != nil {
			b.Log.Errorf("datasource nocloud (ds=nocloud;s=%s) rejected: %v", nc.Seed, err)
			b.rejected++
		} else {
			return d, nil
		}
	}
	for _, n := range order {
		if isMetadata(n) {
			b.raiseLinks(nic.System())
			// Links raised for the metadata service go down again, used
			// or not, but for a lease kept with earlyinit.keepnet.
			defer func() { b.lowerLinks(nic.System(), b.keptIface) }()
			break
		}
	}
	var devs []blockdev.Device
	listed, triedMetadata := false, false
	for _, name := range order {
		if isMetadata(name) {
			// All metadata sources share one temporary lease.
			if triedMetadata {
				continue
			}
			triedMetadata = true
			var names []string
			for _, n := range order {
				if isMetadata(n) {
					names = append(names, n)
				}
			}
			d, err := b.metadataSources(names)
			if err != nil {
				b.Log.Printf("metadata service: %v", err)
				continue
			}
			return d, nil
		}
		for _, dir := range seedDirs[name] {
			full := filepath.Join(newRoot, dir)
			if fi, err := os.Stat(full); err != nil || !fi.IsDir() {
				continue
			}
			d, err := readers[name](datasource.DriveFS(full, datasource.MaxDriveTotal))
			if err != nil {
				b.Log.Errorf("datasource %s: seed %s rejected: %v", name, dir, err)
				b.rejected++
				continue
			}
			d.Subplatform = "seed-dir (" + dir + ")"
			return b.finish(d, name, nc), nil
		}
		if !listed {
			devs = b.listDrives(order, explicit)
			listed = true
		}
		for _, dev := range devs {
			if !isDrive(name, dev) {
				continue
			}
			d, err := b.readDrive(name, dev)
			if err != nil {
				b.Log.Errorf("datasource %s: drive %s rejected: %v", name, dev, err)
				b.rejected++
				continue
			}
			d.Subplatform = "config-disk (" + dev.Path + ")"
			return b.finish(d, name, nc), nil
		}
	}
	var seen []string
	for _, d := range devs {
		seen = append(seen, d.String())
	}
	msg := fmt.Sprintf("no datasource found (tried %s; block devices: %s)", strings.Join(order, ", "), strings.Join(seen, "; "))
	if b.rejected > 0 {
		// Something was there and was bad: that is an error to see.
		return nil, fmt.Errorf("%s; %d rejected", msg, b.rejected)
	}
	// Nothing there at all is a normal state, not a failure.
	b.Log.Printf("%s", msg)
	return nil, nil
}

func (b *Boot) finish(d *instance.Data, name string, nc *nocloud.Cmdline) *instance.Data {
	if nc != nil && name == DSNoCloud {
		nc.Apply(d)
	}
	b.Log.Printf("datasource %s: instance %q, hostname %q (%s)", name, d.InstanceID, d.LocalHostname, d.Subplatform)
	return d
}

// readCmdlineSeed reads ds=nocloud;s=PATH, a directory of the real root.
func (b *Boot) readCmdlineSeed(c nocloud.Cmdline) (*instance.Data, error) {
	p, err := c.SeedPath()
	if err != nil {
		return nil, err
	}
	full := filepath.Join(newRoot, filepath.Clean("/"+p))
	d, err := nocloud.Read(datasource.DriveFS(full, datasource.MaxDriveTotal))
	if err != nil {
		return nil, err
	}
	d.Subplatform = "seed-dir (" + p + ")"
	return b.finish(d, DSNoCloud, &c), nil
}

func isDrive(name string, d blockdev.Device) bool {
	if d.FS.Type != "iso9660" && d.FS.Type != "vfat" {
		return false
	}
	return contains(driveLabels[name], d.FS.Label)
}

// listDrives lists block devices, polling a while for a config drive of
// one of the wanted kinds: up to driveGrace, or earlyinit.timeout when
// earlyinit.ds= asked for drives explicitly.
func (b *Boot) listDrives(order []string, explicit bool) []blockdev.Device {
	wait := min(driveGrace, b.Cmd.Timeout)
	if explicit {
		wait = b.Cmd.Timeout
	}
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	t0 := time.Now()
	loaded := b.loadTime()
	match := func(d blockdev.Device) bool {
		for _, n := range order {
			if isMetadata(n) {
				continue
			}
			if isDrive(n, d) {
				return true
			}
		}
		return false
	}
	_, devs, err := b.pollDevices(ctx, match)
	b.deviceWait += time.Since(t0) - (b.loadTime() - loaded)
	b.nearMisses(order, devs)
	if err != nil {
		var seen []string
		for _, d := range devs {
			seen = append(seen, d.String())
		}
		b.Log.Printf("no config drive after %s; block devices: %s", round(time.Since(t0)), strings.Join(seen, "; "))
	}
	return devs
}

// nearMisses logs each drive whose label is almost one a wanted source
// accepts ("Config-2", "CIDATA_"): it is not read, and the line says why.
func (b *Boot) nearMisses(order []string, devs []blockdev.Device) {
	for _, d := range devs {
		if d.FS.Type != "iso9660" && d.FS.Type != "vfat" {
			continue
		}
		for _, n := range order {
			if contains(driveLabels[n], d.FS.Label) {
				break
			}
			if want, ok := datasource.LabelNearMiss(d.FS.Label, driveLabels[n]); ok {
				b.Log.Errorf("%s: label %q is not %q: not read as a %s drive (labels must match exactly)", d.Path, d.FS.Label, want, n)
				break
			}
		}
	}
}

// readDrive mounts a config drive read-only in a private place, reads it,
// and leaves it mounted until the handoff unmounts it (files the source
// names are read while the drive is mounted).
func (b *Boot) readDrive(name string, dev blockdev.Device) (*instance.Data, error) {
	dir := filepath.Join("/mnt", "earlyinit-"+dev.Name)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	b.LoadFS(dev.FS.Type)
	// A drive whose device stops answering would block the mount or a
	// read forever: both run bounded by earlyinit.timeout, and a drive
	// given up on is detached lazily at the handoff.
	ctx, cancel := context.WithTimeout(context.Background(), b.Cmd.Timeout)
	defer cancel()
	var mounted atomic.Bool
	d, err := b.bounded(ctx, dev.Path, func() (*instance.Data, error) {
		if err := unix.Mount(dev.Path, dir, dev.FS.Type, unix.MS_RDONLY|unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, ""); err != nil {
			return nil, fmt.Errorf("mount -t %s -o ro %s: %w", dev.FS.Type, dev.Path, err)
		}
		mounted.Store(true)
		return readers[name](datasource.DriveFS(dir, datasource.MaxDriveTotal))
	})
	if mounted.Load() || errors.Is(err, errGaveUp) {
		b.private = append(b.private, dir)
	}
	return d, err
}

// errGaveUp is bounded's error when fn did not return in time.
var errGaveUp = errors.New("gave up")

// bounded runs fn in its own goroutine, under a recover, and waits for it
// until ctx ends. A read from a stalled device cannot be interrupted: on
// timeout the goroutine is left behind, blocked, and the boot goes on.
func (b *Boot) bounded(ctx context.Context, what string, fn func() (*instance.Data, error)) (*instance.Data, error) {
	type result struct {
		d   *instance.Data
		err error
	}
	done := make(chan result, 1)
	t0 := time.Now()
	go func() {
		var r result
		r.err = b.Log.Guard("reading "+what, func() error {
			var err error
			r.d, err = fn()
			return err
		})
		done <- r
	}()
	select {
	case r := <-done:
		return r.d, r.err
	case <-ctx.Done():
		return nil, fmt.Errorf("%s: %w after %s: the device does not answer", what, errGaveUp, round(time.Since(t0)))
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
