package netcfg

import (
	"errors"
	"fmt"
)

// Validate checks the configuration as a whole: every interface is named,
// once, with a name the kernel and every renderer accept; every value is
// safe for the files it lands in (CheckValues); physical interfaces do not
// share a MAC; a VLAN's parent, a bond's members and a bridge's ports are
// interfaces of this configuration; bonds have members. Parsers check each
// entry; Validate checks the references between entries, once names are
// final (see ParseNetworkData). It reports every problem it finds, joined.
func (c *Config) Validate() error {
	if c.Disabled {
		return nil
	}
	var errs []error
	bad := func(i int, iface *Interface, format string, args ...any) {
		what := fmt.Sprintf("interfaces[%d] (%s %q)", i, iface.Kind, iface.Name)
		errs = append(errs, fmt.Errorf("%s: %s", what, fmt.Sprintf(format, args...)))
	}
	names := map[string]int{}
	macs := map[string]int{}
	for i := range c.Interfaces {
		iface := &c.Interfaces[i]
		if iface.Name == "" {
			bad(i, iface, "no name (MAC %q)", iface.MAC)
		} else if j, dup := names[iface.Name]; dup {
			bad(i, iface, "name already used by interfaces[%d]", j)
		} else {
			names[iface.Name] = i
		}
		if iface.Kind == Physical && iface.MAC != "" {
			if j, dup := macs[iface.MAC]; dup {
				bad(i, iface, "MAC %s already used by interfaces[%d] (%q)", iface.MAC, j, c.Interfaces[j].Name)
			} else {
				macs[iface.MAC] = i
			}
		}
		validateShape(iface, func(format string, args ...any) { bad(i, iface, format, args...) })
	}
	for i := range c.Interfaces {
		iface := &c.Interfaces[i]
		validateRefs(iface, names, func(format string, args ...any) { bad(i, iface, format, args...) })
	}
	if err := c.CheckValues(); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// validateShape reports, through bad, what is wrong with iface on its own:
// a negative MTU, an unknown kind, kind-specific settings of another kind,
// and subnets of an unknown type or static without an address.
func validateShape(iface *Interface, bad func(format string, args ...any)) {
	if iface.MTU < 0 {
		bad("negative MTU %d", iface.MTU)
	}
	switch iface.Kind {
	case Physical, Bond, VLAN, Bridge, Infiniband:
	default:
		bad("unknown kind")
	}
	if (iface.Kind == Bond) != (iface.Bond != nil) || (iface.Kind == VLAN) != (iface.VLAN != nil) || (iface.Kind == Bridge) != (iface.Bridge != nil) {
		bad("kind does not match its bond, vlan or bridge settings")
	}
	for j, s := range iface.Subnets {
		switch s.Type {
		case Static:
			if !s.Address.IsValid() {
				bad("subnets[%d]: static without an address", j)
			}
		case DHCP4, DHCP6, SLAAC, DHCPv6Stateless, DHCPv6Stateful, Manual:
		default:
			bad("subnets[%d]: unknown type %q", j, s.Type)
		}
	}
}

// validateRefs reports, through bad, a VLAN's missing or unknown parent or
// out-of-range id, a bond without members, and bond members or bridge
// ports that are not other interfaces of names (name -> index).
func validateRefs(iface *Interface, names map[string]int, bad func(format string, args ...any)) {
	ref := func(what, name string) {
		if name == iface.Name {
			bad("%s %q is the interface itself", what, name)
		} else if _, ok := names[name]; !ok {
			bad("%s %q: no such interface", what, name)
		}
	}
	switch {
	case iface.VLAN != nil:
		if iface.VLAN.Link == "" {
			bad("vlan without a parent link")
		} else {
			ref("vlan link", iface.VLAN.Link)
		}
		if iface.VLAN.ID < 1 || iface.VLAN.ID > 4094 {
			bad("vlan id %d out of range 1-4094", iface.VLAN.ID)
		}
	case iface.Bond != nil:
		if len(iface.Bond.Members) == 0 {
			bad("bond without members")
		}
		for _, m := range iface.Bond.Members {
			ref("bond member", m)
		}
	case iface.Bridge != nil:
		for _, m := range iface.Bridge.Members {
			ref("bridge port", m)
		}
	}
}

// RenameMap returns MAC -> name for the physical interfaces that have a MAC
// and a name: the NICs to rename. v2 ethernets without set-name (NoRename)
// are left out, as cloud-init does not rename them.
func (c *Config) RenameMap() map[string]string {
	m := map[string]string{}
	for _, iface := range c.Interfaces {
		if iface.Kind == Physical && iface.MAC != "" && iface.Name != "" && !iface.NoRename {
			m[iface.MAC] = iface.Name
		}
	}
	return m
}
