package dhcp

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/earlyinit/earlyinit/internal/nic"
	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"
)

// cmdTimeout bounds every command the tests run.
const cmdTimeout = 5 * time.Second

func run(t *testing.T, args ...string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), cmdTimeout)
	defer cancel()
	if out, err := exec.CommandContext(ctx, args[0], args[1:]...).CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", strings.Join(args, " "), err, out)
	}
}

// namedNetns adds a named network namespace, deleted when the test ends.
func namedNetns(t *testing.T, role string) string {
	t.Helper()
	name := fmt.Sprintf("ei-%s-%d-%s", role, os.Getpid(), strings.ToLower(t.Name()))
	if len(name) > 60 {
		name = name[:60]
	}
	run(t, "ip", "netns", "add", name)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), cmdTimeout)
		defer cancel()
		if out, err := exec.CommandContext(ctx, "ip", "netns", "del", name).CombinedOutput(); err != nil {
			t.Errorf("ip netns del %s: %v\n%s", name, err, out)
		}
	})
	return name
}

// inNamedNetns runs f on this goroutine's thread moved into the named
// network namespace, and moves it back. A thread that cannot be moved back
// stays locked, so Go discards it when the test ends.
func inNamedNetns(t *testing.T, name string, f func()) {
	t.Helper()
	h, err := netns.GetFromName(name)
	if err != nil {
		t.Fatalf("network namespace %s: %v", name, err)
	}
	defer h.Close()
	inNetnsHandle(t, h, f)
}

// inFreshNetns runs f on this goroutine's thread moved into a new network
// namespace, which goes away with everything in it when f returns. Subtests
// run on goroutines of their own, so each must call it itself.
func inFreshNetns(t *testing.T, f func()) {
	t.Helper()
	runtime.LockOSThread()
	orig, err := netns.Get()
	if err != nil {
		runtime.UnlockOSThread()
		t.Fatalf("get network namespace: %v", err)
	}
	defer orig.Close()
	h, err := netns.New() // enters it
	if err != nil {
		runtime.UnlockOSThread()
		t.Fatalf("new network namespace: %v", err)
	}
	defer h.Close()
	defer func() {
		if err := netns.Set(orig); err != nil {
			t.Errorf("restore network namespace: %v", err)
			return
		}
		runtime.UnlockOSThread()
	}()
	f()
}

func inNetnsHandle(t *testing.T, h netns.NsHandle, f func()) {
	t.Helper()
	runtime.LockOSThread()
	orig, err := netns.Get()
	if err != nil {
		runtime.UnlockOSThread()
		t.Fatalf("get network namespace: %v", err)
	}
	defer orig.Close()
	if err := netns.Set(h); err != nil {
		runtime.UnlockOSThread()
		t.Fatalf("enter network namespace: %v", err)
	}
	defer func() {
		if err := netns.Set(orig); err != nil {
			t.Errorf("restore network namespace: %v", err)
			return
		}
		runtime.UnlockOSThread()
	}()
	f()
}

// syncBuffer collects dnsmasq's log for the failure message.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// startDnsmasq runs dnsmasq in the named namespace, serving DHCP on eth0
// with the given extra arguments; it is killed when the test ends.
func startDnsmasq(t *testing.T, ns string, args ...string) *syncBuffer {
	t.Helper()
	bin, err := exec.LookPath("dnsmasq")
	if err != nil {
		t.Fatalf("dnsmasq not found (Debian package dnsmasq-base; run make deps): %v", err)
	}
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "dnsmasq.pid")
	log := &syncBuffer{}
	cmd := exec.Command("ip", append([]string{"netns", "exec", ns, bin,
		"--keep-in-foreground",
		"--conf-file=/dev/null",
		"--port=0", // no DNS
		"--interface=eth0",
		"--bind-interfaces",
		"--user=root",
		"--log-dhcp",
		"--log-facility=-",
		"--pid-file=" + pidFile,
		"--dhcp-leasefile=" + filepath.Join(dir, "leases"),
	}, args...)...)
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		t.Fatalf("start dnsmasq: %v", err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		cmd.Process.Kill()
		select {
		case <-exited:
		case <-time.After(cmdTimeout):
			t.Errorf("dnsmasq (pid %d) did not exit after SIGKILL", cmd.Process.Pid)
		}
		if t.Failed() {
			t.Logf("dnsmasq log:\n%s", log)
		}
	})
	// It writes its pid file once its sockets are open.
	deadline := time.Now().Add(cmdTimeout)
	for {
		if _, err := os.Stat(pidFile); err == nil {
			return log
		}
		select {
		case err := <-exited:
			t.Fatalf("dnsmasq exited: %v\n%s", err, log)
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("dnsmasq wrote no pid file within %v\n%s", cmdTimeout, log)
		}
	}
}

