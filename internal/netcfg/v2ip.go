package netcfg

import (
	"fmt"
	"net/netip"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/earlyinit/earlyinit/internal/netcfg/yamlread"
	"github.com/earlyinit/earlyinit/internal/scalar"
)

// A v2 device's IP configuration (DHCP and its overrides, addresses,
// gateways, routes), as network_state's _v2_to_v1_ipcfg reads it.

// v2IPConfig is network_state's _v2_to_v1_ipcfg plus the nameserver half of
// _v2_common.
func (p *yparser) v2IPConfig(kvs []yamlread.KV, path string, iface *Interface, c *Config) error {
	if err := p.v2DHCP(kvs, path, iface); err != nil {
		return err
	}
	gw4, gw6, err := p.v2Gateways(kvs, path)
	if err != nil {
		return err
	}
	var dns DNS
	if nn := yamlread.Get(kvs, "nameservers"); nn != nil {
		npath := yamlread.Join(path, "nameservers")
		nkvs, err := p.Mapping(nn, npath)
		if err != nil {
			return err
		}
		p.ignoreUnknown(nkvs, []string{"addresses", "search"}, npath)
		// A single string is one or more addresses (cloud-init listifies).
		if dns, err = p.v1DNS(nkvs, "addresses", "search", npath, true); err != nil {
			return err
		}
	}
	if err := p.v2Addresses(kvs, path, iface, gw4, gw6, dns); err != nil {
		return err
	}
	if err := p.v2Routes(kvs, path, iface); err != nil {
		return err
	}
	// The device's own DNS. cloud-init's _v2_common also appends it to the
	// host-wide DNS, from where its renderers copy it onto other
	// interfaces; here it stays on its device.
	if !dns.Empty() {
		iface.DNS = dns
	}
	return nil
}

// v2DHCP adds the DHCPv4 then the DHCPv6 subnet, when on, with their
// overrides.
func (p *yparser) v2DHCP(kvs []yamlread.KV, path string, iface *Interface) error {
	dhcp4, _, err := p.Boolean(kvs, "dhcp4", path)
	if err != nil {
		return err
	}
	dhcp6, _, err := p.Boolean(kvs, "dhcp6", path)
	if err != nil {
		return err
	}
	for _, d := range []struct {
		on  bool
		typ SubnetType
		key string
		out **DHCPOverrides
	}{{dhcp4, DHCP4, "dhcp4-overrides", &iface.DHCP4Overrides}, {dhcp6, DHCP6, "dhcp6-overrides", &iface.DHCP6Overrides}} {
		if !d.on {
			continue // as cloud-init: overrides without the DHCP are ignored
		}
		sub := Subnet{Type: d.typ}
		if on := yamlread.Get(kvs, d.key); on != nil && !yamlread.IsNull(on) {
			o, metric, err := p.v2DHCPOverrides(on, yamlread.Join(path, d.key), d.typ == DHCP4)
			if err != nil {
				return err
			}
			*d.out, sub.Metric = o, metric
		}
		iface.Subnets = append(iface.Subnets, sub)
	}
	return nil
}

// v2Gateways reads gateway4 and gateway6, each of its own family.
func (p *yparser) v2Gateways(kvs []yamlread.KV, path string) (gw4, gw6 netip.Addr, err error) {
	for _, k := range []string{"gateway4", "gateway6"} {
		s, err := p.Str(kvs, k, path)
		if err != nil || s == "" {
			if err != nil {
				return netip.Addr{}, netip.Addr{}, err
			}
			continue
		}
		a, err := parseIP(s)
		if err != nil {
			return netip.Addr{}, netip.Addr{}, yamlread.Errorf(yamlread.Get(kvs, k), yamlread.Join(path, k), "%v", err)
		}
		if a.Is4() != (k == "gateway4") {
			return netip.Addr{}, netip.Addr{}, yamlread.Errorf(yamlread.Get(kvs, k), yamlread.Join(path, k), "%q is of the wrong family", s)
		}
		if k == "gateway4" {
			gw4 = a
		} else {
			gw6 = a
		}
	}
	return gw4, gw6, nil
}

