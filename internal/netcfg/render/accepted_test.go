package render

import (
	"net/netip"
	"strings"
	"testing"

	"github.com/earlyinit/earlyinit/internal/netcfg"
)

// The tests of this file pin what issue 27 found by running each renderer's
// consumer on its output (consumer_test.go runs them on every output).

// renderAll renders c with renderer rn and returns its files' text, joined.
func renderText(t *testing.T, rn string, c *netcfg.Config) string {
	t.Helper()
	r, err := ByName(rn)
	if err != nil {
		t.Fatal(err)
	}
	files, err := r.Render(c)
	if err != nil {
		t.Fatalf("%s: %v", rn, err)
	}
	var b strings.Builder
	for _, f := range files {
		b.WriteString("--- " + f.Path + "\n" + string(f.Data))
	}
	return b.String()
}

// TestRouteScopeWithGateway: a route via a gateway is of global scope (the
// kernel refuses its next hop with link or host scope, and networkd then
// fails the link); an IPv6 route has no scope (networkd warns and ignores
// Scope=). Such scopes are left out and named in the warning; a link-scope
// route without a gateway keeps its scope.
func TestRouteScopeWithGateway(t *testing.T) {
	c := &netcfg.Config{Interfaces: []netcfg.Interface{{Name: "eth0", Kind: netcfg.Physical, MAC: "52:54:00:00:00:01",
		Subnets: []netcfg.Subnet{
			{Type: netcfg.Static, Address: pfx("10.0.0.2/24"), Routes: []netcfg.Route{
				{To: pfx("10.8.0.0/16"), Via: ip("10.0.0.1"), Scope: "link"},
				{To: pfx("10.7.0.0/16"), Scope: "host"},
				{To: pfx("10.6.0.0/16"), Via: ip("10.0.0.1"), Scope: "global"},
			}},
			{Type: netcfg.Static, Address: pfx("2001:db8::2/64"), Routes: []netcfg.Route{
				{To: pfx("2001:db8:1::/64"), Via: ip("2001:db8::1"), Scope: "link"},
			}},
		}}}}
	for rn, want := range map[string][]string{
		"networkd":  {"Destination=10.8.0.0/16\nGateway=10.0.0.1\n\n", "Destination=10.7.0.0/16\nScope=host\n", "Destination=10.6.0.0/16\nGateway=10.0.0.1\nScope=global\n", "Destination=2001:db8:1::/64\nGateway=2001:db8::1\n"},
		"netplan":   {"                - to: 10.8.0.0/16\n                  via: 10.0.0.1\n", "                - scope: host\n                  to: 10.7.0.0/16\n", "                - to: 2001:db8:1::/64\n                  via: 2001:db8::1\n"},
		"eni":       {"ip route add 10.8.0.0/16 via 10.0.0.1 dev eth0 || true", "ip route add 10.7.0.0/16 dev eth0 scope host || true", "ip -6 route add 2001:db8:1::/64 via 2001:db8::1 dev eth0 || true"},
		"sysconfig": {"10.8.0.0/16 via 10.0.0.1 dev eth0\n", "10.7.0.0/16 dev eth0 scope host\n", "2001:db8:1::/64 via 2001:db8::1 dev eth0\n"},
	} {
		out := renderText(t, rn, c)
		for _, w := range want {
			if !strings.Contains(out, w) {
				t.Errorf("%s: missing %q in\n%s", rn, w, out)
			}
		}
		if strings.Contains(out, "link") && rn != "netplan" {
			t.Errorf("%s: a link scope is written:\n%s", rn, out)
		}
		if strings.Contains(out, "scope: link") {
			t.Errorf("%s: a link scope is written:\n%s", rn, out)
		}
		w := Warning(rn, c)
		for _, lost := range []string{"routes.scope (eth0: a route via a gateway cannot be of link scope)", "routes.scope (eth0: an IPv6 route has no scope)"} {
			if !strings.Contains(w, lost) {
				t.Errorf("%s: warning %q does not name %q", rn, w, lost)
			}
		}
		if strings.Contains(w, "host scope") || strings.Contains(w, "global") {
			t.Errorf("%s: warning %q names a scope that is written", rn, w)
		}
	}
}

