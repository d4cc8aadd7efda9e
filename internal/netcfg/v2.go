package netcfg

import (
	"fmt"
	"net/netip"
	"path"
	"sort"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/earlyinit/earlyinit/internal/netcfg/yamlread"
)

// paramName is a netplan parameter's name and the model's (v1,
// unprefixed) name for it. The tables are slices, static data, rather than
// maps, which would be built at package initialisation (issue 18).
type paramName struct{ v2, model string }

// lookupParam returns the model's name for v2 parameter key in names.
func lookupParam(names []paramName, key string) (string, bool) {
	for _, n := range names {
		if n.v2 == key {
			return n.model, true
		}
	}
	return "", false
}

// paramKeys returns the v2 names of names, sorted.
func paramKeys(names []paramName) []string {
	ks := make([]string, 0, len(names))
	for _, n := range names {
		ks = append(ks, n.v2)
	}
	sort.Strings(ks)
	return ks
}

// v2BondParams maps netplan bond parameters to model (v1, unprefixed) names:
// the inverse of network_state's NET_CONFIG_TO_V2, plus the netplan
// parameters cloud-init does not know (it fails on them), named after their
// sysfs files.
var v2BondParams = []paramName{
	{"ad-select", "ad-select"},
	{"arp-interval", "arp-interval"},
	{"arp-ip-target", "arp-ip-target"},
	{"arp-ip-targets", "arp-ip-target"},
	{"arp-validate", "arp-validate"},
	{"down-delay", "downdelay"},
	{"fail-over-mac-policy", "fail-over-mac"},
	{"lacp-rate", "lacp-rate"},
	{"mii-monitor-interval", "miimon"},
	{"min-links", "min-links"},
	{"mode", "mode"},
	{"gratuitous-arp", "num-grat-arp"},
	{"gratuitious-arp", "num-grat-arp"}, // netplan accepts the typo
	{"primary", "primary"},
	{"primary-reselect-policy", "primary-reselect"},
	{"up-delay", "updelay"},
	{"transmit-hash-policy", "xmit-hash-policy"},
	{"learn-packet-interval", "lp-interval"},
	{"packets-per-slave", "packets-per-slave"},
	{"all-slaves-active", "all-slaves-active"},
	{"arp-all-targets", "arp-all-targets"},
	{"resend-igmp", "resend-igmp"},
}

// v2BridgeParams maps netplan bridge parameters to model names.
var v2BridgeParams = []paramName{
	{"ageing-time", "ageing"},
	{"priority", "priority"},
	{"forward-delay", "fd"},
	{"hello-time", "hello"},
	{"max-age", "maxage"},
	{"path-cost", "pathcost"},
	{"port-priority", "portprio"},
	{"stp", "stp"},
}

// parseV2 interprets network config v2 as network_state's v2 handlers do:
// sections in document order; each ethernet named by set-name, else (with a
// live MAC map, through Parse) the current name of the NIC with its MAC, else
// its id; subnets dhcp4, dhcp6, then one static subnet per address, with
// gateway4 and gateway6 on the first address of their family and the
// nameservers on the first address; routes on the first subnet; nameservers
// also go to the interface's DNS and, when they list addresses, to the global
// DNS.
//
// Where cloud-init 22.4.2 is wrong this does the right thing: references to
// an ethernet by its id (bond and bridge interfaces, vlan link) become its
// name when set-name renames it; routes on a device without subnets are kept
// in a manual subnet (cloud-init drops them); "to: default" and route metrics
// are honoured; a macaddress on a bond, bridge or VLAN is kept; addresses in
// netplan's mapping form ("10.0.0.2/24": {label: ...}) are read. wifis are
// ignored (as cloud-init does for every renderer but netplan); match.name is
// not kept, as in cloud-init. dhcp4-overrides and dhcp6-overrides are kept
// for every renderer (cloud-init: networkd and netplan only).
func (p *yparser) parseV2(top []yamlread.KV, path string) (*Config, error) {
	c := &Config{Version: 2}
	// First pass: ethernet ids to names, for references.
	devs, ids, err := p.v2Devices(top, path)
	if err != nil {
		return nil, err
	}
	for _, d := range devs {
		iface, err := p.v2Interface(d, ids)
		if err != nil {
			return nil, err
		}
		if err := p.v2IPConfig(d.kvs, d.path, &iface, c); err != nil {
			return nil, err
		}
		c.Interfaces = append(c.Interfaces, iface)
	}
	addMissingMembers(c)
	return c, nil
}

