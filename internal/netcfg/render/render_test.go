package render

import (
	"flag"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/earlyinit/earlyinit/internal/netcfg"
)

var update = flag.Bool("update", false, "rewrite testdata/golden from the renderers' output")

func pfx(s string) netip.Prefix { return netip.MustParsePrefix(s) }
func ip(s string) netip.Addr    { return netip.MustParseAddr(s) }

// models are hand-built configurations for the golden files: together they
// use every field the renderers read.
func models() map[string]*netcfg.Config {
	no := false
	yes := true
	return map[string]*netcfg.Config{
		"full": {
			Interfaces: []netcfg.Interface{
				{Name: "eth0", Kind: netcfg.Physical, MAC: "52:54:00:00:00:01", MTU: 9000, AcceptRA: &no, Subnets: []netcfg.Subnet{
					{Type: netcfg.Static, Address: pfx("192.0.2.10/24"), Gateway: ip("192.0.2.1"),
						Routes: []netcfg.Route{{To: pfx("198.51.100.0/24"), Via: ip("192.0.2.254"), Metric: 100}},
						DNS:    netcfg.DNS{Nameservers: []netip.Addr{ip("192.0.2.53")}, Search: []string{"eth0.example"}}},
					{Type: netcfg.Static, Address: pfx("192.0.2.11/24")},
					{Type: netcfg.Static, Address: pfx("2001:db8::10/64"), Gateway: ip("2001:db8::1"), MTU: 1480,
						Routes: []netcfg.Route{{To: pfx("2001:db8:ffff::/48"), Via: ip("2001:db8::fe")}}},
				}},
				{Name: "eth1", Kind: netcfg.Physical, MAC: "52:54:00:00:00:02", Subnets: []netcfg.Subnet{
					{Type: netcfg.DHCP4}, {Type: netcfg.DHCPv6Stateless},
				}},
				{Name: "eth2", Kind: netcfg.Physical, MAC: "52:54:00:00:00:03", AcceptRA: &yes, Subnets: []netcfg.Subnet{
					{Type: netcfg.DHCPv6Stateful},
				}},
				{Name: "lan", Kind: netcfg.Physical, Driver: "virtio_net", NoRename: true, Optional: true, Subnets: []netcfg.Subnet{
					{Type: netcfg.SLAAC},
				}},
				{Name: "ens3", Kind: netcfg.Physical, MAC: "52:54:00:00:00:04"},
				{Name: "ens4", Kind: netcfg.Physical, MAC: "52:54:00:00:00:05"},
				{Name: "bond0", Kind: netcfg.Bond, MAC: "52:54:00:00:00:04", MTU: 1500,
					Bond: &netcfg.BondConfig{Members: []string{"ens4", "ens3"}, Params: map[string]string{
						"mode": "802.3ad", "miimon": "100", "xmit-hash-policy": "layer3+4", "lacp-rate": "fast", "primary": "ens3",
					}},
					Subnets: []netcfg.Subnet{{Type: netcfg.Static, Address: pfx("10.1.0.2/24")}}},
				{Name: "bond0.7", Kind: netcfg.VLAN, VLAN: &netcfg.VLANConfig{ID: 7, Link: "bond0"},
					Subnets: []netcfg.Subnet{{Type: netcfg.DHCP4}}},
				{Name: "eth5", Kind: netcfg.Physical, MAC: "52:54:00:00:00:06"},
				{Name: "br0", Kind: netcfg.Bridge, Bridge: &netcfg.BridgeConfig{Members: []string{"eth5"}, Params: map[string]string{
					"stp": "off", "fd": "0", "priority": "22", "pathcost": "eth5 50",
				}}, DNS: netcfg.DNS{Nameservers: []netip.Addr{ip("10.2.0.53")}},
					Subnets: []netcfg.Subnet{{Type: netcfg.Static, Address: pfx("10.2.0.2/24")}}},
			},
			Routes: []netcfg.Route{{To: pfx("10.99.0.0/16"), Via: ip("10.1.0.1"), Metric: 5}},
			DNS:    netcfg.DNS{Nameservers: []netip.Addr{ip("1.1.1.1"), ip("2606:4700:4700::1111")}, Search: []string{"example.com"}},
		},
		"dhcp": {
			Interfaces: []netcfg.Interface{{Name: "eth0", Kind: netcfg.Physical, MAC: "52:54:00:00:00:01", Subnets: []netcfg.Subnet{{Type: netcfg.DHCP4}}}},
		},
		// Metrics on DHCP and static subnets, and DHCP overrides.
		"metrics": {
			Version: 2,
			Interfaces: []netcfg.Interface{
				{Name: "eth0", Kind: netcfg.Physical, MAC: "52:54:00:00:00:01",
					DHCP4Overrides: &netcfg.DHCPOverrides{UseDNS: &no, UseNTP: &no, UseHostname: &yes, UseMTU: &yes, UseRoutes: &no,
						SendHostname: &yes, UseDomains: "route", Hostname: "web1"},
					DHCP6Overrides: &netcfg.DHCPOverrides{UseDNS: &no, UseDomains: "false"},
					Subnets:        []netcfg.Subnet{{Type: netcfg.DHCP4, Metric: 200}, {Type: netcfg.DHCP6, Metric: 300}}},
				{Name: "eth1", Kind: netcfg.Physical, MAC: "52:54:00:00:00:02", Subnets: []netcfg.Subnet{
					{Type: netcfg.Static, Address: pfx("192.0.2.10/24"), Gateway: ip("192.0.2.1"), Metric: 50},
				}},
			},
		},
	}
}

