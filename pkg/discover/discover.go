// Package discover finds the instance: it walks the datasources earlyinit
// knows (Sources, each described once by its own package under
// pkg/datasource) in order, and returns the first that reads cleanly.
//
// Discovery is pure but for a System: the seed directories, block devices
// and drives, and the temporary network a metadata service is reached
// through, with the HTTP client the sources use on it. Linux is the System
// of a running machine; tests give a fake one. Time reaches the System only
// as the waits and context deadlines discovery passes it, so a fake System
// ends every wait at once.
package discover

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"time"

	"github.com/earlyinit/earlyinit/pkg/blockdev"
	"github.com/earlyinit/earlyinit/pkg/datasource"
	"github.com/earlyinit/earlyinit/pkg/datasource/configdrive"
	"github.com/earlyinit/earlyinit/pkg/datasource/ec2"
	"github.com/earlyinit/earlyinit/pkg/datasource/nocloud"
	"github.com/earlyinit/earlyinit/pkg/datasource/openstack"
	"github.com/earlyinit/earlyinit/pkg/instance"
	"github.com/earlyinit/earlyinit/pkg/settings"
)

// Sources is every datasource earlyinit knows, in the order tried when
// earlyinit.ds= names none. A new platform is its package under
// pkg/datasource, declaring a datasource.Source, and one line here.
var Sources = []datasource.Source{
	configdrive.Source,
	nocloud.Source,
	openstack.Source,
	ec2.Source,
}

// DriveGrace is how long discovery polls for a config drive that is not
// there yet when earlyinit.ds= did not ask for a drive source explicitly:
// by then coldplug has settled and the root is mounted, so every disk the VM
// has is normally listed. With earlyinit.ds= naming sources, the wait is
// earlyinit.timeout.
const DriveGrace = 2 * time.Second

// Log is where discovery reports. Guard runs fn, turning a panic into an
// error (after logging it): discovery runs in PID 1.
type Log interface {
	Printf(format string, args ...any)
	Errorf(format string, args ...any)
	Debugf(format string, args ...any)
	Guard(what string, fn func() error) error
}

// System is what discovery needs of the machine.
type System interface {
	// SeedDir returns the files of dir, a directory in the real root, and
	// whether it is a directory at all.
	SeedDir(dir string) (fsys fs.FS, isDir bool)
	// Drives lists the block devices, polling for up to wait until match
	// accepts one; it returns the last listing either way.
	Drives(wait time.Duration, match func(blockdev.Device) bool) []blockdev.Device
	// ReadDrive mounts dev read-only where nothing else sees it and reads
	// it with read, within earlyinit.timeout.
	ReadDrive(dev blockdev.Device, read func(fs.FS) (*instance.Data, error)) (*instance.Data, error)
	// RaiseLinks brings up the NICs a metadata service may be reached
	// through, early, so that waiting for their carrier overlaps the drive
	// poll. lower puts them back down once discovery is over (all but a
	// lease kept with earlyinit.keepnet).
	RaiseLinks() (lower func())
	// Network brings up the temporary network for the metadata services
	// and returns the service as the sources reach it: its base URL and
	// the HTTP client (nil: each source's own); done takes the network
	// down again (or keeps it, with earlyinit.keepnet). The base is set
	// whenever err is nil, even when no address could be had: the sources
	// still try.
	Network(ctx context.Context) (svc datasource.Service, done func(), err error)
}

// Order returns the sources earlyinit.ds= (comma separated, any case)
// names, or Sources when it names none. Unknown names are reported and
// skipped.
func Order(ds string) (order []datasource.Source, explicit bool, errs []error) {
	var names []string
	for _, s := range Sources {
		names = append(names, s.Name)
	}
	for _, n := range strings.Split(ds, ",") {
		n = strings.ToLower(strings.TrimSpace(n))
		if n == "" {
			continue
		}
		s, ok := byName(Sources, n)
		if !ok {
			errs = append(errs, fmt.Errorf("earlyinit.ds=%s: unknown datasource %q (known: %s)", ds, n, strings.Join(names, ", ")))
			continue
		}
		order = append(order, s)
	}
	if len(order) == 0 && len(errs) == 0 {
		return Sources, false, nil
	}
	return order, true, errs
}

