package dhcp

import (
	"bytes"
	"net"
	"net/netip"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/earlyinit/earlyinit/internal/nic"
	"github.com/insomniacslk/dhcp/dhcpv4"
)

// ack builds an ACK for 10.0.0.5 from server 10.0.0.2 with the given
// options; mask is option 1 unless it is nil.
func ack(t testing.TB, mask net.IPMask, mods ...dhcpv4.Modifier) *dhcpv4.DHCPv4 {
	t.Helper()
	base := []dhcpv4.Modifier{
		dhcpv4.WithMessageType(dhcpv4.MessageTypeAck),
		dhcpv4.WithYourIP(net.IPv4(10, 0, 0, 5)),
		dhcpv4.WithOption(dhcpv4.OptServerIdentifier(net.IPv4(10, 0, 0, 2))),
	}
	if mask != nil {
		base = append(base, dhcpv4.WithNetmask(mask))
	}
	m, err := dhcpv4.New(append(base, mods...)...)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func raw(code uint8, b ...byte) dhcpv4.Modifier {
	return dhcpv4.WithGeneric(dhcpv4.GenericOptionCode(code), b)
}

func pfx(s string) netip.Prefix { return netip.MustParsePrefix(s) }
func ip(s string) netip.Addr    { return netip.MustParseAddr(s) }

var mask24 = net.CIDRMask(24, 32)

func TestLeaseFromACK(t *testing.T) {
	// Neutron's qdhcp port serves the metadata route: 169.254.169.254/32
	// via the DHCP port, plus the subnet on-link and a default route.
	neutron := raw(121,
		32, 169, 254, 169, 254, 10, 0, 0, 2,
		24, 10, 0, 0, 0, 0, 0, 0,
		0, 10, 0, 0, 1,
	)
	neutronRoutes := []nic.Route{
		{Dst: pfx("169.254.169.254/32"), Gw: ip("10.0.0.2")},
		{Dst: pfx("10.0.0.0/24"), Gw: ip("0.0.0.0")},
		{Dst: pfx("0.0.0.0/0"), Gw: ip("10.0.0.1")},
	}
	base := nic.Lease{
		Iface:     "eth0",
		Addr:      pfx("10.0.0.5/24"),
		Broadcast: ip("10.0.0.255"),
		Server:    ip("10.0.0.2"),
	}
	with := func(f func(*nic.Lease)) nic.Lease {
		l := base
		f(&l)
		return l
	}
	router := dhcpv4.WithRouter(net.IPv4(10, 0, 0, 1), net.IPv4(10, 0, 0, 254))

	for _, tc := range []struct {
		name string
		mask net.IPMask
		mods []dhcpv4.Modifier
		want nic.Lease
	}{
		{"bare", mask24, nil, base},
		{"router only", mask24, []dhcpv4.Modifier{router},
			with(func(l *nic.Lease) { l.Router = ip("10.0.0.1") })},
		{"option 121 as Neutron's qdhcp sends it", mask24, []dhcpv4.Modifier{neutron},
			with(func(l *nic.Lease) { l.Routes = neutronRoutes })},
		{"option 121 wins over option 3", mask24, []dhcpv4.Modifier{router, neutron},
			with(func(l *nic.Lease) { l.Routes = neutronRoutes })},
		{"option 121 wins over option 249", mask24, []dhcpv4.Modifier{neutron, raw(249, 0, 192, 168, 0, 1)},
			with(func(l *nic.Lease) { l.Routes = neutronRoutes })},
		{"option 249 without 121", mask24, []dhcpv4.Modifier{router, raw(249, 16, 172, 16, 10, 0, 0, 7, 0, 10, 0, 0, 1)},
			with(func(l *nic.Lease) {
				l.Routes = []nic.Route{{Dst: pfx("172.16.0.0/16"), Gw: ip("10.0.0.7")}, {Dst: pfx("0.0.0.0/0"), Gw: ip("10.0.0.1")}}
			})},
		{"option 121 as the library encodes it", mask24, []dhcpv4.Modifier{dhcpv4.WithOption(dhcpv4.OptClasslessStaticRoute(
			&dhcpv4.Route{Dest: &net.IPNet{IP: net.IPv4(192, 168, 128, 0).To4(), Mask: net.CIDRMask(17, 32)}, Router: net.IPv4(10, 0, 0, 9)},
			&dhcpv4.Route{Dest: &net.IPNet{IP: net.IPv4(0, 0, 0, 0).To4(), Mask: net.CIDRMask(0, 32)}, Router: net.IPv4(10, 0, 0, 1)},
		))}, with(func(l *nic.Lease) {
			l.Routes = []nic.Route{{Dst: pfx("192.168.128.0/17"), Gw: ip("10.0.0.9")}, {Dst: pfx("0.0.0.0/0"), Gw: ip("10.0.0.1")}}
		})},
		{"destination bits past the prefix are cleared", mask24, []dhcpv4.Modifier{raw(121, 9, 10, 255, 10, 0, 0, 1)},
			with(func(l *nic.Lease) { l.Routes = []nic.Route{{Dst: pfx("10.128.0.0/9"), Gw: ip("10.0.0.1")}} })},
		{"MTU", mask24, []dhcpv4.Modifier{raw(26, 0x05, 0x78)},
			with(func(l *nic.Lease) { l.MTU = 1400 })},
		{"DNS and domain", mask24, []dhcpv4.Modifier{dhcpv4.WithDNS(net.IPv4(10, 0, 0, 2), net.IPv4(8, 8, 8, 8)), raw(15, 'e', 'x', '.', 'o', 'r', 'g', 0)},
			with(func(l *nic.Lease) { l.DNS = []netip.Addr{ip("10.0.0.2"), ip("8.8.8.8")}; l.Domain = "ex.org" })},
		{"NTP servers", mask24, []dhcpv4.Modifier{raw(42, 10, 0, 0, 2, 192, 168, 1, 123)},
			with(func(l *nic.Lease) { l.NTP = []netip.Addr{ip("10.0.0.2"), ip("192.168.1.123")} })},
		{"NTP servers as the library encodes them", mask24, []dhcpv4.Modifier{dhcpv4.WithOption(dhcpv4.OptNTPServers(net.IPv4(10, 0, 0, 3)))},
			with(func(l *nic.Lease) { l.NTP = []netip.Addr{ip("10.0.0.3")} })},
		{"lease time", mask24, []dhcpv4.Modifier{dhcpv4.WithLeaseTime(86400)},
			with(func(l *nic.Lease) { l.LeaseTime = 24 * time.Hour })},
		{"broadcast option", mask24, []dhcpv4.Modifier{raw(28, 10, 0, 0, 127)},
			with(func(l *nic.Lease) { l.Broadcast = ip("10.0.0.127") })},
		{"/32 as GCE hands out, no broadcast", net.CIDRMask(32, 32), []dhcpv4.Modifier{router},
			with(func(l *nic.Lease) { l.Addr = pfx("10.0.0.5/32"); l.Broadcast = netip.Addr{}; l.Router = ip("10.0.0.1") })},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := LeaseFromACK(ack(t, tc.mask, tc.mods...), "eth0")
			if err != nil {
				t.Fatalf("LeaseFromACK: %v", err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("LeaseFromACK =\n  %+v\nwant\n  %+v", got, tc.want)
			}
		})
	}
}

func TestLeaseFromACKErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		msg  *dhcpv4.DHCPv4
		want string
	}{
		{"no ACK", nil, "no ACK"},
		{"an OFFER", ack(t, mask24, dhcpv4.WithMessageType(dhcpv4.MessageTypeOffer)), "OFFER, not an ACK"},
		{"no yiaddr", ack(t, mask24, dhcpv4.WithYourIP(net.IPv4zero)), "no address offered"},
		{"missing netmask", ack(t, nil), "option 1 (subnet mask) missing"},
		{"short netmask", ack(t, nil, raw(1, 255, 255, 255)), "option 1 (subnet mask): length 3, want 4"},
		{"holey netmask", ack(t, nil, raw(1, 255, 0, 255, 0)), "255.0.255.0 is not a contiguous netmask"},
		{"121 truncated in the destination", ack(t, mask24, raw(121, 32, 169, 254, 169, 254, 10, 0, 0, 2, 24, 10, 0)),
			"option 121 (classless static routes): route 2 at byte 9: truncated, a /24 route needs 8 bytes, 3 left"},
		{"121 truncated in the router", ack(t, mask24, raw(121, 0, 10, 0, 0)),
			"route 1 at byte 0: truncated, a /0 route needs 5 bytes, 4 left"},
		{"121 prefix longer than 32", ack(t, mask24, raw(121, 33, 1, 2, 3, 4, 5, 10, 0, 0, 1)),
			"option 121 (classless static routes): route 1 at byte 0: prefix length 33 is more than 32"},
		{"121 empty", ack(t, mask24, raw(121)), "option 121 (classless static routes): empty"},
		{"249 malformed", ack(t, mask24, raw(249, 40, 0, 0, 0, 0)),
			"option 249 (Microsoft classless static routes): route 1 at byte 0: prefix length 40"},
		{"router not a multiple of 4", ack(t, mask24, raw(3, 10, 0, 0, 1, 10)), "option 3 (router): length 5 is not a multiple of 4"},
		{"MTU too small", ack(t, mask24, raw(26, 0, 67)), "option 26 (interface MTU): 67 is below the minimum 68"},
		{"MTU wrong length", ack(t, mask24, raw(26, 5, 120, 0)), "option 26 (interface MTU): length 3, want 2"},
		{"DNS not a multiple of 4", ack(t, mask24, raw(6, 8, 8, 8)), "option 6 (DNS servers): length 3, want at least 4"},
		{"NTP not a multiple of 4", ack(t, mask24, raw(42, 10, 0, 0, 2, 10)), "option 42 (NTP servers): length 5 is not a multiple of 4"},
		{"NTP empty", ack(t, mask24, raw(42)), "option 42 (NTP servers): length 0, want at least 4"},
		{"server id wrong length", ack(t, mask24, raw(54, 10, 0, 0)), "option 54 (server identifier): length 3, want 4"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l, err := LeaseFromACK(tc.msg, "eth1")
			if err == nil {
				t.Fatalf("LeaseFromACK = %+v, want an error with %q", l, tc.want)
			}
			if !strings.Contains(err.Error(), tc.want) || !strings.HasPrefix(err.Error(), "dhcp lease on eth1: ") {
				t.Errorf("error %q, want it to name eth1 and contain %q", err, tc.want)
			}
			if !reflect.DeepEqual(l, nic.Lease{}) {
				t.Errorf("lease %+v returned with the error", l)
			}
		})
	}
}

