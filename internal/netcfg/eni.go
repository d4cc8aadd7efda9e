package netcfg

import (
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// ParseENI parses Debian interfaces(5) text (NoCloud network-interfaces,
// OpenStack's legacy network_config) as cloud-init's convert_eni_data does:
// each iface stanza becomes a subnet of its device (eth0:1 is a subnet of
// eth0), devices come sorted by name, hwaddress gives the MAC, address,
// netmask (or /prefix; default /24 or /64), gateway and dns-* fill the subnet.
//
// Where cloud-init 22.4.2 is wrong this does the right thing: an interface
// with bridge_ports is a bridge, one with bond-slaves (or named by other
// interfaces' bond-master) is a bond, one with vlan-raw-device or named
// <link>.<id> is a VLAN (cloud-init makes all of them physical); "inet6
// dhcp" is DHCPv6 and "inet6 auto" SLAAC (cloud-init makes both DHCPv4); mtu
// is kept; a device may have several stanzas (cloud-init refuses a second
// one); broadcast is kept, as cloud-init keeps it; lo is left out, its
// dns-* options going to the global DNS. source and
// source-directory lines are ignored (there is no file system to read from);
// up/down hooks and other options are ignored, as in cloud-init.
func ParseENI(data []byte) (*Config, error) {
	c, err := parseENI(string(data))
	if err != nil {
		return nil, fmt.Errorf("network-interfaces: %w", err)
	}
	return c, nil
}

type eniDev struct {
	iface      Interface
	line       int
	bridge     bool
	ports      []string
	brParams   map[string]string
	bond       bool
	bondSlaves []string
	bondParams map[string]string
	vlanRaw    string
}

// eniStanza is one iface stanza, its address kept raw until its end so that
// netmask may come before or after address.
type eniStanza struct {
	name       string
	line       int
	dev        *eniDev // nil for lo
	sub        Subnet
	addr, mask string
	broadcast  string // as given: an address, "+" or "-"
}

// eniParser is the state of one interfaces(5) parse.
type eniParser struct {
	devs       map[string]*eniDev
	bondMaster map[string][]string // bond -> slaves naming it
	stanzas    []*eniStanza
	cur        *eniStanza // the stanza options go to, nil outside one
	inMapping  bool       // in a mapping stanza, whose lines are skipped
	lineNo     int        // of the logical line being parsed
}

// parseENI is ParseENI without the file name on its errors: every line
// first, then the stanzas become subnets and the devices interfaces.
func parseENI(text string) (*Config, error) {
	p := &eniParser{devs: map[string]*eniDev{}, bondMaster: map[string][]string{}}
	lines := strings.Split(text, "\n")
	for i := 0; i < len(lines); i++ {
		p.lineNo = i + 1
		var line string
		line, i = eniJoinLine(lines, i)
		f := strings.Fields(line)
		// A continuation may join into nothing ("\" then an empty line):
		// check the fields, not the text, before indexing them.
		if len(f) == 0 || strings.HasPrefix(f[0], "#") {
			continue
		}
		if err := p.line(f[0], f[1:]); err != nil {
			return nil, err
		}
	}

	c := &Config{Version: 1}
	if err := p.subnets(c); err != nil {
		return nil, err
	}
	if err := p.interfaces(c); err != nil {
		return nil, err
	}
	return c, nil
}

// eniJoinLine returns the logical line that starts at lines[i], trimmed,
// with its "\"-continued lines joined by spaces, and the index of its last
// physical line.
func eniJoinLine(lines []string, i int) (string, int) {
	line := strings.TrimSpace(lines[i])
	if !strings.HasSuffix(line, "\\") {
		return line, i
	}
	// Join the continued lines once, at the end: joining pairwise
	// copies the logical line for every physical one, quadratic
	// time on a long chain (minutes for 512 KiB).
	var parts []string
	for strings.HasSuffix(line, "\\") {
		line = strings.TrimSpace(strings.TrimSuffix(line, "\\"))
		if i+1 >= len(lines) {
			break
		}
		parts = append(parts, line)
		i++
		line = strings.TrimSpace(lines[i])
	}
	return strings.TrimSpace(strings.Join(append(parts, line), " ")), i
}

// bad is an error about the current line.
func (p *eniParser) bad(format string, a ...any) error {
	return fmt.Errorf("line %d: %s", p.lineNo, fmt.Sprintf(format, a...))
}

// line applies one logical line: a stanza keyword starts or ends a stanza,
// anything else is an option of the current iface stanza.
func (p *eniParser) line(opt string, args []string) error {
	switch {
	case opt == "auto" || strings.HasPrefix(opt, "allow-") || opt == "source" || opt == "source-directory" || opt == "source-dir" || opt == "no-auto-down" || opt == "no-scripts":
		p.cur, p.inMapping = nil, false
		return nil
	case opt == "mapping":
		p.cur, p.inMapping = nil, true
		return nil
	case opt == "iface":
		p.inMapping = false
		return p.iface(args)
	}
	if p.cur == nil {
		if p.inMapping {
			return nil
		}
		return p.bad("%q outside an iface stanza", opt)
	}
	if len(args) == 0 {
		return nil // an option without a value sets nothing we use
	}
	if p.cur.dev == nil && opt != "dns-nameservers" && opt != "dns-search" {
		return nil // lo: only its resolver settings matter
	}
	return p.option(opt, args)
}

// iface starts the stanza "iface <name> <family> <method>", making its
// device on first sight (lo has none).
func (p *eniParser) iface(args []string) error {
	if len(args) < 3 {
		return p.bad("iface: want name, family and method")
	}
	name, family, method := args[0], args[1], args[2]
	dev, _, _ := strings.Cut(name, ":")
	if dev == "" {
		return p.bad("iface %q: no device name", name)
	}
	st, err := eniSubnetType(family, method)
	if err != nil {
		return p.bad("iface %s: %v", name, err)
	}
	if (dev == "lo") != (st == "loopback") {
		return p.bad("iface %s: the loopback method is for lo, and lo only", name)
	}
	if len(p.stanzas) >= MaxSubnets {
		// Validate would refuse the result anyway: stop before
		// spending seconds of PID 1 on megabytes of stanzas.
		return p.bad("more than %d iface stanzas", MaxSubnets)
	}
	p.cur = &eniStanza{name: name, line: p.lineNo, sub: Subnet{Type: st}}
	p.stanzas = append(p.stanzas, p.cur)
	if dev != "lo" {
		d := p.devs[dev]
		if d == nil {
			d = &eniDev{iface: Interface{Name: dev, Kind: Physical}, line: p.lineNo,
				brParams: map[string]string{}, bondParams: map[string]string{}}
			p.devs[dev] = d
		}
		p.cur.dev = d
	}
	return nil
}

// option applies one option of the current stanza, to its subnet or to
// its device; unknown options are ignored.
func (p *eniParser) option(opt string, args []string) error {
	cur, d := p.cur, p.cur.dev
	var err error
	switch opt {
	case "address":
		cur.addr = args[0]
	case "netmask":
		cur.mask = args[0]
	case "broadcast": // cloud-init keeps it too
		cur.broadcast = args[0]
	case "gateway":
		if cur.sub.Gateway, err = parseIP(args[0]); err != nil {
			return p.bad("iface %s: gateway: %v", cur.name, err)
		}
	case "metric": // cloud-init drops it
		n, err := strconv.Atoi(args[0])
		if err != nil || n < 0 {
			return p.bad("iface %s: metric: %q is not a metric", cur.name, args[0])
		}
		cur.sub.Metric = n
	case "mtu":
		n, err := strconv.Atoi(args[0])
		if err != nil || n < 0 {
			return p.bad("iface %s: mtu: %q is not an MTU", cur.name, args[0])
		}
		d.iface.MTU = n
	case "hwaddress":
		v := args[0]
		if v == "ether" && len(args) > 1 {
			v = args[1]
		}
		if d.iface.MAC, err = parseMAC(v); err != nil {
			return p.bad("iface %s: hwaddress: %v", cur.name, err)
		}
	case "dns-nameservers":
		for _, a := range args {
			ip, err := parseIP(a)
			if err != nil {
				return p.bad("iface %s: dns-nameservers: %v", cur.name, err)
			}
			cur.sub.DNS.Nameservers = append(cur.sub.DNS.Nameservers, ip)
		}
	case "dns-search":
		cur.sub.DNS.Search = append(cur.sub.DNS.Search, args...)
	case "bridge_ports", "bridge-ports":
		d.bridge = true
		for _, a := range args {
			if a != "none" {
				d.ports = append(d.ports, a)
			}
		}
	case "bond-slaves", "bond_slaves":
		d.bond = true
		for _, a := range args {
			if a != "none" {
				d.bondSlaves = append(d.bondSlaves, a)
			}
		}
	case "bond-master", "bond_master":
		p.bondMaster[args[0]] = append(p.bondMaster[args[0]], d.iface.Name)
	case "vlan-raw-device", "vlan_raw_device":
		d.vlanRaw = args[0]
	default:
		if k, ok := strings.CutPrefix(strings.ReplaceAll(opt, "_", "-"), "bond-"); ok {
			d.bondParams[k] = strings.Join(args, " ")
		} else if k, ok := strings.CutPrefix(strings.ReplaceAll(opt, "-", "_"), "bridge_"); ok {
			if err := eniBridgeParam(d.brParams, k, args); err != nil {
				return p.bad("iface %s: %s: %v", cur.name, opt, err)
			}
		}
	}
	return nil
}

// subnets gives every stanza's subnet to its device, in stanza order; lo's
// resolver settings go to the global DNS.
func (p *eniParser) subnets(c *Config) error {
	for _, st := range p.stanzas {
		if st.sub.Type == Static {
			if st.addr == "" {
				return fmt.Errorf("line %d: iface %s: static without address", st.line, st.name)
			}
			pf, err := parseIPNet(st.addr, st.mask, nil)
			if err != nil {
				return fmt.Errorf("line %d: iface %s: address: %v", st.line, st.name, err)
			}
			st.sub.Address = pf
			if err := eniBroadcast(st); err != nil {
				return fmt.Errorf("line %d: iface %s: broadcast: %v", st.line, st.name, err)
			}
		}
		if st.dev == nil { // lo
			c.DNS.Nameservers = append(c.DNS.Nameservers, st.sub.DNS.Nameservers...)
			c.DNS.Search = append(c.DNS.Search, st.sub.DNS.Search...)
			continue
		}
		st.dev.iface.Subnets = append(st.dev.iface.Subnets, st.sub)
	}
	return nil
}

// eniBroadcast sets a static IPv4 stanza's broadcast: an address, "-" (the
// host bits cleared) or "+" (set: what the kernel is given without one, so
// nothing to keep). ifupdown has none for inet6, and ignores it there.
func eniBroadcast(st *eniStanza) error {
	a := st.sub.Address
	switch {
	case st.broadcast == "" || st.broadcast == "+" || !a.Addr().Is4():
		return nil
	case st.broadcast == "-":
		st.sub.Broadcast = a.Masked().Addr()
		return nil
	}
	b, err := parseIP(st.broadcast)
	if err != nil {
		return err
	}
	if !b.Is4() {
		return fmt.Errorf("%s is not an IPv4 address", b)
	}
	st.sub.Broadcast = b
	return nil
}

// interfaces adds the devices to c, sorted by name, each a bridge, bond,
// VLAN or physical NIC by its options and name.
func (p *eniParser) interfaces(c *Config) error {
	names := make([]string, 0, len(p.devs))
	for n := range p.devs {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		d := p.devs[n]
		iface := d.iface
		switch {
		case d.bridge:
			iface.Kind = Bridge
			iface.Bridge = &BridgeConfig{Members: d.ports, Params: d.brParams}
		case d.bond || len(p.bondMaster[n]) > 0:
			iface.Kind = Bond
			slaves := dedup(append(d.bondSlaves, p.bondMaster[n]...))
			if len(slaves) == 0 {
				return fmt.Errorf("line %d: bond %s without slaves", d.line, n)
			}
			delete(d.bondParams, "master")
			iface.Bond = &BondConfig{Members: slaves, Params: d.bondParams}
		case d.vlanRaw != "" || isVLANName(n):
			v, err := eniVLAN(n, d.vlanRaw)
			if err != nil {
				return fmt.Errorf("line %d: vlan %s: %s", d.line, n, err)
			}
			iface.Kind = VLAN
			iface.VLAN = v
		}
		c.Interfaces = append(c.Interfaces, iface)
	}
	return nil
}

// eniVLAN returns the VLAN of device n: its id from the name (<link>.<id>
// or vlan<id>), its link from vlan-raw-device, else from the name.
func eniVLAN(n, vlanRaw string) (*VLANConfig, error) {
	link, idText := vlanRaw, ""
	if i := strings.LastIndex(n, "."); i > 0 {
		idText = n[i+1:]
		if link == "" {
			link = n[:i]
		}
	} else {
		idText = strings.TrimLeft(n, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ-_")
	}
	id, err := strconv.Atoi(idText)
	if err != nil || id < 1 || id > 4094 {
		return nil, errors.New("cannot tell a VLAN id (1-4094) from the name")
	}
	return &VLANConfig{ID: id, Link: link}, nil
}

// isVLANName tells whether n looks like <link>.<id>.
func isVLANName(n string) bool {
	i := strings.LastIndex(n, ".")
	if i <= 0 || i == len(n)-1 {
		return false
	}
	_, err := strconv.Atoi(n[i+1:])
	return err == nil
}

func dedup(l []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, s := range l {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}

// eniBridgeParam stores bridge_<k> in model form.
func eniBridgeParam(params map[string]string, k string, args []string) error {
	switch k {
	case "bridgeprio":
		k = "priority"
	case "stp":
		v, err := stpValue(args[0])
		if err != nil {
			return err
		}
		params[k] = v
		return nil
	case "pathcost", "portprio": // bridge_pathcost <port> <value>, repeated
		if len(args) != 2 {
			return fmt.Errorf("want a port and a value")
		}
		pair := args[0] + " " + args[1]
		if params[k] != "" {
			pair = params[k] + "," + pair
		}
		params[k] = pair
		return nil
	case "hw", "ports":
		return nil
	}
	params[k] = strings.Join(args, " ")
	return nil
}

func eniSubnetType(family, method string) (SubnetType, error) {
	switch family {
	case "inet", "inet6":
	default:
		return "", fmt.Errorf("unsupported address family %q", family)
	}
	switch method {
	case "static":
		return Static, nil
	case "manual":
		return Manual, nil
	case "loopback":
		return "loopback", nil
	case "dhcp":
		if family == "inet6" {
			return DHCP6, nil
		}
		return DHCP4, nil
	case "auto":
		if family == "inet6" {
			return SLAAC, nil
		}
	}
	return "", fmt.Errorf("unsupported method %q for %s", method, family)
}
