// Package hetzner reads Hetzner Cloud's metadata service
// (http://169.254.169.254/hetzner/v1/) into the instance model, as
// cloud-init's DataSourceHetzner does: the metadata (YAML), the private
// networks (YAML) and the user-data, base64-encoded or not.
//
// The metadata is read as a NoCloud meta-data document (internal/datasource/
// nocloud), which it is in all but name: instance-id, hostname and
// public-keys. Its network-config (network config v1) is the network
// configuration, each private network added as a DHCP NIC by MAC, as
// cloud-init adds them; such an entry has no name, since cloud-init names
// it after the live NIC with that MAC, which internal/netcfg does.
//
// Differences from cloud-init: the instance id is not checked against the
// SMBIOS serial (the Source is not given the DMI strings; discovery
// recognised the platform by them); metadata without network-config gives
// no network configuration (cloud-init fails), and private networks are
// then not configured either.
package hetzner

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"
	"testing/fstest"

	"go.yaml.in/yaml/v3"

	"github.com/earlyinit/earlyinit/internal/datasource"
	"github.com/earlyinit/earlyinit/internal/datasource/nocloud"
	"github.com/earlyinit/earlyinit/internal/httpget"
	"github.com/earlyinit/earlyinit/internal/instance"
	"github.com/earlyinit/earlyinit/internal/jsondoc"
	"github.com/earlyinit/earlyinit/internal/scalar"
)

// DefaultBaseURL is the metadata service's IPv4 address.
const DefaultBaseURL = "http://169.254.169.254"

// The documents read, under the base URL.
const (
	MetadataPath        = "/hetzner/v1/metadata"
	PrivateNetworksPath = "/hetzner/v1/metadata/private-networks"
	UserDataPath        = "/hetzner/v1/userdata"
)

// Body limits: the YAML documents get MaxMetadata (they are parsed as
// YAML, whose worst case is slow), user-data MaxUserData (Hetzner caps it
// at 32 KiB).
const (
	MaxMetadata = nocloud.MaxDocSize // 1 MiB
	MaxUserData = datasource.MaxFileSize
)

// Client reads the metadata service. The zero value reads
// http://169.254.169.254 with httpget's defaults.
type Client struct {
	// BaseURL is the service's root; "" means DefaultBaseURL.
	BaseURL string
	// HTTPClient makes the requests.
	datasource.HTTPClient
}

// Read fetches the metadata, the private networks and the user-data. Any
// failure rejects the source with an error naming the URL.
func (c *Client) Read(ctx context.Context) (*instance.Data, error) {
	base := datasource.BaseURL(c.BaseURL, DefaultBaseURL)
	g := c.Fetcher()
	get := func(path string, limit int64) (string, []byte, error) {
		u := base + path
		b, err := g.Get(ctx, httpget.Request{URL: u, Limit: limit})
		return u, b, err
	}
	mdURL, md, err := get(MetadataPath, MaxMetadata)
	if err != nil {
		return nil, err
	}
	pnURL, pn, err := get(PrivateNetworksPath, MaxMetadata)
	if err != nil {
		return nil, err
	}
	_, ud, err := get(UserDataPath, MaxUserData)
	if err != nil {
		return nil, err
	}
	d, err := Parse(mdURL, md, pnURL, pn)
	if err != nil {
		return nil, err
	}
	d.UserData = maybeBase64(ud)
	d.Subplatform = fmt.Sprintf("metadata (%s)", base)
	return d, nil
}

