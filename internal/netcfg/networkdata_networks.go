package netcfg

import (
	"errors"
	"fmt"
	"net/netip"

	"github.com/earlyinit/earlyinit/internal/netcfg/jsonobj"
)

// network_data.json's networks (a link's subnets, with their routes and
// resolvers) and services of type "dns", as convert_net_json reads them.

// services adds the top-level services of type "dns" (address and
// search) to the global DNS.
func (p *ndParser) services(services []jsonobj.Object) error {
	d, err := ndDNSServices(services, "services")
	if err != nil {
		return err
	}
	p.c.DNS.Nameservers = append(p.c.DNS.Nameservers, d.Nameservers...)
	p.c.DNS.Search = append(p.c.DNS.Search, d.Search...)
	return nil
}

// ndDNSServices reads the services of type "dns": each one's address
// (optional when it has a search) and its search domains, a list or a
// whitespace-separated string, as cloud-init's nameserver entries take
// them. Other types are skipped.
func ndDNSServices(services []jsonobj.Object, where string) (DNS, error) {
	var d DNS
	for i, s := range services {
		swhere := fmt.Sprintf("%s[%d]", where, i)
		typ, _, err := s.Str("type")
		if err != nil {
			return DNS{}, fmt.Errorf("%s: %w", swhere, err)
		}
		if typ != "dns" {
			continue
		}
		search, err := jsonobj.StringList(s["search"])
		if err != nil {
			return DNS{}, fmt.Errorf("%s: search: %w", swhere, err)
		}
		d.Search = append(d.Search, search...)
		addr, ok, err := s.Str("address")
		if err != nil {
			return DNS{}, fmt.Errorf("%s: %w", swhere, err)
		}
		if !ok && len(search) > 0 {
			continue
		}
		ip, err := parseIP(addr)
		if err != nil {
			return DNS{}, fmt.Errorf("%s: address: %w", swhere, err)
		}
		d.Nameservers = append(d.Nameservers, ip)
	}
	return d, nil
}

// ndSubnet adds network networks[i] to iface, as convert_net_json does.
func ndSubnet(iface *Interface, n jsonobj.Object, i int) error {
	nid, _, _ := n.Str("id")
	where := fmt.Sprintf("networks[%d] (id %q)", i, nid)
	typ, _, err := n.Str("type")
	if err != nil {
		return fmt.Errorf("%s: %w", where, err)
	}
	var s Subnet
	setRA := func(v bool) { iface.AcceptRA = &v }
	switch typ {
	case "ipv4_dhcp":
		s.Type = DHCP4
	case "ipv6_dhcp":
		s.Type = DHCP6
		setRA(true)
	case "ipv6_slaac":
		s.Type = SLAAC
	case "ipv6_dhcpv6-stateless":
		s.Type = DHCPv6Stateless
	case "ipv6_dhcpv6-stateful":
		s.Type = DHCPv6Stateful
		setRA(true)
	case "ipv4", "static", "ipv6", "static6":
		s.Type = Static
		if typ == "ipv6" || typ == "static6" {
			setRA(false)
		}
		if s.Address, err = ndStaticAddress(n, typ, where); err != nil {
			return err
		}
	default:
		return fmt.Errorf("%s: unknown type %q", where, typ)
	}
	if s.Gateway, s.Routes, err = ndGatewayRoutes(n, where); err != nil {
		return err
	}
	if s.DNS, err = ndSubnetDNS(n, where); err != nil {
		return err
	}
	iface.Subnets = append(iface.Subnets, s)
	return nil
}