func dump(files []File) string {
	var b strings.Builder
	for _, f := range files {
		fmt.Fprintf(&b, "=== %s %04o\n%s", f.Path, f.Mode.Perm(), f.Data)
	}
	return b.String()
}

// TestGolden compares every renderer's output for models() with
// testdata/golden/<model>/<renderer>; -update rewrites them.
func TestGolden(t *testing.T) {
	for name, c := range models() {
		for _, rn := range Names() {
			t.Run(name+"/"+rn, func(t *testing.T) {
				r, err := ByName(rn)
				if err != nil {
					t.Fatal(err)
				}
				files, err := r.Render(c)
				if err != nil {
					t.Fatal(err)
				}
				again, err := r.Render(c)
				if err != nil || dump(again) != dump(files) {
					t.Fatalf("second render differs: %v", err)
				}
				for i := 1; i < len(files); i++ {
					if files[i-1].Path >= files[i].Path {
						t.Errorf("files not sorted by path: %s before %s", files[i-1].Path, files[i].Path)
					}
				}
				got := dump(files)
				path := filepath.Join("testdata", "golden", name, rn)
				if *update {
					if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
						t.Fatal(err)
					}
					if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
						t.Fatal(err)
					}
				}
				want, err := os.ReadFile(path)
				if err != nil {
					t.Fatalf("%v (run go test -update to create it)", err)
				}
				if got != string(want) {
					t.Errorf("%s differs (go test -update rewrites it):\n--- got\n%s\n--- want\n%s", path, got, want)
				}
			})
		}
	}
}

// TestFactsOfGolden checks the golden outputs state what the model says,
// through the same fact parsers the differential test uses.
func TestFactsOfGolden(t *testing.T) {
	c := models()["full"]
	for _, rn := range Names() {
		r, _ := ByName(rn)
		files, err := r.Render(c)
		if err != nil {
			t.Fatal(err)
		}
		m := map[string]string{}
		for _, f := range files {
			m[f.Path] = string(f.Data)
		}
		fs, err := factsOf(rn, m)
		if err != nil {
			t.Fatalf("%s: %v", rn, err)
		}
		for _, want := range []fact{
			{"eth0", fAddr, "192.0.2.10/24"},
			{"eth0", fAddr, "192.0.2.11/24"},
			{"eth0", fAddr, "2001:db8::10/64"},
			{"eth0", fRoute, "0.0.0.0/0 via 192.0.2.1"},
			{"eth0", fRoute, "::/0 via 2001:db8::1"},
			{"eth0", fRoute, "198.51.100.0/24 via 192.0.2.254"},
			{"eth0", fRoute, "2001:db8:ffff::/48 via 2001:db8::fe"},
			{"eth0", fMTU, "9000"},
			{"eth0", fMAC, "52:54:00:00:00:01"},
			{"eth1", fDHCP4, "on"},
			{"*", fDNS, "192.0.2.53"},
			{"*", fDNS, "10.2.0.53"},
			{"bond0", fAddr, "10.1.0.2/24"},
			{"bond0", fRoute, "10.99.0.0/16 via 10.1.0.1"},
			{"bond0", fKind, "bond"},
			{"ens3", fMaster, "bond0"},
			{"ens4", fMaster, "bond0"},
			{"bond0", fBondMode, "802.3ad"},
			{"bond0.7", fKind, "vlan"},
			{"bond0.7", fVLANLink, "bond0"},
			{"eth5", fBridgePort, "br0"},
			{"br0", fKind, "bridge"},
		} {
			if want.Key == fMAC && rn == "eni" {
				continue // ifupdown has no notion of a physical NIC's MAC
			}
			if !fs[want] {
				t.Errorf("%s: missing fact %s", rn, want)
			}
		}
		if !fs[fact{"*", fDNS, "1.1.1.1"}] {
			t.Errorf("%s: host-wide nameserver 1.1.1.1 lost", rn)
		}
	}
}

