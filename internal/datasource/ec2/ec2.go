// Package ec2 reads the EC2 instance metadata service (IMDS), and the
// services that imitate it (nova's EC2 API, ZStack, ...), into the instance
// model, as cloud-init's DataSourceEc2 does.
//
// The service is asked for an IMDSv2 session token first (PUT
// /latest/api/token); every later request carries it. A service that
// answers the PUT with an HTTP error, or not at all within the request
// timeout, is read without a token (IMDSv1).
//
// Differences from cloud-init: the reader does not tell the EC2 clouds
// apart: the token is always tried (unless Client.NoToken, which the ZStack
// and Outscale sources set, as cloud-init asks for it on AWS only) and v1
// always allowed, as cloud-init does on clouds other than AWS; the API version comes from the version list (GET
// /) rather than from probing each version's instance-id, and is "latest"
// when the list names none cloud-init knows; the instance identity
// document is not read (the instance id and region come from meta-data);
// any failure while walking meta-data rejects the source with its URL
// (cloud-init logs it and goes on with empty metadata), but for 404s under
// tags/; a scalar value that arrived as a one-line list (a trailing
// newline) is taken as that line.
package ec2

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/earlyinit/earlyinit/internal/datasource"
	"github.com/earlyinit/earlyinit/internal/httpget"
	"github.com/earlyinit/earlyinit/internal/instance"
	"github.com/earlyinit/earlyinit/internal/scalar"
)

// DefaultBaseURL is the IMDS address.
const DefaultBaseURL = "http://169.254.169.254"

// Body limits. MaxMetadata bounds each meta-data document, the version list
// and the token; user-data, and the meta-data tree as a whole, get
// MaxUserData (or Client.MaxBody).
const (
	MaxUserData = datasource.MaxFileSize // 16 MiB
	MaxMetadata = 1 << 20                // 1 MiB
)

// IMDSv2 token route and headers, as cloud-init sends them.
const (
	TokenPath      = "latest/api/token"
	TokenHeader    = "X-aws-ec2-metadata-token"
	TokenTTLHeader = "X-aws-ec2-metadata-token-ttl-seconds"
	TokenTTL       = "21600"
)

// MinVersion is cloud-init's min_metadata_version: the API version used
// when the list has none of extendedVersions.
const MinVersion = "2009-04-04"

// extendedVersions are cloud-init's extended_metadata_versions, most wanted
// first: 2016-09-02 brought IPv6, 2021-03-23 tags.
func extendedVersions() []string { return []string{"2021-03-23", "2018-09-24", "2016-09-02"} }

// Client reads an EC2-style metadata service. The zero value reads
// http://169.254.169.254 with the defaults below.
type Client struct {
	// BaseURL is the service's root; "" means DefaultBaseURL.
	BaseURL string
	// HTTPClient makes the requests (its RequestTimeout bounds each try;
	// the token PUT is tried once when it times out). Logf is told of
	// retries, of the IMDS version and API version used and of skipped
	// entries.
	datasource.HTTPClient
	// MaxBody bounds user-data and the whole meta-data tree; 0 means
	// MaxUserData. Each meta-data document is bounded by the smaller of
	// MaxBody and MaxMetadata.
	MaxBody int64
	// NoToken skips the IMDSv2 token PUT and reads the service as IMDSv1
	// from the start, as cloud-init does on the EC2-compatible clouds
	// other than AWS (ZStack, Outscale): one request, and no timeout
	// spent on a service that never answers a PUT.
	NoToken bool
}

type fetcher struct {
	g       httpget.Fetcher
	base    string
	header  map[string]string
	maxBody int64
	maxMeta int64
	logf    func(string, ...any)
}

func (f *fetcher) log(format string, args ...any) {
	if f.logf != nil {
		f.logf(format, args...)
	}
}

func (f *fetcher) fetch(ctx context.Context, u string, limit int64) ([]byte, error) {
	return f.g.Get(ctx, httpget.Request{URL: u, Header: f.header, Limit: limit})
}

// Read fetches meta-data and user-data. ctx bounds the whole attempt; any
// failure rejects the source with an error that names the URL and the
// reason.
func (c *Client) Read(ctx context.Context) (*instance.Data, error) {
	base := datasource.BaseURL(c.BaseURL, DefaultBaseURL)
	f := &fetcher{
		g:       c.Fetcher(),
		base:    base,
		header:  map[string]string{},
		maxBody: datasource.Limit(c.MaxBody, MaxUserData),
		logf:    c.Logf,
	}
	f.maxMeta = min(f.maxBody, MaxMetadata)

	var token string
	if !c.NoToken {
		var err error
		if token, err = f.token(ctx); err != nil {
			return nil, err
		}
	}
	if token != "" {
		f.header[TokenHeader] = token
	}
	version, err := f.version(ctx)
	if err != nil {
		return nil, err
	}
	imds := "IMDSv1"
	if token != "" {
		imds = "IMDSv2"
	}
	f.log("ec2: %s, API version %s at %s", imds, version, base)

	mdURL := base + "/" + version + "/meta-data/"
	meta, err := Tree(ctx, f.g, f.header, mdURL, f.maxMeta, f.maxBody, f.logf)
	if err != nil {
		return nil, err
	}
	d, err := fromMeta(mdURL, meta)
	if err != nil {
		return nil, err
	}
	d.Subplatform = fmt.Sprintf("metadata (%s)", base)

	ud, err := f.fetch(ctx, base+"/"+version+"/user-data", f.maxBody)
	switch {
	case httpget.NotFound(err):
	case err != nil:
		return nil, err
	default:
		d.UserData = ud
		if d.UserData == nil {
			d.UserData = []byte{}
		}
	}
	return d, nil
}