// v2Addresses adds one static subnet per address, gw4 and gw6 on the first
// address of their family and dns on the first address.
func (p *yparser) v2Addresses(kvs []yamlread.KV, path string, iface *Interface, gw4, gw6 netip.Addr, dns DNS) error {
	an := yamlread.Get(kvs, "addresses")
	if an == nil {
		p.droppedGateways(path, gw4, gw6)
		return nil
	}
	apath := yamlread.Join(path, "addresses")
	items, err := p.List(an, apath)
	if err != nil {
		return err
	}
	for i, it := range items {
		pf, err := p.v2Address(it, fmt.Sprintf("%s[%d]", apath, i))
		if err != nil {
			return err
		}
		sub := Subnet{Type: Static, Address: pf}
		if pf.Addr().Is4() && gw4.IsValid() {
			sub.Gateway, gw4 = gw4, netip.Addr{}
		} else if pf.Addr().Is6() && gw6.IsValid() {
			sub.Gateway, gw6 = gw6, netip.Addr{}
		}
		if i == 0 {
			sub.DNS = dns
		}
		iface.Subnets = append(iface.Subnets, sub)
	}
	// As cloud-init: a gateway with no address of its family is dropped,
	// but not without a word.
	p.droppedGateways(path, gw4, gw6)
	return nil
}

// droppedGateways records the gateways left without an address of their
// family.
func (p *yparser) droppedGateways(path string, gw4, gw6 netip.Addr) {
	if gw4.IsValid() {
		p.ignored = append(p.ignored, yamlread.Join(path, "gateway4")+" (no IPv4 address)")
	}
	if gw6.IsValid() {
		p.ignored = append(p.ignored, yamlread.Join(path, "gateway6")+" (no IPv6 address)")
	}
}

// v2Address reads one address: a string, or netplan's mapping form
// ("10.0.0.2/24": {label: x}).
func (p *yparser) v2Address(it *yaml.Node, ipath string) (netip.Prefix, error) {
	r, err := p.Node(it)
	if err != nil {
		return netip.Prefix{}, err
	}
	var s string
	if r.Kind == yaml.MappingNode { // netplan: - "10.0.0.2/24": {label: x}
		m, err := p.Mapping(r, ipath)
		if err != nil {
			return netip.Prefix{}, err
		}
		if len(m) != 1 {
			return netip.Prefix{}, yamlread.Errorf(r, ipath, "want one address, have %d keys", len(m))
		}
		opts, err := p.Mapping(m[0].Val, yamlread.Join(ipath, m[0].Key))
		if err != nil {
			return netip.Prefix{}, err
		}
		p.ignoreUnknown(opts, nil, ipath) // label, lifetime: not kept
		s, r = m[0].Key, m[0].KNode
	} else if s, r, err = p.Scalar(r, ipath); err != nil {
		return netip.Prefix{}, err
	}
	pf, err := parseIPNet(s, "", nil)
	if err != nil {
		return netip.Prefix{}, yamlread.Errorf(r, ipath, "%v", err)
	}
	return pf, nil
}

// v2Routes puts the routes on the first subnet, adding a manual one to a
// device that has none.
func (p *yparser) v2Routes(kvs []yamlread.KV, path string, iface *Interface) error {
	rn := yamlread.Get(kvs, "routes")
	if rn == nil {
		return nil
	}
	rpath := yamlread.Join(path, "routes")
	items, err := p.List(rn, rpath)
	if err != nil {
		return err
	}
	var routes []Route
	for i, it := range items {
		r, err := p.v2Route(it, fmt.Sprintf("%s[%d]", rpath, i))
		if err != nil {
			return err
		}
		routes = append(routes, r)
	}
	if len(routes) > 0 {
		if len(iface.Subnets) == 0 {
			iface.Subnets = append(iface.Subnets, Subnet{Type: Manual})
		}
		iface.Subnets[0].Routes = routes
	}
	return nil
}

