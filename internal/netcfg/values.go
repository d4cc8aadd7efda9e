package netcfg

import (
	"errors"
	"fmt"
	"sort"
	"strings"
)

// Every string of the model ends up in a configuration file (an INI unit or
// keyfile, netplan YAML, an ENI stanza, a sysconfig file sourced by the
// shell) or in a NIC name. The checks here keep each one to what the system
// accepts for it, so that no value can add a line, start a command or widen
// a match in any of those files. Errors quote the value with %q, so a
// control character is shown escaped, never written raw to the console.

// IfNameMax is the longest interface name the kernel takes (IFNAMSIZ - 1).
const IfNameMax = 15

// ifNameExtra are the characters besides ASCII letters and digits an
// interface name may have: what the kernel's, udev's and biosdevname's names
// use. Everything else the kernel would take (shell and glob characters,
// quotes, '#', '=') has a meaning in one of the files the renderers write.
const ifNameExtra = "._-@+"

// checkIfName tells why name cannot name a network interface, or returns
// nil. It applies the kernel's dev_valid_name (1 to 15 bytes, not "." or
// "..", no '/', ':' or whitespace), systemd's ifname_valid (printable ASCII
// only) and, since names are written into shell-sourced files and glob
// matches, allows only letters, digits and "._-@+".
func checkIfName(name string) error {
	switch {
	case name == "":
		return errors.New("empty interface name")
	case len(name) > IfNameMax:
		return fmt.Errorf("interface name %q is %d bytes, over the kernel's %d", name, len(name), IfNameMax)
	case name == "." || name == "..":
		return fmt.Errorf("interface name %q is not allowed", name)
	}
	for i := 0; i < len(name); i++ {
		b := name[i]
		if !isAlnum(b) && strings.IndexByte(ifNameExtra, b) < 0 {
			return fmt.Errorf("interface name %q: character %q is not allowed (letters, digits and %q only)", name, b, ifNameExtra)
		}
	}
	return nil
}

func isAlnum(b byte) bool {
	return b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' || b >= '0' && b <= '9'
}

// onlyBytes checks that s has only letters, digits and bytes of extra.
func onlyBytes(s, extra string) error {
	for i := 0; i < len(s); i++ {
		if b := s[i]; !isAlnum(b) && strings.IndexByte(extra, b) < 0 {
			return fmt.Errorf("%q: character %q is not allowed", s, b)
		}
	}
	return nil
}

// checkDomain checks a DNS search domain or a host name: labels of letters,
// digits, '-' and '_' (seen in real search lists), 1 to 63 bytes, not
// starting with '-', at most 253 bytes in all, an optional final dot.
func checkDomain(s string) error {
	d := strings.TrimSuffix(s, ".")
	if d == "" {
		return fmt.Errorf("%q: empty domain name", s)
	}
	if len(d) > 253 {
		return fmt.Errorf("%q: domain name over 253 bytes", s)
	}
	for _, l := range strings.Split(d, ".") {
		if l == "" || len(l) > 63 {
			return fmt.Errorf("%q: a label is empty or over 63 bytes", s)
		}
		if l[0] == '-' {
			return fmt.Errorf("%q: a label starts with '-'", s)
		}
		if err := onlyBytes(l, "-_"); err != nil {
			return fmt.Errorf("%q: not a domain name: %w", s, err)
		}
	}
	return nil
}

// paramValueBytes are the bytes a bond or bridge parameter value may have
// besides letters and digits: enough for "802.3ad", "layer3+4", "eth0
// 50,eth1 75" and IPv4 or IPv6 ARP targets.
const paramValueBytes = " ._:,+-"

// maxParamValue bounds a parameter value; the longest real one, a list of
// 16 IPv6 ARP targets, is about 640 bytes.
const maxParamValue = 1024

func checkParams(what string, params map[string]string) []error {
	var errs []error
	for _, k := range sortedMapKeys(params) {
		v := params[k]
		if k == "" || len(k) > 64 {
			errs = append(errs, fmt.Errorf("%s: key %q: empty or over 64 bytes", what, k))
			continue
		}
		if err := onlyBytes(k, "-_"); err != nil {
			errs = append(errs, fmt.Errorf("%s: key %w", what, err))
			continue
		}
		if len(v) > maxParamValue {
			errs = append(errs, fmt.Errorf("%s.%s: value over %d bytes", what, k, maxParamValue))
		} else if err := onlyBytes(v, paramValueBytes); err != nil {
			errs = append(errs, fmt.Errorf("%s.%s: value %w", what, k, err))
		}
	}
	return errs
}

