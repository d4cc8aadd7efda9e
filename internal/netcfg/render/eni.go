package render

import (
	"fmt"
	"sort"
	"strings"

	"github.com/earlyinit/earlyinit/internal/netcfg"
)

// ENIPath is the file the eni renderer writes (cloud-init writes
// /etc/network/interfaces.d/50-cloud-init).
const ENIPath = "/etc/network/interfaces.d/50-earlyinit.cfg"

type eni struct{}

// ENI renders one ifupdown file in /etc/network/interfaces.d, following
// cloud-init's eni.py. It relies on /etc/network/interfaces sourcing that
// directory, as Debian's does; ENIInterfaces writes one that does, for a
// caller that wants to make sure.
func ENI() Renderer { return eni{} }

func (eni) Name() string { return "eni" }

// ENIInterfaces returns an /etc/network/interfaces that only sources
// interfaces.d (our file there defines lo). Render it only when the root's
// own file does not source the directory: it replaces that file.
func ENIInterfaces() File {
	return File{
		Path: "/etc/network/interfaces",
		Data: []byte("# Written by earlyinit: the configuration is in interfaces.d.\nsource /etc/network/interfaces.d/*\n"),
		Mode: 0o644,
	}
}

func eniKindOrder(k netcfg.Kind) int {
	switch k {
	case netcfg.Physical:
		return 1
	case netcfg.Infiniband:
		return 2
	case netcfg.Bond:
		return 3
	case netcfg.Bridge:
		return 4
	case netcfg.VLAN:
		return 5
	}
	return 6
}

func (eni) Render(c *netcfg.Config) ([]File, error) {
	if c.Disabled {
		return nil, nil
	}
	c = expandGlobs(c)
	if err := check(c); err != nil {
		return nil, fmt.Errorf("eni: %w", err)
	}
	rel := relate(c)
	var sections [][]string

	// lo carries the host-wide DNS: it is the one interface always up.
	lo := []string{"auto lo", "iface lo inet loopback"}
	gns, gsearch := globalDNS(c)
	if len(gns) > 0 {
		lo = append(lo, "    dns-nameservers "+strings.Join(gns, " "))
	}
	if len(gsearch) > 0 {
		lo = append(lo, "    dns-search "+strings.Join(gsearch, " "))
	}
	sections = append(sections, lo)

	order := make([]*netcfg.Interface, 0, len(c.Interfaces))
	for i := range c.Interfaces {
		order = append(order, &c.Interfaces[i])
	}
	// Physical interfaces first, then bonds, bridges and VLANs: ifenslave
	// needs the members declared before the bond.
	sort.SliceStable(order, func(i, j int) bool {
		a, b := order[i], order[j]
		if eniKindOrder(a.Kind) != eniKindOrder(b.Kind) {
			return eniKindOrder(a.Kind) < eniKindOrder(b.Kind)
		}
		return a.Name < b.Name
	})
	for _, ifc := range order {
		sections = append(sections, eniIface(c, ifc, rel)...)
	}
	text, err := eniText(sections)
	if err != nil {
		return nil, fmt.Errorf("eni: %w", err)
	}
	return []File{{Path: ENIPath, Data: []byte(text), Mode: 0o644}}, nil
}

// eniText joins the stanzas. Every line is built whole before this, so a
// value with a control character shows as a line holding one: that would
// add a line (an option, a post-up command) and is an error instead.
func eniText(sections [][]string) (string, error) {
	var b strings.Builder
	b.WriteString("# Written by earlyinit from the instance's network configuration.\n")
	for i, s := range sections {
		for _, l := range s {
			if hasControl(l) {
				return "", fmt.Errorf("line %q has a control character", l)
			}
		}
		if i > 0 {
			b.WriteString("\n")
		}
		b.WriteString(strings.Join(s, "\n") + "\n")
	}
	return b.String(), nil
}

// eniAttrs are the interface-level options, written once, in the first
// stanza (cloud-init's _iface_add_attrs).
func eniAttrs(c *netcfg.Config, ifc *netcfg.Interface, rel relations, subnetMTU bool) []string {
	var a []string
	opt := func(k, v string) { a = append(a, "    "+k+" "+v) }
	if ifc.MTU != 0 && !subnetMTU {
		opt("mtu", fmt.Sprint(ifc.MTU))
	}
	if virtual(ifc) && ifc.MAC != "" {
		opt("hwaddress", ifc.MAC)
	}
	if ifc.WakeOnLAN {
		opt("ethernet-wol", "g") // ethtool's ifupdown hook
	}
	bondOpts := func(b *netcfg.BondConfig) {
		p := bondParams(b)
		for _, k := range sortedKeys(p) {
			v := p[k]
			if k == "all-slaves-active" {
				v = kernelBool(v)
			}
			opt("bond-"+k, v)
		}
	}
	if b, ok := rel.bondOf[ifc.Name]; ok {
		opt("bond-master", b)
		if bond := c.Interface(b); bond != nil {
			bondOpts(bond.Bond) // cloud-init repeats the bond's options on members
		}
	}
	switch ifc.Kind {
	case netcfg.Bond:
		bondOpts(ifc.Bond)
		opt("bond-slaves", "none")
	case netcfg.Bridge:
		ports := strings.Join(ifc.Bridge.Members, " ")
		if ports == "" {
			ports = "none" // ifupdown refuses an option without a value
		}
		opt("bridge_ports", ports)
		p := bridgeParams(ifc.Bridge)
		for _, k := range sortedKeys(p) {
			v := p[k]
			switch k {
			case "stp":
				if t, ok := truthy(v); ok {
					v = map[bool]string{true: "on", false: "off"}[t]
				}
				opt("bridge_stp", v)
			case "priority":
				opt("bridge_bridgeprio", v)
			case "pathcost", "portprio":
				pv := portValues(v)
				for _, port := range sortedKeys(pv) {
					opt("bridge_"+k, port+" "+pv[port])
				}
			default:
				opt("bridge_"+k, v)
			}
		}
	case netcfg.VLAN:
		opt("vlan-raw-device", ifc.VLAN.Link)
		opt("vlan_id", fmt.Sprint(ifc.VLAN.ID))
	}
	sort.Strings(a)
	return a
}

