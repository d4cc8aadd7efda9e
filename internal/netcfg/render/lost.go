package render

import (
	"fmt"
	"strings"

	"github.com/earlyinit/earlyinit/internal/netcfg"
)

// Lost names what of c the renderer called name cannot express, so does
// not render: each entry is the input key and where ("wakeonlan (eth0)"),
// in the model's order, without repeats. It includes the keys the parser
// could not keep at all (Config.Ignored). Nothing else of c is dropped: a
// key either reaches the renderer's files or is named here
// (TestEveryKeyRenderedOrLost). The pipeline logs Warning(name, c).
func Lost(name string, c *netcfg.Config) []string {
	if c == nil || c.Disabled {
		return nil
	}
	l := &lost{name: name, seen: map[string]bool{}}
	for _, k := range c.Ignored {
		l.add(k, "")
	}
	l.glob = name == "eni" || name == "sysconfig" || name == "network-manager"
	l.renames = c.RenameMap()
	l.rel = relate(c)
	l.netplanOnePass = true
	if name == "netplan" {
		_, l.netplanOnePass = netplanOrder(c)
	}
	for i := range c.Interfaces {
		ifc := &c.Interfaces[i]
		l.iface(ifc)
		l.bond(ifc)
		l.bridge(ifc)
		lostOverrides(name, ifc, l.add)
		l.netplanOverrides(ifc)
		l.subnets(ifc)
	}
	for _, r := range c.Routes {
		lostScope(name, "", r, l.add)
	}
	return l.out
}

// lost is the state of one Lost: the renderer's name, what it needs to
// know of the configuration, and the entries named so far.
type lost struct {
	name           string
	glob           bool // the renderer cannot write a name glob (expandGlobs)
	renames        map[string]string
	rel            relations
	netplanOnePass bool // netplanOrder found an order (always, for the others)
	out            []string
	seen           map[string]bool
}

// add names key, and where when not "", unless already named.
func (l *lost) add(key, where string) {
	e := key
	if where != "" {
		e = fmt.Sprintf("%s (%s)", key, where)
	}
	if !l.seen[e] {
		l.seen[e] = true
		l.out = append(l.out, e)
	}
}

// iface adds the interface-wide settings of ifc the renderer drops.
func (l *lost) iface(ifc *netcfg.Interface) {
	name, n := l.name, ifc.Name
	if ifc.MatchName != "" && l.glob && len(ifc.Matches) == 0 {
		l.add("match.name", fmt.Sprintf("%s: %q matches no NIC on this system", n, ifc.MatchName))
	}
	if ifc.WakeOnLAN && name == "networkd" && (ifc.MAC == "" || l.renames[ifc.MAC] != ifc.Name) {
		// WakeOnLan= belongs in a .link file: the rename .link of a
		// NIC the config renames carries it (internal/nic), and another
		// .link would override the NIC's own naming.
		l.add("wakeonlan", n+": not renamed, so no .link file carries it")
	}
	if _, member := l.rel.bondOf[n]; hasAddressing(ifc) && (member && (name == "networkd" || name == "netplan") || enslaved(l.rel, ifc) && (name == "network-manager" || name == "sysconfig")) {
		l.add("addressing", n+": a bond member or bridge port has no addresses, DHCP, router advertisements, routing rules or DNS of its own")
	}
	if name == "network-manager" && !enslaved(l.rel, ifc) && nmDNSWithoutFamily(ifc) {
		l.add("nameservers", n+": NetworkManager takes DNS only for an address family the connection configures")
	}
	if ifc.Optional && (name == "eni" || name == "sysconfig" || name == "network-manager") {
		l.add("optional", n)
	}
	if ifc.Driver != "" && (name == "eni" || name == "sysconfig" || name == "network-manager") {
		l.add("match.driver", n)
	}
	if ifc.AcceptRA != nil && name == "network-manager" {
		l.add("accept-ra", n)
	}
	if name == "eni" && len(ifc.Subnets) == 0 && !ifc.DNS.Empty() && !eniManualRaised(ifc, l.rel) {
		l.add("nameservers", n+": ifupdown never brings the interface up, so its DNS, on its inet manual stanza, is not applied")
	}
	if ifc.AcceptRA != nil && name == "eni" && !hasIPv6Stanza(ifc) {
		l.add("accept-ra", n+": no IPv6 subnet to carry it")
	}
	for _, r := range ifc.RoutingPolicy {
		if r.Priority == 0 && name == "network-manager" {
			l.add("routing-policy", n+": NetworkManager needs a rule's priority")
		}
	}
}

// bond adds the bond parameters of ifc the renderer or the kernel drops.
func (l *lost) bond(ifc *netcfg.Interface) {
	if ifc.Bond == nil {
		return
	}
	n := ifc.Name
	for _, k := range unknownBondParams(ifc.Bond) {
		l.add("bond parameter "+k, n)
	}
	if p := bondParams(ifc.Bond); l.name == "network-manager" && p["arp-ip-target"] != "" && p["arp-interval"] == "" {
		l.add("bond parameter arp-ip-target", n+": NetworkManager takes it only with arp-interval")
	}
	if bondPrimaryDropped(ifc.Bond) {
		l.add("bond parameter primary", n+": the kernel takes a primary in active-backup, balance-tlb and balance-alb modes only")
	}
}

