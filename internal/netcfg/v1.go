package netcfg

import (
	"fmt"
	"net/netip"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/earlyinit/earlyinit/internal/scalar"
)

// parseV1 interprets a network config v1 list as network_state's v1
// handlers do. Unknown keys in an entry are ignored, as cloud-init does;
// unknown entry types are errors. "loopback" entries are skipped (the model
// has no loopback; every renderer brings lo up anyway).
func (p *yparser) parseV1(n *yaml.Node, path string) (*Config, error) {
	items, err := p.list(n, path)
	if err != nil {
		return nil, err
	}
	c := &Config{Version: 1}
	type ifaceDNS struct {
		name string
		node *yaml.Node
		path string
		dns  DNS
	}
	var perIface []ifaceDNS
	for i, it := range items {
		ipath := fmt.Sprintf("%s[%d]", path, i)
		kvs, err := p.mapping(it, ipath)
		if err != nil {
			return nil, err
		}
		typ, err := p.str(kvs, "type", ipath)
		if err != nil {
			return nil, err
		}
		if name, _ := p.str(kvs, "name", ipath); name != "" {
			ipath = fmt.Sprintf("%s[%d] (%s)", path, i, name)
		}
		switch typ {
		case "physical", "bond", "vlan", "bridge", "infiniband":
			p.ignoreUnknown(kvs, v1InterfaceKeys(), ipath)
			iface, err := p.v1Interface(kvs, Kind(typ), it, ipath)
			if err != nil {
				return nil, err
			}
			c.Interfaces = append(c.Interfaces, iface)
		case "nameserver":
			p.ignoreUnknown(kvs, v1NameserverKeys(), ipath)
			dns, err := p.v1DNS(kvs, "address", "search", ipath, true)
			if err != nil {
				return nil, err
			}
			if name, err := p.str(kvs, "interface", ipath); err != nil {
				return nil, err
			} else if name != "" {
				perIface = append(perIface, ifaceDNS{name, it, ipath, dns})
				continue
			}
			c.DNS.Nameservers = append(c.DNS.Nameservers, dns.Nameservers...)
			c.DNS.Search = append(c.DNS.Search, dns.Search...)
		case "route":
			if get(kvs, "destination") == nil && get(kvs, "network") == nil {
				return nil, yerr(it, ipath, "route without destination")
			}
			p.ignoreUnknown(kvs, v1RouteKeys(), ipath)
			r, err := p.v1Route(kvs, it, ipath)
			if err != nil {
				return nil, err
			}
			c.Routes = append(c.Routes, r)
		case "loopback":
		case "":
			return nil, yerr(it, ipath, "no type")
		default:
			return nil, yerr(it, ipath, "unknown type %q", typ)
		}
	}
	// As cloud-init, interface nameservers apply once all interfaces are known.
	for _, d := range perIface {
		iface := c.Interface(d.name)
		if iface == nil {
			return nil, yerr(d.node, d.path, "nameserver for interface %q, which does not exist", d.name)
		}
		iface.DNS = d.dns
	}
	addMissingMembers(c)
	return c, nil
}

// v1InterfaceKeys are the keys of a v1 interface entry the parser reads.
func v1InterfaceKeys() []string {
	return []string{"type", "name", "mac_address", "mtu", "accept-ra", "params", "subnets", "wakeonlan",
		"bond_interfaces", "vlan_link", "vlan_id", "bridge_interfaces"}
}

// v1SubnetKeys are the keys of a v1 subnet the parser reads.
func v1SubnetKeys() []string {
	return []string{"type", "address", "netmask", "prefix", "gateway", "mtu", "metric", "dns_nameservers",
		"dns_search", "routes", "control", "broadcast"}
}

// v1RouteKeys are the keys of a v1 route the parser reads.
func v1RouteKeys() []string {
	return []string{"type", "destination", "network", "netmask", "prefix", "gateway", "metric"}
}

