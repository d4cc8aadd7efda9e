package netcfg_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/earlyinit/earlyinit/internal/netcfg"
	"github.com/earlyinit/earlyinit/internal/netcfg/render"
	"github.com/earlyinit/earlyinit/internal/network"
)

// keyCase shows one input key at work: with is an input using it, without
// the same input without it. A renderer renders the key when its output
// differs between the two, or names it in its warning; for an alias,
// with must render as without (the key's other spelling); a structural key
// (one the input cannot do without) is checked by every other case.
type keyCase struct {
	with, without string
	alias         bool
	structural    string // why the key needs no case of its own
	warnAs        string // the name the warning gives the key, when not its own
	macs          map[string]string
}

func v1doc(iface, subnet, more string) string {
	return "version: 1\nconfig:\n  - type: physical\n    name: eth0\n    mac_address: \"52:54:00:00:00:01\"\n" + iface +
		"    subnets:\n      - type: static\n        address: 10.0.0.2/24\n" + subnet + more
}

func v1case(iface, subnet, more string) keyCase {
	return keyCase{with: v1doc(iface, subnet, more), without: v1doc("", "", "")}
}

func v2doc(eth string) string {
	return "version: 2\nethernets:\n  eth0:\n    match: {macaddress: \"52:54:00:00:00:01\"}\n    set-name: eth0\n    addresses: [10.0.0.2/24]\n" + eth
}

func v2case(eth, without string) keyCase { return keyCase{with: v2doc(eth), without: v2doc(without)} }

func bondDoc(params string) string {
	return "version: 2\nethernets:\n  ens3: {match: {macaddress: \"52:54:00:00:00:03\"}, set-name: ens3}\nbonds:\n  bond0:\n    interfaces: [ens3]\n    dhcp4: true\n    parameters:\n      mode: active-backup\n" + params
}

func bridgeDoc(params string) string {
	return "version: 2\nethernets:\n  ens3: {match: {macaddress: \"52:54:00:00:00:03\"}, set-name: ens3}\nbridges:\n  br0:\n    interfaces: [ens3]\n    dhcp4: true\n    parameters:\n      priority: 5\n" + params
}

func ndDoc(link, network, top string) string {
	return `{"links": [{"id": "a", "ethernet_mac_address": "52:54:00:00:00:01"` + link + `}],
 "networks": [{"id": "n", "link": "a", "type": "ipv4", "ip_address": "10.0.0.2", "netmask": "255.255.255.0"` + network + `}]` + top + `}`
}

func ndCase(link, network, top string) keyCase {
	return keyCase{with: ndDoc(link, network, top), without: ndDoc("", "", ""), macs: macs("eth0", "52:54:00:00:00:01")}
}

