package render

import (
	"fmt"
	"net/netip"
	"strings"

	"github.com/earlyinit/earlyinit/internal/netcfg"
)

// SysconfigDir is where the sysconfig renderer writes ifcfg and route files.
const SysconfigDir = "/etc/sysconfig/network-scripts"

type sysconfig struct{}

// Sysconfig renders RHEL initscripts files (cloud-init's sysconfig.py, rhel
// flavour): ifcfg-<name>, route-<name> and route6-<name>, plus
// /etc/sysconfig/network and, for host-wide DNS, /etc/resolv.conf and the
// NetworkManager drop-in that keeps NM from rewriting it.
func Sysconfig() Renderer { return sysconfig{} }

func (sysconfig) Name() string { return "sysconfig" }

const sysconfigHeader = "# Created by earlyinit on instance boot automatically, do not edit.\n#\n"

// kv is one ifcfg file: keys are written sorted, as cloud-init does.
type kv map[string]string

// render writes the file. Values are quoted for the shell that sources
// it (initscripts' ifup does `. ifcfg-<name>`); a control character, which
// no quoting keeps on one line for the line-based ifcfg readers
// (NetworkManager's ifcfg-rh), is an error naming the key.
func (m kv) render() (string, error) {
	var b strings.Builder
	b.WriteString(sysconfigHeader)
	for _, k := range sortedKeys(m) {
		if hasControl(m[k]) {
			return "", fmt.Errorf("%s: value %q has a control character", k, m[k])
		}
		fmt.Fprintf(&b, "%s=%s\n", k, quoteValue(m[k]))
	}
	return b.String(), nil
}

// hasControl reports whether s has an ASCII control character.
func hasControl(s string) bool {
	return strings.IndexFunc(s, func(r rune) bool { return r < 0x20 || r == 0x7f }) >= 0
}

// shellSafe are the bytes a value may have unquoted: nothing in them means
// anything to sh in a word.
func shellSafe(b byte) bool {
	return b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' || b >= '0' && b <= '9' || strings.IndexByte("_.,:/@%+=-", b) >= 0
}

// quoteValue quotes v for a shell assignment so that it is one word, taken
// literally: bare when every byte is safe, else in double quotes (as
// cloud-init writes "mode=... miimon=100") with \, ", $ and ` escaped, so
// $(...), backticks, quotes and ; are inert.
func quoteValue(v string) string {
	safe := v != ""
	for i := 0; i < len(v) && safe; i++ {
		safe = shellSafe(v[i])
	}
	if safe {
		return v
	}
	var b strings.Builder
	b.WriteByte('"')
	for i := 0; i < len(v); i++ {
		if strings.IndexByte("\\\"$`", v[i]) >= 0 {
			b.WriteByte('\\')
		}
		b.WriteByte(v[i])
	}
	b.WriteByte('"')
	return b.String()
}

// sysconfigBondOpts lists BONDING_OPTS parameters in cloud-init's order.
func sysconfigBondOpts() []string {
	return []string{"mode", "xmit-hash-policy", "miimon", "min-links", "arp-interval", "arp-ip-target",
		"arp-validate", "ad-select", "num-grat-arp", "downdelay", "updelay", "lacp-rate",
		"fail-over-mac", "primary", "primary-reselect",
		"all-slaves-active", "arp-all-targets", "lp-interval", "packets-per-slave", "resend-igmp"}
}

type sysRoutes struct {
	v4 []netcfg.Route
	v6 []netcfg.Route
}

// sysconfigRuleFiles returns rule-<name> and rule6-<name>: ifc's policy
// routing rules, one ip-rule(8) argument list a line, as initscripts'
// ifup-routes reads them.
func sysconfigRuleFiles(ifc *netcfg.Interface) []File {
	var v4, v6 strings.Builder
	for _, r := range ifc.RoutingPolicy {
		b := &v4
		if r.From.Addr().Is6() || r.To.Addr().Is6() {
			b = &v6
		}
		if b.Len() == 0 {
			b.WriteString(sysconfigHeader)
		}
		b.WriteString(ruleSpec(r) + "\n")
	}
	var files []File
	if v4.Len() > 0 {
		files = append(files, File{Path: SysconfigDir + "/rule-" + ifc.Name, Data: []byte(v4.String()), Mode: 0o644})
	}
	if v6.Len() > 0 {
		files = append(files, File{Path: SysconfigDir + "/rule6-" + ifc.Name, Data: []byte(v6.String()), Mode: 0o644})
	}
	return files
}

