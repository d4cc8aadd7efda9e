// Package aliyun reads Alibaba Cloud ECS's metadata service at
// http://100.100.100.200 into the instance model, as cloud-init's
// DataSourceAliYun does.
//
// The service is EC2-like: a session token is asked for first (PUT
// /latest/api/token with X-aliyun-ecs-metadata-token-ttl-seconds) and sent
// with every request as X-aliyun-ecs-metadata-token; the API version is
// fixed (2016-01-01). The whole meta-data comes as one JSON document at
// meta-data/all, each value decoded as an EC2 leaf is; a service without
// it is walked as an EC2 tree (internal/datasource/ec2's reader). user-data and
// vendor-data sit next to meta-data.
//
// Differences from cloud-init: an answer other than 404 for user-data or
// vendor-data rejects the source (cloud-init logs it and goes on without
// them); the network configuration is the meta-data's network/ tree in
// the EC2 format, so secondary addresses listed as local-ipv4s (which
// ECS does not list) would be configured as on EC2, and NICs are ordered by
// MAC rather than by name.
package aliyun

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/earlyinit/earlyinit/internal/datasource"
	"github.com/earlyinit/earlyinit/internal/datasource/ec2"
	"github.com/earlyinit/earlyinit/internal/dmi"
	"github.com/earlyinit/earlyinit/internal/httpget"
	"github.com/earlyinit/earlyinit/internal/instance"
	"github.com/earlyinit/earlyinit/internal/jsondoc"
	"github.com/earlyinit/earlyinit/internal/scalar"
)

// DefaultBaseURL is the ECS metadata service address.
const DefaultBaseURL = "http://100.100.100.200"

// ProductName is an ECS instance's DMI product_name.
const ProductName = "Alibaba Cloud ECS"

// Version is the API version read (cloud-init's min_metadata_version).
const Version = "2016-01-01"

// Token route and headers, as cloud-init sends them.
const (
	TokenPath      = "latest/api/token"
	TokenHeader    = "X-aliyun-ecs-metadata-token"
	TokenTTLHeader = "X-aliyun-ecs-metadata-token-ttl-seconds"
)

// Body limits: MaxMetadata bounds meta-data/all and each document of the
// tree; user-data, vendor-data and the tree as a whole get MaxUserData (or
// Client.MaxBody).
const (
	MaxUserData = datasource.MaxFileSize
	MaxMetadata = 1 << 20
)

// Platform recognises ECS: product_name "Alibaba Cloud ECS", as
// ds-identify and cloud-init's _is_aliyun compare it (exactly).
func Platform(i dmi.Info) bool { return i.ProductName == ProductName }

// Client reads the ECS metadata service. The zero value reads
// http://100.100.100.200 with the defaults below.
type Client struct {
	// BaseURL is the service's root; "" means DefaultBaseURL.
	BaseURL string
	// HTTPClient makes the requests.
	datasource.HTTPClient
	// MaxBody bounds user-data, vendor-data and the meta-data tree; 0
	// means MaxUserData.
	MaxBody int64
}

// Read fetches the token, meta-data, user-data and vendor-data. Any
// failure rejects the source with an error naming the URL; the token is
// never logged.
func (c *Client) Read(ctx context.Context) (*instance.Data, error) {
	base := datasource.BaseURL(c.BaseURL, DefaultBaseURL)
	g := c.Fetcher()
	maxBody := datasource.Limit(c.MaxBody, MaxUserData)
	maxMeta := min(maxBody, MaxMetadata)

	tokURL := base + "/" + TokenPath
	tok, err := ec2.Token(ctx, g, tokURL, TokenTTLHeader, maxMeta)
	if s := httpget.Status(err); s == 403 {
		return nil, fmt.Errorf("aliyun: %w (the instance's metadata service is disabled)", err)
	}
	if err != nil {
		return nil, fmt.Errorf("aliyun: %w", err)
	}
	if tok == "" {
		return nil, fmt.Errorf("aliyun: PUT %s: empty or unprintable token", tokURL)
	}
	header := map[string]string{TokenHeader: tok}
	get := func(u string, limit int64) ([]byte, error) {
		return g.Get(ctx, httpget.Request{URL: u, Header: header, Limit: limit})
	}

	root := base + "/" + Version + "/"
	meta, err := c.meta(ctx, g, header, get, root, maxMeta, maxBody)
	if err != nil {
		return nil, fmt.Errorf("aliyun: %w", err)
	}
	d, err := fromMeta(root+"meta-data/", meta)
	if err != nil {
		return nil, fmt.Errorf("aliyun: %w", err)
	}
	d.Subplatform = fmt.Sprintf("metadata (%s)", base)
	if d.UserData, err = datasource.Optional(get(root+"user-data", maxBody)); err != nil {
		return nil, fmt.Errorf("aliyun: %w", err)
	}
	if d.VendorData, err = datasource.Optional(get(root+"vendor-data", maxBody)); err != nil {
		return nil, fmt.Errorf("aliyun: %w", err)
	}
	return d, nil
}