// v2DeviceKeys are the keys of a v2 device the parser reads, by section;
// any other is recorded as ignored.
func v2DeviceKeys(section string) []string {
	common := []string{"mtu", "accept-ra", "optional", "dhcp4", "dhcp6", "dhcp4-overrides",
		"dhcp6-overrides", "addresses", "gateway4", "gateway6", "nameservers", "routes", "routing-policy"}
	switch section {
	case "ethernets":
		// An ethernet's macaddress (the address to set) is not kept.
		return append(common, "match", "set-name", "wakeonlan")
	case "bonds", "bridges":
		return append(common, "macaddress", "interfaces", "parameters")
	case "vlans":
		return append(common, "macaddress", "id", "link")
	}
	return common
}

// v2Dev is one entry of a device section, kept for the second pass.
type v2Dev struct {
	section, id string
	kvs         []yamlread.KV
	node        *yaml.Node
	path        string
}

// v2IDs maps ethernet ids to their interface names.
type v2IDs map[string]string

// ref is the interface name a device id refers to: an ethernet's name, else
// the id itself.
func (ids v2IDs) ref(id string) string {
	if n, ok := ids[id]; ok {
		return n
	}
	return id
}

// v2Devices lists the entries of the device sections in document order and
// names the ethernets; an unknown section is an error.
func (p *yparser) v2Devices(top []yamlread.KV, path string) ([]v2Dev, v2IDs, error) {
	ids := v2IDs{}
	var devs []v2Dev
	for _, sec := range top {
		spath := yamlread.Join(path, sec.Key)
		switch sec.Key {
		case "version", "renderer":
			// renderer: the root decides which network manager runs.
			continue
		case "wifis":
			p.ignored = append(p.ignored, spath)
			continue
		case "ethernets", "bonds", "bridges", "vlans":
		default:
			return nil, nil, yamlread.Errorf(sec.KNode, spath, "unknown or unsupported key")
		}
		entries, err := p.Mapping(sec.Val, spath)
		if err != nil {
			return nil, nil, err
		}
		for _, e := range entries {
			epath := yamlread.Join(spath, e.Key)
			kvs, err := p.Mapping(e.Val, epath)
			if err != nil {
				return nil, nil, err
			}
			p.ignoreUnknown(kvs, v2DeviceKeys(sec.Key), epath)
			d := v2Dev{section: sec.Key, id: e.Key, kvs: kvs, node: e.KNode, path: epath}
			if sec.Key == "ethernets" {
				name, err := p.v2EthernetName(kvs, e.Key, epath)
				if err != nil {
					return nil, nil, err
				}
				ids[e.Key] = name
			}
			devs = append(devs, d)
		}
	}
	return devs, ids, nil
}

// v2Interface reads device d but for its IP configuration: its section's
// keys, then the keys every device has.
func (p *yparser) v2Interface(d v2Dev, ids v2IDs) (Interface, error) {
	iface := Interface{Name: d.id}
	var err error
	switch d.section {
	case "ethernets":
		err = p.v2Ethernet(&iface, d, ids)
	case "bonds", "bridges":
		err = p.v2BondBridge(&iface, d, ids)
	case "vlans":
		err = p.v2VLAN(&iface, d, ids)
	}
	if err != nil {
		return Interface{}, err
	}
	if d.section != "ethernets" {
		if mac, err := p.Str(d.kvs, "macaddress", d.path); err != nil {
			return Interface{}, err
		} else if mac != "" {
			if iface.MAC, err = parseMAC(mac); err != nil {
				return Interface{}, yamlread.Errorf(yamlread.Get(d.kvs, "macaddress"), yamlread.Join(d.path, "macaddress"), "%v", err)
			}
		}
	}
	if iface.MTU, err = p.mtu(d.kvs, d.path); err != nil {
		return Interface{}, err
	}
	if ra, ok, err := p.Boolean(d.kvs, "accept-ra", d.path); err != nil {
		return Interface{}, err
	} else if ok {
		iface.AcceptRA = &ra
	}
	if iface.Optional, _, err = p.Boolean(d.kvs, "optional", d.path); err != nil {
		return Interface{}, err
	}
	if iface.RoutingPolicy, err = p.v2RoutingPolicy(d.kvs, d.path); err != nil {
		return Interface{}, err
	}
	return iface, nil
}

