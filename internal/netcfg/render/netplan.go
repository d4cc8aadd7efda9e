package render

import (
	"bytes"
	"fmt"
	"net/netip"
	"sort"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/earlyinit/earlyinit/internal/netcfg"
)

// NetplanPath is the file the netplan renderer writes (cloud-init writes
// 50-cloud-init.yaml).
const NetplanPath = "/etc/netplan/50-earlyinit.yaml"

type netplan struct{}

// Netplan renders one netplan version 2 file, mode 0600 (netplan warns about
// world-readable configuration), following cloud-init's netplan.py.
func Netplan() Renderer { return netplan{} }

func (netplan) Name() string { return "netplan" }

// netplanBondKey maps v1 bond parameter names to netplan's.
func netplanBondKey(k string) string {
	switch k {
	case "mode", "lacp-rate", "min-links", "ad-select", "arp-interval", "arp-validate", "primary":
		return k
	case "xmit-hash-policy":
		return "transmit-hash-policy"
	case "miimon":
		return "mii-monitor-interval"
	case "arp-ip-target":
		return "arp-ip-targets"
	case "fail-over-mac":
		return "fail-over-mac-policy"
	case "num-grat-arp":
		return "gratuitous-arp"
	case "updelay":
		return "up-delay"
	case "downdelay":
		return "down-delay"
	case "primary-reselect":
		return "primary-reselect-policy"
	case "all-slaves-active", "arp-all-targets", "packets-per-slave", "resend-igmp":
		return k
	case "lp-interval":
		return "learn-packet-interval"
	}
	return ""
}

// scalar turns a numeric string into a number so YAML shows it unquoted.
func scalar(v string) any {
	if n, err := strconv.Atoi(v); err == nil {
		return n
	}
	return v
}

// Render writes one netplan file: the interfaces by section, in
// cloud-init's order.
func (netplan) Render(c *netcfg.Config) ([]File, error) {
	if c.Disabled {
		return nil, nil
	}
	if err := check(c); err != nil {
		return nil, fmt.Errorf("netplan: %w", err)
	}
	gns, gsearch := globalDNS(c)
	rel := relate(c)
	everywhere := globalDNSEverywhere(c, rel)
	// In that case the host-wide DNS goes to the interfaces with a
	// subnet, or to all of them when none has one, so that it is not lost.
	configured := false
	for i := range c.Interfaces {
		ifc := &c.Interfaces[i]
		ns, search := ifaceDNS(ifc)
		if !enslaved(rel, ifc) && len(ns) == 0 && len(search) == 0 && hasConfig(ifc) {
			configured = true
		}
	}
	entries := map[string]map[string]any{}
	order, onePass := netplanOrder(c)
	for i := range c.Interfaces {
		ifc := &c.Interfaces[i]
		if _, ok := rel.bondOf[ifc.Name]; ok {
			// netplan gives a bond member no link-local addressing, and
			// networkd drops the rest.
			ifc = asBondMember(ifc)
		}
		anyDNS := everywhere && !enslaved(rel, ifc) && (hasConfig(ifc) || !configured)
		switch ifc.Kind {
		case netcfg.Physical, netcfg.Infiniband:
			// An InfiniBand NIC is matched by its name (netplan's
			// macaddress is an Ethernet MAC).
			e := netplanMatch(ifc)
			if ifc.WakeOnLAN {
				e["wakeonlan"] = true
			}
			netplanAddresses(c, ifc, e, gns, gsearch, anyDNS)
			entries[ifc.Name] = e
		case netcfg.Bond:
			e := map[string]any{"interfaces": sortedCopy(ifc.Bond.Members)}
			if params := netplanBondParams(ifc.Bond); len(params) > 0 {
				e["parameters"] = params
			}
			netplanVirtual(c, ifc, e, gns, gsearch, anyDNS)
			entries[ifc.Name] = e
		case netcfg.Bridge:
			e := map[string]any{"interfaces": sortedCopy(ifc.Bridge.Members)}
			if params := netplanBridgeParams(ifc.Bridge, onePass); len(params) > 0 {
				e["parameters"] = params
			}
			netplanVirtual(c, ifc, e, gns, gsearch, anyDNS)
			entries[ifc.Name] = e
		case netcfg.VLAN:
			e := map[string]any{"id": ifc.VLAN.ID, "link": ifc.VLAN.Link}
			netplanVirtual(c, ifc, e, gns, gsearch, anyDNS)
			entries[ifc.Name] = e
		}
	}
	data, err := netplanEncode(order, entries)
	if err != nil {
		return nil, err
	}
	return []File{{Path: NetplanPath, Data: data, Mode: 0o600}}, nil
}

