package network

import (
	"reflect"
	"strings"
	"testing"

	"github.com/earlyinit/earlyinit/internal/netcfg"
	"github.com/earlyinit/earlyinit/internal/netcfg/render"
	"github.com/earlyinit/earlyinit/internal/nic"
	"github.com/earlyinit/earlyinit/internal/rootfs"
)

const (
	mac1 = "52:54:00:00:00:01"
	mac2 = "52:54:00:00:00:02"
)

// testLinks are a VM's links: two NICs, lo and a bridge.
func testLinks() []nic.Link {
	return []nic.Link{
		{Index: 1, Name: "lo", Kind: "loopback"},
		{Index: 2, Name: "eth0", MAC: mac1, Kind: "device", Driver: "virtio_net"},
		{Index: 3, Name: "eth1", MAC: mac2, Kind: "device", Driver: "virtio_net"},
		{Index: 4, Name: "br0", MAC: "52:54:00:00:00:99", Kind: "bridge"},
	}
}

// Roots, by the files render.Detect and the rest of Build look for.
var (
	networkdBins = []string{"/usr/sbin/ip", "/bin/systemctl"}
	udevd        = []string{"/lib/systemd/systemd-udevd"}
	eniBins      = []string{"/sbin/ifquery", "/sbin/ifup", "/sbin/ifdown"}
	netplanBin   = []string{"/usr/sbin/netplan"}
)

// newRoot returns a temporary root holding the given files: empty, or with
// the content after '=' ("/etc/network/interfaces=auto lo").
func newRoot(t *testing.T, files ...[]string) *rootfs.Root {
	t.Helper()
	root, err := rootfs.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range files {
		for _, f := range l {
			name, data, _ := strings.Cut(f, "=")
			if err := root.WriteFile(name, []byte(data), 0o755, 0, 0); err != nil {
				t.Fatal(err)
			}
		}
	}
	return root
}

func filePaths(files []netcfg.File) []string {
	var out []string
	for _, f := range files {
		out = append(out, f.Path)
	}
	return out
}

const (
	ndJSON = `{"links": [{"id": "l0", "type": "phy", "ethernet_mac_address": "52:54:00:00:00:02"}],
 "networks": [{"id": "n0", "link": "l0", "type": "ipv4_dhcp"}]}`
	v2Swap = "network:\n  version: 2\n  ethernets:\n" +
		"    a: {match: {macaddress: \"52:54:00:00:00:01\"}, set-name: eth1, dhcp4: true}\n" +
		"    b: {match: {macaddress: \"52:54:00:00:00:02\"}, set-name: eth0, dhcp4: true}\n"
	v1Static = "version: 1\nconfig:\n  - type: physical\n    name: lan0\n    mac_address: \"52:54:00:00:00:01\"\n" +
		"    subnets: [{type: static, address: 10.0.0.5/24}]\n"
	eniText  = "auto eth0\niface eth0 inet dhcp\n"
	ec2JSON  = `{"interfaces": {"macs": {"52:54:00:00:00:02": {"device-number": "0"}}}}`
	disabled = "network: {config: disabled}\n"
	badName  = "network:\n  version: 2\n  ethernets:\n    a: {match: {macaddress: \"52:54:00:00:00:01\"}, set-name: \"bad/name\"}\n"
)

