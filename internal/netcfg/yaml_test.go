package netcfg

import (
	"os"
	"strings"
	"testing"
)

func TestParseYAMLFiles(t *testing.T) {
	for _, tt := range []struct {
		file string
		want *Config
	}{{
		file: "v1_all.yaml",
		want: &Config{Version: 1, Interfaces: []Interface{
			{Name: "eth0", Kind: Physical, MAC: "c0:d6:9f:2c:e8:80", MTU: 9000, Subnets: []Subnet{
				{Type: Static, Address: pfx("192.168.23.14/27"), Gateway: ip("192.168.23.1"),
					DNS:    DNS{Nameservers: ips("192.168.23.2", "8.8.8.8"), Search: []string{"exemplary.maas"}},
					Routes: []Route{{To: pfx("10.0.0.0/8"), Via: ip("192.168.23.3"), Metric: 3}}},
				{Type: Static, Address: pfx("2001:4800:78ff:1b:be76:4eff:fe06:96b3/64")},
			}},
			{Name: "gbe0", Kind: Physical, MAC: "cd:11:22:33:44:00", AcceptRA: boolp(true), Driver: "ixgbe"},
			{Name: "gbe1", Kind: Physical, MAC: "cd:11:22:33:44:02", DNS: DNS{Nameservers: ips("10.1.1.1")}},
			{Name: "bond0", Kind: Bond, MAC: "cd:11:22:33:44:00", Bond: &BondConfig{
				Members: []string{"gbe0", "gbe1"},
				Params:  map[string]string{"mode": "active-backup", "miimon": "100", "xmit-hash-policy": "layer3+4"},
			}, Subnets: []Subnet{{Type: DHCP4}, {Type: DHCP6}}},
			{Name: "bond0.50", Kind: VLAN, MTU: 1500, VLAN: &VLANConfig{ID: 50, Link: "bond0"},
				Subnets: []Subnet{{Type: Static, Address: pfx("10.50.0.2/16"), MTU: 1400}}},
			{Name: "br0", Kind: Bridge, Bridge: &BridgeConfig{Members: []string{"eth0"}, Params: map[string]string{
				"ageing": "250", "priority": "22", "fd": "1", "hello": "1", "maxage": "10", "maxwait": "0",
				"pathcost": "eth0 50", "portprio": "eth0 28", "stp": "off",
			}}, Subnets: []Subnet{{Type: SLAAC}, {Type: Manual}}},
		},
			Routes: []Route{{To: pfx("192.168.24.0/24"), Via: ip("192.168.23.1"), Metric: 3}},
			DNS:    DNS{Nameservers: ips("192.168.23.2", "8.8.8.8"), Search: []string{"exemplary"}},
		},
	}, {
		file: "v2_all.yaml",
		want: &Config{Version: 2, Interfaces: []Interface{
			{Name: "eno1", Kind: Physical, MAC: "00:11:22:33:44:55", Driver: "hv_netsvc", NoRename: true, WakeOnLAN: true,
				DNS: DNS{Nameservers: ips("8.8.8.8", "8.8.4.4"), Search: []string{"foo.local", "bar.local"}},
				Subnets: []Subnet{
					{Type: DHCP4, Routes: []Route{
						{To: pfx("0.0.0.0/0"), Via: ip("192.168.14.254"), Metric: 100},
						{To: pfx("10.9.0.0/16"), Via: ip("192.168.14.253")},
					}},
					{Type: Static, Address: pfx("192.168.14.2/24"), Gateway: ip("192.168.14.1"),
						DNS: DNS{Nameservers: ips("8.8.8.8", "8.8.4.4"), Search: []string{"foo.local", "bar.local"}}},
					{Type: Static, Address: pfx("2001:1::1/64"), Gateway: ip("2001:1::2")},
					{Type: Static, Address: pfx("192.168.14.3/24")},
				}},
			{Name: "lom1", Kind: Physical, Driver: "ixgbe", AcceptRA: boolp(true), Optional: true, Subnets: []Subnet{{Type: DHCP6}}},
			{Name: "switchports", Kind: Physical, MTU: 1280, NoRename: true, MatchName: "enp2*"},
			{Name: "lan1", Kind: Physical, MAC: "52:54:00:00:00:01"},
			{Name: "bond0", Kind: Bond, MAC: "52:54:00:00:00:01", Bond: &BondConfig{
				Members: []string{"lan1", "lom1"},
				Params: map[string]string{"mode": "802.3ad", "miimon": "100", "xmit-hash-policy": "layer3+4",
					"lacp-rate": "fast", "num-grat-arp": "3", "arp-ip-target": "10.0.0.1 10.0.0.2"},
			}, Subnets: []Subnet{{Type: Manual, Routes: []Route{{To: pfx("::/0"), Via: ip("2001:db8::1")}}}}},
			{Name: "br0", Kind: Bridge, Bridge: &BridgeConfig{Members: []string{"switchports"}, Params: map[string]string{
				"stp": "off", "fd": "0", "priority": "22", "pathcost": "switchports 50",
			}}, Subnets: []Subnet{{Type: Static, Address: pfx("10.3.0.1/24")}}},
			{Name: "en-intra", Kind: VLAN, VLAN: &VLANConfig{ID: 1, Link: "lan1"}, Subnets: []Subnet{{Type: DHCP4}}},
			{Name: "vlan.2", Kind: VLAN, MTU: 1400, VLAN: &VLANConfig{ID: 2, Link: "bond0"}, DNS: DNS{Search: []string{"only.search"}},
				Subnets: []Subnet{{Type: Static, Address: pfx("10.4.0.1/16"), DNS: DNS{Search: []string{"only.search"}}}}},
		}},
	}} {
		t.Run(tt.file, func(t *testing.T) {
			data, err := os.ReadFile("testdata/" + tt.file)
			if err != nil {
				t.Fatal(err)
			}
			got, err := ParseYAML(data)
			if err != nil {
				t.Fatal(err)
			}
			checkConfig(t, got, tt.want)
			if err := got.Validate(); err != nil {
				t.Errorf("Validate: %v", err)
			}
		})
	}
}