// eniIface is ifc's stanzas: one per subnet, the first "auto" and holding
// the interface-level options and global routes, or one manual stanza.
func eniIface(c *netcfg.Config, ifc *netcfg.Interface, rel relations) [][]string {
	if len(ifc.Subnets) == 0 {
		var lines []string
		// ifenslave wants bond members and bonds auto; bridge ports are
		// brought up by the bridge.
		if eniManualRaised(ifc, rel) && ifc.Control == "" {
			lines = append(lines, "auto "+ifc.Name)
		} else if ifc.Control != "" {
			lines = append(lines, eniControl(ifc))
		}
		lines = append(lines, "iface "+ifc.Name+" inet manual")
		attrs := eniAttrs(c, ifc, rel, false)
		// The interface's own DNS goes on its stanza, where resolvconf
		// takes it when the interface is brought up (Lost says when
		// ifupdown never brings it up).
		ns, search := ifaceDNS(ifc)
		if len(ns) > 0 {
			attrs = append(attrs, "    dns-nameservers "+strings.Join(ns, " "))
		}
		if len(search) > 0 {
			attrs = append(attrs, "    dns-search "+strings.Join(search, " "))
		}
		sort.Strings(attrs)
		lines = append(lines, attrs...)
		return [][]string{lines}
	}
	var out [][]string
	globals := globalRoutesFor(c, ifc)
	for i, s := range ifc.Subnets {
		inet := "inet"
		if s.IPv6() {
			inet = "inet6"
		}
		mode, opts := eniSubnetOpts(ifc, s, i == 0)
		// Only the first stanza is "auto": older ifupdown complains about
		// repeated auto lines.
		control := eniControl(ifc)
		if i > 0 {
			control = "# control-alias " + ifc.Name
		}
		lines := []string{control, fmt.Sprintf("iface %s %s %s", ifc.Name, inet, mode)}
		lines = append(lines, opts...)
		if i == 0 {
			lines = append(lines, eniAttrs(c, ifc, rel, s.MTU != 0 && !s.IPv6())...)
		}
		routes := s.Routes
		if i == 0 {
			routes = append(append([]netcfg.Route(nil), routes...), globals...)
		}
		for _, r := range routes {
			lines = append(lines, eniRoute(r, ifc.Name)...)
		}
		if i == 0 {
			for _, r := range ifc.RoutingPolicy {
				lines = append(lines, eniRule(r)...)
			}
		}
		out = append(out, lines)
	}
	return out
}

// eniManualRaised tells whether ifup brings up ifc, an interface without
// subnets (an "inet manual" stanza): bond members and bonds are "auto" unless
// their control says otherwise, hotplug ones "allow-hotplug"; the others,
// bridge ports included (bridge-utils raises the link, not its stanza), are
// never brought up.
func eniManualRaised(ifc *netcfg.Interface, rel relations) bool {
	_, member := rel.bondOf[ifc.Name]
	return (member || ifc.Kind == netcfg.Bond) && ifc.Control == "" || ifc.Control == "hotplug"
}

// eniControl is the line that says when ifc comes up: "auto", "allow-hotplug",
// or for a manual interface a comment (ifup brings it up only when asked), as
// cloud-init writes them.
func eniControl(ifc *netcfg.Interface) string {
	switch ifc.Control {
	case "manual":
		return "# control-manual " + ifc.Name
	case "hotplug":
		return "allow-hotplug " + ifc.Name
	}
	return "auto " + ifc.Name
}

// eniRule renders a policy routing rule as post-up/pre-down ip rule
// commands.
func eniRule(r netcfg.Rule) []string {
	cmd := "ip rule"
	if r.From.Addr().Is6() || r.To.Addr().Is6() {
		cmd = "ip -6 rule"
	}
	spec := ruleSpec(r)
	return []string{
		"    post-up " + cmd + " add " + spec + " || true",
		"    pre-down " + cmd + " del " + spec + " || true",
	}
}