// encodeRoutes is RFC 3442's encoding, the inverse of ParseClasslessRoutes.
func encodeRoutes(rs []nic.Route) []byte {
	var b []byte
	for _, r := range rs {
		a := r.Dst.Addr().As4()
		b = append(b, byte(r.Dst.Bits()))
		b = append(b, a[:(r.Dst.Bits()+7)/8]...)
		g := r.Gw.As4()
		b = append(b, g[:]...)
	}
	return b
}

func TestParseClasslessRoutesRFC3442Examples(t *testing.T) {
	// RFC 3442's table of subnet encodings, each with router 10.0.0.1.
	for _, tc := range []struct {
		enc []byte
		dst string
	}{
		{[]byte{0}, "0.0.0.0/0"},
		{[]byte{8, 10}, "10.0.0.0/8"},
		{[]byte{9, 10, 0}, "10.0.0.0/9"},
		{[]byte{16, 10, 17}, "10.17.0.0/16"},
		{[]byte{18, 10, 27, 128}, "10.27.128.0/18"},
		{[]byte{24, 10, 229, 0}, "10.229.0.0/24"},
		{[]byte{25, 10, 198, 122, 0}, "10.198.122.0/25"},
		{[]byte{32, 10, 0, 0, 1}, "10.0.0.1/32"},
	} {
		b := append(append([]byte(nil), tc.enc...), 10, 0, 0, 1)
		got, err := ParseClasslessRoutes(b)
		want := []nic.Route{{Dst: pfx(tc.dst), Gw: ip("10.0.0.1")}}
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("ParseClasslessRoutes(% x) = %v, %v; want %v", b, got, err, want)
		}
		if enc := encodeRoutes(got); !bytes.Equal(enc, b) {
			t.Errorf("encode(%v) = % x, want % x", got, enc, b)
		}
	}
}

