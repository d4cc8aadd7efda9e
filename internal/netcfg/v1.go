package netcfg

import (
	"fmt"
	"net/netip"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/earlyinit/earlyinit/internal/netcfg/yamlread"
	"github.com/earlyinit/earlyinit/internal/scalar"
)

// parseV1 interprets a network config v1 list as network_state's v1
// handlers do. Unknown keys in an entry are ignored, as cloud-init does;
// unknown entry types are errors. "loopback" entries are skipped (the model
// has no loopback; every renderer brings lo up anyway).
func (p *yparser) parseV1(n *yaml.Node, path string) (*Config, error) {
	items, err := p.List(n, path)
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
		kvs, err := p.Mapping(it, ipath)
		if err != nil {
			return nil, err
		}
		typ, err := p.Str(kvs, "type", ipath)
		if err != nil {
			return nil, err
		}
		if name, _ := p.Str(kvs, "name", ipath); name != "" {
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
			if name, err := p.Str(kvs, "interface", ipath); err != nil {
				return nil, err
			} else if name != "" {
				perIface = append(perIface, ifaceDNS{name, it, ipath, dns})
				continue
			}
			c.DNS.Nameservers = append(c.DNS.Nameservers, dns.Nameservers...)
			c.DNS.Search = append(c.DNS.Search, dns.Search...)
		case "route":
			if yamlread.Get(kvs, "destination") == nil && yamlread.Get(kvs, "network") == nil {
				return nil, yamlread.Errorf(it, ipath, "route without destination")
			}
			p.ignoreUnknown(kvs, v1RouteKeys(), ipath)
			r, err := p.v1Route(kvs, it, ipath)
			if err != nil {
				return nil, err
			}
			c.Routes = append(c.Routes, r)
		case "loopback":
		case "":
			return nil, yamlread.Errorf(it, ipath, "no type")
		default:
			return nil, yamlread.Errorf(it, ipath, "unknown type %q", typ)
		}
	}
	// As cloud-init, interface nameservers apply once all interfaces are known.
	for _, d := range perIface {
		iface := c.Interface(d.name)
		if iface == nil {
			return nil, yamlread.Errorf(d.node, d.path, "nameserver for interface %q, which does not exist", d.name)
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
func (p *yparser) ignoreUnknown(kvs []yamlread.KV, known []string, path string) {
	for _, kv := range kvs {
		if !slices.Contains(known, kv.Key) {
			p.ignored = append(p.ignored, yamlread.Join(path, kv.Key))
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
func (p *yparser) v1Interface(kvs []yamlread.KV, kind Kind, n *yaml.Node, path string) (Interface, error) {
	iface := Interface{Kind: kind}
	var err error
	if iface.Name, err = p.Str(kvs, "name", path); err != nil {
		return iface, err
	}
	if mac, err := p.Str(kvs, "mac_address", path); err != nil {
		return iface, err
	} else if mac != "" {
		if iface.MAC, err = parseMAC(mac); err != nil {
			return iface, yamlread.Errorf(yamlread.Get(kvs, "mac_address"), yamlread.Join(path, "mac_address"), "%v", err)
		}
	}
	if iface.Name == "" && kind == Physical && iface.MAC != "" {
		// A physical NIC given by MAC alone is the live NIC with that
		// MAC, under its own name, as cloud-init's Vultr, UpCloud,
		// Hetzner and DigitalOcean sources name it from the system.
		if name := p.macToName[iface.MAC]; name != "" {
			iface.Name, iface.NoRename = name, true
		} else {
			return iface, yamlread.Errorf(n, path, "physical with mac_address %s and no name: no NIC has that MAC", iface.MAC)
		}
	}
	if iface.Name == "" {
		return iface, yamlread.Errorf(n, path, "%s without name", kind)
	}
	if iface.MTU, err = p.mtu(kvs, path); err != nil {
		return iface, err
	}
	if ra, ok, err := p.Boolean(kvs, "accept-ra", path); err != nil {
		return iface, err
	} else if ok {
		iface.AcceptRA = &ra
	}
	if iface.WakeOnLAN, _, err = p.Boolean(kvs, "wakeonlan", path); err != nil {
		return iface, err
	}
	params, err := p.Mapping(nodeOr(yamlread.Get(kvs, "params")), yamlread.Join(path, "params"))
	if err != nil {
		return iface, err
	}
	ppath := yamlread.Join(path, "params")
	switch kind {
	case Physical:
		iface.Driver, err = p.Str(params, "driver", ppath)
		for _, kv := range params {
			if kv.Key != "driver" {
				p.ignored = append(p.ignored, yamlread.Join(ppath, kv.Key))
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
func (p *yparser) v1Bond(kvs, params []yamlread.KV, n *yaml.Node, path string) (*BondConfig, error) {
	members, err := p.memberList(kvs, "bond_interfaces", n, path)
	if err != nil {
		return nil, err
	}
	if len(members) == 0 {
		return nil, yamlread.Errorf(n, path, "bond without bond_interfaces")
	}
	b := &BondConfig{Members: members, Params: map[string]string{}}
	ppath := yamlread.Join(path, "params")
	for _, kv := range params {
		key := kv.Key
		if k, ok := strings.CutPrefix(key, "bond-"); ok {
			key = k
		} else if k, ok := strings.CutPrefix(key, "bond_"); ok {
			key = strings.ReplaceAll(k, "_", "-")
		}
		v, err := p.paramValue(kv.Val, yamlread.Join(ppath, kv.Key), " ")
		if err != nil {
			return nil, err
		}
		b.Params[key] = v
	}
	return b, nil
}

// v1VLAN reads a VLAN's vlan_link and vlan_id.
func (p *yparser) v1VLAN(kvs []yamlread.KV, n *yaml.Node, path string) (*VLANConfig, error) {
	link, err := p.Str(kvs, "vlan_link", path)
	if err != nil {
		return nil, err
	}
	if link == "" {
		return nil, yamlread.Errorf(n, path, "vlan without vlan_link")
	}
	id, ok, err := p.Integer(kvs, "vlan_id", path)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, yamlread.Errorf(n, path, "vlan without vlan_id")
	}
	if id < 1 || id > 4094 {
		return nil, yamlread.Errorf(yamlread.Get(kvs, "vlan_id"), yamlread.Join(path, "vlan_id"), "%d out of range 1-4094", id)
	}
	return &VLANConfig{ID: id, Link: link}, nil
}

// v1Bridge reads a bridge's bridge_interfaces and its params, bridge_*
// keys under their model names.
func (p *yparser) v1Bridge(kvs, params []yamlread.KV, n *yaml.Node, path string) (*BridgeConfig, error) {
	if yamlread.Get(kvs, "bridge_interfaces") == nil {
		return nil, yamlread.Errorf(n, path, "bridge without bridge_interfaces")
	}
	members, err := p.memberList(kvs, "bridge_interfaces", n, path)
	if err != nil {
		return nil, err
	}
	br := &BridgeConfig{Members: members, Params: map[string]string{}}
	ppath := yamlread.Join(path, "params")
	for _, kv := range params {
		key := strings.TrimPrefix(kv.Key, "bridge_")
		sep := " "
		switch key {
		case "bridgeprio":
			key = "priority"
		case "pathcost", "portprio":
			sep = ","
		}
		v, err := p.paramValue(kv.Val, yamlread.Join(ppath, kv.Key), sep)
		if err != nil {
			return nil, err
		}
		if key == "stp" {
			if v, err = stpValue(v); err != nil {
				return nil, yamlread.Errorf(kv.Val, yamlread.Join(ppath, kv.Key), "%v", err)
			}
		}
		br.Params[key] = v
	}
	return br, nil
}

// v1Subnets reads an interface's subnets, if any, and its control: the
// first subnet's "control" ("auto" is ""), which decides how the interface
// comes up (cloud-init's eni and sysconfig read it so).
func (p *yparser) v1Subnets(kvs []yamlread.KV, path string) ([]Subnet, string, error) {
	sn := yamlread.Get(kvs, "subnets")
	if sn == nil {
		return nil, "", nil
	}
	subnets, err := p.List(sn, yamlread.Join(path, "subnets"))
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
		skvs, _ := p.Mapping(s, spath)
		if cn := yamlread.Get(skvs, "control"); cn != nil && !haveControl {
			v, vn, err := p.Scalar(cn, yamlread.Join(spath, "control"))
			if err != nil {
				return nil, "", err
			}
			switch v {
			case "auto", "":
			case "manual", "hotplug":
				control = v
			default:
				return nil, "", yamlread.Errorf(vn, yamlread.Join(spath, "control"), "%q is not auto, manual or hotplug", v)
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

func (p *yparser) memberList(kvs []yamlread.KV, key string, n *yaml.Node, path string) ([]string, error) {
	mn := yamlread.Get(kvs, key)
	if mn == nil {
		return nil, nil
	}
	members, nodes, err := p.Strings(mn, yamlread.Join(path, key), false)
	if err != nil {
		return nil, err
	}
	for i, m := range members {
		if m == "" {
			return nil, yamlread.Errorf(nodes[i], fmt.Sprintf("%s.%s[%d]", path, key, i), "empty interface name")
		}
	}
	return members, nil
}

// paramValue renders a scalar, or a list of scalars joined by sep.
func (p *yparser) paramValue(n *yaml.Node, path, sep string) (string, error) {
	r, err := p.Node(n)
	if err != nil {
		return "", err
	}
	if r.Kind == yaml.ScalarNode {
		return r.Value, nil
	}
	vals, _, err := p.Strings(r, path, false)
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

func (p *yparser) mtu(kvs []yamlread.KV, path string) (int, error) {
	return p.NonNegative(kvs, "mtu", path)
}

// v1DNS reads nameserver addresses and search domains (each a list or a
// whitespace-separated string).
func (p *yparser) v1DNS(kvs []yamlread.KV, addrKey, searchKey, path string, split bool) (DNS, error) {
	var d DNS
	if n := yamlread.Get(kvs, addrKey); n != nil {
		addrs, nodes, err := p.Strings(n, yamlread.Join(path, addrKey), split)
		if err != nil {
			return d, err
		}
		for i, a := range addrs {
			// "192.168.23.14/27": cloud-init passes the prefix through
			// to resolv.conf; the nameserver is the address.
			a, _, _ = strings.Cut(a, "/")
			ip, err := parseIP(a)
			if err != nil {
				return d, yamlread.Errorf(nodes[i], fmt.Sprintf("%s[%d]", yamlread.Join(path, addrKey), i), "%v", err)
			}
			d.Nameservers = append(d.Nameservers, ip)
		}
	}
	if n := yamlread.Get(kvs, searchKey); n != nil {
		search, _, err := p.Strings(n, yamlread.Join(path, searchKey), split)
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
	kvs, err := p.Mapping(n, path)
	if err != nil {
		return s, err
	}
	typ, err := p.Str(kvs, "type", path)
	if err != nil {
		return s, err
	}
	t, ok := v1SubnetType(typ)
	if !ok {
		if typ == "" {
			return s, yamlread.Errorf(n, path, "subnet without type")
		}
		return s, yamlread.Errorf(yamlread.Get(kvs, "type"), yamlread.Join(path, "type"), "unknown subnet type %q", typ)
	}
	s.Type = t
	p.ignoreUnknown(kvs, v1SubnetKeys(), path)
	if t == Static {
		if s.Address, err = p.netKeys(kvs, "address", n, path); err != nil {
			return s, err
		}
	}
	if b, err := p.Str(kvs, "broadcast", path); err != nil {
		return s, err
	} else if b != "" {
		if s.Broadcast, err = parseIP(b); err != nil {
			return s, yamlread.Errorf(yamlread.Get(kvs, "broadcast"), yamlread.Join(path, "broadcast"), "%v", err)
		}
		if !s.Broadcast.Is4() || !s.Address.Addr().Is4() {
			return s, yamlread.Errorf(yamlread.Get(kvs, "broadcast"), yamlread.Join(path, "broadcast"), "a broadcast address is for a static IPv4 subnet")
		}
	}
	if gw, err := p.Str(kvs, "gateway", path); err != nil {
		return s, err
	} else if gw != "" {
		if s.Gateway, err = parseIP(gw); err != nil {
			return s, yamlread.Errorf(yamlread.Get(kvs, "gateway"), yamlread.Join(path, "gateway"), "%v", err)
		}
	}
	if s.MTU, err = p.mtu(kvs, path); err != nil {
		return s, err
	}
	if s.Metric, err = p.NonNegative(kvs, "metric", path); err != nil {
		return s, err
	}
	if s.DNS, err = p.v1DNS(kvs, "dns_nameservers", "dns_search", path, true); err != nil {
		return s, err
	}
	if rn := yamlread.Get(kvs, "routes"); rn != nil {
		routes, err := p.List(rn, yamlread.Join(path, "routes"))
		if err != nil {
			return s, err
		}
		for i, r := range routes {
			rpath := fmt.Sprintf("%s.routes[%d]", path, i)
			rkvs, err := p.Mapping(r, rpath)
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
func (p *yparser) netKeys(kvs []yamlread.KV, addrKey string, n *yaml.Node, path string) (netip.Prefix, error) {
	addr, err := p.Str(kvs, addrKey, path)
	if err != nil {
		return netip.Prefix{}, err
	}
	if addr == "" {
		return netip.Prefix{}, yamlread.Errorf(n, path, "no %s", addrKey)
	}
	mask, err := p.Str(kvs, "netmask", path)
	if err != nil {
		return netip.Prefix{}, err
	}
	var prefix *int
	if v, ok, err := p.Integer(kvs, "prefix", path); err != nil {
		return netip.Prefix{}, err
	} else if ok {
		prefix = &v
	}
	pf, err := parseIPNet(addr, mask, prefix)
	if err != nil {
		return netip.Prefix{}, yamlread.Errorf(yamlread.Get(kvs, addrKey), yamlread.Join(path, addrKey), "%v", err)
	}
	return pf, nil
}

// v1Route reads {destination or network, netmask, prefix, gateway, metric}.
func (p *yparser) v1Route(kvs []yamlread.KV, n *yaml.Node, path string) (Route, error) {
	var r Route
	key := "destination"
	if yamlread.Get(kvs, key) == nil {
		key = "network"
	}
	var err error
	if r.To, err = p.netKeys(kvs, key, n, path); err != nil {
		return r, err
	}
	if gw, err := p.Str(kvs, "gateway", path); err != nil {
		return r, err
	} else if gw != "" {
		if r.Via, err = parseIP(gw); err != nil {
			return r, yamlread.Errorf(yamlread.Get(kvs, "gateway"), yamlread.Join(path, "gateway"), "%v", err)
		}
		if r.Via.Is4() != r.To.Addr().Is4() {
			return r, yamlread.Errorf(n, path, "gateway %s and destination %s are of different families", r.Via, r.To)
		}
	}
	if r.Metric, err = p.NonNegative(kvs, "metric", path); err != nil {
		return r, err
	}
	return r, nil
}
