// Package netcfg is the network model: one description of interfaces, their
// addresses, routes and DNS, that every parser (network_data.json, network
// config v1 and v2, ENI) produces and every renderer (internal/netcfg/render)
// consumes. It mirrors cloud-init's network_state so renderers can be checked
// against cloud-init fact for fact. This package knows nothing of renderers.
package netcfg

import "net/netip"

// Config is a whole network configuration.
type Config struct {
	// Disabled is true for `network: {config: disabled}`: write nothing.
	Disabled bool
	// Version is the network config version cloud-init would hold for this
	// configuration: 2 for v2 YAML and the fallback config, 1 for everything
	// else (v1 YAML, network_data.json and ENI are converted to v1). Some of
	// cloud-init's renderers depend on it (networkd writes the global DNS
	// into every v1 interface but not into v2 ones). 0 when unknown.
	Version int
	// Interfaces in declaration order. Physical interfaces come with the MAC
	// they match; bonds, VLANs and bridges name their members by Name.
	Interfaces []Interface
	// Routes not tied to an interface (v1 "type: route").
	Routes []Route
	// DNS applies to the whole host (v1 "type: nameserver", network_data.json
	// top-level services).
	DNS DNS
	// Warnings are what the parser accepted but changed or skipped: a
	// network on a missing link, an unknown link type read as physical, a
	// member interface created. The pipeline logs them (net-convert prints
	// them); renderers add their own (render.Lost).
	Warnings []string
	// Ignored are input keys the model cannot hold, so no renderer renders
	// them ("ethernets.eth0.link-local"): every renderer names them in its
	// warning line.
	Ignored []string
}

// Kind is the type of an interface.
type Kind string

const (
	Physical Kind = "physical"
	Bond     Kind = "bond"
	VLAN     Kind = "vlan"
	Bridge   Kind = "bridge"
	// Infiniband is an IPoIB NIC (v1 "type: infiniband"): physical, but
	// its MAC is the 20-byte hardware address.
	Infiniband Kind = "infiniband"
)

// Interface is one link.
type Interface struct {
	Name string
	Kind Kind
	// MAC is lower-case and colon separated ("52:54:00:12:34:56"). For a
	// physical interface it identifies the NIC to rename to Name; for virtual
	// ones it is the address to set, if any.
	MAC string
	// Driver is a v2 match on the driver name, for physical interfaces.
	Driver string
	// MatchName is a v2 match.name (a shell glob such as "en*") of a
	// physical interface; Name is then the v2 id. Matches are the live
	// NICs (the parser's macToName) whose names it matches, sorted: the
	// renderers that cannot write a glob render one interface per match.
	MatchName string
	Matches   []string
	// Control is how the interface comes up: "" (at boot, "auto"),
	// "manual" (only when asked) or "hotplug" (when the device appears,
	// without holding up the boot): v1 subnet "control".
	Control string
	// WakeOnLAN enables magic-packet wake-on-LAN (v2 wakeonlan).
	WakeOnLAN bool
	// RoutingPolicy are policy routing rules (v2 routing-policy).
	RoutingPolicy []Rule
	MTU           int
	// AcceptRA is nil when unset.
	AcceptRA *bool
	// Optional: boot need not wait for this link (v2 optional).
	Optional bool
	// NoRename is set on a v2 ethernet without set-name: Name is only the
	// configuration's id for the NIC it matches (by MAC or driver), and
	// cloud-init does not rename the NIC to it. RenameMap skips these.
	NoRename bool
	// DNS is this interface's own resolver configuration, as cloud-init's
	// network_state keeps it: a v1 `nameserver` entry with `interface:`, or
	// the v2 `nameservers` of this device. (v2 nameservers also go to the
	// first static subnet and to Config.DNS, exactly as cloud-init does.)
	DNS DNS

	// DHCP4Overrides and DHCP6Overrides are v2 dhcp4-overrides and
	// dhcp6-overrides, kept only when the device has that DHCP; nil when
	// unset. route-metric is not here: it becomes the DHCP subnet's Metric,
	// as in cloud-init.
	DHCP4Overrides *DHCPOverrides
	DHCP6Overrides *DHCPOverrides

	Bond   *BondConfig
	VLAN   *VLANConfig
	Bridge *BridgeConfig

	// Subnets in order; an interface with none is brought up unconfigured
	// ("manual").
	Subnets []Subnet
}

// BondConfig holds a bond's members and parameters. Params uses cloud-init v1
// key names without the "bond-" prefix ("mode", "miimon", "xmit-hash-policy",
// "lacp-rate", ...); Mode is also kept in Params["mode"].
type BondConfig struct {
	Members []string
	Params  map[string]string
}

// Mode is the bond mode ("balance-rr" when unset, as the kernel does).
func (b *BondConfig) Mode() string {
	if m := b.Params["mode"]; m != "" {
		return m
	}
	return "balance-rr"
}