func TestDisabledRendersNothing(t *testing.T) {
	for _, rn := range Names() {
		r, _ := ByName(rn)
		files, err := r.Render(&netcfg.Config{Disabled: true, Interfaces: models()["dhcp"].Interfaces})
		if err != nil || len(files) != 0 {
			t.Errorf("%s: disabled config rendered %d files, err %v", rn, len(files), err)
		}
	}
}

func TestRenderErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		c    netcfg.Config
		want string
	}{
		{"no name", netcfg.Config{Interfaces: []netcfg.Interface{{Kind: netcfg.Physical, MAC: "52:54:00:00:00:01"}}}, "no name"},
		{"slash", netcfg.Config{Interfaces: []netcfg.Interface{{Name: "../x", Kind: netcfg.Physical}}}, `interface name "../x": character '/' is not allowed`},
		{"twice", netcfg.Config{Interfaces: []netcfg.Interface{{Name: "a", Kind: netcfg.Physical}, {Name: "a", Kind: netcfg.Physical}}}, "declared twice"},
		{"member", netcfg.Config{Interfaces: []netcfg.Interface{{Name: "bond0", Kind: netcfg.Bond, Bond: &netcfg.BondConfig{Members: []string{"eth9"}}}}}, `member "eth9"`},
		{"vlan link", netcfg.Config{Interfaces: []netcfg.Interface{{Name: "v", Kind: netcfg.VLAN, VLAN: &netcfg.VLANConfig{ID: 2, Link: "eth9"}}}}, `link "eth9"`},
		{"static", netcfg.Config{Interfaces: []netcfg.Interface{{Name: "a", Kind: netcfg.Physical, Subnets: []netcfg.Subnet{{Type: netcfg.Static}}}}}, "static without an address"},
		{"type", netcfg.Config{Interfaces: []netcfg.Interface{{Name: "a", Kind: netcfg.Physical, Subnets: []netcfg.Subnet{{Type: "bogus"}}}}}, `unknown type "bogus"`},
	} {
		for _, rn := range Names() {
			r, _ := ByName(rn)
			_, err := r.Render(&tc.c)
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.HasPrefix(err.Error(), rn+": ") {
				t.Errorf("%s/%s: err %v, want %q prefixed by the renderer", tc.name, rn, err, tc.want)
			}
		}
	}
	// sysconfig can hold one default route per family.
	c := netcfg.Config{Interfaces: []netcfg.Interface{{Name: "a", Kind: netcfg.Physical, Subnets: []netcfg.Subnet{{
		Type: netcfg.Static, Address: pfx("10.0.0.2/24"),
		Routes: []netcfg.Route{{To: pfx("0.0.0.0/0"), Via: ip("10.0.0.1")}, {To: pfx("0.0.0.0/0"), Via: ip("10.0.0.3")}},
	}}}}}
	if _, err := Sysconfig().Render(&c); err == nil || !strings.Contains(err.Error(), "duplicate default route") {
		t.Errorf("sysconfig duplicate default: %v", err)
	}
}

