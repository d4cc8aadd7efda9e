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
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"slices"
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

// Image is what the image's own configuration (/etc/cloud/cloud.cfg and
// cloud.cfg.d, earlyinit.cfg) says about discovery, its values already
// type-checked (internal/provision reads them from internal/imagecfg). The zero value
// changes nothing.
type Image struct {
	// List is datasource_list: cloud-init's names of the sources to try,
	// in order ("NoCloud", "ConfigDrive", "OpenStack", "Ec2", "None");
	// nil means Sources. earlyinit.ds= wins over it. See ImageOrder.
	List []string
	// Settings are the datasource: settings, by cloud-init class name
	// (the key under datasource:, Source.Class).
	Settings map[string]SourceSettings
	// DefaultUser is the name of the default user the image creates, ""
	// for none: metadata sources are told it (Service.DefaultUser).
	DefaultUser string
}

// SourceSettings is one source's datasource.<Class> settings.
type SourceSettings struct {
	// MetadataURLs are the metadata service's base URLs (metadata_urls),
	// asked in order until one answers; nil means the one the System
	// found. earlyinit.metadata_url wins over them.
	MetadataURLs []string
	// MaxWait bounds the time spent on the source's metadata service
	// (max_wait), within earlyinit.timeout: the smaller wins. 0 means
	// earlyinit.timeout alone.
	MaxWait time.Duration
	// Timeout bounds each try of each request (timeout); 0 means the
	// source's default.
	Timeout time.Duration
	// SeedFrom is where the source's files are (NoCloud's seedfrom): a
	// directory in the real root or an http:// URL, read in the source's
	// place in the order, before its seed directories and drives; "" for
	// none. A seed on the kernel command line (ds=nocloud;s=) wins.
	SeedFrom string
	// SecondaryNICs is Oracle's configure_secondary_nics
	// (Service.SecondaryNICs).
	SecondaryNICs bool
}

// ImageOrder returns the sources a datasource_list names, in its order,
// matched by cloud-init's class name (Source.Class, in any case, with or
// without cloud-init's "DataSource" prefix). "None", cloud-init's fallback
// source, names no source of earlyinit's: it sets noneOK, meaning that
// finding no datasource is fine. A name earlyinit has no source for is one
// warning. A list whose only source earlyinit has is None ([None]) gives
// no source: cloud-init then uses None without searching. A list that
// names none of earlyinit's sources, nor None, gives Sources, with a
// warning.
func ImageOrder(list []string) (order []datasource.Source, noneOK bool, warns []string) {
	var classes []string
	for _, s := range Sources {
		if !slices.Contains(classes, s.Class) {
			classes = append(classes, s.Class)
		}
	}
	classes = append(classes, "None")
	for _, name := range list {
		n := strings.TrimPrefix(strings.TrimSpace(name), "DataSource")
		if strings.EqualFold(n, "None") {
			noneOK = true
			continue
		}
		// Every source of the class: cloud-init's Ec2 is AWS, ZStack
		// and Outscale alike; their Platform rules tell them apart.
		found := false
		for _, s := range Sources {
			if strings.EqualFold(n, s.Class) {
				found = true
				if _, dup := byName(order, s.Name); !dup {
					order = append(order, s)
				}
			}
		}
		if !found {
			warns = append(warns, fmt.Sprintf("datasource_list: %q: earlyinit has no such datasource (it has %s): skipped", name, strings.Join(classes, ", ")))
		}
	}
	if len(order) == 0 && noneOK {
		return nil, true, warns
	}
	if len(order) == 0 {
		warns = append(warns, fmt.Sprintf("datasource_list names none of earlyinit's datasources: trying them all (%s)", strings.Join(names(Sources), ", ")))
		return Sources, noneOK, warns
	}
	return order, noneOK, warns
}

