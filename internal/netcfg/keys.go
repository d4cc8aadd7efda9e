package netcfg

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/earlyinit/earlyinit/internal/netcfg/jsonobj"
)

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
