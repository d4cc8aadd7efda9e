// Package openstack reads nova's metadata service (and the Neutron and
// ZStack proxies that answer for it at 169.254.169.254) into the instance
// model, as cloud-init's DataSourceOpenStack and MetadataReader do.
//
// It produces exactly what internal/datasource/configdrive produces for the same
// files: the HTTP answers are laid out as a config drive in memory and read
// by configdrive.Read, so both sources share one parser.
//
// Differences from cloud-init: a version list that cannot be fetched for
// any reason but a 4xx answer rejects the source (cloud-init shrugs and
// tries "latest", whose fetch then fails the same way, doubling the wait);
// 5xx answers are retried; the EC2-style metadata tree that cloud-init also
// crawls (for block-device-mapping) is not read, so Meta has no
// "ec2_metadata".
package openstack

import (
	"context"
	"fmt"
	"io/fs"
	"net/url"
	"path"
	"slices"
	"strings"
	"testing/fstest"

	"github.com/earlyinit/earlyinit/internal/datasource"
	"github.com/earlyinit/earlyinit/internal/datasource/configdrive"
	"github.com/earlyinit/earlyinit/internal/httpget"
	"github.com/earlyinit/earlyinit/internal/instance"
	"github.com/earlyinit/earlyinit/internal/jsondoc"
	"github.com/earlyinit/earlyinit/internal/scalar"
)

// DefaultBaseURL is nova's metadata service address.
const DefaultBaseURL = "http://169.254.169.254"

// Body limits. MaxMetadata bounds every JSON document and the version
// list; user_data and injected files get MaxUserData (or Client.MaxBody).
const (
	MaxUserData = datasource.MaxFileSize // 16 MiB
	MaxMetadata = 1 << 20                // 1 MiB
)

// maxContentFiles bounds the injected files (and legacy network_config)
// fetched from openstack/content/: nova's default quota is 5.
const maxContentFiles = 100

// Client reads nova's metadata service. The zero value reads
// http://169.254.169.254 with the defaults below.
type Client struct {
	// BaseURL is the service's root; "" means DefaultBaseURL.
	BaseURL string
	// HTTPClient makes the requests; its Logf is told of retries and of
	// the version chosen.
	datasource.HTTPClient
	// MaxBody bounds user_data and injected files; 0 means MaxUserData.
	// Metadata documents are bounded by the smaller of MaxBody and
	// MaxMetadata.
	MaxBody int64
}

// fetcher is one Read's state.
type fetcher struct {
	g       httpget.Fetcher
	base    string
	maxBody int64
	maxMeta int64
}

// get fetches rel (a slash-separated path under the base URL). With
// optional, a 404 answer means (nil, nil).
func (f *fetcher) get(ctx context.Context, rel string, limit int64, optional bool) ([]byte, error) {
	b, err := f.g.Get(ctx, httpget.Request{URL: f.url(rel), Limit: limit})
	if optional && httpget.NotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if b == nil {
		b = []byte{}
	}
	return b, nil
}

func (f *fetcher) url(rel string) string {
	parts := strings.Split(rel, "/")
	for i, p := range parts {
		parts[i] = url.PathEscape(p)
	}
	return f.base + "/" + strings.Join(parts, "/")
}

// Read fetches the metadata, user-data, vendor-data and network
// configuration. ctx bounds the whole attempt; any failure rejects the
// source with an error that names the URL and the reason.
func (c *Client) Read(ctx context.Context) (*instance.Data, error) {
	base := datasource.BaseURL(c.BaseURL, DefaultBaseURL)
	f := &fetcher{
		g:       c.Fetcher(),
		base:    base,
		maxBody: datasource.Limit(c.MaxBody, MaxUserData),
	}
	f.maxMeta = min(f.maxBody, MaxMetadata)

	version, err := f.version(ctx)
	if err != nil {
		return nil, err
	}
	c.Log("openstack: metadata version %s at %s", version, base)
	fsys, err := f.drive(ctx, version)
	if err != nil {
		return nil, err
	}
	d, err := configdrive.Read(fsys)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", base, err)
	}
	d.Datasource = "openstack"
	d.CloudName = "openstack"
	d.Platform = "openstack"
	d.Subplatform = fmt.Sprintf("metadata (%s)", base)
	return d, nil
}