// TestBuild runs the pipeline as the boot does (live NICs, fallback, the
// renderer from the root unless named) and as net-convert does (MACs from
// -m, no root, no fallback), for every format and every file Build adds.
func TestBuild(t *testing.T) {
	nics := LiveNICs(testLinks())
	boot := func(format, data string, root *rootfs.Root) Input {
		return Input{Format: format, Data: []byte(data), NICs: nics, Root: root, RendererSetting: "earlyinit.renderer", Fallback: true}
	}
	for _, tt := range []struct {
		name     string
		in       Input
		err      string // "" for none
		partial  bool   // with an error, a Result with the plan all the same
		disabled bool
		renderer string
		renames  map[string]string
		notes    []Note
		files    []string
	}{
		{
			name: "network_data.json, networkd with udevd: .link files", in: boot("network_data.json", ndJSON, newRoot(t, networkdBins, udevd)),
			renderer: "networkd", renames: map[string]string{mac2: "eth1"},
			notes: []Note{{Text: "network_data.json config with 1 interfaces"}},
			files: []string{"/etc/systemd/network/10-cloud-init-eth1.network", "/etc/systemd/network/10-earlyinit-eth1.link"},
		},
		{
			name: "yaml v2 swap, networkd without udevd: a udev rule", in: boot("yaml", v2Swap, newRoot(t, networkdBins)),
			renderer: "networkd", renames: map[string]string{mac1: "eth1", mac2: "eth0"},
			notes: []Note{{Text: "yaml config with 2 interfaces"}},
			files: []string{"/etc/systemd/network/10-cloud-init-eth0.network", "/etc/systemd/network/10-cloud-init-eth1.network", nic.UdevRules},
		},
		{
			name:     "yaml v1, netplan detected, cloud-init in /usr/local/bin: the drop-in",
			in:       boot("yaml", v1Static, newRoot(t, netplanBin, udevd, []string{"/usr/local/bin/cloud-init"})),
			renderer: "netplan", renames: map[string]string{mac1: "lan0"},
			notes: []Note{{Text: "yaml config with 1 interfaces"}},
			files: []string{"/etc/netplan/50-earlyinit.yaml", "/etc/systemd/network/10-earlyinit-lan0.link", render.CloudInitDropInPath},
		},
		{
			name:     "eni, interfaces not sourcing interfaces.d: the interfaces file",
			in:       boot("eni", eniText, newRoot(t, eniBins, []string{"/etc/network/interfaces=auto lo\niface lo inet loopback\n"})),
			renderer: "eni", renames: map[string]string{},
			notes: []Note{{Text: "eni config with 1 interfaces"}},
			files: []string{render.ENIPath, "/etc/network/interfaces"},
		},
		{
			name:     "eni, interfaces sources interfaces.d: left alone",
			in:       boot("eni", eniText, newRoot(t, eniBins, []string{"/etc/network/interfaces=source /etc/network/interfaces.d/*\n", "/usr/bin/cloud-init"})),
			renderer: "eni", renames: map[string]string{},
			notes: []Note{{Text: "eni config with 1 interfaces"}},
			files: []string{render.ENIPath, render.CloudInitDropInPath},
		},
		{
			name: "ec2, only the live NIC, under its name", in: boot("ec2", ec2JSON, newRoot(t, networkdBins, udevd)),
			renderer: "networkd", renames: map[string]string{mac2: "eth1"},
			notes: []Note{{Text: "ec2 config with 1 interfaces"}},
			files: []string{"/etc/systemd/network/10-cloud-init-eth1.network", "/etc/systemd/network/10-earlyinit-eth1.link"},
		},
		{
			name: "renderer named: detection not asked", in: func() Input {
				in := boot("yaml", v1Static, newRoot(t, networkdBins))
				in.Renderer = "sysconfig"
				return in
			}(),
			renderer: "sysconfig", renames: map[string]string{mac1: "lan0"},
			notes: []Note{{Text: "yaml config with 1 interfaces"}},
			files: []string{"/etc/sysconfig/network", "/etc/sysconfig/network-scripts/ifcfg-lan0", nic.UdevRules},
		},
		{
			name: "no config: the fallback", in: boot("", "", newRoot(t, networkdBins)),
			renderer: "networkd", renames: map[string]string{mac1: "eth0"},
			notes: []Note{{Text: "fallback config, DHCP on eth0"}},
			files: []string{"/etc/systemd/network/10-cloud-init-eth0.network", nic.UdevRules},
		},
		{
			name: "unparsable config: the fallback, saying why", in: boot("network_data.json", "{", newRoot(t, networkdBins)),
			renderer: "networkd", renames: map[string]string{mac1: "eth0"},
			notes: []Note{{Warning: true, Text: "network_data.json: unexpected EOF; using the fallback config instead"}, {Text: "fallback config, DHCP on eth0"}},
			files: []string{"/etc/systemd/network/10-cloud-init-eth0.network", nic.UdevRules},
		},
		{
			name: "invalid config: the fallback, saying why", in: boot("yaml", badName, newRoot(t, networkdBins)),
			renderer: "networkd", renames: map[string]string{mac1: "eth0"},
			notes: []Note{{Warning: true, Text: `yaml: interfaces[0] (physical "bad/name"): name: interface name "bad/name": character '/' is not allowed (letters, digits and "._-@+" only); using the fallback config instead`}, {Text: "fallback config, DHCP on eth0"}},
			files: []string{"/etc/systemd/network/10-cloud-init-eth0.network", nic.UdevRules},
		},
		{
			name: "no config and no NIC to fall back on",
			in:   Input{NICs: LiveNICs(testLinks()[:1]), Root: newRoot(t, networkdBins), Fallback: true},
			err:  "fallback network config: no candidate NIC",
		},
		{
			name: "disabled: nothing to do", in: boot("yaml", disabled, newRoot(t)),
			disabled: true, notes: []Note{{Text: "yaml config with 0 interfaces"}},
		},
		{
			name: "unknown renderer: the plan all the same", in: func() Input {
				in := boot("yaml", v2Swap, newRoot(t, networkdBins))
				in.Renderer = "systemd"
				return in
			}(),
			err: `earlyinit.renderer=systemd: unknown renderer "systemd" (want one of eni, sysconfig, netplan, network-manager, networkd)`, partial: true,
			renames: map[string]string{mac1: "eth1", mac2: "eth0"}, notes: []Note{{Text: "yaml config with 2 interfaces"}},
		},
		{
			name: "no renderer fits the root", in: boot("yaml", v2Swap, newRoot(t, udevd)),
			err:     "no network renderer fits the real root (no available network renderer found in the root; searched eni, sysconfig, netplan, network-manager, networkd); give earlyinit.renderer=",
			partial: true, renames: map[string]string{mac1: "eth1", mac2: "eth0"}, notes: []Note{{Text: "yaml config with 2 interfaces"}},
		},
		{
			name:     "net-convert: no root, renderer's files only",
			in:       Input{Format: "network_data.json", Data: []byte(ndJSON), MACs: map[string]string{mac2: "ens3"}, Renderer: "eni"},
			renderer: "eni", renames: map[string]string{mac2: "ens3"},
			notes: []Note{{Text: "network_data.json config with 1 interfaces"}},
			files: []string{render.ENIPath},
		},
		{
			name: "net-convert: an invalid config is the error",
			in:   Input{Format: "yaml", Data: []byte(badName), MACs: map[string]string{}, Renderer: "networkd"},
			err:  `yaml: interfaces[0] (physical "bad/name"): name: interface name "bad/name": character '/' is not allowed`,
		},
		{
			name: "net-convert: an unknown renderer, bare",
			in:   Input{Format: "yaml", Data: []byte(v2Swap), MACs: map[string]string{}, Renderer: "bogus"},
			err:  `unknown renderer "bogus" (want one of`, partial: true,
			renames: map[string]string{mac1: "eth1", mac2: "eth0"}, notes: []Note{{Text: "yaml config with 2 interfaces"}},
		},
		{
			name: "no root and no renderer", in: Input{Format: "eni", Data: []byte(eniText)},
			err: "no network renderer named and no root to detect one in", partial: true,
			renames: map[string]string{}, notes: []Note{{Text: "eni config with 1 interfaces"}},
		},
		{
			name: "no config without fallback", in: Input{Renderer: "eni"},
			err: "no network config",
		},
	} {
		t.Run(tt.name, func(t *testing.T) {
			res, err := Build(tt.in)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("Build: %v, want an error containing %q", err, tt.err)
				}
				if !tt.partial {
					if res != nil {
						t.Fatalf("Build = %+v with the error, want nil", res)
					}
					return
				}
				if res == nil {
					t.Fatal("Build = nil with a render error, want the plan")
				}
			} else if err != nil {
				t.Fatalf("Build: %v", err)
			}
			if res.Disabled != tt.disabled || res.Renderer != tt.renderer {
				t.Errorf("Disabled %v, Renderer %q; want %v, %q", res.Disabled, res.Renderer, tt.disabled, tt.renderer)
			}
			if !reflect.DeepEqual(res.Renames, tt.renames) {
				t.Errorf("Renames = %v, want %v", res.Renames, tt.renames)
			}
			if !reflect.DeepEqual(res.Notes, tt.notes) {
				t.Errorf("Notes = %q, want %q", res.Notes, tt.notes)
			}
			if got := filePaths(res.Files); !reflect.DeepEqual(got, tt.files) {
				t.Errorf("Files = %q, want %q", got, tt.files)
			}
			if err := res.Config.Validate(); err != nil {
				t.Errorf("Config does not validate: %v", err)
			}
		})
	}
}

