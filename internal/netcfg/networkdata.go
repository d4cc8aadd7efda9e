package netcfg

import (
	"fmt"
	"strings"

	"github.com/earlyinit/earlyinit/internal/netcfg/jsonobj"
	"github.com/earlyinit/earlyinit/internal/scalar"
)

// physicalLinkType tells whether typ is a network_data.json link type
// cloud-init treats as a physical NIC (its KNOWN_PHYSICAL_TYPES, plus the
// types Nova emits that cloud-init only warns about). A missing or null
// type is physical too.
func physicalLinkType(typ string) bool {
	switch typ {
	case "", "physical", "phy", "ethernet", "ovs", "vif", "tap", "bridge", "hw_veb", "hyperv",
		"vhostuser", "vdpa", "macvtap", "dvs",
		"bgpovs",    // OVH
		"cascading": // OpenTelekomCloud
		return true
	}
	return false
}

// ParseNetworkData parses OpenStack's network_data.json the way cloud-init's
// convert_net_json does, into the model.
//
// Physical links are named, in order: by the link's "name" (not in the
// OpenStack spec, but honoured as cloud-init does), else by macToName (keys
// lower-case MACs, usually the live system's NICs). A physical link whose MAC
// has no name gets Name "" (cloud-init would raise): the caller must name it
// from the live system before rendering; Validate reports unnamed interfaces.
// A bond or VLAN that refers to such an unnamed link is an error, since its
// member list or name would be meaningless. Bonds are named bond0, bond1, ...
// in link order and VLANs <parent>.<vlan_id>, as cloud-init does.
//
// Where cloud-init 22.4.2 is wrong this parser does the right thing:
// unknown link and network types are errors (cloud-init warns and treats the
// link as physical); bond_* keys are normalised to model names ("mode",
// "miimon", "xmit-hash-policy"; cloud-init keeps "bond_mode", which its
// renderers ignore); a network naming an unknown link is an error (cloud-init
// drops it); only top-level services of type "dns" become nameservers; and
// per-network "services" of type "dns" become that subnet's nameservers
// (cloud-init 22.4.2 ignores them). A default route (0.0.0.0/0 or ::/0) stays
// in the subnet's Routes, exactly as cloud-init's network_state keeps it.
func ParseNetworkData(data []byte, macToName map[string]string) (*Config, error) {
	c, err := parseNetworkData(data, macToName)
	if err != nil {
		return nil, fmt.Errorf("network_data.json: %w", err)
	}
	return c, nil
}

// ndLink is what the parser learnt of a link, for references by id.
type ndLink struct {
	index int // in Config.Interfaces
	name  string
}

// ndRef is a bond or VLAN whose link ids are resolved to names once every
// link is named.
type ndRef struct {
	ifIndex int
	link    string // vlan_link
	members []string
	where   string
}

// ndParser is the state of one network_data.json parse.
type ndParser struct {
	c          *Config
	macToName  map[string]string
	byID       map[string]*ndLink
	networks   []jsonobj.Object
	netsByLink map[string][]int // indexes into networks, by link id
	bonds      int              // bonds named so far
	refs       []ndRef
}

// parseNetworkData is ParseNetworkData without the file name on its errors:
// links first, then the references between them, then the services.
func parseNetworkData(data []byte, macToName map[string]string) (*Config, error) {
	o, err := jsonobj.Decode(data)
	if err != nil {
		return nil, err
	}
	links, err := o.Objects("links")
	if err != nil {
		return nil, err
	}
	networks, err := o.Objects("networks")
	if err != nil {
		return nil, err
	}
	services, err := o.Objects("services")
	if err != nil {
		return nil, err
	}

	p := &ndParser{c: &Config{Version: 1}, macToName: macToName, networks: networks}
	ids, err := p.indexLinks(links)
	if err != nil {
		return nil, err
	}
	// Networks by the link they attach to, checked up front so that a
	// network naming an unknown link is reported.
	if err := p.indexNetworks(); err != nil {
		return nil, err
	}
	for i, l := range links {
		if err := p.link(i, ids[i], l); err != nil {
			return nil, err
		}
	}
	if err := p.resolveRefs(); err != nil {
		return nil, err
	}
	if err := p.services(services); err != nil {
		return nil, err
	}
	p.c.Ignored = ndIgnored(links, networks, services)
	return p.c, nil
}

