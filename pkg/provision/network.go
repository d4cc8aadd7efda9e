package provision

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/earlyinit/earlyinit/pkg/instance"
	"github.com/earlyinit/earlyinit/pkg/netcfg"
	"github.com/earlyinit/earlyinit/pkg/netcfg/render"
	"github.com/earlyinit/earlyinit/pkg/nic"
	"github.com/earlyinit/earlyinit/pkg/paths"
	"github.com/earlyinit/earlyinit/pkg/rootfs"
)

// networkDigest records what was last written, so the network config is
// rewritten on a new instance and whenever it changes, and left alone
// otherwise.
const networkDigest = paths.DataDir + "/network-config.sha256"

// cloudInitBins tell that the real root has cloud-init, whose own network
// config must then be turned off.
var cloudInitBins = []string{"/usr/bin/cloud-init", "/usr/local/bin/cloud-init"}

// network names the NICs and writes the network config for the real root.
// Every failure is logged; none stops the boot.
func network(env Env, d *instance.Data, isNew bool) (deviceWait time.Duration, err error) {
	nl := env.netlink()
	links, err := nl.LinkList()
	if err != nil {
		return 0, fmt.Errorf("list links: %w", err)
	}
	cfg, err := networkConfig(env, d, links)
	if err != nil {
		return 0, err
	}
	if cfg.Disabled {
		env.Log.Printf("network: config disabled by the datasource; nothing renamed or written")
		return 0, nil
	}
	want := cfg.RenameMap()
	var errs []error
	if len(want) > 0 {
		macs := make([]string, 0, len(want))
		for m := range want {
			macs = append(macs, m)
		}
		sort.Strings(macs)
		ctx, cancel := context.WithTimeout(context.Background(), env.Settings.Timeout)
		t0, loaded := time.Now(), loadTime(env)
		missing, err := waitLinks(ctx, nl, macs, env.Scan)
		cancel()
		deviceWait = time.Since(t0) - (loadTime(env) - loaded)
		if err != nil && len(missing) > 0 {
			env.Log.Errorf("network: NICs not found within %s: %s", env.Settings.Timeout, strings.Join(missing, " "))
		}
		applied, problems, err := nic.Apply(nl, want)
		for _, p := range problems {
			env.Log.Errorf("network: rename %s", p)
		}
		for _, s := range applied {
			env.Log.Printf("network: renamed %s", s)
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("rename NICs: %w", err))
		}
		// Persist only what is in place: entries Plan refused stay out.
		for _, p := range problems {
			delete(want, strings.ToLower(p.MAC))
		}
	}
	root, err := rootfs.Open(env.Root)
	if err != nil {
		return deviceWait, errors.Join(append(errs, err)...)
	}
	files, err := renderNetwork(env, root, cfg, want)
	if err != nil {
		return deviceWait, errors.Join(append(errs, err)...)
	}
	digest := digestFiles(files)
	if old, err := root.ReadFile(networkDigest); err == nil && !isNew && strings.TrimSpace(string(old)) == digest {
		env.Log.Printf("network: config unchanged since last written; left as is")
		return deviceWait, errors.Join(errs...)
	}
	for _, f := range files {
		if err := root.WriteFile(f.Path, f.Data, f.Mode, 0, 0); err != nil {
			errs = append(errs, err)
			continue
		}
		env.Log.Printf("network: wrote %s", f.Path)
	}
	if err := root.WriteFile(networkDigest, []byte(digest+"\n"), 0o644, 0, 0); err != nil {
		errs = append(errs, err)
	}
	return deviceWait, errors.Join(errs...)
}

