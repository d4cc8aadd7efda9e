package nic

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"time"

	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"
)

// Ephemeral is network configuration applied for a while, by Up or
// LinkLocal, in the calling thread's network namespace. Down removes exactly
// what was added: an address or route that was already there is neither
// recorded nor removed, and no other link is touched. Everything is done by
// link index, so a rename in between does not matter.
type Ephemeral struct {
	iface string
	index int
	// setDown: the link was down before; Down sets it down again.
	setDown bool
	// oldMTU is the MTU to restore, 0 when Up left the MTU alone.
	oldMTU int
	// addr is the address Up added, nil when it was already there.
	addr *netlink.Addr
	// routes are the routes Up added, in order.
	routes []netlink.Route
}

// Zone is the link name to put in a URL's IPv6 zone:
// "http://[fe80::a9fe:a9fe%25" + e.Zone() + "]/".
func (e *Ephemeral) Zone() string { return e.iface }

// Up applies the lease to its link: sets the link up, sets the MTU when the
// lease has one (remembering the old one), adds the address with the lease's
// broadcast, and then the routes. With classless routes (option 121 or 249)
// those are added in order, each preceded, when its gateway is outside the
// leased subnet, by an on-link /32 route to the gateway (as cloud-init's
// ephemeral DHCP does; GCE hands out /32 addresses). Without them a default
// route goes via Router, with the same /32 route when needed.
//
// Routes are added with protocol dhcp and the leased address as preferred
// source. If a step fails, what was done is undone and the errors are
// returned together.
func Up(l Lease) (*Ephemeral, error) {
	if !l.Addr.IsValid() || !l.Addr.Addr().Is4() {
		return nil, fmt.Errorf("ephemeral network on %s: lease has no IPv4 address (%v)", l.Iface, l.Addr)
	}
	link, err := netlink.LinkByName(l.Iface)
	if err != nil {
		return nil, fmt.Errorf("ephemeral network on %s: %w", l.Iface, err)
	}
	a := link.Attrs()
	e := &Ephemeral{iface: l.Iface, index: a.Index, setDown: l.WasDown}
	if err := e.up(l, a); err != nil {
		err = fmt.Errorf("ephemeral network on %s: %w", l.Iface, err)
		if derr := e.Down(); derr != nil {
			err = errors.Join(err, fmt.Errorf("undo: %w", derr))
		}
		return nil, err
	}
	return e, nil
}

func (e *Ephemeral) up(l Lease, a *netlink.LinkAttrs) error {
	link := byIndex(e.index)
	if a.Flags&net.FlagUp == 0 {
		if err := netlink.LinkSetUp(link); err != nil {
			return fmt.Errorf("set link up: %w", err)
		}
		e.setDown = true
	}
	if l.MTU > 0 && l.MTU != a.MTU {
		if err := netlink.LinkSetMTU(link, l.MTU); err != nil {
			return fmt.Errorf("set MTU %d: %w", l.MTU, err)
		}
		e.oldMTU = a.MTU
	}

	addr := &netlink.Addr{IPNet: ipNet(l.Addr)}
	if l.Broadcast.IsValid() {
		addr.Broadcast = l.Broadcast.AsSlice()
	}
	switch err := netlink.AddrAdd(link, addr); {
	case errors.Is(err, unix.EEXIST):
		// Already there (a network root, or a second lease): not ours.
	case err != nil:
		return fmt.Errorf("add address %s: %w", l.Addr, err)
	default:
		e.addr = addr
	}

	src := l.Addr.Addr()
	subnet := l.Addr.Masked()
	onLinkDone := map[netip.Addr]bool{}
	// gateway adds the on-link /32 route to gw when gw is outside the
	// subnet, once.
	gateway := func(gw netip.Addr) error {
		if subnet.Contains(gw) || onLinkDone[gw] {
			return nil
		}
		onLinkDone[gw] = true
		return e.addRoute(netip.PrefixFrom(gw, 32), netip.Addr{}, src)
	}
	if len(l.Routes) > 0 {
		for _, r := range l.Routes {
			if !r.Dst.Addr().Is4() {
				return fmt.Errorf("route %s: not IPv4", r)
			}
			if r.OnLink() {
				if err := e.addRoute(r.Dst, netip.Addr{}, src); err != nil {
					return err
				}
				if r.Dst.Bits() == 32 {
					onLinkDone[r.Dst.Addr()] = true
				}
				continue
			}
			if err := gateway(r.Gw); err != nil {
				return err
			}
			if err := e.addRoute(r.Dst, r.Gw, src); err != nil {
				return err
			}
		}
	} else if l.Router.IsValid() && !l.Router.IsUnspecified() {
		if err := gateway(l.Router); err != nil {
			return err
		}
		if err := e.addRoute(netip.PrefixFrom(netip.IPv4Unspecified(), 0), l.Router, src); err != nil {
			return err
		}
	}
	return nil
}

