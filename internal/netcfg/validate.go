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
		if iface.MTU < 0 {
			bad(i, iface, "negative MTU %d", iface.MTU)
		}
		switch iface.Kind {
		case Physical, Bond, VLAN, Bridge, Infiniband:
		default:
			bad(i, iface, "unknown kind")
		}
		if (iface.Kind == Bond) != (iface.Bond != nil) || (iface.Kind == VLAN) != (iface.VLAN != nil) || (iface.Kind == Bridge) != (iface.Bridge != nil) {
			bad(i, iface, "kind does not match its bond, vlan or bridge settings")
		}
		for j, s := range iface.Subnets {
			switch s.Type {
			case Static:
				if !s.Address.IsValid() {
					bad(i, iface, "subnets[%d]: static without an address", j)
				}
			case DHCP4, DHCP6, SLAAC, DHCPv6Stateless, DHCPv6Stateful, Manual:
			default:
				bad(i, iface, "subnets[%d]: unknown type %q", j, s.Type)
			}
		}
	}
	ref := func(i int, iface *Interface, what, name string) {
		if name == iface.Name {
			bad(i, iface, "%s %q is the interface itself", what, name)
		} else if _, ok := names[name]; !ok {
			bad(i, iface, "%s %q: no such interface", what, name)
		}
	}
	for i := range c.Interfaces {
		iface := &c.Interfaces[i]
		switch {
		case iface.VLAN != nil:
			if iface.VLAN.Link == "" {
				bad(i, iface, "vlan without a parent link")
			} else {
				ref(i, iface, "vlan link", iface.VLAN.Link)
			}
			if iface.VLAN.ID < 1 || iface.VLAN.ID > 4094 {
				bad(i, iface, "vlan id %d out of range 1-4094", iface.VLAN.ID)
			}
		case iface.Bond != nil:
			if len(iface.Bond.Members) == 0 {
				bad(i, iface, "bond without members")
			}
			for _, m := range iface.Bond.Members {
				ref(i, iface, "bond member", m)
			}
		case iface.Bridge != nil:
			for _, m := range iface.Bridge.Members {
				ref(i, iface, "bridge port", m)
			}
		}
	}
	if err := c.CheckValues(); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
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
