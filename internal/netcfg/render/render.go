// Package render turns the network model (internal/netcfg) into the files each
// network manager of a real root reads: systemd-networkd, netplan, RHEL
// sysconfig, ifupdown (ENI) and NetworkManager keyfiles. It follows
// cloud-init 22.4.2's renderers (cloudinit/net/*.py) fact for fact, except
// where docs/network.md lists an intentional difference.
//
// Renderers are pure: a Config in, files (paths relative to the root) out,
// in a stable order. Writing them is the caller's job (WriteDir for the
// net-convert CLI, internal/rootfs at boot).
package render

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/earlyinit/earlyinit/internal/netcfg"
)

// File is one output file: netcfg.File, the one file-to-write type of the
// network pipeline. Path is absolute within the root
// ("/etc/systemd/network/10-cloud-init-eth0.network").
type File = netcfg.File

// Renderer renders a network configuration for one network manager.
type Renderer interface {
	// Name is the cloud-init renderer name ("networkd", "netplan", ...).
	Name() string
	// Render returns the files to write, sorted by path. A disabled config
	// renders no files.
	Render(c *netcfg.Config) ([]File, error)
}

// Names returns the renderer names ByName accepts, in cloud-init's priority
// order (renderers.py DEFAULT_PRIORITY, BSDs left out), which Detect follows.
func Names() []string {
	return []string{"eni", "sysconfig", "netplan", "network-manager", "networkd"}
}

// ByName returns the renderer called name.
func ByName(name string) (Renderer, error) {
	switch name {
	case "networkd":
		return Networkd(), nil
	case "netplan":
		return Netplan(), nil
	case "sysconfig":
		return Sysconfig(), nil
	case "eni":
		return ENI(), nil
	case "network-manager":
		return NetworkManager(), nil
	}
	return nil, fmt.Errorf("unknown renderer %q (want one of %s)", name, strings.Join(Names(), ", "))
}

// anyExists reports whether any of paths exists.
func anyExists(exists func(string) bool, paths ...string) bool {
	for _, p := range paths {
		if exists(p) {
			return true
		}
	}
	return false
}

// inSbin reports whether prog is in /sbin or /usr/sbin, the search path of
// most cloud-init available() checks.
func inSbin(exists func(string) bool, prog string) bool {
	return anyExists(exists, "/sbin/"+prog, "/usr/sbin/"+prog)
}

// available translates the renderer's available() in cloud-init to paths in
// the root, since we cannot run the root's binaries from the initramfs.
func available(name string, exists func(string) bool) bool {
	switch name {
	case "eni":
		// eni.py: ifquery, ifup and ifdown in /sbin or /usr/sbin, and
		// etc/network/interfaces is a file.
		return inSbin(exists, "ifquery") && inSbin(exists, "ifup") && inSbin(exists, "ifdown") &&
			exists("/etc/network/interfaces")
	case "sysconfig":
		// sysconfig.py: a RHEL or SUSE family distro, ifup and ifdown in
		// /sbin or /usr/sbin, and network-scripts/network-functions (RHEL
		// initscripts) or etc/sysconfig/config (SUSE). The distro check is
		// implied by those files, which only those families ship.
		return inSbin(exists, "ifup") && inSbin(exists, "ifdown") &&
			anyExists(exists, "/etc/sysconfig/network-scripts/network-functions", "/etc/sysconfig/config")
	case "netplan":
		// netplan.py: netplan in /usr/sbin or /sbin.
		return inSbin(exists, "netplan")
	case "network-manager":
		// network_manager.py: NetworkManager.conf exists, nmcli is on PATH,
		// and `systemctl is-enabled NetworkManager.service` succeeds, read
		// here as the multi-user.target.wants symlink that enabling creates.
		return exists("/etc/NetworkManager/NetworkManager.conf") &&
			anyExists(exists, "/usr/bin/nmcli", "/bin/nmcli", "/usr/sbin/nmcli", "/sbin/nmcli", "/usr/local/bin/nmcli") &&
			exists("/etc/systemd/system/multi-user.target.wants/NetworkManager.service")
	case "networkd":
		// networkd.py: ip and systemctl in /usr/sbin or /bin.
		return anyExists(exists, "/usr/sbin/ip", "/bin/ip") && anyExists(exists, "/usr/sbin/systemctl", "/bin/systemctl")
	}
	return false
}

