package netcfg

import (
	"fmt"
	"os"
	"reflect"
	"strings"
	"testing"
)

func TestParseENIFile(t *testing.T) {
	data, err := os.ReadFile("testdata/interfaces")
	if err != nil {
		t.Fatal(err)
	}
	got, err := Parse("eni", data, nil)
	if err != nil {
		t.Fatal(err)
	}
	checkConfig(t, got, &Config{Version: 1, Interfaces: []Interface{
		{Name: "eth0", Kind: Physical, MAC: "fa:16:3e:9d:10:29", Subnets: []Subnet{{Type: Static, Address: pfx("10.0.0.5/24"),
			Gateway: ip("10.0.0.1"), Broadcast: ip("10.0.0.255"), DNS: DNS{Nameservers: ips("8.8.8.8", "8.8.4.4"), Search: []string{"example.org"}}}}},
		{Name: "eth1", Kind: Physical, Subnets: []Subnet{{Type: Static, Address: pfx("2001:db8::5/64"), Gateway: ip("2001:db8::1")}}},
	}})
	if err := got.Validate(); err != nil {
		t.Error(err)
	}
}

func TestParseUnknownFormat(t *testing.T) {
	checkErr(t, func() error { _, err := Parse("toml", []byte("{}"), nil); return err }(), `unknown format "toml"`)
}

