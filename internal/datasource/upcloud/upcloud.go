// Package upcloud reads UpCloud's metadata service
// (http://169.254.169.254/metadata/v1.json) into the instance model, as
// cloud-init's DataSourceUpCloud does.
//
// The network description becomes network config v1 as cloud-init's
// convert_to_network_config_v1 writes it. cloud-init names each NIC after
// the live one with its MAC; so does internal/netcfg, and the entries here
// carry the MAC and no name.
//
// Differences from cloud-init: the instance id comes from the metadata
// only (cloud-init falls back to the SMBIOS UUID); a missing instance_id
// is an error. Metadata without a network description gives no network
// configuration (cloud-init fails).
package upcloud

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/earlyinit/earlyinit/internal/datasource"
	"github.com/earlyinit/earlyinit/internal/httpget"
	"github.com/earlyinit/earlyinit/internal/instance"
	"github.com/earlyinit/earlyinit/internal/jsondoc"
	"github.com/earlyinit/earlyinit/internal/netcfg"
)

// DefaultBaseURL is the metadata service's address.
const DefaultBaseURL = "http://169.254.169.254"

// Path is the one document read, under the base URL.
const Path = "/metadata/v1.json"

// MaxBody bounds metadata/v1.json, user-data included.
const MaxBody = datasource.MaxFileSize

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

// Read fetches metadata/v1.json and reads it. Any failure rejects the
// source with an error naming the URL.
func (c *Client) Read(ctx context.Context) (*instance.Data, error) {
	base := datasource.BaseURL(c.BaseURL, DefaultBaseURL)
	r := httpget.Request{URL: base + Path, Limit: datasource.Limit(c.MaxBody, MaxBody)}
	return datasource.ReadDocument(ctx, c.Fetcher(), base, r, Parse)
}

// ipAddress is one address of a NIC.
type ipAddress struct {
	Address string   `json:"address"`
	DHCP    bool     `json:"dhcp"`
	DNS     []string `json:"dns"`
	Family  string   `json:"family"`
	Gateway string   `json:"gateway"`
	Network string   `json:"network"`
}

// nic is one entry of network.interfaces.
type nic struct {
	MAC         string      `json:"mac"`
	IPAddresses []ipAddress `json:"ip_addresses"`
}

// Description is the "network" member of the metadata.
type Description struct {
	Interfaces []nic    `json:"interfaces"`
	DNS        []string `json:"dns"`
}

// metadata is the part of metadata/v1.json read.
type metadata struct {
	InstanceID string       `json:"instance_id"`
	Hostname   string       `json:"hostname"`
	Region     *string      `json:"region"`
	PublicKeys any          `json:"public_keys"`
	UserData   *string      `json:"user_data"`
	VendorData *string      `json:"vendor_data"`
	Network    *Description `json:"network"`
}

// Parse reads metadata/v1.json, fetched from u (named in errors).
func Parse(u string, b []byte) (*instance.Data, error) {
	var md metadata
	raw, err := jsondoc.DecodeObject(u, b, &md)
	if err != nil {
		return nil, err
	}
	d := &instance.Data{
		Datasource:       "upcloud",
		DatasourceClass:  "UpCloud",
		CloudName:        "upcloud",
		Platform:         "upcloud",
		InstanceID:       strings.TrimSpace(md.InstanceID),
		LocalHostname:    md.Hostname,
		AvailabilityZone: "default",
	}
	if d.InstanceID == "" {
		return nil, fmt.Errorf("%s: instance_id: missing or empty (it is required)", u)
	}
	if md.Region != nil {
		d.AvailabilityZone = *md.Region
	}
	if d.PublicKeys, err = datasource.PublicKeys(md.PublicKeys); err != nil {
		return nil, fmt.Errorf("%s: public_keys: %w", u, err)
	}
	if md.UserData != nil && *md.UserData != "" {
		d.UserData = []byte(*md.UserData)
	}
	if md.VendorData != nil && *md.VendorData != "" {
		d.VendorData = []byte(*md.VendorData)
	}
	if md.Network != nil {
		nc, err := Network(*md.Network)
		if err != nil {
			return nil, fmt.Errorf("%s: network: %w", u, err)
		}
		if d.Network, err = json.Marshal(nc); err != nil {
			return nil, fmt.Errorf("%s: network: %w", u, err)
		}
		d.NetworkFormat = instance.NetworkYAML
	}
	// What cloud-init keeps as the datasource's metadata.
	d.Meta = map[string]any{
		"instance-id":       d.InstanceID,
		"local-hostname":    d.LocalHostname,
		"network":           raw["network"],
		"public-keys":       raw["public_keys"],
		"availability_zone": d.AvailabilityZone,
	}
	return d, nil
}

// Network is cloud-init's convert_to_network_config_v1: each NIC with one
// subnet per address, DHCP (DHCPv6 stateless for IPv6) or static with its
// gateway and the prefix length of its network; an address's resolvers
// when they are not the global ones; the global resolvers last.
func Network(desc Description) (*netcfg.V1, error) {
	if len(desc.Interfaces) == 0 {
		return nil, errors.New("interfaces: missing or empty")
	}
	nc := &netcfg.V1{Version: 1, Config: []netcfg.V1Config{}}
	for i, n := range desc.Interfaces {
		if strings.TrimSpace(n.MAC) == "" {
			return nil, fmt.Errorf("interfaces[%d]: mac: missing or empty", i)
		}
		c := netcfg.V1Config{Type: "physical", MACAddress: n.MAC, Subnets: []netcfg.V1Subnet{}}
		for _, a := range n.IPAddresses {
			ipv6 := a.Family == "IPv6"
			if a.DHCP {
				s := netcfg.V1Subnet{Type: "dhcp"}
				if ipv6 {
					s.Type = "ipv6_dhcpv6-stateless"
				}
				c.Subnets = append(c.Subnets, s)
				continue
			}
			s := netcfg.V1Subnet{Type: "static", Control: "auto", Address: a.Address, Gateway: a.Gateway}
			if ipv6 {
				s.Type = "static6"
			}
			if _, prefix, ok := strings.Cut(a.Network, "/"); ok {
				s.Netmask = prefix
			}
			if len(a.DNS) > 0 && !slices.Equal(a.DNS, desc.DNS) {
				s.DNSNameservers = a.DNS
			}
			c.Subnets = append(c.Subnets, s)
		}
		nc.Config = append(nc.Config, c)
	}
	if len(desc.DNS) > 0 {
		nc.Config = append(nc.Config, netcfg.V1Config{Type: "nameserver", Address: desc.DNS})
	}
	return nc, nil
}
