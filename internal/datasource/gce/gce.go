// Package gce reads Google Compute Engine's metadata server into the
// instance model, as cloud-init's DataSourceGCE does: instance/id,
// instance/zone and instance/hostname (required), and the instance's and
// the project's attributes (recursive JSON), every request carrying
// Metadata-Flavor: Google.
//
// SSH keys are the attributes' ssh-keys lines ("user:key") for the user
// "cloudinit" or the image's default user (Client.DefaultUser), not
// expired (the "google-ssh" schema's expireOn); the project's keys count
// unless the instance blocks them or has the legacy sshKeys. user-data is
// the instance attribute user-data (base64 when user-data-encoding says
// so). GCE gives no network configuration (the fallback applies) and no
// vendor-data.
//
// Differences from cloud-init: the server is reached at its address
// (http://169.254.169.254), not as metadata.google.internal (no resolver in
// the initramfs); an attributes document that is not a JSON object, or an
// answer other than 404 for it, rejects the source (cloud-init reads it as
// none); the default user is the image's (Service.DefaultUser), as
// discovery finds it in the image's users and system_info.
package gce

import (
	"context"
	"encoding/base64"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/earlyinit/earlyinit/internal/datasource"
	"github.com/earlyinit/earlyinit/internal/dmi"
	"github.com/earlyinit/earlyinit/internal/httpget"
	"github.com/earlyinit/earlyinit/internal/instance"
	"github.com/earlyinit/earlyinit/internal/jsondoc"
	"github.com/earlyinit/earlyinit/internal/scalar"
)

// DefaultBaseURL is the metadata server (metadata.google.internal).
const DefaultBaseURL = "http://169.254.169.254"

// MetadataPath is the API's root under the server.
const MetadataPath = "/computeMetadata/v1/"

// FlavorHeader: the server answers only requests that carry it (and
// answers with it).
const (
	FlavorHeader = "Metadata-Flavor"
	Flavor       = "Google"
)

// Body limits: MaxMetadata bounds each text value; the attributes
// documents, which hold user-data, get MaxUserData (or Client.MaxBody).
const (
	MaxUserData = datasource.MaxFileSize
	MaxMetadata = 64 << 10
)

// keysUser is the user whose ssh-keys lines are always taken.
const keysUser = "cloudinit"

// Platform recognises GCE as cloud-init's platform_reports_gce does:
// product_name "Google Compute Engine" (or "Google"), or a product serial
// starting "GoogleCloud-" (the product name is not guaranteed, LP:
// #1674861).
func Platform(i dmi.Info) bool {
	return i.ProductName == "Google Compute Engine" || i.ProductName == "Google" ||
		strings.HasPrefix(i.ProductSerial, "GoogleCloud-")
}

// Client reads the metadata server. The zero value reads
// http://169.254.169.254 with the defaults below.
type Client struct {
	// BaseURL is the server's root; "" means DefaultBaseURL.
	BaseURL string
	// HTTPClient makes the requests.
	datasource.HTTPClient
	// MaxBody bounds each attributes document; 0 means MaxUserData.
	MaxBody int64
	// DefaultUser is the image's default user, whose ssh-keys lines are
	// taken besides keysUser's; "" means only keysUser's.
	DefaultUser string
	// Now is the time keys expire against; nil means time.Now.
	Now func() time.Time
}

// Read fetches the instance's metadata. Any failure rejects the source
// with an error naming the URL and the reason.
func (c *Client) Read(ctx context.Context) (*instance.Data, error) {
	base := datasource.BaseURL(c.BaseURL, DefaultBaseURL)
	g := c.Fetcher()
	maxBody := datasource.Limit(c.MaxBody, MaxUserData)
	root := base + MetadataPath
	get := func(rel string, limit int64) ([]byte, error) {
		return g.Get(ctx, httpget.Request{URL: root + rel, Header: map[string]string{FlavorHeader: Flavor}, Limit: limit})
	}

	md, err := readText(get, root, min(maxBody, MaxMetadata))
	if err != nil {
		return nil, err
	}
	inst, proj, err := readAttributes(get, root, maxBody, md)
	if err != nil {
		return nil, err
	}

	d, err := fromText(root, md)
	if err != nil {
		return nil, err
	}

	lines, err := keyLines(inst, proj)
	if err != nil {
		return nil, fmt.Errorf("gce: %s: %w", root+"instance/attributes/", err)
	}
	md["public-keys-data"] = lines
	now := time.Now
	if c.Now != nil {
		now = c.Now
	}
	d.PublicKeys = PublicKeys(lines, c.DefaultUser, now())

	if d.UserData, err = c.userData(root, inst); err != nil {
		return nil, err
	}
	return d, nil
}