// netplanMatch starts an ethernet's entry: match (MAC, driver) and, when
// it matches on something, set-name.
func netplanMatch(ifc *netcfg.Interface) map[string]any {
	e := map[string]any{}
	match := map[string]any{}
	if ifc.Kind == netcfg.Infiniband {
		return e
	}
	if ifc.MatchName != "" {
		match["name"] = ifc.MatchName
	}
	if ifc.MAC != "" {
		match["macaddress"] = ifc.MAC
	}
	if ifc.Driver != "" {
		match["driver"] = ifc.Driver
	}
	if len(match) > 0 {
		e["match"] = match
		if !ifc.NoRename {
			e["set-name"] = ifc.Name
		}
	}
	return e
}

// netplanBondParams is a bond's parameters under netplan's names; those
// netplan has no name for are left out.
func netplanBondParams(b *netcfg.BondConfig) map[string]any {
	params := map[string]any{}
	for k, v := range bondParams(b) {
		switch nk := netplanBondKey(k); nk {
		case "":
		case "arp-ip-targets":
			params[nk] = strings.FieldsFunc(v, func(r rune) bool { return r == ',' || r == ' ' })
		case "lacp-rate":
			params[nk] = lacpRate(v)
		case "all-slaves-active":
			if b, ok := truthy(v); ok {
				params[nk] = b
			} else {
				params[nk] = v
			}
		case "arp-all-targets":
			params[nk] = arpAllTargets(v)
		default:
			params[nk] = scalar(v)
		}
	}
	return params
}

// netplanBridgeParams is a bridge's parameters under netplan's names, the
// per-port ones as {port: value}; those only when netplan reads the file in
// one pass (netplanOrder), since a second applies them again and fails.
func netplanBridgeParams(br *netcfg.BridgeConfig, perPort bool) map[string]any {
	params := map[string]any{}
	for k, v := range bridgeParams(br) {
		switch k {
		case "stp":
			if b, ok := truthy(v); ok {
				params["stp"] = b
			}
		case "fd":
			params["forward-delay"] = scalar(v)
		case "hello":
			params["hello-time"] = scalar(v)
		case "maxage":
			params["max-age"] = scalar(v)
		case "ageing":
			params["ageing-time"] = scalar(v)
		case "priority":
			params["priority"] = scalar(v)
		case "pathcost", "portprio":
			if !perPort {
				continue
			}
			m := map[string]any{}
			for port, pv := range portValues(v) {
				m[port] = scalar(pv)
			}
			params[map[string]string{"pathcost": "path-cost", "portprio": "port-priority"}[k]] = m
		}
	}
	return params
}

// netplanSections are netplan's sections in cloud-init's order.
var netplanSections = []string{"ethernets", "bonds", "bridges", "vlans"}

// netplanSection is the section of an interface of kind k.
func netplanSection(k netcfg.Kind) string {
	switch k {
	case netcfg.Bond:
		return "bonds"
	case netcfg.Bridge:
		return "bridges"
	case netcfg.VLAN:
		return "vlans"
	}
	return "ethernets"
}

