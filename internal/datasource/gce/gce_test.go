package gce

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"reflect"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/earlyinit/earlyinit/internal/datasource"
	"github.com/earlyinit/earlyinit/internal/dmi"
	"github.com/earlyinit/earlyinit/internal/httpget"
)

func TestPlatform(t *testing.T) {
	for _, tt := range []struct {
		name string
		info dmi.Info
		want bool
	}{
		// cloud-init's tests/unittests/test_ds_identify.py "GCE" and
		// "GCE-serial".
		{"ds-identify GCE", dmi.Info{SysVendor: "Google", ProductName: "Google Compute Engine"}, true},
		{"ds-identify GCE-serial", dmi.Info{ProductSerial: "GoogleCloud-8f2e88f"}, true},
		// cloud-init's platform_reports_gce.
		{"product name Google", dmi.Info{ProductName: "Google"}, true},
		{"serial without the dash", dmi.Info{ProductSerial: "GoogleCloud8f2e88f"}, false},
		{"vendor only", dmi.Info{SysVendor: "Google"}, false},
		{"lower case", dmi.Info{ProductName: "google compute engine"}, false},
		{"QEMU", dmi.Info{SysVendor: "QEMU", ProductName: "Standard PC (Q35 + ICH9, 2009)"}, false},
		{"no DMI", dmi.Info{}, false},
	} {
		if got := Platform(tt.info); got != tt.want {
			t.Errorf("%s: Platform(%+v) = %v, want %v", tt.name, tt.info, got, tt.want)
		}
	}
}

// server plays the metadata server as cloud-init's test_gce.py does: meta
// maps paths under /computeMetadata/v1/ to text, or (for the attributes,
// asked for recursively) to objects served as JSON; anything else is a
// 404, and a request without Metadata-Flavor: Google a 403, as on GCE.
type server struct {
	meta   map[string]any
	status map[string]int
	raw    map[string]string // answers as is, by path under /computeMetadata/v1/

	mu   sync.Mutex
	hits []string
}

func (s *server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	s.hits = append(s.hits, r.URL.RequestURI())
	s.mu.Unlock()
	if r.Header.Get("Metadata-Flavor") != "Google" {
		w.WriteHeader(http.StatusForbidden)
		return
	}
	p, ok := strings.CutPrefix(r.URL.Path, "/computeMetadata/v1/")
	if !ok {
		http.NotFound(w, r)
		return
	}
	if code := s.status[p]; code != 0 {
		w.WriteHeader(code)
		return
	}
	if v, ok := s.raw[p]; ok {
		w.Write([]byte(v))
		return
	}
	recursive := strings.HasSuffix(p, "/")
	v, ok := s.meta[strings.TrimSuffix(p, "/")]
	if !ok {
		http.NotFound(w, r)
		return
	}
	if recursive {
		if r.URL.Query().Get("recursive") != "true" {
			http.Error(w, "not recursive", http.StatusBadRequest)
			return
		}
		json.NewEncoder(w).Encode(v)
		return
	}
	w.Write([]byte(v.(string)))
}

func serve(t *testing.T, s *server) string {
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	return srv.URL
}

func client(base string) *Client {
	return &Client{BaseURL: base, HTTPClient: datasource.HTTPClient{RequestTimeout: 300 * time.Millisecond, Backoff: time.Millisecond}}
}

// The fixtures of cloud-init's test_gce.py.
func gceMeta() map[string]any {
	return map[string]any{
		"instance/id":       "123",
		"instance/zone":     "foo/bar",
		"instance/hostname": "server.project-foo.local",
	}
}