// meta reads meta-data/all, or walks the meta-data tree when the service
// does not answer it with a JSON object.
func (c *Client) meta(ctx context.Context, g httpget.Fetcher, header map[string]string, get func(string, int64) ([]byte, error), root string, maxMeta, maxBody int64) (map[string]any, error) {
	allURL := root + "meta-data/all"
	b, err := get(allURL, maxMeta)
	if httpget.Status(err) == 0 && err != nil {
		return nil, err
	}
	if err == nil {
		v, perr := jsondoc.Decode(allURL, b)
		if m, ok := v.(map[string]any); ok && perr == nil {
			c.Log("aliyun: meta-data from %s", allURL)
			return decodeValues(m).(map[string]any), nil
		}
		if perr == nil {
			perr = fmt.Errorf("%s: want a JSON object, got %s", allURL, scalar.JSONNoun(v))
		}
		err = perr
	}
	c.Log("aliyun: %v: walking the meta-data tree", err)
	return ec2.Tree(ctx, g, header, root+"meta-data/", maxMeta, maxBody, c.Logf)
}

// decodeValues decodes every string in v as an EC2 leaf, as cloud-init
// does with meta-data/all ("a\r\nb" becomes a list of lines).
func decodeValues(v any) any {
	switch v := v.(type) {
	case map[string]any:
		for k, e := range v {
			v[k] = decodeValues(e)
		}
		return v
	case []any:
		for i, e := range v {
			v[i] = decodeValues(e)
		}
		return v
	case string:
		return ec2.DecodeLeaf([]byte(v))
	}
	return v
}

// fromMeta fills the instance model from the meta-data read at mdURL (for
// errors).
func fromMeta(mdURL string, meta map[string]any) (*instance.Data, error) {
	keyErr := func(key, format string, args ...any) error {
		return fmt.Errorf("%s%s: %s", mdURL, key, fmt.Sprintf(format, args...))
	}
	str := func(key string) (string, error) {
		switch v := meta[key].(type) {
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
			return "", keyErr(key, "want one value, got %d", len(v))
		default:
			return "", keyErr(key, "want a string, got %s", scalar.JSONNoun(v))
		}
	}
	d := &instance.Data{Datasource: "aliyun", CloudName: "aliyun", Platform: "aliyun", Meta: meta}
	var err error
	if d.InstanceID, err = str("instance-id"); err != nil {
		return nil, err
	}
	if strings.TrimSpace(d.InstanceID) == "" {
		return nil, keyErr("instance-id", "missing or empty (it is required)")
	}
	if d.LocalHostname, err = str("hostname"); err != nil {
		return nil, err
	}
	if d.Region, err = str("region-id"); err != nil {
		return nil, err
	}
	if d.AvailabilityZone, err = str("zone-id"); err != nil {
		return nil, err
	}
	if d.PublicKeys, err = publicKeys(meta["public-keys"]); err != nil {
		return nil, keyErr("public-keys", "%v", err)
	}
	switch nw := meta["network"].(type) {
	case nil:
	case map[string]any:
		if d.Network, err = json.Marshal(nw); err != nil {
			return nil, keyErr("network", "%v", err)
		}
		d.NetworkFormat = instance.NetworkEC2Metadata
	default:
		return nil, keyErr("network", "want a directory, got %s", scalar.JSONNoun(nw))
	}
	return d, nil
}

// publicKeys is cloud-init's parse_public_keys: public-keys maps key ids
// to a key, a list of keys, or a directory whose openssh-key is either.
// Ids come sorted (the JSON document's order is lost).
func publicKeys(v any) ([]string, error) {
	if v == nil || v == "" {
		return nil, nil
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("want a directory, got %s", scalar.JSONNoun(v))
	}
	ids := make([]string, 0, len(m))
	for id := range m {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	var keys []string
	for _, id := range ids {
		kv := m[id]
		if dir, ok := kv.(map[string]any); ok {
			kv = dir["openssh-key"]
		}
		ks, err := datasource.PublicKeys(kv)
		if err != nil {
			return nil, fmt.Errorf("%q: %v", id, err)
		}
		keys = append(keys, ks...)
	}
	return keys, nil
}