// TestHostDNSWithoutConfig: v1's host-wide nameservers and search domains
// reach networkd's and netplan's files when no interface has a subnet:
// cloud-init's networkd writes them as DNS=/Domains= on every link.
func TestHostDNSWithoutConfig(t *testing.T) {
	c := &netcfg.Config{Version: 1, Interfaces: []netcfg.Interface{
		{Name: "eth0", Kind: netcfg.Physical, MAC: "52:54:00:00:00:01"},
		{Name: "eth1", Kind: netcfg.Physical, MAC: "52:54:00:00:00:02", Subnets: []netcfg.Subnet{{Type: netcfg.Manual}}},
	}, DNS: netcfg.DNS{Nameservers: []netip.Addr{ip("1.1.1.1")}, Search: []string{"example.com"}}}
	out := renderText(t, "networkd", c)
	if strings.Count(out, "[Network]\nDHCP=no\nDNS=1.1.1.1\nDomains=example.com\n") != 2 {
		t.Errorf("networkd: want DNS=1.1.1.1, Domains=example.com on both links:\n%s", out)
	}
	out = renderText(t, "netplan", c)
	if strings.Count(out, "                - 1.1.1.1\n") != 2 || strings.Count(out, "                - example.com\n") != 2 {
		t.Errorf("netplan: the host-wide DNS is not on both interfaces:\n%s", out)
	}
	// With a configured link, that link carries it (and a link without
	// config does not).
	c.Interfaces[1].Subnets = []netcfg.Subnet{{Type: netcfg.DHCP4}}
	out = renderText(t, "networkd", c)
	if strings.Count(out, "DNS=1.1.1.1\n") != 1 || !strings.Contains(out, "DHCP=ipv4\nDNS=1.1.1.1\nDomains=example.com\n") {
		t.Errorf("networkd: want the DNS on eth1 only:\n%s", out)
	}
}

// TestNetplanOnePass: netplan's sections come in an order in which every
// interface is defined before an entry names it, so that netplan parses
// the file in one pass: a second pass applies a bridge's path-cost again
// and refuses the file ("interface 'eth1' already has a path cost of 50").
func TestNetplanOnePass(t *testing.T) {
	eth := func(n, mac string) netcfg.Interface {
		return netcfg.Interface{Name: n, Kind: netcfg.Physical, MAC: mac}
	}
	c := &netcfg.Config{Interfaces: []netcfg.Interface{
		eth("eth0", "52:54:00:00:00:01"), eth("eth1", "52:54:00:00:00:02"),
		{Name: "vlan10", Kind: netcfg.VLAN, VLAN: &netcfg.VLANConfig{ID: 10, Link: "eth0"}},
		{Name: "br0", Kind: netcfg.Bridge, Bridge: &netcfg.BridgeConfig{Members: []string{"vlan10", "eth1"},
			Params: map[string]string{"pathcost": "eth1 50"}},
			Subnets: []netcfg.Subnet{{Type: netcfg.Static, Address: pfx("10.0.0.2/24")}}},
		// A bridge in a bridge whose name sorts first.
		{Name: "abr", Kind: netcfg.Bridge, Bridge: &netcfg.BridgeConfig{Members: []string{"br0"}}},
	}}
	out := renderText(t, "netplan", c)
	var order []string
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, "    ") && !strings.HasPrefix(l, "     ") || strings.HasPrefix(l, "        ") && !strings.HasPrefix(l, "         ") {
			order = append(order, strings.TrimSpace(l))
		}
	}
	if got, want := strings.Join(order, " "), "version: 2 ethernets: eth0: eth1: vlans: vlan10: bridges: br0: abr:"; got != want {
		t.Errorf("netplan order %q, want %q:\n%s", got, want, out)
	}
	if !strings.Contains(out, "path-cost:\n                    eth1: 50\n") {
		t.Errorf("netplan: path-cost lost:\n%s", out)
	}
	if w := Warning("netplan", c); w != "" {
		t.Errorf("netplan: warning %q", w)
	}
	// A VLAN on a bridge that has another VLAN as a port: no order of the
	// sections works, so the per-port values are left out, and named.
	c.Interfaces = append(c.Interfaces, netcfg.Interface{Name: "vlan20", Kind: netcfg.VLAN, VLAN: &netcfg.VLANConfig{ID: 20, Link: "br0"}})
	out = renderText(t, "netplan", c)
	if strings.Contains(out, "path-cost") {
		t.Errorf("netplan: path-cost written in a file netplan parses twice:\n%s", out)
	}
	if w := Warning("netplan", c); !strings.Contains(w, "bridge parameter pathcost (br0: no order of netplan's sections") {
		t.Errorf("netplan: warning %q does not name the path-cost", w)
	}
}

