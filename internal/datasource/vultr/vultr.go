// Package vultr reads Vultr's metadata service (http://169.254.169.254/
// v1.json) into the instance model, as cloud-init's DataSourceVultr does.
//
// The network configuration is Vultr's own network config v1
// (cloud_interfaces) when it sends one, else cloud-init's from the
// interfaces list: the first NIC by DHCP and SLAAC, the others static,
// additional addresses and routes, Vultr's resolvers. cloud-init names
// every NIC after the live one with its MAC; so does internal/netcfg, and the
// entries here carry the MAC and no name.
//
// Differences from cloud-init: startup-script, a credential-bearing
// script cloud-init redacts by name, is left out of the metadata kept.
package vultr

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/earlyinit/earlyinit/internal/datasource"
	"github.com/earlyinit/earlyinit/internal/httpget"
	"github.com/earlyinit/earlyinit/internal/instance"
	"github.com/earlyinit/earlyinit/internal/jsondoc"
	"github.com/earlyinit/earlyinit/internal/netcfg"
	"github.com/earlyinit/earlyinit/internal/scalar"
)

// DefaultBaseURL is the metadata service's address.
const DefaultBaseURL = "http://169.254.169.254"

// Path is the one document read, under the base URL.
const Path = "/v1.json"

// TokenHeader is the header cloud-init sends, with TokenValue.
const (
	TokenHeader = "Metadata-Token"
	TokenValue  = "cloudinit"
)

// MaxBody bounds v1.json, user-data included.
const MaxBody = datasource.MaxFileSize

// Resolvers are the nameservers cloud-init configures with a generated
// network configuration.
func Resolvers() []string { return []string{"108.61.10.10", "2001:19f0:300:1704::6"} }

// Client reads the metadata service. The zero value reads
// http://169.254.169.254 with httpget's defaults.
type Client struct {
	// BaseURL is the service's root; "" means DefaultBaseURL.
	BaseURL string
	// HTTPClient makes the requests.
	datasource.HTTPClient
	// MaxBody bounds the document; 0 means MaxBody.
	MaxBody int64
}

// Read fetches v1.json and reads it. Any failure rejects the source with
// an error naming the URL.
func (c *Client) Read(ctx context.Context) (*instance.Data, error) {
	base := datasource.BaseURL(c.BaseURL, DefaultBaseURL)
	r := httpget.Request{URL: base + Path, Limit: datasource.Limit(c.MaxBody, MaxBody), Header: map[string]string{TokenHeader: TokenValue}}
	return datasource.ReadDocument(ctx, c.Fetcher(), base, r, Parse)
}

// address is an address of a NIC: IPv4 address and netmask, or an IPv6
// network and prefix.
type address struct {
	Address string       `json:"address"`
	Netmask string       `json:"netmask"`
	Network string       `json:"network"`
	Prefix  jsondoc.Text `json:"prefix"`
	Routes  any          `json:"routes"`
}

// nic is one entry of "interfaces".
type nic struct {
	MAC          string `json:"mac"`
	Unconfigured bool   `json:"unconfigured"`
	MTU          any    `json:"mtu"`
	AcceptRA     any    `json:"accept-ra"`
	Routes       any    `json:"routes"`
	IPv4         *struct {
		address
		Additional []address `json:"additional"`
	} `json:"ipv4"`
	IPv6 *struct {
		Additional []address `json:"additional"`
	} `json:"ipv6"`
}

// metadata is the part of v1.json read.
type metadata struct {
	InstanceV2ID jsondoc.Text `json:"instance-v2-id"`
	Hostname     *string      `json:"hostname"`
	Region       *struct {
		RegionCode  *string `json:"regioncode"`
		CountryCode *string `json:"countrycode"`
	} `json:"region"`
	PublicKeys      any            `json:"public-keys"`
	UserData        any            `json:"user-data"`
	VendorData      any            `json:"vendor-data"`
	Interfaces      []nic          `json:"interfaces"`
	CloudInterfaces map[string]any `json:"cloud_interfaces"`
}