// Detect picks the renderer for a real root in cloud-init's priority order
// (eni, sysconfig, netplan, network-manager, networkd). exists reports
// whether a path exists in the real root; it should resolve symlinks inside
// the root (on merged-/usr systems /sbin is a link to usr/sbin).
func Detect(exists func(path string) bool) (Renderer, error) {
	for _, n := range Names() {
		if available(n, exists) {
			return ByName(n)
		}
	}
	return nil, fmt.Errorf("no available network renderer found in the root; searched %s", strings.Join(Names(), ", "))
}

// CloudInitDropInPath is where CloudInitDropIn goes.
const CloudInitDropInPath = "/etc/cloud/cloud.cfg.d/99-earlyinit-disable-network-config.cfg"

// CloudInitDropIn returns the file that stops a cloud-init installed in the
// real root from writing its own network configuration over ours.
func CloudInitDropIn() File {
	return File{
		Path: CloudInitDropInPath,
		Data: []byte("# Written by earlyinit, which configured the network from the initramfs.\nnetwork: {config: disabled}\n"),
		Mode: 0o644,
	}
}

// WriteDir writes files under dir (the net-convert -d directory), creating
// parent directories. Paths must be absolute and clean, and stay within dir.
func WriteDir(dir string, files []File) error {
	for _, f := range files {
		if !filepath.IsAbs(f.Path) || filepath.Clean(f.Path) != f.Path {
			return fmt.Errorf("write %s: path must be absolute and clean", f.Path)
		}
		p := filepath.Join(dir, f.Path)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return fmt.Errorf("write %s: %w", p, err)
		}
		if err := os.WriteFile(p, f.Data, f.Mode.Perm()); err != nil {
			return fmt.Errorf("write %s: %w", p, err)
		}
		// WriteFile keeps the mode of an existing file and applies umask.
		if err := os.Chmod(p, f.Mode.Perm()); err != nil {
			return fmt.Errorf("write %s: %w", p, err)
		}
	}
	return nil
}

// sortFiles orders files by path so every renderer's output is stable.
func sortFiles(files []File) []File {
	sort.Slice(files, func(i, j int) bool { return files[i].Path < files[j].Path })
	return files
}

// check validates what every renderer relies on: unique names, members,
// links and ports that exist, and values that are safe in every file format
// (netcfg's CheckValues: names usable as file names and in shell and glob
// contexts, no control characters, quotes or shell characters anywhere).
func check(c *netcfg.Config) error {
	if err := c.CheckValues(); err != nil {
		return err
	}
	seen := map[string]bool{}
	for _, ifc := range c.Interfaces {
		if ifc.Name == "" {
			return fmt.Errorf("interface with mac %q: no name", ifc.MAC)
		}
		if seen[ifc.Name] {
			return fmt.Errorf("interface %q: declared twice", ifc.Name)
		}
		seen[ifc.Name] = true
	}
	for _, ifc := range c.Interfaces {
		switch ifc.Kind {
		case netcfg.Physical, netcfg.Infiniband:
		case netcfg.Bond:
			if ifc.Bond == nil {
				return fmt.Errorf("bond %q: no bond configuration", ifc.Name)
			}
			for _, m := range ifc.Bond.Members {
				if !seen[m] {
					return fmt.Errorf("bond %q: member %q is not an interface", ifc.Name, m)
				}
			}
		case netcfg.VLAN:
			if ifc.VLAN == nil {
				return fmt.Errorf("vlan %q: no vlan configuration", ifc.Name)
			}
			if !seen[ifc.VLAN.Link] {
				return fmt.Errorf("vlan %q: link %q is not an interface", ifc.Name, ifc.VLAN.Link)
			}
		case netcfg.Bridge:
			if ifc.Bridge == nil {
				return fmt.Errorf("bridge %q: no bridge configuration", ifc.Name)
			}
			for _, m := range ifc.Bridge.Members {
				if !seen[m] {
					return fmt.Errorf("bridge %q: port %q is not an interface", ifc.Name, m)
				}
			}
		default:
			return fmt.Errorf("interface %q: unknown kind %q", ifc.Name, ifc.Kind)
		}
		for i, s := range ifc.Subnets {
			switch s.Type {
			case netcfg.Static:
				if !s.Address.IsValid() {
					return fmt.Errorf("interface %q subnet %d: static without an address", ifc.Name, i)
				}
			case netcfg.DHCP4, netcfg.DHCP6, netcfg.SLAAC, netcfg.DHCPv6Stateless, netcfg.DHCPv6Stateful, netcfg.Manual:
			default:
				return fmt.Errorf("interface %q subnet %d: unknown type %q", ifc.Name, i, s.Type)
			}
		}
	}
	return nil
}