// Render writes ifcfg-<name> and its route files for every interface, then
// the host-wide files.
func (sysconfig) Render(c *netcfg.Config) ([]File, error) {
	if c.Disabled {
		return nil, nil
	}
	c = expandGlobs(c)
	if err := check(c); err != nil {
		return nil, fmt.Errorf("sysconfig: %w", err)
	}
	rel := relate(c)
	hasDefault4 := hasDefaultRoute4(c)
	var files []File
	useIPv6 := false
	for i := range c.Interfaces {
		ifc := &c.Interfaces[i]
		if enslaved(rel, ifc) {
			// network-scripts' ifup-eth enslaves a bond member or
			// bridge port and exits (no addresses, DHCP, route files,
			// DNS), and NetworkManager gives a port connection no IP
			// settings: Lost names what goes.
			ifc = asBondMember(ifc)
		}
		cfg := sysconfigIfcfg(ifc, rel)
		routes, err := sysconfigSubnets(c, ifc, cfg, hasDefault4)
		if err != nil {
			return nil, fmt.Errorf("sysconfig: %w", err)
		}
		for _, s := range ifc.Subnets {
			if s.Type == netcfg.DHCP6 || (s.Type == netcfg.Static && s.IPv6()) {
				useIPv6 = true
			}
		}
		data, err := cfg.render()
		if err != nil {
			return nil, fmt.Errorf("sysconfig: ifcfg-%s: %w", ifc.Name, err)
		}
		files = append(files, File{Path: SysconfigDir + "/ifcfg-" + ifc.Name, Data: []byte(data), Mode: 0o644})
		files = append(files, sysconfigRouteFiles(ifc.Name, routes)...)
		files = append(files, sysconfigRuleFiles(ifc)...)
	}
	files = append(files, sysconfigHostFiles(c, useIPv6)...)
	return sortFiles(files), nil
}

// sysconfigIfcfg returns the ifcfg keys of ifc that do not depend on its
// subnets: its kind's, its place in a bond or bridge, MTU and accept-ra.
func sysconfigIfcfg(ifc *netcfg.Interface, rel relations) kv {
	cfg := kv{"DEVICE": ifc.Name, "ONBOOT": "yes", "USERCTL": "no", "NM_CONTROLLED": "no", "BOOTPROTO": "none"}
	switch ifc.Kind {
	case netcfg.Physical, netcfg.Infiniband:
		cfg["TYPE"] = map[netcfg.Kind]string{netcfg.Physical: "Ethernet", netcfg.Infiniband: "InfiniBand"}[ifc.Kind]
		if ifc.MAC != "" {
			cfg["HWADDR"] = ifc.MAC
		}
		if ifc.WakeOnLAN {
			cfg["ETHTOOL_OPTS"] = "wol g"
		}
	case netcfg.Bond:
		sysconfigBond(ifc, cfg)
	case netcfg.VLAN:
		// TYPE=Vlan is left out, as cloud-init does: initscripts
		// recognise VLANs by VLAN=yes.
		cfg["VLAN"] = "yes"
		cfg["PHYSDEV"] = ifc.VLAN.Link
		if ifc.MAC != "" {
			cfg["MACADDR"] = ifc.MAC
		}
	case netcfg.Bridge:
		sysconfigBridge(ifc, cfg)
	}
	if b, ok := rel.bondOf[ifc.Name]; ok {
		cfg["MASTER"] = b
		cfg["SLAVE"] = "yes"
	}
	if br, ok := rel.bridgeOf[ifc.Name]; ok {
		cfg["BRIDGE"] = br
	}
	if ifc.MTU != 0 {
		cfg["MTU"] = fmt.Sprint(ifc.MTU)
	}
	if ifc.AcceptRA != nil {
		cfg["IPV6_FORCE_ACCEPT_RA"] = yesNo(*ifc.AcceptRA)
	}
	switch ifc.Control {
	case "manual":
		cfg["ONBOOT"] = "no"
	case "hotplug":
		cfg["HOTPLUG"] = "yes"
	}
	return cfg
}

