// Package discover finds the instance: it decides from the machine's DMI
// strings and what the user asked for which of the datasources earlyinit
// knows (Sources, each described once by its own package under
// internal/datasource) to try (Decide, as cloud-init's ds-identify does), walks
// them in order, and returns the first that reads cleanly; when none is
// there, cloud-init's None (internal/datasource/none), unless the image's
// datasource_list leaves None out.
//
// Discovery is pure but for a System: the DMI strings, the seed
// directories, block devices and drives, and the temporary network a
// metadata service is reached through, with the HTTP client the sources use
// on it. Linux is the System of a running machine; tests give a fake one.
// Time reaches the System only as the waits and context deadlines discovery
// passes it, so a fake System ends every wait at once.
//
// A machine with no datasource waits only for the drive poll (DriveGrace,
// or earlyinit.timeout if smaller) when no metadata service is to be tried:
// its NICs are not raised and no lease is asked for.
package discover

import (
	"context"
	"fmt"
	"io/fs"
	"net/url"
	"strings"
	"time"

	"github.com/earlyinit/earlyinit/internal/blockdev"
	"github.com/earlyinit/earlyinit/internal/datasource"
	"github.com/earlyinit/earlyinit/internal/datasource/none"
	"github.com/earlyinit/earlyinit/internal/dmi"
	"github.com/earlyinit/earlyinit/internal/instance"
	"github.com/earlyinit/earlyinit/internal/logs"
	"github.com/earlyinit/earlyinit/internal/settings"
)

// DriveGrace is how long discovery polls for a config drive that is not
// there yet when earlyinit.ds= did not ask for a drive source explicitly:
// by then coldplug has settled and the root is mounted, so every disk the VM
// has is normally listed. With earlyinit.ds= naming sources, the wait is
// earlyinit.timeout. 1.5 s, not 2: the listing under way when it ends
// still gets its probes (blockdev.ProbeGrace), and an empty CD-ROM's probe
// takes a few hundred ms under emulation, so the poll ends by about 2 s
// (measured under TCG: 2.4-2.56 s with 2 s).
const DriveGrace = 1500 * time.Millisecond

// Log is where discovery reports; each source runs under logs.Guard:
// discovery runs in PID 1.
type Log = logs.Logger

// System is what discovery needs of the machine. A System should also be
// a DMIReader (Linux is): one that is not has no DMI strings, so the
// platform is unknown and every source is tried.
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

// DMIReader is a System that reads the machine's DMI strings.
type DMIReader interface {
	// DMI returns the machine's DMI strings (dmi.Read of dmi.Dir), with
	// what could be read when err is set.
	DMI() (dmi.Info, error)
}

// readDMI is sys's DMI strings, none if it has no DMIReader.
func readDMI(sys System) (dmi.Info, error) {
	if r, ok := sys.(DMIReader); ok {
		return r.DMI()
	}
	return dmi.Info{}, nil
}

// finder is one discovery.
type finder struct {
	sys      System
	log      Log
	timeout  time.Duration
	hints    map[string]datasource.Hint
	rejected int

	img Image
	// noneOK is datasource_list's None: no datasource is no error.
	noneOK bool
	// noneFallback: finding nothing gives the None instance (the image
	// sets no datasource_list, or its list has None).
	noneFallback bool
	// metadataURL is earlyinit.metadata_url, which wins over the image's
	// metadata_urls and a source's own address; metadataURLShown is it
	// without its password, for the logs.
	metadataURL, metadataURLShown string
	// imageSeeds are the image's seedfrom settings, by source name.
	imageSeeds map[string]datasource.Hint

	// The temporary network, brought up the first time a source needs
	// it and down when the search ends (down).
	lower              func()
	netTried           bool
	netCtx             context.Context
	netCancel, netDone func()
	svc                datasource.Service
	netErr             error

	// The block devices, listed once (listDrives) the first time a
	// source needs them; order and explicit are what that listing polls
	// for.
	devs     []blockdev.Device
	listed   bool
	order    []datasource.Source
	explicit bool
}