func names(list []datasource.Source) []string {
	var n []string
	for _, s := range list {
		n = append(n, s.Name)
	}
	return n
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

// Find tries the datasources in order and returns the first that reads
// cleanly, or nil when there is none: a normal state, logged as such. A
// source that is there but cannot be used is rejected with its reason
// logged, and nothing of it is kept; the error says how many were, when
// none could be used.
func Find(sys System, s settings.Settings, log Log) (*instance.Data, error) {
	return FindWith(sys, s, Image{}, log)
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

// raise brings up the NICs a metadata service may be reached through,
// once (System.RaiseLinks); down puts them back.
func (f *finder) raise() {
	if f.lower == nil {
		f.lower = f.sys.RaiseLinks()
	}
}

// network brings the temporary network up the first time a source needs
// it, bounded by earlyinit.timeout from then on; it stays up for the other
// sources until the search ends (down). A failure is remembered: the
// network is tried once.
func (f *finder) network() (context.Context, datasource.Service, error) {
	if !f.netTried {
		f.netTried = true
		f.raise()
		f.netCtx, f.netCancel = context.WithTimeout(context.Background(), f.timeout)
		f.svc, f.netDone, f.netErr = f.sys.Network(f.netCtx)
		f.svc.Logf = f.log.Debugf
	}
	return f.netCtx, f.svc, f.netErr
}

// down takes the temporary network down and the raised NICs back down.
func (f *finder) down() {
	if f.netDone != nil {
		f.netDone()
	}
	if f.netCancel != nil {
		f.netCancel()
	}
	if f.lower != nil {
		f.lower()
	}
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

// drivesListed is the block devices, listed the first time it is called.
func (f *finder) drivesListed() []blockdev.Device {
	if !f.listed {
		f.devs = f.listDrives(f.order, f.explicit)
		f.listed = true
	}
	return f.devs
}

// provisioningDrive reads the first of src's provisioning drives that
// holds its ProvisioningFile, and returns it (still mounted until the
// handoff), or nil when there is none.
func (f *finder) provisioningDrive(src datasource.Source) fs.FS {
	for _, dev := range f.drivesListed() {
		if !src.ProvisioningDrive(dev.FS.Type, dev.FS.Label) {
			continue
		}
		var drive fs.FS
		_, err := f.sys.ReadDrive(dev, func(fsys fs.FS) (*instance.Data, error) {
			if _, err := fs.Stat(fsys, src.ProvisioningFile); err != nil {
				return nil, err
			}
			drive = fsys
			return &instance.Data{}, nil
		})
		if err != nil {
			f.log.Printf("datasource %s: %s: no %s (%v)", src.Name, dev, src.ProvisioningFile, err)
			continue
		}
		f.log.Printf("datasource %s: provisioning media %s", src.Name, dev)
		return drive
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
			if src.Drive(d.FS.Type, d.FS.Label) || (src.Metadata != nil && src.ProvisioningDrive != nil && src.ProvisioningDrive(d.FS.Type, d.FS.Label)) {
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

// metadata asks each metadata source in turn over the temporary network
// (brought up once, the whole attempt bounded by earlyinit.timeout).
func (f *finder) metadata(srcs []datasource.Source) (*instance.Data, error) {
	ctx, svc, err := f.network()
	if err != nil {
		return nil, err
	}
	var errs []error
	for _, src := range srcs {
		d, err := f.askMetadata(ctx, svc, src)
		if err != nil {
			f.log.Errorf("datasource %s rejected: %v", src.Name, err)
			f.rejected++
			errs = append(errs, fmt.Errorf("%s: %w", src.Name, err))
			continue
		}
		if src.Ready != nil {
			if err := logs.Guard(f.log, "datasource "+src.Name+" ready report", func() error { return src.Ready(ctx, svc, d) }); err != nil {
				f.log.Errorf("datasource %s: ready report to the platform failed: %v", src.Name, err)
			} else {
				f.log.Printf("datasource %s: reported ready to the platform", src.Name)
			}
		}
		return f.finish(d, src), nil
	}
	return nil, errors.Join(errs...)
}

// rootDirer is a System that knows where the real root is mounted, for
// the sources that run the image's own tools (Service.Root).
type rootDirer interface {
	RootDir() string
}

// local asks a Local source, without the temporary network, within
// earlyinit.timeout.
func (f *finder) local(src datasource.Source) *instance.Data {
	ctx, cancel := context.WithTimeout(context.Background(), f.timeout)
	defer cancel()
	svc := datasource.Service{Logf: f.log.Debugf}
	if r, ok := f.sys.(rootDirer); ok {
		svc.Root = r.RootDir()
	}
	d, err := f.askMetadata(ctx, svc, src)
	if errors.Is(err, datasource.ErrAbsent) {
		// Nothing there, as cloud-init's get_data returning False: not
		// a source that was there and was bad, so None may follow.
		f.log.Printf("datasource %s: %v", src.Name, err)
		return nil
	}
	if err != nil {
		f.log.Errorf("datasource %s rejected: %v", src.Name, err)
		f.rejected++
		return nil
	}
	return f.finish(d, src)
}

// askMetadata asks src's metadata service at each of its base URLs in
// turn, the image's metadata_urls or the one the System found, within the
// image's max_wait and with its per-request timeout.
func (f *finder) askMetadata(ctx context.Context, svc datasource.Service, src datasource.Source) (*instance.Data, error) {
	set := f.img.Settings[src.Class]
	bases := []string{svc.Base}
	if src.MetadataBase != "" && f.metadataURL == "" {
		// The source's own address (Alibaba's 100.100.100.200), unless
		// earlyinit.metadata_url names one.
		bases = []string{src.MetadataBase}
	}
	if len(set.MetadataURLs) > 0 {
		if f.metadataURL != "" {
			f.log.Printf("datasource.%s.metadata_urls of the image ignored: earlyinit.metadata_url on the kernel command line wins", src.Class)
		} else {
			bases = set.MetadataURLs
		}
	}
	if set.MaxWait > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, set.MaxWait)
		defer cancel()
	}
	svc.Timeout = set.Timeout
	svc.SecondaryNICs = set.SecondaryNICs
	svc.DefaultUser = f.img.DefaultUser
	if src.ProvisioningDrive != nil {
		svc.Drive = f.provisioningDrive(src)
	}
	var errs []error
	for _, base := range bases {
		s := svc
		s.Base = strings.TrimRight(base, "/")
		var d *instance.Data
		err := logs.Guard(f.log, "datasource "+src.Name, func() error {
			var err error
			d, err = src.Metadata(ctx, s)
			return err
		})
		if err == nil {
			return d, nil
		}
		if len(bases) > 1 {
			err = fmt.Errorf("%s: %w", redactURL(s.Base), err)
		}
		errs = append(errs, err)
		if ctx.Err() != nil {
			if set.MaxWait > 0 && errors.Is(ctx.Err(), context.DeadlineExceeded) {
				errs = append(errs, fmt.Errorf("gave up after datasource.%s.max_wait (%s)", src.Class, set.MaxWait))
			}
			break
		}
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