// sysconfigBond sets a bond's keys: BONDING_OPTS in cloud-init's order,
// its MAC. Its members name it (MASTER=, SLAVE=yes), which is how
// network-scripts and NetworkManager's ifcfg-rh enslave them: cloud-init's
// BONDING_SLAVE<n> keys are SUSE's, read by neither.
func sysconfigBond(ifc *netcfg.Interface, cfg kv) {
	cfg["TYPE"] = "Bond"
	cfg["BONDING_MASTER"] = "yes"
	p := bondParams(ifc.Bond)
	var opts []string
	for _, k := range sysconfigBondOpts() {
		if v, ok := p[k]; ok {
			if k == "all-slaves-active" {
				v = kernelBool(v)
			}
			opts = append(opts, strings.ReplaceAll(k, "-", "_")+"="+v)
		}
	}
	if len(opts) > 0 {
		cfg["BONDING_OPTS"] = strings.Join(opts, " ")
	}
	if ifc.MAC != "" {
		cfg["MACADDR"] = ifc.MAC
	}
}

// sysconfigBridge sets a bridge's keys: STP, AGEING, PRIO, DELAY, its MAC.
func sysconfigBridge(ifc *netcfg.Interface, cfg kv) {
	cfg["TYPE"] = "Bridge"
	p := bridgeParams(ifc.Bridge)
	if v, ok := truthy(p["stp"]); ok {
		cfg["STP"] = yesNo(v)
	}
	if v, ok := p["ageing"]; ok {
		cfg["AGEING"] = v
	}
	if v, ok := p["priority"]; ok {
		cfg["PRIO"] = v
	}
	if v, ok := p["fd"]; ok {
		cfg["DELAY"] = v
	}
	if ifc.MAC != "" {
		cfg["MACADDR"] = ifc.MAC
	}
}

// sysconfigRouteFiles returns route-<name> (initscripts' ADDRESS<n> form)
// and route6-<name> (ip route lines) for the routes that have any.
func sysconfigRouteFiles(name string, routes sysRoutes) []File {
	var files []File
	ipForm := false
	for _, r := range routes.v4 {
		ipForm = ipForm || routeAttrs(r) != "" || r.Metric != 0
	}
	if len(routes.v4) > 0 && ipForm {
		// The ADDRESS<n> form has no table, scope or MTU, and
		// network-scripts' ifup-routes reads only its ADDRESS<n>,
		// NETMASK<n> and GATEWAY<n> (cloud-init's METRIC<n> is read by
		// NetworkManager alone): the whole file is then ip-route(8)
		// argument lines, which both read.
		files = append(files, sysconfigIPRoutes("route-", name, routes.v4))
	} else if len(routes.v4) > 0 {
		var b strings.Builder
		b.WriteString(sysconfigHeader)
		for j, r := range routes.v4 {
			fmt.Fprintf(&b, "ADDRESS%d=%s\n", j, r.To.Addr())
			if r.Via.IsValid() {
				fmt.Fprintf(&b, "GATEWAY%d=%s\n", j, r.Via)
			}
			fmt.Fprintf(&b, "NETMASK%d=%s\n", j, prefixMask(r.To.Bits()))
		}
		files = append(files, File{Path: SysconfigDir + "/route-" + name, Data: []byte(b.String()), Mode: 0o644})
	}
	if len(routes.v6) > 0 {
		files = append(files, sysconfigIPRoutes("route6-", name, routes.v6))
	}
	return files
}