// FindWith is Find with the image's configuration: its datasource_list
// (unless earlyinit.ds= names sources: the kernel command line wins) and
// its datasource: settings.
//
// When nothing is found, the instance is cloud-init's None (none.Data):
// the image's own configuration then applies. cloud-init falls back to None
// when its datasource_list has it, and its built-in list (used when the
// image sets none) ends in it; so does discovery: None is the last resort
// unless the image's datasource_list leaves it out. Unlike cloud-init,
// discovery does not fall back to None when a source was there but was
// rejected: that would make a broken datasource a new instance (new host
// keys, every per-instance module run again), so it is an error to see
// instead.
func FindWith(sys System, s settings.Settings, img Image, log Log) (*instance.Data, error) {
	order, explicit, errs := Order(s.Datasources)
	for _, e := range errs {
		log.Errorf("%v", e)
	}
	f := &finder{sys: sys, log: log, timeout: s.Timeout, hints: map[string]datasource.Hint{},
		img: img, metadataURL: s.MetadataURL, imageSeeds: map[string]datasource.Hint{},
		noneFallback: img.List == nil || listsNone(img.List)}
	defer f.down()
	asked := map[string]string{}
	if explicit {
		for _, src := range order {
			asked[src.Name] = "earlyinit.ds=" + s.Datasources
		}
	}
	if img.List != nil {
		if s.Datasources != "" {
			log.Printf("datasource_list of the image ignored: earlyinit.ds=%s on the kernel command line wins", s.Datasources)
		} else {
			var warns []string
			order, f.noneOK, warns = ImageOrder(img.List)
			for _, w := range warns {
				log.Errorf("%s", w)
			}
			if len(order) == 0 {
				log.Printf("datasource_list of the image: None alone: no source is searched")
			} else {
				log.Printf("datasource_list of the image: %s", strings.Join(names(order), ", "))
			}
			if singleEntry(img.List) && len(order) == 1 {
				asked[order[0].Name] = "datasource_list"
			}
		}
	}
	info, err := readDMI(sys)
	if err != nil {
		log.Errorf("datasource: DMI strings: %v", err)
	}
	// A source named by its own words (ds=nocloud;s=...) on the kernel
	// command line or in the DMI system serial is tried even when
	// earlyinit.ds= leaves it out, and its seed first.
	var seeds []datasource.Source
	var netSeeds []string
	for _, src := range Sources {
		if src.Cmdline == nil {
			continue
		}
		h, ok, why, err := f.sourceHint(src, s.Params, info.ProductSerial)
		if !ok {
			continue
		}
		f.hints[src.Name] = h
		asked[src.Name] = why
		if _, in := byName(order, src.Name); !in {
			order = append(order, src)
		}
		if err == nil && (h.Seed != "" || h.SeedURL != "") {
			seeds = append(seeds, src)
		}
		if err == nil && h.SeedURL != "" {
			netSeeds = append(netSeeds, src.Name)
		}
	}
	if s.MetadataURL != "" {
		f.metadataURLShown = redactURL(s.MetadataURL)
	}
	dec := Decide(info, order, asked, f.metadataURLShown, netSeeds...)
	log.Printf("%s", dec.Line)
	order = dec.Order
	f.imageSeedFrom(order)
	for _, src := range seeds {
		if d := f.seed(src, f.hints[src.Name]); d != nil {
			return d, nil
		}
	}
	return f.walk(order, explicit)
}

// sourceHint reads src's own words on the kernel command line and in the
// DMI system serial, which cloud-init's NoCloud reads as command-line words
// too. As in cloud-init, the serial's seed wins over the command line's,
// and its i= and h= are applied last. ok tells whether either names src;
// why says which, for the decision line. A hint that names src but is bad
// is logged and counted as rejected; err is set when its seed is not to be
// read.
func (f *finder) sourceHint(src datasource.Source, params map[string]string, serial string) (h datasource.Hint, ok bool, why string, err error) {
	ch, cok, cerr := src.Cmdline(params)
	if cerr != nil {
		f.log.Errorf("%v", cerr)
		if cok {
			f.rejected++
		}
	}
	var dh datasource.Hint
	var dok bool
	var derr error
	if serial != "" {
		dh, dok, derr = src.Cmdline(serialWords(serial))
		if derr != nil {
			f.log.Errorf("DMI product_serial: %v", derr)
			if dok {
				f.rejected++
			}
		}
	}
	switch {
	case cok && dok:
		h, err, why = ch, cerr, "the kernel command line and DMI product_serial"
		h.From = "dmi,cmdline"
		if derr != nil || dh.Seed != "" || dh.SeedURL != "" {
			h.Seed, h.SeedURL, err = dh.Seed, dh.SeedURL, derr
			h.Origin = "DMI product_serial " + dh.Origin
		}
		h.Apply = chain(ch.Apply, dh.Apply)
	case dok:
		h, err, why = dh, derr, "DMI product_serial"
		h.From = "dmi"
		if h.Origin != "" {
			h.Origin = "DMI product_serial " + h.Origin
		}
	case cok:
		h, err, why = ch, cerr, "the kernel command line"
		h.From = "cmdline"
	default:
		return h, false, "", nil
	}
	return h, true, why, err
}

// chain applies a, then b (each may be nil).
func chain(a, b func(*instance.Data)) func(*instance.Data) {
	return func(d *instance.Data) {
		for _, fn := range []func(*instance.Data){a, b} {
			if fn != nil {
				fn(d)
			}
		}
	}
}

