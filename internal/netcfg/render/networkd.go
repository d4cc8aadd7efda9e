package render

import (
	"fmt"
	"strings"

	"github.com/earlyinit/earlyinit/internal/netcfg"
)

// NetworkdDir is where the networkd renderer writes.
const NetworkdDir = "/etc/systemd/network"

type networkd struct{}

// Networkd renders systemd-networkd units: 10-cloud-init-<name>.network for
// every interface, as cloud-init's networkd.py does, plus the
// 10-cloud-init-<name>.netdev files that create bonds, VLANs and bridges
// (cloud-init writes none, so its virtual links never exist).
func Networkd() Renderer { return networkd{} }

func (networkd) Name() string { return "networkd" }

// unit builds an INI file section by section, in the order added. A key or
// value with a control character, which would end the line early, is kept
// out and makes text fail, naming the key.
type unit struct {
	b   strings.Builder
	err error
}

func (u *unit) section(name string, kv ...string) {
	if len(kv) == 0 {
		return
	}
	if u.b.Len() > 0 {
		u.b.WriteString("\n")
	}
	fmt.Fprintf(&u.b, "[%s]\n", name)
	for i := 0; i+1 < len(kv); i += 2 {
		if hasControl(kv[i]) || hasControl(kv[i+1]) {
			if u.err == nil {
				u.err = fmt.Errorf("[%s] %q: value %q has a control character", name, kv[i], kv[i+1])
			}
			continue
		}
		fmt.Fprintf(&u.b, "%s=%s\n", kv[i], kv[i+1])
	}
}

// text is the file, or the first error.
func (u *unit) text() (string, error) { return u.b.String(), u.err }

func (networkd) Render(c *netcfg.Config) ([]File, error) {
	if c.Disabled {
		return nil, nil
	}
	if err := check(c); err != nil {
		return nil, fmt.Errorf("networkd: %w", err)
	}
	rel := relate(c)
	gns, gsearch := globalDNS(c)
	var files []File
	for i := range c.Interfaces {
		ifc := &c.Interfaces[i]
		if _, ok := rel.bondOf[ifc.Name]; ok {
			ifc = asBondMember(ifc)
		}
		network, err := networkdNetwork(c, ifc, rel, gns, gsearch)
		if err != nil {
			return nil, fmt.Errorf("networkd: %s.network: %w", ifc.Name, err)
		}
		files = append(files, File{
			Path: fmt.Sprintf("%s/10-cloud-init-%s.network", NetworkdDir, ifc.Name),
			Data: []byte(network),
			Mode: 0o644,
		})
		if virtual(ifc) {
			netdev, err := networkdNetdev(ifc)
			if err != nil {
				return nil, fmt.Errorf("networkd: %s.netdev: %w", ifc.Name, err)
			}
			files = append(files, File{
				Path: fmt.Sprintf("%s/10-cloud-init-%s.netdev", NetworkdDir, ifc.Name),
				Data: []byte(netdev),
				Mode: 0o644,
			})
		}
	}
	return sortFiles(files), nil
}

// networkdNetwork is the .network unit of ifc, section by section.
func networkdNetwork(c *netcfg.Config, ifc *netcfg.Interface, rel relations, gns, gsearch []string) (string, error) {
	var u unit
	u.section("Match", networkdMatch(ifc)...)
	var link []string
	if m := ipv4MTU(ifc); m != 0 {
		link = append(link, "MTUBytes", fmt.Sprint(m))
	}
	if ifc.Optional || ifc.Control == "hotplug" {
		link = append(link, "RequiredForOnline", "no")
	}
	if ifc.Control == "manual" {
		link = append(link, "ActivationPolicy", "manual")
	}
	u.section("Link", link...)
	u.section("Network", networkdNetworkKeys(c, ifc, rel, gns, gsearch)...)
	for _, s := range ifc.Subnets {
		if s.Type == netcfg.Static {
			addr := []string{"Address", s.Address.String()}
			if s.Broadcast.IsValid() {
				addr = append(addr, "Broadcast", s.Broadcast.String())
			}
			u.section("Address", addr...)
		}
	}
	dhcp4kv, raMetric := networkdMetrics(ifc)
	u.section("DHCPv4", dhcp4kv...)
	u.section("DHCPv6", networkdDHCP(ifc.DHCP6Overrides)...)
	u.section("IPv6AcceptRA", raMetric...)
	// A gateway on a link without static addresses is taken as on-link:
	// networkd does so itself, with a warning ("Gateway= without static
	// address configured. Enabling GatewayOnLink= option").
	onLink := !hasStatic(ifc)
	for _, s := range ifc.Subnets {
		if s.Gateway.IsValid() {
			gw := []string{"Gateway", s.Gateway.String()}
			if s.Metric != 0 {
				gw = append(gw, "Metric", fmt.Sprint(s.Metric))
			}
			if onLink {
				gw = append(gw, "GatewayOnLink", "yes")
			}
			u.section("Route", gw...)
		}
		for _, r := range s.Routes {
			u.section("Route", networkdRoute(r, onLink)...)
		}
	}
	for _, r := range globalRoutesFor(c, ifc) {
		u.section("Route", networkdRoute(r, onLink)...)
	}
	for _, r := range ifc.RoutingPolicy {
		u.section("RoutingPolicyRule", networkdRule(r)...)
	}
	u.section("Bridge", networkdBridgePort(c, ifc, rel)...)
	return u.text()
}

