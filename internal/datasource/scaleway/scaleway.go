// Package scaleway reads Scaleway's instance metadata API
// (http://169.254.42.42/conf?format=json, user_data/cloud-init and
// vendor_data/cloud-init) into the instance model, as cloud-init's
// DataSourceScaleway does.
//
// The API answers user_data and vendor_data only to a client whose source
// port is privileged (below 1024), so that only root reads them;
// cloud-init binds ports 1, 2, ... in turn. httpget's client does not bind
// a source port, so DataHTTP is for the fetcher that does; without one,
// those two requests go through HTTP like the others and a real Scaleway
// API refuses them.
//
// Differences from cloud-init: no network configuration is generated.
// cloud-init's configures the first NIC by DHCP plus the additional public
// addresses, knowing the NIC and the address the temporary lease gave,
// which a Source is not told; the NIC is left to the fallback (DHCP) and
// the additional addresses unconfigured.
package scaleway

import (
	"context"
	"fmt"
	"strings"

	"github.com/earlyinit/earlyinit/internal/datasource"
	"github.com/earlyinit/earlyinit/internal/httpget"
	"github.com/earlyinit/earlyinit/internal/instance"
	"github.com/earlyinit/earlyinit/internal/jsondoc"
)

// DefaultBaseURL is the metadata API's IPv4 address (http://[fd00:42::42]
// over IPv6).
const DefaultBaseURL = "http://169.254.42.42"

// The documents read, under the base URL.
const (
	MetadataPath   = "/conf?format=json"
	UserDataPath   = "/user_data/cloud-init"
	VendorDataPath = "/vendor_data/cloud-init"
)

// Body limits: the metadata document gets MaxMetadata, user-data and
// vendor-data MaxUserData.
const (
	MaxMetadata = 1 << 20
	MaxUserData = datasource.MaxFileSize
)

// authorizedKeyTag prefixes a tag that carries an SSH key, its blanks
// written as "_".
const authorizedKeyTag = "AUTHORIZED_KEY="

// Client reads the metadata API. The zero value reads http://169.254.42.42
// with httpget's defaults.
type Client struct {
	// BaseURL is the API's root; "" means DefaultBaseURL.
	BaseURL string
	// HTTPClient makes the requests.
	datasource.HTTPClient
	// DataHTTP fetches user_data and vendor_data from a privileged source
	// port; nil means the HTTPClient's.
	DataHTTP httpget.Fetcher
}

// Read fetches the metadata, user-data and vendor-data (a 404 for either
// means none). Any other failure rejects the source with an error naming
// the URL.
func (c *Client) Read(ctx context.Context) (*instance.Data, error) {
	base := datasource.BaseURL(c.BaseURL, DefaultBaseURL)
	g := c.Fetcher()
	dg := c.DataHTTP
	if dg == nil {
		dg = g
	}
	u := base + MetadataPath
	md, err := g.Get(ctx, httpget.Request{URL: u, Limit: MaxMetadata})
	if err != nil {
		return nil, err
	}
	d, err := Parse(u, md)
	if err != nil {
		return nil, err
	}
	for _, p := range []struct {
		path string
		dst  *[]byte
	}{{UserDataPath, &d.UserData}, {VendorDataPath, &d.VendorData}} {
		b, err := datasource.Optional(dg.Get(ctx, httpget.Request{URL: base + p.path, Limit: MaxUserData}))
		if err != nil {
			return nil, err
		}
		*p.dst = b
	}
	d.Subplatform = fmt.Sprintf("metadata (%s)", base)
	return d, nil
}

// metadata is the part of conf?format=json read.
type metadata struct {
	ID            string   `json:"id"`
	Hostname      string   `json:"hostname"`
	Zone          string   `json:"zone"`
	Tags          []string `json:"tags"`
	SSHPublicKeys []struct {
		Key string `json:"key"`
	} `json:"ssh_public_keys"`
}

// Parse reads conf?format=json, fetched from u (named in errors).
func Parse(u string, b []byte) (*instance.Data, error) {
	var md metadata
	meta, err := jsondoc.DecodeObject(u, b, &md)
	if err != nil {
		return nil, err
	}
	d := &instance.Data{
		Datasource:       "scaleway",
		DatasourceClass:  "Scaleway",
		CloudName:        "scaleway",
		Platform:         "scaleway",
		InstanceID:       strings.TrimSpace(md.ID),
		LocalHostname:    md.Hostname,
		AvailabilityZone: md.Zone,
		Meta:             meta,
	}
	if d.InstanceID == "" {
		return nil, fmt.Errorf("%s: id: missing or empty (it is required)", u)
	}
	// The region is the zone less its last "-" part ("fr-par-1").
	if i := strings.LastIndexByte(md.Zone, '-'); i >= 0 {
		d.Region = md.Zone[:i]
	}
	for _, k := range md.SSHPublicKeys {
		if k := strings.TrimSpace(k.Key); k != "" {
			d.PublicKeys = append(d.PublicKeys, k)
		}
	}
	for _, tag := range md.Tags {
		if k, ok := strings.CutPrefix(tag, authorizedKeyTag); ok {
			d.PublicKeys = append(d.PublicKeys, strings.ReplaceAll(k, "_", " "))
		}
	}
	return d, nil
}