// TestNetplanDHCPOverridesPair: with DHCP of both families on, netplan's
// networkd backend takes only equal dhcp4-overrides and dhcp6-overrides
// (route-metric included): dhcp4's are written for both, as netplan then
// uses them, and the dhcp6 values that changes are named.
func TestNetplanDHCPOverridesPair(t *testing.T) {
	no := false
	c := &netcfg.Config{Version: 2, Interfaces: []netcfg.Interface{{Name: "eth0", Kind: netcfg.Physical, MAC: "52:54:00:00:00:01",
		DHCP6Overrides: &netcfg.DHCPOverrides{UseDNS: &no},
		Subnets:        []netcfg.Subnet{{Type: netcfg.DHCP4, Metric: 100}, {Type: netcfg.DHCP6, Metric: 200}}}}}
	out := renderText(t, "netplan", c)
	if !strings.Contains(out, "dhcp4-overrides:\n                route-metric: 100\n") || !strings.Contains(out, "dhcp6-overrides:\n                route-metric: 100\n") {
		t.Errorf("netplan: want route-metric 100 in both overrides:\n%s", out)
	}
	if strings.Contains(out, "use-dns") || strings.Contains(out, "200") {
		t.Errorf("netplan: dhcp6's own overrides written:\n%s", out)
	}
	w := Warning("netplan", c)
	for _, k := range []string{"dhcp6-overrides.route-metric (eth0: netplan's networkd backend", "dhcp6-overrides.use-dns (eth0:"} {
		if !strings.Contains(w, k) {
			t.Errorf("netplan: warning %q does not name %q", w, k)
		}
	}
	// One family alone keeps its own.
	c.Interfaces[0].Subnets = c.Interfaces[0].Subnets[1:]
	out = renderText(t, "netplan", c)
	if !strings.Contains(out, "dhcp6-overrides:\n                route-metric: 200\n                use-dns: false\n") {
		t.Errorf("netplan: dhcp6 alone loses its overrides:\n%s", out)
	}
	if w := Warning("netplan", c); w != "" {
		t.Errorf("netplan: warning %q", w)
	}
}

// TestENIManualStanzaDNS: the DNS of an interface without subnets goes on
// its inet manual stanza; when ifupdown never brings that interface up,
// the warning says its DNS is not applied.
func TestENIManualStanzaDNS(t *testing.T) {
	dns := netcfg.DNS{Nameservers: []netip.Addr{ip("10.0.0.53")}, Search: []string{"corp.example"}}
	c := &netcfg.Config{Version: 2, Interfaces: []netcfg.Interface{
		{Name: "eth0", Kind: netcfg.Physical, MAC: "52:54:00:00:00:01", DNS: dns},
		{Name: "eth1", Kind: netcfg.Physical, MAC: "52:54:00:00:00:02", DNS: dns, Control: "hotplug"},
	}}
	out := renderText(t, "eni", c)
	for _, want := range []string{
		"\niface eth0 inet manual\n    dns-nameservers 10.0.0.53\n    dns-search corp.example\n",
		"\nallow-hotplug eth1\niface eth1 inet manual\n    dns-nameservers 10.0.0.53\n    dns-search corp.example\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("eni: missing %q in\n%s", want, out)
		}
	}
	w := Warning("eni", c)
	if !strings.Contains(w, "nameservers (eth0: ifupdown never brings the interface up") || strings.Contains(w, "eth1") {
		t.Errorf("eni: warning %q, want eth0's DNS named and eth1's not", w)
	}
}