// addrs lists the link's addresses of all families.
func addrs(t *testing.T, name string) []netip.Prefix {
	t.Helper()
	l, err := netlink.LinkByName(name)
	if err != nil {
		t.Fatal(err)
	}
	as, err := netlink.AddrList(l, netlink.FAMILY_ALL)
	if err != nil {
		t.Fatal(err)
	}
	var out []netip.Prefix
	for _, a := range as {
		ip, _ := netip.AddrFromSlice(a.IP)
		ones, _ := a.Mask.Size()
		out = append(out, netip.PrefixFrom(ip.Unmap(), ones))
	}
	return out
}

func routes(t *testing.T, name string) []string {
	t.Helper()
	l, err := netlink.LinkByName(name)
	if err != nil {
		t.Fatal(err)
	}
	rs, err := netlink.RouteListFiltered(netlink.FAMILY_V4, &netlink.Route{LinkIndex: l.Attrs().Index}, netlink.RT_FILTER_OIF)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, r := range rs {
		dst := "default"
		if r.Dst != nil && !r.Dst.IP.IsUnspecified() {
			dst = r.Dst.String()
		}
		if r.Gw != nil {
			dst += " via " + r.Gw.String()
		}
		out = append(out, dst)
	}
	return out
}

func link(t *testing.T, name string) *netlink.LinkAttrs {
	t.Helper()
	l, err := netlink.LinkByName(name)
	if err != nil {
		t.Fatal(err)
	}
	return l.Attrs()
}

// TestDnsmasq is Neutron's qdhcp namespace in small: dnsmasq in one
// namespace hands out a lease with option 121 routing 169.254.169.254 via
// itself, MTU 1400 and two NTP servers; in the other, RequestLease and nic.Up configure eth0,
// a TCP connection reaches 169.254.169.254, and Down leaves eth0 as it was.
func TestDnsmasq(t *testing.T) {
	srv, cli := namedNetns(t, "srv"), namedNetns(t, "cli")
	run(t, "ip", "-n", cli, "link", "add", "eth0", "type", "veth", "peer", "name", "eth0", "netns", srv)
	run(t, "ip", "-n", srv, "addr", "add", "10.99.0.2/24", "dev", "eth0")
	run(t, "ip", "-n", srv, "addr", "add", "169.254.169.254/32", "dev", "lo")
	run(t, "ip", "-n", srv, "link", "set", "lo", "up")
	run(t, "ip", "-n", srv, "link", "set", "eth0", "up")
	startDnsmasq(t, srv,
		"--dhcp-range=10.99.0.50,10.99.0.99,255.255.255.0,1h",
		"--dhcp-option=121,169.254.169.254/32,10.99.0.2,0.0.0.0/0,10.99.0.1",
		"--dhcp-option=26,1400",
		// NTP servers (option 42): sent because RequestLease asks.
		"--dhcp-option=42,10.99.0.2,10.99.0.3",
		// dnsmasq pings an address for 3 s before offering it; the
		// retransmissions cover that, but the test need not wait.
		"--no-ping",
	)

	// The metadata service: a TCP listener on 169.254.169.254:80 in the
	// server namespace (a socket stays in the namespace it was made in).
	var ln net.Listener
	inNamedNetns(t, srv, func() {
		var err error
		if ln, err = net.Listen("tcp4", "169.254.169.254:80"); err != nil {
			t.Fatal(err)
		}
	})
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Write([]byte("metadata\n"))
			c.Close()
		}
	}()

	inNamedNetns(t, cli, func() {
		before := *link(t, "eth0")
		if before.Flags&net.FlagUp != 0 {
			t.Fatal("eth0 is up before the test")
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		start := time.Now()
		l, err := RequestLease(ctx, "eth0")
		if err != nil {
			t.Fatalf("RequestLease: %v", err)
		}
		t.Logf("lease %v in %v", l, time.Since(start).Round(time.Millisecond))
		if a := l.Addr.Addr(); l.Addr.Bits() != 24 || a.Less(netip.MustParseAddr("10.99.0.50")) || netip.MustParseAddr("10.99.0.99").Less(a) {
			t.Errorf("lease address %v, want one of 10.99.0.50-99/24", l.Addr)
		}
		want := []nic.Route{
			{Dst: netip.MustParsePrefix("169.254.169.254/32"), Gw: netip.MustParseAddr("10.99.0.2")},
			{Dst: netip.MustParsePrefix("0.0.0.0/0"), Gw: netip.MustParseAddr("10.99.0.1")},
		}
		if !reflect.DeepEqual(l.Routes, want) || l.Router.IsValid() || l.MTU != 1400 ||
			l.Server != netip.MustParseAddr("10.99.0.2") || l.LeaseTime != time.Hour || !l.WasDown || l.Iface != "eth0" {
			t.Errorf("lease %+v, want routes %v, no router, MTU 1400, server 10.99.0.2, 1h, WasDown", l, want)
		}
		if wantNTP := []netip.Addr{netip.MustParseAddr("10.99.0.2"), netip.MustParseAddr("10.99.0.3")}; !reflect.DeepEqual(l.NTP, wantNTP) {
			t.Errorf("lease NTP servers %v, want %v (option 42)", l.NTP, wantNTP)
		}

		e, err := nic.Up(l)
		if err != nil {
			t.Fatalf("Up: %v", err)
		}
		if got := addrs(t, "eth0"); !containsPrefix(got, l.Addr) {
			t.Errorf("after Up eth0 has %v, want %v", got, l.Addr)
		}
		if a := link(t, "eth0"); a.MTU != 1400 || a.Flags&net.FlagUp == 0 {
			t.Errorf("after Up eth0 has MTU %d, flags %v; want 1400, up", a.MTU, a.Flags)
		}
		rs := routes(t, "eth0")
		for _, r := range []string{"169.254.169.254/32 via 10.99.0.2", "default via 10.99.0.1"} {
			if !contains(rs, r) {
				t.Errorf("after Up routes %q, want %q", rs, r)
			}
		}

		d := net.Dialer{Timeout: 2 * time.Second}
		c, err := d.Dial("tcp4", "169.254.169.254:80")
		if err != nil {
			t.Errorf("dial the metadata address: %v", err)
		} else {
			c.SetDeadline(time.Now().Add(2 * time.Second))
			b, err := io.ReadAll(c)
			c.Close()
			if string(b) != "metadata\n" {
				t.Errorf("metadata answered %q, %v", b, err)
			}
		}

		if err := e.Down(); err != nil {
			t.Fatalf("Down: %v", err)
		}
		for _, p := range addrs(t, "eth0") {
			if !p.Addr().IsLinkLocalUnicast() || !p.Addr().Is6() {
				t.Errorf("after Down eth0 still has %v", p)
			}
		}
		if rs := routes(t, "eth0"); len(rs) != 0 {
			t.Errorf("after Down eth0 still has routes %q", rs)
		}
		if a := link(t, "eth0"); a.MTU != before.MTU || a.Flags&net.FlagUp != 0 {
			t.Errorf("after Down eth0 has MTU %d, flags %v; want %d, down", a.MTU, a.Flags, before.MTU)
		}
	})
}