// networkdRule is a [RoutingPolicyRule] section.
func networkdRule(r netcfg.Rule) []string {
	var kv []string
	if r.From.IsValid() {
		kv = append(kv, "From", r.From.String())
	}
	if r.To.IsValid() {
		kv = append(kv, "To", r.To.String())
	}
	for _, f := range []struct {
		key string
		v   int
	}{{"Table", r.Table}, {"Priority", r.Priority}, {"FirewallMark", r.Mark}, {"TypeOfService", r.TOS}} {
		if f.v != 0 {
			kv = append(kv, f.key, fmt.Sprint(f.v))
		}
	}
	return kv
}

// networkdMatch is the [Match] section: the name, and a NIC's MAC and
// driver.
func networkdMatch(ifc *netcfg.Interface) []string {
	if ifc.MatchName != "" {
		// A v2 match.name glob: every NIC it matches.
		match := []string{"Name", ifc.MatchName}
		if ifc.MAC != "" {
			match = append(match, "MACAddress", ifc.MAC)
		}
		if ifc.Driver != "" {
			match = append(match, "Driver", ifc.Driver)
		}
		return match
	}
	match := []string{"Name", ifc.Name}
	if ifc.NoRename && (ifc.MAC != "" || ifc.Driver != "") {
		// A v2 id without set-name is not the NIC's name: match the NIC by
		// what identifies it (cloud-init matches Name=<id> too, which never
		// matches).
		match = nil
	}
	if ifc.Kind == netcfg.Physical {
		if ifc.MAC != "" {
			match = append(match, "MACAddress", ifc.MAC)
		}
		if ifc.Driver != "" {
			match = append(match, "Driver", ifc.Driver)
		}
	}
	return match
}

// networkdDHCPMode is the DHCP= value the subnets ask for, and whether
// they need router advertisements (SLAAC, stateless DHCPv6).
func networkdDHCPMode(ifc *netcfg.Interface) (dhcp string, ra bool) {
	var dhcp4, dhcp6 bool
	for _, s := range ifc.Subnets {
		switch s.Type {
		case netcfg.DHCP4:
			dhcp4 = true
		case netcfg.DHCP6, netcfg.DHCPv6Stateful:
			dhcp6 = true
		case netcfg.SLAAC, netcfg.DHCPv6Stateless:
			// networkd starts DHCPv6 in information-request mode by itself
			// when the router advertisement carries the O flag.
			ra = true
		}
	}
	dhcp = "no"
	switch {
	case dhcp4 && dhcp6:
		dhcp = "yes"
	case dhcp4:
		dhcp = "ipv4"
	case dhcp6:
		dhcp = "ipv6"
	}
	return dhcp, ra
}

