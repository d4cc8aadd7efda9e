package nic

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strings"
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
	// added is every address and route Up added, kept until Down has
	// checked they are gone.
	added added
}

// added is what Up added to the link, for Down to check.
type added struct {
	addr   *netlink.Addr
	routes []netlink.Route
}

// ephemeralNetlink is the part of rtnetlink Up, Down and LinkLocal use;
// *netlink.Handle is one, and tests replace it with a fake.
type ephemeralNetlink interface {
	LinkByName(name string) (netlink.Link, error)
	LinkByIndex(index int) (netlink.Link, error)
	LinkSetUp(link netlink.Link) error
	LinkSetDown(link netlink.Link) error
	LinkSetMTU(link netlink.Link, mtu int) error
	AddrAdd(link netlink.Link, addr *netlink.Addr) error
	AddrDel(link netlink.Link, addr *netlink.Addr) error
	AddrList(link netlink.Link, family int) ([]netlink.Addr, error)
	RouteAdd(route *netlink.Route) error
	RouteDel(route *netlink.Route) error
	RouteListFiltered(family int, filter *netlink.Route, filterMask uint64) ([]netlink.Route, error)
}

// enl is rtnetlink in the calling thread's network namespace, as the
// package-level netlink functions use it.
var enl ephemeralNetlink = &netlink.Handle{}

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
	link, err := enl.LinkByName(l.Iface)
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
		if err := enl.LinkSetUp(link); err != nil {
			return fmt.Errorf("set link up: %w", err)
		}
		e.setDown = true
	}
	if l.MTU > 0 && l.MTU != a.MTU {
		if err := enl.LinkSetMTU(link, l.MTU); err != nil {
			return fmt.Errorf("set MTU %d: %w", l.MTU, err)
		}
		e.oldMTU = a.MTU
	}

	addr := &netlink.Addr{IPNet: ipNet(l.Addr)}
	if l.Broadcast.IsValid() {
		addr.Broadcast = l.Broadcast.AsSlice()
	}
	switch err := enl.AddrAdd(link, addr); {
	case errors.Is(err, unix.EEXIST):
		// Already there (a network root, or a second lease): not ours.
	case err != nil:
		return fmt.Errorf("add address %s: %w", l.Addr, err)
	default:
		e.addr = addr
		e.added.addr = addr
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
	switch err := enl.RouteAdd(&r); {
	case errors.Is(err, unix.EEXIST):
		return nil
	case err != nil:
		if gw.IsValid() {
			return fmt.Errorf("add route %s via %s: %w", dst, gw, err)
		}
		return fmt.Errorf("add route %s on-link: %w", dst, err)
	}
	e.routes = append(e.routes, r)
	e.added.routes = append(e.added.routes, r)
	return nil
}

// Teardown bounds: Down tries up to downAttempts times within downTimeout,
// waiting downBackoff, doubled each time, between attempts.
const (
	downTimeout  = 2 * time.Second
	downAttempts = 5
	downBackoff  = 50 * time.Millisecond
)

// Down deletes the routes and the address Up added, restores the MTU and
// sets the link down again if it was down before, then lists the link's
// addresses and routes to check that nothing Up added is left. What fails,
// or is still listed, is tried again, up to downAttempts times within
// downTimeout; the error then names what is left. What is already gone
// counts as removed and a link that is gone takes everything with it. Once
// Down has succeeded it does nothing.
//
// When the address Up added was the link's last IPv4 address, the kernel
// drops every IPv4 route on the link with it, as it always does.
func (e *Ephemeral) Down() error {
	ctx, cancel := context.WithTimeout(context.Background(), downTimeout)
	defer cancel()
	return e.DownContext(ctx)
}

// DownContext is Down within ctx (and downAttempts attempts).
func (e *Ephemeral) DownContext(ctx context.Context) error {
	if e == nil {
		return nil
	}
	var err error
	wait := downBackoff
	for attempt := 1; ; attempt++ {
		err = e.downOnce()
		if err == nil {
			err = e.verify()
		}
		if err == nil {
			return nil
		}
		if attempt >= downAttempts {
			return fmt.Errorf("ephemeral network on %s: tear down: after %d attempts: %w", e.iface, attempt, err)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("ephemeral network on %s: tear down: after %d attempts, %v: %w", e.iface, attempt, ctx.Err(), err)
		case <-time.After(wait):
		}
		wait *= 2
	}
}