// TestFilesFor: the persistent names follow the renames that took; the rest
// is the same.
func TestFilesFor(t *testing.T) {
	for _, systemd := range []bool{false, true} {
		root := newRoot(t, networkdBins, []string{"/usr/bin/cloud-init"})
		if systemd {
			root = newRoot(t, networkdBins, udevd, []string{"/usr/bin/cloud-init"})
		}
		res, err := Build(Input{Format: "yaml", Data: []byte(v2Swap), NICs: LiveNICs(testLinks()), Root: root, Fallback: true})
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(res.Files, res.FilesFor(res.Renames)) {
			t.Errorf("Files differ from FilesFor(Renames)")
		}
		want := []string{"/etc/systemd/network/10-cloud-init-eth0.network", "/etc/systemd/network/10-cloud-init-eth1.network", nic.UdevRules, render.CloudInitDropInPath}
		if systemd {
			want = []string{"/etc/systemd/network/10-cloud-init-eth0.network", "/etc/systemd/network/10-cloud-init-eth1.network",
				"/etc/systemd/network/10-earlyinit-eth0.link", "/etc/systemd/network/10-earlyinit-eth1.link", render.CloudInitDropInPath}
		}
		if got := filePaths(res.Files); !reflect.DeepEqual(got, want) {
			t.Errorf("systemd %v: Files = %q, want %q", systemd, got, want)
		}
		// Only eth0's rename took.
		only := map[string]string{mac2: "eth0"}
		want = []string{"/etc/systemd/network/10-cloud-init-eth0.network", "/etc/systemd/network/10-cloud-init-eth1.network", nic.UdevRules, render.CloudInitDropInPath}
		if systemd {
			want = []string{"/etc/systemd/network/10-cloud-init-eth0.network", "/etc/systemd/network/10-cloud-init-eth1.network",
				"/etc/systemd/network/10-earlyinit-eth0.link", render.CloudInitDropInPath}
		}
		files := res.FilesFor(only)
		if got := filePaths(files); !reflect.DeepEqual(got, want) {
			t.Errorf("systemd %v: FilesFor(eth0) = %q, want %q", systemd, got, want)
		}
		persist := nic.PersistLinks(only, nil, systemd)
		if !reflect.DeepEqual(files[2:2+len(persist)], persist) {
			t.Errorf("systemd %v: persistent names %+v, want %+v", systemd, files[2:2+len(persist)], persist)
		}
		if len(res.FilesFor(nil)) != len(want)-len(persist) {
			t.Errorf("systemd %v: FilesFor(nil) = %q", systemd, filePaths(res.FilesFor(nil)))
		}
	}
	// A Result without a renderer has no files.
	res, err := Build(Input{Format: "yaml", Data: []byte(v2Swap), NICs: LiveNICs(testLinks()), Root: newRoot(t), Fallback: true})
	if err == nil || res.FilesFor(res.Renames) != nil {
		t.Errorf("Build without a renderer: %v, files %q", err, filePaths(res.FilesFor(res.Renames)))
	}
}

