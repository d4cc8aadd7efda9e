package netcfg

import (
	"fmt"
	"net/netip"
	"path"
	"sort"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/earlyinit/earlyinit/internal/netcfg/yamlread"
	"github.com/earlyinit/earlyinit/internal/scalar"
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

// v2IPConfig is network_state's _v2_to_v1_ipcfg plus the nameserver half of
// _v2_common.
func (p *yparser) v2IPConfig(kvs []yamlread.KV, path string, iface *Interface, c *Config) error {
	if err := p.v2DHCP(kvs, path, iface); err != nil {
		return err
	}
	gw4, gw6, err := p.v2Gateways(kvs, path)
	if err != nil {
		return err
	}
	var dns DNS
	if nn := yamlread.Get(kvs, "nameservers"); nn != nil {
		npath := yamlread.Join(path, "nameservers")
		nkvs, err := p.Mapping(nn, npath)
		if err != nil {
			return err
		}
		p.ignoreUnknown(nkvs, []string{"addresses", "search"}, npath)
		// A single string is one or more addresses (cloud-init listifies).
		if dns, err = p.v1DNS(nkvs, "addresses", "search", npath, true); err != nil {
			return err
		}
	}
	if err := p.v2Addresses(kvs, path, iface, gw4, gw6, dns); err != nil {
		return err
	}
	if err := p.v2Routes(kvs, path, iface); err != nil {
		return err
	}
	// The device's own DNS. cloud-init's _v2_common also appends it to the
	// host-wide DNS, from where its renderers copy it onto other
	// interfaces; here it stays on its device.
	if !dns.Empty() {
		iface.DNS = dns
	}
	return nil
}

// v2DHCP adds the DHCPv4 then the DHCPv6 subnet, when on, with their
// overrides.
func (p *yparser) v2DHCP(kvs []yamlread.KV, path string, iface *Interface) error {
	dhcp4, _, err := p.Boolean(kvs, "dhcp4", path)
	if err != nil {
		return err
	}
	dhcp6, _, err := p.Boolean(kvs, "dhcp6", path)
	if err != nil {
		return err
	}
	for _, d := range []struct {
		on  bool
		typ SubnetType
		key string
		out **DHCPOverrides
	}{{dhcp4, DHCP4, "dhcp4-overrides", &iface.DHCP4Overrides}, {dhcp6, DHCP6, "dhcp6-overrides", &iface.DHCP6Overrides}} {
		if !d.on {
			continue // as cloud-init: overrides without the DHCP are ignored
		}
		sub := Subnet{Type: d.typ}
		if on := yamlread.Get(kvs, d.key); on != nil && !yamlread.IsNull(on) {
			o, metric, err := p.v2DHCPOverrides(on, yamlread.Join(path, d.key), d.typ == DHCP4)
			if err != nil {
				return err
			}
			*d.out, sub.Metric = o, metric
		}
		iface.Subnets = append(iface.Subnets, sub)
	}
	return nil
}

// v2Gateways reads gateway4 and gateway6, each of its own family.
func (p *yparser) v2Gateways(kvs []yamlread.KV, path string) (gw4, gw6 netip.Addr, err error) {
	for _, k := range []string{"gateway4", "gateway6"} {
		s, err := p.Str(kvs, k, path)
		if err != nil || s == "" {
			if err != nil {
				return netip.Addr{}, netip.Addr{}, err
			}
			continue
		}
		a, err := parseIP(s)
		if err != nil {
			return netip.Addr{}, netip.Addr{}, yamlread.Errorf(yamlread.Get(kvs, k), yamlread.Join(path, k), "%v", err)
		}
		if a.Is4() != (k == "gateway4") {
			return netip.Addr{}, netip.Addr{}, yamlread.Errorf(yamlread.Get(kvs, k), yamlread.Join(path, k), "%q is of the wrong family", s)
		}
		if k == "gateway4" {
			gw4 = a
		} else {
			gw6 = a
		}
	}
	return gw4, gw6, nil
}

// v2Addresses adds one static subnet per address, gw4 and gw6 on the first
// address of their family and dns on the first address.
func (p *yparser) v2Addresses(kvs []yamlread.KV, path string, iface *Interface, gw4, gw6 netip.Addr, dns DNS) error {
	an := yamlread.Get(kvs, "addresses")
	if an == nil {
		p.droppedGateways(path, gw4, gw6)
		return nil
	}
	apath := yamlread.Join(path, "addresses")
	items, err := p.List(an, apath)
	if err != nil {
		return err
	}
	for i, it := range items {
		pf, err := p.v2Address(it, fmt.Sprintf("%s[%d]", apath, i))
		if err != nil {
			return err
		}
		sub := Subnet{Type: Static, Address: pf}
		if pf.Addr().Is4() && gw4.IsValid() {
			sub.Gateway, gw4 = gw4, netip.Addr{}
		} else if pf.Addr().Is6() && gw6.IsValid() {
			sub.Gateway, gw6 = gw6, netip.Addr{}
		}
		if i == 0 {
			sub.DNS = dns
		}
		iface.Subnets = append(iface.Subnets, sub)
	}
	// As cloud-init: a gateway with no address of its family is dropped,
	// but not without a word.
	p.droppedGateways(path, gw4, gw6)
	return nil
}

// droppedGateways records the gateways left without an address of their
// family.
func (p *yparser) droppedGateways(path string, gw4, gw6 netip.Addr) {
	if gw4.IsValid() {
		p.ignored = append(p.ignored, yamlread.Join(path, "gateway4")+" (no IPv4 address)")
	}
	if gw6.IsValid() {
		p.ignored = append(p.ignored, yamlread.Join(path, "gateway6")+" (no IPv6 address)")
	}
}

// v2Address reads one address: a string, or netplan's mapping form
// ("10.0.0.2/24": {label: x}).
func (p *yparser) v2Address(it *yaml.Node, ipath string) (netip.Prefix, error) {
	r, err := p.Node(it)
	if err != nil {
		return netip.Prefix{}, err
	}
	var s string
	if r.Kind == yaml.MappingNode { // netplan: - "10.0.0.2/24": {label: x}
		m, err := p.Mapping(r, ipath)
		if err != nil {
			return netip.Prefix{}, err
		}
		if len(m) != 1 {
			return netip.Prefix{}, yamlread.Errorf(r, ipath, "want one address, have %d keys", len(m))
		}
		opts, err := p.Mapping(m[0].Val, yamlread.Join(ipath, m[0].Key))
		if err != nil {
			return netip.Prefix{}, err
		}
		p.ignoreUnknown(opts, nil, ipath) // label, lifetime: not kept
		s, r = m[0].Key, m[0].KNode
	} else if s, r, err = p.Scalar(r, ipath); err != nil {
		return netip.Prefix{}, err
	}
	pf, err := parseIPNet(s, "", nil)
	if err != nil {
		return netip.Prefix{}, yamlread.Errorf(r, ipath, "%v", err)
	}
	return pf, nil
}

// v2Routes puts the routes on the first subnet, adding a manual one to a
// device that has none.
func (p *yparser) v2Routes(kvs []yamlread.KV, path string, iface *Interface) error {
	rn := yamlread.Get(kvs, "routes")
	if rn == nil {
		return nil
	}
	rpath := yamlread.Join(path, "routes")
	items, err := p.List(rn, rpath)
	if err != nil {
		return err
	}
	var routes []Route
	for i, it := range items {
		r, err := p.v2Route(it, fmt.Sprintf("%s[%d]", rpath, i))
		if err != nil {
			return err
		}
		routes = append(routes, r)
	}
	if len(routes) > 0 {
		if len(iface.Subnets) == 0 {
			iface.Subnets = append(iface.Subnets, Subnet{Type: Manual})
		}
		iface.Subnets[0].Routes = routes
	}
	return nil
}

// v2DHCPOverrides reads dhcp4-overrides or dhcp6-overrides (v4 tells which):
// netplan's keys, with route-metric returned apart (it is the DHCP subnet's
// metric). A key netplan does not have for that family is an error, as in
// netplan.
func (p *yparser) v2DHCPOverrides(n *yaml.Node, path string, v4 bool) (*DHCPOverrides, int, error) {
	kvs, err := p.Mapping(n, path)
	if err != nil {
		return nil, 0, err
	}
	o := &DHCPOverrides{}
	metric := 0
	v4only := map[string]bool{"use-mtu": true, "use-routes": true, "send-hostname": true, "hostname": true}
	for _, kv := range kvs {
		kpath := yamlread.Join(path, kv.Key)
		if v4only[kv.Key] && !v4 {
			return nil, 0, yamlread.Errorf(kv.KNode, kpath, "is only for dhcp4-overrides")
		}
		if b := o.Flag(kv.Key); b != nil {
			v, set, err := p.Boolean(kvs, kv.Key, path)
			if err != nil {
				return nil, 0, err
			}
			if set {
				*b = &v
			}
			continue
		}
		switch kv.Key {
		case "hostname":
			if o.Hostname, err = p.Str(kvs, kv.Key, path); err != nil {
				return nil, 0, err
			}
		case "use-domains":
			v, err := p.Str(kvs, kv.Key, path)
			if err != nil {
				return nil, 0, err
			}
			if b, ok := scalar.WordYN(v); ok {
				o.UseDomains = fmt.Sprint(b)
			} else if strings.ToLower(v) == "route" {
				o.UseDomains = "route"
			} else {
				return nil, 0, yamlread.Errorf(kv.Val, kpath, "%q is not a boolean or \"route\"", v)
			}
		case "route-metric":
			if metric, err = p.NonNegative(kvs, kv.Key, path); err != nil {
				return nil, 0, err
			}
		default:
			return nil, 0, yamlread.Errorf(kv.KNode, kpath, "unknown key")
		}
	}
	if *o == (DHCPOverrides{}) {
		o = nil // only route-metric, or nothing
	}
	return o, metric, nil
}

func (p *yparser) v2Route(n *yaml.Node, path string) (Route, error) {
	var r Route
	kvs, err := p.Mapping(n, path)
	if err != nil {
		return r, err
	}
	p.ignoreUnknown(kvs, v2RouteKeys(), path)
	to, err := p.Str(kvs, "to", path)
	if err != nil {
		return r, err
	}
	via, err := p.Str(kvs, "via", path)
	if err != nil {
		return r, err
	}
	if via != "" {
		if r.Via, err = parseIP(via); err != nil {
			return r, yamlread.Errorf(yamlread.Get(kvs, "via"), yamlread.Join(path, "via"), "%v", err)
		}
	}
	switch {
	case to == "":
		return r, yamlread.Errorf(n, path, "route without to")
	case to == "default" && r.Via.Is6():
		r.To = netip.MustParsePrefix("::/0")
	case to == "default":
		r.To = netip.MustParsePrefix("0.0.0.0/0")
	case !strings.Contains(to, "/"):
		// A bare address is a host route, as netplan and networkd read
		// it (cloud-init's network_state would make it a /24 or /64).
		a, err := parseIP(strings.TrimSpace(to))
		if err != nil {
			return r, yamlread.Errorf(yamlread.Get(kvs, "to"), yamlread.Join(path, "to"), "%q: invalid IP", to)
		}
		r.To = netip.PrefixFrom(a, a.BitLen())
	default:
		if r.To, err = parseIPNet(to, "", nil); err != nil {
			return r, yamlread.Errorf(yamlread.Get(kvs, "to"), yamlread.Join(path, "to"), "%v", err)
		}
	}
	if r.Via.IsValid() && r.Via.Is4() != r.To.Addr().Is4() {
		return r, yamlread.Errorf(n, path, "via %s and to %s are of different families", r.Via, r.To)
	}
	if r.Metric, err = p.NonNegative(kvs, "metric", path); err != nil {
		return r, err
	}
	if r.Table, err = p.NonNegative(kvs, "table", path); err != nil {
		return r, err
	}
	if r.MTU, err = p.NonNegative(kvs, "mtu", path); err != nil {
		return r, err
	}
	if r.Scope, err = p.Str(kvs, "scope", path); err != nil {
		return r, err
	}
	switch r.Scope {
	case "", "global", "link", "host":
	default:
		return r, yamlread.Errorf(yamlread.Get(kvs, "scope"), yamlread.Join(path, "scope"), "%q is not global, link or host", r.Scope)
	}
	return r, nil
}
