package nic

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"
)

// linkState is what Up and Down may change on a link, as the kernel
// reports it.
type linkState struct {
	Up     bool
	MTU    int
	Addrs  []string // IPv4 only, "a/n brd b"
	Routes []string // main table, sorted
}

func state(t *testing.T, name string) linkState {
	t.Helper()
	l, err := netlink.LinkByName(name)
	if err != nil {
		t.Fatalf("link %s: %v", name, err)
	}
	s := linkState{Up: l.Attrs().Flags&net.FlagUp != 0, MTU: l.Attrs().MTU}
	as, err := netlink.AddrList(l, netlink.FAMILY_V4)
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range as {
		x := a.IPNet.String()
		if a.Broadcast != nil {
			x += " brd " + a.Broadcast.String()
		}
		s.Addrs = append(s.Addrs, x)
	}
	rs, err := netlink.RouteListFiltered(netlink.FAMILY_V4, &netlink.Route{LinkIndex: l.Attrs().Index}, netlink.RT_FILTER_OIF)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rs {
		s.Routes = append(s.Routes, fmtRoute(r))
	}
	slices.Sort(s.Routes)
	return s
}

func fmtRoute(r netlink.Route) string {
	var b strings.Builder
	if r.Dst == nil || r.Dst.IP.IsUnspecified() {
		b.WriteString("default")
	} else {
		b.WriteString(r.Dst.String())
	}
	if r.Gw != nil {
		fmt.Fprintf(&b, " via %s", r.Gw)
	}
	if r.Scope == netlink.SCOPE_LINK {
		b.WriteString(" scope link")
	}
	switch r.Protocol {
	case unix.RTPROT_KERNEL:
		b.WriteString(" proto kernel")
	case unix.RTPROT_DHCP:
		b.WriteString(" proto dhcp")
	case unix.RTPROT_BOOT:
		b.WriteString(" proto boot")
	default:
		fmt.Fprintf(&b, " proto %d", r.Protocol)
	}
	if r.Src != nil {
		fmt.Fprintf(&b, " src %s", r.Src)
	}
	return b.String()
}

// addVeth adds the veth pair name/peer in the current namespace, with the
// peer up (so name has carrier once up) when peerUp, and name up when up.
func addVeth(t *testing.T, name, peer string, up, peerUp bool) {
	t.Helper()
	v := &netlink.Veth{LinkAttrs: netlink.LinkAttrs{Name: name}, PeerName: peer}
	if err := netlink.LinkAdd(v); err != nil {
		t.Fatalf("add veth %s: %v", name, err)
	}
	for n, want := range map[string]bool{name: up, peer: peerUp} {
		if !want {
			continue
		}
		l, err := netlink.LinkByName(n)
		if err != nil {
			t.Fatal(err)
		}
		if err := netlink.LinkSetUp(l); err != nil {
			t.Fatal(err)
		}
	}
}

func checkState(t *testing.T, what, name string, want linkState) {
	t.Helper()
	if got := state(t, name); !reflect.DeepEqual(got, want) {
		t.Errorf("%s: %s is\n  %+v\nwant\n  %+v", what, name, got, want)
	}
}

func TestUpDownRouter(t *testing.T) {
	inNetns(t, func() {
		addVeth(t, "v0", "p0", false, true)
		before, peer := state(t, "v0"), state(t, "p0")
		l := Lease{
			Iface:     "v0",
			Addr:      netip.MustParsePrefix("10.0.0.5/24"),
			Broadcast: netip.MustParseAddr("10.0.0.255"),
			Router:    netip.MustParseAddr("10.0.0.1"),
			MTU:       1400,
		}
		e, err := Up(l)
		if err != nil {
			t.Fatalf("Up: %v", err)
		}
		checkState(t, "after Up", "v0", linkState{
			Up:    true,
			MTU:   1400,
			Addrs: []string{"10.0.0.5/24 brd 10.0.0.255"},
			Routes: []string{
				"10.0.0.0/24 scope link proto kernel src 10.0.0.5",
				"default via 10.0.0.1 proto dhcp src 10.0.0.5",
			},
		})
		checkState(t, "after Up", "p0", peer)
		for i := range 2 {
			if err := e.Down(); err != nil {
				t.Fatalf("Down #%d: %v", i+1, err)
			}
			checkState(t, fmt.Sprintf("after Down #%d", i+1), "v0", before)
			checkState(t, fmt.Sprintf("after Down #%d", i+1), "p0", peer)
		}
	})
}