// networkConfig parses the datasource's network config, naming NICs from
// the live links, or falls back to DHCP on the first NIC when there is none
// or it is unusable.
func networkConfig(env Env, d *instance.Data, links []nic.Link) (*netcfg.Config, error) {
	live := map[string]string{}
	for _, l := range links {
		if l.MAC != "" && l.Kind == "device" {
			live[l.MAC] = l.Name
		}
	}
	if d != nil && len(d.Network) > 0 {
		var cfg *netcfg.Config
		var err error
		if d.NetworkFormat == instance.NetworkEC2Metadata {
			cfg, err = netcfg.ParseEC2(d.Network, live)
		} else {
			cfg, err = netcfg.Parse(string(d.NetworkFormat), d.Network, live)
		}
		if err == nil {
			err = cfg.Validate()
		}
		if err == nil {
			env.Log.Printf("network: %s config with %d interfaces", d.NetworkFormat, len(cfg.Interfaces))
			return cfg, nil
		}
		env.Log.Errorf("network: %v; using the fallback config instead", err)
	}
	cfg, err := netcfg.Fallback(liveNICs(links))
	if err != nil {
		return nil, fmt.Errorf("fallback network config: %w", err)
	}
	env.Log.Printf("network: fallback config, DHCP on %s", cfg.Interfaces[0].Name)
	return cfg, nil
}

// liveNICs describes live links for cloud-init's fallback rule.
func liveNICs(links []nic.Link) []netcfg.NIC {
	var nics []netcfg.NIC
	for _, l := range links {
		nics = append(nics, netcfg.NIC{Name: l.Name, MAC: l.MAC, Driver: l.Driver, Carrier: l.Carrier,
			Virtual: l.Kind != "device" && l.Kind != "loopback", Bridge: l.Kind == "bridge", Bond: l.Kind == "bond", Loopback: l.Kind == "loopback"})
	}
	return nics
}

// renderNetwork returns the files to write: the renderer's, the persistent
// NIC names, and the drop-in that keeps an installed cloud-init from
// writing its own network config.
func renderNetwork(env Env, root *rootfs.Root, cfg *netcfg.Config, names map[string]string) ([]render.File, error) {
	var r render.Renderer
	var err error
	if name := env.Settings.Renderer; name != "" {
		r, err = render.ByName(name)
		if err != nil {
			return nil, fmt.Errorf("earlyinit.renderer=%s: %w", name, err)
		}
	} else if r, err = render.Detect(root.Exists); err != nil {
		return nil, fmt.Errorf("no network renderer fits the real root (%w); give earlyinit.renderer=", err)
	}
	files, err := r.Render(cfg)
	if err != nil {
		return nil, fmt.Errorf("render %s: %w", r.Name(), err)
	}
	env.Log.Printf("network: renderer %s", r.Name())
	if r.Name() == "eni" {
		if raw, err := root.ReadFile("/etc/network/interfaces"); err != nil || !strings.Contains(string(raw), "interfaces.d") {
			files = append(files, render.ENIInterfaces())
		}
	}
	for _, f := range nic.PersistFiles(names, nic.HasSystemdUdevd(root.Exists)) {
		files = append(files, render.File{Path: f.Path, Data: f.Data, Mode: f.Mode})
	}
	for _, p := range cloudInitBins {
		if root.Exists(p) {
			files = append(files, render.CloudInitDropIn())
			break
		}
	}
	return files, nil
}

// waitLinks waits for NICs with the given MACs, running coldplug between
// short polls so late NIC drivers load.
func waitLinks(ctx context.Context, nl nic.Netlinker, macs []string, scan func()) ([]string, error) {
	for {
		sub, cancel := context.WithTimeout(ctx, 250*time.Millisecond)
		missing, err := nic.WaitFor(sub, nl, macs, 50*time.Millisecond)
		cancel()
		if err == nil || ctx.Err() != nil {
			return missing, err
		}
		if scan != nil {
			scan()
		}
	}
}

func digestFiles(files []render.File) string {
	sorted := append([]render.File(nil), files...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].Path < sorted[j].Path })
	h := sha256.New()
	for _, f := range sorted {
		fmt.Fprintf(h, "%s %o %d\n", f.Path, f.Mode, len(f.Data))
		h.Write(f.Data)
	}
	return hex.EncodeToString(h.Sum(nil))
}

func loadTime(env Env) time.Duration {
	if env.LoadTime == nil {
		return 0
	}
	return env.LoadTime()
}
