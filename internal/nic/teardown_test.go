package nic

import (
	"net"
	"net/netip"
	"testing"
	"time"

	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"
)

// fakeEphNL is one link (index 7, "eth0") in memory, with faults to inject.
type fakeEphNL struct {
	up     bool
	mtu    int
	addrs  []netlink.Addr
	routes []netlink.Route

	routeDelFails int  // RouteDel fails this many more times with EBUSY
	addrDelFails  int  // AddrDel fails this many more times with EBUSY
	stickyRoutes  bool // RouteDel says yes and the route stays
	listFails     int  // RouteListFiltered fails this many more times
	routeDels     int  // RouteDel calls
}

var errBusy = unix.EBUSY

func (f *fakeEphNL) link() netlink.Link {
	var flags net.Flags
	if f.up {
		flags = net.FlagUp
	}
	return &netlink.Device{LinkAttrs: netlink.LinkAttrs{Index: 7, Name: "eth0", MTU: f.mtu, Flags: flags}}
}

func (f *fakeEphNL) LinkByName(name string) (netlink.Link, error) {
	if name != "eth0" {
		return nil, netlink.LinkNotFoundError{}
	}
	return f.link(), nil
}

func (f *fakeEphNL) LinkByIndex(i int) (netlink.Link, error) {
	if i != 7 {
		return nil, netlink.LinkNotFoundError{}
	}
	return f.link(), nil
}

func (f *fakeEphNL) LinkSetUp(netlink.Link) error                       { f.up = true; return nil }
func (f *fakeEphNL) LinkSetDown(netlink.Link) error                     { f.up = false; return nil }
func (f *fakeEphNL) LinkSetMTU(_ netlink.Link, m int) error             { f.mtu = m; return nil }
func (f *fakeEphNL) AddrList(netlink.Link, int) ([]netlink.Addr, error) { return f.addrs, nil }

func (f *fakeEphNL) AddrAdd(_ netlink.Link, a *netlink.Addr) error {
	f.addrs = append(f.addrs, *a)
	return nil
}

func (f *fakeEphNL) AddrDel(_ netlink.Link, a *netlink.Addr) error {
	if f.addrDelFails > 0 {
		f.addrDelFails--
		return errBusy
	}
	for i, x := range f.addrs {
		if x.IPNet.String() == a.IPNet.String() {
			f.addrs = append(f.addrs[:i], f.addrs[i+1:]...)
			return nil
		}
	}
	return unix.EADDRNOTAVAIL
}

func (f *fakeEphNL) RouteAdd(r *netlink.Route) error {
	f.routes = append(f.routes, *r)
	return nil
}

func (f *fakeEphNL) RouteDel(r *netlink.Route) error {
	f.routeDels++
	if f.routeDelFails > 0 {
		f.routeDelFails--
		return errBusy
	}
	if f.stickyRoutes {
		return nil
	}
	for i, x := range f.routes {
		if sameRoute(*r, x) {
			f.routes = append(f.routes[:i], f.routes[i+1:]...)
			return nil
		}
	}
	return unix.ESRCH
}

func (f *fakeEphNL) RouteListFiltered(int, *netlink.Route, uint64) ([]netlink.Route, error) {
	if f.listFails > 0 {
		f.listFails--
		return nil, errBusy
	}
	return f.routes, nil
}

func withFakeEph(t *testing.T, f *fakeEphNL) {
	t.Helper()
	old := enl
	enl = f
	t.Cleanup(func() { enl = old })
}

var fakeLease = Lease{
	Iface:  "eth0",
	Addr:   netip.MustParsePrefix("10.0.0.5/24"),
	Router: netip.MustParseAddr("10.0.0.1"),
	Routes: []Route{
		{Dst: netip.MustParsePrefix("169.254.169.254/32"), Gw: netip.MustParseAddr("10.0.0.1")},
		{Dst: netip.MustParsePrefix("0.0.0.0/0"), Gw: netip.MustParseAddr("10.0.0.1")},
	},
	MTU: 1400,
}

// TestDownRetries: teardown faults are retried and checked: a delete that
// fails at first is retried until the link is clean; a route the kernel
// keeps, an address that never goes or a listing that fails at first are
// found by listing again, and what is left is named in the error, in
// bounded time.
func TestDownRetries(t *testing.T) {
	for _, tt := range []struct {
		name    string
		fault   func(f *fakeEphNL)
		wantErr string // "" when Down must succeed
		clean   bool   // no address or route of Up left
	}{
		{"first route delete fails", func(f *fakeEphNL) { f.routeDelFails = 1 }, "", true},
		{"route deletes fail four times", func(f *fakeEphNL) { f.routeDelFails = 4 }, "", true},
		{"first address delete fails", func(f *fakeEphNL) { f.addrDelFails = 1 }, "", true},
		{"route listing fails at first", func(f *fakeEphNL) { f.listFails = 2 }, "", true},
		{"routes stay", func(f *fakeEphNL) { f.stickyRoutes = true },
			"ephemeral network on eth0: tear down: after 5 attempts: still there after removal: route 169.254.169.254/32 via 10.0.0.1, route default via 10.0.0.1", false},
		{"address delete always fails", func(f *fakeEphNL) { f.addrDelFails = 1000 },
			"ephemeral network on eth0: tear down: after 5 attempts: delete address 10.0.0.5/24: device or resource busy", false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f := &fakeEphNL{mtu: 1500}
			withFakeEph(t, f)
			e, err := Up(fakeLease)
			if err != nil {
				t.Fatal(err)
			}
			if len(f.addrs) != 1 || len(f.routes) != 2 || !f.up || f.mtu != 1400 {
				t.Fatalf("after Up: %+v", f)
			}
			tt.fault(f)
			t0 := time.Now()
			err = e.Down()
			took := time.Since(t0)
			if took > downTimeout+500*time.Millisecond {
				t.Errorf("Down took %s, over its %s bound", took, downTimeout)
			}
			switch {
			case tt.wantErr == "" && err != nil:
				t.Fatalf("Down = %v", err)
			case tt.wantErr != "" && (err == nil || err.Error() != tt.wantErr):
				t.Fatalf("Down = %v\nwant %s", err, tt.wantErr)
			}
			if clean := len(f.addrs) == 0 && len(f.routes) == 0; clean != tt.clean {
				t.Errorf("after Down: addresses %v, routes %d; clean = %v, want %v", f.addrs, len(f.routes), clean, tt.clean)
			}
			if f.up || f.mtu != 1500 {
				t.Errorf("after Down: up %v, MTU %d; want down, 1500", f.up, f.mtu)
			}
			if err == nil {
				// Done: another Down does nothing.
				n := f.routeDels
				if err := e.Down(); err != nil || f.routeDels != n {
					t.Errorf("second Down = %v after %d more route deletes", err, f.routeDels-n)
				}
			}
			t.Logf("%s: Down took %s", tt.name, took)
		})
	}
}

// TestDownLinkGoneFake: a link that disappears takes everything with it.
func TestDownLinkGoneFake(t *testing.T) {
	f := &fakeEphNL{mtu: 1500}
	withFakeEph(t, f)
	e, err := Up(fakeLease)
	if err != nil {
		t.Fatal(err)
	}
	e.index = 8 // as if the link went
	f.stickyRoutes = true
	if err := e.Down(); err != nil {
		t.Fatalf("Down = %v", err)
	}
}
