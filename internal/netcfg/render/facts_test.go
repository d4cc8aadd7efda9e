package render

import (
	"bufio"
	"fmt"
	"net/netip"
	"path"
	"sort"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// A fact is one thing a rendered configuration makes true of the host,
// independent of syntax: "eth0 addr 10.0.0.5/24". Iface is "*" for host-wide
// facts (DNS is compared host-wide: where each renderer puts the host's DNS
// differs, what the resolver ends up with does not).
type fact struct{ Iface, Key, Value string }

func (f fact) String() string { return f.Iface + " " + f.Key + " " + f.Value }

// Fact keys.
const (
	fKind       = "kind"         // bond, bridge, vlan (physical is implied)
	fMAC        = "mac"          // lower-case MAC the interface matches or gets
	fMTU        = "mtu"          // link MTU
	fAddr       = "addr"         // address/prefix
	fRoute      = "route"        // "dest via gw" (a gateway is a default route)
	fMetric     = "metric"       // "dest via gw metric n", for routes with a metric
	fDHCP4      = "dhcp4"        // DHCPv4 on
	fDHCP6      = "dhcp6"        // DHCPv6 client on (stateful, or per RA)
	fDHCPMetric = "dhcp4-metric" // metric of the routes a DHCPv4 lease installs
	fIPv6Auto   = "ipv6-auto"    // format-specific autoconfiguration mode
	fAcceptRA   = "accept-ra"    // true/false, when stated
	fDNS        = "dns"          // nameserver (host-wide)
	fSearch     = "search"       // search domain (host-wide)
	fMaster     = "master"       // bond this interface is a member of
	fBridgePort = "bridge-port"  // bridge this interface is a port of
	fVLANID     = "vlan-id"
	fVLANLink   = "vlan-link"
	fBondMode   = "bond-mode"
)

type facts map[fact]bool

// strList is a YAML list of strings, or one whitespace-separated string
// (netplan passthrough keeps what the user wrote).
type strList []string

func (l *strList) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind == yaml.ScalarNode {
		*l = strings.Fields(n.Value)
		return nil
	}
	var v []string
	if err := n.Decode(&v); err != nil {
		return err
	}
	*l = v
	return nil
}

func (fs facts) add(iface, key, value string) { fs[fact{iface, key, value}] = true }

func (fs facts) sorted() []fact {
	out := make([]fact, 0, len(fs))
	for f := range fs {
		out = append(out, f)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].String() < out[j].String() })
	return out
}

func normMAC(s string) string { return strings.ToLower(strings.TrimSpace(s)) }

func normPrefix(s string) (string, error) {
	p, err := netip.ParsePrefix(strings.TrimSpace(s))
	if err != nil {
		return "", err
	}
	return p.String(), nil
}

func defaultFor(gw string) string {
	if strings.Contains(gw, ":") {
		return "::/0"
	}
	return "0.0.0.0/0"
}

func normAddr(s string) string {
	a, err := netip.ParseAddr(strings.TrimSpace(s))
	if err != nil {
		return s
	}
	return a.String()
}

// route adds the route facts for dest (any spelling) via gw with metric.
func (fs facts) route(iface, dest, gw, metric string) error {
	switch dest {
	case "default", "":
		dest = defaultFor(gw)
	}
	p, err := netip.ParsePrefix(dest)
	if err != nil {
		return fmt.Errorf("route destination %q: %w", dest, err)
	}
	v := p.Masked().String() + " via " + normAddr(gw)
	fs.add(iface, fRoute, v)
	if metric != "" && metric != "0" {
		fs.add(iface, fMetric, v+" metric "+metric)
	}
	return nil
}

func (fs facts) dnsList(list string, sep func(rune) bool) {
	for _, n := range strings.FieldsFunc(list, sep) {
		fs.add("*", fDNS, normAddr(n))
	}
}

func (fs facts) searchList(list string, sep func(rune) bool) {
	for _, s := range strings.FieldsFunc(list, sep) {
		fs.add("*", fSearch, s)
	}
}