// networkdNetworkKeys is the [Network] section: DHCP and RA, the IPv6 MTU,
// the bond, bridge and VLANs the link belongs to or carries, and DNS.
func networkdNetworkKeys(c *netcfg.Config, ifc *netcfg.Interface, rel relations, gns, gsearch []string) []string {
	dhcp, ra := networkdDHCPMode(ifc)
	netw := []string{"DHCP", dhcp}
	switch {
	case ra:
		netw = append(netw, "IPv6AcceptRA", "yes")
	case ifc.AcceptRA != nil:
		netw = append(netw, "IPv6AcceptRA", yesNo(*ifc.AcceptRA))
	}
	if m := ipv6MTU(ifc); m != 0 {
		netw = append(netw, "IPv6MTUBytes", fmt.Sprint(m))
	}
	if b, ok := rel.bondOf[ifc.Name]; ok {
		netw = append(netw, "Bond", b)
		if bond := c.Interface(b); bond != nil && bondParams(bond.Bond)["primary"] == ifc.Name {
			netw = append(netw, "PrimarySlave", "yes")
		}
	}
	if br, ok := rel.bridgeOf[ifc.Name]; ok {
		netw = append(netw, "Bridge", br)
	}
	for _, v := range rel.vlansOn[ifc.Name] {
		netw = append(netw, "VLAN", v)
	}
	ns, search := ifaceDNS(ifc)
	if hasConfig(ifc) || !anyConfigured(c) && !enslaved(rel, ifc) {
		// cloud-init puts the host-wide DNS on every link (networkd has no
		// other place for it but resolved.conf); here links without
		// addresses carry none, unless no link has any: then every link
		// that is not a bond member or bridge port does.
		ns = dedupe(append(ns, gns...))
		search = dedupe(append(search, gsearch...))
	}
	if len(ns) > 0 {
		netw = append(netw, "DNS", strings.Join(ns, " "))
	}
	if len(search) > 0 {
		netw = append(netw, "Domains", strings.Join(search, " "))
	}
	return netw
}

// networkdMetrics is the [DHCPv4] section (the overrides and the DHCPv4
// subnet's metric) and the [IPv6AcceptRA] one (an IPv6 dynamic subnet's
// metric).
func networkdMetrics(ifc *netcfg.Interface) (dhcp4kv, raMetric []string) {
	// A DHCP subnet's metric: [DHCPv4] has RouteMetric; IPv6 default routes
	// come from router advertisements, so a dhcp6 metric goes to
	// [IPv6AcceptRA]. (cloud-init writes only the v4 one, only from v2.)
	dhcp4kv = networkdDHCP(ifc.DHCP4Overrides)
	for _, s := range ifc.Subnets {
		if s.Metric == 0 {
			continue
		}
		switch s.Type {
		case netcfg.DHCP4:
			dhcp4kv = append([]string{"RouteMetric", fmt.Sprint(s.Metric)}, dhcp4kv...)
		case netcfg.DHCP6, netcfg.DHCPv6Stateful, netcfg.DHCPv6Stateless, netcfg.SLAAC:
			raMetric = []string{"RouteMetric", fmt.Sprint(s.Metric)}
		}
	}
	return dhcp4kv, raMetric
}

// networkdBridgePort is the [Bridge] section of a bridge port: its cost
// and priority from the bridge's parameters.
func networkdBridgePort(c *netcfg.Config, ifc *netcfg.Interface, rel relations) []string {
	br, ok := rel.bridgeOf[ifc.Name]
	if !ok {
		return nil
	}
	bridge := c.Interface(br)
	if bridge == nil {
		return nil
	}
	p := bridgeParams(bridge.Bridge)
	var port []string
	if v, ok := portValues(p["pathcost"])[ifc.Name]; ok {
		port = append(port, "Cost", v)
	}
	if v, ok := portValues(p["portprio"])[ifc.Name]; ok {
		port = append(port, "Priority", v)
	}
	return port
}

// networkdDHCPKey is the [DHCPv4]/[DHCPv6] key of a boolean override, by
// netplan key (netcfg.DHCPOverrideFlags): cloud-init's dhcp_config_maps.
func networkdDHCPKey(flag string) string {
	switch flag {
	case "use-dns":
		return "UseDNS"
	case "use-ntp":
		return "UseNTP"
	case "use-hostname":
		return "UseHostname"
	case "use-mtu":
		return "UseMTU"
	case "use-routes":
		return "UseRoutes"
	case "send-hostname":
		return "SendHostname"
	}
	return ""
}

// networkdDHCP is the [DHCPv4] or [DHCPv6] section for the overrides:
// cloud-init's parse_dhcp_overrides.
func networkdDHCP(o *netcfg.DHCPOverrides) []string {
	var kv []string
	if o == nil {
		return kv
	}
	for _, k := range netcfg.DHCPOverrideFlags {
		if v := *o.Flag(k); v != nil {
			kv = append(kv, networkdDHCPKey(k), yesNo(*v))
		}
	}
	switch o.UseDomains {
	case "true":
		kv = append(kv, "UseDomains", "yes")
	case "false":
		kv = append(kv, "UseDomains", "no")
	case "route":
		kv = append(kv, "UseDomains", "route")
	}
	if o.Hostname != "" {
		kv = append(kv, "Hostname", o.Hostname)
	}
	return kv
}

