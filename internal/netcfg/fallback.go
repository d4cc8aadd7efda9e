package netcfg

import (
	"errors"
	"sort"
	"strings"
)

// NIC describes a live NIC for the fallback rule.
type NIC struct {
	Name, MAC, Driver string
	// Carrier is /sys/class/net/<name>/carrier == 1.
	Carrier bool
	// Virtual: no backing device (/sys/devices/virtual/net); Bridge, Bond:
	// the NIC is a bridge or bond master; Loopback: lo.
	Virtual, Bridge, Bond, Loopback bool
}

// defaultPrimary is cloud-init's DEFAULT_PRIMARY_INTERFACE.
const defaultPrimary = "eth0"

// Fallback is cloud-init's fallback network config (find_fallback_nic and
// generate_fallback_config): DHCPv4 on one NIC, the first of FallbackOrder,
// matched by MAC and named as it is now. It returns an error when no NIC
// qualifies.
func Fallback(nics []NIC) (*Config, error) {
	order := FallbackOrder(nics)
	if len(order) == 0 {
		return nil, errors.New("no candidate NIC")
	}
	n := order[0]
	return &Config{Version: 2, Interfaces: []Interface{{
		Name: n.Name, Kind: Physical, MAC: n.MAC, Subnets: []Subnet{{Type: DHCP4}},
	}}}, nil
}

// FallbackOrder returns the NICs cloud-init's fallback rule considers, best
// first, with normalised MACs. Candidates skip lo, NICs without a MAC, veth*,
// bridges, bonds and virtual devices. NICs with carrier come first, then the
// others (in the initramfs, links are usually down, which cloud-init counts
// as "possibly connected"); within each group eth0 comes first, then natural
// order ("eth2" < "eth10").
func FallbackOrder(nics []NIC) []NIC {
	var connected, possible []NIC
	for _, n := range nics {
		if n.Loopback || n.Name == "lo" || n.Name == "" || n.Virtual || n.Bridge || n.Bond ||
			strings.HasPrefix(n.Name, "veth") {
			continue
		}
		mac, err := parseMAC(n.MAC)
		if err != nil {
			continue
		}
		n.MAC = mac
		if n.Carrier {
			connected = append(connected, n)
		} else {
			possible = append(possible, n)
		}
	}
	for _, group := range [][]NIC{connected, possible} {
		sort.SliceStable(group, func(i, j int) bool {
			a, b := group[i].Name, group[j].Name
			if (a == defaultPrimary) != (b == defaultPrimary) {
				return a == defaultPrimary
			}
			return naturalLess(a, b)
		})
	}
	return append(connected, possible...)
}