func TestRead(t *testing.T) {
	const udText = "#!/bin/sh\necho hi mom\ntouch /run/up-now\n"
	encoded := map[string]any{
		"instance/id": "12345", "instance/hostname": "server.project-baz.local", "instance/zone": "baz/bang",
		"instance/attributes": map[string]any{"user-data": base64.StdEncoding.EncodeToString([]byte("#!/bin/echo baz\n")), "user-data-encoding": "base64"},
	}
	text := map[string]any{
		"instance/id": "12345", "instance/hostname": "server.project-baz.local", "instance/zone": "baz/bang",
		"instance/attributes": map[string]any{"user-data": udText},
	}
	real := map[string]any{
		"instance/id":       "4917325431875231234",
		"instance/zone":     "projects/123456789012/zones/europe-west1-b",
		"instance/hostname": "vm-1.europe-west1-b.c.my-project.internal",
		"instance/attributes": map[string]any{
			"ssh-keys":       "cloudinit:ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIGce cloudinit\nalice:ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIAlice alice",
			"enable-oslogin": "FALSE",
		},
		"project/attributes": map[string]any{"ssh-keys": "cloudinit:ssh-rsa AAAAB3NzaC1yc2EAAAADAQABProject p"},
	}
	for _, tt := range []struct {
		name                   string
		meta                   map[string]any
		id, host, az, region   string
		userData               *string
		keys                   []string
		wantInstanceAttributes bool
	}{
		{name: "GCE_META", meta: gceMeta(), id: "123", host: "server", az: "bar", region: "bar"},
		{name: "GCE_META_ENCODING", meta: encoded, id: "12345", host: "server", az: "bang", region: "bang", userData: ptr("#!/bin/echo baz\n"), wantInstanceAttributes: true},
		{name: "GCE_USER_DATA_TEXT", meta: text, id: "12345", host: "server", az: "bang", region: "bang", userData: ptr(udText), wantInstanceAttributes: true},
		{name: "real zone path", meta: real, id: "4917325431875231234", host: "vm-1", az: "europe-west1-b", region: "europe-west1",
			keys: []string{"ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIGce cloudinit", "ssh-rsa AAAAB3NzaC1yc2EAAAADAQABProject p"}, wantInstanceAttributes: true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s := &server{meta: tt.meta}
			base := serve(t, s)
			d, err := client(base).Read(context.Background())
			if err != nil {
				t.Fatalf("Read: %v", err)
			}
			if d.InstanceID != tt.id || d.LocalHostname != tt.host || d.AvailabilityZone != tt.az || d.Region != tt.region {
				t.Errorf("Read = id %q host %q az %q region %q", d.InstanceID, d.LocalHostname, d.AvailabilityZone, d.Region)
			}
			if d.CloudName != "gce" || d.Platform != "gce" || d.Subplatform != "metadata ("+base+"/computeMetadata/v1/)" {
				t.Errorf("cloud %q platform %q subplatform %q", d.CloudName, d.Platform, d.Subplatform)
			}
			if (tt.userData == nil) != (d.UserData == nil) || (tt.userData != nil && string(d.UserData) != *tt.userData) {
				t.Errorf("UserData = %q", d.UserData)
			}
			if !reflect.DeepEqual(d.PublicKeys, tt.keys) {
				t.Errorf("PublicKeys = %q, want %q", d.PublicKeys, tt.keys)
			}
			if d.Network != nil || d.VendorData != nil {
				t.Errorf("network %q vendor-data %q: GCE gives neither", d.Network, d.VendorData)
			}
			if d.Meta["local-hostname"] != tt.meta["instance/hostname"] || d.Meta["availability-zone"] != tt.az {
				t.Errorf("Meta = %v", d.Meta)
			}
			if got := len(d.Meta["instance-data"].(map[string]any)) > 0; got != tt.wantInstanceAttributes {
				t.Errorf("Meta instance-data = %v", d.Meta["instance-data"])
			}
		})
	}
}

func ptr(s string) *string { return &s }

// TestKeys: cloud-init's test_cloudinit_ssh_keys, test_default_user_ssh_keys,
// test_instance_ssh_keys_override and test_block_project_ssh_keys_override.
func TestKeys(t *testing.T) {
	valid := func(i int) string { return "ssh-rsa VALID " + string(rune('0'+i)) }
	invalid := func(i int) string { return "ssh-rsa INVALID " + string(rune('0'+i)) }
	for _, tt := range []struct {
		name        string
		user        string
		proj, inst  map[string]any
		defaultUser string
		want        []string
	}{
		{name: "cloudinit keys", user: "cloudinit",
			proj: map[string]any{"sshKeys": "cloudinit:" + valid(0) + "\nuser:" + invalid(0), "ssh-keys": "cloudinit:" + valid(1) + "\nuser:" + invalid(1)},
			inst: map[string]any{"ssh-keys": "cloudinit:" + valid(2) + "\nuser:" + invalid(2), "block-project-ssh-keys": "False"},
			want: []string{valid(0), valid(1), valid(2)}},
		{name: "default user's keys", defaultUser: "ubuntu",
			proj: map[string]any{"sshKeys": "ubuntu:" + valid(0) + "\nuser:" + invalid(0), "ssh-keys": "ubuntu:" + valid(1) + "\nuser:" + invalid(1)},
			inst: map[string]any{"ssh-keys": "ubuntu:" + valid(2) + "\nuser:" + invalid(2), "block-project-ssh-keys": "False"},
			want: []string{valid(0), valid(1), valid(2)}},
		{name: "default user unknown", defaultUser: "",
			inst: map[string]any{"ssh-keys": "ubuntu:" + invalid(0)}},
		{name: "instance sshKeys override the project's",
			proj: map[string]any{"sshKeys": "cloudinit:" + invalid(0), "ssh-keys": "cloudinit:" + invalid(1)},
			inst: map[string]any{"sshKeys": "cloudinit:" + valid(0), "ssh-keys": "cloudinit:" + valid(1), "block-project-ssh-keys": "False"},
			want: []string{valid(0), valid(1)}},
		{name: "block-project-ssh-keys",
			proj: map[string]any{"sshKeys": "cloudinit:" + invalid(0), "ssh-keys": "cloudinit:" + invalid(1)},
			inst: map[string]any{"ssh-keys": "cloudinit:" + valid(0), "block-project-ssh-keys": "True"},
			want: []string{valid(0)}},
		{name: "no keys"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			meta := gceMeta()
			if tt.proj != nil {
				meta["project/attributes"] = tt.proj
			}
			if tt.inst != nil {
				meta["instance/attributes"] = tt.inst
			}
			c := client(serve(t, &server{meta: meta}))
			c.DefaultUser = tt.defaultUser
			d, err := c.Read(context.Background())
			if err != nil {
				t.Fatalf("Read: %v", err)
			}
			got := append([]string(nil), d.PublicKeys...)
			sort.Strings(got)
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("PublicKeys = %q, want %q", got, tt.want)
			}
		})
	}
}