// keyCases has a case for every key of netcfg.Keys(), by format and key.
func keyCases() map[string]map[string]keyCase {
	const dhcp = "    dhcp4: true\n"
	v1 := map[string]keyCase{
		"interface.type":              {structural: "every entry has one"},
		"interface.name":              {structural: "required"},
		"interface.subnets":           {structural: "holds the subnet keys"},
		"interface.params":            {structural: "holds params.driver and the bond and bridge parameters"},
		"interface.bond_interfaces":   {structural: "required for a bond"},
		"interface.bridge_interfaces": {structural: "required for a bridge"},
		"interface.vlan_link":         {structural: "required for a VLAN"},
		"interface.vlan_id":           {structural: "required for a VLAN"},
		"interface.mac_address": {with: strings.Replace(v1doc("", "", ""), "    mac_address: \"52:54:00:00:00:01\"\n", "    mac_address: \"52:54:00:00:00:09\"\n", 1),
			without: v1doc("", "", "")},
		"interface.mtu":           v1case("    mtu: 1400\n", "", ""),
		"interface.accept-ra":     v1case("    accept-ra: false\n", "", ""),
		"interface.wakeonlan":     v1case("    wakeonlan: true\n", "", ""),
		"interface.params.driver": v1case("    params: {driver: virtio_net}\n", "", ""),
		"subnet.type":             {structural: "every subnet has one"},
		"subnet.address":          {structural: "required for static"},
		"subnet.netmask":          {with: strings.Replace(v1doc("", "        netmask: 255.255.0.0\n", ""), "10.0.0.2/24", "10.0.0.2", 1), without: v1doc("", "", "")},
		"subnet.prefix":           {with: strings.Replace(v1doc("", "        prefix: 16\n", ""), "10.0.0.2/24", "10.0.0.2", 1), without: v1doc("", "", "")},
		"subnet.gateway":          v1case("", "        gateway: 10.0.0.1\n", ""),
		"subnet.mtu":              v1case("", "        mtu: 1400\n", ""),
		"subnet.metric":           {with: v1doc("", "        gateway: 10.0.0.1\n        metric: 50\n", ""), without: v1doc("", "        gateway: 10.0.0.1\n", "")},
		"subnet.dns_nameservers":  v1case("", "        dns_nameservers: [10.0.0.53]\n", ""),
		"subnet.dns_search":       v1case("", "        dns_search: [corp.example]\n", ""),
		"subnet.routes":           v1case("", "        routes: [{destination: 10.9.0.0/16, gateway: 10.0.0.1}]\n", ""),
		"subnet.control":          v1case("", "        control: manual\n", ""),
		"subnet.broadcast":        v1case("", "        broadcast: 10.0.0.255\n", ""),
		"route.type":              {structural: "every entry has one"},
		"route.destination":       v1case("", "", "  - {type: route, destination: 10.9.0.0/16, gateway: 10.0.0.1}\n"),
		"route.network": {with: v1doc("", "", "  - {type: route, network: 10.9.0.0/16, gateway: 10.0.0.1}\n"),
			without: v1doc("", "", "  - {type: route, destination: 10.9.0.0/16, gateway: 10.0.0.1}\n"), alias: true},
		"route.netmask": {with: v1doc("", "", "  - {type: route, destination: 10.9.0.0, netmask: 255.255.0.0, gateway: 10.0.0.1}\n"),
			without: v1doc("", "", "  - {type: route, destination: 10.9.0.0, gateway: 10.0.0.1}\n")},
		"route.prefix": {with: v1doc("", "", "  - {type: route, destination: 10.9.0.0, prefix: 16, gateway: 10.0.0.1}\n"),
			without: v1doc("", "", "  - {type: route, destination: 10.9.0.0, gateway: 10.0.0.1}\n")},
		"route.gateway": {with: v1doc("", "", "  - {type: route, destination: 10.9.0.0/16, gateway: 10.0.0.1}\n"),
			without: v1doc("", "", "  - {type: route, destination: 10.9.0.0/16}\n")},
		"route.metric": {with: v1doc("", "", "  - {type: route, destination: 10.9.0.0/16, gateway: 10.0.0.1, metric: 7}\n"),
			without: v1doc("", "", "  - {type: route, destination: 10.9.0.0/16, gateway: 10.0.0.1}\n")},
		"nameserver.type":    {structural: "every entry has one"},
		"nameserver.address": v1case("", "", "  - {type: nameserver, address: [10.0.0.53]}\n"),
		"nameserver.search":  v1case("", "", "  - {type: nameserver, search: [corp.example]}\n"),
		"nameserver.interface": {
			with:    strings.Replace(v1doc("", "", "  - {type: physical, name: eth1, subnets: [{type: static, address: 10.1.0.2/24}]}\n  - {type: nameserver, address: [10.0.0.53], interface: eth0}\n"), "type: static\n        address: 10.0.0.2/24", "type: dhcp", 1),
			without: strings.Replace(v1doc("", "", "  - {type: physical, name: eth1, subnets: [{type: static, address: 10.1.0.2/24}]}\n  - {type: nameserver, address: [10.0.0.53]}\n"), "type: static\n        address: 10.0.0.2/24", "type: dhcp", 1)},
	}
	v2 := map[string]keyCase{
		"match.macaddress": {with: v2doc(""), without: strings.Replace(v2doc(""), "match: {macaddress: \"52:54:00:00:00:01\"}", "match: {driver: e1000}", 1)},
		"match.driver":     {with: strings.Replace(v2doc(""), "match: {macaddress: \"52:54:00:00:00:01\"}", "match: {macaddress: \"52:54:00:00:00:01\", driver: e1000}", 1), without: v2doc("")},
		"match.name": {with: "version: 2\nethernets:\n  lan: {match: {name: \"en*\"}, dhcp4: true}\n", without: "version: 2\nethernets:\n  lan: {dhcp4: true}\n",
			macs: macs("ens3", "52:54:00:00:00:03")},
		"routes.to":                      {structural: "required"},
		"routes.via":                     v2case("    routes: [{to: 10.9.0.0/16, via: 10.0.0.1}]\n", "    routes: [{to: 10.9.0.0/16}]\n"),
		"routes.metric":                  v2case("    routes: [{to: 10.9.0.0/16, via: 10.0.0.1, metric: 5}]\n", "    routes: [{to: 10.9.0.0/16, via: 10.0.0.1}]\n"),
		"routes.table":                   v2case("    routes: [{to: 10.9.0.0/16, via: 10.0.0.1, table: 5}]\n", "    routes: [{to: 10.9.0.0/16, via: 10.0.0.1}]\n"),
		"routes.scope":                   v2case("    routes: [{to: 10.9.0.0/16, scope: link}]\n", "    routes: [{to: 10.9.0.0/16}]\n"),
		"routes.mtu":                     v2case("    routes: [{to: 10.9.0.0/16, via: 10.0.0.1, mtu: 1400}]\n", "    routes: [{to: 10.9.0.0/16, via: 10.0.0.1}]\n"),
		"routing-policy.from":            v2case("    routing-policy: [{from: 10.0.0.0/24, to: 10.9.0.0/16, table: 5, priority: 9}]\n", "    routing-policy: [{to: 10.9.0.0/16, table: 5, priority: 9}]\n"),
		"routing-policy.to":              v2case("    routing-policy: [{from: 10.0.0.0/24, to: 10.9.0.0/16, table: 5, priority: 9}]\n", "    routing-policy: [{from: 10.0.0.0/24, table: 5, priority: 9}]\n"),
		"routing-policy.table":           v2case("    routing-policy: [{from: 10.0.0.0/24, table: 5, priority: 9}]\n", "    routing-policy: [{from: 10.0.0.0/24, priority: 9}]\n"),
		"routing-policy.priority":        v2case("    routing-policy: [{from: 10.0.0.0/24, priority: 5}]\n", "    routing-policy: [{from: 10.0.0.0/24}]\n"),
		"routing-policy.mark":            v2case("    routing-policy: [{from: 10.0.0.0/24, mark: 5, priority: 9}]\n", "    routing-policy: [{from: 10.0.0.0/24, priority: 9}]\n"),
		"routing-policy.type-of-service": v2case("    routing-policy: [{from: 10.0.0.0/24, type-of-service: 8, priority: 9}]\n", "    routing-policy: [{from: 10.0.0.0/24, priority: 9}]\n"),
		"nameservers.addresses":          v2case("    nameservers: {addresses: [10.0.0.53]}\n", ""),
		"nameservers.search":             v2case("    nameservers: {search: [corp.example]}\n", ""),
	}
	for _, sec := range []string{"ethernets", "bonds", "bridges", "vlans"} {
		var doc func(string) string
		switch sec {
		case "ethernets":
			doc = v2doc
		case "bonds":
			doc = func(s string) string {
				return "version: 2\nethernets:\n  ens3: {match: {macaddress: \"52:54:00:00:00:03\"}, set-name: ens3}\nbonds:\n  eth0:\n    interfaces: [ens3]\n    addresses: [10.0.0.2/24]\n" + s
			}
		case "bridges":
			doc = func(s string) string {
				return "version: 2\nethernets:\n  ens3: {match: {macaddress: \"52:54:00:00:00:03\"}, set-name: ens3}\nbridges:\n  eth0:\n    interfaces: [ens3]\n    addresses: [10.0.0.2/24]\n" + s
			}
		case "vlans":
			doc = func(s string) string {
				return "version: 2\nethernets:\n  ens3: {match: {macaddress: \"52:54:00:00:00:03\"}, set-name: ens3}\nvlans:\n  eth0:\n    id: 5\n    link: ens3\n    addresses: [10.0.0.2/24]\n" + s
			}
		}
		c := func(with, without string) keyCase { return keyCase{with: doc(with), without: doc(without)} }
		for k, kc := range map[string]keyCase{
			"mtu":             c("    mtu: 1400\n", ""),
			"accept-ra":       c("    accept-ra: false\n", ""),
			"optional":        c("    optional: true\n", ""),
			"dhcp4":           c(dhcp, ""),
			"dhcp6":           c("    dhcp6: true\n", ""),
			"dhcp4-overrides": {structural: "holds the dhcp-overrides keys"},
			"dhcp6-overrides": {structural: "holds the dhcp-overrides keys"},
			"addresses":       {with: doc(""), without: strings.Replace(doc(""), "    addresses: [10.0.0.2/24]\n", "", 1)},
			"gateway4":        c("    gateway4: 10.0.0.1\n", ""),
			"gateway6":        c("    gateway6: 2001:db8::1\n", ""),
			"nameservers":     {structural: "holds the nameservers keys"},
			"routes":          c("    routes: [{to: 10.9.0.0/16, via: 10.0.0.1}]\n", ""),
			"routing-policy":  c("    routing-policy: [{from: 10.0.0.0/24, table: 5}]\n", ""),
			"macaddress":      c("    macaddress: \"52:54:00:00:00:77\"\n", ""),
			"match":           {structural: "holds the match keys"},
			"set-name":        {with: v2doc(""), without: strings.Replace(v2doc(""), "    set-name: eth0\n", "", 1), macs: map[string]string{}},
			"wakeonlan":       c("    wakeonlan: true\n", ""),
			"interfaces":      {structural: "required"},
			"parameters":      {structural: "holds the bond and bridge parameters"},
			"id":              {structural: "required"},
			"link":            {structural: "required"},
		} {
			if containsKey(netcfg.Keys()["v2"], sec+"."+k) {
				v2[sec+"."+k] = kc
			}
		}
	}
	for k, v := range map[string]string{"ad-select": "bandwidth", "arp-interval": "100", "arp-ip-target": "[10.0.0.1]", "arp-ip-targets": "[10.0.0.1]",
		"arp-validate": "all", "down-delay": "200", "fail-over-mac-policy": "active", "lacp-rate": "fast", "mii-monitor-interval": "100",
		"min-links": "2", "gratuitous-arp": "3", "gratuitious-arp": "3", "primary": "ens3", "primary-reselect-policy": "better",
		"up-delay": "200", "transmit-hash-policy": "layer3+4", "learn-packet-interval": "10", "packets-per-slave": "2",
		"all-slaves-active": "true", "arp-all-targets": "all", "resend-igmp": "3"} {
		v2["bonds.parameters."+k] = keyCase{with: bondDoc("      " + k + ": " + v + "\n"), without: bondDoc("")}
	}
	// NetworkManager takes ARP targets only with an ARP interval.
	for _, k := range []string{"arp-ip-target", "arp-ip-targets"} {
		v2["bonds.parameters."+k] = keyCase{with: bondDoc("      arp-interval: 100\n      " + k + ": [10.0.0.1]\n"), without: bondDoc("      arp-interval: 100\n")}
	}
	v2["bonds.parameters.mode"] = keyCase{with: strings.Replace(bondDoc(""), "active-backup", "802.3ad", 1), without: strings.Replace(bondDoc(""), "      mode: active-backup\n", "", 1)}
	for k, v := range map[string]string{"ageing-time": "50", "forward-delay": "5", "hello-time": "3", "max-age": "12",
		"path-cost": "{ens3: 50}", "port-priority": "{ens3: 20}", "stp": "true"} {
		v2["bridges.parameters."+k] = keyCase{with: bridgeDoc("      " + k + ": " + v + "\n"), without: bridgeDoc(""),
			warnAs: map[string]string{"hello-time": "hello", "max-age": "maxage", "path-cost": "pathcost", "port-priority": "portprio",
				"ageing-time": "ageing", "forward-delay": "fd"}[k]}
	}
	v2["bridges.parameters.priority"] = keyCase{with: bridgeDoc(""), without: strings.Replace(bridgeDoc(""), "      priority: 5\n", "", 1)}
	ov := func(o string) keyCase {
		return keyCase{with: v2doc(dhcp + "    dhcp4-overrides: {" + o + "}\n"), without: v2doc(dhcp)}
	}
	v2["dhcp-overrides.use-dns"] = ov("use-dns: false")
	v2["dhcp-overrides.use-ntp"] = ov("use-ntp: false")
	v2["dhcp-overrides.use-hostname"] = ov("use-hostname: false")
	v2["dhcp-overrides.use-mtu"] = ov("use-mtu: false")
	v2["dhcp-overrides.use-routes"] = ov("use-routes: false")
	v2["dhcp-overrides.send-hostname"] = ov("send-hostname: false")
	v2["dhcp-overrides.use-domains"] = ov("use-domains: route")
	v2["dhcp-overrides.hostname"] = ov("hostname: web1")
	v2["dhcp-overrides.route-metric"] = ov("route-metric: 300")

	nd := map[string]keyCase{
		"links.id":                   {structural: "required"},
		"links.type":                 {structural: "checked by the bond and VLAN keys"},
		"links.bond_links":           {structural: "required for a bond"},
		"links.vlan_link":            {structural: "required for a VLAN"},
		"links.vlan_id":              {structural: "required for a VLAN"},
		"links.vif_id":               {structural: "names the Neutron port only; no setting"},
		"links.ethernet_mac_address": {with: strings.Replace(ndDoc("", "", ""), "52:54:00:00:00:01", "52:54:00:00:00:09", 1), without: ndDoc("", "", ""), macs: macs("eth0", "52:54:00:00:00:01", "eth9", "52:54:00:00:00:09")},
		"links.name":                 ndCase(`, "name": "lan0"`, "", ""),
		"links.mtu":                  ndCase(`, "mtu": 1400`, "", ""),
		"links.bond_*": {with: `{"links": [{"id": "p", "ethernet_mac_address": "52:54:00:00:00:01"}, {"id": "b", "type": "bond", "bond_links": ["p"], "bond_mode": "802.3ad"}], "networks": [{"id": "n", "link": "b", "type": "ipv4_dhcp"}]}`,
			without: `{"links": [{"id": "p", "ethernet_mac_address": "52:54:00:00:00:01"}, {"id": "b", "type": "bond", "bond_links": ["p"]}], "networks": [{"id": "n", "link": "b", "type": "ipv4_dhcp"}]}`,
			macs:    macs("eth0", "52:54:00:00:00:01")},
		"links.vlan_mac_address": {with: `{"links": [{"id": "p", "ethernet_mac_address": "52:54:00:00:00:01"}, {"id": "v", "type": "vlan", "vlan_link": "p", "vlan_id": 5, "vlan_mac_address": "52:54:00:00:00:55"}], "networks": [{"id": "n", "link": "v", "type": "ipv4_dhcp"}]}`,
			without: `{"links": [{"id": "p", "ethernet_mac_address": "52:54:00:00:00:01"}, {"id": "v", "type": "vlan", "vlan_link": "p", "vlan_id": 5}], "networks": [{"id": "n", "link": "v", "type": "ipv4_dhcp"}]}`,
			macs:    macs("eth0", "52:54:00:00:00:01")},
		"networks.id":              {structural: "names the network in messages only"},
		"networks.network_id":      {structural: "names the Neutron network only; no setting"},
		"networks.link":            {structural: "required"},
		"networks.type":            {structural: "required"},
		"networks.ip_address":      {structural: "required for static types"},
		"networks.netmask":         {with: ndDoc("", "", ""), without: strings.Replace(ndDoc("", "", ""), `, "netmask": "255.255.255.0"`, `, "netmask": "255.255.0.0"`, 1), macs: macs("eth0", "52:54:00:00:00:01")},
		"networks.gateway":         ndCase("", `, "gateway": "10.0.0.1"`, ""),
		"networks.routes":          ndCase("", `, "routes": [{"network": "10.9.0.0", "netmask": "255.255.0.0", "gateway": "10.0.0.1"}]`, ""),
		"networks.dns_nameservers": ndCase("", `, "dns_nameservers": ["10.0.0.53"]`, ""),
		"networks.dns_search":      ndCase("", `, "dns_search": ["corp.example"]`, ""),
		"networks.services":        ndCase("", `, "services": [{"type": "dns", "address": "10.0.0.53"}]`, ""),
		"routes.network":           {structural: "required"},
		"routes.netmask": {with: ndDoc("", `, "routes": [{"network": "10.9.0.0", "netmask": "255.255.0.0", "gateway": "10.0.0.1"}]`, ""),
			without: ndDoc("", `, "routes": [{"network": "10.9.0.0", "gateway": "10.0.0.1"}]`, ""), macs: macs("eth0", "52:54:00:00:00:01")},
		"routes.gateway": {with: ndDoc("", `, "routes": [{"network": "10.9.0.0/16", "gateway": "10.0.0.1"}]`, ""),
			without: ndDoc("", `, "routes": [{"network": "10.9.0.0/16"}]`, ""), macs: macs("eth0", "52:54:00:00:00:01")},
		"routes.metric": {with: ndDoc("", `, "routes": [{"network": "10.9.0.0/16", "gateway": "10.0.0.1", "metric": 5}]`, ""),
			without: ndDoc("", `, "routes": [{"network": "10.9.0.0/16", "gateway": "10.0.0.1"}]`, ""), macs: macs("eth0", "52:54:00:00:00:01")},
		"services.type":    {structural: "required"},
		"services.address": ndCase("", "", `, "services": [{"type": "dns", "address": "10.0.0.53"}]`),
		"services.search":  ndCase("", "", `, "services": [{"type": "dns", "address": "10.0.0.53", "search": "corp.example"}]`),
	}
	return map[string]map[string]keyCase{"v1": v1, "v2": v2, "network_data.json": nd}
}