func byName(list []datasource.Source, name string) (datasource.Source, bool) {
	for _, s := range list {
		if s.Name == name {
			return s, true
		}
	}
	return datasource.Source{}, false
}

// finder is one discovery.
type finder struct {
	sys      System
	log      Log
	timeout  time.Duration
	hints    map[string]datasource.Hint
	rejected int
}

// Find tries the datasources in order and returns the first that reads
// cleanly, or nil when there is none: a normal state, logged as such. A
// source that is there but cannot be used is rejected with its reason
// logged, and nothing of it is kept; the error says how many were, when
// none could be used.
func Find(sys System, s settings.Settings, log Log) (*instance.Data, error) {
	order, explicit, errs := Order(s.Datasources)
	for _, e := range errs {
		log.Errorf("%v", e)
	}
	f := &finder{sys: sys, log: log, timeout: s.Timeout, hints: map[string]datasource.Hint{}}
	// A source named by its own command-line words (ds=nocloud;s=...) is
	// tried even when earlyinit.ds= leaves it out, and its seed first.
	var seeds []datasource.Source
	for _, src := range Sources {
		if src.Cmdline == nil {
			continue
		}
		h, ok, err := src.Cmdline(s.Params)
		if err != nil {
			log.Errorf("%v", err)
			if ok {
				f.rejected++
			}
		}
		if !ok {
			continue
		}
		f.hints[src.Name] = h
		if _, in := byName(order, src.Name); !in {
			order = append(order, src)
		}
		if err == nil && h.Seed != "" {
			seeds = append(seeds, src)
		}
	}
	for _, src := range seeds {
		h := f.hints[src.Name]
		fsys, _ := sys.SeedDir(h.Seed)
		d, err := src.ReadFS(fsys)
		if err != nil {
			log.Errorf("datasource %s (%s) rejected: %v", src.Name, h.Origin, err)
			f.rejected++
			continue
		}
		d.Subplatform = "seed-dir (" + h.Seed + ")"
		return f.finish(d, src), nil
	}
	return f.walk(order, explicit)
}

// walk tries each source's seed directories, drives and metadata service.
func (f *finder) walk(order []datasource.Source, explicit bool) (*instance.Data, error) {
	var metadata []datasource.Source
	for _, src := range order {
		if src.Metadata != nil {
			metadata = append(metadata, src)
		}
	}
	if len(metadata) > 0 {
		defer f.sys.RaiseLinks()()
	}
	var devs []blockdev.Device
	listed, triedMetadata := false, false
	for _, src := range order {
		if d := f.seedDirs(src); d != nil {
			return d, nil
		}
		if len(src.Labels) > 0 {
			if !listed {
				devs = f.listDrives(order, explicit)
				listed = true
			}
			if d := f.drives(src, devs); d != nil {
				return d, nil
			}
		}
		// All metadata sources share one temporary network, tried once
		// in the place of the first of them.
		if src.Metadata != nil && !triedMetadata {
			triedMetadata = true
			d, err := f.metadata(metadata)
			if err != nil {
				f.log.Printf("metadata service: %v", err)
				continue
			}
			return d, nil
		}
	}
	var seen []string
	for _, d := range devs {
		seen = append(seen, d.String())
	}
	var tried []string
	for _, src := range order {
		tried = append(tried, src.Name)
	}
	msg := fmt.Sprintf("no datasource found (tried %s; block devices: %s)", strings.Join(tried, ", "), strings.Join(seen, "; "))
	if f.rejected > 0 {
		// Something was there and was bad: that is an error to see.
		return nil, fmt.Errorf("%s; %d rejected", msg, f.rejected)
	}
	// Nothing there at all is a normal state, not a failure.
	f.log.Printf("%s", msg)
	return nil, nil
}