// ignoreUnknown records every key of kvs not in known: keys the model has
// no place for, which end in Config.Ignored and which every renderer then
// names in its warning (nothing is dropped without a word).
func (p *yparser) ignoreUnknown(kvs []ykv, known []string, path string) {
	for _, kv := range kvs {
		if !slices.Contains(known, kv.key) {
			p.ignored = append(p.ignored, join(path, kv.key))
		}
	}
}

// addMissingMembers creates, as cloud-init does, a plain physical
// interface for every bond member, bridge port and VLAN link the
// configuration names but does not define, with a warning each.
func addMissingMembers(c *Config) {
	have := map[string]bool{}
	for _, iface := range c.Interfaces {
		have[iface.Name] = true
	}
	var refs []string
	for _, iface := range c.Interfaces {
		switch {
		case iface.Bond != nil:
			refs = append(refs, iface.Bond.Members...)
		case iface.Bridge != nil:
			refs = append(refs, iface.Bridge.Members...)
		case iface.VLAN != nil:
			refs = append(refs, iface.VLAN.Link)
		}
	}
	for _, name := range refs {
		if name == "" || have[name] {
			continue
		}
		have[name] = true
		c.Interfaces = append(c.Interfaces, Interface{Name: name, Kind: Physical, NoRename: true})
		c.Warnings = append(c.Warnings, fmt.Sprintf("interface %q is used as a member or link but not defined: created as a plain interface, as cloud-init does", name))
	}
}

// v1Interface reads a physical, bond, vlan or bridge entry: the keys all
// of them have, its kind's keys, then its subnets.
func (p *yparser) v1Interface(kvs []ykv, kind Kind, n *yaml.Node, path string) (Interface, error) {
	iface := Interface{Kind: kind}
	var err error
	if iface.Name, err = p.str(kvs, "name", path); err != nil {
		return iface, err
	}
	if mac, err := p.str(kvs, "mac_address", path); err != nil {
		return iface, err
	} else if mac != "" {
		if iface.MAC, err = parseMAC(mac); err != nil {
			return iface, yerr(get(kvs, "mac_address"), join(path, "mac_address"), "%v", err)
		}
	}
	if iface.Name == "" && kind == Physical && iface.MAC != "" {
		// A physical NIC given by MAC alone is the live NIC with that
		// MAC, under its own name, as cloud-init's Vultr, UpCloud,
		// Hetzner and DigitalOcean sources name it from the system.
		if name := p.macToName[iface.MAC]; name != "" {
			iface.Name, iface.NoRename = name, true
		} else {
			return iface, yerr(n, path, "physical with mac_address %s and no name: no NIC has that MAC", iface.MAC)
		}
	}
	if iface.Name == "" {
		return iface, yerr(n, path, "%s without name", kind)
	}
	if iface.MTU, err = p.mtu(kvs, path); err != nil {
		return iface, err
	}
	if ra, ok, err := p.boolean(kvs, "accept-ra", path); err != nil {
		return iface, err
	} else if ok {
		iface.AcceptRA = &ra
	}
	if iface.WakeOnLAN, _, err = p.boolean(kvs, "wakeonlan", path); err != nil {
		return iface, err
	}
	params, err := p.mapping(nodeOr(get(kvs, "params")), join(path, "params"))
	if err != nil {
		return iface, err
	}
	ppath := join(path, "params")
	switch kind {
	case Physical:
		iface.Driver, err = p.str(params, "driver", ppath)
		for _, kv := range params {
			if kv.key != "driver" {
				p.ignored = append(p.ignored, join(ppath, kv.key))
			}
		}
	case Bond:
		iface.Bond, err = p.v1Bond(kvs, params, n, path)
	case VLAN:
		iface.VLAN, err = p.v1VLAN(kvs, n, path)
	case Bridge:
		iface.Bridge, err = p.v1Bridge(kvs, params, n, path)
	}
	if err != nil {
		return iface, err
	}
	if iface.Subnets, iface.Control, err = p.v1Subnets(kvs, path); err != nil {
		return iface, err
	}
	return iface, nil
}

