package discover

import (
	"context"
	"fmt"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/earlyinit/earlyinit/internal/nic"
	"github.com/vishvananda/netns"
)

// veth0AsDevice is the machine's netlink, a veth shown as a device: a
// veth is virtual, and the fallback NIC rule skips virtual links.
type veth0AsDevice struct{ nic.Netlinker }

func (v veth0AsDevice) LinkList() ([]nic.Link, error) {
	ls, err := v.Netlinker.LinkList()
	for i := range ls {
		if ls[i].Kind == "veth" {
			ls[i].Kind, ls[i].Driver = "device", "virtio_net"
		}
	}
	return ls, err
}

// TestNetworkLeaseNTP: the NTP servers of the temporary DHCP lease
// (option 42, served by dnsmasq in another network namespace) are what
// LeaseNTPServers hands the boot step.
func TestNetworkLeaseNTP(t *testing.T) {
	dnsmasq, err := exec.LookPath("dnsmasq")
	if err != nil {
		t.Fatalf("dnsmasq not found (Debian package dnsmasq-base; run make deps): %v", err)
	}
	run := func(args ...string) {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if out, err := exec.CommandContext(ctx, args[0], args[1:]...).CombinedOutput(); err != nil {
			t.Fatalf("%s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	srv, cli := fmt.Sprintf("ei-ntps-%d", os.Getpid()), fmt.Sprintf("ei-ntpc-%d", os.Getpid())
	for _, ns := range []string{srv, cli} {
		run("ip", "netns", "add", ns)
		t.Cleanup(func() { exec.Command("ip", "netns", "del", ns).Run() })
	}
	run("ip", "-n", cli, "link", "add", "eth0", "type", "veth", "peer", "name", "eth0", "netns", srv)
	run("ip", "-n", srv, "addr", "add", "10.97.0.2/24", "dev", "eth0")
	run("ip", "-n", srv, "link", "set", "eth0", "up")
	dir := t.TempDir()
	pid := filepath.Join(dir, "pid")
	cmd := exec.Command("ip", "netns", "exec", srv, dnsmasq, "--keep-in-foreground", "--conf-file=/dev/null",
		"--port=0", "--interface=eth0", "--bind-interfaces", "--user=root", "--no-ping",
		"--pid-file="+pid, "--dhcp-leasefile="+filepath.Join(dir, "leases"),
		"--dhcp-range=10.97.0.50,10.97.0.99,255.255.255.0,1h",
		"--dhcp-option=42,10.97.0.2,192.0.2.123")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if _, err := os.Stat(pid); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("dnsmasq wrote no pid file within 5s")
		}
	}

	runtime.LockOSThread()
	orig, err := netns.Get()
	if err != nil {
		t.Fatal(err)
	}
	defer orig.Close()
	h, err := netns.GetFromName(cli)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	if err := netns.Set(h); err != nil {
		t.Fatal(err)
	}
	defer func() {
		if netns.Set(orig) == nil {
			runtime.UnlockOSThread()
		}
	}()

	log := &testLog{}
	l := &Linux{Root: t.TempDir(), Timeout: 5 * time.Second, Log: log, Netlink: veth0AsDevice{nic.System()}}
	if got := l.LeaseNTPServers(); got != nil {
		t.Errorf("LeaseNTPServers before Network = %v", got)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, done, err := l.Network(ctx)
	if err != nil {
		t.Fatalf("Network: %v\n%s", err, log.String())
	}
	done()
	want := []netip.Addr{netip.MustParseAddr("10.97.0.2"), netip.MustParseAddr("192.0.2.123")}
	if got := l.LeaseNTPServers(); !reflect.DeepEqual(got, want) {
		t.Errorf("LeaseNTPServers = %v, want %v\n%s", got, want, log.String())
	}
	if !strings.Contains(log.String(), "offers 2 NTP server(s) (option 42)") {
		t.Errorf("log does not mention the NTP servers:\n%s", log.String())
	}
}