// TestBondPrimaryMode: a bond's primary is written only in the modes that
// take one (active-backup, balance-tlb, balance-alb): the kernel refuses
// it in the others, and NetworkManager refuses the connection ("'primary'
// option is only valid for 'mode=active-backup'"). It is named instead.
func TestBondPrimaryMode(t *testing.T) {
	bond := func(mode string) *netcfg.Config {
		return &netcfg.Config{Interfaces: []netcfg.Interface{
			{Name: "ens3", Kind: netcfg.Physical, MAC: "52:54:00:00:00:03"},
			{Name: "bond0", Kind: netcfg.Bond, Bond: &netcfg.BondConfig{Members: []string{"ens3"},
				Params: map[string]string{"bond-mode": mode, "bond-primary": "ens3"}},
				Subnets: []netcfg.Subnet{{Type: netcfg.DHCP4}}},
		}}
	}
	for _, rn := range Names() {
		out := renderText(t, rn, bond("802.3ad"))
		if strings.Contains(out, "rimary") {
			t.Errorf("%s: primary written for 802.3ad:\n%s", rn, out)
		}
		if w := Warning(rn, bond("802.3ad")); !strings.Contains(w, "bond parameter primary (bond0: the kernel takes a primary in active-backup") {
			t.Errorf("%s: warning %q does not name the primary", rn, w)
		}
		for _, m := range []string{"active-backup", "1", "balance-alb"} {
			if out := renderText(t, rn, bond(m)); !strings.Contains(out, "rimary") {
				t.Errorf("%s: primary lost for mode %s:\n%s", rn, m, out)
			}
			if w := Warning(rn, bond(m)); w != "" {
				t.Errorf("%s: mode %s: warning %q", rn, m, w)
			}
		}
	}
}

// TestNMBridgeRanges: NetworkManager verifies a bridge's timers and
// priority against ranges of its own (forward-delay 0 or 2-30) and refuses
// the connection outside them; such values are left out and named. Its
// bond arp_ip_target is a comma-separated list.
func TestNMBridgeRanges(t *testing.T) {
	c := &netcfg.Config{Interfaces: []netcfg.Interface{
		{Name: "eth0", Kind: netcfg.Physical, MAC: "52:54:00:00:00:01"},
		{Name: "br0", Kind: netcfg.Bridge, Bridge: &netcfg.BridgeConfig{Members: []string{"eth0"},
			Params: map[string]string{"bridge_fd": "1", "bridge_hello": "2", "bridge_maxage": "41", "bridge_stp": "on"}},
			Subnets: []netcfg.Subnet{{Type: netcfg.DHCP4}}},
		{Name: "eth1", Kind: netcfg.Physical, MAC: "52:54:00:00:00:02"},
		{Name: "bond0", Kind: netcfg.Bond, Bond: &netcfg.BondConfig{Members: []string{"eth1"},
			Params: map[string]string{"bond-mode": "active-backup", "bond-arp-ip-target": "10.0.0.1 10.0.0.2", "bond-arp-interval": "100"}},
			Subnets: []netcfg.Subnet{{Type: netcfg.DHCP4}}},
	}}
	out := renderText(t, "network-manager", c)
	if !strings.Contains(out, "[bridge]\nstp=true\nhello-time=2\n\n") {
		t.Errorf("network-manager: want stp and hello-time alone in [bridge]:\n%s", out)
	}
	if !strings.Contains(out, "arp_ip_target=10.0.0.1,10.0.0.2\n") {
		t.Errorf("network-manager: arp_ip_target not comma-separated:\n%s", out)
	}
	w := Warning("network-manager", c)
	for _, k := range []string{"bridge parameter fd (br0: out of NetworkManager's range)", "bridge parameter maxage (br0: out of NetworkManager's range)"} {
		if !strings.Contains(w, k) {
			t.Errorf("network-manager: warning %q does not name %q", w, k)
		}
	}
	if strings.Contains(w, "hello") || strings.Contains(w, "stp") {
		t.Errorf("network-manager: warning %q names a value that is written", w)
	}
}

