package netcfg

import (
	"os"
	"testing"
)

func TestParseNetworkDataFiles(t *testing.T) {
	for _, tt := range []struct {
		file  string
		names map[string]string
		want  *Config
	}{{
		file: "network_data_ovs.json",
		names: map[string]string{
			"fa:16:3e:69:b0:58": "ens3", "fa:16:3e:d4:57:ad": "ens4", "fa:16:3e:05:30:fe": "ens5",
		},
		want: &Config{Version: 1, Interfaces: []Interface{
			{Name: "ens3", Kind: Physical, MAC: "fa:16:3e:69:b0:58", Subnets: []Subnet{{Type: DHCP4}}},
			{Name: "ens4", Kind: Physical, MAC: "fa:16:3e:d4:57:ad", MTU: 9000, Subnets: []Subnet{{Type: DHCP4}}},
			{Name: "ens5", Kind: Physical, MAC: "fa:16:3e:05:30:fe", Subnets: []Subnet{{Type: DHCP4}}},
		}, DNS: DNS{Nameservers: ips("199.204.44.24", "199.204.47.54")}},
	}, {
		// Unknown MACs leave the name to the caller.
		file:  "network_data_ovs.json",
		names: map[string]string{"fa:16:3e:d4:57:ad": "eth1"},
		want: &Config{Version: 1, Interfaces: []Interface{
			{Name: "", Kind: Physical, MAC: "fa:16:3e:69:b0:58", Subnets: []Subnet{{Type: DHCP4}}},
			{Name: "eth1", Kind: Physical, MAC: "fa:16:3e:d4:57:ad", MTU: 9000, Subnets: []Subnet{{Type: DHCP4}}},
			{Name: "", Kind: Physical, MAC: "fa:16:3e:05:30:fe", Subnets: []Subnet{{Type: DHCP4}}},
		}, DNS: DNS{Nameservers: ips("199.204.44.24", "199.204.47.54")}},
	}, {
		file:  "network_data_full.json",
		names: map[string]string{"52:54:00:aa:00:01": "eth0", "52:54:00:aa:00:02": "eth1"},
		want: &Config{Version: 1, Interfaces: []Interface{
			{Name: "eth0", Kind: Physical, MAC: "52:54:00:aa:00:01", MTU: 1500},
			{Name: "eth1", Kind: Physical, MAC: "52:54:00:aa:00:02"},
			{Name: "bond0", Kind: Bond, MAC: "52:54:00:aa:00:01", MTU: 9000, AcceptRA: boolp(false),
				Bond: &BondConfig{Members: []string{"eth0", "eth1"}, Params: map[string]string{
					"mode": "802.3ad", "miimon": "100", "xmit-hash-policy": "layer3+4"}},
				Subnets: []Subnet{
					{Type: Static, Address: pfx("2001:db8:1::5/64")},
					{Type: Static, Address: pfx("192.0.2.9/28")},
				}},
			{Name: "bond0.42", Kind: VLAN, MAC: "52:54:00:aa:00:01", AcceptRA: boolp(false),
				VLAN: &VLANConfig{ID: 42, Link: "bond0"},
				Subnets: []Subnet{
					{Type: Static, Address: pfx("10.0.0.5/24"), Routes: []Route{
						{To: pfx("0.0.0.0/0"), Via: ip("10.0.0.1")},
						{To: pfx("192.168.0.0/16"), Via: ip("10.0.0.254")},
					}, DNS: DNS{Nameservers: ips("10.0.0.2")}},
					{Type: Static, Address: pfx("2001:db8::5/64"), Routes: []Route{
						{To: pfx("::/0"), Via: ip("2001:db8::1")},
					}},
				}},
		}, DNS: DNS{Nameservers: ips("8.8.8.8", "2001:4860:4860::8888")}},
	}} {
		t.Run(tt.file, func(t *testing.T) {
			data, err := os.ReadFile("testdata/" + tt.file)
			if err != nil {
				t.Fatal(err)
			}
			got, err := ParseNetworkData(data, tt.names)
			if err != nil {
				t.Fatal(err)
			}
			checkConfig(t, got, tt.want)
		})
	}
}