// Parse reads the metadata document (fetched from mdURL) and the private
// networks (from pnURL); the URLs name the documents in errors.
func Parse(mdURL string, md []byte, pnURL string, pn []byte) (*instance.Data, error) {
	d, err := nocloud.Read(fstest.MapFS{"meta-data": {Data: md}})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", mdURL, err)
	}
	full := d.Meta
	d.Datasource, d.DatasourceClass = "hetzner", "Hetzner"
	d.CloudName, d.Platform = "hetzner", "hetzner"

	nets, err := privateNetworks(pnURL, pn)
	if err != nil {
		return nil, err
	}
	switch vd := full["vendor_data"].(type) {
	case nil:
	case string:
		d.VendorData = []byte(vd)
	default:
		return nil, fmt.Errorf("%s: vendor_data: want a string, got %s", mdURL, scalar.JSONNoun(vd))
	}
	switch nc := full["network-config"].(type) {
	case nil:
	case map[string]any:
		if err := addPrivateNetworks(nc, nets); err != nil {
			return nil, fmt.Errorf("%s: network-config: %w", mdURL, err)
		}
		if d.Network, err = json.Marshal(nc); err != nil {
			return nil, fmt.Errorf("%s: network-config: %w", mdURL, err)
		}
		d.NetworkFormat = instance.NetworkYAML
	default:
		return nil, fmt.Errorf("%s: network-config: want a mapping, got %s", mdURL, scalar.JSONNoun(nc))
	}
	var pnMeta []any
	for _, n := range nets {
		pnMeta = append(pnMeta, n)
	}
	// What cloud-init keeps as the datasource's metadata.
	d.Meta = map[string]any{
		"instance-id":      d.InstanceID,
		"local-hostname":   d.LocalHostname,
		"network-config":   full["network-config"],
		"public-keys":      full["public-keys"],
		"private-networks": pnMeta,
	}
	return d, nil
}

// privateNetworks decodes metadata/private-networks: a YAML list (empty
// or null for none) of networks, each with the MAC of its NIC.
func privateNetworks(u string, b []byte) (nets []map[string]any, err error) {
	defer func() {
		if r := recover(); r != nil {
			nets, err = nil, fmt.Errorf("%s: yaml: %v", u, r)
		}
	}()
	var v any
	if err := yaml.Unmarshal(b, &v); err != nil {
		return nil, fmt.Errorf("%s: %w", u, err)
	}
	v = jsondoc.FromYAML(v)
	raw, ok := v.([]any)
	if !ok && v != nil {
		return nil, fmt.Errorf("%s: want a list of networks, got %s", u, scalar.JSONNoun(v))
	}
	for i, e := range raw {
		n, ok := e.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("%s: [%d]: want a mapping, got %s", u, i, scalar.JSONNoun(e))
		}
		mac, ok := n["mac_address"].(string)
		if !ok || strings.TrimSpace(mac) == "" {
			return nil, fmt.Errorf("%s: [%d]: mac_address: missing, empty or not a string", u, i)
		}
		nets = append(nets, n)
	}
	return nets, nil
}

// addPrivateNetworks appends one DHCP NIC per private network to the v1
// config nc, as cloud-init does. The entry has no name: cloud-init gives
// it the live NIC's, and so does internal/netcfg from the MAC.
func addPrivateNetworks(nc map[string]any, nets []map[string]any) error {
	if len(nets) == 0 {
		return nil
	}
	cfg, ok := nc["config"].([]any)
	if !ok && nc["config"] != nil {
		return fmt.Errorf("config: want a list, got %s", scalar.JSONNoun(nc["config"]))
	}
	for _, n := range nets {
		cfg = append(cfg, map[string]any{
			"type":        "physical",
			"mac_address": n["mac_address"],
			"subnets":     []any{map[string]any{"ipv4": true, "type": "dhcp"}},
		})
	}
	nc["config"] = cfg
	return nil
}

// maybeBase64 is cloud-init's maybe_b64decode: b decoded if it is strict
// base64 (the alphabet and padding only, no line breaks), else b as is.
func maybeBase64(b []byte) []byte {
	if len(b) == 0 {
		return b
	}
	for _, c := range b {
		if !(c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '+' || c == '/' || c == '=') {
			return b
		}
	}
	out, err := base64.StdEncoding.Strict().DecodeString(string(b))
	if err != nil {
		return b
	}
	return out
}