// sysconfigIPRoutes is the file prefix+name of routes as ip-route(8)
// argument lines ("10.0.0.0/8 via 192.0.2.1 metric 5 dev eth0 table 7").
func sysconfigIPRoutes(prefix, name string, routes []netcfg.Route) File {
	var b strings.Builder
	b.WriteString(sysconfigHeader)
	for _, r := range routes {
		line := r.To.String()
		if r.Via.IsValid() {
			line += " via " + r.Via.String()
		}
		if r.Metric != 0 {
			line += fmt.Sprintf(" metric %d", r.Metric)
		}
		fmt.Fprintf(&b, "%s dev %s%s\n", line, name, routeAttrs(r))
	}
	return File{Path: SysconfigDir + "/" + prefix + name, Data: []byte(b.String()), Mode: 0o644}
}

// sysconfigHostFiles returns the host-wide files: /etc/sysconfig/network
// and, for global DNS, /etc/resolv.conf and the NetworkManager drop-in that
// keeps it.
func sysconfigHostFiles(c *netcfg.Config, useIPv6 bool) []File {
	network := sysconfigHeader + "NETWORKING=yes\n"
	if useIPv6 {
		// cloud-init also writes NETWORKING_IPV6=yes, which initscripts
		// stopped reading (and documenting) long before CentOS 7 and
		// NetworkManager never read.
		network += "IPV6_AUTOCONF=no\n"
	}
	files := []File{{Path: "/etc/sysconfig/network", Data: []byte(network), Mode: 0o644}}
	gns, gsearch := globalDNS(c)
	if len(gns) > 0 || len(gsearch) > 0 {
		var b strings.Builder
		b.WriteString("; Created by earlyinit on instance boot automatically, do not edit.\n;\n")
		for _, n := range gns {
			fmt.Fprintf(&b, "nameserver %s\n", n)
		}
		if len(gsearch) > 0 {
			fmt.Fprintf(&b, "search %s\n", strings.Join(gsearch, " "))
		}
		files = append(files, File{Path: "/etc/resolv.conf", Data: []byte(b.String()), Mode: 0o644})
	}
	if len(gns) > 0 {
		files = append(files, File{
			Path: "/etc/NetworkManager/conf.d/99-cloud-init.conf",
			Data: []byte(sysconfigHeader + "[main]\ndns = none\n"),
			Mode: 0o644,
		})
	}
	return files
}

// sysconfigSubnets is cloud-init's _render_subnets and _render_subnet_routes
// for the rhel flavour. It returns the routes for route-<name>/route6-<name>.
func sysconfigSubnets(c *netcfg.Config, ifc *netcfg.Interface, cfg kv, hasDefault4 bool) (sysRoutes, error) {
	for _, s := range ifc.Subnets {
		sysconfigSubnetKeys(ifc, s, cfg)
	}
	sysconfigAddresses(ifc, cfg)
	if _, ok := cfg["DNS1"]; !ok {
		sysconfigNameservers(cfg, ifc.DNS.Nameservers)
	}
	if _, ok := cfg["DOMAIN"]; !ok && len(ifc.DNS.Search) > 0 {
		cfg["DOMAIN"] = strings.Join(ifc.DNS.Search, " ")
	}
	routes, err := sysconfigRoutes(c, ifc, cfg)
	// A DHCPv4 lease's router is not the default route when the config
	// gives an IPv4 one elsewhere: cloud-init's
	// DHCLIENT_SET_DEFAULT_ROUTE=no is SUSE's key, which neither RHEL
	// reader knows; dhclient-script and NetworkManager (never-default)
	// read DEFROUTE=no, which is IPv4's only (a DEFROUTE=yes an IPv6
	// gateway set means nothing to either).
	if hasDefault4 && cfg["GATEWAY"] == "" && hasSubnet(ifc, netcfg.DHCP4) {
		cfg["DEFROUTE"] = "no"
	}
	return routes, err
}

// hasSubnet tells whether ifc has a subnet of type t.
func hasSubnet(ifc *netcfg.Interface, t netcfg.SubnetType) bool {
	for _, s := range ifc.Subnets {
		if s.Type == t {
			return true
		}
	}
	return false
}