// TestENIBridgeWithoutPorts: a bridge without ports (a match.name glob that
// matched no NIC) is "bridge_ports none": ifupdown refuses an option
// without a value, and with it the whole file.
func TestENIBridgeWithoutPorts(t *testing.T) {
	c := &netcfg.Config{Interfaces: []netcfg.Interface{{Name: "br0", Kind: netcfg.Bridge, Bridge: &netcfg.BridgeConfig{},
		Subnets: []netcfg.Subnet{{Type: netcfg.Static, Address: pfx("10.3.0.1/24")}}}}}
	if out := renderText(t, "eni", c); !strings.Contains(out, "    bridge_ports none\n") {
		t.Errorf("eni: no bridge_ports none:\n%s", out)
	}
}

// TestNMArpTargetNeedsInterval: NetworkManager refuses a bond with
// arp_ip_target and no arp_interval ("'arp_ip_target' option requires
// 'arp_interval' option to be set"): the targets are left out and named.
func TestNMArpTargetNeedsInterval(t *testing.T) {
	c := &netcfg.Config{Interfaces: []netcfg.Interface{
		{Name: "ens3", Kind: netcfg.Physical, MAC: "52:54:00:00:00:03"},
		{Name: "bond0", Kind: netcfg.Bond, Bond: &netcfg.BondConfig{Members: []string{"ens3"},
			Params: map[string]string{"bond-mode": "active-backup", "bond-arp-ip-target": "10.0.0.1"}},
			Subnets: []netcfg.Subnet{{Type: netcfg.DHCP4}}},
	}}
	if out := renderText(t, "network-manager", c); strings.Contains(out, "arp_ip_target") {
		t.Errorf("network-manager: arp_ip_target without arp_interval:\n%s", out)
	}
	if w := Warning("network-manager", c); !strings.Contains(w, "bond parameter arp-ip-target (bond0: NetworkManager takes it only with arp-interval)") {
		t.Errorf("network-manager: warning %q does not name arp-ip-target", w)
	}
}

// TestGatewayOnLink: a route via a gateway on a link without static
// addresses is on-link, as networkd takes it anyway, with a warning
// ("Gateway= without static address configured. Enabling GatewayOnLink=
// option"): networkd and netplan say so.
func TestGatewayOnLink(t *testing.T) {
	c := &netcfg.Config{Interfaces: []netcfg.Interface{{Name: "eth0", Kind: netcfg.Physical, MAC: "52:54:00:00:00:01",
		Subnets: []netcfg.Subnet{{Type: netcfg.DHCP4, Routes: []netcfg.Route{{To: pfx("10.9.0.0/16"), Via: ip("10.0.0.1")}}}}}}}
	if out := renderText(t, "networkd", c); !strings.Contains(out, "Destination=10.9.0.0/16\nGateway=10.0.0.1\nGatewayOnLink=yes\n") {
		t.Errorf("networkd: no GatewayOnLink=yes:\n%s", out)
	}
	if out := renderText(t, "netplan", c); !strings.Contains(out, "                - on-link: true\n                  to: 10.9.0.0/16\n                  via: 10.0.0.1\n") {
		t.Errorf("netplan: no on-link:\n%s", out)
	}
	c.Interfaces[0].Subnets = append(c.Interfaces[0].Subnets, netcfg.Subnet{Type: netcfg.Static, Address: pfx("10.0.0.2/24")})
	for _, rn := range []string{"networkd", "netplan"} {
		if out := renderText(t, rn, c); strings.Contains(out, "nLink") || strings.Contains(out, "on-link") {
			t.Errorf("%s: on-link with a static address:\n%s", rn, out)
		}
	}
}