// relations indexes who enslaves whom.
type relations struct {
	bondOf   map[string]string   // member -> bond
	bridgeOf map[string]string   // port -> bridge
	vlansOn  map[string][]string // link -> vlans, in declaration order
}

func relate(c *netcfg.Config) relations {
	r := relations{bondOf: map[string]string{}, bridgeOf: map[string]string{}, vlansOn: map[string][]string{}}
	for _, ifc := range c.Interfaces {
		switch {
		case ifc.Kind == netcfg.Bond && ifc.Bond != nil:
			for _, m := range ifc.Bond.Members {
				r.bondOf[m] = ifc.Name
			}
		case ifc.Kind == netcfg.Bridge && ifc.Bridge != nil:
			for _, m := range ifc.Bridge.Members {
				r.bridgeOf[m] = ifc.Name
			}
		case ifc.Kind == netcfg.VLAN && ifc.VLAN != nil:
			r.vlansOn[ifc.VLAN.Link] = append(r.vlansOn[ifc.VLAN.Link], ifc.Name)
		}
	}
	return r
}

// globalRoutesFor returns the top-level routes that belong to ifc: those
// whose next hop lies in one of its static subnets. Routes no interface
// claims go to every interface with a subnet, as cloud-init does for all.
func globalRoutesFor(c *netcfg.Config, ifc *netcfg.Interface) []netcfg.Route {
	var out []netcfg.Route
	for _, r := range c.Routes {
		owner := routeOwner(c, r)
		if owner == ifc.Name || (owner == "" && hasConfig(ifc)) {
			out = append(out, r)
		}
	}
	return out
}

func routeOwner(c *netcfg.Config, r netcfg.Route) string {
	for _, ifc := range c.Interfaces {
		for _, s := range ifc.Subnets {
			if s.Type == netcfg.Static && r.Via.IsValid() && s.Address.Masked().Contains(r.Via) {
				return ifc.Name
			}
		}
	}
	return ""
}

// hasConfig reports whether ifc has any subnet other than manual.
func hasConfig(ifc *netcfg.Interface) bool {
	for _, s := range ifc.Subnets {
		if s.Type != netcfg.Manual {
			return true
		}
	}
	return false
}

// ipv4MTU is the MTU the link gets: the interface's, else the first IPv4
// subnet's (cloud-init lets a subnet MTU win over the device's for IPv4).
func ipv4MTU(ifc *netcfg.Interface) int {
	for _, s := range ifc.Subnets {
		if s.MTU != 0 && !s.IPv6() {
			return s.MTU
		}
	}
	return ifc.MTU
}

// ipv6MTU is the first IPv6 subnet MTU, 0 when none.
func ipv6MTU(ifc *netcfg.Interface) int {
	for _, s := range ifc.Subnets {
		if s.MTU != 0 && s.IPv6() {
			return s.MTU
		}
	}
	return 0
}

// routeScope is the scope to write for r, or why the scope r has is left
// out: an IPv6 route has none (the kernel ignores it; networkd warns
// "Scope= is specified for IPv6 route. It will be ignored"), and a route
// via a gateway is of global scope (with link or host scope the kernel
// refuses its next hop, "Nexthop has invalid gateway", and networkd fails
// the whole link). Global scope needs no saying for IPv6.
func routeScope(r netcfg.Route) (scope, dropped string) {
	switch {
	case r.Scope == "" || r.Scope == "global" && r.To.Addr().Is6():
		return "", ""
	case r.To.Addr().Is6():
		return "", "an IPv6 route has no scope"
	case r.Via.IsValid() && r.Scope != "global":
		return "", "a route via a gateway cannot be of " + r.Scope + " scope"
	}
	return r.Scope, ""
}

