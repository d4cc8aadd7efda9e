package netcfg

import "slices"

// ParseYAML is parseYAML with no live system.
func ParseYAML(data []byte) (*Config, error) {
	return parseYAML(data, nil)
}

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
