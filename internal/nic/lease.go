package nic

import (
	"fmt"
	"net/netip"
	"strings"
	"time"
)

// Lease is a DHCPv4 lease as the boot step applies it with Up. internal/nic/dhcp
// fills it from a server's ACK; tests and callers may build one by hand.
type Lease struct {
	// Iface is the link the lease was obtained on.
	Iface string
	// Addr is the leased address (yiaddr) with the subnet mask (option 1).
	Addr netip.Prefix
	// Broadcast is option 28, or the subnet's broadcast address when the
	// server sends none; zero for a /31 or /32.
	Broadcast netip.Addr
	// Router is the first router of option 3, invalid when there is none
	// or when there are Routes: RFC 3442 says a client with option 121
	// ignores option 3, and cloud-init does the same for option 249.
	Router netip.Addr
	// Routes are the classless static routes of option 121, else of
	// Microsoft's option 249, in the server's order. A Gw of 0.0.0.0 means
	// the destination is on the link.
	Routes []Route
	// MTU is option 26, 0 when absent.
	MTU int
	// DNS is option 6; Domain is option 15. Up does not write them
	// anywhere: the metadata service is reached by address.
	DNS    []netip.Addr
	Domain string
	// NTP is option 42, the NTP servers in the server's order. Up does
	// not use them; the boot step records them for the ntp module's
	// ntp_use_dhcp_config.
	NTP []netip.Addr
	// Server is the server identifier, option 54.
	Server netip.Addr
	// LeaseTime is option 51, 0 when absent.
	LeaseTime time.Duration
	// WasDown is set by whoever brought the link up to get the lease (the
	// DHCP client does when it found the link down), so that Up records it
	// and Down sets the link down again.
	WasDown bool
}

// Route is a static route of a lease: Dst via Gw, or on the link when Gw is
// 0.0.0.0.
type Route struct {
	Dst netip.Prefix
	Gw  netip.Addr
}

// OnLink tells whether the route has no gateway.
func (r Route) OnLink() bool { return !r.Gw.IsValid() || r.Gw.IsUnspecified() }

func (r Route) String() string {
	if r.OnLink() {
		return r.Dst.String() + " on-link"
	}
	return r.Dst.String() + " via " + r.Gw.String()
}

func (l Lease) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s on %s", l.Addr, l.Iface)
	if l.Router.IsValid() {
		fmt.Fprintf(&b, " router %s", l.Router)
	}
	for _, r := range l.Routes {
		fmt.Fprintf(&b, " route %s", r)
	}
	if l.MTU != 0 {
		fmt.Fprintf(&b, " mtu %d", l.MTU)
	}
	if l.Server.IsValid() {
		fmt.Fprintf(&b, " from %s", l.Server)
	}
	if l.LeaseTime != 0 {
		fmt.Fprintf(&b, " for %s", l.LeaseTime)
	}
	return b.String()
}