// v2RoutingPolicy reads routing-policy: a list of {from, to, table,
// priority, mark, type-of-service}, each with from or to.
func (p *yparser) v2RoutingPolicy(kvs []yamlread.KV, path string) ([]Rule, error) {
	rn := yamlread.Get(kvs, "routing-policy")
	if rn == nil {
		return nil, nil
	}
	rpath := yamlread.Join(path, "routing-policy")
	items, err := p.List(rn, rpath)
	if err != nil {
		return nil, err
	}
	var out []Rule
	for i, it := range items {
		ipath := fmt.Sprintf("%s[%d]", rpath, i)
		rkvs, err := p.Mapping(it, ipath)
		if err != nil {
			return nil, err
		}
		p.ignoreUnknown(rkvs, v2RuleKeys(), ipath)
		var r Rule
		for _, k := range []string{"from", "to"} {
			v, err := p.Str(rkvs, k, ipath)
			if err != nil {
				return nil, err
			}
			if v == "" {
				continue
			}
			pf, err := parseIPNet(v, "", nil)
			if err != nil {
				return nil, yamlread.Errorf(yamlread.Get(rkvs, k), yamlread.Join(ipath, k), "%v", err)
			}
			if !strings.Contains(v, "/") { // a bare address is a host
				pf = netip.PrefixFrom(pf.Addr(), pf.Addr().BitLen())
			}
			if k == "from" {
				r.From = pf
			} else {
				r.To = pf
			}
		}
		if !r.From.IsValid() && !r.To.IsValid() {
			return nil, yamlread.Errorf(it, ipath, "rule without from or to")
		}
		if r.From.IsValid() && r.To.IsValid() && r.From.Addr().Is4() != r.To.Addr().Is4() {
			return nil, yamlread.Errorf(it, ipath, "from %s and to %s are of different families", r.From, r.To)
		}
		for _, f := range []struct {
			key string
			out *int
		}{{"table", &r.Table}, {"priority", &r.Priority}, {"mark", &r.Mark}, {"type-of-service", &r.TOS}} {
			if *f.out, err = p.NonNegative(rkvs, f.key, ipath); err != nil {
				return nil, err
			}
		}
		if r.TOS > 255 {
			return nil, yamlread.Errorf(yamlread.Get(rkvs, "type-of-service"), yamlread.Join(ipath, "type-of-service"), "%d is over 255", r.TOS)
		}
		out = append(out, r)
	}
	return out, nil
}

// v2Ethernet makes iface the physical NIC of ethernet d: its name, and the
// MAC and driver it matches.
func (p *yparser) v2Ethernet(iface *Interface, d v2Dev, ids v2IDs) error {
	iface.Kind = Physical
	iface.Name = ids[d.id]
	match, err := p.Mapping(nodeOr(yamlread.Get(d.kvs, "match")), yamlread.Join(d.path, "match"))
	if err != nil {
		return err
	}
	if mac, err := p.Str(match, "macaddress", yamlread.Join(d.path, "match")); err != nil {
		return err
	} else if mac != "" {
		if iface.MAC, err = parseMAC(mac); err != nil {
			return yamlread.Errorf(yamlread.Get(match, "macaddress"), yamlread.Join(d.path, "match.macaddress"), "%v", err)
		}
	}
	if iface.Driver, err = p.Str(match, "driver", yamlread.Join(d.path, "match")); err != nil {
		return err
	}
	p.ignoreUnknown(match, v2MatchKeys(), yamlread.Join(d.path, "match"))
	setName, err := p.Str(d.kvs, "set-name", d.path)
	if err != nil {
		return err
	}
	iface.NoRename = setName == ""
	if iface.WakeOnLAN, _, err = p.Boolean(d.kvs, "wakeonlan", d.path); err != nil {
		return err
	}
	name, err := p.Str(match, "name", yamlread.Join(d.path, "match"))
	if err != nil || !isGlob(name) {
		return err
	}
	// A glob: the renderers that can write one match on it; for the
	// others, the live NICs it matches (and the MAC, if any).
	iface.MatchName = name
	for mac, n := range p.macToName {
		if ok, _ := path.Match(name, n); ok && (iface.MAC == "" || iface.MAC == mac) {
			iface.Matches = append(iface.Matches, n)
		}
	}
	sort.Strings(iface.Matches)
	return nil
}