// isDefault reports whether r is a default route.
func isDefault(r netcfg.Route) bool { return r.To.Bits() == 0 }

// dedupe keeps the first of each string.
func dedupe(in []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, s := range in {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}

// ifaceDNS is the interface's own DNS and that of all its subnets, in
// order, without repeats.
func ifaceDNS(ifc *netcfg.Interface) (ns, search []string) {
	for _, a := range ifc.DNS.Nameservers {
		ns = append(ns, a.String())
	}
	search = append(search, ifc.DNS.Search...)
	for _, s := range ifc.Subnets {
		for _, a := range s.DNS.Nameservers {
			ns = append(ns, a.String())
		}
		search = append(search, s.DNS.Search...)
	}
	return dedupe(ns), dedupe(search)
}

// virtual tells whether ifc is created by the network manager (a bond, a
// bridge or a VLAN) rather than a NIC.
func virtual(ifc *netcfg.Interface) bool {
	return ifc.Kind == netcfg.Bond || ifc.Kind == netcfg.Bridge || ifc.Kind == netcfg.VLAN
}

// globalDNSEverywhere tells, for the renderers that put the host-wide DNS
// on interfaces with static addresses only (netplan, network-manager, as
// cloud-init's netplan does), whether no interface qualifies: the
// host-wide DNS then goes to every configured interface that is not a bond
// or bridge member and has no DNS of its own, so that it is not lost.
func globalDNSEverywhere(c *netcfg.Config, rel relations) bool {
	if c.DNS.Empty() {
		return false
	}
	for i := range c.Interfaces {
		ifc := &c.Interfaces[i]
		if _, ok := rel.bondOf[ifc.Name]; ok {
			continue
		}
		if _, ok := rel.bridgeOf[ifc.Name]; ok {
			continue
		}
		if ns, search := ifaceDNS(ifc); len(ns) > 0 || len(search) > 0 {
			continue
		}
		for _, s := range ifc.Subnets {
			if s.Type == netcfg.Static {
				return false
			}
		}
	}
	return true
}

// hasStatic tells whether ifc has a static address.
func hasStatic(ifc *netcfg.Interface) bool {
	for _, s := range ifc.Subnets {
		if s.Type == netcfg.Static {
			return true
		}
	}
	return false
}

// hasAddressing tells whether ifc has addressing of its own: a subnet other
// than manual, accept-ra, routing rules or DNS.
func hasAddressing(ifc *netcfg.Interface) bool {
	return hasConfig(ifc) || ifc.AcceptRA != nil || len(ifc.RoutingPolicy) > 0 || !ifc.DNS.Empty()
}

// asBondMember is ifc, a bond member, without the addressing a bond member
// cannot have (networkd drops it: "Cannot enable DHCP= when Bond= is
// specified"; the bond carries the addresses), its link MTU kept. Lost
// names what goes.
func asBondMember(ifc *netcfg.Interface) *netcfg.Interface {
	m := *ifc
	m.MTU = ipv4MTU(ifc)
	m.Subnets, m.AcceptRA, m.RoutingPolicy, m.DNS = nil, nil, nil, netcfg.DNS{}
	m.DHCP4Overrides, m.DHCP6Overrides = nil, nil
	return &m
}

// anyConfigured tells whether any interface has a subnet other than
// manual.
func anyConfigured(c *netcfg.Config) bool {
	for i := range c.Interfaces {
		if hasConfig(&c.Interfaces[i]) {
			return true
		}
	}
	return false
}

// globalDNS returns the host-wide DNS as strings.
func globalDNS(c *netcfg.Config) (ns, search []string) {
	for _, a := range c.DNS.Nameservers {
		ns = append(ns, a.String())
	}
	return dedupe(ns), dedupe(c.DNS.Search)
}