// version lists /openstack and picks the newest version configdrive knows,
// else "latest", as cloud-init's _find_working_version does. A 4xx answer
// means no list ("latest"); anything else that is not a list rejects the
// service.
func (f *fetcher) version(ctx context.Context) (string, error) {
	b, err := f.get(ctx, "openstack", f.maxMeta, false)
	if s := httpget.Status(err); s >= 400 && s < 500 {
		return "latest", nil
	}
	if err != nil {
		return "", err
	}
	return PickVersion(string(b)), nil
}

// PickVersion returns the newest version in list (one per line, as GET
// /openstack answers) that configdrive knows, else "latest".
func PickVersion(list string) string {
	var avail []string
	for _, l := range strings.Split(list, "\n") {
		avail = append(avail, strings.TrimSpace(l))
	}
	known := configdrive.Versions()
	for i := len(known) - 1; i >= 0; i-- {
		if slices.Contains(avail, known[i]) {
			return known[i]
		}
	}
	return "latest"
}

// drive fetches openstack/<version>/ and the content it points to into a
// config drive tree.
func (f *fetcher) drive(ctx context.Context, version string) (fstest.MapFS, error) {
	dir := path.Join("openstack", version)
	fsys := fstest.MapFS{}
	put := func(name string, b []byte) {
		if b != nil {
			fsys[name] = &fstest.MapFile{Data: b, Mode: 0o444}
		}
	}

	// meta_data.json is required: a 404 rejects the service.
	mdName := path.Join(dir, "meta_data.json")
	md, err := f.get(ctx, mdName, f.maxMeta, false)
	if err != nil {
		return nil, err
	}
	mdv, err := f.decodeObject(mdName, md)
	if err != nil {
		return nil, err
	}
	put(mdName, md)

	for _, name := range []string{"network_data.json", "vendor_data.json", "vendor_data2.json"} {
		name = path.Join(dir, name)
		b, err := f.get(ctx, name, f.maxMeta, true)
		if err != nil {
			return nil, err
		}
		if b != nil {
			// Check here, so a syntax error names the URL; configdrive
			// checks the rest.
			if _, err := jsondoc.Decode(f.url(name), b); err != nil {
				return nil, err
			}
		}
		put(name, b)
	}
	udName := path.Join(dir, "user_data")
	ud, err := f.get(ctx, udName, f.maxBody, true)
	if err != nil {
		return nil, err
	}
	put(udName, ud)

	// Content: injected files, and the legacy network_config, which only
	// counts without network_data.json. A content path configdrive would
	// refuse is not fetched; configdrive then says why.
	var content []string
	if list, ok := mdv["files"].([]any); ok {
		for _, e := range list {
			item, ok := e.(map[string]any)
			if !ok {
				continue
			}
			if _, ok := item["path"]; !ok {
				continue
			}
			if p, ok := contentName(item["content_path"]); ok && !slices.Contains(content, p) {
				content = append(content, p)
			}
		}
	}
	if _, ok := fsys[path.Join(dir, "network_data.json")]; !ok {
		if nc, ok := mdv["network_config"].(map[string]any); ok {
			if p, ok := contentName(nc["content_path"]); ok && !slices.Contains(content, p) {
				content = append(content, p)
			}
		}
	}
	if len(content) > maxContentFiles {
		return nil, fmt.Errorf("%s: %d content files, more than the %d allowed", f.url(mdName), len(content), maxContentFiles)
	}
	for _, name := range content {
		b, err := f.get(ctx, name, f.maxBody, true)
		if err != nil {
			return nil, err
		}
		put(name, b)
	}
	return fsys, nil
}

func (f *fetcher) decodeObject(name string, b []byte) (map[string]any, error) {
	v, err := jsondoc.Decode(f.url(name), b)
	if err != nil {
		return nil, err
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("%s: want a JSON object, got %s", f.url(name), scalar.JSONNoun(v))
	}
	return m, nil
}

// contentName turns a content_path ("/content/0000") into its name under
// the drive ("openstack/content/0000"), as configdrive resolves it; ok is
// false for a value configdrive would refuse.
func contentName(v any) (string, bool) {
	s, ok := v.(string)
	if !ok {
		return "", false
	}
	parts := []string{"openstack"}
	for _, p := range strings.Split(s, "/") {
		switch p {
		case "", ".":
		case "..":
			return "", false
		default:
			parts = append(parts, p)
		}
	}
	if len(parts) == 1 {
		return "", false
	}
	name := path.Join(parts...)
	if !fs.ValidPath(name) {
		return "", false
	}
	return name, true
}

// http is c.Fetcher(); PostPassword (password.go) calls it.
func (c *Client) http() httpget.Fetcher { return c.Fetcher() }