func TestParseYAML(t *testing.T) {
	for _, tt := range []struct {
		name string
		in   string
		want *Config
	}{
		{"disabled", "network: {config: disabled}", &Config{Disabled: true}},
		{"disabled at top", "config: disabled\n", &Config{Disabled: true}},
		{"v1 without network key", "version: 1\nconfig:\n- {type: physical, name: eth0, subnets: [{type: dhcp4}]}\n",
			&Config{Version: 1, Interfaces: []Interface{{Name: "eth0", Kind: Physical, Subnets: []Subnet{{Type: DHCP4}}}}}},
		{"v1 empty", "network: {version: 1, config: []}", &Config{Version: 1}},
		{"v1 subnet types", `version: 1
config:
- type: physical
  name: eth0
  subnets:
  - {type: ipv6_dhcpv6-stateless}
  - {type: ipv6_dhcpv6-stateful}
  - {type: static, address: 10.0.0.1, prefix: 8}
  - {type: static, address: 10.0.0.2/255.255.0.0, netmask: 255.0.0.0}
  - {type: static6, address: "fd00::1"}
  - {type: dhcp4, gateway: 10.0.0.254, routes: [{destination: "fd01::/48", gateway: "fd00::fe"}]}
`, &Config{Version: 1, Interfaces: []Interface{{Name: "eth0", Kind: Physical, Subnets: []Subnet{
			{Type: DHCPv6Stateless}, {Type: DHCPv6Stateful},
			{Type: Static, Address: pfx("10.0.0.1/8")}, {Type: Static, Address: pfx("10.0.0.2/16")},
			{Type: Static, Address: pfx("fd00::1/64")},
			{Type: DHCP4, Gateway: ip("10.0.0.254"), Routes: []Route{{To: pfx("fd01::/48"), Via: ip("fd00::fe")}}},
		}}}}},
		{"v2 minimal", "version: 2\nethernets:\n  eth0: {dhcp4: on}\n",
			&Config{Version: 2, Interfaces: []Interface{{Name: "eth0", Kind: Physical, NoRename: true, Subnets: []Subnet{{Type: DHCP4}}}}}},
		{"v2 empty sections and wifis", "network:\n  version: 2\n  ethernets: {}\n  wifis: {wlan0: {dhcp4: true}}\n", &Config{Version: 2, Ignored: []string{"network.wifis"}}},
		{"v2 alias", "version: 2\nethernets:\n  a: &x {dhcp4: true, match: {macaddress: '52:54:00:00:00:0A'}, set-name: a}\n  b: *x\n",
			&Config{Version: 2, Interfaces: []Interface{
				{Name: "a", Kind: Physical, MAC: "52:54:00:00:00:0a", Subnets: []Subnet{{Type: DHCP4}}},
				{Name: "a", Kind: Physical, MAC: "52:54:00:00:00:0a", Subnets: []Subnet{{Type: DHCP4}}},
			}}},
		{"v2 address mapping form and default v6 route", `version: 2
ethernets:
  eth0:
    addresses:
      - "2001:db8::2/64": {label: x}
    routes: [{to: default, via: "2001:db8::1"}]
`, &Config{Version: 2, Interfaces: []Interface{{Name: "eth0", Kind: Physical, NoRename: true, Subnets: []Subnet{
			{Type: Static, Address: pfx("2001:db8::2/64"), Routes: []Route{{To: pfx("::/0"), Via: ip("2001:db8::1")}}}}}},
			Ignored: []string{"ethernets.eth0.addresses[0].label"}}},
		{"v1 subnet metric", "version: 1\nconfig:\n- type: physical\n  name: e\n  subnets: [{type: dhcp, metric: 300}, {type: static, address: 10.0.0.2/24, gateway: 10.0.0.1, metric: '0'}]\n",
			&Config{Version: 1, Interfaces: []Interface{{Name: "e", Kind: Physical, Subnets: []Subnet{
				{Type: DHCP4, Metric: 300}, {Type: Static, Address: pfx("10.0.0.2/24"), Gateway: ip("10.0.0.1")}}}}}},
		{"v2 dhcp overrides", `version: 2
ethernets:
  eth0:
    dhcp4: yes
    dhcp4-overrides: {route-metric: 200, use-dns: off, use-ntp: false, use-hostname: true, use-mtu: y, use-routes: no, send-hostname: on, use-domains: route, hostname: web1}
    dhcp6: true
    dhcp6-overrides: {use-dns: no, use-domains: true, route-metric: 300}
  eth1:
    dhcp6-overrides: {use-dns: false}
`, &Config{Version: 2, Interfaces: []Interface{
			{Name: "eth0", Kind: Physical, NoRename: true,
				DHCP4Overrides: &DHCPOverrides{UseDNS: boolp(false), UseNTP: boolp(false), UseHostname: boolp(true), UseMTU: boolp(true),
					UseRoutes: boolp(false), SendHostname: boolp(true), UseDomains: "route", Hostname: "web1"},
				DHCP6Overrides: &DHCPOverrides{UseDNS: boolp(false), UseDomains: "true"},
				Subnets:        []Subnet{{Type: DHCP4, Metric: 200}, {Type: DHCP6, Metric: 300}}},
			// Overrides without their DHCP are ignored, as in cloud-init.
			{Name: "eth1", Kind: Physical, NoRename: true},
		}}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseYAML([]byte(tt.in))
			if err != nil {
				t.Fatal(err)
			}
			checkConfig(t, got, tt.want)
		})
	}
}