func TestParseNetworkData(t *testing.T) {
	names := map[string]string{"fa:16:3e:00:00:01": "eth0", "fa:16:3e:00:00:02": "eth1"}
	phy := func(name, mac string, s ...Subnet) Interface {
		return Interface{Name: name, Kind: Physical, MAC: mac, Subnets: s}
	}
	for _, tt := range []struct {
		name string
		in   string
		want *Config
	}{{
		name: "empty",
		in:   `{}`,
		want: &Config{Version: 1},
	}, {
		name: "physical link types",
		in: `{"links": [
			{"id": "a", "type": "phy", "ethernet_mac_address": "fa:16:3e:00:00:01"},
			{"id": "b", "type": "ethernet", "ethernet_mac_address": "fa:16:3e:00:00:02"},
			{"id": "c", "type": "vif", "name": "c0"}, {"id": "d", "type": "tap", "name": "d0"},
			{"id": "e", "type": "bridge", "name": "e0"}, {"id": "f", "type": "hw_veb", "name": "f0"},
			{"id": "g", "type": "hyperv", "name": "g0"}, {"id": "h", "type": "vhostuser", "name": "h0"},
			{"id": "i", "type": "vdpa", "name": "i0"}, {"id": "j", "type": "macvtap", "name": "j0"},
			{"id": "k", "type": "dvs", "name": "k0"}, {"id": "l", "type": "ovs", "name": "l0"},
			{"id": "m", "name": "m0"}, {"id": "n", "type": null, "name": "n0"}]}`,
		want: &Config{Version: 1, Interfaces: []Interface{
			phy("eth0", "fa:16:3e:00:00:01"), phy("eth1", "fa:16:3e:00:00:02"),
			phy("c0", ""), phy("d0", ""), phy("e0", ""), phy("f0", ""), phy("g0", ""),
			phy("h0", ""), phy("i0", ""), phy("j0", ""), phy("k0", ""), phy("l0", ""),
			phy("m0", ""), phy("n0", ""),
		}},
	}, {
		name: "link name beats the MAC lookup",
		in:   `{"links": [{"id": "a", "type": "phy", "name": "lan0", "ethernet_mac_address": "FA:16:3E:00:00:01", "mtu": "1400"}]}`,
		want: &Config{Version: 1, Interfaces: []Interface{{Name: "lan0", Kind: Physical, MAC: "fa:16:3e:00:00:01", MTU: 1400}}},
	}, {
		name: "network types",
		in: `{"links": [{"id": "a", "type": "phy", "ethernet_mac_address": "fa:16:3e:00:00:01"}],
		"networks": [
			{"id": "n0", "link": "a", "type": "ipv4_dhcp"},
			{"id": "n1", "link": "a", "type": "ipv6_slaac"},
			{"id": "n2", "link": "a", "type": "ipv6_dhcpv6-stateless"},
			{"id": "n3", "link": "a", "type": "ipv6_dhcpv6-stateful"},
			{"id": "n4", "link": "a", "type": "static", "ip_address": "10.1.0.2/16", "gateway": "10.1.0.1"}]}`,
		want: &Config{Version: 1, Interfaces: []Interface{{Name: "eth0", Kind: Physical, MAC: "fa:16:3e:00:00:01",
			AcceptRA: boolp(true), Subnets: []Subnet{
				{Type: DHCP4}, {Type: SLAAC}, {Type: DHCPv6Stateless}, {Type: DHCPv6Stateful},
				{Type: Static, Address: pfx("10.1.0.2/16"), Gateway: ip("10.1.0.1")},
			}}}},
	}, {
		// accept-ra follows the last network that sets it, as in cloud-init.
		name: "ipv6_dhcp then ipv6 static",
		in: `{"links": [{"id": "a", "ethernet_mac_address": "fa:16:3e:00:00:01"}],
		"networks": [{"id": "n0", "link": "a", "type": "ipv6_dhcp"},
			{"id": "n1", "link": "a", "type": "ipv6", "ip_address": "2001:db8::9", "netmask": "ffff:ffff:ffff:ff00::"}]}`,
		want: &Config{Version: 1, Interfaces: []Interface{{Name: "eth0", Kind: Physical, MAC: "fa:16:3e:00:00:01",
			AcceptRA: boolp(false), Subnets: []Subnet{{Type: DHCP6}, {Type: Static, Address: pfx("2001:db8::9/56")}}}}},
	}, {
		name: "address defaults to /24 without a netmask, as cloud-init",
		in: `{"links": [{"id": "a", "ethernet_mac_address": "fa:16:3e:00:00:01"}],
		"networks": [{"id": "n0", "link": "a", "type": "ipv4", "ip_address": "10.9.8.7",
			"routes": [{"network": "172.16.0.0", "netmask": "12", "gateway": "10.9.8.1", "metric": 100}]}]}`,
		want: &Config{Version: 1, Interfaces: []Interface{phy("eth0", "fa:16:3e:00:00:01",
			Subnet{Type: Static, Address: pfx("10.9.8.7/24"), Routes: []Route{{To: pfx("172.16.0.0/12"), Via: ip("10.9.8.1"), Metric: 100}}})}},
	}, {
		name: "vlan on a named physical link, declared before its parent",
		in: `{"links": [{"id": "v", "type": "vlan", "vlan_link": "a", "vlan_id": "7"},
			{"id": "a", "ethernet_mac_address": "fa:16:3e:00:00:02"}]}`,
		want: &Config{Version: 1, Interfaces: []Interface{
			{Name: "eth1.7", Kind: VLAN, VLAN: &VLANConfig{ID: 7, Link: "eth1"}},
			phy("eth1", "fa:16:3e:00:00:02"),
		}},
	}, {
		name: "vlan on vlan",
		in: `{"links": [{"id": "v2", "type": "vlan", "vlan_link": "v1", "vlan_id": 8},
			{"id": "v1", "type": "vlan", "vlan_link": "a", "vlan_id": 7},
			{"id": "a", "ethernet_mac_address": "fa:16:3e:00:00:02"}]}`,
		want: &Config{Version: 1, Interfaces: []Interface{
			{Name: "eth1.7.8", Kind: VLAN, VLAN: &VLANConfig{ID: 8, Link: "eth1.7"}},
			{Name: "eth1.7", Kind: VLAN, VLAN: &VLANConfig{ID: 7, Link: "eth1"}},
			phy("eth1", "fa:16:3e:00:00:02"),
		}},
	}, {
		name: "two bonds are numbered in order",
		in: `{"links": [{"id": "a", "ethernet_mac_address": "fa:16:3e:00:00:01"},
			{"id": "b", "ethernet_mac_address": "fa:16:3e:00:00:02"},
			{"id": "x", "type": "bond", "bond_links": ["a"], "bond-mode": "active-backup"},
			{"id": "y", "type": "bond", "name": "ignored", "bond_links": ["b"], "bond_mode": 1}]}`,
		want: &Config{Version: 1, Interfaces: []Interface{
			phy("eth0", "fa:16:3e:00:00:01"), phy("eth1", "fa:16:3e:00:00:02"),
			{Name: "bond0", Kind: Bond, Bond: &BondConfig{Members: []string{"eth0"}, Params: map[string]string{"mode": "active-backup"}}},
			{Name: "bond1", Kind: Bond, Bond: &BondConfig{Members: []string{"eth1"}, Params: map[string]string{"mode": "1"}}},
		}},
	}, {
		name: "subnet dns keys and non-dns services",
		in: `{"links": [{"id": "a", "ethernet_mac_address": "fa:16:3e:00:00:01"}],
		"networks": [{"id": "n0", "link": "a", "type": "ipv4", "ip_address": "10.0.0.2", "netmask": "255.255.255.0",
			"dns_nameservers": "10.0.0.53 10.0.0.54", "dns_search": ["example.com"],
			"services": [{"type": "ntp", "address": "10.0.0.3"}, {"type": "dns", "address": "10.0.0.55"}]}],
		"services": [{"type": "ntp", "address": "10.0.0.3"}]}`,
		want: &Config{Version: 1, Interfaces: []Interface{phy("eth0", "fa:16:3e:00:00:01",
			Subnet{Type: Static, Address: pfx("10.0.0.2/24"), DNS: DNS{
				Nameservers: ips("10.0.0.53", "10.0.0.54", "10.0.0.55"), Search: []string{"example.com"}}})}},
	}} {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseNetworkData([]byte(tt.in), names)
			if err != nil {
				t.Fatal(err)
			}
			checkConfig(t, got, tt.want)
		})
	}
}