// ndStaticAddress returns the address of a static network of type typ
// (ip_address and netmask), which must be of the type's family.
func ndStaticAddress(n jsonobj.Object, typ, where string) (netip.Prefix, error) {
	addr, _, err := n.Str("ip_address")
	if err != nil {
		return netip.Prefix{}, fmt.Errorf("%s: %w", where, err)
	}
	if addr == "" {
		return netip.Prefix{}, fmt.Errorf("%s: %s network without ip_address", where, typ)
	}
	mask, _, err := n.Str("netmask")
	if err != nil {
		return netip.Prefix{}, fmt.Errorf("%s: %w", where, err)
	}
	pf, err := parseIPNet(addr, mask, nil)
	if err != nil {
		return netip.Prefix{}, fmt.Errorf("%s: ip_address: %w", where, err)
	}
	want6 := typ == "ipv6" || typ == "static6"
	if pf.Addr().Is6() != want6 {
		return netip.Prefix{}, fmt.Errorf("%s: ip_address %q does not match type %q", where, addr, typ)
	}
	return pf, nil
}

// ndGatewayRoutes returns a network's gateway and routes.
func ndGatewayRoutes(n jsonobj.Object, where string) (netip.Addr, []Route, error) {
	var gw netip.Addr
	gwText, _, err := n.Str("gateway")
	if err != nil {
		return netip.Addr{}, nil, fmt.Errorf("%s: %w", where, err)
	}
	if gwText != "" {
		if gw, err = parseIP(gwText); err != nil {
			return netip.Addr{}, nil, fmt.Errorf("%s: gateway: %w", where, err)
		}
	}
	routes, err := n.Objects("routes")
	if err != nil {
		return netip.Addr{}, nil, fmt.Errorf("%s: %w", where, err)
	}
	var out []Route
	for j, r := range routes {
		rt, err := ndRoute(r)
		if err != nil {
			return netip.Addr{}, nil, fmt.Errorf("%s: routes[%d]: %w", where, j, err)
		}
		out = append(out, rt)
	}
	return gw, out, nil
}

// ndSubnetDNS returns a network's resolver settings: dns_nameservers and
// dns_search, then the addresses of its services of type "dns".
func ndSubnetDNS(n jsonobj.Object, where string) (DNS, error) {
	var d DNS
	// Non-standard, but in convert_net_json's list of subnet keys.
	for _, k := range []string{"dns_nameservers", "dns_search"} {
		vals, err := jsonobj.StringList(n[k])
		if err != nil {
			return DNS{}, fmt.Errorf("%s: %s: %w", where, k, err)
		}
		for _, v := range vals {
			if k == "dns_search" {
				d.Search = append(d.Search, v)
				continue
			}
			ip, err := parseIP(v)
			if err != nil {
				return DNS{}, fmt.Errorf("%s: %s: %w", where, k, err)
			}
			d.Nameservers = append(d.Nameservers, ip)
		}
	}
	svcs, err := n.Objects("services")
	if err != nil {
		return DNS{}, fmt.Errorf("%s: %w", where, err)
	}
	sd, err := ndDNSServices(svcs, where+": services")
	if err != nil {
		return DNS{}, err
	}
	d.Nameservers = append(d.Nameservers, sd.Nameservers...)
	d.Search = append(d.Search, sd.Search...)
	return d, nil
}

// ndRoute parses an OpenStack route {network, netmask, gateway}; cloud-init
// also honours "metric".
func ndRoute(r jsonobj.Object) (Route, error) {
	network, _, err := r.Str("network")
	if err != nil {
		return Route{}, err
	}
	if network == "" {
		return Route{}, errors.New("no network")
	}
	mask, _, err := r.Str("netmask")
	if err != nil {
		return Route{}, err
	}
	var rt Route
	if rt.To, err = parseIPNet(network, mask, nil); err != nil {
		return Route{}, fmt.Errorf("network: %w", err)
	}
	gw, _, err := r.Str("gateway")
	if err != nil {
		return Route{}, err
	}
	if gw != "" {
		if rt.Via, err = parseIP(gw); err != nil {
			return Route{}, fmt.Errorf("gateway: %w", err)
		}
		if rt.Via.Is4() != rt.To.Addr().Is4() {
			return Route{}, fmt.Errorf("gateway %q and network %q are of different families", gw, network)
		}
	}
	metric, _, err := r.Integer("metric")
	if err != nil {
		return Route{}, err
	}
	if metric < 0 {
		return Route{}, fmt.Errorf("metric: %d is negative", metric)
	}
	rt.Metric = metric
	return rt, nil
}