// netplanOrder is the order of the file's entries: the sections, and the
// names within each, such that every interface an entry names (a bond's or
// bridge's interfaces, a VLAN's link) comes before it. netplan resolves a
// name defined further down by parsing the whole file again, which applies
// a bridge's path-cost and port-priority a second time and refuses the
// file ("interface 'eth1' already has a path cost of 50"). Sections in
// cloud-init's order when that order does it, else in the first order that
// does; ok is false when none does (a VLAN on a bridge that has another
// VLAN as a port), and the order is then cloud-init's, names sorted.
func netplanOrder(c *netcfg.Config) (order []*netcfg.Interface, ok bool) {
	bySection := map[string][]*netcfg.Interface{}
	for i := range c.Interfaces {
		ifc := &c.Interfaces[i]
		sec := netplanSection(ifc.Kind)
		bySection[sec] = append(bySection[sec], ifc)
	}
	for _, secs := range bySection {
		sort.Slice(secs, func(i, j int) bool { return secs[i].Name < secs[j].Name })
	}
	for _, perm := range permutations(netplanSections) {
		if order, ok := netplanTryOrder(c, perm, bySection); ok {
			return order, true
		}
	}
	for _, sec := range netplanSections {
		order = append(order, bySection[sec]...)
	}
	return order, false
}

// netplanNames are the interfaces ifc's entry names.
func netplanNames(ifc *netcfg.Interface) []string {
	switch {
	case ifc.Bond != nil:
		return ifc.Bond.Members
	case ifc.Bridge != nil:
		return ifc.Bridge.Members
	case ifc.VLAN != nil:
		return []string{ifc.VLAN.Link}
	}
	return nil
}

// netplanTryOrder orders the entries with the sections in perm, each
// section's entries after those they name (else by name); ok is false when
// an entry names one of a later section, or the names make a cycle.
func netplanTryOrder(c *netcfg.Config, perm []string, bySection map[string][]*netcfg.Interface) (order []*netcfg.Interface, ok bool) {
	rank := map[string]int{}
	for i, sec := range perm {
		rank[sec] = i
	}
	placed := map[string]bool{}
	for _, sec := range perm {
		todo := bySection[sec]
		for len(todo) > 0 {
			progress := false
			var rest []*netcfg.Interface
			for _, ifc := range todo {
				ready := true
				for _, d := range netplanNames(ifc) {
					dep := c.Interface(d)
					if dep == nil || placed[d] {
						continue
					}
					if rank[netplanSection(dep.Kind)] != rank[sec] {
						return nil, false // named in a later section
					}
					ready = false
				}
				if ready && !progress {
					// One at a time, so the names stay sorted where they
					// can.
					order = append(order, ifc)
					placed[ifc.Name] = true
					progress = true
				} else {
					rest = append(rest, ifc)
				}
			}
			if !progress {
				return nil, false // a cycle
			}
			todo = rest
		}
	}
	return order, true
}

// permutations are the orders of l, l's own first.
func permutations(l []string) [][]string {
	if len(l) <= 1 {
		return [][]string{append([]string(nil), l...)}
	}
	var out [][]string
	for i := range l {
		rest := append(append([]string(nil), l[:i]...), l[i+1:]...)
		for _, p := range permutations(rest) {
			out = append(out, append([]string{l[i]}, p...))
		}
	}
	return out
}

// netplanEncode writes the file: a header, then the entries section by
// section in the order given, indented by four.
func netplanEncode(order []*netcfg.Interface, entries map[string]map[string]any) ([]byte, error) {
	var buf bytes.Buffer
	buf.WriteString("# Written by earlyinit from the instance's network configuration.\n")
	buf.WriteString("network:\n    version: 2\n")
	for i := 0; i < len(order); {
		kind := netplanSection(order[i].Kind)
		section := &yaml.Node{Kind: yaml.MappingNode}
		for ; i < len(order) && netplanSection(order[i].Kind) == kind; i++ {
			var v yaml.Node
			if err := v.Encode(entries[order[i].Name]); err != nil {
				return nil, fmt.Errorf("netplan: encode %s: %w", order[i].Name, err)
			}
			section.Content = append(section.Content, &yaml.Node{Kind: yaml.ScalarNode, Value: order[i].Name}, &v)
		}
		doc := &yaml.Node{Kind: yaml.MappingNode, Content: []*yaml.Node{{Kind: yaml.ScalarNode, Value: kind}, section}}
		var sb bytes.Buffer
		enc := yaml.NewEncoder(&sb)
		enc.SetIndent(4)
		if err := enc.Encode(doc); err != nil {
			return nil, fmt.Errorf("netplan: encode %s: %w", kind, err)
		}
		for _, line := range strings.SplitAfter(sb.String(), "\n") {
			if line != "" {
				buf.WriteString("    " + line)
			}
		}
	}
	return buf.Bytes(), nil
}

