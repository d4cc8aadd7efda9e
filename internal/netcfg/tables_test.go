package netcfg

import (
	"slices"
	"testing"
)

func TestPhysicalLinkType(t *testing.T) {
	for _, typ := range []string{"", "physical", "phy", "ethernet", "ovs", "vif", "tap", "bridge", "hw_veb",
		"hyperv", "vhostuser", "vdpa", "macvtap", "dvs", "bgpovs", "cascading"} {
		if !physicalLinkType(typ) {
			t.Errorf("physicalLinkType(%q) = false, want true", typ)
		}
	}
	for _, typ := range []string{"bond", "vlan", "Physical", "infiniband", "physical "} {
		if physicalLinkType(typ) {
			t.Errorf("physicalLinkType(%q) = true, want false", typ)
		}
	}
}

func TestV1SubnetType(t *testing.T) {
	for _, tt := range []struct {
		typ  string
		want SubnetType
		ok   bool
	}{
		{"static", Static, true}, {"static6", Static, true},
		{"dhcp", DHCP4, true}, {"dhcp4", DHCP4, true}, {"dhcp6", DHCP6, true},
		{"ipv6_slaac", SLAAC, true}, {"ipv6_dhcpv6-stateless", DHCPv6Stateless, true},
		{"ipv6_dhcpv6-stateful", DHCPv6Stateful, true}, {"manual", Manual, true},
		{"", "", false}, {"DHCP", "", false}, {"loopback", "", false},
	} {
		if got, ok := v1SubnetType(tt.typ); got != tt.want || ok != tt.ok {
			t.Errorf("v1SubnetType(%q) = %q, %v; want %q, %v", tt.typ, got, ok, tt.want, tt.ok)
		}
	}
}

func TestParamNames(t *testing.T) {
	for _, names := range [][]paramName{v2BondParams, v2BridgeParams} {
		keys := paramKeys(names)
		if !slices.IsSorted(keys) || len(slices.Compact(slices.Clone(keys))) != len(names) {
			t.Errorf("paramKeys = %v: want sorted, one per entry, no duplicates", keys)
		}
		for _, n := range names {
			if got, ok := lookupParam(names, n.v2); !ok || got != n.model {
				t.Errorf("lookupParam(%q) = %q, %v; want %q", n.v2, got, ok, n.model)
			}
		}
	}
	for _, tt := range []struct {
		names     []paramName
		key, want string
		ok        bool
	}{
		{v2BondParams, "mii-monitor-interval", "miimon", true},
		{v2BondParams, "gratuitious-arp", "num-grat-arp", true},
		{v2BondParams, "stp", "", false},
		{v2BridgeParams, "forward-delay", "fd", true},
		{v2BridgeParams, "mode", "", false},
		{nil, "mode", "", false},
	} {
		if got, ok := lookupParam(tt.names, tt.key); got != tt.want || ok != tt.ok {
			t.Errorf("lookupParam(%q) = %q, %v; want %q, %v", tt.key, got, ok, tt.want, tt.ok)
		}
	}
}
