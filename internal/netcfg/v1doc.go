package netcfg

// V1 is a network config version 1 document as the datasources that
// convert their metadata into one build it (DigitalOcean, UpCloud and
// Vultr, each after cloud-init's converter): the keys cloud-init writes,
// the empty ones left out. It is stored as the instance's network config
// and read back by Parse like any other.
type V1 struct {
	Version int        `json:"version"`
	Config  []V1Config `json:"config"`
}

// V1Config is one entry of a V1 document: a physical NIC (by name, or by
// MAC alone, cloud-init naming it after the live NIC) or the nameservers.
type V1Config struct {
	Type       string     `json:"type"`
	Name       string     `json:"name,omitempty"`
	MACAddress string     `json:"mac_address,omitempty"`
	AcceptRA   any        `json:"accept-ra,omitempty"`
	MTU        any        `json:"mtu,omitempty"`
	Subnets    []V1Subnet `json:"subnets,omitempty"`
	Address    []string   `json:"address,omitempty"`
}

// V1Subnet is one subnet of a V1 NIC.
type V1Subnet struct {
	Type           string   `json:"type"`
	Control        string   `json:"control,omitempty"`
	Address        string   `json:"address,omitempty"`
	Netmask        string   `json:"netmask,omitempty"`
	Gateway        string   `json:"gateway,omitempty"`
	DNSNameservers []string `json:"dns_nameservers,omitempty"`
	Routes         any      `json:"routes,omitempty"`
}
