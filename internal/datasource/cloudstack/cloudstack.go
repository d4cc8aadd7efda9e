// Package cloudstack reads Apache CloudStack's metadata, served by the
// virtual router (the DHCP server of the instance's network), into the
// instance model, as cloud-init's DataSourceCloudStack does: the
// EC2-style meta-data at /latest/meta-data/, /latest/user-data, and the
// VM's password from the router's password server on port 8080.
//
// Exoscale runs the same services at its own address (package exoscale
// uses readMetadata and Password from here).
//
// The password is a secret: it goes into instance.Data.AdminPass only
// (the sensitive instance data; applying it is the set_passwords path's),
// and never into an error or a log line. cloud-init makes it the default
// user's password with chpasswd.expire false and ssh_pwauth true.
//
// Differences from cloud-init: the virtual router is the temporary lease's
// DHCP server only (cloud-init also tries the data-server DNS name, the
// leases of other DHCP clients and the default gateway); a meta-data
// listing entry that is a directory is skipped (CloudStack's tree is
// flat).
package cloudstack

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"

	"github.com/earlyinit/earlyinit/internal/datasource"
	"github.com/earlyinit/earlyinit/internal/httpget"
	"github.com/earlyinit/earlyinit/internal/instance"
	"github.com/earlyinit/earlyinit/internal/scalar"
)

// APIVersion is the meta-data version cloud-init reads.
const APIVersion = "latest"

// PasswordPort is the password server's port on the virtual router.
const PasswordPort = "8080"

// PasswordHeader is the password server's request header; its values ask
// for the password and acknowledge it.
const (
	PasswordHeader = "DomU_Request"
	SendPassword   = "send_my_password"
	SavedPassword  = "saved_password"
	badRequest     = "bad_request"
)

// Limits: each meta-data value and the listing get MaxMetadata, the
// user-data MaxUserData, the password maxPassword; a listing has at most
// MaxEntries entries.
const (
	MaxMetadata = 1 << 20
	MaxUserData = datasource.MaxFileSize
	maxPassword = 4 << 10
	MaxEntries  = 100
)

// Client reads a CloudStack virtual router. Server, or BaseURL and
// PasswordURL, must be set. Logf is told of skipped entries and of a
// password server that failed too (never of the password).
type Client struct {
	// Server is the virtual router's address ("10.1.1.1"): the metadata
	// is at http://Server/ and the password server at http://Server:8080/.
	Server string
	// BaseURL and PasswordURL, if set, replace those two.
	BaseURL, PasswordURL string
	// HTTPClient makes the requests.
	datasource.HTTPClient
}

// Read fetches the meta-data and user-data, then asks for the password.
// A meta-data or user-data failure rejects the source with an error naming
// the URL; a password server that fails is logged and the source read
// without a password, as cloud-init does.
func (c *Client) Read(ctx context.Context) (*instance.Data, error) {
	base, pwURL := strings.TrimRight(c.BaseURL, "/"), c.PasswordURL
	if c.Server != "" {
		host := c.Server
		if strings.Contains(host, ":") {
			host = "[" + host + "]"
		}
		if base == "" {
			base = "http://" + host
		}
		if pwURL == "" {
			pwURL = "http://" + host + ":" + PasswordPort + "/"
		}
	}
	if base == "" {
		return nil, errors.New("no virtual router address: CloudStack serves its metadata at the DHCP server, and there was no lease")
	}
	g := c.Fetcher()
	d, err := ReadService(ctx, g, base, APIVersion, c.Logf)
	if err != nil {
		return nil, err
	}
	d.Datasource, d.DatasourceClass = "cloudstack", "CloudStack"
	d.CloudName, d.Platform = "cloudstack", "cloudstack"
	if pwURL != "" {
		pw, err := Password(ctx, g, pwURL)
		switch {
		case err != nil:
			c.Log("cloudstack: no password from the virtual router: %v", err)
		case pw != "":
			d.AdminPass = pw
		}
	}
	return d, nil
}

// ReadService reads the EC2-style meta-data and user-data under
// base/version/ into the instance model (its datasource names left for
// the caller to set). A 404 for the user-data means none.
func ReadService(ctx context.Context, g httpget.Fetcher, base, version string, logf func(string, ...any)) (*instance.Data, error) {
	mdURL := base + "/" + version + "/meta-data/"
	meta, err := readMetadata(ctx, g, mdURL, logf)
	if err != nil {
		return nil, err
	}
	d, err := fromMetadata(mdURL, meta)
	if err != nil {
		return nil, err
	}
	if d.UserData, err = datasource.Optional(g.Get(ctx, httpget.Request{URL: base + "/" + version + "/user-data", Limit: MaxUserData})); err != nil {
		return nil, err
	}
	d.Subplatform = fmt.Sprintf("metadata (%s)", base)
	return d, nil
}

