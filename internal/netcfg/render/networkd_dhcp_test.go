package render

import (
	"testing"

	"github.com/earlyinit/earlyinit/internal/netcfg"
)

// TestNetworkdDHCPKey checks cloud-init's dhcp_config_maps for every
// boolean override the model has.
func TestNetworkdDHCPKey(t *testing.T) {
	want := map[string]string{"use-dns": "UseDNS", "use-ntp": "UseNTP", "use-hostname": "UseHostname",
		"use-mtu": "UseMTU", "use-routes": "UseRoutes", "send-hostname": "SendHostname"}
	if len(netcfg.DHCPOverrideFlags) != len(want) {
		t.Errorf("DHCPOverrideFlags %v: want the %d keys of dhcp_config_maps", netcfg.DHCPOverrideFlags, len(want))
	}
	for _, k := range netcfg.DHCPOverrideFlags {
		if got := networkdDHCPKey(k); got != want[k] {
			t.Errorf("networkdDHCPKey(%q) = %q, want %q", k, got, want[k])
		}
	}
	if got := networkdDHCPKey("use-domains"); got != "" {
		t.Errorf("networkdDHCPKey(use-domains) = %q, want \"\" (not a boolean flag)", got)
	}
}