// TestBondMemberAddressing: a bond member's own addressing (subnets,
// accept-ra) is not written by networkd or netplan, where networkd drops it
// ("Cannot enable DHCP= when Bond= is specified", "IPv6AcceptRA= is enabled
// but IPv6 link-local addressing is disabled"), and is named, as it is for
// NetworkManager, whose port connections have no IP settings.
func TestBondMemberAddressing(t *testing.T) {
	yes := true
	c := &netcfg.Config{Interfaces: []netcfg.Interface{
		{Name: "ens3", Kind: netcfg.Physical, MAC: "52:54:00:00:00:03", MTU: 9000, AcceptRA: &yes,
			Subnets: []netcfg.Subnet{{Type: netcfg.DHCP6}}},
		{Name: "bond0", Kind: netcfg.Bond, Bond: &netcfg.BondConfig{Members: []string{"ens3"}, Params: map[string]string{"bond-mode": "active-backup"}},
			Subnets: []netcfg.Subnet{{Type: netcfg.DHCP4}}},
	}}
	out := renderText(t, "networkd", c)
	member := out[strings.Index(out, "10-cloud-init-ens3.network"):]
	if !strings.Contains(member, "MTUBytes=9000\n") || !strings.Contains(member, "DHCP=no\nBond=bond0\n") || strings.Contains(member, "IPv6AcceptRA") {
		t.Errorf("networkd: want ens3 with its MTU and bond, without DHCP or IPv6AcceptRA:\n%s", member)
	}
	out = renderText(t, "netplan", c)
	if strings.Contains(out, "dhcp6") || strings.Contains(out, "accept-ra") || !strings.Contains(out, "mtu: 9000") {
		t.Errorf("netplan: want ens3 with its MTU, without dhcp6 or accept-ra:\n%s", out)
	}
	for _, rn := range []string{"networkd", "netplan", "network-manager"} {
		if w := Warning(rn, c); !strings.Contains(w, "addressing (ens3: a bond member or bridge port has no addresses") {
			t.Errorf("%s: warning %q does not name ens3's addressing", rn, w)
		}
	}
}

// TestNMDNSWithoutFamily: NetworkManager refuses DNS on a disabled family
// ("ipv4.dns: this property is not allowed for 'method=disabled'"), which a
// connection without subnets has: an interface's own DNS there is left out
// and named.
func TestNMDNSWithoutFamily(t *testing.T) {
	c := &netcfg.Config{Version: 2, Interfaces: []netcfg.Interface{
		{Name: "eth0", Kind: netcfg.Physical, MAC: "52:54:00:00:00:01",
			DNS: netcfg.DNS{Nameservers: []netip.Addr{ip("10.0.0.53")}, Search: []string{"corp.example"}}},
		{Name: "eth1", Kind: netcfg.Physical, MAC: "52:54:00:00:00:02", Subnets: []netcfg.Subnet{{Type: netcfg.DHCP4}},
			DNS: netcfg.DNS{Nameservers: []netip.Addr{ip("10.1.0.53"), ip("2001:db8::53")}}},
	}}
	out := renderText(t, "network-manager", c)
	if strings.Contains(out, "10.0.0.53") || strings.Contains(out, "corp.example") || strings.Contains(out, "2001:db8::53") {
		t.Errorf("network-manager: DNS on a disabled family:\n%s", out)
	}
	if !strings.Contains(out, "dns=10.1.0.53;") {
		t.Errorf("network-manager: eth1's IPv4 nameserver lost:\n%s", out)
	}
	w := Warning("network-manager", c)
	for _, n := range []string{"nameservers (eth0: NetworkManager takes DNS only", "nameservers (eth1: NetworkManager takes DNS only"} {
		if !strings.Contains(w, n) {
			t.Errorf("network-manager: warning %q does not name %q", w, n)
		}
	}
}