// token asks for an IMDSv2 token. "" without error means IMDSv1: the
// service answered with an HTTP error, a bad token or not at all. A
// service that cannot be reached is an error.
func (f *fetcher) token(ctx context.Context) (string, error) {
	u := f.base + "/" + TokenPath
	tok, err := Token(ctx, f.g, u, TokenTTLHeader, f.maxMeta)
	var te *httpget.TimeoutError
	switch {
	case err == nil:
	case httpget.Status(err) != 0, errors.As(err, &te):
		f.log("ec2: no IMDSv2 token (%v): using IMDSv1", err)
		return "", nil
	default:
		return "", err
	}
	if tok == "" {
		f.log("ec2: PUT %s: empty or unprintable token: using IMDSv1", u)
	}
	return tok, nil
}

// Token asks an IMDSv2-style service for a session token: PUT url with
// ttlHeader set to TokenTTL, tried once if it times out. The token comes
// back trimmed; "" without error means the answer was empty or not
// printable ASCII (no token to use). An HTTP error, a timeout or a
// connection error is returned as is, for the caller to decide (EC2 reads
// on without a token, Alibaba Cloud does not). It is exported for the
// EC2-compatible readers with their own header names.
func Token(ctx context.Context, g httpget.Fetcher, url, ttlHeader string, limit int64) (string, error) {
	b, err := g.Get(ctx, httpget.Request{
		Method:           "PUT",
		URL:              url,
		Header:           map[string]string{ttlHeader: TokenTTL},
		Limit:            limit,
		NoRetryOnTimeout: true,
	})
	if err != nil {
		return "", err
	}
	tok := strings.TrimSpace(string(b))
	if tok == "" || strings.IndexFunc(tok, func(r rune) bool { return r < 0x20 || r > 0x7e }) >= 0 {
		return "", nil
	}
	return tok, nil
}

// version picks the API version from the list at GET /: the first of
// extendedVersions listed, else MinVersion if listed, else "latest". A 4xx
// answer means no list ("latest").
func (f *fetcher) version(ctx context.Context) (string, error) {
	b, err := f.fetch(ctx, f.base+"/", f.maxMeta)
	if s := httpget.Status(err); s >= 400 && s < 500 {
		f.log("ec2: no version list (%v): using latest", err)
		return "latest", nil
	}
	if err != nil {
		return "", err
	}
	return PickVersion(string(b)), nil
}

// PickVersion chooses the API version from a version list, one per line.
func PickVersion(list string) string {
	var avail []string
	for _, l := range splitLines(list) {
		avail = append(avail, strings.TrimSpace(l))
	}
	for _, v := range append(extendedVersions(), MinVersion) {
		if slices.Contains(avail, v) {
			return v
		}
	}
	return "latest"
}

// fromMeta fills the instance model from the meta-data tree fetched at
// mdURL (for errors).
func fromMeta(mdURL string, meta map[string]any) (*instance.Data, error) {
	keyErr := func(key, format string, args ...any) error {
		return fmt.Errorf("%s%s: %s", mdURL, key, fmt.Sprintf(format, args...))
	}
	// str returns a scalar value, "" when absent.
	str := func(m map[string]any, path, key string) (string, error) {
		switch v := m[key].(type) {
		case nil:
			return "", nil
		case string:
			return v, nil
		case []any:
			if len(v) == 1 {
				if s, ok := v[0].(string); ok {
					return s, nil
				}
			}
			return "", keyErr(path+key, "want one value, got %d lines", len(v))
		default:
			return "", keyErr(path+key, "want a string, got %s", scalar.JSONNoun(v))
		}
	}
	d := &instance.Data{Datasource: "ec2", CloudName: "aws", Platform: "ec2", Meta: meta}
	var err error
	if d.InstanceID, err = str(meta, "", "instance-id"); err != nil {
		return nil, err
	}
	if strings.TrimSpace(d.InstanceID) == "" {
		return nil, keyErr("instance-id", "missing or empty (it is required)")
	}
	if d.LocalHostname, err = str(meta, "", "local-hostname"); err != nil {
		return nil, err
	}
	switch pl := meta["placement"].(type) {
	case nil:
	case map[string]any:
		if d.AvailabilityZone, err = str(pl, "placement/", "availability-zone"); err != nil {
			return nil, err
		}
		if d.Region, err = str(pl, "placement/", "region"); err != nil {
			return nil, err
		}
	default:
		return nil, keyErr("placement", "want a directory, got %s", scalar.JSONNoun(pl))
	}
	if d.Region == "" && d.AvailabilityZone != "" {
		// cloud-init: the zone less its letter ("us-east-1a").
		_, n := utf8.DecodeLastRuneInString(d.AvailabilityZone)
		d.Region = d.AvailabilityZone[:len(d.AvailabilityZone)-n]
	}
	if d.PublicKeys, err = datasource.PublicKeys(meta["public-keys"]); err != nil {
		return nil, keyErr("public-keys/", "%v", err)
	}
	li, err := str(meta, "", "ami-launch-index")
	if err != nil {
		return nil, err
	}
	if li != "" {
		n, err := strconv.Atoi(strings.TrimSpace(li))
		if err != nil || n < 0 {
			return nil, keyErr("ami-launch-index", "want a non-negative integer, got %q", li)
		}
		d.LaunchIndex = &n
	}
	switch nw := meta["network"].(type) {
	case nil:
	case map[string]any:
		if d.Network, err = json.Marshal(nw); err != nil {
			return nil, keyErr("network/", "%v", err)
		}
		d.NetworkFormat = instance.NetworkEC2Metadata
	default:
		return nil, keyErr("network", "want a directory, got %s", scalar.JSONNoun(nw))
	}
	return d, nil
}