// TestBuildFilesAreTheRenderers: Build's files start with exactly the
// renderer's output for the model (the ENI interfaces file, persistent
// names and drop-in come after).
func TestBuildFilesAreTheRenderers(t *testing.T) {
	root := newRoot(t, udevd, []string{"/usr/bin/cloud-init"})
	for _, r := range render.Names() {
		res, err := Build(Input{Format: "yaml", Data: []byte(v2Swap), NICs: LiveNICs(testLinks()), Renderer: r, Root: root})
		if err != nil {
			t.Fatalf("%s: %v", r, err)
		}
		rr, _ := render.ByName(r)
		want, err := rr.Render(res.Config)
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Files) < len(want) || !reflect.DeepEqual(res.Files[:len(want)], want) {
			t.Errorf("%s: Files %q do not start with the renderer's %q", r, filePaths(res.Files), filePaths(want))
		}
	}
}

func TestLiveNICs(t *testing.T) {
	got := LiveNICs(append(testLinks(), nic.Link{Index: 5, Name: "veth1", MAC: "52:54:00:00:00:98", Kind: "veth", Carrier: true},
		nic.Link{Index: 6, Name: "bond0", MAC: "52:54:00:00:00:97", Kind: "bond"}))
	want := []netcfg.NIC{
		{Name: "lo", Loopback: true},
		{Name: "eth0", MAC: mac1, Driver: "virtio_net"},
		{Name: "eth1", MAC: mac2, Driver: "virtio_net"},
		{Name: "br0", MAC: "52:54:00:00:00:99", Virtual: true, Bridge: true},
		{Name: "veth1", MAC: "52:54:00:00:00:98", Carrier: true, Virtual: true},
		{Name: "bond0", MAC: "52:54:00:00:00:97", Virtual: true, Bond: true},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("LiveNICs:\n got %+v\nwant %+v", got, want)
	}
	if LiveNICs(nil) != nil {
		t.Error("LiveNICs(nil) is not nil")
	}
	// Only the physical NICs name what a config matches by MAC.
	if m := macToName(Input{NICs: got}); !reflect.DeepEqual(m, map[string]string{mac1: "eth0", mac2: "eth1"}) {
		t.Errorf("macToName = %v", m)
	}
}
