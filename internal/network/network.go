// Package network is the network pipeline: parse (any format) → model →
// rename plan → render → files for the root.
//
// Build is the pure part, shared by the boot and `earlyinit net-convert`:
// the raw config and its format in (internal/netcfg parses every format the
// datasources produce), the validated model, the NICs to rename by MAC and
// the files to write out (the renderer's, and for a real root the ENI
// interfaces file, the persistent NIC names and the drop-in that keeps an
// installed cloud-init off the network config). Apply is the system side of
// the boot: it waits for the planned NICs, renames them over netlink
// (nic.Apply) and writes the files into the root, only when they changed or
// the instance is new.
package network

import (
	"errors"
	"fmt"
	"strings"

	"github.com/earlyinit/earlyinit/internal/logs"
	"github.com/earlyinit/earlyinit/internal/netcfg"
	"github.com/earlyinit/earlyinit/internal/netcfg/render"
	"github.com/earlyinit/earlyinit/internal/nic"
	"github.com/earlyinit/earlyinit/internal/paths"
)

// cloudInitBins tell that the real root has cloud-init, whose own network
// config must then be turned off.
var cloudInitBins = []string{"/usr/bin/cloud-init", "/usr/local/bin/cloud-init"}

// eniInterfaces is the file the ENI renderer's interfaces.d needs to be
// sourced from.
const eniInterfaces = "/etc/network/interfaces"

// cloudInitOutputs are the files cloud-init's netplan and ENI renderers
// write, which netplan and ifupdown would read beside earlyinit's own (two
// configs for one NIC): when the root has one, earlyinit's config takes
// its path, as cloud-init re-renders its file at a boot that applies a
// network config, and the old content is kept under BackupDir. ownOutputs
// are earlyinit's own names for them.
var (
	cloudInitOutputs = map[string][]string{
		"netplan": {"/etc/netplan/50-cloud-init.yaml"},
		"eni":     {"/etc/network/interfaces.d/50-cloud-init", "/etc/network/interfaces.d/50-cloud-init.cfg"},
	}
	ownOutputs = map[string]string{"netplan": render.NetplanPath, "eni": render.ENIPath}
)

// BackupDir keeps a copy of each network file of cloud-init's that
// earlyinit replaced or moved aside, at its path under this directory.
const BackupDir = paths.CacheDir + "/backup"

// ownHeader starts every file earlyinit's renderers write: a file that
// starts so is not kept as a backup.
const ownHeader = "# Written by earlyinit"

// Root is what Build reads of a real root, paths absolute within it;
// *rootfs.Root is one. Exists should resolve symlinks inside the root
// (render.Detect).
type Root interface {
	Exists(name string) bool
	ReadFile(name string) ([]byte, error)
}

// Input is what Build works from.
type Input struct {
	// Format is the config's format, one of instance.NetworkFormat's
	// values ("network_data.json", "yaml", "eni", "ec2"); "" means there
	// is no config (Data is then ignored).
	Format string
	// Data is the config itself.
	Data []byte
	// NICs are the live links (LiveNICs): the fallback config picks its NIC
	// among them and, unless MACs is set, their physical NICs name the
	// NICs the config matches by MAC.
	NICs []netcfg.NIC
	// MACs maps lower-case MACs to the NICs' current names (net-convert's
	// -m flags). nil means the physical NICs of NICs.
	MACs map[string]string
	// Renderer names the renderer (render.ByName); "" means the one
	// render.Detect finds in Root.
	Renderer string
	// RendererSetting is where Renderer comes from ("earlyinit.renderer"),
	// named in the errors about it; "" leaves them bare.
	RendererSetting string
	// Root is the real root the files are for. nil means none
	// (net-convert): the files are then the renderer's alone, and Renderer
	// must be given.
	Root Root
	// Fallback, when set, replaces a config that is absent or unusable by
	// netcfg.Fallback (DHCP on the first NIC), with a Note saying why, as
	// the boot does. When not set, an unusable config is Build's error.
	Fallback bool
}

// Note is something Build did that the boot logs: the config it used, or
// why it fell back (Warning).
type Note struct {
	Warning bool
	Text    string
}

// String is the note's text.
func (n Note) String() string { return n.Text }