func isSpace(r rune) bool     { return r == ' ' || r == '\t' }
func isSemicolon(r rune) bool { return r == ';' }

// ini is a parsed INI file: sections in order, each a list of key/values
// (networkd repeats both).
type iniSection struct {
	Name string
	KV   [][2]string
}

// get is the last value of key in the section, or "".
func (s iniSection) get(key string) string {
	v := ""
	for _, kv := range s.KV {
		if kv[0] == key {
			v = kv[1]
		}
	}
	return v
}

func parseINI(data string) []iniSection {
	var out []iniSection
	sc := bufio.NewScanner(strings.NewReader(data))
	for sc.Scan() {
		l := strings.TrimSpace(sc.Text())
		if l == "" || strings.HasPrefix(l, "#") || strings.HasPrefix(l, ";") {
			continue
		}
		if strings.HasPrefix(l, "[") && strings.HasSuffix(l, "]") {
			out = append(out, iniSection{Name: l[1 : len(l)-1]})
			continue
		}
		k, v, ok := strings.Cut(l, "=")
		if ok && len(out) > 0 {
			out[len(out)-1].KV = append(out[len(out)-1].KV, [2]string{strings.TrimSpace(k), strings.TrimSpace(v)})
		}
	}
	return out
}

// factsOf parses the files one renderer wrote (path -> content) into facts.
func factsOf(renderer string, files map[string]string) (facts, error) {
	switch renderer {
	case "networkd":
		return networkdFacts(files)
	case "netplan":
		return netplanFacts(files)
	case "sysconfig":
		return sysconfigFacts(files)
	case "eni":
		return eniFacts(files)
	case "network-manager":
		return nmFacts(files)
	}
	return nil, fmt.Errorf("no fact parser for %q", renderer)
}

func networkdFacts(files map[string]string) (facts, error) {
	fs := facts{}
	for p, data := range files {
		if !strings.HasPrefix(p, "/etc/systemd/network/") {
			continue
		}
		secs := parseINI(data)
		name := ""
		for _, s := range secs {
			for _, kv := range s.KV {
				if (s.Name == "Match" || s.Name == "NetDev") && kv[0] == "Name" {
					name = kv[1]
				}
			}
		}
		if name == "" {
			// Matched by MAC or driver only: the file is named after it.
			name = strings.TrimSuffix(strings.TrimPrefix(path.Base(p), "10-cloud-init-"), path.Ext(p))
		}
		for _, s := range secs {
			var dest, gw, metric string
			for _, kv := range s.KV {
				k, v := kv[0], kv[1]
				switch s.Name + "." + k {
				case "Match.MACAddress", "NetDev.MACAddress":
					fs.add(name, fMAC, normMAC(v))
				case "Link.MTUBytes", "NetDev.MTUBytes":
					fs.add(name, fMTU, v)
				case "NetDev.Kind":
					fs.add(name, fKind, v)
				case "Network.DHCP":
					if v == "yes" || v == "ipv4" || v == "true" {
						fs.add(name, fDHCP4, "on")
					}
					if v == "yes" || v == "ipv6" || v == "true" {
						fs.add(name, fDHCP6, "on")
					}
				case "Network.IPv6AcceptRA":
					fs.add(name, fAcceptRA, strconv.FormatBool(v == "yes" || v == "true" || v == "True"))
				case "Network.DNS":
					fs.dnsList(v, isSpace)
				case "Network.Domains":
					fs.searchList(v, isSpace)
				case "Network.Bond":
					fs.add(name, fMaster, v)
				case "Network.Bridge":
					fs.add(name, fBridgePort, v)
				case "Network.VLAN":
					fs.add(v, fVLANLink, name)
				case "Address.Address":
					a, err := normPrefix(v)
					if err != nil {
						return nil, fmt.Errorf("%s: %w", p, err)
					}
					fs.add(name, fAddr, a)
				case "Route.Destination":
					dest = v
				case "Route.Gateway":
					gw = v
				case "Route.Metric":
					metric = v
				case "DHCPv4.RouteMetric":
					fs.add(name, fDHCPMetric, v)
				case "Bond.Mode":
					fs.add(name, fBondMode, v)
				case "VLAN.Id":
					fs.add(name, fVLANID, v)
				}
			}
			if s.Name == "Route" {
				if err := fs.route(name, dest, gw, metric); err != nil {
					return nil, fmt.Errorf("%s: %w", p, err)
				}
			}
		}
	}
	return fs, nil
}