// fakeRoot is a root with systemd-udevd, for the persistent NIC names.
type fakeRoot struct{}

func (fakeRoot) Exists(name string) bool { return strings.HasSuffix(name, "systemd-udevd") }
func (fakeRoot) ReadFile(string) ([]byte, error) {
	return nil, errors.New("none")
}

// convertAll is Build with a root (so the NIC renames count) and the
// renderer named: the files as one text, and the warnings.
func convertAll(kind, in string, m map[string]string, r string) (string, string, error) {
	if m == nil {
		m = macs("eth0", "52:54:00:00:00:01", "ens3", "52:54:00:00:00:03")
	}
	res, err := network.Build(network.Input{Format: kind, Data: []byte(in), MACs: m, Renderer: r, Root: fakeRoot{}})
	if err != nil {
		return "", "", err
	}
	var b, w strings.Builder
	for _, f := range res.Files {
		fmt.Fprintf(&b, "--- %s\n%s", f.Path, f.Data)
	}
	for _, n := range res.Notes {
		if n.Warning {
			w.WriteString(n.Text + "\n")
		}
	}
	return b.String(), w.String(), nil
}

// TestEveryKeyRenderedOrLost walks every key the parsers read
// (netcfg.Keys): each has a case, and with every renderer each is either
// rendered (the output changes with it) or named in the renderer's
// warning. A key added to a parser without a case here fails the test.
func TestEveryKeyRenderedOrLost(t *testing.T) {
	cases := keyCases()
	for format, keys := range netcfg.Keys() {
		kind := "yaml"
		if format == "network_data.json" {
			kind = format
		}
		for _, key := range keys {
			kc, ok := cases[format][key]
			if !ok {
				t.Errorf("%s key %q: no case in keyCases", format, key)
				continue
			}
			if kc.structural != "" {
				continue
			}
			leaf := key[strings.LastIndex(key, ".")+1:]
			if kc.warnAs != "" {
				leaf = kc.warnAs
			}
			for _, r := range render.Names() {
				with, warn, err := convertAll(kind, kc.with, kc.macs, r)
				if err != nil {
					t.Errorf("%s %s/%s: with: %v", format, key, r, err)
					continue
				}
				without, _, err := convertAll(kind, kc.without, kc.macs, r)
				if err != nil {
					t.Errorf("%s %s/%s: without: %v", format, key, r, err)
					continue
				}
				switch {
				case kc.alias && with != without:
					t.Errorf("%s %s/%s: renders unlike its other spelling:\n%s\nwant\n%s", format, key, r, with, without)
				case !kc.alias && with == without && !strings.Contains(warn, leaf):
					t.Errorf("%s %s/%s: neither rendered nor warned about; output:\n%s\nwarnings: %s", format, key, r, with, warn)
				}
			}
		}
	}
	for format, cs := range cases {
		for key := range cs {
			if !containsKey(netcfg.Keys()[format], key) {
				t.Errorf("%s: case for %q, which the parsers do not list", format, key)
			}
		}
	}
}