// readMetadata reads a flat EC2-style meta-data tree: the listing at mdURL
// (one name a line), then each name's value. A value of several lines is a
// list of them, as cloud-init's EC2 reader makes it. Directories ("name/")
// are skipped.
func readMetadata(ctx context.Context, g httpget.Fetcher, mdURL string, logf func(string, ...any)) (map[string]any, error) {
	b, err := g.Get(ctx, httpget.Request{URL: mdURL, Limit: MaxMetadata})
	if err != nil {
		return nil, err
	}
	var names []string
	for _, line := range strings.Split(string(b), "\n") {
		name := strings.TrimSpace(line)
		switch {
		case name == "":
			continue
		case strings.HasSuffix(name, "/"):
			if logf != nil {
				logf("cloudstack: %s%s: a directory, skipped", mdURL, name)
			}
			continue
		case strings.ContainsAny(name, "?#") || name == "." || name == "..":
			return nil, fmt.Errorf("%s: listing: bad name %q", mdURL, name)
		}
		names = append(names, name)
	}
	if len(names) > MaxEntries {
		return nil, fmt.Errorf("%s: listing: %d entries, more than the %d allowed", mdURL, len(names), MaxEntries)
	}
	meta := map[string]any{}
	for _, name := range names {
		if _, dup := meta[name]; dup {
			continue
		}
		v, err := g.Get(ctx, httpget.Request{URL: mdURL + url.PathEscape(name), Limit: MaxMetadata})
		if err != nil {
			return nil, err
		}
		meta[name] = leaf(string(v))
	}
	return meta, nil
}

// leaf is a meta-data value: its text without a final line break, or the
// list of its lines when it has several.
func leaf(s string) any {
	s = strings.TrimRight(s, "\r\n")
	if !strings.Contains(s, "\n") {
		return s
	}
	lines := []any{}
	for _, l := range strings.Split(s, "\n") {
		lines = append(lines, strings.TrimRight(l, "\r"))
	}
	return lines
}

// fromMetadata fills the instance model from a meta-data tree read at
// mdURL (named in errors): instance-id (required), local-hostname,
// availability-zone and public-keys.
func fromMetadata(mdURL string, meta map[string]any) (*instance.Data, error) {
	str := func(key string) (string, error) {
		switch v := meta[key].(type) {
		case nil:
			return "", nil
		case string:
			return strings.TrimSpace(v), nil
		default:
			return "", fmt.Errorf("%s%s: want one line, got %s", mdURL, key, scalar.JSONNoun(v))
		}
	}
	d := &instance.Data{Meta: meta}
	var err error
	if d.InstanceID, err = str("instance-id"); err != nil {
		return nil, err
	}
	if d.InstanceID == "" {
		return nil, fmt.Errorf("%sinstance-id: missing or empty (it is required)", mdURL)
	}
	if d.LocalHostname, err = str("local-hostname"); err != nil {
		return nil, err
	}
	if d.AvailabilityZone, err = str("availability-zone"); err != nil {
		return nil, err
	}
	if d.PublicKeys, err = datasource.PublicKeys(meta["public-keys"]); err != nil {
		return nil, fmt.Errorf("%spublic-keys: %w", mdURL, err)
	}
	return d, nil
}

// Password asks the password server at u for the VM's password, as
// cloud-init's CloudStackPasswordServerClient does: "send_my_password";
// an empty answer or "saved_password" means none is pending; otherwise the
// answer is the password, acknowledged with "saved_password" so the
// server forgets it. It returns "" when there is none. Errors name the URL
// and never the password.
func Password(ctx context.Context, g httpget.Fetcher, u string) (string, error) {
	ask := func(what string) (string, error) {
		b, err := g.Get(ctx, httpget.Request{URL: u, Header: map[string]string{PasswordHeader: what}, Limit: maxPassword})
		if err != nil {
			return "", err
		}
		return strings.TrimSpace(string(b)), nil
	}
	pw, err := ask(SendPassword)
	if err != nil {
		return "", err
	}
	switch pw {
	case "", SavedPassword:
		return "", nil
	case badRequest:
		return "", fmt.Errorf("GET %s: the password server answered bad_request", u)
	}
	if _, err := ask(SavedPassword); err != nil {
		return "", fmt.Errorf("acknowledging the password: %w", err)
	}
	return pw, nil
}