func netplanVirtual(c *netcfg.Config, ifc *netcfg.Interface, e map[string]any, gns, gsearch []string, anyDNS bool) {
	if ifc.MAC != "" {
		e["macaddress"] = ifc.MAC
	}
	netplanAddresses(c, ifc, e, gns, gsearch, anyDNS)
}

// enslaved tells whether ifc is a bond member or bridge port.
func enslaved(rel relations, ifc *netcfg.Interface) bool {
	_, bond := rel.bondOf[ifc.Name]
	_, bridge := rel.bridgeOf[ifc.Name]
	return bond || bridge
}

// netplanAddresses is cloud-init's _extract_addresses: addresses, DHCP,
// routes, MTU and DNS of one interface. Gateways become default routes
// (gateway4/gateway6 are deprecated in netplan). anyDNS gives the host-wide
// DNS to the interface even without static addresses
// (globalDNSEverywhere), unless it has DNS of its own.
func netplanAddresses(c *netcfg.Config, ifc *netcfg.Interface, e map[string]any, gns, gsearch []string, anyDNS bool) {
	var addrs []string
	for _, s := range ifc.Subnets {
		switch s.Type {
		case netcfg.DHCP4:
			e["dhcp4"] = true
		case netcfg.DHCP6, netcfg.SLAAC, netcfg.DHCPv6Stateless, netcfg.DHCPv6Stateful:
			// As cloud-init: netplan's dhcp6 lets networkd follow the
			// router advertisement's M and O flags.
			e["dhcp6"] = true
		case netcfg.Static:
			addrs = append(addrs, s.Address.String())
		}
	}
	if m := ipv4MTU(ifc); m != 0 {
		e["mtu"] = m
	}
	if m := ipv6MTU(ifc); m != 0 {
		e["ipv6-mtu"] = m
	}
	if len(addrs) > 0 {
		e["addresses"] = addrs
	}
	if routes := netplanRoutes(c, ifc); len(routes) > 0 {
		e["routes"] = routes
	}
	ns, search := ifaceDNS(ifc)
	if len(ns) == 0 && len(search) == 0 && (len(addrs) > 0 || anyDNS) {
		// cloud-init gives the host-wide DNS to every interface with
		// static addresses and no DNS of its own.
		ns, search = gns, gsearch
	}
	if len(ns) > 0 || len(search) > 0 {
		n := map[string]any{}
		if len(ns) > 0 {
			n["addresses"] = ns
		}
		if len(search) > 0 {
			n["search"] = search
		}
		e["nameservers"] = n
	}
	o4, o6, _ := netplanOverridePair(ifc)
	if len(o4) > 0 {
		e["dhcp4-overrides"] = o4
	}
	if len(o6) > 0 {
		e["dhcp6-overrides"] = o6
	}
	if ifc.AcceptRA != nil {
		e["accept-ra"] = *ifc.AcceptRA
	}
	if ifc.Optional || ifc.Control == "hotplug" {
		e["optional"] = true
	}
	if ifc.Control == "manual" {
		e["activation-mode"] = "manual"
	}
	if len(ifc.RoutingPolicy) > 0 {
		var rules []any
		for _, r := range ifc.RoutingPolicy {
			m := map[string]any{}
			if r.From.IsValid() {
				m["from"] = r.From.String()
			}
			if r.To.IsValid() {
				m["to"] = r.To.String()
			}
			for k, v := range map[string]int{"table": r.Table, "priority": r.Priority, "mark": r.Mark, "type-of-service": r.TOS} {
				if v != 0 {
					m[k] = v
				}
			}
			rules = append(rules, m)
		}
		e["routing-policy"] = rules
	}
}

