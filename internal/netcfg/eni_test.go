package netcfg

import (
	"fmt"
	"os"
	"strings"
	"testing"
	"time"
)

func TestParseENI(t *testing.T) {
	for _, tt := range []struct {
		name string
		in   string
		want *Config
	}{{
		name: "nocloud documented example",
		in: `iface eth0 inet static
address 192.168.1.10
network 192.168.1.0
netmask 255.255.255.0
broadcast 192.168.1.255
gateway 192.168.1.254
metric 100
hwaddress ether bc:76:4e:20:43:9E
`,
		want: &Config{Version: 1, Interfaces: []Interface{{Name: "eth0", Kind: Physical, MAC: "bc:76:4e:20:43:9e",
			Subnets: []Subnet{{Type: Static, Address: pfx("192.168.1.10/24"), Gateway: ip("192.168.1.254"), Metric: 100, Broadcast: ip("192.168.1.255")}}}}},
	}, {
		name: "sorted devices, aliases, lo dns, inet6, continuation",
		in: `# comment
auto lo
iface lo inet loopback
    dns-nameservers 10.0.0.53 \
        10.0.0.54
    dns-search example.com

auto eth1
iface eth1 inet dhcp
iface eth1 inet6 auto
allow-hotplug eth0
iface eth0 inet static
    netmask 255.255.0.0
    address 10.1.2.3
    mtu 1400
    up ip route add 10.9.0.0/16 via 10.1.0.1
iface eth0:1 inet static
    address 10.2.0.3/8
    dns-nameservers 10.2.0.53
iface eth0 inet6 static
    address 2001:db8::3
iface eth2 inet6 dhcp
iface eth3 inet manual
`,
		want: &Config{Version: 1, DNS: DNS{Nameservers: ips("10.0.0.53", "10.0.0.54"), Search: []string{"example.com"}},
			Interfaces: []Interface{
				{Name: "eth0", Kind: Physical, MTU: 1400, Subnets: []Subnet{
					{Type: Static, Address: pfx("10.1.2.3/16")},
					{Type: Static, Address: pfx("10.2.0.3/8"), DNS: DNS{Nameservers: ips("10.2.0.53")}},
					{Type: Static, Address: pfx("2001:db8::3/64")},
				}},
				{Name: "eth1", Kind: Physical, Subnets: []Subnet{{Type: DHCP4}, {Type: SLAAC}}},
				{Name: "eth2", Kind: Physical, Subnets: []Subnet{{Type: DHCP6}}},
				{Name: "eth3", Kind: Physical, Subnets: []Subnet{{Type: Manual}}},
			}},
	}, {
		name: "bridge, bond and vlans",
		in: `auto br0
iface br0 inet dhcp
    bridge_ports eth0 eth1
    bridge_stp off
    bridge_fd 0
    bridge_bridgeprio 10
    bridge_pathcost eth0 10
    bridge_pathcost eth1 20
iface eth2 inet manual
    bond-master bond0
    bond-mode 802.3ad
iface eth3 inet manual
    bond-master bond0
iface bond0 inet manual
    bond-slaves none
    bond-mode 802.3ad
    bond-miimon 100
iface bond0.20 inet dhcp
iface vlan30 inet manual
    vlan-raw-device bond0
`,
		want: &Config{Version: 1, Interfaces: []Interface{
			{Name: "bond0", Kind: Bond, Bond: &BondConfig{Members: []string{"eth2", "eth3"},
				Params: map[string]string{"mode": "802.3ad", "miimon": "100"}}, Subnets: []Subnet{{Type: Manual}}},
			{Name: "bond0.20", Kind: VLAN, VLAN: &VLANConfig{ID: 20, Link: "bond0"}, Subnets: []Subnet{{Type: DHCP4}}},
			{Name: "br0", Kind: Bridge, Bridge: &BridgeConfig{Members: []string{"eth0", "eth1"}, Params: map[string]string{
				"stp": "off", "fd": "0", "priority": "10", "pathcost": "eth0 10,eth1 20"}}, Subnets: []Subnet{{Type: DHCP4}}},
			{Name: "eth2", Kind: Physical, Subnets: []Subnet{{Type: Manual}}},
			{Name: "eth3", Kind: Physical, Subnets: []Subnet{{Type: Manual}}},
			{Name: "vlan30", Kind: VLAN, VLAN: &VLANConfig{ID: 30, Link: "bond0"}, Subnets: []Subnet{{Type: Manual}}},
		}},
	}, {
		name: "mapping stanza and source lines are skipped",
		in:   "source /etc/network/interfaces.d/*\nmapping eth0\n  script /usr/local/sbin/map-scheme\n  map HOME eth0-home\niface eth0 inet dhcp\n",
		want: &Config{Version: 1, Interfaces: []Interface{{Name: "eth0", Kind: Physical, Subnets: []Subnet{{Type: DHCP4}}}}},
	}, {
		name: "empty",
		in:   "# nothing\n",
		want: &Config{Version: 1},
	}} {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseENI([]byte(tt.in))
			if err != nil {
				t.Fatal(err)
			}
			checkConfig(t, got, tt.want)
		})
	}
}