// getter gets the document at rel, under the API's root, reading at most
// limit bytes.
type getter func(rel string, limit int64) ([]byte, error)

// readText reads the required text values (instance/id, instance/zone,
// instance/hostname) as the meta-data's instance-id, availability-zone
// and local-hostname; root names them in errors.
func readText(get getter, root string, limit int64) (map[string]any, error) {
	md := map[string]any{}
	for _, k := range []struct{ key, path string }{
		{"instance-id", "instance/id"},
		{"availability-zone", "instance/zone"},
		{"local-hostname", "instance/hostname"},
	} {
		b, err := get(k.path, limit)
		if httpget.NotFound(err) {
			return nil, fmt.Errorf("gce: %w: required key %s missing (not GCE)", err, k.key)
		}
		if err != nil {
			return nil, fmt.Errorf("gce: %w", err)
		}
		if !utf8.Valid(b) {
			return nil, fmt.Errorf("gce: %s%s: not UTF-8", root, k.path)
		}
		md[k.key] = string(b)
	}
	return md, nil
}

// readAttributes reads the instance's and the project's attributes (empty
// when there are none), and sets them as md's instance-data and
// project-data.
func readAttributes(get getter, root string, limit int64, md map[string]any) (inst, proj map[string]any, err error) {
	attrs := map[string]map[string]any{}
	for _, k := range []struct{ key, path string }{
		{"instance-data", "instance/attributes/?recursive=true"},
		{"project-data", "project/attributes/?recursive=true"},
	} {
		m := map[string]any{}
		b, err := datasource.Optional(get(k.path, limit))
		if err != nil {
			return nil, nil, fmt.Errorf("gce: %w", err)
		}
		if b != nil {
			v, err := jsondoc.Decode(root+k.path, b)
			if err != nil {
				return nil, nil, fmt.Errorf("gce: %w", err)
			}
			var ok bool
			if m, ok = v.(map[string]any); !ok {
				return nil, nil, fmt.Errorf("gce: %s%s: want a JSON object, got %s", root, k.path, scalar.JSONNoun(v))
			}
		}
		attrs[k.key] = m
		md[k.key] = m
	}
	return attrs["instance-data"], attrs["project-data"], nil
}

// fromText is the instance of the text values in md (see readText): its
// id, zone and region, and short host name. The zone in md becomes its
// last path element.
func fromText(root string, md map[string]any) (*instance.Data, error) {
	d := &instance.Data{Datasource: "gce", CloudName: "gce", Platform: "gce", Meta: md}
	d.Subplatform = fmt.Sprintf("metadata (%s)", root)
	d.InstanceID = md["instance-id"].(string)
	if strings.TrimSpace(d.InstanceID) == "" {
		return nil, fmt.Errorf("gce: %sinstance/id: empty", root)
	}
	zone := md["availability-zone"].(string)
	zone = zone[strings.LastIndex(zone, "/")+1:]
	md["availability-zone"] = zone
	d.AvailabilityZone = zone
	if i := strings.LastIndex(zone, "-"); i >= 0 {
		d.Region = zone[:i]
	} else {
		d.Region = zone
	}
	// GCE's host names are long fully qualified ones; cloud-init gives
	// the short name.
	d.LocalHostname, _, _ = strings.Cut(md["local-hostname"].(string), ".")
	return d, nil
}

// userData is the instance attribute user-data, decoded when
// user-data-encoding is base64; nil when there is none.
func (c *Client) userData(root string, inst map[string]any) ([]byte, error) {
	ud, ok := inst["user-data"]
	if !ok {
		return nil, nil
	}
	s, ok := ud.(string)
	if !ok {
		return nil, fmt.Errorf("gce: %sinstance/attributes/user-data: want a string, got %s", root, scalar.JSONNoun(ud))
	}
	switch enc := inst["user-data-encoding"]; enc {
	case nil, "":
	case "base64":
		b, err := base64.StdEncoding.DecodeString(strings.Join(strings.Fields(s), ""))
		if err != nil {
			return nil, fmt.Errorf("gce: %sinstance/attributes/user-data: user-data-encoding is base64, but it is not: %v", root, err)
		}
		return b, nil
	default:
		c.Log("gce: unknown user-data-encoding %v: user-data taken as it is", enc)
	}
	return []byte(s), nil
}