// netplanRoutes is the interface's routes: per subnet its gateway as a
// default route and its routes, then the global routes through it.
func netplanRoutes(c *netcfg.Config, ifc *netcfg.Interface) []any {
	var routes []any
	// A gateway on an interface without static addresses is on-link, as
	// networkd takes it (with a warning) when netplan does not say so.
	onLink := !hasStatic(ifc)
	route := func(rt netcfg.Route) {
		r := map[string]any{"to": rt.To.String()}
		if rt.Via.IsValid() {
			r["via"] = rt.Via.String()
			if onLink {
				r["on-link"] = true
			}
		}
		for k, v := range map[string]int{"metric": rt.Metric, "table": rt.Table, "mtu": rt.MTU} {
			if v != 0 {
				r[k] = v
			}
		}
		if scope, _ := routeScope(rt); scope != "" {
			r["scope"] = scope
		}
		routes = append(routes, r)
	}
	for _, s := range ifc.Subnets {
		if s.Gateway.IsValid() {
			to := netip.MustParsePrefix("0.0.0.0/0")
			if s.Gateway.Is6() {
				to = netip.MustParsePrefix("::/0")
			}
			route(netcfg.Route{To: to, Via: s.Gateway, Metric: s.Metric})
		}
		for _, r := range s.Routes {
			route(r)
		}
	}
	for _, r := range globalRoutesFor(c, ifc) {
		route(r)
	}
	return routes
}

// netplanOverridePair is the interface's dhcp4-overrides and
// dhcp6-overrides. With DHCP of both families on, netplan's networkd
// backend takes only equal ones ("networkd requires that route-metric has
// the same value in both dhcp4_overrides and dhcp6_overrides": networkd
// has one DHCP client setting for both) and then uses dhcp4's: so do we,
// and differ names the dhcp6 keys whose value that changes.
func netplanOverridePair(ifc *netcfg.Interface) (o4, o6 map[string]any, differ []string) {
	o4 = netplanDHCPOverrides(ifc, netcfg.DHCP4, ifc.DHCP4Overrides)
	o6 = netplanDHCPOverrides(ifc, netcfg.DHCP6, ifc.DHCP6Overrides)
	var dhcp4, dhcp6 bool
	for _, s := range ifc.Subnets {
		switch s.Type {
		case netcfg.DHCP4:
			dhcp4 = true
		case netcfg.DHCP6, netcfg.SLAAC, netcfg.DHCPv6Stateless, netcfg.DHCPv6Stateful:
			dhcp6 = true
		}
	}
	if !dhcp4 || !dhcp6 {
		return o4, o6, nil
	}
	keys := map[string]string{}
	for k := range o4 {
		keys[k] = k
	}
	for k := range o6 {
		keys[k] = k
	}
	for _, k := range sortedKeys(keys) {
		if fmt.Sprint(o4[k]) != fmt.Sprint(o6[k]) {
			differ = append(differ, k)
		}
	}
	if len(differ) == 0 {
		return o4, o6, nil
	}
	o6 = map[string]any{}
	for k, v := range o4 {
		o6[k] = v
	}
	return o4, o6, differ
}

// netplanDHCPOverrides gives back dhcp4-overrides or dhcp6-overrides, with
// the DHCP subnet's metric as route-metric.
func netplanDHCPOverrides(ifc *netcfg.Interface, typ netcfg.SubnetType, o *netcfg.DHCPOverrides) map[string]any {
	m := map[string]any{}
	for _, s := range ifc.Subnets {
		if s.Type == typ && s.Metric != 0 {
			m["route-metric"] = s.Metric
			break
		}
	}
	if o == nil {
		return m
	}
	for _, k := range netcfg.DHCPOverrideFlags {
		if v := *o.Flag(k); v != nil {
			m[k] = *v
		}
	}
	switch o.UseDomains {
	case "true", "false":
		m["use-domains"] = o.UseDomains == "true"
	case "route":
		m["use-domains"] = "route"
	}
	if o.Hostname != "" {
		m["hostname"] = o.Hostname
	}
	return m
}

func viaString(r netcfg.Route) string {
	if r.Via.IsValid() {
		return r.Via.String()
	}
	return ""
}

func sortedCopy(in []string) []string {
	out := append([]string(nil), in...)
	sort.Strings(out)
	return out
}