// Parse reads v1.json, fetched from u (named in errors).
func Parse(u string, b []byte) (*instance.Data, error) {
	var md metadata
	meta, err := jsondoc.DecodeObject(u, b, &md)
	if err != nil {
		return nil, err
	}
	d := &instance.Data{
		Datasource:      "vultr",
		DatasourceClass: "Vultr",
		CloudName:       "vultr",
		Platform:        "vultr",
		InstanceID:      strings.TrimSpace(string(md.InstanceV2ID)),
	}
	if d.InstanceID == "" {
		return nil, fmt.Errorf("%s: instance-v2-id: missing or empty (it is required)", u)
	}
	if md.Hostname != nil {
		d.LocalHostname = *md.Hostname
	}
	if d.LocalHostname == "" {
		d.LocalHostname = "guest" // as cloud-init
	}
	if md.Region != nil {
		switch {
		case md.Region.CountryCode != nil:
			d.Region = strings.ToLower(*md.Region.CountryCode)
		case md.Region.RegionCode != nil:
			d.Region = strings.ToLower(*md.Region.RegionCode)
		}
	}
	if d.PublicKeys, err = datasource.PublicKeys(md.PublicKeys); err != nil {
		return nil, fmt.Errorf("%s: public-keys: %w", u, err)
	}
	if d.UserData, err = payload(md.UserData); err != nil {
		return nil, fmt.Errorf("%s: user-data: %w", u, err)
	}
	if d.VendorData, err = payload(md.VendorData); err != nil {
		return nil, fmt.Errorf("%s: vendor-data: %w", u, err)
	}

	var nc any
	switch {
	case md.CloudInterfaces != nil:
		nc = md.CloudInterfaces
	case len(md.Interfaces) > 0:
		if nc, err = Network(md.Interfaces); err != nil {
			return nil, fmt.Errorf("%s: interfaces: %w", u, err)
		}
	}
	if nc != nil {
		if d.Network, err = json.Marshal(nc); err != nil {
			return nil, fmt.Errorf("%s: network: %w", u, err)
		}
		d.NetworkFormat = instance.NetworkYAML
	}

	// cloud-init's metadata, as it rewrites it; startup-script left out.
	meta["instance-id"] = d.InstanceID
	meta["local-hostname"] = d.LocalHostname
	if md.Region != nil {
		meta["region"] = d.Region
	}
	delete(meta, "startup-script")
	d.Meta = meta
	return d, nil
}

// payload reads user-data or vendor-data: a string, or an empty list or
// null for none ("" is none too, as cloud-init has it).
func payload(v any) ([]byte, error) {
	switch v := v.(type) {
	case nil:
		return nil, nil
	case string:
		if v == "" {
			return nil, nil
		}
		return []byte(v), nil
	case []any:
		if len(v) == 0 {
			return nil, nil
		}
	}
	return nil, fmt.Errorf("want a string, got %s", scalar.JSONNoun(v))
}

// Network is cloud-init's generate_network_config: Vultr's resolvers, the
// first NIC (public) by DHCP and SLAAC, each other NIC not marked
// unconfigured with its static IPv4 address; each NIC's MTU, accept-ra and
// routes (on its first subnet) and its additional IPv4 and IPv6 addresses.
func Network(nics []nic) (*netcfg.V1, error) {
	nc := &netcfg.V1{Version: 1, Config: []netcfg.V1Config{{Type: "nameserver", Address: Resolvers()}}}
	for i, n := range nics {
		if i > 0 && n.Unconfigured {
			continue
		}
		if strings.TrimSpace(n.MAC) == "" {
			return nil, fmt.Errorf("[%d]: mac: missing or empty", i)
		}
		c := netcfg.V1Config{Type: "physical", MACAddress: n.MAC}
		if i == 0 {
			c.AcceptRA = 1
			c.Subnets = []netcfg.V1Subnet{{Type: "dhcp", Control: "auto"}, {Type: "ipv6_slaac", Control: "auto"}}
		} else {
			if n.IPv4 == nil || n.IPv4.Address == "" {
				return nil, fmt.Errorf("[%d]: ipv4.address: missing (a private NIC is static)", i)
			}
			c.Subnets = []netcfg.V1Subnet{{Type: "static", Control: "auto", Address: n.IPv4.Address, Netmask: n.IPv4.Netmask}}
		}
		if n.MTU != nil {
			c.MTU = n.MTU
		}
		if n.AcceptRA != nil {
			c.AcceptRA = n.AcceptRA
		}
		if n.Routes != nil {
			c.Subnets[0].Routes = n.Routes
		}
		if n.IPv4 != nil {
			for _, a := range n.IPv4.Additional {
				c.Subnets = append(c.Subnets, netcfg.V1Subnet{Type: "static", Control: "auto", Address: a.Address, Netmask: a.Netmask, Routes: a.Routes})
			}
		}
		if n.IPv6 != nil {
			for _, a := range n.IPv6.Additional {
				c.Subnets = append(c.Subnets, netcfg.V1Subnet{Type: "static6", Control: "auto", Address: a.Network + "/" + string(a.Prefix), Routes: a.Routes})
			}
		}
		nc.Config = append(nc.Config, c)
	}
	return nc, nil
}
