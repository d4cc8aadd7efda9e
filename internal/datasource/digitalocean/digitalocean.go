// Package digitalocean reads DigitalOcean's droplet metadata service
// (http://169.254.169.254/metadata/v1.json) into the instance model, as
// cloud-init's DataSourceDigitalOcean does.
//
// The droplet's NICs become network config v1: the public NIC is named eth0
// and the private one eth1, as cloud-init names them; a NIC of any other
// type keeps the name the system gave it (its entry has a MAC and no name,
// for internal/netcfg to name from the live NICs).
//
// Differences from cloud-init: the instance id and host name come from the
// metadata only (cloud-init falls back to the SMBIOS serial, which is the
// droplet id); a missing droplet_id is an error. cloud-init gives the
// metadata service a random 169.254.x.y address on the first NIC when
// there is no DHCP; here the service is reached over discovery's temporary
// network. The metadata kept under "ds" is what cloud-init keeps (not
// auth_key, a credential).
package digitalocean

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
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

// MaxBody bounds metadata/v1.json, user-data included (DigitalOcean caps
// user-data at 64 KiB).
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

// nic is one entry of "interfaces".
type nic struct {
	MAC        string  `json:"mac"`
	Type       string  `json:"type"`
	IPv4       *ipConf `json:"ipv4"`
	IPv6       *ipConf `json:"ipv6"`
	AnchorIPv4 *ipConf `json:"anchor_ipv4"`
	AnchorIPv6 *ipConf `json:"anchor_ipv6"`
}

type ipConf struct {
	Address string       `json:"ip_address"`
	Netmask string       `json:"netmask"`
	Gateway string       `json:"gateway"`
	CIDR    jsondoc.Text `json:"cidr"`
}

// metadata is the part of metadata/v1.json read.
type metadata struct {
	DropletID  jsondoc.Text     `json:"droplet_id"`
	Hostname   *string          `json:"hostname"`
	Region     *string          `json:"region"`
	PublicKeys any              `json:"public_keys"`
	UserData   *string          `json:"user_data"`
	VendorData *string          `json:"vendor_data"`
	Interfaces map[string][]nic `json:"interfaces"`
	DNS        struct {
		Nameservers []string `json:"nameservers"`
	} `json:"dns"`
}

// Parse reads metadata/v1.json, fetched from u (named in errors).
func Parse(u string, b []byte) (*instance.Data, error) {
	var md metadata
	raw, err := jsondoc.DecodeObject(u, b, &md)
	if err != nil {
		return nil, err
	}
	id := strings.TrimSpace(string(md.DropletID))
	if id == "" {
		return nil, fmt.Errorf("%s: droplet_id: missing or empty (it is required)", u)
	}
	d := &instance.Data{
		Datasource:       "digitalocean",
		DatasourceClass:  "DigitalOcean",
		CloudName:        "digitalocean",
		Platform:         "digitalocean",
		InstanceID:       id,
		LocalHostname:    id,
		AvailabilityZone: "default",
	}
	if md.Hostname != nil {
		d.LocalHostname = *md.Hostname
	}
	if md.Region != nil {
		d.AvailabilityZone = *md.Region
	}
	if d.PublicKeys, err = datasource.PublicKeys(md.PublicKeys); err != nil {
		return nil, fmt.Errorf("%s: public_keys: %w", u, err)
	}
	if md.UserData != nil {
		d.UserData = []byte(*md.UserData)
	}
	if md.VendorData != nil {
		d.VendorData = []byte(*md.VendorData)
	}
	if len(md.Interfaces) > 0 {
		nc, err := Network(md.Interfaces, md.DNS.Nameservers)
		if err != nil {
			return nil, fmt.Errorf("%s: interfaces: %w", u, err)
		}
		if d.Network, err = json.Marshal(nc); err != nil {
			return nil, fmt.Errorf("%s: interfaces: %w", u, err)
		}
		d.NetworkFormat = instance.NetworkYAML
	}
	// What cloud-init keeps as the datasource's metadata.
	d.Meta = map[string]any{
		"instance-id":       d.InstanceID,
		"local-hostname":    d.LocalHostname,
		"interfaces":        raw["interfaces"],
		"public-keys":       raw["public_keys"],
		"availability_zone": d.AvailabilityZone,
	}
	return d, nil
}

// nicName is the name cloud-init gives a NIC of a type ("" for another).
func nicName(typ string) string {
	switch typ {
	case "public":
		return "eth0"
	case "private":
		return "eth1"
	}
	return ""
}

// Network converts "interfaces" (NICs by type) and the nameservers into
// network config v1, as cloud-init's convert_network_configuration does:
// the first NIC of each type, its ipv4, ipv6, anchor_ipv4 and anchor_ipv6
// as static subnets, a gateway only on the public NIC's non-anchor
// subnets. Types come public, private, then the others by name.
func Network(ifaces map[string][]nic, dns []string) (*netcfg.V1, error) {
	types := make([]string, 0, len(ifaces))
	for t := range ifaces {
		types = append(types, t)
	}
	rank := func(t string) int {
		switch t {
		case "public":
			return 0
		case "private":
			return 1
		}
		return 2
	}
	sort.Slice(types, func(i, j int) bool {
		if ri, rj := rank(types[i]), rank(types[j]); ri != rj {
			return ri < rj
		}
		return types[i] < types[j]
	})
	nc := &netcfg.V1{Version: 1, Config: []netcfg.V1Config{}}
	for _, t := range types {
		if len(ifaces[t]) == 0 {
			continue
		}
		n := ifaces[t][0]
		if n.MAC == "" {
			return nil, fmt.Errorf("%s[0]: no mac", t)
		}
		typ := n.Type
		if typ == "" {
			typ = "unknown"
		}
		c := netcfg.V1Config{Type: "physical", Name: nicName(typ), MACAddress: n.MAC, Subnets: []netcfg.V1Subnet{}}
		for _, def := range []struct {
			key    string
			conf   *ipConf
			anchor bool
		}{{"ipv4", n.IPv4, false}, {"ipv6", n.IPv6, false}, {"anchor_ipv4", n.AnchorIPv4, true}, {"anchor_ipv6", n.AnchorIPv6, true}} {
			if def.conf == nil || def.conf.Address == "" {
				continue
			}
			s := netcfg.V1Subnet{Type: "static", Control: "auto", Address: def.conf.Address, Gateway: def.conf.Gateway}
			if strings.Contains(def.conf.Address, ":") {
				if def.conf.CIDR != "" {
					s.Address += "/" + string(def.conf.CIDR)
				}
			} else {
				s.Netmask = def.conf.Netmask
			}
			if typ != "public" || def.anchor {
				s.Gateway = ""
			}
			c.Subnets = append(c.Subnets, s)
		}
		nc.Config = append(nc.Config, c)
	}
	if len(dns) > 0 {
		nc.Config = append(nc.Config, netcfg.V1Config{Type: "nameserver", Address: dns})
	}
	return nc, nil
}