// imageSeedFrom reads the image's seedfrom settings of the sources in
// order, unless the kernel command line gives the source a seed.
func (f *finder) imageSeedFrom(order []datasource.Source) {
	for _, src := range order {
		set, ok := f.img.Settings[src.Class]
		if !ok || set.SeedFrom == "" {
			continue
		}
		origin := "datasource." + src.Class + ".seedfrom"
		if src.SeedFrom == nil {
			f.log.Errorf("%s: not supported: the %s datasource has no seeds", origin, src.Name)
			continue
		}
		if h := f.hints[src.Name]; h.Seed != "" || h.SeedURL != "" {
			f.log.Printf("%s of the image ignored: %s on the kernel command line wins", origin, h.Origin)
			continue
		}
		h, err := src.SeedFrom(set.SeedFrom, origin)
		if err != nil {
			f.log.Errorf("%v: ignored", err)
			continue
		}
		f.imageSeeds[src.Name] = h
	}
}

// seed reads src from the seed h names: a directory in the real root or,
// over the temporary network, a URL. A seed that cannot be read is
// rejected, with its reason logged.
func (f *finder) seed(src datasource.Source, h datasource.Hint) *instance.Data {
	var d *instance.Data
	var err error
	where := h.Seed
	if h.SeedURL != "" {
		where = redactURL(h.SeedURL)
		d, err = f.seedURL(src, h.SeedURL)
	} else {
		fsys, _ := f.sys.SeedDir(h.Seed)
		d, err = src.ReadFS(fsys)
	}
	if err != nil {
		f.log.Errorf("datasource %s (%s) rejected: %v", src.Name, h.Origin, err)
		f.rejected++
		return nil
	}
	d.Subplatform = "seed-dir (" + where + ")"
	return f.finish(d, src)
}

// seedURL reads src's files from u over the temporary network.
func (f *finder) seedURL(src datasource.Source, u string) (*instance.Data, error) {
	if src.SeedURL == nil {
		return nil, fmt.Errorf("the %s datasource reads no seed from a URL", src.Name)
	}
	ctx, svc, err := f.network()
	if err != nil {
		return nil, fmt.Errorf("no network for the seed: %w", err)
	}
	var d *instance.Data
	err = logs.Guard(f.log, "datasource "+src.Name, func() error {
		var err error
		d, err = src.SeedURL(ctx, svc, u)
		return err
	})
	return d, err
}

// redactURL is u without its password, for the logs.
func redactURL(u string) string {
	p, err := url.Parse(u)
	if err != nil {
		return "(a URL that does not parse)"
	}
	return p.Redacted()
}

// walk tries each source's seed directories, drives and metadata service.
func (f *finder) walk(order []datasource.Source, explicit bool) (*instance.Data, error) {
	var metadata []datasource.Source
	for _, src := range order {
		if src.Metadata != nil && !src.Local {
			metadata = append(metadata, src)
		}
	}
	if len(metadata) > 0 {
		f.raise()
	}
	f.order, f.explicit = order, explicit
	triedMetadata := false
	for _, src := range order {
		if h, ok := f.imageSeeds[src.Name]; ok {
			if d := f.seed(src, h); d != nil {
				return d, nil
			}
		}
		if d := f.seedDirs(src); d != nil {
			return d, nil
		}
		if len(src.Labels) > 0 {
			if d := f.drives(src, f.drivesListed()); d != nil {
				return d, nil
			}
		}
		if d := f.alone(src); d != nil {
			return d, nil
		}
		if src.Metadata != nil && src.Local {
			if d := f.local(src); d != nil {
				return d, nil
			}
			continue
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
	for _, d := range f.devs {
		seen = append(seen, d.String())
	}
	msg := fmt.Sprintf("no datasource found (tried %s; block devices: %s)", strings.Join(names(order), ", "), strings.Join(seen, "; "))
	if f.rejected > 0 && !f.noneOK {
		// Something was there and was bad: that is an error to see.
		return nil, fmt.Errorf("%s; %d rejected", msg, f.rejected)
	}
	if f.rejected > 0 {
		// Not None either: the instance the rejected source describes
		// would become another one.
		f.log.Printf("%s; %d rejected; datasource_list has None, but a source was there and could not be used: booting without an instance, not as None", msg, f.rejected)
		return nil, nil
	}
	// Nothing there at all is a normal state, not a failure.
	if !f.noneFallback {
		f.log.Printf("%s; the image's datasource_list has no None: booting without an instance", msg)
		return nil, nil
	}
	f.log.Printf("%s: falling back to None, the last resort: the image's configuration applies", msg)
	return f.finish(none.Data(), none.Source), nil
}

// alone is the instance src's own words on the kernel command line or in
// the DMI serial describe by themselves (Hint.Alone), when they name no
// seed and none was rejected: cloud-init's NoCloud, found by "cmdline"
// alone, reports its seed as that word.
func (f *finder) alone(src datasource.Source) *instance.Data {
	h, ok := f.hints[src.Name]
	if !ok || h.Alone == nil || h.Seed != "" || h.SeedURL != "" || f.rejected > 0 {
		return nil
	}
	d := h.Alone()
	d.Subplatform = "seed-dir (" + h.From + ")"
	return f.finish(d, src)
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
