package vm

import (
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/vishvananda/netns"
)

// NetNS is a network namespace with a tap device for a VM, set up like
// Neutron's qdhcp namespace: the tap holds the namespace's address
// (RouterIP), 169.254.169.254 is a local address there, and an optional
// dnsmasq serves DHCP with option 121 routing the metadata address via
// RouterIP. Nothing crosses into the host's network.
type NetNS struct {
	Name, Tap string
	dir       string
	dnsmasq   *exec.Cmd
	servers   []*http.Server
	// extra are the addresses ServeAt added to the namespace's loopback,
	// and AddLinkAddr's.
	extra map[string]bool
}

const (
	// RouterIP is the namespace's address on the VM's link.
	RouterIP = "10.77.0.1"
	// MetadataIP is where the metadata service listens.
	MetadataIP = "169.254.169.254"
)

func ipCmd(args ...string) error { return run("ip", args...) }

// NewNetNS creates a namespace named name with a tap device for QEMU.
// With dhcp, dnsmasq serves leases from 10.77.0.50-99 with option 121
// (169.254.169.254/32 via RouterIP, and a default route) and MTU 1400.
func NewNetNS(name string, dhcp bool) (*NetNS, error) {
	n := &NetNS{Name: name, Tap: "eitap0"}
	var err error
	if n.dir, err = os.MkdirTemp("", "netns-"+name); err != nil {
		return nil, err
	}
	steps := [][]string{
		{"netns", "add", name},
		{"-n", name, "link", "set", "lo", "up"},
		{"-n", name, "tuntap", "add", "dev", n.Tap, "mode", "tap"},
		{"-n", name, "addr", "add", RouterIP + "/24", "dev", n.Tap},
		{"-n", name, "addr", "add", MetadataIP + "/32", "dev", "lo"},
		{"-n", name, "link", "set", n.Tap, "up"},
	}
	for _, s := range steps {
		if err := ipCmd(s...); err != nil {
			n.Close()
			return nil, err
		}
	}
	if dhcp {
		n.dnsmasq = exec.Command("ip", "netns", "exec", name, "dnsmasq", "--keep-in-foreground", "--conf-file=/dev/null",
			"--port=0", "--interface="+n.Tap, "--bind-interfaces", "--dhcp-authoritative",
			"--dhcp-range=10.77.0.50,10.77.0.99,255.255.255.0,1h",
			"--dhcp-option=121,"+MetadataIP+"/32,"+RouterIP+",0.0.0.0/0,"+RouterIP,
			"--dhcp-option=26,1400",
			"--dhcp-leasefile="+filepath.Join(n.dir, "leases"), "--pid-file="+filepath.Join(n.dir, "pid"),
			"--log-dhcp", "--log-facility="+filepath.Join(n.dir, "dnsmasq.log"))
		if err := n.dnsmasq.Start(); err != nil {
			n.Close()
			return nil, fmt.Errorf("dnsmasq (apt-get install dnsmasq-base): %w", err)
		}
	}
	return n, nil
}

// Serve serves h on MetadataIP:80 inside the namespace.
func (n *NetNS) Serve(h http.Handler) error {
	l, err := n.listen("tcp", MetadataIP+":80")
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	n.servers = append(n.servers, srv)
	go srv.Serve(l)
	return nil
}

// ServeAt serves h on addr ("100.100.100.200:80", RouterIP+":8080") inside
// the namespace, for the platforms whose services are not at
// MetadataIP:80: Alibaba Cloud's and Scaleway's own addresses, Azure's
// wire server, CloudStack's virtual router (the DHCP server, RouterIP) and
// password servers on port 8080. A host that is not RouterIP or MetadataIP
// is added to the namespace's loopback as a /32, once: the VM reaches it
// by the default route dnsmasq gives (via RouterIP).
func (n *NetNS) ServeAt(addr string, h http.Handler) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("serve at %q: %w", addr, err)
	}
	if ip := net.ParseIP(host); ip == nil || ip.To4() == nil {
		return fmt.Errorf("serve at %q: want an IPv4 address", addr)
	}
	if host != RouterIP && host != MetadataIP && !n.extra[host] {
		if err := ipCmd("-n", n.Name, "addr", "add", host+"/32", "dev", "lo"); err != nil {
			return fmt.Errorf("serve at %s: %w", addr, err)
		}
		if n.extra == nil {
			n.extra = map[string]bool{}
		}
		n.extra[host] = true
	}
	l, err := n.listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("serve at %s: %w", addr, err)
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	n.servers = append(n.servers, srv)
	go srv.Serve(l)
	return nil
}

// RouteLinkLocal4 routes 169.254.0.0/16 out of the tap, so a guest that
// reached MetadataIP from an IPv4 link-local address of its own (no DHCP
// lease, DigitalOcean's path) gets its answers back.
func (n *NetNS) RouteLinkLocal4() error {
	return ipCmd("-n", n.Name, "route", "add", "169.254.0.0/16", "dev", n.Tap)
}

// AddLinkAddr gives the namespace a second address on the VM's link
// ("192.0.2.1/24"), for guests whose static network is not RouterIP's
// subnet; ServeAt and ServeTLS then serve on it as it is.
func (n *NetNS) AddLinkAddr(cidr string) error {
	ip, _, err := net.ParseCIDR(cidr)
	if err != nil || ip.To4() == nil {
		return fmt.Errorf("link address %q: want an IPv4 address/prefix", cidr)
	}
	if err := ipCmd("-n", n.Name, "addr", "add", cidr, "dev", n.Tap); err != nil {
		return err
	}
	if n.extra == nil {
		n.extra = map[string]bool{}
	}
	n.extra[ip.String()] = true
	return nil
}

// listen opens a listener inside the namespace: a socket belongs to the
// namespace its thread was in when it was made.
func (n *NetNS) listen(network, addr string) (net.Listener, error) {
	type result struct {
		l   net.Listener
		err error
	}
	ch := make(chan result, 1)
	go func() {
		runtime.LockOSThread()
		// This thread never goes back: it ends locked, and the runtime
		// discards it.
		h, err := netns.GetFromName(n.Name)
		if err != nil {
			ch <- result{nil, err}
			return
		}
		defer h.Close()
		if err := netns.Set(h); err != nil {
			ch <- result{nil, err}
			return
		}
		l, err := net.Listen(network, addr)
		ch <- result{l, err}
	}()
	r := <-ch
	return r.l, r.err
}

// Wrap is the command prefix that runs QEMU inside the namespace.
func (n *NetNS) Wrap() []string { return []string{"ip", "netns", "exec", n.Name} }

// DHCPLog returns dnsmasq's log.
func (n *NetNS) DHCPLog() string {
	b, _ := os.ReadFile(filepath.Join(n.dir, "dnsmasq.log"))
	return string(b)
}

// Close stops the servers and dnsmasq and deletes the namespace.
func (n *NetNS) Close() error {
	for _, s := range n.servers {
		s.Close()
	}
	if n.dnsmasq != nil && n.dnsmasq.Process != nil {
		n.dnsmasq.Process.Kill()
		n.dnsmasq.Wait()
	}
	if b, err := os.ReadFile(filepath.Join(n.dir, "pid")); err == nil {
		exec.Command("kill", strings.TrimSpace(string(b))).Run()
	}
	err := ipCmd("netns", "del", n.Name)
	os.RemoveAll(n.dir)
	return err
}