// Result is what Build made.
type Result struct {
	// Config is the validated model.
	Config *netcfg.Config
	// Disabled is true for `network: {config: disabled}`: nothing is to be
	// renamed or written.
	Disabled bool
	// Renames are the NICs to rename, MAC -> name (Config.RenameMap).
	Renames map[string]string
	// Renderer is the name of the renderer used; "" when Disabled or when
	// rendering failed.
	Renderer string
	// Files are the files to write, in order: the renderer's, then, with
	// a Root, the ENI interfaces file when the root's does not source
	// interfaces.d, the persistent names of Renames (FilesFor) and the
	// cloud-init drop-in when the root has cloud-init.
	Files []netcfg.File
	// Notes are what the boot logs about the config, in order.
	Notes []Note

	rendered []netcfg.File // the renderer's, and the ENI interfaces file
	hasRoot  bool
	systemd  bool // the root has systemd-udevd: .link files, not a udev rule
	// wakeOnLAN are the renamed NICs' MACs whose rename .link file says
	// WakeOnLan=magic: networkd has no other place for it.
	wakeOnLAN []string
	cloudInit bool
	// replaced are cloud-init's files of this renderer in the root:
	// the first holds earlyinit's config now, the others are moved aside;
	// each one's old content is kept under BackupDir. stale is
	// earlyinit's own file of an earlier boot, now in replaced[0]'s place.
	replaced []string
	stale    string
}

// Build parses in's config, validates it (or falls back, see
// Input.Fallback) and renders it. It is pure but for reading in.Root.
//
// When only the rendering fails (the renderer cannot be found or refuses
// the config), Build returns the Result so far, with Config, Renames and
// Notes but no Renderer or Files, along with the error: the boot still
// names the NICs (Apply writes nothing for such a Result).
func Build(in Input) (*Result, error) {
	cfg, notes, err := config(in)
	if err != nil {
		return nil, err
	}
	res := &Result{Config: cfg, Disabled: cfg.Disabled, Notes: notes}
	if cfg.Disabled {
		return res, nil
	}
	res.Renames = cfg.RenameMap()
	r, err := pickRenderer(in)
	if err != nil {
		return res, err
	}
	files, err := r.Render(cfg)
	if err != nil {
		return res, fmt.Errorf("render %s: %w", r.Name(), err)
	}
	res.Renderer = r.Name()
	if in.Root != nil {
		res.hasRoot = true
		if r.Name() == "eni" {
			if raw, err := in.Root.ReadFile(eniInterfaces); err != nil || !strings.Contains(string(raw), "interfaces.d") {
				files = append(files, render.ENIInterfaces())
			}
		}
		files = res.takeOver(in.Root, r.Name(), files)
		res.systemd = nic.HasSystemdUdevd(in.Root.Exists)
		if r.Name() == "networkd" && res.systemd {
			res.wakeOnLAN = nic.WakeOnLAN(cfg)
		}
		for _, p := range cloudInitBins {
			if in.Root.Exists(p) {
				res.cloudInit = true
				break
			}
		}
	}
	var extra []string
	if r.Name() == "networkd" && len(res.wakeOnLAN) == 0 {
		// Lost names the NICs not renamed; a renamed one has no .link
		// file either without a root with systemd-udevd.
		for _, mac := range nic.WakeOnLAN(cfg) {
			extra = append(extra, fmt.Sprintf("wakeonlan (%s: only a .link file carries it, and none is written without a root with systemd-udevd)", res.Renames[mac]))
		}
	}
	// One line for all the renderer could not express.
	if w := render.Warning(r.Name(), cfg, extra...); w != "" {
		res.Notes = append(res.Notes, Note{Warning: true, Text: w})
	}
	res.rendered = files
	res.Files = res.FilesFor(res.Renames)
	return res, nil
}

// takeOver puts the renderer's file at the path of cloud-init's when the
// root has one (see cloudInitOutputs) and records what Apply moves aside.
func (r *Result) takeOver(root Root, renderer string, files []netcfg.File) []netcfg.File {
	for _, p := range cloudInitOutputs[renderer] {
		if root.Exists(p) {
			r.replaced = append(r.replaced, p)
		}
	}
	if len(r.replaced) == 0 {
		return files
	}
	own := ownOutputs[renderer]
	for i := range files {
		if files[i].Path == own {
			files[i].Path = r.replaced[0]
		}
	}
	if root.Exists(own) {
		r.stale = own
	}
	return files
}