func sortedMapKeys(m map[string]string) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks) // stable error order
	return ks
}

// checkScope checks a route scope: "", global, link or host.
func checkScope(s string) error {
	switch s {
	case "", "global", "link", "host":
		return nil
	}
	return fmt.Errorf("%q is not global, link or host", s)
}

func checkSearch(what string, search []string) []error {
	var errs []error
	for i, s := range search {
		if err := checkDomain(s); err != nil {
			errs = append(errs, fmt.Errorf("%s[%d]: %w", what, i, err))
		}
	}
	return errs
}

// Size bounds. Renderers copy every host-wide route to each interface with
// an address (as cloud-init does) and some work is quadratic in the number
// of entries of one file, so an unbounded configuration is minutes of CPU
// and megabytes of output in PID 1. Real ones are far below these.
const (
	MaxInterfaces = 256
	MaxSubnets    = 1024 // in all interfaces
	MaxRoutes     = 1024 // host-wide and per subnet
	MaxDNS        = 1024 // nameservers and search domains, everywhere
	// MaxRouteCopies bounds host-wide routes × interfaces.
	MaxRouteCopies = 16384
)

// checkSize reports a configuration over the size bounds.
func (c *Config) checkSize() error {
	subnets, routes, dns := 0, len(c.Routes), len(c.DNS.Nameservers)+len(c.DNS.Search)
	for _, iface := range c.Interfaces {
		subnets += len(iface.Subnets)
		dns += len(iface.DNS.Nameservers) + len(iface.DNS.Search)
		for _, s := range iface.Subnets {
			routes += len(s.Routes)
			dns += len(s.DNS.Nameservers) + len(s.DNS.Search)
		}
	}
	var errs []error
	for _, b := range []struct {
		what   string
		n, max int
	}{
		{"interfaces", len(c.Interfaces), MaxInterfaces},
		{"subnets", subnets, MaxSubnets},
		{"routes", routes, MaxRoutes},
		{"nameservers and search domains", dns, MaxDNS},
		{"host-wide routes × interfaces", len(c.Routes) * len(c.Interfaces), MaxRouteCopies},
	} {
		if b.n > b.max {
			errs = append(errs, fmt.Errorf("%d %s, over the limit of %d", b.n, b.what, b.max))
		}
	}
	return errors.Join(errs...)
}

// CheckValues checks the size of the configuration (the Max* bounds) and
// every string of the configuration against the syntax
// it lands in: interface names and the names bonds, bridges and VLANs refer
// to (checkIfName), MACs (lower-case, colon separated), drivers, bond and
// bridge parameters, DHCP host names and use-domains, and search domains.
// It does not check references between interfaces (Validate does). Every
// renderer calls it, so no value with a newline, a quote or a shell or glob
// character reaches a file. It reports every problem, joined.
func (c *Config) CheckValues() error {
	if c.Disabled {
		return nil
	}
	if err := c.checkSize(); err != nil {
		return err // not worth checking each of thousands of entries
	}
	var errs []error
	for i := range c.Interfaces {
		iface := &c.Interfaces[i]
		what := fmt.Sprintf("interfaces[%d] (%s %q)", i, iface.Kind, iface.Name)
		for _, check := range []func(*Interface) []error{
			checkIfaceIdentity, checkIfaceLinks, checkIfaceOverrides, checkIfaceDNS,
		} {
			for _, err := range check(iface) {
				errs = append(errs, fmt.Errorf("%s: %w", what, err))
			}
		}
	}
	errs = append(errs, checkSearch("dns.search", c.DNS.Search)...)
	for k, r := range c.Routes {
		if err := checkScope(r.Scope); err != nil {
			errs = append(errs, fmt.Errorf("routes[%d].scope: %w", k, err))
		}
	}
	return errors.Join(errs...)
}