// VLANConfig is a VLAN on a parent link.
type VLANConfig struct {
	ID   int
	Link string
}

// BridgeConfig holds a bridge's ports and parameters. Params uses cloud-init
// v1 names without the "bridge_" prefix ("stp", "fd", "hello", "maxage",
// "ageing", "priority", "pathcost", "portprio"); v1 "bridge_bridgeprio" is
// "priority". "stp" is "on" or "off". "pathcost" and "portprio" are per port:
// "port value" pairs separated by commas ("eth0 50,eth1 75").
type BridgeConfig struct {
	Members []string
	Params  map[string]string
}

// SubnetType is how an address is obtained.
type SubnetType string

const (
	Static          SubnetType = "static" // IPv4 or IPv6 static, per Address
	DHCP4           SubnetType = "dhcp4"  // DHCPv4
	DHCP6           SubnetType = "dhcp6"  // DHCPv6 stateful (and RA)
	SLAAC           SubnetType = "ipv6_slaac"
	DHCPv6Stateless SubnetType = "ipv6_dhcpv6-stateless"
	DHCPv6Stateful  SubnetType = "ipv6_dhcpv6-stateful"
	Manual          SubnetType = "manual" // link up, no address
)

// Subnet is one address assignment on an interface.
type Subnet struct {
	Type SubnetType
	// Address is set for Static: address and prefix length.
	Address netip.Prefix
	// Gateway is the default gateway reached through this subnet, if any.
	Gateway netip.Addr
	// MTU of this subnet (v1 allows it for IPv6), 0 when unset.
	MTU int
	// Metric is the metric of the routes this subnet installs: its gateway,
	// or for DHCP the routes of the lease (v1 subnet "metric", v2
	// dhcp4-overrides/dhcp6-overrides "route-metric"). 0 when unset.
	Metric int
	// Broadcast is a static IPv4 subnet's explicit broadcast address.
	Broadcast netip.Addr
	Routes    []Route
	DNS       DNS
}

// DHCPOverrides is what the DHCP client takes from the lease (netplan's
// dhcp4-overrides and dhcp6-overrides). Nil booleans and empty strings are
// unset, which leaves the network manager's default.
type DHCPOverrides struct {
	UseDNS       *bool
	UseNTP       *bool
	UseHostname  *bool
	UseMTU       *bool // DHCPv4 only
	UseRoutes    *bool // DHCPv4 only
	SendHostname *bool // DHCPv4 only
	// UseDomains is "true", "false" or "route".
	UseDomains string
	// Hostname is the name to send (DHCPv4 only).
	Hostname string
}

// DHCPOverrideFlags are the boolean overrides by their netplan keys, in the
// order renderers write them.
var DHCPOverrideFlags = []string{"use-dns", "use-ntp", "use-hostname", "use-mtu", "use-routes", "send-hostname"}

// Flag is the field of the boolean override under netplan key k, or nil when
// k is not one of DHCPOverrideFlags.
func (o *DHCPOverrides) Flag(k string) **bool {
	switch k {
	case "use-dns":
		return &o.UseDNS
	case "use-ntp":
		return &o.UseNTP
	case "use-hostname":
		return &o.UseHostname
	case "use-mtu":
		return &o.UseMTU
	case "use-routes":
		return &o.UseRoutes
	case "send-hostname":
		return &o.SendHostname
	}
	return nil
}

// IPv6 tells whether the subnet configures IPv6.
func (s Subnet) IPv6() bool {
	switch s.Type {
	case DHCP6, SLAAC, DHCPv6Stateless, DHCPv6Stateful:
		return true
	case Static:
		return s.Address.Addr().Is6()
	}
	return false
}

// Route is a static route. To is the destination prefix (0.0.0.0/0 or ::/0 for
// a default route); Via is the next hop; Metric 0 means unset.
type Route struct {
	To     netip.Prefix
	Via    netip.Addr
	Metric int
	// Table is the routing table (0: main); MTU the route's MTU (0:
	// unset); Scope "global", "link" or "host" ("" unset): v2 route
	// table, mtu and scope.
	Table int
	MTU   int
	Scope string
}

// Rule is a policy routing rule (v2 routing-policy). Zero values are unset;
// a rule has From or To.
type Rule struct {
	From, To netip.Prefix
	Table    int
	Priority int
	Mark     int
	TOS      int
}

// DNS is a resolver configuration.
type DNS struct {
	Nameservers []netip.Addr
	Search      []string
}

// Empty tells whether there is nothing in d.
func (d DNS) Empty() bool { return len(d.Nameservers) == 0 && len(d.Search) == 0 }

// Interface returns the interface named name, or nil.
func (c *Config) Interface(name string) *Interface {
	for i := range c.Interfaces {
		if c.Interfaces[i].Name == name {
			return &c.Interfaces[i]
		}
	}
	return nil
}
