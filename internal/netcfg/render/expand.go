package render

import (
	"slices"

	"github.com/earlyinit/earlyinit/internal/netcfg"
)

// expandGlobs is c for the renderers that cannot write a name glob (eni,
// sysconfig, network-manager): every interface with a v2 match.name glob
// is replaced by one copy per live NIC it matches (Interface.Matches),
// named as that NIC, and the bonds, bridges and VLANs that name it name
// the copies instead. A match already configured by name elsewhere is
// left to that interface; a glob that matches no live NIC renders nothing
// (Lost names it). c itself is not changed.
func expandGlobs(c *netcfg.Config) *netcfg.Config {
	if !slices.ContainsFunc(c.Interfaces, func(i netcfg.Interface) bool { return i.MatchName != "" }) {
		return c
	}
	named := map[string]bool{}
	for _, ifc := range c.Interfaces {
		if ifc.MatchName == "" {
			named[ifc.Name] = true
		}
	}
	out := *c
	out.Interfaces = nil
	copies := map[string][]string{} // glob interface -> names of its copies
	for _, ifc := range c.Interfaces {
		if ifc.MatchName == "" {
			out.Interfaces = append(out.Interfaces, ifc)
			continue
		}
		copies[ifc.Name] = []string{}
		for _, m := range ifc.Matches {
			if named[m] {
				continue
			}
			named[m] = true
			cp := ifc
			cp.Name, cp.MatchName, cp.Matches, cp.NoRename = m, "", nil, true
			out.Interfaces = append(out.Interfaces, cp)
			copies[ifc.Name] = append(copies[ifc.Name], m)
		}
	}
	expand := func(names []string) []string {
		var r []string
		for _, n := range names {
			if cs, ok := copies[n]; ok {
				r = append(r, cs...)
			} else {
				r = append(r, n)
			}
		}
		return r
	}
	for i := range out.Interfaces {
		ifc := &out.Interfaces[i]
		switch {
		case ifc.Bond != nil:
			b := *ifc.Bond
			b.Members = expand(b.Members)
			ifc.Bond = &b
		case ifc.Bridge != nil:
			br := *ifc.Bridge
			br.Members = expand(br.Members)
			ifc.Bridge = &br
		case ifc.VLAN != nil:
			if cs, ok := copies[ifc.VLAN.Link]; ok && len(cs) > 0 {
				v := *ifc.VLAN
				v.Link = cs[0]
				ifc.VLAN = &v
			}
		}
	}
	return &out
}