func TestByName(t *testing.T) {
	for _, n := range Names() {
		r, err := ByName(n)
		if err != nil || r.Name() != n {
			t.Errorf("ByName(%q) = %v, %v", n, r, err)
		}
	}
	if _, err := ByName("wicked"); err == nil || !strings.Contains(err.Error(), "networkd") {
		t.Errorf("ByName(wicked): %v, want an error listing the names", err)
	}
}

// TestNMUUID checks uuid5 against values computed by Python's
// uuid.uuid5(UUID("a3924cb8-09e0-43e9-890b-77972a800108"), name), which
// cloud-init's keyfiles carry.
func TestNMUUID(t *testing.T) {
	for name, want := range map[string]string{
		"eth0":  "1dd9a779-d327-56e1-8454-c65e2556c12c",
		"eth1":  "3c50eb47-7260-5a6d-801d-bd4f587d6b58",
		"bond0": "54317911-f840-516b-a10d-82cb4c1f075c",
	} {
		if got := NMUUID(name); got != want {
			t.Errorf("NMUUID(%q) = %s, want %s", name, got, want)
		}
	}
}

func TestDetect(t *testing.T) {
	for _, tc := range []struct {
		name  string
		paths []string
		want  string
	}{
		{"debian ifupdown", []string{"/sbin/ifquery", "/sbin/ifup", "/sbin/ifdown", "/etc/network/interfaces", "/usr/sbin/ip", "/bin/systemctl"}, "eni"},
		{"ifupdown without interfaces", []string{"/sbin/ifquery", "/sbin/ifup", "/sbin/ifdown", "/usr/sbin/ip", "/bin/systemctl"}, "networkd"},
		{"rhel initscripts", []string{"/usr/sbin/ifup", "/usr/sbin/ifdown", "/etc/sysconfig/network-scripts/network-functions", "/usr/sbin/netplan"}, "sysconfig"},
		{"ubuntu", []string{"/usr/sbin/netplan", "/usr/sbin/ip", "/bin/systemctl"}, "netplan"},
		{"fedora nm", []string{"/etc/NetworkManager/NetworkManager.conf", "/usr/bin/nmcli", "/etc/systemd/system/multi-user.target.wants/NetworkManager.service", "/usr/sbin/ip", "/usr/sbin/systemctl"}, "network-manager"},
		{"nm disabled", []string{"/etc/NetworkManager/NetworkManager.conf", "/usr/bin/nmcli", "/usr/sbin/ip", "/usr/sbin/systemctl"}, "networkd"},
		{"nothing", []string{"/usr/bin/true"}, ""},
	} {
		set := map[string]bool{}
		for _, p := range tc.paths {
			set[p] = true
		}
		r, err := Detect(func(p string) bool { return set[p] })
		switch {
		case tc.want == "" && err == nil:
			t.Errorf("%s: Detect = %s, want an error", tc.name, r.Name())
		case tc.want != "" && (err != nil || r.Name() != tc.want):
			t.Errorf("%s: Detect = %v, %v; want %s", tc.name, r, err, tc.want)
		}
	}
}

func TestCloudInitDropIn(t *testing.T) {
	f := CloudInitDropIn()
	if f.Path != "/etc/cloud/cloud.cfg.d/99-earlyinit-disable-network-config.cfg" || f.Mode != 0o644 ||
		!strings.Contains(string(f.Data), "network: {config: disabled}") {
		t.Errorf("CloudInitDropIn() = %+v", f)
	}
}

func TestWriteDir(t *testing.T) {
	dir := t.TempDir()
	files, err := Netplan().Render(models()["dhcp"])
	if err != nil {
		t.Fatal(err)
	}
	files = append(files, CloudInitDropIn())
	if err := WriteDir(dir, files); err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		p := filepath.Join(dir, f.Path)
		st, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if st.Mode().Perm() != f.Mode.Perm() {
			t.Errorf("%s: mode %v, want %v", p, st.Mode().Perm(), f.Mode.Perm())
		}
		b, _ := os.ReadFile(p)
		if string(b) != string(f.Data) {
			t.Errorf("%s: content differs", p)
		}
	}
	for _, bad := range []string{"etc/x", "/etc/../../x"} {
		if err := WriteDir(dir, []File{{Path: bad, Data: []byte("x"), Mode: 0o644}}); err == nil {
			t.Errorf("WriteDir(%q): no error", bad)
		}
	}
}