// v1Bond reads a bond's bond_interfaces and its params, bond-* and bond_*
// keys under their model names.
func (p *yparser) v1Bond(kvs, params []ykv, n *yaml.Node, path string) (*BondConfig, error) {
	members, err := p.memberList(kvs, "bond_interfaces", n, path)
	if err != nil {
		return nil, err
	}
	if len(members) == 0 {
		return nil, yerr(n, path, "bond without bond_interfaces")
	}
	b := &BondConfig{Members: members, Params: map[string]string{}}
	ppath := join(path, "params")
	for _, kv := range params {
		key := kv.key
		if k, ok := strings.CutPrefix(key, "bond-"); ok {
			key = k
		} else if k, ok := strings.CutPrefix(key, "bond_"); ok {
			key = strings.ReplaceAll(k, "_", "-")
		}
		v, err := p.paramValue(kv.val, join(ppath, kv.key), " ")
		if err != nil {
			return nil, err
		}
		b.Params[key] = v
	}
	return b, nil
}

// v1VLAN reads a VLAN's vlan_link and vlan_id.
func (p *yparser) v1VLAN(kvs []ykv, n *yaml.Node, path string) (*VLANConfig, error) {
	link, err := p.str(kvs, "vlan_link", path)
	if err != nil {
		return nil, err
	}
	if link == "" {
		return nil, yerr(n, path, "vlan without vlan_link")
	}
	id, ok, err := p.integer(kvs, "vlan_id", path)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, yerr(n, path, "vlan without vlan_id")
	}
	if id < 1 || id > 4094 {
		return nil, yerr(get(kvs, "vlan_id"), join(path, "vlan_id"), "%d out of range 1-4094", id)
	}
	return &VLANConfig{ID: id, Link: link}, nil
}

// v1Bridge reads a bridge's bridge_interfaces and its params, bridge_*
// keys under their model names.
func (p *yparser) v1Bridge(kvs, params []ykv, n *yaml.Node, path string) (*BridgeConfig, error) {
	if get(kvs, "bridge_interfaces") == nil {
		return nil, yerr(n, path, "bridge without bridge_interfaces")
	}
	members, err := p.memberList(kvs, "bridge_interfaces", n, path)
	if err != nil {
		return nil, err
	}
	br := &BridgeConfig{Members: members, Params: map[string]string{}}
	ppath := join(path, "params")
	for _, kv := range params {
		key := strings.TrimPrefix(kv.key, "bridge_")
		sep := " "
		switch key {
		case "bridgeprio":
			key = "priority"
		case "pathcost", "portprio":
			sep = ","
		}
		v, err := p.paramValue(kv.val, join(ppath, kv.key), sep)
		if err != nil {
			return nil, err
		}
		if key == "stp" {
			if v, err = stpValue(v); err != nil {
				return nil, yerr(kv.val, join(ppath, kv.key), "%v", err)
			}
		}
		br.Params[key] = v
	}
	return br, nil
}

// v1Subnets reads an interface's subnets, if any, and its control: the
// first subnet's "control" ("auto" is ""), which decides how the interface
// comes up (cloud-init's eni and sysconfig read it so).
func (p *yparser) v1Subnets(kvs []ykv, path string) ([]Subnet, string, error) {
	sn := get(kvs, "subnets")
	if sn == nil {
		return nil, "", nil
	}
	subnets, err := p.list(sn, join(path, "subnets"))
	if err != nil {
		return nil, "", err
	}
	var out []Subnet
	control, haveControl := "", false
	for i, s := range subnets {
		spath := fmt.Sprintf("%s.subnets[%d]", path, i)
		sub, err := p.v1Subnet(s, spath)
		if err != nil {
			return nil, "", err
		}
		skvs, _ := p.mapping(s, spath)
		if cn := get(skvs, "control"); cn != nil && !haveControl {
			v, vn, err := p.scalar(cn, join(spath, "control"))
			if err != nil {
				return nil, "", err
			}
			switch v {
			case "auto", "":
			case "manual", "hotplug":
				control = v
			default:
				return nil, "", yerr(vn, join(spath, "control"), "%q is not auto, manual or hotplug", v)
			}
			haveControl = true
		}
		out = append(out, sub)
	}
	return out, control, nil
}