// seedDirs reads the first of src's seed directories that is there.
func (f *finder) seedDirs(src datasource.Source) *instance.Data {
	for _, dir := range src.SeedDirs {
		fsys, ok := f.sys.SeedDir(dir)
		if !ok {
			continue
		}
		d, err := src.ReadFS(fsys)
		if err != nil {
			f.log.Errorf("datasource %s: seed %s rejected: %v", src.Name, dir, err)
			f.rejected++
			continue
		}
		d.Subplatform = "seed-dir (" + dir + ")"
		return f.finish(d, src)
	}
	return nil
}

// drives reads the first of src's drives among devs that reads cleanly.
func (f *finder) drives(src datasource.Source, devs []blockdev.Device) *instance.Data {
	for _, dev := range devs {
		if !src.Drive(dev.FS.Type, dev.FS.Label) {
			continue
		}
		d, err := f.sys.ReadDrive(dev, src.ReadFS)
		if err != nil {
			f.log.Errorf("datasource %s: drive %s rejected: %v", src.Name, dev, err)
			f.rejected++
			continue
		}
		d.Subplatform = "config-disk (" + dev.Path + ")"
		return f.finish(d, src)
	}
	return nil
}

// listDrives lists block devices, polling a while for a drive of one of
// the sources in order: up to DriveGrace, or earlyinit.timeout when
// earlyinit.ds= named the sources explicitly.
func (f *finder) listDrives(order []datasource.Source, explicit bool) []blockdev.Device {
	wait := min(DriveGrace, f.timeout)
	if explicit {
		wait = f.timeout
	}
	devs := f.sys.Drives(wait, func(d blockdev.Device) bool {
		for _, src := range order {
			if src.Drive(d.FS.Type, d.FS.Label) {
				return true
			}
		}
		return false
	})
	nearMisses(f.log, order, devs)
	return devs
}

// nearMisses logs each drive whose label is almost one a wanted source
// accepts ("Config-2", "CIDATA_"): it is not read, and the line says why.
func nearMisses(log Log, order []datasource.Source, devs []blockdev.Device) {
	for _, d := range devs {
		if d.FS.Type != "iso9660" && d.FS.Type != "vfat" {
			continue
		}
		for _, src := range order {
			if src.Drive(d.FS.Type, d.FS.Label) {
				break
			}
			if want, ok := datasource.LabelNearMiss(d.FS.Label, src.Labels); ok {
				log.Errorf("%s: label %q is not %q: not read as a %s drive (labels must match exactly)", d.Path, d.FS.Label, want, src.Name)
				break
			}
		}
	}
}

// metadata brings the temporary network up once and asks each metadata
// source in turn; the whole attempt is bounded by earlyinit.timeout.
func (f *finder) metadata(srcs []datasource.Source) (*instance.Data, error) {
	ctx, cancel := context.WithTimeout(context.Background(), f.timeout)
	defer cancel()
	svc, done, err := f.sys.Network(ctx)
	if err != nil {
		return nil, err
	}
	defer done()
	svc.Logf = f.log.Debugf
	var errs []error
	for _, src := range srcs {
		var d *instance.Data
		err := f.log.Guard("datasource "+src.Name, func() error {
			var err error
			d, err = src.Metadata(ctx, svc)
			return err
		})
		if err != nil {
			f.log.Errorf("datasource %s rejected: %v", src.Name, err)
			f.rejected++
			errs = append(errs, fmt.Errorf("%s: %w", src.Name, err))
			continue
		}
		return f.finish(d, src), nil
	}
	return nil, errors.Join(errs...)
}

// finish names the source in d, applies what the source's command-line
// words override and logs the instance found.
func (f *finder) finish(d *instance.Data, src datasource.Source) *instance.Data {
	d.Datasource, d.DatasourceClass = src.Name, src.Class
	if h, ok := f.hints[src.Name]; ok && h.Apply != nil {
		h.Apply(d)
	}
	f.log.Printf("datasource %s: instance %q, hostname %q (%s)", src.Name, d.InstanceID, d.LocalHostname, d.Subplatform)
	return d
}