// checkIfaceIdentity checks the values that name or match iface: its name,
// MAC, match.name and matches, control and driver.
func checkIfaceIdentity(iface *Interface) []error {
	var errs []error
	bad := func(err error) { errs = append(errs, err) }
	if iface.Name != "" { // Validate reports unnamed interfaces
		if err := checkIfName(iface.Name); err != nil {
			bad(fmt.Errorf("name: %w", err))
		}
	}
	if iface.MAC != "" {
		if m, err := parseMAC(iface.MAC); err != nil || m != iface.MAC {
			bad(fmt.Errorf("mac: %q is not a lower-case, colon-separated MAC address", iface.MAC))
		}
	}
	if iface.MatchName != "" {
		if len(iface.MatchName) > 64 {
			bad(errors.New("match.name: over 64 bytes"))
		} else if err := onlyBytes(iface.MatchName, ifNameExtra+"*?[]!"); err != nil {
			bad(fmt.Errorf("match.name: %w", err))
		}
	}
	for j, m := range iface.Matches {
		if err := checkIfName(m); err != nil {
			bad(fmt.Errorf("matches[%d]: %w", j, err))
		}
	}
	switch iface.Control {
	case "", "manual", "hotplug":
	default:
		bad(fmt.Errorf("control: %q is not manual or hotplug", iface.Control))
	}
	if iface.Driver != "" {
		if len(iface.Driver) > 64 {
			bad(errors.New("driver: over 64 bytes"))
		} else if err := onlyBytes(iface.Driver, "_-.*?"); err != nil {
			bad(fmt.Errorf("driver: %w", err))
		}
	}
	return errs
}

// checkIfaceLinks checks the interface names iface's bond, bridge or VLAN
// refers to, and its bond's or bridge's parameters.
func checkIfaceLinks(iface *Interface) []error {
	var errs []error
	bad := func(err error) { errs = append(errs, err) }
	refs := func(key string, names []string) {
		seen := map[string]bool{}
		for j, n := range names {
			if err := checkIfName(n); err != nil {
				bad(fmt.Errorf("%s[%d]: %w", key, j, err))
			} else if seen[n] {
				bad(fmt.Errorf("%s[%d]: %q listed twice", key, j, n))
			}
			seen[n] = true
		}
	}
	if iface.Bond != nil {
		refs("bond.members", iface.Bond.Members)
		errs = append(errs, checkParams("bond.params", iface.Bond.Params)...)
	}
	if iface.Bridge != nil {
		refs("bridge.members", iface.Bridge.Members)
		errs = append(errs, checkParams("bridge.params", iface.Bridge.Params)...)
	}
	if iface.VLAN != nil && iface.VLAN.Link != "" {
		if err := checkIfName(iface.VLAN.Link); err != nil {
			bad(fmt.Errorf("vlan.link: %w", err))
		}
	}
	return errs
}

// checkIfaceOverrides checks the use-domains and hostname of iface's DHCP
// overrides.
func checkIfaceOverrides(iface *Interface) []error {
	var errs []error
	for _, o := range []struct {
		key string
		o   *DHCPOverrides
	}{{"dhcp4-overrides", iface.DHCP4Overrides}, {"dhcp6-overrides", iface.DHCP6Overrides}} {
		if o.o == nil {
			continue
		}
		switch o.o.UseDomains {
		case "", "true", "false", "route":
		default:
			errs = append(errs, fmt.Errorf("%s.use-domains: %q is not true, false or route", o.key, o.o.UseDomains))
		}
		if o.o.Hostname != "" {
			if err := checkDomain(o.o.Hostname); err != nil {
				errs = append(errs, fmt.Errorf("%s.hostname: %w", o.key, err))
			}
		}
	}
	return errs
}

// checkIfaceDNS checks iface's search domains, its subnets' and the scopes
// of its subnets' routes.
func checkIfaceDNS(iface *Interface) []error {
	errs := checkSearch("dns.search", iface.DNS.Search)
	for j, s := range iface.Subnets {
		errs = append(errs, checkSearch(fmt.Sprintf("subnets[%d].dns.search", j), s.DNS.Search)...)
		for k, r := range s.Routes {
			if err := checkScope(r.Scope); err != nil {
				errs = append(errs, fmt.Errorf("subnets[%d].routes[%d].scope: %w", j, k, err))
			}
		}
	}
	return errs
}