func TestParseV2LiveNames(t *testing.T) {
	in := "version: 2\nethernets:\n  id0: {match: {macaddress: '52:54:00:00:00:01'}, dhcp4: true}\nvlans:\n  v: {id: 3, link: id0}\n"
	got, err := Parse("yaml", []byte(in), map[string]string{"52:54:00:00:00:01": "ens3"})
	if err != nil {
		t.Fatal(err)
	}
	checkConfig(t, got, &Config{Version: 2, Interfaces: []Interface{
		{Name: "ens3", Kind: Physical, MAC: "52:54:00:00:00:01", NoRename: true, Subnets: []Subnet{{Type: DHCP4}}},
		{Name: "v", Kind: VLAN, VLAN: &VLANConfig{ID: 3, Link: "ens3"}},
	}})
	if m := got.RenameMap(); len(m) != 0 {
		t.Errorf("RenameMap = %v, want empty (no set-name)", m)
	}
}

func TestParseYAMLErrors(t *testing.T) {
	for _, tt := range []struct {
		name string
		in   string
		want []string
	}{
		{"syntax", "network:\n  version: 1\n   config: x\n", []string{"network-config: yaml: line 3"}},
		{"empty", "", []string{"network-config: empty document"}},
		{"not a mapping", "- 1\n", []string{"line 1: want a mapping, have a list"}},
		{"no version", "network: {config: []}", []string{"line 1: network: no version"}},
		{"bad version", "version: 3\n", []string{`line 1: version: unsupported version "3"`}},
		{"v1 no config", "version: 1\n", []string{"version 1 without config"}},
		{"v1 config not list", "version: 1\nconfig: {a: 1}\n", []string{"line 2: config: want a list, have a mapping"}},
		{"v1 unknown type", "version: 1\nconfig:\n- {type: wifi, name: w0}\n", []string{`line 3: config[0] (w0): unknown type "wifi"`}},
		{"v1 no type", "version: 1\nconfig:\n- {name: w0}\n", []string{`config[0] (w0): no type`}},
		{"v1 no name", "version: 1\nconfig:\n- {type: physical}\n", []string{`config[0]: physical without name`}},
		{"v1 bad mac", "version: 1\nconfig:\n- {type: physical, name: e, mac_address: zz}\n", []string{`config[0] (e).mac_address: "zz": invalid MAC`}},
		{"v1 bad mtu", "version: 1\nconfig:\n- {type: physical, name: e, mtu: [1]}\n", []string{`config[0] (e).mtu: want a scalar, have a list`}},
		{"v1 bond no members", "version: 1\nconfig:\n- {type: bond, name: b, params: {}}\n", []string{`config[0] (b): bond without bond_interfaces`}},
		{"v1 vlan no link", "version: 1\nconfig:\n- {type: vlan, name: v, vlan_id: 3}\n", []string{`config[0] (v): vlan without vlan_link`}},
		{"v1 vlan no id", "version: 1\nconfig:\n- {type: vlan, name: v, vlan_link: e}\n", []string{`config[0] (v): vlan without vlan_id`}},
		{"v1 vlan id", "version: 1\nconfig:\n- {type: vlan, name: v, vlan_link: e, vlan_id: x}\n", []string{`config[0] (v).vlan_id: "x" is not an integer`}},
		{"v1 bridge no ports", "version: 1\nconfig:\n- {type: bridge, name: br}\n", []string{`bridge without bridge_interfaces`}},
		{"v1 bridge stp", "version: 1\nconfig:\n- {type: bridge, name: br, bridge_interfaces: [], params: {bridge_stp: maybe}}\n", []string{`params.bridge_stp: cannot convert "maybe"`}},
		{"v1 subnet type", "version: 1\nconfig:\n- type: physical\n  name: e\n  subnets: [{type: dhcp5}]\n", []string{`line 5: config[0] (e).subnets[0].type: unknown subnet type "dhcp5"`}},
		{"v1 static no address", "version: 1\nconfig:\n- type: physical\n  name: e\n  subnets: [{type: static}]\n", []string{`config[0] (e).subnets[0]: no address`}},
		{"v1 bad address", "version: 1\nconfig:\n- type: physical\n  name: e\n  subnets:\n  - type: static\n    address: 10.0.0.300/24\n", []string{`line 7: config[0] (e).subnets[0].address: "10.0.0.300/24": invalid IP`}},
		{"v1 bad netmask", "version: 1\nconfig:\n- type: physical\n  name: e\n  subnets: [{type: static, address: 10.0.0.3, netmask: 255.255.0.255}]\n", []string{`"255.255.0.255": invalid netmask`}},
		{"v1 bad dns", "version: 1\nconfig:\n- type: physical\n  name: e\n  subnets: [{type: dhcp, dns_nameservers: [1.1.1.1, x]}]\n", []string{`subnets[0].dns_nameservers[1]: "x": invalid IP`}},
		{"v1 route no destination", "version: 1\nconfig:\n- {type: route, gateway: 10.0.0.1}\n", []string{`config[0]: route without destination`}},
		{"v1 route family", "version: 1\nconfig:\n- {type: route, destination: 10.0.0.0/8, gateway: 'fe80::1'}\n", []string{`gateway fe80::1 and destination 10.0.0.0/8 are of different families`}},
		{"v1 nameserver unknown iface", "version: 1\nconfig:\n- {type: nameserver, interface: eth9, address: 1.1.1.1}\n", []string{`config[0]: nameserver for interface "eth9", which does not exist`}},
		{"v2 unknown section", "version: 2\ntunnels: {}\n", []string{`line 2: tunnels: unknown or unsupported key`}},
		{"v2 ethernets list", "version: 2\nethernets: [eth0]\n", []string{`line 2: ethernets: want a mapping, have a list`}},
		{"v2 bad address", "network:\n  version: 2\n  ethernets:\n    eth0:\n      addresses:\n        - 10.0.0.2/24\n        - 10.0.0.300/24\n",
			[]string{`network-config: line 7: network.ethernets.eth0.addresses[1]: "10.0.0.300/24": invalid IP`}},
		{"v2 addresses scalar", "version: 2\nethernets:\n  eth0: {addresses: 10.0.0.1/8}\n", []string{`ethernets.eth0.addresses: want a list, have "10.0.0.1/8"`}},
		{"v2 dhcp4 not bool", "version: 2\nethernets:\n  eth0: {dhcp4: maybe}\n", []string{`line 3: ethernets.eth0.dhcp4: "maybe" is not a boolean`}},
		{"v2 bad match mac", "version: 2\nethernets:\n  eth0: {match: {macaddress: 1}}\n", []string{`ethernets.eth0.match.macaddress: "1": invalid MAC`}},
		{"v2 bond no interfaces", "version: 2\nbonds:\n  bond0: {dhcp4: true}\n", []string{`line 3: bonds.bond0: bond without interfaces`}},
		{"v2 bond unknown param", "version: 2\nbonds:\n  bond0: {interfaces: [a], parameters: {speed: 9}}\n", []string{`bonds.bond0.parameters.speed: unknown parameter`}},
		{"v2 bridge stp", "version: 2\nbridges:\n  br0: {parameters: {stp: sometimes}}\n", []string{`bridges.br0.parameters.stp: cannot convert "sometimes"`}},
		{"v2 vlan no link", "version: 2\nvlans:\n  v1: {id: 1}\n", []string{`line 3: vlans.v1: vlan without link`}},
		{"v2 vlan no id", "version: 2\nvlans:\n  v1: {link: eth0}\n", []string{`vlans.v1: vlan without id`}},
		{"v2 vlan id range", "version: 2\nvlans:\n  v1: {link: eth0, id: 0}\n", []string{`vlans.v1.id: 0 out of range`}},
		{"v2 gateway family", "version: 2\nethernets:\n  e: {gateway4: '2001:db8::1'}\n", []string{`ethernets.e.gateway4: "2001:db8::1" is of the wrong family`}},
		{"v2 nameservers list", "version: 2\nethernets:\n  e: {nameservers: [1.1.1.1]}\n", []string{`ethernets.e.nameservers: want a mapping, have a list`}},
		{"v2 route no to", "version: 2\nethernets:\n  e: {routes: [{via: 10.0.0.1}]}\n", []string{`ethernets.e.routes[0]: route without to`}},
		{"v2 route bad via", "version: 2\nethernets:\n  e: {routes: [{to: default, via: gw}]}\n", []string{`ethernets.e.routes[0].via: "gw": invalid IP`}},
		{"v2 route metric", "version: 2\nethernets:\n  e: {routes: [{to: default, via: 10.0.0.1, metric: -1}]}\n", []string{`routes[0].metric: -1 is negative`}},
		{"v1 subnet metric", "version: 1\nconfig:\n- type: physical\n  name: e\n  subnets: [{type: dhcp, metric: -5}]\n", []string{`line 5: config[0] (e).subnets[0].metric: -5 is negative`}},
		{"v2 overrides unknown key", "version: 2\nethernets:\n  e: {dhcp4: true, dhcp4-overrides: {use-dnss: false}}\n", []string{`line 3: ethernets.e.dhcp4-overrides.use-dnss: unknown key`}},
		{"v2 overrides v4 only key", "version: 2\nethernets:\n  e: {dhcp6: true, dhcp6-overrides: {use-mtu: false}}\n", []string{`ethernets.e.dhcp6-overrides.use-mtu: is only for dhcp4-overrides`}},
		{"v2 overrides not bool", "version: 2\nethernets:\n  e: {dhcp4: true, dhcp4-overrides: {use-dns: sometimes}}\n", []string{`ethernets.e.dhcp4-overrides.use-dns: "sometimes" is not a boolean`}},
		{"v2 overrides use-domains", "version: 2\nethernets:\n  e: {dhcp4: true, dhcp4-overrides: {use-domains: maybe}}\n", []string{`ethernets.e.dhcp4-overrides.use-domains: "maybe" is not a boolean or "route"`}},
		{"v2 overrides metric", "version: 2\nethernets:\n  e: {dhcp4: true, dhcp4-overrides: {route-metric: x}}\n", []string{`ethernets.e.dhcp4-overrides.route-metric: "x" is not an integer`}},
		{"v2 overrides list", "version: 2\nethernets:\n  e: {dhcp4: true, dhcp4-overrides: [a]}\n", []string{`ethernets.e.dhcp4-overrides: want a mapping, have a list`}},
		{"duplicate key", "version: 2\nethernets:\n  e: {dhcp4: true}\n  e: {dhcp6: true}\n", []string{`duplicate key`}},
		{"alias bomb", aliasBomb(), []string{"expands to more than 65536 nodes"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c, err := ParseYAML([]byte(tt.in))
			if err == nil {
				t.Fatalf("no error; config %+v", c)
			}
			checkErr(t, err, tt.want...)
		})
	}
}

