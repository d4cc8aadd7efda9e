package render_test

import (
	"fmt"
	"sort"
	"strings"
	"testing"

	"github.com/earlyinit/earlyinit/internal/netcfg/render"
	"github.com/earlyinit/earlyinit/internal/network"
)

// fidelityCase is one input of issue 17 (accepted where it was refused,
// kept where it was dropped) and, per renderer, what the output must and
// must not hold, and what the warnings must name. A check is
// "<file suffix>|<text>": text must (or must not) be in the file whose path
// ends in the suffix; an empty suffix means any file.
type fidelityCase struct {
	name, kind, in string
	macs           map[string]string
	want, absent   map[string][]string // renderer ("*" for all) -> checks
	warn           map[string][]string // renderer ("*" for all) -> texts in the warnings
}

func macs(kv ...string) map[string]string {
	m := map[string]string{}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i+1]] = kv[i]
	}
	return m
}

func fidelityCases() []fidelityCase {
	return []fidelityCase{
		{name: "v1 infiniband", kind: "yaml", in: `version: 1
config:
  - type: infiniband
    name: ib0
    mac_address: "a0:00:02:20:fe:80:00:00:00:00:00:00:ec:0d:9a:03:00:44:35:71"
    mtu: 2044
    subnets: [{type: static, address: 10.0.0.2/24}]
  - type: physical
    name: eth0
    mac_address: "52:54:00:00:00:01"
    subnets: [{type: dhcp}]
`, want: map[string][]string{
			"networkd":        {"ib0.network|Name=ib0", "ib0.network|Address=10.0.0.2/24", "ib0.network|MTUBytes=2044", "eth0.network|DHCP=ipv4"},
			"netplan":         {"|        ib0:", "|            - 10.0.0.2/24", "|            mtu: 2044"},
			"eni":             {"|iface ib0 inet static", "|    address 10.0.0.2/24", "|iface eth0 inet dhcp"},
			"sysconfig":       {"ifcfg-ib0|TYPE=InfiniBand", "ifcfg-ib0|HWADDR=a0:00:02:20:fe:80:00:00:00:00:00:00:ec:0d:9a:03:00:44:35:71", "ifcfg-ib0|IPADDR=10.0.0.2"},
			"network-manager": {"ib0.nmconnection|type=infiniband", "ib0.nmconnection|transport-mode=datagram", "ib0.nmconnection|mtu=2044", "ib0.nmconnection|mac-address=A0:00:02:20:FE:80", "ib0.nmconnection|address1=10.0.0.2/24"},
		}, absent: map[string][]string{"networkd": {"ib0.netdev|"}}},

		{name: "network_data.json physical, unknown type, network on a missing link", kind: "network_data.json",
			in: `{"links": [{"id": "a", "type": "physical", "ethernet_mac_address": "52:54:00:00:00:01"},
			 {"id": "b", "type": "weird", "ethernet_mac_address": "52:54:00:00:00:02"}],
			 "networks": [{"id": "n1", "link": "a", "type": "ipv4_dhcp"},
			 {"id": "n2", "link": "b", "type": "ipv4", "ip_address": "10.0.1.2", "netmask": "255.255.255.0"},
			 {"id": "n3", "link": "zzz", "type": "ipv4", "ip_address": "10.9.9.9"}]}`,
			macs: macs("eth0", "52:54:00:00:00:01", "eth1", "52:54:00:00:00:02"),
			want: map[string][]string{
				"networkd":        {"eth0.network|DHCP=ipv4", "eth1.network|Address=10.0.1.2/24"},
				"netplan":         {"|            - 10.0.1.2/24", "|            dhcp4: true"},
				"eni":             {"|iface eth0 inet dhcp", "|iface eth1 inet static"},
				"sysconfig":       {"ifcfg-eth0|BOOTPROTO=dhcp", "ifcfg-eth1|IPADDR=10.0.1.2"},
				"network-manager": {"eth0.nmconnection|method=auto", "eth1.nmconnection|address1=10.0.1.2/24"},
			},
			absent: map[string][]string{"*": {"|10.9.9.9"}},
			warn:   map[string][]string{"*": {`unknown type "weird", taken as a physical NIC`, `link "zzz": no such link; network skipped`}}},

		{name: "v1 members, ports and VLAN links not defined", kind: "yaml", in: `version: 1
config:
  - {type: physical, name: eth0, mac_address: "52:54:00:00:00:01"}
  - {type: bond, name: bond0, bond_interfaces: [eth0, eth1], params: {bond-mode: active-backup}, subnets: [{type: dhcp}]}
  - {type: bridge, name: br0, bridge_interfaces: [eth2], subnets: [{type: static, address: 10.2.0.2/24}]}
  - {type: vlan, name: eth3.10, vlan_link: eth3, vlan_id: 10, subnets: [{type: dhcp}]}
`, want: map[string][]string{
			"networkd":        {"eth1.network|Bond=bond0", "eth2.network|Bridge=br0", "eth3.network|VLAN=eth3.10"},
			"netplan":         {"|        eth1: {}", "|            - eth1", "|            link: eth3"},
			"eni":             {"|iface eth1 inet manual", "|    bond-master bond0", "|iface eth2 inet manual", "|    vlan-raw-device eth3"},
			"sysconfig":       {"ifcfg-eth1|MASTER=bond0", "ifcfg-eth2|BRIDGE=br0", "ifcfg-eth3|DEVICE=eth3", "ifcfg-eth3.10|PHYSDEV=eth3"},
			"network-manager": {"eth1.nmconnection|slave-type=bond", "eth2.nmconnection|slave-type=bridge", "eth3.nmconnection|type=ethernet"},
		}, warn: map[string][]string{"*": {`interface "eth1" is used as a member or link but not defined`, `"eth2"`, `"eth3"`}}},

		{name: "v2 bond member missing from ethernets", kind: "yaml", in: `version: 2
ethernets:
  ens3: {match: {macaddress: "52:54:00:00:00:03"}, set-name: ens3}
bonds:
  bond0: {interfaces: [ens3, ens4], dhcp4: true}
`, want: map[string][]string{
			"networkd":        {"ens4.network|Bond=bond0", "ens3.network|Bond=bond0"},
			"netplan":         {"|        ens4: {}", "|            - ens4"},
			"eni":             {"|iface ens4 inet manual"},
			"sysconfig":       {"ifcfg-ens4|MASTER=bond0", "ifcfg-ens4|SLAVE=yes"},
			"network-manager": {"ens4.nmconnection|slave-type=bond"},
		}, warn: map[string][]string{"*": {`interface "ens4" is used as a member or link but not defined`}}},

		{name: "v2 nameservers.addresses as a string", kind: "yaml", in: `version: 2
ethernets:
  eth0:
    addresses: [10.0.0.2/24]
    nameservers: {addresses: "8.8.8.8 1.1.1.1", search: example.org}
`, want: map[string][]string{
			"networkd":        {"eth0.network|DNS=8.8.8.8 1.1.1.1", "eth0.network|Domains=example.org"},
			"netplan":         {"|                - 8.8.8.8", "|                - 1.1.1.1", "|                - example.org"},
			"eni":             {"|    dns-nameservers 8.8.8.8 1.1.1.1", "|    dns-search example.org"},
			"sysconfig":       {"ifcfg-eth0|DNS1=8.8.8.8", "ifcfg-eth0|DNS2=1.1.1.1", "ifcfg-eth0|DOMAIN=example.org"},
			"network-manager": {"|dns=8.8.8.8;1.1.1.1;", "|dns-search=example.org;"},
		}},

		{name: "v1 nameserver with a prefix length, host-wide, DHCP interfaces only", kind: "yaml", in: `version: 1
config:
  - {type: physical, name: eth0, mac_address: "52:54:00:00:00:01", subnets: [{type: dhcp}]}
  - {type: nameserver, address: [192.168.23.14/27, 10.0.0.53], search: [corp.example]}
`, want: map[string][]string{
			"networkd":        {"eth0.network|DNS=192.168.23.14 10.0.0.53", "eth0.network|Domains=corp.example"},
			"netplan":         {"|                - 192.168.23.14", "|                - corp.example"},
			"eni":             {"|    dns-nameservers 192.168.23.14 10.0.0.53", "|    dns-search corp.example"},
			"sysconfig":       {"resolv.conf|nameserver 192.168.23.14", "resolv.conf|search corp.example"},
			"network-manager": {"eth0.nmconnection|dns=192.168.23.14;10.0.0.53;", "eth0.nmconnection|dns-search=corp.example;"},
		}, absent: map[string][]string{"*": {"|/27"}}},

		{name: "network_data.json dns services with search", kind: "network_data.json",
			in: `{"links": [{"id": "a", "ethernet_mac_address": "52:54:00:00:00:01"}],
			 "networks": [{"id": "n", "link": "a", "type": "ipv4_dhcp"}],
			 "services": [{"type": "dns", "address": "10.0.0.53", "search": "cloud.example"}]}`,
			macs: macs("eth0", "52:54:00:00:00:01"),
			want: map[string][]string{
				"networkd":        {"eth0.network|DNS=10.0.0.53", "eth0.network|Domains=cloud.example"},
				"netplan":         {"|                - 10.0.0.53", "|                - cloud.example"},
				"eni":             {"|    dns-nameservers 10.0.0.53", "|    dns-search cloud.example"},
				"sysconfig":       {"resolv.conf|nameserver 10.0.0.53", "resolv.conf|search cloud.example"},
				"network-manager": {"eth0.nmconnection|dns=10.0.0.53;", "eth0.nmconnection|dns-search=cloud.example;"},
			}},

		{name: "v2 per-interface nameservers stay on their interface", kind: "yaml", in: `version: 2
ethernets:
  eth0:
    addresses: [10.0.0.2/24]
    nameservers: {addresses: [10.0.0.53], search: [zero.example]}
  eth1:
    addresses: [10.1.0.2/24]
  eth2:
    dhcp4: true
`, want: map[string][]string{
			"networkd":        {"eth0.network|DNS=10.0.0.53"},
			"netplan":         {"|                - 10.0.0.53", "|        eth1:\n            addresses:\n                - 10.1.0.2/24\n"},
			"eni":             {"|    dns-nameservers 10.0.0.53"},
			"sysconfig":       {"ifcfg-eth0|DNS1=10.0.0.53"},
			"network-manager": {"eth0.nmconnection|dns=10.0.0.53;"},
		}, absent: map[string][]string{
			"networkd":        {"eth1.network|10.0.0.53", "eth2.network|10.0.0.53", "eth1.network|zero.example"},
			"netplan":         {"|        eth1:\n            addresses:\n                - 10.1.0.2/24\n            nameservers"},
			"eni":             {"|lo inet loopback\n    dns"},
			"sysconfig":       {"ifcfg-eth1|10.0.0.53", "resolv.conf|"},
			"network-manager": {"eth1.nmconnection|10.0.0.53", "eth2.nmconnection|10.0.0.53", "eth1.nmconnection|zero.example"},
		}},

		{name: "v1 control manual and hotplug", kind: "yaml", in: `version: 1
config:
  - {type: physical, name: eth0, mac_address: "52:54:00:00:00:01", subnets: [{type: dhcp, control: manual}]}
  - {type: physical, name: eth1, mac_address: "52:54:00:00:00:02", subnets: [{type: dhcp, control: hotplug}]}
`, want: map[string][]string{
			"networkd":        {"eth0.network|ActivationPolicy=manual", "eth1.network|RequiredForOnline=no"},
			"netplan":         {"|            activation-mode: manual", "|            optional: true"},
			"eni":             {"|# control-manual eth0\niface eth0 inet dhcp", "|allow-hotplug eth1\niface eth1 inet dhcp"},
			"sysconfig":       {"ifcfg-eth0|ONBOOT=no", "ifcfg-eth1|HOTPLUG=yes", "ifcfg-eth1|ONBOOT=yes"},
			"network-manager": {"eth0.nmconnection|autoconnect=false"},
		}, absent: map[string][]string{
			"eni":             {"|auto eth0", "|auto eth1"},
			"network-manager": {"eth1.nmconnection|autoconnect"},
		}},

		{name: "v2 match.name glob", kind: "yaml", in: `version: 2
ethernets:
  lan:
    match: {name: "en*"}
    dhcp4: true
`, macs: macs("ens3", "52:54:00:00:00:03", "ens4", "52:54:00:00:00:04", "eth9", "52:54:00:00:00:09"),
			want: map[string][]string{
				"networkd":        {"lan.network|[Match]\nName=en*\n", "lan.network|DHCP=ipv4"},
				"netplan":         {"|        lan:\n            dhcp4: true\n            match:\n                name: en*\n"},
				"eni":             {"|iface ens3 inet dhcp", "|iface ens4 inet dhcp"},
				"sysconfig":       {"ifcfg-ens3|BOOTPROTO=dhcp", "ifcfg-ens4|BOOTPROTO=dhcp"},
				"network-manager": {"ens3.nmconnection|interface-name=ens3", "ens4.nmconnection|method=auto"},
			}, absent: map[string][]string{
				"*":       {"|eth9"},
				"netplan": {"|set-name"},
			}},

		{name: "v2 match.name glob as bond members", kind: "yaml", in: `version: 2
ethernets:
  ports: {match: {name: "en*"}}
bonds:
  bond0: {interfaces: [ports], dhcp4: true, parameters: {mode: active-backup}}
`, macs: macs("ens3", "52:54:00:00:00:03", "ens4", "52:54:00:00:00:04"),
			want: map[string][]string{
				"networkd":        {"ports.network|Name=en*", "ports.network|Bond=bond0"},
				"netplan":         {"|            interfaces:\n                - ports\n"},
				"eni":             {"|iface ens3 inet manual\n    bond-master bond0", "|iface ens4 inet manual\n    bond-master bond0"},
				"sysconfig":       {"ifcfg-ens3|MASTER=bond0", "ifcfg-ens4|MASTER=bond0", "ifcfg-ens3|SLAVE=yes", "ifcfg-ens4|SLAVE=yes"},
				"network-manager": {"ens3.nmconnection|slave-type=bond", "ens4.nmconnection|slave-type=bond"},
			}},

		{name: "v2 match.name glob with no live NIC", kind: "yaml", in: `version: 2
ethernets:
  lan: {match: {name: "en*"}, dhcp4: true}
  eth0: {dhcp4: true}
`, want: map[string][]string{
			"networkd": {"lan.network|Name=en*"},
			"netplan":  {"|                name: en*"},
		}, warn: map[string][]string{
			"eni": {`match.name (lan: "en*" matches no NIC on this system)`}, "sysconfig": {`match.name (lan:`}, "network-manager": {`match.name (lan:`},
		}},

		{name: "v2 wakeonlan", kind: "yaml", in: `version: 2
ethernets:
  eth0: {match: {macaddress: "52:54:00:00:00:01"}, set-name: eth0, wakeonlan: true, dhcp4: true}
`, want: map[string][]string{
			"netplan":         {"|            wakeonlan: true"},
			"eni":             {"|    ethernet-wol g"},
			"sysconfig":       {`ifcfg-eth0|ETHTOOL_OPTS="wol g"`},
			"network-manager": {"eth0.nmconnection|wake-on-lan=64"},
		}, warn: map[string][]string{"networkd": {"networkd cannot express, so does not render: wakeonlan (eth0: only a .link file carries it, and none is written without a root with systemd-udevd)"}}},

		{name: "v2 routing-policy", kind: "yaml", in: `version: 2
ethernets:
  eth0:
    addresses: [10.0.0.2/24]
    routing-policy:
      - {from: 10.0.0.0/24, table: 100, priority: 5}
      - {to: "2001:db8::/32", table: 200, mark: 3}
`, want: map[string][]string{
			"networkd":        {"eth0.network|[RoutingPolicyRule]\nFrom=10.0.0.0/24\nTable=100\nPriority=5\n", "eth0.network|[RoutingPolicyRule]\nTo=2001:db8::/32\nTable=200\nFirewallMark=3\n"},
			"netplan":         {"|            routing-policy:\n                - from: 10.0.0.0/24\n                  priority: 5\n                  table: 100\n"},
			"eni":             {"|    post-up ip rule add from 10.0.0.0/24 table 100 priority 5 || true", "|    post-up ip -6 rule add to 2001:db8::/32 fwmark 3 table 200 || true"},
			"sysconfig":       {"rule-eth0|from 10.0.0.0/24 table 100 priority 5\n", "rule6-eth0|to 2001:db8::/32 fwmark 3 table 200\n"},
			"network-manager": {"|routing-rule1=priority 5 from 10.0.0.0/24 table 100\n"},
		}, absent: map[string][]string{"network-manager": {"|2001:db8::/32"}},
			warn: map[string][]string{"network-manager": {"routing-policy (eth0: NetworkManager needs a rule's priority)"}}},

		{name: "v2 route table, scope and mtu", kind: "yaml", in: `version: 2
ethernets:
  eth0:
    addresses: [10.0.0.2/24]
    routes:
      - {to: 10.9.0.0/16, via: 10.0.0.1, table: 100, mtu: 1400}
      - {to: 10.8.0.0/16, scope: link}
`, want: map[string][]string{
			"networkd":        {"eth0.network|Destination=10.9.0.0/16\nGateway=10.0.0.1\nTable=100\nMTUBytes=1400\n", "eth0.network|Destination=10.8.0.0/16\nScope=link\n"},
			"netplan":         {"|                - mtu: 1400\n                  table: 100\n                  to: 10.9.0.0/16\n", "|                - scope: link\n                  to: 10.8.0.0/16\n"},
			"eni":             {"|ip route add 10.9.0.0/16 via 10.0.0.1 dev eth0 table 100 mtu 1400 || true", "|ip route add 10.8.0.0/16 dev eth0 scope link || true"},
			"sysconfig":       {"route-eth0|10.9.0.0/16 via 10.0.0.1 dev eth0 table 100 mtu 1400\n", "route-eth0|10.8.0.0/16 dev eth0 scope link\n"},
			"network-manager": {"|route1=10.9.0.0/16,10.0.0.1\nroute1_options=mtu=1400,table=100\n", "|route2=10.8.0.0/16\n"},
		}, warn: map[string][]string{"network-manager": {"routes.scope (eth0)"}}},

		{name: "v1 subnet broadcast", kind: "yaml", in: `version: 1
config:
  - {type: physical, name: eth0, subnets: [{type: static, address: 10.0.0.2/24, broadcast: 10.0.0.255}]}
`, want: map[string][]string{
			"networkd":  {"eth0.network|[Address]\nAddress=10.0.0.2/24\nBroadcast=10.0.0.255\n"},
			"eni":       {"|    broadcast 10.0.0.255"},
			"sysconfig": {"ifcfg-eth0|BROADCAST=10.0.0.255"},
		}, warn: map[string][]string{"netplan": {"broadcast (eth0)"}, "network-manager": {"broadcast (eth0)"}}},

		{name: "v2 bond parameters", kind: "yaml", in: `version: 2
ethernets:
  ens3: {match: {macaddress: "52:54:00:00:00:03"}, set-name: ens3}
bonds:
  bond0:
    interfaces: [ens3]
    dhcp4: true
    parameters: {mode: balance-rr, all-slaves-active: true, arp-all-targets: all, learn-packet-interval: 10, packets-per-slave: 2, resend-igmp: 3}
`, want: map[string][]string{
			"networkd":        {"bond0.netdev|AllSlavesActive=yes", "bond0.netdev|ARPAllTargets=all", "bond0.netdev|LearnPacketIntervalSec=10", "bond0.netdev|PacketsPerSlave=2", "bond0.netdev|ResendIGMP=3"},
			"netplan":         {"|                all-slaves-active: true", "|                arp-all-targets: all", "|                learn-packet-interval: 10", "|                packets-per-slave: 2", "|                resend-igmp: 3"},
			"eni":             {"|    bond-all-slaves-active 1", "|    bond-arp-all-targets all", "|    bond-lp-interval 10", "|    bond-packets-per-slave 2", "|    bond-resend-igmp 3"},
			"sysconfig":       {"ifcfg-bond0|all_slaves_active=1", "ifcfg-bond0|arp_all_targets=all", "ifcfg-bond0|lp_interval=10", "ifcfg-bond0|packets_per_slave=2", "ifcfg-bond0|resend_igmp=3"},
			"network-manager": {"bond0.nmconnection|all_slaves_active=1", "bond0.nmconnection|arp_all_targets=all", "bond0.nmconnection|lp_interval=10", "bond0.nmconnection|packets_per_slave=2", "bond0.nmconnection|resend_igmp=3"},
		}},
	}
}