// indexLinks records every link's id in p.byID and returns the ids in link
// order; a missing or duplicate id is an error.
func (p *ndParser) indexLinks(links []jsonobj.Object) ([]string, error) {
	p.byID = map[string]*ndLink{}
	ids := make([]string, len(links))
	for i, l := range links {
		id, _, err := l.Str("id")
		if err != nil {
			return nil, fmt.Errorf("links[%d]: %w", i, err)
		}
		if id == "" {
			return nil, fmt.Errorf("links[%d]: no id", i)
		}
		if _, dup := p.byID[id]; dup {
			return nil, fmt.Errorf("links[%d] (id %q): duplicate id", i, id)
		}
		p.byID[id] = &ndLink{index: -1}
		ids[i] = id
	}
	return ids, nil
}

// indexNetworks fills p.netsByLink; a network naming an unknown link is
// skipped with a warning (cloud-init drops it silently).
func (p *ndParser) indexNetworks() error {
	p.netsByLink = map[string][]int{}
	for i, n := range p.networks {
		nid, _, err := n.Str("id")
		if err != nil {
			return fmt.Errorf("networks[%d]: %w", i, err)
		}
		link, _, err := n.Str("link")
		if err != nil {
			return fmt.Errorf("networks[%d] (id %q): %w", i, nid, err)
		}
		if _, ok := p.byID[link]; !ok {
			p.c.Warnings = append(p.c.Warnings, fmt.Sprintf("network_data.json: networks[%d] (id %q): link %q: no such link; network skipped", i, nid, link))
			continue
		}
		p.netsByLink[link] = append(p.netsByLink[link], i)
	}
	return nil
}

// link adds links[i] (with the given id) and its networks to p.c as one
// interface.
func (p *ndParser) link(i int, id string, l jsonobj.Object) error {
	where := fmt.Sprintf("links[%d] (id %q)", i, id)
	typ, _, err := l.Str("type")
	if err != nil {
		return fmt.Errorf("%s: %w", where, err)
	}
	mac, name, mtu, err := ndLinkCommon(l, where)
	if err != nil {
		return err
	}
	iface := Interface{MTU: mtu}
	switch {
	case typ == "bond":
		err = p.bond(&iface, l, mac, where)
	case typ == "vlan":
		err = p.vlan(&iface, l, where)
	case physicalLinkType(typ):
		err = p.physical(&iface, mac, name, where)
	default:
		// As cloud-init: an unknown type is a NIC.
		p.c.Warnings = append(p.c.Warnings, fmt.Sprintf("network_data.json: %s: unknown type %q, taken as a physical NIC as cloud-init does", where, typ))
		err = p.physical(&iface, mac, name, where)
	}
	if err != nil {
		return err
	}

	for _, ni := range p.netsByLink[id] {
		if err := ndSubnet(&iface, p.networks[ni], ni); err != nil {
			return err
		}
	}
	p.byID[id].index = len(p.c.Interfaces)
	p.c.Interfaces = append(p.c.Interfaces, iface)
	return nil
}

// ndLinkCommon reads the keys every link type may have: its MAC
// (normalised, "" if none), its name and its MTU.
func ndLinkCommon(l jsonobj.Object, where string) (mac, name string, mtu int, err error) {
	mac, hasMAC, err := l.Str("ethernet_mac_address")
	if err != nil {
		return "", "", 0, fmt.Errorf("%s: %w", where, err)
	}
	if hasMAC && mac != "" {
		if mac, err = parseMAC(mac); err != nil {
			return "", "", 0, fmt.Errorf("%s: ethernet_mac_address: %w", where, err)
		}
	} else {
		mac = ""
	}
	name, _, err = l.Str("name")
	if err != nil {
		return "", "", 0, fmt.Errorf("%s: %w", where, err)
	}
	mtu, _, err = l.Integer("mtu")
	if err != nil {
		return "", "", 0, fmt.Errorf("%s: %w", where, err)
	}
	if mtu < 0 {
		return "", "", 0, fmt.Errorf("%s: mtu: %d is negative", where, mtu)
	}
	return mac, name, mtu, nil
}

// bond makes iface the next bond (bond0, bond1, ...) from link l; its
// members are resolved to names later.
func (p *ndParser) bond(iface *Interface, l jsonobj.Object, mac, where string) error {
	iface.Kind = Bond
	iface.MAC = mac
	iface.Name = fmt.Sprintf("bond%d", p.bonds)
	p.bonds++
	members, err := l.List("bond_links")
	if err != nil {
		return fmt.Errorf("%s: %w", where, err)
	}
	if len(members) == 0 {
		return fmt.Errorf("%s: bond without bond_links", where)
	}
	var mids []string
	for j, m := range members {
		s, ok := m.(string)
		if !ok {
			return fmt.Errorf("%s: bond_links[%d]: want a link id, have %s", where, j, scalar.JSONNoun(m))
		}
		if _, ok := p.byID[s]; !ok {
			return fmt.Errorf("%s: bond_links[%d]: %q: no such link", where, j, s)
		}
		mids = append(mids, s)
	}
	params, err := ndBondParams(l, where)
	if err != nil {
		return err
	}
	iface.Bond = &BondConfig{Params: params}
	p.refs = append(p.refs, ndRef{ifIndex: len(p.c.Interfaces), members: mids, where: where})
	return nil
}

