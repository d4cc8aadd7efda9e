package netcfg

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/earlyinit/earlyinit/internal/netcfg/jsonobj"
)

// Keys lists every key the parsers read, by format ("v1", "v2",
// "network_data.json"), as "<where>.<key>": what a renderer must either
// render or name in its warning (render.Lost). Keys not listed here end
// in Config.Ignored when met. Bond and bridge parameters are listed by
// their input names.
func Keys() map[string][]string {
	pre := func(p string, ks []string) []string {
		out := make([]string, len(ks))
		for i, k := range ks {
			out[i] = p + "." + k
		}
		return out
	}
	v1 := slices.Concat(pre("interface", v1InterfaceKeys()), pre("subnet", v1SubnetKeys()),
		pre("route", v1RouteKeys()), pre("nameserver", v1NameserverKeys()), []string{"interface.params.driver"})
	var v2 []string
	for _, sec := range []string{"ethernets", "bonds", "bridges", "vlans"} {
		v2 = append(v2, pre(sec, v2DeviceKeys(sec))...)
	}
	v2 = slices.Concat(v2, pre("match", v2MatchKeys()), pre("routes", v2RouteKeys()),
		pre("routing-policy", v2RuleKeys()), pre("nameservers", []string{"addresses", "search"}),
		pre("dhcp-overrides", append(append([]string(nil), DHCPOverrideFlags...), "use-domains", "hostname", "route-metric")),
		pre("bonds.parameters", paramKeys(v2BondParams)), pre("bridges.parameters", paramKeys(v2BridgeParams)))
	nd := slices.Concat(pre("links", ndLinkKeys()), pre("networks", ndNetworkKeys()),
		pre("routes", ndRouteKeys()), pre("services", ndServiceKeys()))
	return map[string][]string{"v1": v1, "v2": v2, "network_data.json": nd}
}

func v1NameserverKeys() []string { return []string{"type", "address", "search", "interface"} }

func v2MatchKeys() []string { return []string{"macaddress", "driver", "name"} }

func v2RouteKeys() []string { return []string{"to", "via", "metric", "table", "scope", "mtu"} }

func v2RuleKeys() []string {
	return []string{"from", "to", "table", "priority", "mark", "type-of-service"}
}

// ndLinkKeys are the link keys read; "bond_*" stands for every bond
// parameter; vif_id only names the port.
func ndLinkKeys() []string {
	return []string{"id", "type", "ethernet_mac_address", "name", "mtu", "bond_links", "bond_*", "vlan_link",
		"vlan_id", "vlan_mac_address", "vif_id"}
}

// ndNetworkKeys are the network keys read; network_id only names the
// Neutron network.
func ndNetworkKeys() []string {
	return []string{"id", "link", "type", "ip_address", "netmask", "gateway", "routes", "dns_nameservers",
		"dns_search", "services", "network_id"}
}

func ndRouteKeys() []string { return []string{"network", "netmask", "gateway", "metric"} }

func ndServiceKeys() []string { return []string{"type", "address", "search"} }

// ndIgnored returns the keys of links, networks (and their routes and
// services) and services that the parser does not read.
func ndIgnored(links, networks, services []jsonobj.Object) []string {
	var out []string
	check := func(o jsonobj.Object, known []string, where string) {
		for _, k := range sortedKeysAny(o) {
			if slices.Contains(known, k) || slices.Contains(known, "bond_*") && strings.HasPrefix(k, "bond") {
				continue
			}
			out = append(out, where+"."+k)
		}
	}
	for i, l := range links {
		check(l, ndLinkKeys(), fmt.Sprintf("links[%d]", i))
	}
	for i, n := range networks {
		where := fmt.Sprintf("networks[%d]", i)
		check(n, ndNetworkKeys(), where)
		for _, sub := range []struct {
			key   string
			known []string
		}{{"routes", ndRouteKeys()}, {"services", ndServiceKeys()}} {
			objs, _ := n.Objects(sub.key)
			for j, o := range objs {
				check(o, sub.known, fmt.Sprintf("%s.%s[%d]", where, sub.key, j))
			}
		}
	}
	for i, s := range services {
		check(s, ndServiceKeys(), fmt.Sprintf("services[%d]", i))
	}
	return out
}

func sortedKeysAny(m map[string]any) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}