// v2DHCPOverrides reads dhcp4-overrides or dhcp6-overrides (v4 tells which):
// netplan's keys, with route-metric returned apart (it is the DHCP subnet's
// metric). A key netplan does not have for that family is an error, as in
// netplan.
func (p *yparser) v2DHCPOverrides(n *yaml.Node, path string, v4 bool) (*DHCPOverrides, int, error) {
	kvs, err := p.Mapping(n, path)
	if err != nil {
		return nil, 0, err
	}
	o := &DHCPOverrides{}
	metric := 0
	v4only := map[string]bool{"use-mtu": true, "use-routes": true, "send-hostname": true, "hostname": true}
	for _, kv := range kvs {
		kpath := yamlread.Join(path, kv.Key)
		if v4only[kv.Key] && !v4 {
			return nil, 0, yamlread.Errorf(kv.KNode, kpath, "is only for dhcp4-overrides")
		}
		if b := o.Flag(kv.Key); b != nil {
			v, set, err := p.Boolean(kvs, kv.Key, path)
			if err != nil {
				return nil, 0, err
			}
			if set {
				*b = &v
			}
			continue
		}
		switch kv.Key {
		case "hostname":
			if o.Hostname, err = p.Str(kvs, kv.Key, path); err != nil {
				return nil, 0, err
			}
		case "use-domains":
			v, err := p.Str(kvs, kv.Key, path)
			if err != nil {
				return nil, 0, err
			}
			if b, ok := scalar.WordYN(v); ok {
				o.UseDomains = fmt.Sprint(b)
			} else if strings.ToLower(v) == "route" {
				o.UseDomains = "route"
			} else {
				return nil, 0, yamlread.Errorf(kv.Val, kpath, "%q is not a boolean or \"route\"", v)
			}
		case "route-metric":
			if metric, err = p.NonNegative(kvs, kv.Key, path); err != nil {
				return nil, 0, err
			}
		default:
			return nil, 0, yamlread.Errorf(kv.KNode, kpath, "unknown key")
		}
	}
	if *o == (DHCPOverrides{}) {
		o = nil // only route-metric, or nothing
	}
	return o, metric, nil
}

func (p *yparser) v2Route(n *yaml.Node, path string) (Route, error) {
	var r Route
	kvs, err := p.Mapping(n, path)
	if err != nil {
		return r, err
	}
	p.ignoreUnknown(kvs, v2RouteKeys(), path)
	to, err := p.Str(kvs, "to", path)
	if err != nil {
		return r, err
	}
	via, err := p.Str(kvs, "via", path)
	if err != nil {
		return r, err
	}
	if via != "" {
		if r.Via, err = parseIP(via); err != nil {
			return r, yamlread.Errorf(yamlread.Get(kvs, "via"), yamlread.Join(path, "via"), "%v", err)
		}
	}
	switch {
	case to == "":
		return r, yamlread.Errorf(n, path, "route without to")
	case to == "default" && r.Via.Is6():
		r.To = netip.MustParsePrefix("::/0")
	case to == "default":
		r.To = netip.MustParsePrefix("0.0.0.0/0")
	case !strings.Contains(to, "/"):
		// A bare address is a host route, as netplan and networkd read
		// it (cloud-init's network_state would make it a /24 or /64).
		a, err := parseIP(strings.TrimSpace(to))
		if err != nil {
			return r, yamlread.Errorf(yamlread.Get(kvs, "to"), yamlread.Join(path, "to"), "%q: invalid IP", to)
		}
		r.To = netip.PrefixFrom(a, a.BitLen())
	default:
		if r.To, err = parseIPNet(to, "", nil); err != nil {
			return r, yamlread.Errorf(yamlread.Get(kvs, "to"), yamlread.Join(path, "to"), "%v", err)
		}
	}
	if r.Via.IsValid() && r.Via.Is4() != r.To.Addr().Is4() {
		return r, yamlread.Errorf(n, path, "via %s and to %s are of different families", r.Via, r.To)
	}
	if r.Metric, err = p.NonNegative(kvs, "metric", path); err != nil {
		return r, err
	}
	if r.Table, err = p.NonNegative(kvs, "table", path); err != nil {
		return r, err
	}
	if r.MTU, err = p.NonNegative(kvs, "mtu", path); err != nil {
		return r, err
	}
	if r.Scope, err = p.Str(kvs, "scope", path); err != nil {
		return r, err
	}
	switch r.Scope {
	case "", "global", "link", "host":
	default:
		return r, yamlread.Errorf(yamlread.Get(kvs, "scope"), yamlread.Join(path, "scope"), "%q is not global, link or host", r.Scope)
	}
	return r, nil
}