// TestUpDownClassless applies routes as GCE (a /32 with the gateway
// outside it) and Neutron (169.254.169.254 via the DHCP port) send them,
// on a link that was up with a route of its own.
func TestUpDownClassless(t *testing.T) {
	inNetns(t, func() {
		addVeth(t, "v0", "p0", true, true)
		v0, err := netlink.LinkByName("v0")
		if err != nil {
			t.Fatal(err)
		}
		// The link's own address and its subnet route, which the lease's
		// on-link route for that subnet duplicates. (Without an address,
		// the kernel would drop every route on the link when Down
		// deletes the last one.)
		if err := netlink.AddrAdd(v0, &netlink.Addr{IPNet: ipNet(netip.MustParsePrefix("192.168.7.1/24"))}); err != nil {
			t.Fatal(err)
		}
		before := state(t, "v0")
		l := Lease{
			Iface:  "v0",
			Addr:   netip.MustParsePrefix("10.1.0.7/32"),
			Router: netip.MustParseAddr("10.1.0.99"), // ignored: there are routes
			Routes: []Route{
				{Dst: netip.MustParsePrefix("169.254.169.254/32"), Gw: netip.MustParseAddr("10.1.0.1")},
				{Dst: netip.MustParsePrefix("192.168.7.0/24"), Gw: netip.IPv4Unspecified()},
				{Dst: netip.MustParsePrefix("172.16.0.0/12"), Gw: netip.IPv4Unspecified()},
				{Dst: netip.MustParsePrefix("0.0.0.0/0"), Gw: netip.MustParseAddr("10.1.0.1")},
			},
		}
		e, err := Up(l)
		if err != nil {
			t.Fatalf("Up: %v", err)
		}
		checkState(t, "after Up", "v0", linkState{
			Up:    true,
			MTU:   1500,
			Addrs: []string{"192.168.7.1/24 brd 192.168.7.255", "10.1.0.7/32"},
			Routes: []string{
				"10.1.0.1/32 scope link proto dhcp src 10.1.0.7",
				"169.254.169.254/32 via 10.1.0.1 proto dhcp src 10.1.0.7",
				"172.16.0.0/12 scope link proto dhcp src 10.1.0.7",
				"192.168.7.0/24 scope link proto kernel src 192.168.7.1",
				"default via 10.1.0.1 proto dhcp src 10.1.0.7",
			},
		})
		if err := e.Down(); err != nil {
			t.Fatalf("Down: %v", err)
		}
		checkState(t, "after Down", "v0", before)
	})
}

// TestUpKeepsWhatWasThere: an address already on the link (a network root)
// stays after Down; only the default route Up added goes.
func TestUpKeepsWhatWasThere(t *testing.T) {
	inNetns(t, func() {
		addVeth(t, "v0", "p0", true, true)
		v0, err := netlink.LinkByName("v0")
		if err != nil {
			t.Fatal(err)
		}
		if err := netlink.AddrAdd(v0, &netlink.Addr{IPNet: ipNet(netip.MustParsePrefix("10.2.0.5/24"))}); err != nil {
			t.Fatal(err)
		}
		before := state(t, "v0")
		e, err := Up(Lease{Iface: "v0", Addr: netip.MustParsePrefix("10.2.0.5/24"), Router: netip.MustParseAddr("10.2.0.1")})
		if err != nil {
			t.Fatalf("Up: %v", err)
		}
		after := state(t, "v0")
		if !slices.Contains(after.Routes, "default via 10.2.0.1 proto dhcp src 10.2.0.5") {
			t.Errorf("after Up routes %v, want the default route", after.Routes)
		}
		if err := e.Down(); err != nil {
			t.Fatalf("Down: %v", err)
		}
		checkState(t, "after Down", "v0", before)
	})
}

// TestUpUndoes: a route the kernel refuses (a gateway that is the subnet's
// broadcast address) makes Up fail and take back the link, MTU, address and route it
// had set.
func TestUpUndoes(t *testing.T) {
	inNetns(t, func() {
		addVeth(t, "v0", "p0", false, true)
		before := state(t, "v0")
		_, err := Up(Lease{
			Iface: "v0",
			Addr:  netip.MustParsePrefix("10.0.0.5/24"),
			MTU:   1400,
			Routes: []Route{
				{Dst: netip.MustParsePrefix("10.9.0.0/16"), Gw: netip.MustParseAddr("10.0.0.1")},
				{Dst: netip.MustParsePrefix("0.0.0.0/0"), Gw: netip.MustParseAddr("10.0.0.255")},
			},
		})
		if err == nil || !strings.Contains(err.Error(), "ephemeral network on v0: add route 0.0.0.0/0 via 10.0.0.255") {
			t.Fatalf("Up = %v, want the refused route named", err)
		}
		checkState(t, "after failed Up", "v0", before)

		_, err = Up(Lease{Iface: "v0", Addr: netip.MustParsePrefix("10.0.0.5/24"), MTU: 70000})
		if err == nil || !strings.Contains(err.Error(), "set MTU 70000") {
			t.Fatalf("Up = %v, want the refused MTU named", err)
		}
		checkState(t, "after failed Up", "v0", before)
	})
}

