// Package linode reads the Akamai (Linode) metadata service into the
// instance model, as cloud-init's DataSourceAkamai does: a token first
// (PUT /v1/token, Metadata-Token-Expiry-Seconds), then with it the
// instance (/v1/instance, JSON) and the user-data (/v1/user-data,
// base64-encoded). The network description (/v1/network) is read too and
// kept in the metadata as "network"; it gives no network configuration,
// as in cloud-init (Linode's NICs take DHCP).
//
// The source is named "akamai", cloud-init's name; the package is named
// after the platform users know.
//
// Differences from cloud-init: a service that gives no token, or cannot be
// read, rejects the source (cloud-init goes on with the SMBIOS serial as
// the instance id and nothing else); a 404 for the user-data or the
// network description means none (cloud-init fails the whole read). The
// DMI overrides in baseboard_serial (allow IPv4, IPv6, ...) are not read:
// discovery chooses the address.
package linode

import (
	"context"
	"encoding/base64"
	"fmt"
	"strings"

	"github.com/earlyinit/earlyinit/internal/datasource"
	"github.com/earlyinit/earlyinit/internal/httpget"
	"github.com/earlyinit/earlyinit/internal/instance"
	"github.com/earlyinit/earlyinit/internal/jsondoc"
)

// DefaultBaseURL is the metadata service's IPv4 address (its IPv6 one is
// http://[fd00:a9fe:a9fe::1]).
const DefaultBaseURL = "http://169.254.169.254"

// The service's paths, under the base URL.
const (
	TokenPath    = "/v1/token"
	InstancePath = "/v1/instance"
	UserDataPath = "/v1/user-data"
	NetworkPath  = "/v1/network"
)

// Token headers, and the lifetime cloud-init asks for.
const (
	TokenHeader       = "Metadata-Token"
	TokenExpiryHeader = "Metadata-Token-Expiry-Seconds"
	TokenExpiry       = "300"
)

// Body limits: the token and JSON documents get MaxMetadata, the
// user-data (base64, so a third larger than decoded) MaxUserData.
const (
	MaxMetadata = 1 << 20
	MaxUserData = datasource.MaxFileSize
)

// Client reads the metadata service. The zero value reads
// http://169.254.169.254 with httpget's defaults. Logf is told of
// user-data that is not base64 too.
type Client struct {
	// BaseURL is the service's root; "" means DefaultBaseURL.
	BaseURL string
	// HTTPClient makes the requests.
	datasource.HTTPClient
}

// Read gets a token and reads the instance, the user-data and the network
// description with it. Any failure rejects the source with an error
// naming the URL; the token is never in an error or a log line.
func (c *Client) Read(ctx context.Context) (*instance.Data, error) {
	base := datasource.BaseURL(c.BaseURL, DefaultBaseURL)
	g := c.Fetcher()
	tb, err := g.Get(ctx, httpget.Request{
		Method: "PUT",
		URL:    base + TokenPath,
		Header: map[string]string{TokenExpiryHeader: TokenExpiry},
		Limit:  MaxMetadata,
	})
	if err != nil {
		return nil, err
	}
	token := strings.TrimSpace(string(tb))
	if token == "" || strings.IndexFunc(token, func(r rune) bool { return r <= ' ' || r > '~' }) >= 0 {
		return nil, fmt.Errorf("PUT %s: empty or unprintable token", base+TokenPath)
	}
	get := func(path string, limit int64, accept bool) ([]byte, error) {
		h := map[string]string{TokenHeader: token}
		if accept {
			h["Accept"] = "application/json"
		}
		return g.Get(ctx, httpget.Request{URL: base + path, Header: h, Limit: limit})
	}

	ib, err := get(InstancePath, MaxMetadata, true)
	if err != nil {
		return nil, err
	}
	d, err := Parse(base+InstancePath, ib)
	if err != nil {
		return nil, err
	}
	ud, err := datasource.Optional(get(UserDataPath, MaxUserData, false))
	if err != nil {
		return nil, err
	}
	if ud != nil {
		var ok bool
		if d.UserData, ok = DecodeUserData(ud); !ok {
			c.Log("akamai: %s is not base64: taken as it is", base+UserDataPath)
		}
	}
	nb, err := datasource.Optional(get(NetworkPath, MaxMetadata, true))
	if err != nil {
		return nil, err
	}
	if nb != nil {
		nv, err := jsondoc.DecodeObject(base+NetworkPath, nb, nil)
		if err != nil {
			return nil, err
		}
		d.Meta["network"] = nv
	}
	d.Subplatform = fmt.Sprintf("metadata (%s)", base)
	return d, nil
}

// metadata is the part of /v1/instance read.
type metadata struct {
	ID     jsondoc.Text `json:"id"`
	Region string       `json:"region"`
}

// Parse reads /v1/instance, fetched from u (named in errors): the instance
// id and region; the whole document is the datasource's metadata, as in
// cloud-init.
func Parse(u string, b []byte) (*instance.Data, error) {
	var md metadata
	meta, err := jsondoc.DecodeObject(u, b, &md)
	if err != nil {
		return nil, err
	}
	d := &instance.Data{
		Datasource:      "akamai",
		DatasourceClass: "Akamai",
		CloudName:       "akamai",
		Platform:        "akamai",
		InstanceID:      strings.TrimSpace(string(md.ID)),
		Region:          md.Region,
		Meta:            meta,
	}
	if d.InstanceID == "" {
		return nil, fmt.Errorf("%s: id: missing or empty (it is required)", u)
	}
	return d, nil
}

// DecodeUserData decodes the base64 user-data (line breaks and blanks
// ignored). ok is false when it is not base64; b is then returned as it
// is, as cloud-init keeps it.
func DecodeUserData(b []byte) (out []byte, ok bool) {
	s := strings.Map(func(r rune) rune {
		if r == ' ' || r == '\t' || r == '\r' || r == '\n' {
			return -1
		}
		return r
	}, string(b))
	out, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		return b, false
	}
	return out, true
}