// aliasBomb is a small v1 document whose aliases expand to 300*300 routes.
func aliasBomb() string {
	var b strings.Builder
	b.WriteString("version: 1\nr: &r {destination: 10.0.0.0/8}\ns: &s {type: dhcp, routes: [")
	for i := 0; i < 300; i++ {
		b.WriteString("*r,")
	}
	b.WriteString("]}\nconfig:\n- {type: physical, name: e, subnets: [")
	for i := 0; i < 300; i++ {
		b.WriteString("*s,")
	}
	b.WriteString("]}\n")
	return b.String()
}

func FuzzParseYAML(f *testing.F) {
	for _, name := range []string{"v1_all.yaml", "v2_all.yaml"} {
		data, err := os.ReadFile("testdata/" + name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Add([]byte("network: {config: disabled}"))
	f.Add([]byte("version: 2\nethernets:\n  a: &x {dhcp4: true}\n  b: *x\nvlans: {v: {id: 1, link: a}}\n"))
	f.Add([]byte("version: 1\nconfig:\n- {type: bridge, name: br, bridge_interfaces: [e], params: {bridge_stp: on}}\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := ParseYAML(data)
		if err != nil {
			if c != nil {
				t.Fatal("config with an error")
			}
			return
		}
		checkInvariants(t, c)
	})
}