func containsKey(keys []string, k string) bool {
	for _, x := range keys {
		if x == k {
			return true
		}
	}
	return false
}

// TestUnknownKeysWarned: a key the parsers do not know is named in every
// renderer's warning, not dropped silently.
func TestUnknownKeysWarned(t *testing.T) {
	for _, tc := range []struct{ kind, in, key string }{
		{"yaml", v2doc("    link-local: [ipv4]\n"), "ethernets.eth0.link-local"},
		{"yaml", v2doc("    macaddress: \"52:54:00:00:00:99\"\n"), "ethernets.eth0.macaddress"},
		{"yaml", "version: 2\nethernets:\n  eth0: {dhcp4: true}\nwifis:\n  wl0: {dhcp4: true}\n", "wifis"},
		{"yaml", v2doc("    gateway6: 2001:db8::1\n"), "ethernets.eth0.gateway6 (no IPv6 address)"},
		{"yaml", v1doc("", "        pointopoint: 10.0.0.9\n", ""), "config[0] (eth0).subnets[0].pointopoint"},
		{"network_data.json", ndDoc("", `, "broadcast": "10.0.0.255"`, ""), "networks[0].broadcast"},
	} {
		for _, r := range render.Names() {
			_, warn, err := convertAll(tc.kind, tc.in, nil, r)
			if err != nil {
				t.Errorf("%s/%s: %v", tc.key, r, err)
				continue
			}
			if !strings.Contains(warn, tc.key) || strings.Count(warn, r+" cannot express") != 1 {
				t.Errorf("%s/%s: want one warning line naming it, have:\n%s", tc.key, r, warn)
			}
		}
	}
}

// macs makes a MAC -> name map from name, MAC pairs.
func macs(kv ...string) map[string]string {
	m := map[string]string{}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i+1]] = kv[i]
	}
	return m
}