func TestParseNetworkDataErrors(t *testing.T) {
	names := map[string]string{"fa:16:3e:00:00:01": "eth0"}
	const link = `{"id": "a", "ethernet_mac_address": "fa:16:3e:00:00:01"}`
	for _, tt := range []struct {
		name string
		in   string
		want []string
	}{
		{"not json", `{"links": [`, []string{"network_data.json: ", "unexpected EOF"}},
		{"not an object", `[]`, []string{"want a JSON object, have a list"}},
		{"trailing", `{} {}`, []string{"trailing data"}},
		{"links not a list", `{"links": {}}`, []string{"links: want a list, have an object"}},
		{"link not an object", `{"links": [3]}`, []string{"links[0]: want an object, have a number"}},
		{"no id", `{"links": [{"type": "phy"}]}`, []string{"links[0]: no id"}},
		{"duplicate id", `{"links": [` + link + `,` + link + `]}`, []string{`links[1] (id "a"): duplicate id`}},
		{"no mac no name", `{"links": [{"id": "a", "type": "phy"}]}`, []string{`links[0] (id "a"): no ethernet_mac_address or name`}},
		{"bad mac", `{"links": [{"id": "a", "ethernet_mac_address": "fa:16:3e:00:01"}]}`, []string{`links[0] (id "a"): ethernet_mac_address: "fa:16:3e:00:01": invalid MAC`}},
		{"mac not a string", `{"links": [{"id": "a", "ethernet_mac_address": true}]}`, []string{`ethernet_mac_address: want a string, have a boolean`}},
		{"bad mtu", `{"links": [{"id": "a", "name": "x", "mtu": "big"}]}`, []string{`links[0] (id "a"): mtu: "big" is not an integer`}},
		{"negative mtu", `{"links": [{"id": "a", "name": "x", "mtu": -1}]}`, []string{`mtu: -1 is negative`}},
		{"bond without links", `{"links": [{"id": "b", "type": "bond"}]}`, []string{`links[0] (id "b"): bond without bond_links`}},
		{"bond unknown member", `{"links": [` + link + `,{"id": "b", "type": "bond", "bond_links": ["a", "z"]}]}`, []string{`links[1] (id "b"): bond_links[1]: "z": no such link`}},
		{"bond unnamed member", `{"links": [{"id": "a", "ethernet_mac_address": "fa:16:3e:00:00:09"},{"id": "b", "type": "bond", "bond_links": ["a"]}]}`,
			[]string{`links[1] (id "b"): bond link "a" has no interface name`}},
		{"vlan without link", `{"links": [{"id": "v", "type": "vlan", "vlan_id": 5}]}`, []string{`links[0] (id "v"): vlan without vlan_link`}},
		{"vlan unknown link", `{"links": [{"id": "v", "type": "vlan", "vlan_id": 5, "vlan_link": "q"}]}`, []string{`vlan_link "q": no such link`}},
		{"vlan unnamed link", `{"links": [{"id": "a", "ethernet_mac_address": "fa:16:3e:00:00:09"},{"id": "v", "type": "vlan", "vlan_id": 5, "vlan_link": "a"}]}`,
			[]string{`links[1] (id "v"): vlan_link "a" has no interface name`}},
		{"vlan without id", `{"links": [` + link + `,{"id": "v", "type": "vlan", "vlan_link": "a"}]}`, []string{`vlan without vlan_id`}},
		{"vlan id range", `{"links": [` + link + `,{"id": "v", "type": "vlan", "vlan_link": "a", "vlan_id": 4095}]}`, []string{`vlan_id 4095 out of range`}},
		{"vlan bad mac", `{"links": [` + link + `,{"id": "v", "type": "vlan", "vlan_link": "a", "vlan_id": 4, "vlan_mac_address": "x"}]}`, []string{`vlan_mac_address: "x": invalid MAC`}},
		{"unknown network type", `{"links": [` + link + `], "networks": [{"id": "n", "link": "a", "type": "ipv5"}]}`, []string{`networks[0] (id "n"): unknown type "ipv5"`}},
		{"static without address", `{"links": [` + link + `], "networks": [{"id": "n", "link": "a", "type": "ipv4"}]}`, []string{`networks[0] (id "n"): ipv4 network without ip_address`}},
		{"bad address", `{"links": [` + link + `], "networks": [{"id": "n", "link": "a", "type": "ipv4", "ip_address": "10.0.0.300"}]}`, []string{`networks[0] (id "n"): ip_address: "10.0.0.300": invalid IP`}},
		{"bad netmask", `{"links": [` + link + `], "networks": [{"id": "n", "link": "a", "type": "ipv4", "ip_address": "10.0.0.3", "netmask": "255.0.255.0"}]}`, []string{`"255.0.255.0": invalid netmask`}},
		{"prefix too long", `{"links": [` + link + `], "networks": [{"id": "n", "link": "a", "type": "ipv4", "ip_address": "10.0.0.3/33"}]}`, []string{`"10.0.0.3/33": invalid prefix`}},
		{"family mismatch", `{"links": [` + link + `], "networks": [{"id": "n", "link": "a", "type": "ipv6", "ip_address": "10.0.0.3"}]}`, []string{`ip_address "10.0.0.3" does not match type "ipv6"`}},
		{"bad gateway", `{"links": [` + link + `], "networks": [{"id": "n", "link": "a", "type": "ipv4", "ip_address": "10.0.0.3", "gateway": "g"}]}`, []string{`gateway: "g": invalid IP`}},
		{"route without network", `{"links": [` + link + `], "networks": [{"id": "n", "link": "a", "type": "ipv4_dhcp", "routes": [{"gateway": "10.0.0.1"}]}]}`, []string{`networks[0] (id "n"): routes[0]: no network`}},
		{"route bad gateway", `{"links": [` + link + `], "networks": [{"id": "n", "link": "a", "type": "ipv4_dhcp", "routes": [{"network": "0.0.0.0", "netmask": "0.0.0.0", "gateway": "::1"}]}]}`, []string{`routes[0]: gateway "::1" and network "0.0.0.0" are of different families`}},
		{"bad dns service", `{"services": [{"type": "dns", "address": "dns.example.com"}]}`, []string{`services[0]: address: "dns.example.com": invalid IP`}},
		{"bad subnet dns", `{"links": [` + link + `], "networks": [{"id": "n", "link": "a", "type": "ipv4_dhcp", "dns_nameservers": [1]}]}`, []string{`dns_nameservers: [0]: want a string, have a number`}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c, err := ParseNetworkData([]byte(tt.in), names)
			if err == nil {
				t.Fatalf("no error; config %+v", c)
			}
			checkErr(t, err, tt.want...)
		})
	}
}

