package azure

import (
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/netip"
	"strings"

	"github.com/earlyinit/earlyinit/internal/scalar"
)

// nicDriver is the driver of Azure's synthetic NICs. The network
// configuration matches it besides the MAC: with accelerated networking a
// virtual function (mlx4/mlx5) has the same MAC and must be left alone.
const nicDriver = "hv_netvsc"

// v2Ethernet is a network config v2 ethernets entry as cloud-init's
// generate_network_config_from_instance_network_metadata writes one.
type v2Ethernet struct {
	Match         map[string]string `json:"match"`
	SetName       string            `json:"set-name"`
	DHCP4         bool              `json:"dhcp4"`
	DHCP4Override map[string]any    `json:"dhcp4-overrides"`
	DHCP6         bool              `json:"dhcp6"`
	DHCP6Override map[string]any    `json:"dhcp6-overrides,omitempty"`
	Addresses     []string          `json:"addresses,omitempty"`
}

// Network turns IMDS's network object (its "interface" list) into network
// config v2 (JSON, which is YAML), with cloud-init's defaults
// (apply_network_config, apply_network_config_for_secondary_ips and
// apply_network_config_set_name all on): NIC i is eth<i>, matched by MAC
// and driver (nicDriver), with DHCPv4 (and DHCPv6 when it has IPv6
// addresses) at route metric 100 × (i + 1) and no DNS from the secondary
// NICs, and its addresses past the first of each family as static ones
// with the family's first subnet's prefix (24 or 128 by default). A NIC
// without any address is left out. nil without error: no NIC to
// configure (the fallback applies). where names the object in errors.
func Network(where string, nw any) ([]byte, error) {
	m, ok := nw.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("%s: want an object, got %s", where, scalar.JSONNoun(nw))
	}
	list, ok := m["interface"].([]any)
	if !ok {
		return nil, fmt.Errorf("%s.interface: want a list, got %s", where, scalar.JSONNoun(m["interface"]))
	}
	eths := map[string]v2Ethernet{}
	for i, v := range list {
		at := fmt.Sprintf("%s.interface[%d]", where, i)
		intf, ok := v.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("%s: want an object, got %s", at, scalar.JSONNoun(v))
		}
		ms, _ := intf["macAddress"].(string)
		mac, err := normalizeMAC(ms)
		if err != nil {
			return nil, fmt.Errorf("%s.macAddress: %v", at, err)
		}
		name := fmt.Sprintf("eth%d", i)
		override := map[string]any{"route-metric": (i + 1) * 100}
		if i > 0 {
			// DNS through the secondary NICs is not supported.
			override["use-dns"] = false
		}
		e := v2Ethernet{
			Match:         map[string]string{"macaddress": mac, "driver": nicDriver},
			SetName:       name,
			DHCP4:         true,
			DHCP4Override: override,
		}
		hasAddr := false
		for _, fam := range []struct {
			key, def string
			is4      bool
		}{{"ipv4", "24", true}, {"ipv6", "128", false}} {
			fm, _ := intf[fam.key].(map[string]any)
			addrs, _ := fm["ipAddress"].([]any)
			if len(addrs) == 0 {
				continue
			}
			hasAddr = true
			if !fam.is4 {
				e.DHCP6, e.DHCP6Override = true, override
			}
			prefix := fam.def
			if subs, _ := fm["subnet"].([]any); len(subs) > 0 {
				if s0, ok := subs[0].(map[string]any); ok {
					if p, ok := s0["prefix"].(string); ok && p != "" {
						prefix = p
					}
				}
			}
			for j, a := range addrs[1:] {
				am, _ := a.(map[string]any)
				ip, _ := am["privateIpAddress"].(string)
				p, err := netip.ParsePrefix(ip + "/" + prefix)
				if err != nil || p.Addr().Is4() != fam.is4 {
					return nil, fmt.Errorf("%s.%s.ipAddress[%d]: %q with prefix %q: not an %s address", at, fam.key, j+1, ip, prefix, fam.key)
				}
				e.Addresses = append(e.Addresses, p.String())
			}
		}
		if hasAddr {
			eths[name] = e
		}
	}
	if len(eths) == 0 {
		return nil, nil
	}
	return json.Marshal(map[string]any{"version": 2, "ethernets": eths})
}

// normalizeMAC is cloud-init's normalize_mac_address: IMDS writes
// "000D3A047598"; the result is "00:0d:3a:04:75:98".
func normalizeMAC(s string) (string, error) {
	h := strings.ToLower(strings.ReplaceAll(strings.ReplaceAll(s, ":", ""), "-", ""))
	b, err := hex.DecodeString(h)
	if err != nil || len(b) != 6 {
		return "", fmt.Errorf("%q: not a MAC address", s)
	}
	parts := make([]string, 6)
	for i, x := range b {
		parts[i] = fmt.Sprintf("%02x", x)
	}
	return strings.Join(parts, ":"), nil
}