// sysconfigSubnetKeys sets the keys that subnet s's type and metric imply:
// BOOTPROTO, the IPv6 switches, the MTU of a static subnet.
func sysconfigSubnetKeys(ifc *netcfg.Interface, s netcfg.Subnet, cfg kv) {
	// A subnet's metric, static or DHCP, is METRIC, as in cloud-init,
	// but only for IPv4: cloud-init lets an IPv6 subnet overwrite it;
	// here that goes to NetworkManager's IPV6_ROUTE_METRIC.
	if s.Metric != 0 && s.IPv6() {
		cfg["IPV6_ROUTE_METRIC"] = fmt.Sprint(s.Metric)
	} else if s.Metric != 0 {
		cfg["METRIC"] = fmt.Sprint(s.Metric)
	}
	mtuKey := "MTU"
	switch s.Type {
	case netcfg.DHCPv6Stateful:
		cfg["BOOTPROTO"] = "dhcp"
		cfg["DHCPV6C"] = "yes"
		cfg["IPV6INIT"] = "yes"
		cfg["IPV6_AUTOCONF"] = "no"
	case netcfg.DHCP6:
		cfg["IPV6INIT"] = "yes"
		cfg["DHCPV6C"] = "yes"
	case netcfg.DHCPv6Stateless:
		cfg["IPV6INIT"] = "yes"
		cfg["IPV6_AUTOCONF"] = "yes"
		cfg["DHCPV6C"] = "yes"
		cfg["DHCPV6C_OPTIONS"] = "-S"
	case netcfg.SLAAC:
		cfg["IPV6INIT"] = "yes"
		cfg["IPV6_AUTOCONF"] = "yes"
	case netcfg.DHCP4:
		cfg["BOOTPROTO"] = "dhcp"
		if o := ifc.DHCP4Overrides; o != nil {
			sysconfigDHCP4Overrides(o, cfg)
		}
	case netcfg.Static:
		if s.IPv6() {
			mtuKey = "IPV6_MTU"
			cfg["IPV6INIT"] = "yes"
			cfg["IPV6_FORCE_ACCEPT_RA"] = "no"
			cfg["IPV6_AUTOCONF"] = "no"
		}
		if s.MTU != 0 {
			cfg[mtuKey] = fmt.Sprint(s.MTU)
		}
	case netcfg.Manual:
		// An MTU is the only reason to bring a manual link up.
		if _, ok := cfg["MTU"]; !ok {
			cfg["ONBOOT"] = "no"
		}
	}
}

// sysconfigDHCP4Overrides sets initscripts' and NetworkManager's ifcfg keys
// for the DHCPv4 overrides; cloud-init writes none of them.
func sysconfigDHCP4Overrides(o *netcfg.DHCPOverrides, cfg kv) {
	if o.UseDNS != nil && !*o.UseDNS {
		cfg["PEERDNS"] = "no"
	}
	if o.UseRoutes != nil && !*o.UseRoutes {
		cfg["PEERROUTES"] = "no"
	}
	if o.Hostname != "" {
		cfg["DHCP_HOSTNAME"] = o.Hostname
	}
}

// sysconfigAddresses sets the static subnets' addresses (IPADDR<n>,
// NETMASK<n>, IPV6ADDR and its secondaries), gateways and DNS.
func sysconfigAddresses(ifc *netcfg.Interface, cfg kv) {
	var v4, v6 []string
	for _, s := range ifc.Subnets {
		if s.Type != netcfg.Static {
			continue
		}
		if s.IPv6() {
			v6 = append(v6, s.Address.String())
		} else {
			suffix := ""
			if len(v4) > 0 {
				suffix = fmt.Sprint(len(v4))
			}
			cfg["IPADDR"+suffix] = s.Address.Addr().String()
			cfg["NETMASK"+suffix] = prefixMask(s.Address.Bits())
			if s.Broadcast.IsValid() {
				cfg["BROADCAST"+suffix] = s.Broadcast.String()
			}
			v4 = append(v4, s.Address.String())
		}
		if s.Gateway.IsValid() {
			cfg["DEFROUTE"] = "yes"
			if s.Gateway.Is6() {
				cfg["IPV6_DEFAULTGW"] = s.Gateway.String()
			} else {
				cfg["GATEWAY"] = s.Gateway.String()
			}
		}
		if len(s.DNS.Search) > 0 {
			cfg["DOMAIN"] = strings.Join(s.DNS.Search, " ")
		}
		sysconfigNameservers(cfg, s.DNS.Nameservers)
	}
	if len(v6) > 0 {
		cfg["IPV6ADDR"] = v6[0]
		if len(v6) > 1 {
			cfg["IPV6ADDR_SECONDARIES"] = strings.Join(v6[1:], " ")
		}
	}
}