func netplanFacts(files map[string]string) (facts, error) {
	fs := facts{}
	for p, data := range files {
		if !strings.HasPrefix(p, "/etc/netplan/") {
			continue
		}
		var doc struct {
			Network map[string]yaml.Node `yaml:"network"`
		}
		if err := yaml.Unmarshal([]byte(data), &doc); err != nil {
			return nil, fmt.Errorf("%s: %w", p, err)
		}
		for _, kind := range []string{"ethernets", "bonds", "bridges", "vlans"} {
			node, ok := doc.Network[kind]
			if !ok {
				continue
			}
			var devs map[string]struct {
				Match struct {
					MAC string `yaml:"macaddress"`
				} `yaml:"match"`
				SetName   string   `yaml:"set-name"`
				MAC       string   `yaml:"macaddress"`
				MTU       int      `yaml:"mtu"`
				Addresses []string `yaml:"addresses"`
				Gateway4  string   `yaml:"gateway4"`
				Gateway6  string   `yaml:"gateway6"`
				DHCP4     bool     `yaml:"dhcp4"`
				DHCP4Over struct {
					RouteMetric *int `yaml:"route-metric"`
				} `yaml:"dhcp4-overrides"`
				DHCP6       bool  `yaml:"dhcp6"`
				AcceptRA    *bool `yaml:"accept-ra"`
				Nameservers struct {
					Addresses strList `yaml:"addresses"`
					Search    strList `yaml:"search"`
				} `yaml:"nameservers"`
				Routes []struct {
					To     string `yaml:"to"`
					Via    string `yaml:"via"`
					Metric int    `yaml:"metric"`
				} `yaml:"routes"`
				Interfaces []string       `yaml:"interfaces"`
				Parameters map[string]any `yaml:"parameters"`
				ID         int            `yaml:"id"`
				Link       string         `yaml:"link"`
			}
			if err := node.Decode(&devs); err != nil {
				return nil, fmt.Errorf("%s %s: %w", p, kind, err)
			}
			for key, d := range devs {
				name := key
				if d.SetName != "" {
					name = d.SetName
				}
				switch kind {
				case "bonds":
					fs.add(name, fKind, "bond")
					for _, m := range d.Interfaces {
						fs.add(m, fMaster, name)
					}
					if m, ok := d.Parameters["mode"]; ok {
						fs.add(name, fBondMode, fmt.Sprint(m))
					}
				case "bridges":
					fs.add(name, fKind, "bridge")
					for _, m := range d.Interfaces {
						fs.add(m, fBridgePort, name)
					}
				case "vlans":
					fs.add(name, fKind, "vlan")
					fs.add(name, fVLANID, strconv.Itoa(d.ID))
					fs.add(name, fVLANLink, d.Link)
				}
				for _, m := range []string{d.Match.MAC, d.MAC} {
					if m != "" {
						fs.add(name, fMAC, normMAC(m))
					}
				}
				if d.MTU != 0 {
					fs.add(name, fMTU, strconv.Itoa(d.MTU))
				}
				for _, a := range d.Addresses {
					n, err := normPrefix(a)
					if err != nil {
						return nil, fmt.Errorf("%s %s: %w", p, name, err)
					}
					fs.add(name, fAddr, n)
				}
				for _, gw := range []string{d.Gateway4, d.Gateway6} {
					if gw != "" {
						if err := fs.route(name, "", gw, ""); err != nil {
							return nil, err
						}
					}
				}
				for _, r := range d.Routes {
					if err := fs.route(name, r.To, r.Via, strconv.Itoa(r.Metric)); err != nil {
						return nil, fmt.Errorf("%s %s: %w", p, name, err)
					}
				}
				if d.DHCP4 {
					fs.add(name, fDHCP4, "on")
					if m := d.DHCP4Over.RouteMetric; m != nil {
						fs.add(name, fDHCPMetric, strconv.Itoa(*m))
					}
				}
				if d.DHCP6 {
					fs.add(name, fDHCP6, "on")
				}
				if d.AcceptRA != nil {
					fs.add(name, fAcceptRA, strconv.FormatBool(*d.AcceptRA))
				}
				for _, n := range d.Nameservers.Addresses {
					fs.add("*", fDNS, normAddr(n))
				}
				for _, s := range d.Nameservers.Search {
					fs.add("*", fSearch, s)
				}
			}
		}
	}
	return fs, nil
}

