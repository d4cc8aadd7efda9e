package nic

import "net/netip"

// LinkLocal4Lease is the lease-like address DigitalOcean's metadata path
// uses when no DHCP server answers: 169.254.A.B/16 with A in 1..168 and B
// in 0..255, picked by intn (math/rand/v2's IntN) as cloud-init's
// digitalocean helper picks it, so that 169.254.169.254 is on the link
// and never the address itself. Up applies it (no router, no routes);
// Down removes it.
func LinkLocal4Lease(iface string, intn func(int) int) Lease {
	a, b := 1+intn(168), intn(256)
	return Lease{
		Iface:     iface,
		Addr:      netip.PrefixFrom(netip.AddrFrom4([4]byte{169, 254, byte(a), byte(b)}), 16),
		Broadcast: netip.AddrFrom4([4]byte{169, 254, 255, 255}),
	}
}