// build runs net-convert's pipeline and returns the files by path and the
// warnings.
func build(t *testing.T, kind, in string, m map[string]string, r string) (map[string]string, []string) {
	t.Helper()
	if m == nil {
		m = map[string]string{}
	}
	res, err := network.Build(network.Input{Format: kind, Data: []byte(in), MACs: m, Renderer: r})
	if err != nil {
		t.Fatalf("%s: Build: %v", r, err)
	}
	files := map[string]string{}
	for _, f := range res.Files {
		files[f.Path] = string(f.Data)
	}
	var warns []string
	for _, n := range res.Notes {
		if n.Warning {
			warns = append(warns, n.Text)
		}
	}
	return files, warns
}

// holds tells whether check ("suffix|text") is true of files.
func holds(files map[string]string, check string) bool {
	suffix, text, _ := strings.Cut(check, "|")
	for p, data := range files {
		if strings.HasSuffix(p, suffix) && strings.Contains(data, text) {
			return true
		}
	}
	return false
}

func dump(files map[string]string) string {
	var ps []string
	for p := range files {
		ps = append(ps, p)
	}
	sort.Strings(ps)
	var b strings.Builder
	for _, p := range ps {
		fmt.Fprintf(&b, "--- %s\n%s", p, files[p])
	}
	return b.String()
}

// TestFidelity: every input of issue 17 converts with every renderer, and
// what it says is in the output or named in a warning.
func TestFidelity(t *testing.T) {
	for _, tc := range fidelityCases() {
		for _, r := range render.Names() {
			t.Run(tc.name+"/"+r, func(t *testing.T) {
				files, warns := build(t, tc.kind, tc.in, tc.macs, r)
				for _, c := range append(append([]string(nil), tc.want["*"]...), tc.want[r]...) {
					if !holds(files, c) {
						t.Errorf("missing %q", c)
					}
				}
				for _, c := range append(append([]string(nil), tc.absent["*"]...), tc.absent[r]...) {
					if holds(files, c) {
						t.Errorf("unwanted %q", c)
					}
				}
				all := strings.Join(warns, "\n")
				for _, w := range append(append([]string(nil), tc.warn["*"]...), tc.warn[r]...) {
					if !strings.Contains(all, w) {
						t.Errorf("no warning with %q; warnings:\n%s", w, all)
					}
				}
				if t.Failed() {
					t.Logf("output:\n%s", dump(files))
				}
			})
		}
	}
}