// FilesFor returns the files to write when the NICs named are names (MAC
// -> name), a subset of Renames: the boot persists only the renames that
// took. It is Files but for the persistent names. A Result without a
// Renderer has none.
func (r *Result) FilesFor(names map[string]string) []netcfg.File {
	if r.Renderer == "" {
		return nil
	}
	files := append([]netcfg.File(nil), r.rendered...)
	if r.hasRoot {
		files = append(files, nic.PersistLinks(names, r.wakeOnLAN, r.systemd)...)
	}
	if r.cloudInit {
		files = append(files, render.CloudInitDropIn())
	}
	return files
}

// LogNotes logs the notes, warnings with Errorf, each line starting
// "network: " as the rest of the network step's.
func (r *Result) LogNotes(l logs.Logger) {
	for _, n := range r.Notes {
		if n.Warning {
			l.Errorf("network: %s", n.Text)
		} else {
			l.Printf("network: %s", n.Text)
		}
	}
}

// config parses and validates in's config, or falls back.
func config(in Input) (*netcfg.Config, []Note, error) {
	var notes []Note
	if in.Format != "" {
		cfg, err := netcfg.Parse(in.Format, in.Data, macToName(in))
		if err == nil {
			if verr := cfg.Validate(); verr != nil {
				err = fmt.Errorf("%s: %w", in.Format, verr)
			}
		}
		if err == nil {
			notes = append(notes, Note{Text: fmt.Sprintf("%s config with %d interfaces", in.Format, len(cfg.Interfaces))})
			for _, w := range cfg.Warnings {
				notes = append(notes, Note{Warning: true, Text: w})
			}
			return cfg, notes, nil
		}
		if !in.Fallback {
			return nil, nil, err
		}
		notes = append(notes, Note{Warning: true, Text: fmt.Sprintf("%v; using the fallback config instead", err)})
	} else if !in.Fallback {
		return nil, nil, errors.New("no network config")
	}
	cfg, err := netcfg.Fallback(in.NICs)
	if err != nil {
		return nil, nil, fmt.Errorf("fallback network config: %w", err)
	}
	notes = append(notes, Note{Text: fmt.Sprintf("fallback config, DHCP on %s", cfg.Interfaces[0].Name)})
	return cfg, notes, nil
}

// macToName is in.MACs, or MAC -> name of the physical NICs among in.NICs.
func macToName(in Input) map[string]string {
	if in.MACs != nil {
		return in.MACs
	}
	m := map[string]string{}
	for _, n := range in.NICs {
		if n.MAC != "" && !n.Virtual && !n.Loopback {
			m[n.MAC] = n.Name
		}
	}
	return m
}

// pickRenderer is the renderer in.Renderer names, or the one in.Root calls
// for.
func pickRenderer(in Input) (render.Renderer, error) {
	if in.Renderer != "" {
		r, err := render.ByName(in.Renderer)
		if err != nil && in.RendererSetting != "" {
			return nil, fmt.Errorf("%s=%s: %w", in.RendererSetting, in.Renderer, err)
		}
		return r, err
	}
	if in.Root == nil {
		return nil, errors.New("no network renderer named and no root to detect one in")
	}
	r, err := render.Detect(in.Root.Exists)
	if err != nil {
		err = fmt.Errorf("no network renderer fits the real root (%w)", err)
		if in.RendererSetting != "" {
			err = fmt.Errorf("%w; give %s=", err, in.RendererSetting)
		}
		return nil, err
	}
	return r, nil
}

// LiveNICs describes live links as netcfg sees them: for the fallback rule
// (netcfg.Fallback, netcfg.FallbackOrder) and, through Input.NICs, to name
// the NICs a config matches by MAC.
func LiveNICs(links []nic.Link) []netcfg.NIC {
	var nics []netcfg.NIC
	for _, l := range links {
		nics = append(nics, netcfg.NIC{Name: l.Name, MAC: l.MAC, Driver: l.Driver, Carrier: l.Carrier,
			Virtual: l.Kind != "device" && l.Kind != "loopback", Bridge: l.Kind == "bridge", Bond: l.Kind == "bond", Loopback: l.Kind == "loopback"})
	}
	return nics
}