// addRoute adds dst via gw (on the link when gw is invalid) and records it;
// a route that is already there is left alone and not recorded.
func (e *Ephemeral) addRoute(dst netip.Prefix, gw, src netip.Addr) error {
	r := netlink.Route{
		LinkIndex: e.index,
		Dst:       ipNet(dst),
		Src:       src.AsSlice(),
		Protocol:  unix.RTPROT_DHCP,
		Family:    netlink.FAMILY_V4,
	}
	if gw.IsValid() {
		r.Gw = gw.AsSlice()
	} else {
		r.Scope = netlink.SCOPE_LINK
	}
	switch err := netlink.RouteAdd(&r); {
	case errors.Is(err, unix.EEXIST):
		return nil
	case err != nil:
		if gw.IsValid() {
			return fmt.Errorf("add route %s via %s: %w", dst, gw, err)
		}
		return fmt.Errorf("add route %s on-link: %w", dst, err)
	}
	e.routes = append(e.routes, r)
	return nil
}

// Down deletes the routes and the address Up added, restores the MTU and
// sets the link down again if it was down before. What is already gone
// counts as removed, a link that is gone takes everything with it, and what
// fails is kept for another call, so Down can be called again; once it has
// succeeded it does nothing. All errors are returned together.
//
// When the address Up added was the link's last IPv4 address, the kernel
// drops every IPv4 route on the link with it, as it always does.
func (e *Ephemeral) Down() error {
	if e == nil {
		return nil
	}
	if _, err := netlink.LinkByIndex(e.index); err != nil {
		var nf netlink.LinkNotFoundError
		if errors.As(err, &nf) || errors.Is(err, unix.ENODEV) {
			e.clear()
			return nil
		}
		return fmt.Errorf("ephemeral network on %s: tear down: %w", e.iface, err)
	}
	link := byIndex(e.index)
	var errs []error
	var kept []netlink.Route
	for i := len(e.routes) - 1; i >= 0; i-- {
		r := e.routes[i]
		if err := netlink.RouteDel(&r); err != nil && !errors.Is(err, unix.ESRCH) {
			errs = append(errs, fmt.Errorf("delete route %s: %w", r.Dst, err))
			kept = append([]netlink.Route{r}, kept...)
		}
	}
	e.routes = kept
	if e.addr != nil {
		if err := netlink.AddrDel(link, e.addr); err != nil && !errors.Is(err, unix.EADDRNOTAVAIL) {
			errs = append(errs, fmt.Errorf("delete address %s: %w", e.addr.IPNet, err))
		} else {
			e.addr = nil
		}
	}
	if e.oldMTU != 0 {
		if err := netlink.LinkSetMTU(link, e.oldMTU); err != nil {
			errs = append(errs, fmt.Errorf("restore MTU %d: %w", e.oldMTU, err))
		} else {
			e.oldMTU = 0
		}
	}
	if e.setDown {
		if err := netlink.LinkSetDown(link); err != nil {
			errs = append(errs, fmt.Errorf("set link down: %w", err))
		} else {
			e.setDown = false
		}
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("ephemeral network on %s: tear down: %w", e.iface, err)
	}
	return nil
}

func (e *Ephemeral) clear() {
	e.routes, e.addr, e.oldMTU, e.setDown = nil, nil, 0, false
}

// LinkLocal sets iface up for the IPv6 path to the metadata service at
// fe80::a9fe:a9fe, whose URL needs Zone. Down sets the link down again if
// it was down. The kernel's link-local address is usable once duplicate
// address detection is over, about a second after the link comes up; see
// WaitLinkLocal.
func LinkLocal(iface string) (*Ephemeral, error) {
	link, err := netlink.LinkByName(iface)
	if err != nil {
		return nil, fmt.Errorf("link-local network on %s: %w", iface, err)
	}
	e := &Ephemeral{iface: iface, index: link.Attrs().Index}
	if link.Attrs().Flags&net.FlagUp == 0 {
		if err := netlink.LinkSetUp(link); err != nil {
			return nil, fmt.Errorf("link-local network on %s: set link up: %w", iface, err)
		}
		e.setDown = true
	}
	return e, nil
}

// linkLocalPoll is how often WaitLinkLocal looks at the link's addresses.
const linkLocalPoll = 50 * time.Millisecond

// WaitLinkLocal waits, within ctx, until the link has an IPv6 link-local
// address that has passed duplicate address detection, and returns it.
func (e *Ephemeral) WaitLinkLocal(ctx context.Context) (netip.Addr, error) {
	link := byIndex(e.index)
	for {
		as, err := netlink.AddrList(link, netlink.FAMILY_V6)
		if err != nil {
			return netip.Addr{}, fmt.Errorf("link-local address on %s: %w", e.iface, err)
		}
		for _, a := range as {
			ip, ok := netip.AddrFromSlice(a.IP)
			if ok && ip.IsLinkLocalUnicast() && a.Flags&(unix.IFA_F_TENTATIVE|unix.IFA_F_DADFAILED) == 0 {
				return ip.WithZone(e.iface), nil
			}
		}
		select {
		case <-ctx.Done():
			return netip.Addr{}, fmt.Errorf("link-local address on %s: none usable: %w", e.iface, ctx.Err())
		case <-time.After(linkLocalPoll):
		}
	}
}

func ipNet(p netip.Prefix) *net.IPNet {
	return &net.IPNet{IP: p.Addr().AsSlice(), Mask: net.CIDRMask(p.Bits(), p.Addr().BitLen())}
}