// shellKV parses a sysconfig file's KEY=value lines.
func shellKV(data string) map[string]string {
	m := map[string]string{}
	for _, l := range strings.Split(data, "\n") {
		l = strings.TrimSpace(l)
		if l == "" || strings.HasPrefix(l, "#") {
			continue
		}
		k, v, ok := strings.Cut(l, "=")
		if ok {
			m[k] = strings.Trim(v, `"`)
		}
	}
	return m
}

func sysconfigFacts(files map[string]string) (facts, error) {
	fs := facts{}
	for p, data := range files {
		base := path.Base(p)
		switch {
		case p == "/etc/resolv.conf":
			for _, l := range strings.Split(data, "\n") {
				f := strings.Fields(l)
				if len(f) >= 2 && f[0] == "nameserver" {
					fs.add("*", fDNS, normAddr(f[1]))
				}
				if len(f) >= 2 && f[0] == "search" {
					for _, s := range f[1:] {
						fs.add("*", fSearch, s)
					}
				}
			}
		case strings.HasPrefix(p, SysconfigDir+"/ifcfg-"):
			m := shellKV(data)
			name := m["DEVICE"]
			if name == "" {
				return nil, fmt.Errorf("%s: no DEVICE", p)
			}
			for _, k := range []string{"HWADDR", "MACADDR"} {
				if m[k] != "" {
					fs.add(name, fMAC, normMAC(m[k]))
				}
			}
			if m["MTU"] != "" {
				fs.add(name, fMTU, m["MTU"])
			}
			for k, v := range m {
				if strings.HasPrefix(k, "IPADDR") {
					pfx, err := maskToBits(m["NETMASK"+strings.TrimPrefix(k, "IPADDR")])
					if err != nil {
						return nil, fmt.Errorf("%s: %s: %w", p, k, err)
					}
					a, err := netip.ParseAddr(v)
					if err != nil {
						return nil, fmt.Errorf("%s: %s: %w", p, k, err)
					}
					fs.add(name, fAddr, netip.PrefixFrom(a, pfx).String())
				}
			}
			for _, a := range strings.Fields(m["IPV6ADDR"] + " " + m["IPV6ADDR_SECONDARIES"]) {
				n, err := normPrefix(a)
				if err != nil {
					return nil, fmt.Errorf("%s: %w", p, err)
				}
				fs.add(name, fAddr, n)
			}
			for _, k := range []string{"GATEWAY", "IPV6_DEFAULTGW"} {
				if m[k] != "" {
					if err := fs.route(name, "", m[k], ""); err != nil {
						return nil, err
					}
				}
			}
			if m["BOOTPROTO"] == "dhcp" {
				fs.add(name, fDHCP4, "on")
				if m["METRIC"] != "" {
					fs.add(name, fDHCPMetric, m["METRIC"])
				}
			}
			if m["DHCPV6C"] == "yes" {
				fs.add(name, fDHCP6, "on")
				if m["DHCPV6C_OPTIONS"] == "-S" {
					fs.add(name, fIPv6Auto, "stateless")
				}
			}
			if m["IPV6_AUTOCONF"] == "yes" {
				fs.add(name, fIPv6Auto, "autoconf")
			}
			if v := m["IPV6_FORCE_ACCEPT_RA"]; v != "" {
				fs.add(name, fAcceptRA, strconv.FormatBool(v == "yes"))
			}
			for i := 1; i <= 3; i++ {
				if v := m[fmt.Sprint("DNS", i)]; v != "" {
					fs.add("*", fDNS, normAddr(v))
				}
			}
			fs.searchList(m["DOMAIN"], isSpace)
			switch {
			case m["TYPE"] == "Bond":
				fs.add(name, fKind, "bond")
				for _, o := range strings.Fields(m["BONDING_OPTS"]) {
					if v, ok := strings.CutPrefix(o, "mode="); ok {
						fs.add(name, fBondMode, v)
					}
				}
			case m["TYPE"] == "Bridge":
				fs.add(name, fKind, "bridge")
			case m["VLAN"] == "yes":
				fs.add(name, fKind, "vlan")
				fs.add(name, fVLANLink, m["PHYSDEV"])
			}
			if m["MASTER"] != "" {
				fs.add(name, fMaster, m["MASTER"])
			}
			if m["BRIDGE"] != "" {
				fs.add(name, fBridgePort, m["BRIDGE"])
			}
		case strings.HasPrefix(base, "route6-"), strings.HasPrefix(base, "route-") && !strings.Contains(data, "\nADDRESS0="):
			// ip-route(8) argument lines: route6- always, route- when
			// a route has a metric or attributes the ADDRESS<n> form
			// lacks.
			_, name, _ := strings.Cut(base, "-")
			for _, l := range strings.Split(data, "\n") {
				f := strings.Fields(l)
				if len(f) == 0 || strings.HasPrefix(f[0], "#") {
					continue
				}
				var gw, metric string
				for i := 1; i+1 < len(f); i++ {
					switch f[i] {
					case "via":
						gw = f[i+1]
					case "metric":
						metric = f[i+1]
					}
				}
				if err := fs.route(name, f[0], gw, metric); err != nil {
					return nil, fmt.Errorf("%s: %w", p, err)
				}
			}
		case strings.HasPrefix(base, "route-"):
			name := strings.TrimPrefix(base, "route-")
			m := shellKV(data)
			for k, v := range m {
				idx, ok := strings.CutPrefix(k, "ADDRESS")
				if !ok {
					continue
				}
				bits, err := maskToBits(m["NETMASK"+idx])
				if err != nil {
					return nil, fmt.Errorf("%s: NETMASK%s: %w", p, idx, err)
				}
				if err := fs.route(name, fmt.Sprintf("%s/%d", v, bits), m["GATEWAY"+idx], m["METRIC"+idx]); err != nil {
					return nil, fmt.Errorf("%s: %w", p, err)
				}
			}
		}
	}
	return fs, nil
}