func TestParseENIErrors(t *testing.T) {
	for _, tt := range []struct {
		name, in string
		want     []string
	}{
		{"option outside", "address 10.0.0.1\n", []string{`network-interfaces: line 1: "address" outside an iface stanza`}},
		{"short iface", "iface eth0 inet\n", []string{"line 1: iface: want name, family and method"}},
		{"family", "iface eth0 ipx static\n", []string{`line 1: iface eth0: unsupported address family "ipx"`}},
		{"method", "iface ppp0 inet ppp\n", []string{`iface ppp0: unsupported method "ppp" for inet`}},
		{"inet auto", "iface eth0 inet auto\n", []string{`unsupported method "auto" for inet`}},
		{"loopback elsewhere", "iface eth0 inet loopback\n", []string{"loopback method is for lo"}},
		{"static no address", "\niface eth0 inet static\n  gateway 10.0.0.1\n", []string{"line 2: iface eth0: static without address"}},
		{"bad address", "iface eth0 inet static\n  address 10.0.0.300\n", []string{`iface eth0: address: "10.0.0.300": invalid IP`}},
		{"bad netmask", "iface eth0 inet static\n  address 10.0.0.3\n  netmask 255.0.255.0\n", []string{`"255.0.255.0": invalid netmask`}},
		{"bad gateway", "iface eth0 inet dhcp\n  gateway x\n", []string{`line 2: iface eth0: gateway: "x": invalid IP`}},
		{"bad mtu", "iface eth0 inet dhcp\n  mtu big\n", []string{`line 2: iface eth0: mtu: "big" is not an MTU`}},
		{"bad metric", "iface eth0 inet dhcp\n  metric -1\n", []string{`line 2: iface eth0: metric: "-1" is not a metric`}},
		{"bad mac", "iface eth0 inet dhcp\n  hwaddress ether 1:2\n", []string{`hwaddress: "1:2": invalid MAC`}},
		{"bad dns", "iface eth0 inet dhcp\n  dns-nameservers 1.1.1.1 one\n", []string{`dns-nameservers: "one": invalid IP`}},
		{"bond without slaves", "iface bond0 inet dhcp\n  bond-slaves none\n", []string{"line 1: bond bond0 without slaves"}},
		{"vlan id", "iface vlanx inet dhcp\n  vlan-raw-device eth0\n", []string{"vlan vlanx: cannot tell a VLAN id"}},
		{"vlan id range", "iface eth0.5000 inet dhcp\n", []string{"vlan eth0.5000: cannot tell a VLAN id"}},
		{"bridge stp", "iface br0 inet dhcp\n  bridge_ports eth0\n  bridge_stp sometimes\n", []string{`line 3: iface br0: bridge_stp: cannot convert "sometimes"`}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c, err := ParseENI([]byte(tt.in))
			if err == nil {
				t.Fatalf("no error; config %+v", c)
			}
			checkErr(t, err, tt.want...)
		})
	}
}

func FuzzParseENI(f *testing.F) {
	data, err := os.ReadFile("testdata/interfaces")
	if err != nil {
		f.Fatal(err)
	}
	f.Add(data)
	f.Add([]byte("auto lo\niface lo inet loopback\n\nauto eth0\niface eth0 inet dhcp\n"))
	f.Add([]byte("iface bond0 inet static\n address 10.0.0.2/24\n bond-slaves eth0 eth1\niface bond0.7 inet6 auto\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := ParseENI(data)
		if err != nil {
			if c != nil {
				t.Fatal("config with an error")
			}
			return
		}
		checkInvariants(t, c)
	})
}

// TestParseENIContinuation covers backslash continuations at the edges: a
// line holding only "\" followed by an empty line used to leave a blank
// logical line that the parser indexed as if it had fields (issue 11 item 1:
// a PID 1 panic).
func TestParseENIContinuation(t *testing.T) {
	for _, tt := range []struct {
		name string
		in   string
		want *Config
	}{
		{"lone backslash then empty line", "\\\n\n", &Config{Version: 1}},
		{"lone backslash then blanks", "  \\  \n \t \n", &Config{Version: 1}},
		{"backslash chain to empty", "\\\n\\\n\\\n\n", &Config{Version: 1}},
		{"backslash at end of text", "iface eth0 inet dhcp\n\\", &Config{Version: 1, Interfaces: []Interface{{Name: "eth0", Kind: Physical, Subnets: []Subnet{{Type: DHCP4}}}}}},
		{"backslash then empty inside a stanza", "iface eth0 inet dhcp\n\\\n\n  mtu 1400\n",
			&Config{Version: 1, Interfaces: []Interface{{Name: "eth0", Kind: Physical, MTU: 1400, Subnets: []Subnet{{Type: DHCP4}}}}}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseENI([]byte(tt.in))
			if err != nil {
				t.Fatal(err)
			}
			checkConfig(t, got, tt.want)
		})
	}
}

// TestParseENILongContinuation bounds the time of a long chain of
// continued lines: joining them pairwise was quadratic, 48 s for 512 KiB
// of "a \" lines, hours for a datasource-sized file, in PID 1.
func TestParseENILongContinuation(t *testing.T) {
	in := "iface eth0 inet dhcp\n  mtu 1400 \\\n" + strings.Repeat("a \\\n", 1<<17) + "\n"
	done := make(chan error, 1)
	go func() {
		c, err := ParseENI([]byte(in))
		if err == nil && (len(c.Interfaces) != 1 || c.Interfaces[0].MTU != 1400) {
			err = fmt.Errorf("parsed %+v", c)
		}
		done <- err
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("ParseENI of 512 KiB of continued lines took over 5 s")
	}
}