// bridge adds the bridge parameters of ifc the renderer drops.
func (l *lost) bridge(ifc *netcfg.Interface) {
	if ifc.Bridge == nil {
		return
	}
	n := ifc.Name
	for _, k := range sortedKeys(bridgeParams(ifc.Bridge)) {
		if !bridgeParamRendered(l.name, k) {
			l.add("bridge parameter "+k, n)
		} else if l.name == "network-manager" && !nmBridgeValue(k, bridgeParams(ifc.Bridge)[k]) {
			l.add("bridge parameter "+k, n+": out of NetworkManager's range")
		} else if !l.netplanOnePass && (k == "pathcost" || k == "portprio") {
			l.add("bridge parameter "+k, n+": no order of netplan's sections defines every interface before it is named, and a second pass of netplan's parser refuses per-port values")
		}
	}
}

// netplanOverrides adds, for netplan, the dhcp6-overrides of ifc that
// differ from its dhcp4-overrides.
func (l *lost) netplanOverrides(ifc *netcfg.Interface) {
	if l.name != "netplan" {
		return
	}
	_, _, differ := netplanOverridePair(ifc)
	for _, k := range differ {
		l.add("dhcp6-overrides."+k, ifc.Name+": netplan's networkd backend takes one set of DHCP overrides for both families, and dhcp4-overrides' is written for both")
	}
}

// subnets adds the settings of ifc's subnets and their routes the
// renderer drops.
func (l *lost) subnets(ifc *netcfg.Interface) {
	name, n := l.name, ifc.Name
	for _, s := range ifc.Subnets {
		if s.Broadcast.IsValid() && (name == "netplan" || name == "network-manager") {
			l.add("broadcast", n)
		}
		if s.Metric != 0 && s.IPv6() && name == "eni" {
			l.add("metric", n+": ifupdown has none for inet6")
		}
		if s.MTU != 0 && s.IPv6() && name == "network-manager" {
			l.add("mtu", n+": IPv6 subnet")
		}
		for _, r := range s.Routes {
			lostScope(name, n, r, l.add)
		}
	}
}

// lostScope adds route r's scope when renderer name does not write it:
// NetworkManager has no route scope; the others leave out the scopes
// routeScope drops.
func lostScope(name, where string, r netcfg.Route, add func(key, where string)) {
	if r.Scope == "" {
		return
	}
	if name == "network-manager" {
		add("routes.scope", where)
		return
	}
	if _, why := routeScope(r); why != "" {
		if where != "" {
			why = where + ": " + why
		}
		add("routes.scope", why)
	}
}

// Warning is the one line the pipeline logs for renderer name and c:
// everything Lost names, then extra (what the pipeline itself could not
// write, such as a .link file without a root), or "" when nothing is lost.
func Warning(name string, c *netcfg.Config, extra ...string) string {
	lost := append(Lost(name, c), extra...)
	if len(lost) == 0 {
		return ""
	}
	return fmt.Sprintf("%s cannot express, so does not render: %s", name, strings.Join(lost, "; "))
}

func hasIPv6Stanza(ifc *netcfg.Interface) bool {
	for _, s := range ifc.Subnets {
		if s.IPv6() {
			return true
		}
	}
	return false
}

// bridgeParamRendered tells whether renderer name writes bridge parameter
// k (bridgeParams' names).
func bridgeParamRendered(name, k string) bool {
	switch name {
	case "eni":
		return true // bridge_<k>: bridge-utils takes them all
	case "sysconfig":
		return k == "stp" || k == "ageing" || k == "priority" || k == "fd"
	}
	switch k {
	case "stp", "fd", "hello", "maxage", "ageing", "priority", "pathcost", "portprio":
		return true
	}
	return false
}

// lostOverrides adds the DHCP overrides renderer name has no setting for.
func lostOverrides(name string, ifc *netcfg.Interface, add func(key, where string)) {
	for _, o := range []struct {
		key string
		o   *netcfg.DHCPOverrides
	}{{"dhcp4-overrides", ifc.DHCP4Overrides}, {"dhcp6-overrides", ifc.DHCP6Overrides}} {
		if o.o == nil {
			continue
		}
		set := map[string]bool{}
		for _, k := range netcfg.DHCPOverrideFlags {
			set[k] = *o.o.Flag(k) != nil
		}
		set["use-domains"] = o.o.UseDomains != ""
		set["hostname"] = o.o.Hostname != ""
		for _, k := range append(append([]string(nil), netcfg.DHCPOverrideFlags...), "use-domains", "hostname") {
			if set[k] && !overrideRendered(name, o.key == "dhcp4-overrides", k, o.o) {
				add(o.key+"."+k, ifc.Name)
			}
		}
	}
}

// overrideRendered tells whether renderer name writes override k.
func overrideRendered(name string, v4 bool, k string, o *netcfg.DHCPOverrides) bool {
	switch name {
	case "networkd", "netplan":
		return true
	case "eni":
		// hostname on the inet dhcp stanza; use-dns and use-routes true
		// are ifupdown's default.
		return v4 && k == "hostname" || k == "use-dns" && *o.UseDNS || k == "use-routes" && *o.UseRoutes
	case "sysconfig":
		// PEERDNS=no, PEERROUTES=no and DHCP_HOSTNAME: DHCPv4 only, and
		// only the "false" of use-dns and use-routes.
		switch k {
		case "use-dns":
			return v4 || *o.UseDNS
		case "use-routes":
			return v4 || *o.UseRoutes
		case "hostname":
			return v4
		}
		return false
	case "network-manager":
		switch k {
		case "use-dns", "use-routes", "send-hostname", "hostname":
			return true // ignore-auto-dns, ignore-auto-routes, dhcp-send-hostname, dhcp-hostname
		}
		return false
	}
	return false
}