// ruleSpec is a rule in ip-rule(8) syntax: "from 10.0.0.0/24 table 100
// priority 5".
func ruleSpec(r netcfg.Rule) string {
	var f []string
	if r.From.IsValid() {
		f = append(f, "from", r.From.String())
	}
	if r.To.IsValid() {
		f = append(f, "to", r.To.String())
	}
	if r.TOS != 0 {
		f = append(f, "tos", fmt.Sprint(r.TOS))
	}
	if r.Mark != 0 {
		f = append(f, "fwmark", fmt.Sprint(r.Mark))
	}
	if r.Table != 0 {
		f = append(f, "table", fmt.Sprint(r.Table))
	}
	if r.Priority != 0 {
		f = append(f, "priority", fmt.Sprint(r.Priority))
	}
	return strings.Join(f, " ")
}

// routeAttrs are a route's table, scope and MTU in ip-route(8) syntax
// (" table 5 scope link mtu 1400"), "" when it has none.
func routeAttrs(r netcfg.Route) string {
	var b strings.Builder
	if r.Table != 0 {
		fmt.Fprintf(&b, " table %d", r.Table)
	}
	if scope, _ := routeScope(r); scope != "" {
		b.WriteString(" scope " + scope)
	}
	if r.MTU != 0 {
		fmt.Fprintf(&b, " mtu %d", r.MTU)
	}
	return b.String()
}

// eniSubnetOpts is subnet s's method and its options, sorted; the first
// subnet's also carry the interface's own DNS.
func eniSubnetOpts(ifc *netcfg.Interface, s netcfg.Subnet, first bool) (string, []string) {
	var opts []string
	opt := func(k, v string) { opts = append(opts, "    "+k+" "+v) }
	mode := "manual"
	switch s.Type {
	case netcfg.DHCP4, netcfg.DHCP6, netcfg.DHCPv6Stateful:
		mode = "dhcp"
		if s.IPv6() && ifc.AcceptRA != nil {
			opt("accept_ra", map[bool]string{true: "1", false: "0"}[*ifc.AcceptRA])
		}
	case netcfg.DHCPv6Stateless:
		mode = "auto"
		opt("dhcp", "1")
	case netcfg.SLAAC:
		mode = "auto"
		opt("dhcp", "0")
	case netcfg.Static:
		mode = "static"
		opt("address", s.Address.String())
		if s.Broadcast.IsValid() {
			opt("broadcast", s.Broadcast.String())
		}
		if s.IPv6() && ifc.AcceptRA != nil {
			opt("accept_ra", map[bool]string{true: "1", false: "0"}[*ifc.AcceptRA])
		}
	}
	if s.Gateway.IsValid() {
		opt("gateway", s.Gateway.String())
	}
	if s.MTU != 0 {
		opt("mtu", fmt.Sprint(s.MTU))
	}
	if s.Metric != 0 && !s.IPv6() { // ifupdown has metric for inet only
		opt("metric", fmt.Sprint(s.Metric))
	}
	if s.Type == netcfg.DHCP4 && ifc.DHCP4Overrides != nil && ifc.DHCP4Overrides.Hostname != "" {
		opt("hostname", ifc.DHCP4Overrides.Hostname)
	}
	ns, search := eniSubnetDNS(ifc, s, first)
	if len(ns) > 0 {
		opt("dns-nameservers", strings.Join(ns, " "))
	}
	if len(search) > 0 {
		opt("dns-search", strings.Join(search, " "))
	}
	sort.Strings(opts)
	return mode, opts
}

// eniSubnetDNS is subnet s's nameservers and search domains, deduplicated;
// the first subnet's also carry the interface's own.
func eniSubnetDNS(ifc *netcfg.Interface, s netcfg.Subnet, first bool) (ns, search []string) {
	for _, n := range s.DNS.Nameservers {
		ns = append(ns, n.String())
	}
	search = s.DNS.Search
	if first {
		// The interface's own DNS (cloud-init writes it as a broken
		// "dns {...}" line) joins the first stanza.
		for _, n := range ifc.DNS.Nameservers {
			ns = append(ns, n.String())
		}
		search = append(append([]string(nil), search...), ifc.DNS.Search...)
	}
	return dedupe(ns), dedupe(search)
}

// eniRoute renders a route as post-up/pre-down commands. cloud-init uses
// net-tools' route(8); we use ip(8), which ifupdown itself depends on while
// Debian no longer installs net-tools.
func eniRoute(r netcfg.Route, dev string) []string {
	cmd := "ip route"
	if r.To.Addr().Is6() {
		cmd = "ip -6 route"
	}
	spec := r.To.String()
	if isDefault(r) {
		spec = "default"
	}
	if r.Via.IsValid() {
		spec += " via " + r.Via.String()
	}
	spec += " dev " + dev
	if r.Metric != 0 {
		spec += fmt.Sprintf(" metric %d", r.Metric)
	}
	spec += routeAttrs(r)
	return []string{
		"    post-up " + cmd + " add " + spec + " || true",
		"    pre-down " + cmd + " del " + spec + " || true",
	}
}