func maskToBits(mask string) (int, error) {
	a, err := netip.ParseAddr(mask)
	if err != nil || !a.Is4() {
		return 0, fmt.Errorf("bad netmask %q", mask)
	}
	b := a.As4()
	n := 0
	for _, x := range b {
		for i := 7; i >= 0; i-- {
			if x&(1<<i) != 0 {
				n++
			}
		}
	}
	return n, nil
}

func eniFacts(files map[string]string) (facts, error) {
	fs := facts{}
	for p, data := range files {
		if !strings.HasPrefix(p, "/etc/network/interfaces") {
			continue
		}
		var name, inet, method, address, netmask string
		flush := func() error {
			if address != "" {
				if !strings.Contains(address, "/") && netmask != "" {
					bits, err := maskToBits(netmask)
					if err != nil {
						return err
					}
					address = fmt.Sprintf("%s/%d", address, bits)
				}
				a, err := normPrefix(address)
				if err != nil {
					return err
				}
				fs.add(name, fAddr, a)
			}
			address, netmask = "", ""
			return nil
		}
		for _, l := range strings.Split(data, "\n") {
			f := strings.Fields(l)
			if len(f) == 0 || strings.HasPrefix(f[0], "#") {
				continue
			}
			if f[0] == "iface" && len(f) >= 4 {
				if err := flush(); err != nil {
					return nil, fmt.Errorf("%s: %w", p, err)
				}
				name, inet, method = f[1], f[2], f[3]
				switch inet + " " + method {
				case "inet dhcp":
					fs.add(name, fDHCP4, "on")
				case "inet6 dhcp":
					fs.add(name, fDHCP6, "on")
				case "inet6 auto":
					fs.add(name, fIPv6Auto, "auto")
				}
				continue
			}
			if name == "" || len(f) < 2 {
				continue
			}
			rest := strings.Join(f[1:], " ")
			switch f[0] {
			case "address":
				address = f[1]
			case "netmask":
				netmask = f[1]
			case "gateway":
				if err := fs.route(name, "", f[1], ""); err != nil {
					return nil, err
				}
			case "mtu":
				fs.add(name, fMTU, f[1])
			case "metric":
				if inet+" "+method == "inet dhcp" {
					fs.add(name, fDHCPMetric, f[1])
				}
			case "hwaddress":
				fs.add(name, fMAC, normMAC(f[len(f)-1]))
			case "dns-nameservers":
				fs.dnsList(rest, isSpace)
			case "dns-search":
				fs.searchList(rest, isSpace)
			case "accept_ra":
				fs.add(name, fAcceptRA, strconv.FormatBool(f[1] == "1"))
			case "bond-master":
				fs.add(name, fMaster, f[1])
			case "bond-slaves":
				fs.add(name, fKind, "bond")
			case "bridge_ports":
				fs.add(name, fKind, "bridge")
				for _, port := range f[1:] {
					fs.add(port, fBridgePort, name)
				}
			case "vlan-raw-device":
				fs.add(name, fKind, "vlan")
				fs.add(name, fVLANLink, f[1])
			case "vlan_id":
				fs.add(name, fVLANID, f[1])
			case "post-up":
				if err := eniRouteFact(fs, name, f[1:]); err != nil {
					return nil, fmt.Errorf("%s: %q: %w", p, l, err)
				}
			}
		}
		if err := flush(); err != nil {
			return nil, fmt.Errorf("%s: %w", p, err)
		}
	}
	// bond-mode only counts on the bond itself (cloud-init repeats the
	// bond's options on every member); kinds are known now.
	for _, l := range eniBondModes(files) {
		if fs[fact{l[0], fKind, "bond"}] {
			fs.add(l[0], fBondMode, l[1])
		}
	}
	return fs, nil
}