func TestUpErrors(t *testing.T) {
	inNetns(t, func() {
		if _, err := Up(Lease{Iface: "nope0", Addr: netip.MustParsePrefix("10.0.0.5/24")}); err == nil || !strings.Contains(err.Error(), "nope0") {
			t.Errorf("Up on a missing link = %v, want an error naming it", err)
		}
		if _, err := Up(Lease{Iface: "lo"}); err == nil || !strings.Contains(err.Error(), "no IPv4 address") {
			t.Errorf("Up without an address = %v", err)
		}
	})
}

// TestDownLinkGone: a link that vanished took the configuration with it.
func TestDownLinkGone(t *testing.T) {
	inNetns(t, func() {
		addVeth(t, "v0", "p0", false, true)
		e, err := Up(Lease{Iface: "v0", Addr: netip.MustParsePrefix("10.0.0.5/24"), Router: netip.MustParseAddr("10.0.0.1"), MTU: 1400})
		if err != nil {
			t.Fatal(err)
		}
		l, err := netlink.LinkByName("v0")
		if err != nil {
			t.Fatal(err)
		}
		if err := netlink.LinkDel(l); err != nil {
			t.Fatal(err)
		}
		if err := e.Down(); err != nil {
			t.Errorf("Down after the link went: %v", err)
		}
	})
}

func TestLinkLocal(t *testing.T) {
	inNetns(t, func() {
		addVeth(t, "v0", "p0", false, true)
		addVeth(t, "v1", "p1", true, false) // no carrier: no link-local address
		e, err := LinkLocal("v0")
		if err != nil {
			t.Fatal(err)
		}
		if z := e.Zone(); z != "v0" {
			t.Errorf("Zone = %q, want v0", z)
		}
		if !state(t, "v0").Up {
			t.Errorf("v0 is down after LinkLocal")
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		a, err := e.WaitLinkLocal(ctx)
		if err != nil || !a.IsLinkLocalUnicast() || a.Zone() != "v0" {
			t.Errorf("WaitLinkLocal = %v, %v; want an fe80:: address in zone v0", a, err)
		}
		if err := e.Down(); err != nil {
			t.Fatal(err)
		}
		if state(t, "v0").Up {
			t.Errorf("v0 is up after Down")
		}

		e, err = LinkLocal("v1")
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel = context.WithTimeout(context.Background(), 200*time.Millisecond)
		defer cancel()
		start := time.Now()
		if a, err := e.WaitLinkLocal(ctx); err == nil || !strings.Contains(err.Error(), "link-local address on v1: none usable") {
			t.Errorf("WaitLinkLocal without carrier = %v, %v; want an error", a, err)
		}
		if d := time.Since(start); d > 2*time.Second {
			t.Errorf("WaitLinkLocal took %v past a 200ms bound", d)
		}
		if err := e.Down(); err != nil {
			t.Fatal(err)
		}
		if !state(t, "v1").Up {
			t.Errorf("v1 was up before LinkLocal and is down after Down")
		}
		if _, err := LinkLocal("nope0"); err == nil {
			t.Errorf("LinkLocal on a missing link succeeded")
		}
	})
}

// TestLinkLocal4 applies the IPv4 link-local address of a boot without a
// lease (DigitalOcean's path): 169.254.A.B/16 on the link, so
// 169.254.169.254 is on-link, and Down takes it away again.
func TestLinkLocal4(t *testing.T) {
	for _, n := range []int{0, 167, 255} {
		l := LinkLocal4Lease("v0", func(k int) int { return min(n, k-1) })
		a := l.Addr.Addr().As4()
		if a[0] != 169 || a[1] != 254 || a[2] < 1 || a[2] > 168 || l.Addr.Bits() != 16 || !l.Addr.Contains(netip.MustParseAddr("169.254.169.254")) {
			t.Errorf("LinkLocal4Lease with %d = %v: want 169.254.[1-168].x/16", n, l.Addr)
		}
	}
	inNetns(t, func() {
		addVeth(t, "v0", "p0", false, true)
		before := state(t, "v0")
		e, err := Up(LinkLocal4Lease("v0", func(int) int { return 9 }))
		if err != nil {
			t.Fatalf("Up: %v", err)
		}
		checkState(t, "after Up", "v0", linkState{
			Up:     true,
			MTU:    before.MTU,
			Addrs:  []string{"169.254.10.9/16 brd 169.254.255.255"},
			Routes: []string{"169.254.0.0/16 scope link proto kernel src 169.254.10.9"},
		})
		if err := e.Down(); err != nil {
			t.Fatal(err)
		}
		checkState(t, "after Down", "v0", before)
	})
}