func FuzzParseNetworkData(f *testing.F) {
	for _, name := range []string{"network_data_ovs.json", "network_data_full.json"} {
		data, err := os.ReadFile("testdata/" + name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Add([]byte(`{"links": [{"id": "v", "type": "vlan", "vlan_link": "v", "vlan_id": 1}]}`))
	f.Add([]byte(`{"links": [{"id": "a", "name": "x"}, {"id": "b", "type": "bond", "bond_links": ["a", "a"]}], "networks": [{"link": "b", "type": "ipv6", "ip_address": "::1/0"}]}`))
	names := map[string]string{"fa:16:3e:69:b0:58": "ens3", "52:54:00:aa:00:01": "eth0"}
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := ParseNetworkData(data, names)
		if err != nil {
			if c != nil {
				t.Fatal("config with an error")
			}
			return
		}
		checkInvariants(t, c)
	})
}

// checkInvariants checks what every parser promises of a successful result.
func checkInvariants(t *testing.T, c *Config) {
	t.Helper()
	for _, iface := range c.Interfaces {
		if iface.MAC != "" {
			if m, err := parseMAC(iface.MAC); err != nil || m != iface.MAC {
				t.Fatalf("interface %q: MAC %q not normalised", iface.Name, iface.MAC)
			}
		}
		if (iface.Kind == Bond) != (iface.Bond != nil) || (iface.Kind == VLAN) != (iface.VLAN != nil) || (iface.Kind == Bridge) != (iface.Bridge != nil) {
			t.Fatalf("interface %q: kind %q does not match its config", iface.Name, iface.Kind)
		}
		for _, s := range iface.Subnets {
			if s.Type == Static && !s.Address.IsValid() {
				t.Fatalf("interface %q: static subnet without address", iface.Name)
			}
			if s.Type != Static && s.Address.IsValid() {
				t.Fatalf("interface %q: %s subnet with an address", iface.Name, s.Type)
			}
		}
	}
	_ = c.Validate()
	_ = c.RenameMap()
}