// sysconfigNameservers sets DNS1 to DNS3 from the first three of ns.
func sysconfigNameservers(cfg kv, ns []netip.Addr) {
	for j, n := range ns {
		if j == 3 { // resolv.conf(5) MAXNS
			break
		}
		cfg[fmt.Sprintf("DNS%d", j+1)] = n.String()
	}
}

// sysconfigRoutes puts the interface's default routes into cfg (one per
// family; a second is an error) and returns the others, the subnets' then
// the global ones, for route-<name> and route6-<name>.
func sysconfigRoutes(c *netcfg.Config, ifc *netcfg.Interface, cfg kv) (sysRoutes, error) {
	var out sysRoutes
	var set4, set6 bool
	place := func(r netcfg.Route, dynamic6 bool) error {
		v6 := r.To.Addr().Is6()
		if isDefault(r) && !dynamic6 && routeAttrs(r) == "" {
			if (v6 && set6) || (!v6 && set4) {
				return fmt.Errorf("interface %q: duplicate default route", ifc.Name)
			}
			cfg["DEFROUTE"] = "yes"
			if r.Via.IsValid() {
				if v6 {
					cfg["IPV6_DEFAULTGW"] = r.Via.String()
					set6 = true
				} else {
					cfg["GATEWAY"] = r.Via.String()
					set4 = true
				}
			}
			if r.Metric != 0 {
				cfg["METRIC"] = fmt.Sprint(r.Metric)
			}
			return nil
		}
		if v6 {
			out.v6 = append(out.v6, r)
		} else {
			out.v4 = append(out.v4, r)
		}
		return nil
	}
	for _, s := range ifc.Subnets {
		dynamic6 := s.IPv6() && s.Type != netcfg.Static
		for _, r := range s.Routes {
			if err := place(r, dynamic6); err != nil {
				return out, err
			}
		}
	}
	if len(ifc.Subnets) == 0 {
		// Only a bond member or bridge port stripped of its subnets
		// (asBondMember) owns top-level routes without any: the routes
		// via its subnets go with them, named by Lost's "addressing".
		return out, nil
	}
	for _, r := range globalRoutesFor(c, ifc) {
		if err := place(r, false); err != nil {
			return out, err
		}
	}
	return out, nil
}

// hasDefaultRoute4 is network_state.has_default_route for IPv4: any IPv4
// default route or subnet gateway anywhere. (cloud-init's counts IPv6's
// too, which would keep an IPv4 lease from the default route when only
// IPv6 has one.)
func hasDefaultRoute4(c *netcfg.Config) bool {
	def4 := func(r netcfg.Route) bool { return isDefault(r) && r.To.Addr().Is4() }
	for _, r := range c.Routes {
		if def4(r) {
			return true
		}
	}
	for _, ifc := range c.Interfaces {
		for _, s := range ifc.Subnets {
			if s.Gateway.Is4() {
				return true
			}
			for _, r := range s.Routes {
				if def4(r) {
					return true
				}
			}
		}
	}
	return false
}

// prefixMask spells an IPv4 prefix length as a dotted netmask.
func prefixMask(bits int) string {
	var b [4]byte
	for i := 0; i < bits && i < 32; i++ {
		b[i/8] |= 0x80 >> (i % 8)
	}
	return netip.AddrFrom4(b).String()
}
