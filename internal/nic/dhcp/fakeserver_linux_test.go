package dhcp

import (
	"context"
	"net"
	"net/netip"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/insomniacslk/dhcp/dhcpv4"
	"github.com/insomniacslk/dhcp/dhcpv4/server4"
	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"
)

// fakeServer answers DHCP on its own network namespace's end of a veth
// with whatever script returns for the nth message of a type (nil: stay
// silent), and records what it received.
type fakeServer struct {
	script func(m *dhcpv4.DHCPv4, n int) []*dhcpv4.DHCPv4

	mu   sync.Mutex
	got  []*dhcpv4.DHCPv4
	seen map[dhcpv4.MessageType]int
}

func (s *fakeServer) received() []*dhcpv4.DHCPv4 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.got)
}

func (s *fakeServer) serve(c net.PacketConn) {
	b := make([]byte, 1500)
	for {
		n, _, err := c.ReadFrom(b)
		if err != nil {
			return
		}
		m, err := dhcpv4.FromBytes(b[:n])
		if err != nil || m.OpCode != dhcpv4.OpcodeBootRequest {
			continue
		}
		s.mu.Lock()
		s.got = append(s.got, m)
		s.seen[m.MessageType()]++
		k := s.seen[m.MessageType()]
		s.mu.Unlock()
		for _, r := range s.script(m, k) {
			c.WriteTo(r.ToBytes(), &net.UDPAddr{IP: net.IPv4bcast, Port: dhcpv4.ClientPort})
		}
	}
}

var srvID = net.IPv4(10, 98, 0, 2)

// reply answers m with a message of type t offering 10.98.0.7/24, from
// server id.
func reply(m *dhcpv4.DHCPv4, t dhcpv4.MessageType, id net.IP) *dhcpv4.DHCPv4 {
	return newMessage(m.TransactionID,
		dhcpv4.WithReply(m),
		dhcpv4.WithMessageType(t),
		dhcpv4.WithYourIP(net.IPv4(10, 98, 0, 7)),
		dhcpv4.WithNetmask(net.CIDRMask(24, 32)),
		dhcpv4.WithRouter(net.IPv4(10, 98, 0, 1)),
		dhcpv4.WithOption(dhcpv4.OptServerIdentifier(id)),
		dhcpv4.WithLeaseTime(600))
}

// withFakeServer runs f in a fresh namespace whose eth0 is a veth to
// another fresh namespace where s serves on 10.98.0.2.
func withFakeServer(t *testing.T, s *fakeServer, f func()) {
	inFreshNetns(t, func() {
		cli, err := netns.Get()
		if err != nil {
			t.Fatal(err)
		}
		defer cli.Close()
		if err := netlink.LinkAdd(&netlink.Veth{LinkAttrs: netlink.LinkAttrs{Name: "eth0"}, PeerName: "srv0"}); err != nil {
			t.Fatal(err)
		}
		srv, err := netns.New() // enters it
		if err != nil {
			t.Fatal(err)
		}
		defer srv.Close()
		if err := netns.Set(cli); err != nil {
			t.Fatal(err)
		}
		peer, err := netlink.LinkByName("srv0")
		if err != nil {
			t.Fatal(err)
		}
		if err := netlink.LinkSetNsFd(peer, int(srv)); err != nil {
			t.Fatal(err)
		}

		var conn net.PacketConn
		inNetnsHandle(t, srv, func() {
			peer, err := netlink.LinkByName("srv0")
			if err != nil {
				t.Fatal(err)
			}
			if err := netlink.AddrAdd(peer, &netlink.Addr{IPNet: &net.IPNet{IP: srvID, Mask: net.CIDRMask(24, 32)}}); err != nil {
				t.Fatal(err)
			}
			if err := netlink.LinkSetUp(peer); err != nil {
				t.Fatal(err)
			}
			if conn, err = server4.NewIPv4UDPConn("srv0", &net.UDPAddr{Port: dhcpv4.ServerPort}); err != nil {
				t.Fatal(err)
			}
		})
		// Both ends running before the exchange, so that no message is
		// lost while the kernel activates the server end's queue and
		// the counts below are exact.
		eth0, err := netlink.LinkByName("eth0")
		if err != nil {
			t.Fatal(err)
		}
		if err := netlink.LinkSetUp(eth0); err != nil {
			t.Fatal(err)
		}
		waitRunning(t, "eth0")
		inNetnsHandle(t, srv, func() { waitRunning(t, "srv0") })
		s.seen = map[dhcpv4.MessageType]int{}
		done := make(chan struct{})
		go func() { s.serve(conn); close(done) }()
		defer func() { conn.Close(); <-done }()
		f()
	})
}