// ndBondParams returns a bond link's bond_* keys (other than bond_links)
// under their model names: "bond_xmit_hash_policy" is "xmit-hash-policy".
func ndBondParams(l jsonobj.Object, where string) (map[string]string, error) {
	params := map[string]string{}
	for k, v := range l {
		if k == "bond_links" || !strings.HasPrefix(k, "bond") {
			continue
		}
		key := strings.TrimLeft(strings.TrimPrefix(k, "bond"), "_-")
		key = strings.ReplaceAll(key, "_", "-")
		if key == "" {
			continue
		}
		val, err := jsonobj.ParamString(v)
		if err != nil {
			return nil, fmt.Errorf("%s: %s: %w", where, k, err)
		}
		params[key] = val
	}
	return params, nil
}

// vlan makes iface a VLAN from link l; its parent and name are resolved
// later.
func (p *ndParser) vlan(iface *Interface, l jsonobj.Object, where string) error {
	iface.Kind = VLAN
	parent, ok, err := l.Str("vlan_link")
	if err != nil {
		return fmt.Errorf("%s: %w", where, err)
	}
	if !ok || parent == "" {
		return fmt.Errorf("%s: vlan without vlan_link", where)
	}
	if _, ok := p.byID[parent]; !ok {
		return fmt.Errorf("%s: vlan_link %q: no such link", where, parent)
	}
	vid, ok, err := l.Integer("vlan_id")
	if err != nil {
		return fmt.Errorf("%s: %w", where, err)
	}
	if !ok {
		return fmt.Errorf("%s: vlan without vlan_id", where)
	}
	if vid < 1 || vid > 4094 {
		return fmt.Errorf("%s: vlan_id %d out of range 1-4094", where, vid)
	}
	vmac, ok, err := l.Str("vlan_mac_address")
	if err != nil {
		return fmt.Errorf("%s: %w", where, err)
	}
	if ok && vmac != "" {
		if iface.MAC, err = parseMAC(vmac); err != nil {
			return fmt.Errorf("%s: vlan_mac_address: %w", where, err)
		}
	}
	iface.VLAN = &VLANConfig{ID: vid}
	p.refs = append(p.refs, ndRef{ifIndex: len(p.c.Interfaces), link: parent, where: where})
	return nil
}

// physical makes iface a physical NIC named by the link's name, else by
// its MAC through p.macToName ("" if the MAC is not known).
func (p *ndParser) physical(iface *Interface, mac, name, where string) error {
	iface.Kind = Physical
	iface.MAC = mac
	switch {
	case name != "":
		iface.Name = name
	case mac == "":
		return fmt.Errorf("%s: no ethernet_mac_address or name", where)
	default:
		iface.Name = p.macToName[mac]
	}
	return nil
}

// resolveRefs names VLANs after their parents and fills bond members, now
// that all links are named; a reference to an unnamed link is an error.
func (p *ndParser) resolveRefs() error {
	c := p.c
	nameOf := func(id string) string { return c.Interfaces[p.byID[id].index].Name }
	// VLANs may sit on VLANs or bonds: resolve in link order, which is
	// enough for OpenStack (parents come first); a parent VLAN declared
	// later is named below in a second pass.
	for pass := 0; pass < 2; pass++ {
		for _, r := range p.refs {
			iface := &c.Interfaces[r.ifIndex]
			if iface.Kind != VLAN {
				continue
			}
			parent := nameOf(r.link)
			iface.VLAN.Link = parent
			iface.Name = fmt.Sprintf("%s.%d", parent, iface.VLAN.ID)
		}
	}
	for _, r := range p.refs {
		iface := &c.Interfaces[r.ifIndex]
		switch iface.Kind {
		case VLAN:
			if iface.VLAN.Link == "" || strings.HasPrefix(iface.VLAN.Link, ".") {
				return fmt.Errorf("%s: vlan_link %q has no interface name (its MAC is not on this system and it has no \"name\")", r.where, r.link)
			}
		case Bond:
			for _, m := range r.members {
				n := nameOf(m)
				if n == "" {
					return fmt.Errorf("%s: bond link %q has no interface name (its MAC is not on this system and it has no \"name\")", r.where, m)
				}
				iface.Bond.Members = append(iface.Bond.Members, n)
			}
		}
	}
	return nil
}