func eniBondModes(files map[string]string) [][2]string {
	var out [][2]string
	for _, data := range files {
		name := ""
		for _, l := range strings.Split(data, "\n") {
			f := strings.Fields(l)
			if len(f) >= 2 && f[0] == "iface" {
				name = f[1]
			}
			if len(f) >= 2 && f[0] == "bond-mode" {
				out = append(out, [2]string{name, f[1]})
			}
		}
	}
	return out
}

// eniRouteFact reads "route add [-A inet6] [-net|-host] DEST|default gw GW
// [metric M] || true" (cloud-init) and "ip [-6] route add DEST|default via
// GW dev D [metric M] || true" (ours).
func eniRouteFact(fs facts, name string, f []string) error {
	var dest, gw, metric string
	switch {
	case len(f) > 2 && f[0] == "route" && f[1] == "add":
		for i := 2; i < len(f); i++ {
			switch f[i] {
			case "||":
				i = len(f)
			case "-A", "-net", "-host":
				if f[i] == "-A" {
					i++
				}
			case "default":
				dest = "default"
			case "gw":
				i++
				gw = f[i]
			case "metric":
				i++
				metric = f[i]
			default:
				dest = f[i]
			}
		}
	case len(f) > 3 && f[0] == "ip":
		i := 1
		if f[i] == "-6" {
			i++
		}
		if f[i] != "route" || f[i+1] != "add" {
			return fmt.Errorf("not a route")
		}
		dest = f[i+2]
		for i += 3; i < len(f); i++ {
			switch f[i] {
			case "||":
				i = len(f)
			case "via":
				i++
				gw = f[i]
			case "metric":
				i++
				metric = f[i]
			case "dev":
				i++
			}
		}
	default:
		return fmt.Errorf("unknown post-up command")
	}
	if dest == "default" {
		dest = defaultFor(gw)
	}
	return fs.route(name, dest, gw, metric)
}

