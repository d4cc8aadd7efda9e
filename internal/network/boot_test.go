package network

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/earlyinit/earlyinit/internal/netcfg"
	"github.com/earlyinit/earlyinit/internal/netcfg/render"
	"github.com/earlyinit/earlyinit/internal/nic"
	"github.com/earlyinit/earlyinit/internal/rootfs"
)

// bootBefore is what the boot did before this package, internal/boot's
// networkConfig and renderNetwork (EC2's parser then lived in its reader),
// kept to hold Build to it: the files to write, the renames and the lines
// logged about the config.
func bootBefore(format string, data []byte, links []nic.Link, renderer string, root *rootfs.Root) (files []netcfg.File, renames map[string]string, logs []string, err error) {
	live := map[string]string{}
	for _, l := range links {
		if l.MAC != "" && l.Kind == "device" {
			live[l.MAC] = l.Name
		}
	}
	var cfg *netcfg.Config
	if len(data) > 0 {
		cfg, err = netcfg.Parse(format, data, live)
		if err == nil {
			err = cfg.Validate()
		}
		if err == nil {
			logs = append(logs, fmt.Sprintf("network: %s config with %d interfaces", format, len(cfg.Interfaces)))
		} else {
			logs = append(logs, fmt.Sprintf("E network: %v; using the fallback config instead", err))
			cfg = nil
		}
	}
	if cfg == nil {
		if cfg, err = netcfg.Fallback(LiveNICs(links)); err != nil {
			return nil, nil, logs, fmt.Errorf("fallback network config: %w", err)
		}
		logs = append(logs, fmt.Sprintf("network: fallback config, DHCP on %s", cfg.Interfaces[0].Name))
	}
	if cfg.Disabled {
		return nil, nil, logs, nil
	}
	renames = cfg.RenameMap()
	var r render.Renderer
	if renderer != "" {
		if r, err = render.ByName(renderer); err != nil {
			return nil, renames, logs, fmt.Errorf("earlyinit.renderer=%s: %w", renderer, err)
		}
	} else if r, err = render.Detect(root.Exists); err != nil {
		return nil, renames, logs, fmt.Errorf("no network renderer fits the real root (%w); give earlyinit.renderer=", err)
	}
	if files, err = r.Render(cfg); err != nil {
		return nil, renames, logs, fmt.Errorf("render %s: %w", r.Name(), err)
	}
	if r.Name() == "eni" {
		if raw, err := root.ReadFile("/etc/network/interfaces"); err != nil || !strings.Contains(string(raw), "interfaces.d") {
			files = append(files, render.ENIInterfaces())
		}
	}
	files = append(files, nic.PersistLinks(renames, nil, nic.HasSystemdUdevd(root.Exists))...)
	for _, p := range []string{"/usr/bin/cloud-init", "/usr/local/bin/cloud-init"} {
		if root.Exists(p) {
			files = append(files, render.CloudInitDropIn())
			break
		}
	}
	return files, renames, logs, nil
}

// TestBuildAsBootDid runs Build and bootBefore over every format (good,
// broken, disabled, absent), root and renderer setting: same files, byte
// for byte, same renames, same log lines but one, and the same errors.
// The one: a config that parses but does not validate is now named by its
// format in the warning, as net-convert always named it.
func TestBuildAsBootDid(t *testing.T) {
	roots := map[string]*rootfs.Root{
		"networkd+udevd":      newRoot(t, networkdBins, udevd),
		"networkd+cloud-init": newRoot(t, networkdBins, []string{"/usr/bin/cloud-init"}),
		"eni":                 newRoot(t, eniBins, udevd, []string{"/etc/network/interfaces=auto lo\n"}),
		"eni sourcing":        newRoot(t, eniBins, []string{"/etc/network/interfaces=source-directory /etc/network/interfaces.d\n", "/usr/local/bin/cloud-init"}),
		"netplan":             newRoot(t, netplanBin, udevd),
		"empty":               newRoot(t),
	}
	configs := []struct{ format, data string }{
		{"", ""}, {"network_data.json", ndJSON}, {"network_data.json", "{"}, {"yaml", v2Swap}, {"yaml", v1Static},
		{"yaml", badName}, {"yaml", disabled}, {"eni", eniText}, {"ec2", ec2JSON}, {"ec2", "[]"}, {"toml", "x"},
	}
	linkSets := map[string][]nic.Link{"vm": testLinks(), "lo only": testLinks()[:1]}
	n := 0
	for rootName, root := range roots {
		for _, c := range configs {
			for linksName, links := range linkSets {
				for _, renderer := range []string{"", "networkd", "eni", "bogus"} {
					name := fmt.Sprintf("%s/%s %.12q/%s/%q", rootName, c.format, c.data, linksName, renderer)
					wantFiles, wantRenames, wantLogs, wantErr := bootBefore(c.format, []byte(c.data), links, renderer, root)
					in := Input{NICs: LiveNICs(links), Renderer: renderer, RendererSetting: "earlyinit.renderer", Root: root, Fallback: true}
					if c.data != "" {
						in.Format, in.Data = c.format, []byte(c.data)
					}
					res, err := Build(in)
					n++
					if fmt.Sprint(err) != fmt.Sprint(wantErr) {
						t.Errorf("%s: error %v, want %v", name, err, wantErr)
						continue
					}
					if res == nil {
						if wantRenames != nil {
							t.Errorf("%s: no Result", name)
						}
						continue
					}
					log := &testLog{}
					res.LogNotes(log)
					if c.data == badName && len(log.lines) > 0 {
						log.lines[0] = strings.Replace(log.lines[0], "E network: yaml: ", "E network: ", 1)
					}
					if !reflect.DeepEqual(log.lines, wantLogs) {
						t.Errorf("%s: notes %q, want %q", name, log.lines, wantLogs)
					}
					if len(res.Renames) != 0 || len(wantRenames) != 0 {
						if !reflect.DeepEqual(res.Renames, wantRenames) {
							t.Errorf("%s: renames %v, want %v", name, res.Renames, wantRenames)
						}
					}
					if (len(res.Files) != 0 || len(wantFiles) != 0) && !reflect.DeepEqual(res.Files, wantFiles) {
						t.Errorf("%s: files %q, want %q", name, filePaths(res.Files), filePaths(wantFiles))
					}
				}
			}
		}
	}
	t.Logf("%d cases", n)
}