// TestExpired: cloud-init's test_has_expired.
func TestExpired(t *testing.T) {
	now := time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)
	past := now.Add(-24 * time.Hour).Format("2006-01-02T15:04:05-0700")
	future := now.Add(24 * time.Hour).Format("2006-01-02T15:04:05-0700")
	for key, want := range map[string]bool{
		"":                                 false,
		"Invalid":                          false,
		"user:ssh-rsa key user@domain.com": false,
		`user:ssh-rsa key google {"expireOn":"` + past + `"}`:   false,
		"user:ssh-rsa key google-ssh":                           false,
		"user:ssh-rsa key google-ssh {invalid:json}":            false,
		`user:ssh-rsa key google-ssh {"userName":"user"}`:       false,
		`user:ssh-rsa key google-ssh {"expireOn":"invalid"}`:    false,
		`user:xyz key google-ssh {"expireOn":"` + future + `"}`: false,
		`user:xyz key google-ssh {"expireOn":"` + past + `"}`:   true,
		// The JSON may hold blanks; "Z" and "+00:00" parse too.
		`ssh-rsa AAAA google-ssh {"userName": "u", "expireOn": "2025-05-01T00:00:00Z"}`:      true,
		`ssh-rsa AAAA google-ssh {"userName": "u", "expireOn": "2025-07-01T00:00:00+00:00"}`: false,
	} {
		if got := Expired(key, now); got != want {
			t.Errorf("Expired(%q) = %v, want %v", key, got, want)
		}
	}
}

// TestPublicKeysNonASCII: cloud-init's test_parse_public_keys_non_ascii.
func TestPublicKeysNonASCII(t *testing.T) {
	lines := []any{
		"cloudinit:rsa ssh-ke" + string(rune(165)) + " invalid",
		"use" + string(rune(174)) + "name:rsa ssh-key",
		"cloudinit:test 1",
		"default:test 2",
		"user:test 3",
		"no user at all",
	}
	got := PublicKeys(lines, "default", time.Now())
	if !reflect.DeepEqual(got, []string{"test 1", "test 2"}) {
		t.Errorf("PublicKeys = %q", got)
	}
}