func FuzzParseClasslessRoutes(f *testing.F) {
	f.Add([]byte{32, 169, 254, 169, 254, 10, 0, 0, 2, 0, 10, 0, 0, 1})
	f.Add([]byte{24, 10, 0, 0, 0, 0, 0, 0})
	f.Add([]byte{9, 10, 255, 10, 0, 0, 1})
	f.Add([]byte{33, 0, 0, 0, 0, 0, 0, 0, 0})
	f.Add([]byte{24, 10, 0})
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		rs, err := ParseClasslessRoutes(b)
		if err != nil {
			if rs != nil {
				t.Fatalf("routes %v with error %v", rs, err)
			}
			return
		}
		if len(rs) == 0 {
			t.Fatalf("no routes and no error for % x", b)
		}
		for _, r := range rs {
			if !r.Dst.IsValid() || !r.Dst.Addr().Is4() || r.Dst != r.Dst.Masked() || !r.Gw.Is4() {
				t.Fatalf("bad route %v from % x", r, b)
			}
		}
		// Re-encoding gives the same length, and parses to the same routes.
		enc := encodeRoutes(rs)
		if len(enc) != len(b) {
			t.Fatalf("re-encoded % x to % x", b, enc)
		}
		again, err := ParseClasslessRoutes(enc)
		if err != nil || !reflect.DeepEqual(again, rs) {
			t.Fatalf("round trip of %v: %v, %v", rs, again, err)
		}
	})
}

// FuzzLeaseFromACK feeds whole packets through dhcpv4's parser and
// LeaseFromACK, which must never panic and must return only sane leases.
func FuzzLeaseFromACK(f *testing.F) {
	for _, mods := range [][]dhcpv4.Modifier{
		nil,
		{dhcpv4.WithRouter(net.IPv4(10, 0, 0, 1)), raw(26, 5, 120), dhcpv4.WithDNS(net.IPv4(10, 0, 0, 2))},
		{raw(121, 32, 169, 254, 169, 254, 10, 0, 0, 2, 0, 10, 0, 0, 1)},
		{raw(249, 0, 10, 0, 0, 1)},
		{raw(121, 33, 1)},
	} {
		f.Add(ack(f, mask24, mods...).ToBytes())
	}
	f.Add(ack(f, nil).ToBytes())
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := dhcpv4.FromBytes(b)
		if err != nil {
			return
		}
		l, err := LeaseFromACK(m, "eth0")
		if err != nil {
			return
		}
		if !l.Addr.IsValid() || !l.Addr.Addr().Is4() || l.Addr.Addr().IsUnspecified() {
			t.Fatalf("lease with address %v", l.Addr)
		}
		if l.MTU != 0 && l.MTU < minMTU {
			t.Fatalf("lease with MTU %d", l.MTU)
		}
		if l.Router.IsValid() && len(l.Routes) > 0 {
			t.Fatalf("lease with both a router and routes: %+v", l)
		}
	})
}
