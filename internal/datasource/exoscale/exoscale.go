// Package exoscale reads Exoscale's metadata into the instance model, as
// cloud-init's DataSourceExoscale does. Exoscale is CloudStack-based and
// serves the same two services, at its own address rather than at the
// DHCP server: the EC2-style meta-data and user-data of API version 1.0 at
// http://169.254.169.254/1.0/, and the password server on port 8080 of the
// same host (http://169.254.169.254:8080/1.0/). Both are read with package
// cloudstack's readers.
//
// The password goes into instance.Data.AdminPass only, never into an error
// or a log line. cloud-init makes it the default user's password
// (chpasswd.expire false, ssh_pwauth true) and runs set_passwords on every
// boot on Exoscale, since the password server hands out a password only
// after a reset; that frequency is the set_passwords path's to honour.
//
// Differences from cloud-init: the service is not waited for on its own
// (discovery bounds the whole attempt).
package exoscale

import (
	"context"
	"fmt"
	"net"
	"net/url"

	"github.com/earlyinit/earlyinit/internal/datasource"
	"github.com/earlyinit/earlyinit/internal/datasource/cloudstack"
	"github.com/earlyinit/earlyinit/internal/instance"
)

// DefaultBaseURL is the metadata service's address.
const DefaultBaseURL = "http://169.254.169.254"

// APIVersion is the meta-data version cloud-init reads.
const APIVersion = "1.0"

// PasswordPort is the password server's port on the metadata host.
const PasswordPort = "8080"

// Client reads Exoscale's metadata and password servers. The zero value
// reads http://169.254.169.254 with httpget's defaults. Logf is told of
// skipped entries and of a password server that failed too (never of the
// password).
type Client struct {
	// BaseURL is the metadata service's root; "" means DefaultBaseURL.
	BaseURL string
	// PasswordURL is the password server's; "" means port 8080 of
	// BaseURL's host, path /1.0/.
	PasswordURL string
	// HTTPClient makes the requests.
	datasource.HTTPClient
}

// Read fetches the meta-data and user-data, then asks for the password. A
// meta-data or user-data failure rejects the source with an error naming
// the URL; a password server that fails is logged and the source read
// without a password, as cloud-init does.
func (c *Client) Read(ctx context.Context) (*instance.Data, error) {
	base := datasource.BaseURL(c.BaseURL, DefaultBaseURL)
	pwURL := c.PasswordURL
	if pwURL == "" {
		var err error
		if pwURL, err = PasswordURL(base); err != nil {
			return nil, err
		}
	}
	g := c.Fetcher()
	d, err := cloudstack.ReadService(ctx, g, base, APIVersion, c.Logf)
	if err != nil {
		return nil, err
	}
	d.Datasource, d.DatasourceClass = "exoscale", "Exoscale"
	d.CloudName, d.Platform = "exoscale", "exoscale"
	pw, err := cloudstack.Password(ctx, g, pwURL)
	switch {
	case err != nil:
		c.Log("exoscale: no password from the password server: %v", err)
	case pw != "":
		d.AdminPass = pw
	}
	return d, nil
}

// PasswordURL is the password server's URL for the metadata service at
// base: the same host, port 8080, path /1.0/.
func PasswordURL(base string) (string, error) {
	u, err := url.Parse(base)
	if err != nil || u.Hostname() == "" {
		return "", fmt.Errorf("metadata URL %q: no host for the password server", base)
	}
	p := url.URL{Scheme: u.Scheme, Host: net.JoinHostPort(u.Hostname(), PasswordPort), Path: "/" + APIVersion + "/"}
	return p.String(), nil
}