func TestReadErrors(t *testing.T) {
	for _, tt := range []struct {
		name  string
		setup func(s *server, c *Client)
		want  []string
	}{
		// cloud-init's test_missing_required_keys_return_false.
		{"no instance/id", func(s *server, c *Client) { delete(s.meta, "instance/id") }, []string{"/computeMetadata/v1/instance/id: HTTP 404", "instance-id missing (not GCE)"}},
		{"no instance/zone", func(s *server, c *Client) { delete(s.meta, "instance/zone") }, []string{"instance/zone: HTTP 404", "availability-zone missing"}},
		{"no instance/hostname", func(s *server, c *Client) { delete(s.meta, "instance/hostname") }, []string{"instance/hostname: HTTP 404", "local-hostname missing"}},
		{"wrong header (a proxy that drops it)", func(s *server, c *Client) {
			c.HTTP = dropHeader{&httpget.Getter{RequestTimeout: c.RequestTimeout, Backoff: c.Backoff}}
		}, []string{"instance/id: HTTP 403"}},
		{"attributes not JSON", func(s *server, c *Client) {
			s.raw = map[string]string{"project/attributes/": "{not json"}
		}, []string{"parse ", "project/attributes/?recursive=true: invalid JSON at byte 2"}},
		{"attributes a JSON string", func(s *server, c *Client) { s.meta["project/attributes"] = "x" }, []string{"project/attributes/?recursive=true: want a JSON object, got a string"}},
		{"attributes not an object", func(s *server, c *Client) { s.meta["instance/attributes"] = []any{"a"} }, []string{"instance/attributes/?recursive=true: want a JSON object, got a list"}},
		{"attributes 500", func(s *server, c *Client) { s.status = map[string]int{"project/attributes/": 500} }, []string{"project/attributes/?recursive=true: HTTP 500"}},
		{"user-data not a string", func(s *server, c *Client) { s.meta["instance/attributes"] = map[string]any{"user-data": 5} }, []string{"instance/attributes/user-data: want a string"}},
		{"bad base64", func(s *server, c *Client) {
			s.meta["instance/attributes"] = map[string]any{"user-data": "not base64!", "user-data-encoding": "base64"}
		}, []string{"instance/attributes/user-data: user-data-encoding is base64"}},
		{"ssh-keys not a string", func(s *server, c *Client) { s.meta["instance/attributes"] = map[string]any{"ssh-keys": []any{"k"}} }, []string{"ssh-keys: want a string"}},
		{"oversized attributes", func(s *server, c *Client) {
			c.MaxBody = 1024
			s.meta["instance/attributes"] = map[string]any{"user-data": strings.Repeat("x", 2048)}
		}, []string{"instance/attributes/?recursive=true: body over the 1024 byte limit"}},
		{"empty id", func(s *server, c *Client) { s.meta["instance/id"] = "" }, []string{"instance/id: empty"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s := &server{meta: gceMeta()}
			c := client(serve(t, s))
			tt.setup(s, c)
			d, err := c.Read(context.Background())
			if err == nil {
				t.Fatalf("Read = %+v, want an error", d)
			}
			if !strings.HasPrefix(err.Error(), "gce: ") {
				t.Errorf("error %q does not start with gce:", err)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
		})
	}
}

func TestRequests(t *testing.T) {
	s := &server{meta: gceMeta()}
	if _, err := client(serve(t, s)).Read(context.Background()); err != nil {
		t.Fatal(err)
	}
	want := []string{
		"/computeMetadata/v1/instance/id",
		"/computeMetadata/v1/instance/zone",
		"/computeMetadata/v1/instance/hostname",
		"/computeMetadata/v1/instance/attributes/?recursive=true",
		"/computeMetadata/v1/project/attributes/?recursive=true",
	}
	if !reflect.DeepEqual(s.hits, want) {
		t.Errorf("requests %q, want %q", s.hits, want)
	}
}

func TestSource(t *testing.T) {
	if Source.Name != "gce" || Source.Class != "GCE" || Source.Metadata == nil || Source.MetadataBase != "" {
		t.Errorf("Source = %+v", Source)
	}
}

// TestSourceDefaultUser: the source takes the ssh-keys lines of the
// image's default user (Service.DefaultUser) besides cloudinit's, and no
// other user's.
func TestSourceDefaultUser(t *testing.T) {
	meta := gceMeta()
	meta["instance/attributes"] = map[string]any{"ssh-keys": "cloudinit:ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIGce c\n" +
		"debian:ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIDeb d\nalice:ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIAlice a"}
	base := serve(t, &server{meta: meta})
	for _, tt := range []struct {
		user string
		want []string
	}{
		{"debian", []string{"ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIGce c", "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIDeb d"}},
		{"", []string{"ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIGce c"}},
	} {
		d, err := Source.Metadata(context.Background(), datasource.Service{Base: base, DefaultUser: tt.user})
		if err != nil {
			t.Fatalf("default user %q: %v", tt.user, err)
		}
		if !reflect.DeepEqual(d.PublicKeys, tt.want) {
			t.Errorf("default user %q: PublicKeys = %q, want %q", tt.user, d.PublicKeys, tt.want)
		}
	}
}

// dropHeader is a Fetcher that loses Metadata-Flavor on the way.
type dropHeader struct{ f httpget.Fetcher }

func (d dropHeader) Get(ctx context.Context, r httpget.Request) ([]byte, error) {
	r.Header = nil
	return d.f.Get(ctx, r)
}
