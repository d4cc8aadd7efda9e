package render

import (
	"strings"
	"testing"

	"github.com/earlyinit/earlyinit/internal/netcfg"
)

// What the sysconfig consumer test (sysconfig_consumer_test.go) found the
// RHEL readers, network-scripts and NetworkManager's ifcfg-rh, do not
// read, each pinned on a small input.

// sysconfigRender renders a v2 or v1 YAML input with the sysconfig
// renderer and returns the files by base name.
func sysconfigRender(t *testing.T, yaml string) map[string]string {
	t.Helper()
	c, err := netcfg.Parse("yaml", []byte(yaml), nil)
	if err != nil {
		t.Fatal(err)
	}
	files, err := Sysconfig().Render(c)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, f := range files {
		out[f.Path[strings.LastIndex(f.Path, "/")+1:]] = string(f.Data)
	}
	return out
}

func wantLine(t *testing.T, files map[string]string, file, line string, want bool) {
	t.Helper()
	got := strings.Contains("\n"+files[file], "\n"+line+"\n")
	if got != want {
		t.Errorf("%s: line %q present %v, want %v:\n%s", file, line, got, want, files[file])
	}
}

// TestSysconfigDHCPNotDefaultRoute: a DHCPv4 interface, when another
// gives the IPv4 default route, has DEFROUTE=no, which dhclient-script and
// ifcfg-rh (never-default) read; not cloud-init's
// DHCLIENT_SET_DEFAULT_ROUTE, SUSE's key, which neither does. An IPv6
// default route elsewhere leaves the lease's alone.
func TestSysconfigDHCPNotDefaultRoute(t *testing.T) {
	files := sysconfigRender(t, `version: 2
ethernets:
  eth0: {match: {macaddress: "52:54:00:00:00:01"}, set-name: eth0, addresses: [192.0.2.10/24], gateway4: 192.0.2.1}
  eth1: {match: {macaddress: "52:54:00:00:00:02"}, set-name: eth1, dhcp4: true}
`)
	wantLine(t, files, "ifcfg-eth1", "DEFROUTE=no", true)
	wantLine(t, files, "ifcfg-eth0", "DEFROUTE=yes", true)
	for name, data := range files {
		if strings.Contains(data, "DHCLIENT_SET_DEFAULT_ROUTE") {
			t.Errorf("%s has DHCLIENT_SET_DEFAULT_ROUTE:\n%s", name, data)
		}
	}
	files = sysconfigRender(t, `version: 2
ethernets:
  eth0: {match: {macaddress: "52:54:00:00:00:01"}, set-name: eth0, addresses: ["2001:db8::10/64"], gateway6: "2001:db8::1"}
  eth1: {match: {macaddress: "52:54:00:00:00:02"}, set-name: eth1, dhcp4: true}
`)
	wantLine(t, files, "ifcfg-eth1", "DEFROUTE=no", false)
}

// TestSysconfigRouteMetricIPForm: a route with a metric is written as an
// ip-route line, which network-scripts and ifcfg-rh both read; in the
// ADDRESSn form network-scripts' ifup-routes ignores METRICn. A route
// without one keeps the ADDRESSn form.
func TestSysconfigRouteMetricIPForm(t *testing.T) {
	files := sysconfigRender(t, `version: 2
ethernets:
  eth0:
    match: {macaddress: "52:54:00:00:00:01"}
    set-name: eth0
    addresses: [192.0.2.10/24]
    routes: [{to: 198.51.100.0/24, via: 192.0.2.254, metric: 100}]
  eth1:
    match: {macaddress: "52:54:00:00:00:02"}
    set-name: eth1
    addresses: [203.0.113.10/24]
    routes: [{to: 198.51.101.0/24, via: 203.0.113.254}]
`)
	wantLine(t, files, "route-eth0", "198.51.100.0/24 via 192.0.2.254 metric 100 dev eth0", true)
	if strings.Contains(files["route-eth0"], "METRIC") {
		t.Errorf("route-eth0 has METRICn:\n%s", files["route-eth0"])
	}
	wantLine(t, files, "route-eth1", "ADDRESS0=198.51.101.0", true)
}

// TestSysconfigNoDeadKeys: no BONDING_SLAVEn on a bond (SUSE's; the
// members' MASTER= and SLAVE=yes enslave them) and no NETWORKING_IPV6 in
// /etc/sysconfig/network (read by nothing since initscripts dropped it).
func TestSysconfigNoDeadKeys(t *testing.T) {
	files := sysconfigRender(t, `version: 2
ethernets:
  ens3: {match: {macaddress: "52:54:00:00:00:03"}, set-name: ens3}
  ens4: {match: {macaddress: "52:54:00:00:00:04"}, set-name: ens4}
bonds:
  bond0: {interfaces: [ens3, ens4], parameters: {mode: active-backup}, addresses: ["2001:db8::10/64"]}
`)
	if strings.Contains(files["ifcfg-bond0"], "BONDING_SLAVE") {
		t.Errorf("ifcfg-bond0 has BONDING_SLAVEn:\n%s", files["ifcfg-bond0"])
	}
	for _, m := range []string{"ifcfg-ens3", "ifcfg-ens4"} {
		wantLine(t, files, m, "MASTER=bond0", true)
		wantLine(t, files, m, "SLAVE=yes", true)
	}
	wantLine(t, files, "network", "NETWORKING_IPV6=yes", false)
	wantLine(t, files, "network", "IPV6_AUTOCONF=no", true)
}

// TestSysconfigPortNoAddressing: a bridge port's (or bond member's) own
// addresses, gateway, DNS and routes are not written: network-scripts'
// ifup-eth enslaves it and exits, NetworkManager gives a port connection
// no IP settings. Lost names them.
func TestSysconfigPortNoAddressing(t *testing.T) {
	const in = `version: 1
config:
  - type: physical
    name: eth0
    mac_address: "52:54:00:00:00:01"
    subnets:
      - {type: static, address: 192.0.2.10/24, gateway: 192.0.2.1, dns_nameservers: [192.0.2.53]}
  - {type: bridge, name: br0, bridge_interfaces: [eth0], subnets: [{type: dhcp4}]}
  - {type: route, destination: 198.51.100.0/24, gateway: 192.0.2.254}
`
	files := sysconfigRender(t, in)
	for _, k := range []string{"IPADDR", "GATEWAY", "DNS1", "DEFROUTE"} {
		if strings.Contains(files["ifcfg-eth0"], "\n"+k+"=") {
			t.Errorf("ifcfg-eth0 has %s:\n%s", k, files["ifcfg-eth0"])
		}
	}
	wantLine(t, files, "ifcfg-eth0", "BRIDGE=br0", true)
	if _, ok := files["route-eth0"]; ok {
		t.Errorf("route-eth0 written for a bridge port:\n%s", files["route-eth0"])
	}
	c, err := netcfg.Parse("yaml", []byte(in), nil)
	if err != nil {
		t.Fatal(err)
	}
	if w := Warning("sysconfig", c); !strings.Contains(w, "addressing (eth0:") {
		t.Errorf("warning %q does not name eth0's addressing", w)
	}
}