// isGlob tells whether a match.name is a shell glob rather than a name.
func isGlob(s string) bool { return strings.ContainsAny(s, "*?[") }

// v2BondBridge makes iface the bond or bridge of d: its interfaces, by
// name, and its parameters.
func (p *yparser) v2BondBridge(iface *Interface, d v2Dev, ids v2IDs) error {
	members, err := p.memberList(d.kvs, "interfaces", d.node, d.path)
	if err != nil {
		return err
	}
	for i := range members {
		members[i] = ids.ref(members[i])
	}
	params, err := p.Mapping(nodeOr(yamlread.Get(d.kvs, "parameters")), yamlread.Join(d.path, "parameters"))
	if err != nil {
		return err
	}
	if d.section == "bonds" {
		if len(members) == 0 {
			return yamlread.Errorf(d.node, d.path, "bond without interfaces")
		}
		iface.Kind = Bond
		iface.Bond = &BondConfig{Members: members, Params: map[string]string{}}
		return p.v2Params(params, v2BondParams, iface.Bond.Params, yamlread.Join(d.path, "parameters"))
	}
	iface.Kind = Bridge
	iface.Bridge = &BridgeConfig{Members: members, Params: map[string]string{}}
	return p.v2Params(params, v2BridgeParams, iface.Bridge.Params, yamlread.Join(d.path, "parameters"))
}

// v2VLAN makes iface the VLAN of d: its id and its link, by name.
func (p *yparser) v2VLAN(iface *Interface, d v2Dev, ids v2IDs) error {
	iface.Kind = VLAN
	id, ok, err := p.Integer(d.kvs, "id", d.path)
	if err != nil {
		return err
	}
	if !ok {
		return yamlread.Errorf(d.node, d.path, "vlan without id")
	}
	if id < 1 || id > 4094 {
		return yamlread.Errorf(yamlread.Get(d.kvs, "id"), yamlread.Join(d.path, "id"), "%d out of range 1-4094", id)
	}
	link, err := p.Str(d.kvs, "link", d.path)
	if err != nil {
		return err
	}
	if link == "" {
		return yamlread.Errorf(d.node, d.path, "vlan without link")
	}
	iface.VLAN = &VLANConfig{ID: id, Link: ids.ref(link)}
	return nil
}

func (p *yparser) v2EthernetName(kvs []yamlread.KV, id, path string) (string, error) {
	setName, err := p.Str(kvs, "set-name", path)
	if err != nil || setName != "" {
		return setName, err
	}
	match, err := p.Mapping(nodeOr(yamlread.Get(kvs, "match")), yamlread.Join(path, "match"))
	if err != nil {
		return "", err
	}
	mac, err := p.Str(match, "macaddress", yamlread.Join(path, "match"))
	if err != nil {
		return "", err
	}
	if m, err := parseMAC(mac); err == nil && p.macToName[m] != "" {
		return p.macToName[m], nil
	}
	// match.name that is a plain name is the NIC's name (cloud-init binds
	// the config to one named after the id instead).
	if name, err := p.Str(match, "name", yamlread.Join(path, "match")); err != nil {
		return "", err
	} else if name != "" && !isGlob(name) {
		return name, nil
	}
	return id, nil
}

func (p *yparser) v2Params(params []yamlread.KV, names []paramName, out map[string]string, path string) error {
	for _, kv := range params {
		key, ok := lookupParam(names, kv.Key)
		kpath := yamlread.Join(path, kv.Key)
		if !ok {
			return yamlread.Errorf(kv.KNode, kpath, "unknown parameter")
		}
		r, err := p.Node(kv.Val)
		if err != nil {
			return err
		}
		var v string
		if r.Kind == yaml.MappingNode { // path-cost, port-priority: {port: value}
			ports, err := p.Mapping(r, kpath)
			if err != nil {
				return err
			}
			var parts []string
			for _, pv := range ports {
				s, _, err := p.Scalar(pv.Val, yamlread.Join(kpath, pv.Key))
				if err != nil {
					return err
				}
				parts = append(parts, pv.Key+" "+s)
			}
			v = strings.Join(parts, ",")
		} else if v, err = p.paramValue(r, kpath, " "); err != nil {
			return err
		}
		if key == "stp" {
			if v, err = stpValue(v); err != nil {
				return yamlread.Errorf(r, kpath, "%v", err)
			}
		}
		out[key] = v
	}
	return nil
}