// networkdRoute is a [Route] section; onLink adds GatewayOnLink=yes to a
// route via a gateway.
func networkdRoute(r netcfg.Route, onLink bool) []string {
	kv := []string{"Destination", r.To.String()}
	if r.Via.IsValid() {
		kv = append(kv, "Gateway", r.Via.String())
		if onLink {
			kv = append(kv, "GatewayOnLink", "yes")
		}
	}
	if r.Metric != 0 {
		kv = append(kv, "Metric", fmt.Sprint(r.Metric))
	}
	if r.Table != 0 {
		kv = append(kv, "Table", fmt.Sprint(r.Table))
	}
	if scope, _ := routeScope(r); scope != "" {
		kv = append(kv, "Scope", scope)
	}
	if r.MTU != 0 {
		kv = append(kv, "MTUBytes", fmt.Sprint(r.MTU))
	}
	return kv
}

// networkdBond maps v1 bond parameters to [Bond] keys; ms marks values the
// kernel takes in milliseconds and networkd as a time span.
func networkdBond(k string) (key string, ms bool) {
	switch k {
	case "mode":
		return "Mode", false
	case "xmit-hash-policy":
		return "TransmitHashPolicy", false
	case "lacp-rate":
		return "LACPTransmitRate", false
	case "miimon":
		return "MIIMonitorSec", true
	case "updelay":
		return "UpDelaySec", true
	case "downdelay":
		return "DownDelaySec", true
	case "arp-interval":
		return "ARPIntervalSec", true
	case "arp-ip-target":
		return "ARPIPTargets", false
	case "arp-validate":
		return "ARPValidate", false
	case "ad-select":
		return "AdSelect", false
	case "fail-over-mac":
		return "FailOverMACPolicy", false
	case "primary-reselect":
		return "PrimaryReselectPolicy", false
	case "min-links":
		return "MinLinks", false
	case "num-grat-arp":
		return "GratuitousARP", false
	case "all-slaves-active":
		return "AllSlavesActive", false
	case "arp-all-targets":
		return "ARPAllTargets", false
	case "lp-interval":
		return "LearnPacketIntervalSec", false
	case "packets-per-slave":
		return "PacketsPerSlave", false
	case "resend-igmp":
		return "ResendIGMP", false
	}
	return "", false
}

func networkdNetdev(ifc *netcfg.Interface) (string, error) {
	var u unit
	dev := []string{"Name", ifc.Name, "Kind", string(ifc.Kind)}
	if ifc.MAC != "" {
		dev = append(dev, "MACAddress", ifc.MAC)
	}
	if ifc.MTU != 0 {
		dev = append(dev, "MTUBytes", fmt.Sprint(ifc.MTU))
	}
	u.section("NetDev", dev...)
	switch ifc.Kind {
	case netcfg.Bond:
		p := bondParams(ifc.Bond)
		var kv []string
		for _, k := range sortedKeys(p) {
			key, ms := networkdBond(k)
			if key == "" {
				continue // primary goes on the member's .network
			}
			v := p[k]
			switch {
			case ms:
				v += "ms"
			case k == "lacp-rate":
				v = lacpRate(v)
			case k == "arp-ip-target":
				v = strings.Join(strings.FieldsFunc(v, func(r rune) bool { return r == ',' || r == ' ' }), " ")
			case k == "all-slaves-active":
				if b, ok := truthy(v); ok {
					v = yesNo(b)
				}
			case k == "arp-all-targets":
				v = arpAllTargets(v)
			}
			kv = append(kv, key, v)
		}
		u.section("Bond", kv...)
	case netcfg.VLAN:
		u.section("VLAN", "Id", fmt.Sprint(ifc.VLAN.ID))
	case netcfg.Bridge:
		p := bridgeParams(ifc.Bridge)
		var kv []string
		if v, ok := truthy(p["stp"]); ok {
			kv = append(kv, "STP", yesNo(v))
		}
		for _, m := range [][2]string{{"fd", "ForwardDelaySec"}, {"hello", "HelloTimeSec"}, {"maxage", "MaxAgeSec"}, {"ageing", "AgeingTimeSec"}, {"priority", "Priority"}} {
			if v, ok := p[m[0]]; ok {
				kv = append(kv, m[1], v)
			}
		}
		u.section("Bridge", kv...)
	}
	return u.text()
}