// nodeOr returns n, or a null node when n is nil.
func nodeOr(n *yaml.Node) *yaml.Node {
	if n == nil {
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!null"}
	}
	return n
}

func (p *yparser) memberList(kvs []ykv, key string, n *yaml.Node, path string) ([]string, error) {
	mn := get(kvs, key)
	if mn == nil {
		return nil, nil
	}
	members, nodes, err := p.strings(mn, join(path, key), false)
	if err != nil {
		return nil, err
	}
	for i, m := range members {
		if m == "" {
			return nil, yerr(nodes[i], fmt.Sprintf("%s.%s[%d]", path, key, i), "empty interface name")
		}
	}
	return members, nil
}

// paramValue renders a scalar, or a list of scalars joined by sep.
func (p *yparser) paramValue(n *yaml.Node, path, sep string) (string, error) {
	r, err := p.node(n)
	if err != nil {
		return "", err
	}
	if r.Kind == yaml.ScalarNode {
		return r.Value, nil
	}
	vals, _, err := p.strings(r, path, false)
	if err != nil {
		return "", err
	}
	return strings.Join(vals, sep), nil
}

// stpValue normalises bridge STP to "on" or "off", as network_state does.
// It takes scalar.Word's words (on, 1, true, yes; off, 0, false, no; any
// case).
func stpValue(v string) (string, error) {
	b, ok := scalar.Word(v)
	switch {
	case !ok:
		return "", fmt.Errorf("cannot convert %q to a boolean", v)
	case b:
		return "on", nil
	}
	return "off", nil
}

func (p *yparser) mtu(kvs []ykv, path string) (int, error) {
	return p.nonNegative(kvs, "mtu", path)
}

// v1DNS reads nameserver addresses and search domains (each a list or a
// whitespace-separated string).
func (p *yparser) v1DNS(kvs []ykv, addrKey, searchKey, path string, split bool) (DNS, error) {
	var d DNS
	if n := get(kvs, addrKey); n != nil {
		addrs, nodes, err := p.strings(n, join(path, addrKey), split)
		if err != nil {
			return d, err
		}
		for i, a := range addrs {
			// "192.168.23.14/27": cloud-init passes the prefix through
			// to resolv.conf; the nameserver is the address.
			a, _, _ = strings.Cut(a, "/")
			ip, err := parseIP(a)
			if err != nil {
				return d, yerr(nodes[i], fmt.Sprintf("%s[%d]", join(path, addrKey), i), "%v", err)
			}
			d.Nameservers = append(d.Nameservers, ip)
		}
	}
	if n := get(kvs, searchKey); n != nil {
		search, _, err := p.strings(n, join(path, searchKey), split)
		if err != nil {
			return d, err
		}
		d.Search = search
	}
	return d, nil
}

// v1SubnetType is the model's type of a v1 subnet type, and whether it is
// one.
func v1SubnetType(typ string) (SubnetType, bool) {
	switch typ {
	case "static", "static6":
		return Static, true
	case "dhcp", "dhcp4":
		return DHCP4, true
	case "dhcp6":
		return DHCP6, true
	case "ipv6_slaac":
		return SLAAC, true
	case "ipv6_dhcpv6-stateless":
		return DHCPv6Stateless, true
	case "ipv6_dhcpv6-stateful":
		return DHCPv6Stateful, true
	case "manual":
		return Manual, true
	}
	return "", false
}

