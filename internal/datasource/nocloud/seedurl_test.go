package nocloud

import (
	"context"
	"reflect"
	"strings"
	"testing"

	"github.com/earlyinit/earlyinit/internal/datasource"
	"github.com/earlyinit/earlyinit/internal/httpget"
)

// seedHTTP answers GETs from a map of URL to body; anything else is a 404.
type seedHTTP struct {
	docs map[string]string
	got  []string
}

func (f *seedHTTP) Get(ctx context.Context, r httpget.Request) ([]byte, error) {
	f.got = append(f.got, r.URL)
	if b, ok := f.docs[r.URL]; ok {
		return []byte(b), nil
	}
	return nil, &httpget.StatusError{Method: "GET", URL: r.URL, Code: 404}
}

// TestReadURL: a seed over HTTP is read as cloud-init's read_seeded reads
// it (file names appended to the URL, or put in place of %s); meta-data
// is required, the other files may be missing.
func TestReadURL(t *testing.T) {
	for _, tt := range []struct {
		name, base string
		docs       map[string]string
		wantID     string
		wantUD     string
		wantGot    []string
		wantErr    string
	}{{
		name: "directory",
		base: "http://10.0.0.1/seed/",
		docs: map[string]string{
			"http://10.0.0.1/seed/meta-data": "instance-id: iid-url\nlocal-hostname: h\n",
			"http://10.0.0.1/seed/user-data": "#cloud-config\n",
		},
		wantID: "iid-url", wantUD: "#cloud-config\n",
		wantGot: []string{"http://10.0.0.1/seed/meta-data", "http://10.0.0.1/seed/user-data", "http://10.0.0.1/seed/vendor-data", "http://10.0.0.1/seed/network-config"},
	}, {
		name:    "percent s",
		base:    "http://10.0.0.1/x?f=%s",
		docs:    map[string]string{"http://10.0.0.1/x?f=meta-data": "instance-id: iid-q\n"},
		wantID:  "iid-q",
		wantGot: []string{"http://10.0.0.1/x?f=meta-data", "http://10.0.0.1/x?f=user-data", "http://10.0.0.1/x?f=vendor-data", "http://10.0.0.1/x?f=network-config"},
	}, {
		name:    "password",
		base:    "http://u:secret@10.0.0.1/seed/",
		wantErr: "seed http://u:xxxxx@10.0.0.1/seed/: want an http:// or https:// URL without a user or password",
	}, {
		name:    "no meta-data",
		base:    "http://10.0.0.1/seed",
		wantErr: "seed http://10.0.0.1/seed: meta-data: GET http://10.0.0.1/seedmeta-data: HTTP 404 Not Found (file names are appended to the seed URL as they are: end it with / for a directory)",
	}, {
		name:    "bad meta-data",
		base:    "http://10.0.0.1/",
		docs:    map[string]string{"http://10.0.0.1/meta-data": "local-hostname: h\n"},
		wantErr: `seed http://10.0.0.1/: meta-data: "instance-id": missing or empty`,
	}} {
		t.Run(tt.name, func(t *testing.T) {
			h := &seedHTTP{docs: tt.docs}
			d, err := ReadURL(context.Background(), datasource.Service{HTTP: h}, tt.base)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				if strings.Contains(err.Error(), "secret") {
					t.Errorf("the error shows the password: %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if d.InstanceID != tt.wantID || string(d.UserData) != tt.wantUD {
				t.Errorf("read %q, user-data %q", d.InstanceID, d.UserData)
			}
			if !reflect.DeepEqual(h.got, tt.wantGot) {
				t.Errorf("requests %q, want %q", h.got, tt.wantGot)
			}
		})
	}
}

// TestSeedFrom: the image's seedfrom is a directory or an http(s) URL;
// anything else is an error naming the setting, not the value.
func TestSeedFrom(t *testing.T) {
	const origin = "datasource.NoCloud.seedfrom"
	for _, tt := range []struct {
		in       string
		dir, url string
		bad      bool
	}{
		{in: "/srv/seed/", dir: "/srv/seed"},
		{in: "file:///srv/seed/", dir: "/srv/seed"},
		{in: "http://10.0.0.1/seed/", url: "http://10.0.0.1/seed/"},
		{in: "HTTPS://example.com/", url: "HTTPS://example.com/"},
		{in: "srv/seed", bad: true},
		{in: "ftp://x/", bad: true},
		{in: "http:///nohost", bad: true},
	} {
		h, err := Source.SeedFrom(tt.in, origin)
		if tt.bad {
			if err == nil || !strings.HasPrefix(err.Error(), origin+": ") || strings.Contains(err.Error(), tt.in) {
				t.Errorf("SeedFrom(%q) = %+v, %v; want an error naming %s", tt.in, h, err, origin)
			}
			continue
		}
		if err != nil || h.Seed != tt.dir || h.SeedURL != tt.url || h.Origin != origin {
			t.Errorf("SeedFrom(%q) = %+v, %v; want dir %q, url %q", tt.in, h, err, tt.dir, tt.url)
		}
	}
}