// keyLines gathers the ssh-keys lines as cloud-init's read_md does: the
// instance's sshKeys and ssh-keys, then, unless the instance sets
// block-project-ssh-keys to true or has sshKeys, the project's ssh-keys
// and sshKeys.
func keyLines(inst, proj map[string]any) ([]any, error) {
	str := func(m map[string]any, k string) (string, error) {
		switch v := m[k].(type) {
		case nil:
			return "", nil
		case string:
			return v, nil
		default:
			return "", fmt.Errorf("%s: want a string, got %s", k, scalar.JSONNoun(v))
		}
	}
	var valid []string
	legacy, err := str(inst, "sshKeys")
	if err != nil {
		return nil, err
	}
	keys, err := str(inst, "ssh-keys")
	if err != nil {
		return nil, err
	}
	block, err := str(inst, "block-project-ssh-keys")
	if err != nil {
		return nil, err
	}
	valid = append(valid, legacy, keys)
	if strings.ToLower(block) != "true" && legacy == "" {
		for _, k := range []string{"ssh-keys", "sshKeys"} {
			s, err := str(proj, k)
			if err != nil {
				return nil, fmt.Errorf("project %v", err)
			}
			valid = append(valid, s)
		}
	}
	var nonEmpty []string
	for _, s := range valid {
		if s != "" {
			nonEmpty = append(nonEmpty, s)
		}
	}
	var lines []any
	for _, l := range splitLines(strings.Join(nonEmpty, "\n")) {
		lines = append(lines, l)
	}
	return lines, nil
}

// splitLines is Python's str.splitlines for the line breaks key lists
// hold.
func splitLines(s string) []string {
	s = strings.ReplaceAll(s, "\r\n", "\n")
	s = strings.ReplaceAll(s, "\r", "\n")
	s = strings.TrimSuffix(s, "\n")
	if s == "" {
		return nil
	}
	return strings.Split(s, "\n")
}

// PublicKeys picks from ssh-keys lines ("user:key") the keys of keysUser
// and of defaultUser ("" for none) that have not expired at now, as
// cloud-init's _parse_public_keys does: lines that are empty, not ASCII or
// without a user are skipped.
func PublicKeys(lines []any, defaultUser string, now time.Time) []string {
	var keys []string
	for _, l := range lines {
		s, _ := l.(string)
		if s == "" || strings.IndexFunc(s, func(r rune) bool { return r >= 0x80 }) >= 0 {
			continue
		}
		user, key, ok := strings.Cut(s, ":")
		if !ok {
			continue
		}
		if (user == keysUser || (defaultUser != "" && user == defaultUser)) && !Expired(key, now) {
			keys = append(keys, key)
		}
	}
	return keys
}

// Expired tells whether key, in GCE's format ("ssh-rsa AAAA... google-ssh
// {"userName":...,"expireOn":"2018-01-01T00:00:00+0000"}"), expired before
// now. A key without the google-ssh schema, or whose JSON or date does not
// parse, never expires (cloud-init's _has_expired).
func Expired(key string, now time.Time) bool {
	f := strings.Fields(key)
	if len(f) < 4 {
		return false
	}
	// The JSON is everything after the third field, as split(None, 3).
	rest := strings.TrimLeft(key, " \t\n\r\v\f")
	for i := 0; i < 3; i++ {
		rest = strings.TrimLeft(rest[strings.IndexAny(rest, " \t\n\r\v\f"):], " \t\n\r\v\f")
	}
	if f[2] != "google-ssh" {
		return false
	}
	v, err := jsondoc.Decode("google-ssh", []byte(rest))
	if err != nil {
		return false
	}
	m, _ := v.(map[string]any)
	exp, ok := m["expireOn"].(string)
	if !ok {
		return false
	}
	for _, layout := range []string{"2006-01-02T15:04:05Z0700", "2006-01-02T15:04:05Z07:00"} {
		if t, err := time.Parse(layout, exp); err == nil {
			return now.After(t)
		}
	}
	return false
}