func nmFacts(files map[string]string) (facts, error) {
	fs := facts{}
	byUUID := map[string]string{}
	parsed := map[string][]iniSection{}
	nameOf := map[string]string{}
	for p, data := range files {
		if !strings.HasPrefix(p, "/etc/NetworkManager/system-connections/") {
			continue
		}
		secs := parseINI(data)
		parsed[p] = secs
		var id, uuid, ifname string
		for _, s := range secs {
			for _, kv := range s.KV {
				switch s.Name + "." + kv[0] {
				case "connection.id":
					id = kv[1]
				case "connection.uuid":
					uuid = kv[1]
				case "connection.interface-name":
					ifname = kv[1]
				}
			}
		}
		if ifname == "" {
			ifname = strings.TrimPrefix(id, "cloud-init ")
		}
		byUUID[uuid] = ifname
		nameOf[p] = ifname
	}
	ref := func(v string) string {
		if n, ok := byUUID[v]; ok {
			return n
		}
		return v
	}
	for p, secs := range parsed {
		name := nameOf[p]
		var slaveType string
		for _, s := range secs {
			for _, kv := range s.KV {
				if s.Name == "connection" && kv[0] == "slave-type" {
					slaveType = kv[1]
				}
			}
		}
		for _, s := range secs {
			for _, kv := range s.KV {
				k, v := kv[0], kv[1]
				switch s.Name + "." + k {
				case "connection.type":
					if v != "ethernet" {
						fs.add(name, fKind, v)
					}
				case "connection.master":
					if slaveType == "bridge" {
						fs.add(name, fBridgePort, ref(v))
					} else {
						fs.add(name, fMaster, ref(v))
					}
				case "ethernet.mac-address", "ethernet.cloned-mac-address", "bridge.mac-address":
					fs.add(name, fMAC, normMAC(v))
				case "ethernet.mtu":
					fs.add(name, fMTU, v)
				case "bond.mode":
					fs.add(name, fBondMode, v)
				case "vlan.id":
					fs.add(name, fVLANID, v)
				case "vlan.parent":
					fs.add(name, fVLANLink, ref(v))
				case "ipv4.method":
					if v == "auto" {
						fs.add(name, fDHCP4, "on")
					}
				case "ipv4.route-metric":
					if s.get("method") == "auto" {
						fs.add(name, fDHCPMetric, v)
					}
				case "ipv6.method":
					if v == "auto" || v == "dhcp" {
						fs.add(name, fIPv6Auto, v)
					}
				case "ipv4.gateway", "ipv6.gateway":
					if err := fs.route(name, "", v, ""); err != nil {
						return nil, err
					}
				case "ipv4.dns", "ipv6.dns":
					fs.dnsList(v, isSemicolon)
				case "ipv4.dns-search", "ipv6.dns-search":
					fs.searchList(v, isSemicolon)
				}
				if (s.Name == "ipv4" || s.Name == "ipv6") && strings.HasPrefix(k, "address") {
					a, err := normPrefix(strings.Split(v, ",")[0])
					if err != nil {
						return nil, fmt.Errorf("%s: %s: %w", p, k, err)
					}
					fs.add(name, fAddr, a)
				}
				if (s.Name == "ipv4" || s.Name == "ipv6") && strings.HasPrefix(k, "route") && !strings.Contains(k, "-") && !strings.HasSuffix(k, "_options") {
					parts := strings.Split(v, ",")
					for len(parts) < 3 {
						parts = append(parts, "")
					}
					if err := fs.route(name, parts[0], parts[1], parts[2]); err != nil {
						return nil, fmt.Errorf("%s: %s: %w", p, k, err)
					}
				}
			}
		}
	}
	return fs, nil
}