func TestValidate(t *testing.T) {
	phy := func(name, mac string) Interface { return Interface{Name: name, Kind: Physical, MAC: mac} }
	for _, tt := range []struct {
		name   string
		ifaces []Interface
		want   []string // nil: valid
	}{
		{"valid", []Interface{phy("eth0", "52:54:00:00:00:01"), phy("eth1", "52:54:00:00:00:02"),
			{Name: "bond0", Kind: Bond, Bond: &BondConfig{Members: []string{"eth0", "eth1"}}},
			{Name: "bond0.5", Kind: VLAN, VLAN: &VLANConfig{ID: 5, Link: "bond0"}},
			{Name: "br0", Kind: Bridge, Bridge: &BridgeConfig{Members: []string{"bond0.5"}}},
			{Name: "br1", Kind: Bridge, Bridge: &BridgeConfig{}}}, nil},
		{"unnamed", []Interface{phy("", "52:54:00:00:00:01")}, []string{`interfaces[0] (physical ""): no name (MAC "52:54:00:00:00:01")`}},
		{"duplicate name", []Interface{phy("eth0", ""), phy("eth0", "")}, []string{`interfaces[1] (physical "eth0"): name already used by interfaces[0]`}},
		{"duplicate mac", []Interface{phy("eth0", "52:54:00:00:00:01"), phy("eth1", "52:54:00:00:00:01")},
			[]string{`interfaces[1] (physical "eth1"): MAC 52:54:00:00:00:01 already used by interfaces[0] ("eth0")`}},
		{"vlan without parent", []Interface{{Name: "v", Kind: VLAN, VLAN: &VLANConfig{ID: 3}}}, []string{`interfaces[0] (vlan "v"): vlan without a parent link`}},
		{"vlan unknown parent", []Interface{{Name: "v", Kind: VLAN, VLAN: &VLANConfig{ID: 3, Link: "eth9"}}}, []string{`vlan link "eth9": no such interface`}},
		{"vlan id", []Interface{phy("eth0", ""), {Name: "v", Kind: VLAN, VLAN: &VLANConfig{ID: 0, Link: "eth0"}}}, []string{`vlan id 0 out of range`}},
		{"bond without members", []Interface{{Name: "b", Kind: Bond, Bond: &BondConfig{}}}, []string{`interfaces[0] (bond "b"): bond without members`}},
		{"bond unknown member", []Interface{phy("eth0", ""), {Name: "b", Kind: Bond, Bond: &BondConfig{Members: []string{"eth0", "eth7"}}}},
			[]string{`interfaces[1] (bond "b"): bond member "eth7": no such interface`}},
		{"bond of itself", []Interface{{Name: "b", Kind: Bond, Bond: &BondConfig{Members: []string{"b"}}}}, []string{`bond member "b" is the interface itself`}},
		{"bridge unknown port", []Interface{{Name: "br", Kind: Bridge, Bridge: &BridgeConfig{Members: []string{"tap0"}}}}, []string{`bridge port "tap0": no such interface`}},
		{"kind mismatch", []Interface{{Name: "b", Kind: Bond}}, []string{`kind does not match`}},
		{"unknown kind", []Interface{{Name: "w", Kind: "wifi"}}, []string{`interfaces[0] (wifi "w"): unknown kind`}},
		{"static without address", []Interface{{Name: "e", Kind: Physical, Subnets: []Subnet{{Type: Static}}}}, []string{`subnets[0]: static without an address`}},
		{"several problems", []Interface{phy("", ""), {Name: "b", Kind: Bond, Bond: &BondConfig{}}}, []string{"no name", "bond without members"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			err := (&Config{Interfaces: tt.ifaces}).Validate()
			if tt.want == nil {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			checkErr(t, err, tt.want...)
		})
	}
	if err := (&Config{Disabled: true, Interfaces: []Interface{{}}}).Validate(); err != nil {
		t.Errorf("disabled config: %v", err)
	}
}

func TestRenameMap(t *testing.T) {
	c := &Config{Interfaces: []Interface{
		{Name: "eth0", Kind: Physical, MAC: "52:54:00:00:00:01"},
		{Name: "", Kind: Physical, MAC: "52:54:00:00:00:02"},
		{Name: "eth2", Kind: Physical},
		{Name: "id3", Kind: Physical, MAC: "52:54:00:00:00:03", NoRename: true},
		{Name: "bond0", Kind: Bond, MAC: "52:54:00:00:00:04", Bond: &BondConfig{Members: []string{"eth0"}}},
	}}
	want := map[string]string{"52:54:00:00:00:01": "eth0"}
	if got := c.RenameMap(); !reflect.DeepEqual(got, want) {
		t.Errorf("RenameMap = %v, want %v", got, want)
	}
}

// TestValidateValues proves that no value able to add a line, start a
// command or widen a match reaches the renderers: interface names as the
// kernel (and systemd, ifupdown, initscripts) take them, and every other
// string per its syntax (issue 11 item 6). Errors name the key.
func TestValidateValues(t *testing.T) {
	eth := func(mut func(*Interface)) []Interface {
		i := Interface{Name: "eth0", Kind: Physical, MAC: "52:54:00:00:00:01", Subnets: []Subnet{{Type: DHCP4}}}
		mut(&i)
		return []Interface{i}
	}
	bond := func(params map[string]string) []Interface {
		return []Interface{{Name: "eth0", Kind: Physical}, {Name: "bond0", Kind: Bond, Bond: &BondConfig{Members: []string{"eth0"}, Params: params}}}
	}
	for _, tt := range []struct {
		name   string
		ifaces []Interface
		dns    DNS
		want   []string // nil: valid
	}{
		{"ordinary values", []Interface{
			{Name: "enp0s3", Kind: Physical, MAC: "52:54:00:00:00:01", Driver: "virtio_net",
				DHCP4Overrides: &DHCPOverrides{Hostname: "web-1.example.org", UseDomains: "route"},
				DNS:            DNS{Search: []string{"example.org.", "corp_x.example"}}},
			{Name: "bond0", Kind: Bond, Bond: &BondConfig{Members: []string{"enp0s3"}, Params: map[string]string{
				"mode": "802.3ad", "xmit-hash-policy": "layer3+4", "arp-ip-target": "10.0.0.1,fd00::1"}}},
			{Name: "br-lan", Kind: Bridge, Bridge: &BridgeConfig{Members: []string{"bond0"}, Params: map[string]string{"pathcost": "bond0 50"}}},
			{Name: "br-lan.100", Kind: VLAN, VLAN: &VLANConfig{ID: 100, Link: "br-lan"}},
			{Name: "ib0@x+y", Kind: Physical},
		}, DNS{Search: []string{"example.com"}}, nil},
		{"name 16 bytes", eth(func(i *Interface) { i.Name = "abcdefghijklmnop" }), DNS{}, []string{`name: interface name "abcdefghijklmnop" is 16 bytes, over the kernel's 15`}},
		{"name dot", eth(func(i *Interface) { i.Name = "." }), DNS{}, []string{`interface name "." is not allowed`}},
		{"name dotdot", eth(func(i *Interface) { i.Name = ".." }), DNS{}, []string{`interface name ".." is not allowed`}},
		{"name slash", eth(func(i *Interface) { i.Name = "a/b" }), DNS{}, []string{`character '/' is not allowed`}},
		{"name colon", eth(func(i *Interface) { i.Name = "eth0:1" }), DNS{}, []string{`character ':' is not allowed`}},
		{"name space", eth(func(i *Interface) { i.Name = "eth 0" }), DNS{}, []string{`character ' ' is not allowed`}},
		{"name newline", eth(func(i *Interface) { i.Name = "e\nDNS=1" }), DNS{}, []string{`interfaces[0] (physical "e\nDNS=1"): name:`, `character '\n' is not allowed`}},
		{"name command", eth(func(i *Interface) { i.Name = "e$(reboot)" }), DNS{}, []string{`character '$' is not allowed`}},
		{"name backtick", eth(func(i *Interface) { i.Name = "e`id`" }), DNS{}, []string{"character '`' is not allowed"}},
		{"name glob", eth(func(i *Interface) { i.Name = "eth*" }), DNS{}, []string{`character '*' is not allowed`}},
		{"name non-ascii", eth(func(i *Interface) { i.Name = "ethé" }), DNS{}, []string{`is not allowed`}},
		{"mac upper", eth(func(i *Interface) { i.MAC = "52:54:00:00:00:AA" }), DNS{}, []string{`mac: "52:54:00:00:00:AA" is not a lower-case`}},
		{"mac newline", eth(func(i *Interface) { i.MAC = "52:54:00:00:00:01\n" }), DNS{}, []string{`mac: "52:54:00:00:00:01\n"`}},
		{"driver space", eth(func(i *Interface) { i.Driver = "e1000 virtio" }), DNS{}, []string{`driver: "e1000 virtio": character ' '`}},
		{"search newline", eth(func(i *Interface) { i.DNS.Search = []string{"a.org\nnameserver 6.6.6.6"} }), DNS{}, []string{`dns.search[0]: "a.org\nnameserver 6.6.6.6"`}},
		{"subnet search", eth(func(i *Interface) { i.Subnets[0].DNS.Search = []string{"ok.org", "x;reboot"} }), DNS{}, []string{`subnets[0].dns.search[1]: "x;reboot"`}},
		{"global search", nil, DNS{Search: []string{"$(reboot)"}}, []string{`dns.search[0]: "$(reboot)"`}},
		{"search label 64", nil, DNS{Search: []string{strings.Repeat("a", 64) + ".org"}}, []string{"over 63 bytes"}},
		{"search over 253", nil, DNS{Search: []string{strings.Repeat("abcdefghi.", 26)}}, []string{"over 253 bytes"}},
		{"search leading dash", nil, DNS{Search: []string{"-x.org"}}, []string{"starts with '-'"}},
		{"hostname quote", eth(func(i *Interface) { i.DHCP4Overrides = &DHCPOverrides{Hostname: `h"; reboot; "`} }), DNS{}, []string{`dhcp4-overrides.hostname:`}},
		{"use-domains", eth(func(i *Interface) { i.DHCP6Overrides = &DHCPOverrides{UseDomains: "yes\n"} }), DNS{}, []string{`dhcp6-overrides.use-domains: "yes\n" is not true, false or route`}},
		{"bond value newline", bond(map[string]string{"mode": "active-backup\nPostUp=reboot"}), DNS{}, []string{`bond.params.mode: value "active-backup\nPostUp=reboot": character '\n'`}},
		{"bond value command", bond(map[string]string{"miimon": "$(reboot)"}), DNS{}, []string{`bond.params.miimon: value "$(reboot)"`}},
		{"bond key", bond(map[string]string{"mode\nx": "1"}), DNS{}, []string{`bond.params: key "mode\nx"`}},
		{"bridge value quote", []Interface{{Name: "br0", Kind: Bridge, Bridge: &BridgeConfig{Params: map[string]string{"stp": `on"`}}}}, DNS{}, []string{`bridge.params.stp: value "on\""`}},
		{"bond member name", []Interface{{Name: "bond0", Kind: Bond, Bond: &BondConfig{Members: []string{"e\n"}}}}, DNS{}, []string{`bond.members[0]: interface name "e\n"`}},
		{"vlan link name", []Interface{{Name: "v", Kind: VLAN, VLAN: &VLANConfig{ID: 2, Link: "`x`"}}}, DNS{}, []string{"vlan.link: interface name \"`x`\""}},
		{"subnet type", eth(func(i *Interface) { i.Subnets[0].Type = "loopback" }), DNS{}, []string{`subnets[0]: unknown type "loopback"`}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			err := (&Config{Interfaces: tt.ifaces, DNS: tt.dns}).Validate()
			if tt.want == nil {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			checkErr(t, err, tt.want...)
			// One line per problem (errors.Join), the value escaped: a raw
			// newline would start a line of its own.
			for _, l := range strings.Split(err.Error(), "\n") {
				if !strings.HasPrefix(l, "interfaces[") && !strings.HasPrefix(l, "dns.search[") {
					t.Fatalf("error line %q does not name its key: raw newline in %q", l, err)
				}
			}
		})
	}
}

// TestValidateSize checks the size bounds: a configuration past them is
// refused, with the count and the limit, before any renderer spends minutes
// on it in PID 1.
func TestValidateSize(t *testing.T) {
	ifaces := func(n int) []Interface {
		var out []Interface
		for i := 0; i < n; i++ {
			out = append(out, Interface{Name: fmt.Sprintf("e%d", i), Kind: Physical, Subnets: []Subnet{{Type: DHCP4}}})
		}
		return out
	}
	routes := func(n int) []Route {
		return make([]Route, n) // zero routes count as well as real ones
	}
	withSubnets := func(n int, mut func(*Subnet)) []Interface {
		i := ifaces(1)
		for len(i[0].Subnets) < n {
			s := Subnet{Type: DHCP4}
			if mut != nil {
				mut(&s)
			}
			i[0].Subnets = append(i[0].Subnets, s)
		}
		return i
	}
	for _, tt := range []struct {
		name string
		c    Config
		want string // "": valid
	}{
		{"at every limit", Config{Interfaces: ifaces(MaxInterfaces), Routes: routes(MaxRouteCopies / MaxInterfaces)}, ""},
		{"interfaces", Config{Interfaces: ifaces(MaxInterfaces + 1)}, "257 interfaces, over the limit of 256"},
		{"subnets", Config{Interfaces: withSubnets(MaxSubnets+1, nil)}, "1025 subnets, over the limit of 1024"},
		{"routes", Config{Interfaces: withSubnets(3, func(s *Subnet) { s.Routes = routes(MaxRoutes / 2) }), Routes: routes(1)}, "1025 routes, over the limit of 1024"},
		{"dns", Config{Interfaces: ifaces(1), DNS: DNS{Search: make([]string, MaxDNS+1)}}, "1025 nameservers and search domains, over the limit of 1024"},
		{"route copies", Config{Interfaces: ifaces(MaxInterfaces), Routes: routes(MaxRouteCopies/MaxInterfaces + 1)}, "16640 host-wide routes × interfaces, over the limit of 16384"},
		{"member twice", Config{Interfaces: []Interface{{Name: "eth0", Kind: Physical}, {Name: "bond0", Kind: Bond, Bond: &BondConfig{Members: []string{"eth0", "eth0"}}}}},
			`bond.members[1]: "eth0" listed twice`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.c.Validate()
			if tt.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			checkErr(t, err, tt.want)
		})
	}
}