func waitRunning(t *testing.T, name string) {
	t.Helper()
	deadline := time.Now().Add(cmdTimeout)
	for {
		l, err := netlink.LinkByName(name)
		if err != nil {
			t.Fatal(err)
		}
		if l.Attrs().RawFlags&unix.IFF_RUNNING != 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s not running after %v", name, cmdTimeout)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestRequestLeaseRetransmits(t *testing.T) {
	t.Parallel() // it mostly waits
	s := &fakeServer{script: func(m *dhcpv4.DHCPv4, n int) []*dhcpv4.DHCPv4 {
		if n == 1 {
			return nil // lose the first DISCOVER and the first REQUEST
		}
		switch m.MessageType() {
		case dhcpv4.MessageTypeDiscover:
			return []*dhcpv4.DHCPv4{reply(m, dhcpv4.MessageTypeOffer, srvID)}
		case dhcpv4.MessageTypeRequest:
			// Another server's ACK for the same transaction comes
			// first and must be ignored.
			return []*dhcpv4.DHCPv4{reply(m, dhcpv4.MessageTypeAck, net.IPv4(10, 98, 0, 3)), reply(m, dhcpv4.MessageTypeAck, srvID)}
		}
		return nil
	}}
	withFakeServer(t, s, func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		start := time.Now()
		l, err := RequestLease(ctx, "eth0")
		took := time.Since(start)
		if err != nil {
			t.Fatalf("RequestLease: %v", err)
		}
		if l.Addr != netip.MustParsePrefix("10.98.0.7/24") || l.Server != netip.MustParseAddr("10.98.0.2") || l.Router != netip.MustParseAddr("10.98.0.1") {
			t.Errorf("lease %v, want 10.98.0.7/24 from 10.98.0.2", l)
		}
		if took < 2*firstRetransmit || took > 2*firstRetransmit+2*time.Second {
			t.Errorf("took %v, want two 1 s retransmission waits", took)
		}
		got := s.received()
		var types []dhcpv4.MessageType
		for _, m := range got {
			types = append(types, m.MessageType())
			if m.TransactionID != got[0].TransactionID {
				t.Errorf("transaction ID %v, want %v throughout", m.TransactionID, got[0].TransactionID)
			}
		}
		want := []dhcpv4.MessageType{dhcpv4.MessageTypeDiscover, dhcpv4.MessageTypeDiscover, dhcpv4.MessageTypeRequest, dhcpv4.MessageTypeRequest}
		if !slices.Equal(types, want) {
			t.Fatalf("server got %v, want %v", types, want)
		}
		for _, code := range []uint8{1, 3, 6, 15, 26, 42, 121, 249} {
			if !got[0].IsOptionRequested(dhcpv4.GenericOptionCode(code)) {
				t.Errorf("DISCOVER does not request option %d: %v", code, got[0].ParameterRequestList())
			}
		}
		req := got[2]
		if !req.RequestedIPAddress().Equal(net.IPv4(10, 98, 0, 7)) || !req.ServerIdentifier().Equal(srvID) {
			t.Errorf("REQUEST asks for %v from %v, want 10.98.0.7 from %v", req.RequestedIPAddress(), req.ServerIdentifier(), srvID)
		}
	})
}

func TestRequestLeaseAfterNAK(t *testing.T) {
	t.Parallel() // it mostly waits
	s := &fakeServer{script: func(m *dhcpv4.DHCPv4, n int) []*dhcpv4.DHCPv4 {
		switch m.MessageType() {
		case dhcpv4.MessageTypeDiscover:
			return []*dhcpv4.DHCPv4{reply(m, dhcpv4.MessageTypeOffer, srvID)}
		case dhcpv4.MessageTypeRequest:
			if n == 1 {
				return []*dhcpv4.DHCPv4{reply(m, dhcpv4.MessageTypeNak, srvID)}
			}
			return []*dhcpv4.DHCPv4{reply(m, dhcpv4.MessageTypeAck, srvID)}
		}
		return nil
	}}
	withFakeServer(t, s, func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		l, err := RequestLease(ctx, "eth0")
		if err != nil {
			t.Fatalf("RequestLease: %v", err)
		}
		if l.Addr != netip.MustParsePrefix("10.98.0.7/24") {
			t.Errorf("lease %v", l)
		}
		got := s.received()
		var types []dhcpv4.MessageType
		for _, m := range got {
			types = append(types, m.MessageType())
		}
		want := []dhcpv4.MessageType{dhcpv4.MessageTypeDiscover, dhcpv4.MessageTypeRequest, dhcpv4.MessageTypeDiscover, dhcpv4.MessageTypeRequest}
		if !slices.Equal(types, want) {
			t.Fatalf("server got %v, want %v: a NAK starts over", types, want)
		}
		if got[0].TransactionID == got[2].TransactionID {
			t.Errorf("the exchange after the NAK reused transaction ID %v", got[0].TransactionID)
		}
	})

	// A server that always NAKs: the error says so, within the bound.
	s = &fakeServer{script: func(m *dhcpv4.DHCPv4, n int) []*dhcpv4.DHCPv4 {
		if m.MessageType() == dhcpv4.MessageTypeDiscover {
			return []*dhcpv4.DHCPv4{reply(m, dhcpv4.MessageTypeOffer, srvID)}
		}
		return []*dhcpv4.DHCPv4{reply(m, dhcpv4.MessageTypeNak, srvID)}
	}}
	withFakeServer(t, s, func() {
		ctx, cancel := context.WithTimeout(context.Background(), 1500*time.Millisecond)
		defer cancel()
		_, err := RequestLease(ctx, "eth0")
		// One NAK a second: two, or one on a slow machine.
		want := "dhcp on eth0: server 10.98.0.2 refused 10.98.0.7: context deadline exceeded (after "
		if err == nil || !strings.HasPrefix(err.Error(), want) || !strings.HasSuffix(err.Error(), "NAKs)") && !strings.HasSuffix(err.Error(), "a NAK)") {
			t.Errorf("RequestLease = %v, want %q...", err, want)
		}
	})
}