func containsPrefix(ps []netip.Prefix, p netip.Prefix) bool {
	for _, x := range ps {
		if x == p {
			return true
		}
	}
	return false
}

func contains(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}

// TestRequestLeaseNoServer: with nothing answering on the other end, and
// with no carrier at all, RequestLease gives up within its bound, says why,
// and leaves the link down as it found it.
func TestRequestLeaseNoServer(t *testing.T) {
	for _, tc := range []struct {
		name   string
		peerUp bool
		want   string
	}{
		{"silence", true, "dhcp on eth0: no answer to 2 DISCOVERs: context deadline exceeded"},
		{"no carrier", false, "dhcp on eth0: no carrier: context deadline exceeded"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel() // it mostly waits
			inFreshNetns(t, func() {
				// The veth goes with the namespace.
				if err := netlink.LinkAdd(&netlink.Veth{LinkAttrs: netlink.LinkAttrs{Name: "eth0"}, PeerName: "peer0"}); err != nil {
					t.Fatal(err)
				}
				if tc.peerUp {
					p, err := netlink.LinkByName("peer0")
					if err != nil {
						t.Fatal(err)
					}
					if err := netlink.LinkSetUp(p); err != nil {
						t.Fatal(err)
					}
				}
				const bound = 1500 * time.Millisecond
				ctx, cancel := context.WithTimeout(context.Background(), bound)
				defer cancel()
				start := time.Now()
				l, err := RequestLease(ctx, "eth0")
				took := time.Since(start)
				if err == nil || err.Error() != tc.want || !errors.Is(err, context.DeadlineExceeded) {
					t.Errorf("RequestLease = %+v, %v; want %q", l, err, tc.want)
				}
				if took < bound-100*time.Millisecond || took > bound+500*time.Millisecond {
					t.Errorf("RequestLease took %v with a %v bound", took, bound)
				}
				if a := link(t, "eth0"); a.Flags&net.FlagUp != 0 {
					t.Errorf("eth0 left up after a failed RequestLease")
				}
			})
		})
	}
	inFreshNetns(t, func() {
		if _, err := RequestLease(context.Background(), "nope0"); err == nil || !strings.Contains(err.Error(), "dhcp on nope0") {
			t.Errorf("RequestLease on a missing link = %v", err)
		}
	})
}