func (p *yparser) v1Subnet(n *yaml.Node, path string) (Subnet, error) {
	var s Subnet
	kvs, err := p.mapping(n, path)
	if err != nil {
		return s, err
	}
	typ, err := p.str(kvs, "type", path)
	if err != nil {
		return s, err
	}
	t, ok := v1SubnetType(typ)
	if !ok {
		if typ == "" {
			return s, yerr(n, path, "subnet without type")
		}
		return s, yerr(get(kvs, "type"), join(path, "type"), "unknown subnet type %q", typ)
	}
	s.Type = t
	p.ignoreUnknown(kvs, v1SubnetKeys(), path)
	if t == Static {
		if s.Address, err = p.netKeys(kvs, "address", n, path); err != nil {
			return s, err
		}
	}
	if b, err := p.str(kvs, "broadcast", path); err != nil {
		return s, err
	} else if b != "" {
		if s.Broadcast, err = parseIP(b); err != nil {
			return s, yerr(get(kvs, "broadcast"), join(path, "broadcast"), "%v", err)
		}
		if !s.Broadcast.Is4() || !s.Address.Addr().Is4() {
			return s, yerr(get(kvs, "broadcast"), join(path, "broadcast"), "a broadcast address is for a static IPv4 subnet")
		}
	}
	if gw, err := p.str(kvs, "gateway", path); err != nil {
		return s, err
	} else if gw != "" {
		if s.Gateway, err = parseIP(gw); err != nil {
			return s, yerr(get(kvs, "gateway"), join(path, "gateway"), "%v", err)
		}
	}
	if s.MTU, err = p.mtu(kvs, path); err != nil {
		return s, err
	}
	if s.Metric, err = p.nonNegative(kvs, "metric", path); err != nil {
		return s, err
	}
	if s.DNS, err = p.v1DNS(kvs, "dns_nameservers", "dns_search", path, true); err != nil {
		return s, err
	}
	if rn := get(kvs, "routes"); rn != nil {
		routes, err := p.list(rn, join(path, "routes"))
		if err != nil {
			return s, err
		}
		for i, r := range routes {
			rpath := fmt.Sprintf("%s.routes[%d]", path, i)
			rkvs, err := p.mapping(r, rpath)
			if err != nil {
				return s, err
			}
			p.ignoreUnknown(rkvs, v1RouteKeys(), rpath)
			rt, err := p.v1Route(rkvs, r, rpath)
			if err != nil {
				return s, err
			}
			s.Routes = append(s.Routes, rt)
		}
	}
	return s, nil
}

// netKeys mirrors _normalize_net_keys over a YAML mapping: the address under
// addrKey (with an optional /prefix or /netmask), else "prefix", else
// "netmask", else the /24 or /64 default.
func (p *yparser) netKeys(kvs []ykv, addrKey string, n *yaml.Node, path string) (netip.Prefix, error) {
	addr, err := p.str(kvs, addrKey, path)
	if err != nil {
		return netip.Prefix{}, err
	}
	if addr == "" {
		return netip.Prefix{}, yerr(n, path, "no %s", addrKey)
	}
	mask, err := p.str(kvs, "netmask", path)
	if err != nil {
		return netip.Prefix{}, err
	}
	var prefix *int
	if v, ok, err := p.integer(kvs, "prefix", path); err != nil {
		return netip.Prefix{}, err
	} else if ok {
		prefix = &v
	}
	pf, err := parseIPNet(addr, mask, prefix)
	if err != nil {
		return netip.Prefix{}, yerr(get(kvs, addrKey), join(path, addrKey), "%v", err)
	}
	return pf, nil
}

// v1Route reads {destination or network, netmask, prefix, gateway, metric}.
func (p *yparser) v1Route(kvs []ykv, n *yaml.Node, path string) (Route, error) {
	var r Route
	key := "destination"
	if get(kvs, key) == nil {
		key = "network"
	}
	var err error
	if r.To, err = p.netKeys(kvs, key, n, path); err != nil {
		return r, err
	}
	if gw, err := p.str(kvs, "gateway", path); err != nil {
		return r, err
	} else if gw != "" {
		if r.Via, err = parseIP(gw); err != nil {
			return r, yerr(get(kvs, "gateway"), join(path, "gateway"), "%v", err)
		}
		if r.Via.Is4() != r.To.Addr().Is4() {
			return r, yerr(n, path, "gateway %s and destination %s are of different families", r.Via, r.To)
		}
	}
	if r.Metric, err = p.nonNegative(kvs, "metric", path); err != nil {
		return r, err
	}
	return r, nil
}