// downOnce is one attempt at undoing what is left to undo.
func (e *Ephemeral) downOnce() error {
	if _, err := enl.LinkByIndex(e.index); err != nil {
		if linkGone(err) {
			e.clear()
			return nil
		}
		return fmt.Errorf("find link %d: %w", e.index, err)
	}
	link := byIndex(e.index)
	var errs []error
	var kept []netlink.Route
	for i := len(e.routes) - 1; i >= 0; i-- {
		r := e.routes[i]
		if err := enl.RouteDel(&r); err != nil && !errors.Is(err, unix.ESRCH) {
			errs = append(errs, fmt.Errorf("delete route %s: %w", routeText(r), err))
			kept = append([]netlink.Route{r}, kept...)
		}
	}
	e.routes = kept
	if e.addr != nil {
		if err := enl.AddrDel(link, e.addr); err != nil && !errors.Is(err, unix.EADDRNOTAVAIL) {
			errs = append(errs, fmt.Errorf("delete address %s: %w", e.addr.IPNet, err))
		} else {
			e.addr = nil
		}
	}
	if e.oldMTU != 0 {
		if err := enl.LinkSetMTU(link, e.oldMTU); err != nil {
			errs = append(errs, fmt.Errorf("restore MTU %d: %w", e.oldMTU, err))
		} else {
			e.oldMTU = 0
		}
	}
	if e.setDown {
		if err := enl.LinkSetDown(link); err != nil {
			errs = append(errs, fmt.Errorf("set link down: %w", err))
		} else {
			e.setDown = false
		}
	}
	return errors.Join(errs...)
}

// verify lists the link's IPv4 addresses and routes and checks that none
// that Up added is there; what is, is put back to be removed again.
func (e *Ephemeral) verify() error {
	if e.added.addr == nil && len(e.added.routes) == 0 {
		return nil
	}
	link := byIndex(e.index)
	as, err := enl.AddrList(link, netlink.FAMILY_V4)
	if linkGone(err) {
		e.clear()
		return nil
	}
	if err != nil {
		return fmt.Errorf("check: list addresses: %w", err)
	}
	rs, err := enl.RouteListFiltered(netlink.FAMILY_V4, &netlink.Route{LinkIndex: e.index}, netlink.RT_FILTER_OIF)
	if linkGone(err) {
		e.clear()
		return nil
	}
	if err != nil {
		return fmt.Errorf("check: list routes: %w", err)
	}
	var left []string
	if a := e.added.addr; a != nil {
		for _, x := range as {
			if x.IPNet != nil && x.IPNet.String() == a.IPNet.String() {
				left = append(left, "address "+a.IPNet.String())
				e.addr = a
				break
			}
		}
	}
	e.routes = nil
	for _, r := range e.added.routes {
		for _, x := range rs {
			if sameRoute(r, x) {
				left = append(left, "route "+routeText(r))
				e.routes = append(e.routes, r)
				break
			}
		}
	}
	if len(left) > 0 {
		return fmt.Errorf("still there after removal: %s", strings.Join(left, ", "))
	}
	e.added = added{}
	return nil
}

// linkGone tells a lookup error meaning the link no longer exists.
func linkGone(err error) bool {
	var nf netlink.LinkNotFoundError
	return err != nil && (errors.As(err, &nf) || errors.Is(err, unix.ENODEV))
}

// sameRoute tells whether the listed route x is the route r Up added: same
// destination, gateway and protocol (a route someone else added to the
// same destination is not ours).
func sameRoute(r, x netlink.Route) bool {
	return dstText(r.Dst) == dstText(x.Dst) && r.Gw.Equal(x.Gw) && r.Protocol == x.Protocol
}

func dstText(n *net.IPNet) string {
	if n == nil || (n.IP.IsUnspecified() && isZeroMask(n.Mask)) {
		return "default"
	}
	return n.String()
}

func isZeroMask(m net.IPMask) bool {
	ones, _ := m.Size()
	return ones == 0
}

// routeText is "DST via GW" or "DST on-link", for errors.
func routeText(r netlink.Route) string {
	if r.Gw != nil {
		return dstText(r.Dst) + " via " + r.Gw.String()
	}
	return dstText(r.Dst) + " on-link"
}

func (e *Ephemeral) clear() {
	e.routes, e.addr, e.oldMTU, e.setDown = nil, nil, 0, false
	e.added = added{}
}

// LinkLocal sets iface up for the IPv6 path to the metadata service at
// fe80::a9fe:a9fe, whose URL needs Zone. Down sets the link down again if
// it was down. The kernel's link-local address is usable once duplicate
// address detection is over, about a second after the link comes up; see
// WaitLinkLocal.
func LinkLocal(iface string) (*Ephemeral, error) {
	link, err := enl.LinkByName(iface)
	if err != nil {
		return nil, fmt.Errorf("link-local network on %s: %w", iface, err)
	}
	e := &Ephemeral{iface: iface, index: link.Attrs().Index}
	if link.Attrs().Flags&net.FlagUp == 0 {
		if err := enl.LinkSetUp(link); err != nil {
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
		as, err := enl.AddrList(link, netlink.FAMILY_V6)
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
