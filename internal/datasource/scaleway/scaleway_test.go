package scaleway

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/earlyinit/earlyinit/internal/datasource"
	"github.com/earlyinit/earlyinit/internal/dmi"
	"github.com/earlyinit/earlyinit/internal/httpget"
)

func TestPlatform(t *testing.T) {
	for _, tc := range []struct {
		info dmi.Info
		want bool
	}{
		{dmi.Info{SysVendor: "Scaleway"}, true}, // cloud-init's test
		{dmi.Info{SysVendor: "Scaleway", ProductName: "SCW-DEV1-S"}, true},
		{dmi.Info{SysVendor: "Whatever"}, false}, // cloud-init's test
		{dmi.Info{SysVendor: "QEMU", ProductName: "Standard PC (i440FX + PIIX, 1996)"}, false},
		{dmi.Info{}, false},
	} {
		if got := Source.Platform(tc.info); got != tc.want {
			t.Errorf("Platform(%+v) = %v, want %v", tc.info, got, tc.want)
		}
	}
	// cloud-init's test command lines.
	for _, tc := range []struct {
		params map[string]string
		want   bool
	}{
		{map[string]string{"initrd": "initrd", "showopts": "", "scaleway": "", "nousb": ""}, true},
		{map[string]string{"BOOT_IMAGE": "/vmlinuz-3.11.0-26-generic"}, false},
	} {
		if _, ok, err := Source.Cmdline(tc.params); ok != tc.want || err != nil {
			t.Errorf("Cmdline(%v) = %v, %v; want %v", tc.params, ok, err, tc.want)
		}
	}
	if Source.MetadataBase != "http://169.254.42.42" {
		t.Errorf("MetadataBase %q", Source.MetadataBase)
	}
}

// api plays the metadata API: answers by request URI (path and query);
// a missing one is a 404.
type api struct {
	answers map[string]string
}

func (a *api) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	b, ok := a.answers[r.URL.RequestURI()]
	if !ok {
		http.NotFound(w, r)
		return
	}
	w.Write([]byte(b))
}

func serve(t *testing.T, a *api) string {
	t.Helper()
	srv := httptest.NewServer(a)
	t.Cleanup(srv.Close)
	return srv.URL
}

func conf(t *testing.T) string {
	b, err := os.ReadFile("testdata/conf.json")
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestRead(t *testing.T) {
	a := &api{answers: map[string]string{
		MetadataPath:   conf(t),
		UserDataPath:   "#cloud-config\nhostname: x\n",
		VendorDataPath: "#cloud-config\npackages: [htop]\n",
	}}
	base := serve(t, a)
	d, err := (&Client{BaseURL: base, HTTPClient: datasource.HTTPClient{HTTP: &httpget.Getter{Retries: -1}}}).Read(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if d.InstanceID != "00000000-0000-0000-0000-000000000000" || d.LocalHostname != "scaleway.host" || d.AvailabilityZone != "fr-par-1" || d.Region != "fr-par" {
		t.Errorf("id %q, hostname %q, zone %q, region %q", d.InstanceID, d.LocalHostname, d.AvailabilityZone, d.Region)
	}
	// cloud-init's test: the keys, then the tag's key with "_" as blanks.
	want := []string{"ssh-rsa AAAAB3NzaC1yc2EAAAADAQABAAABA", "ssh-rsa AAAAB3NzaC1yc2EAAAADAQABCCCCC", "ssh-rsa AAAAB3NzaC1yc2EAAAADAQABDDDDD"}
	if !reflect.DeepEqual(d.PublicKeys, want) {
		t.Errorf("keys %q, want %q", d.PublicKeys, want)
	}
	if string(d.UserData) != "#cloud-config\nhostname: x\n" || string(d.VendorData) != "#cloud-config\npackages: [htop]\n" {
		t.Errorf("user-data %q, vendor-data %q", d.UserData, d.VendorData)
	}
	if d.Network != nil || d.Meta["net_in_use"] != "ipv4" || d.Subplatform != "metadata ("+base+")" {
		t.Errorf("network %s, meta %v, subplatform %q", d.Network, d.Meta, d.Subplatform)
	}
}

// TestNoData: a 404 for user-data or vendor-data means none (cloud-init's
// test_get_data_no_data and ..._no_vendor_data).
func TestNoData(t *testing.T) {
	base := serve(t, &api{answers: map[string]string{MetadataPath: conf(t)}})
	d, err := (&Client{BaseURL: base, HTTPClient: datasource.HTTPClient{HTTP: &httpget.Getter{Retries: -1}}}).Read(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if d.UserData != nil || d.VendorData != nil {
		t.Errorf("user-data %q, vendor-data %q", d.UserData, d.VendorData)
	}
}

// TestDataHTTP: user-data and vendor-data go through DataHTTP (the
// privileged-port fetcher), the metadata through HTTP.
func TestDataHTTP(t *testing.T) {
	a := &api{answers: map[string]string{MetadataPath: conf(t), UserDataPath: "ud", VendorDataPath: "vd"}}
	base := serve(t, a)
	var data []string
	c := &Client{BaseURL: base, HTTPClient: datasource.HTTPClient{HTTP: &httpget.Getter{Retries: -1}}, DataHTTP: fetchFunc(func(ctx context.Context, r httpget.Request) ([]byte, error) {
		data = append(data, strings.TrimPrefix(r.URL, base))
		return (&httpget.Getter{Retries: -1}).Get(ctx, r)
	})}
	d, err := c.Read(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(data, []string{UserDataPath, VendorDataPath}) || string(d.UserData) != "ud" || string(d.VendorData) != "vd" {
		t.Errorf("DataHTTP asked %q; user-data %q, vendor-data %q", data, d.UserData, d.VendorData)
	}
}

type fetchFunc func(context.Context, httpget.Request) ([]byte, error)

func (f fetchFunc) Get(ctx context.Context, r httpget.Request) ([]byte, error) { return f(ctx, r) }

func TestReadErrors(t *testing.T) {
	for _, tc := range []struct {
		name    string
		answers map[string]string
		status  map[string]int
		want    []string
	}{
		{name: "no metadata", answers: map[string]string{}, want: []string{"/conf?format=json", "404"}},
		{name: "user-data refused", answers: map[string]string{MetadataPath: `{"id": "x"}`}, status: map[string]int{UserDataPath: 403}, want: []string{UserDataPath, "403"}},
		{name: "oversized", answers: map[string]string{MetadataPath: `{"id": "x", "pad": "` + strings.Repeat("x", MaxMetadata) + `"}`}, want: []string{"/conf?format=json", "limit"}},
		{name: "syntax", answers: map[string]string{MetadataPath: `{"id": }`}, want: []string{"/conf?format=json", "invalid JSON"}},
		{name: "no id", answers: map[string]string{MetadataPath: `{"hostname": "h"}`}, want: []string{"/conf?format=json", "id: missing"}},
		{name: "tags a string", answers: map[string]string{MetadataPath: `{"id": "x", "tags": "a"}`}, want: []string{"/conf?format=json", "tags"}},
		{name: "key a number", answers: map[string]string{MetadataPath: `{"id": "x", "ssh_public_keys": [{"key": 1}]}`}, want: []string{"/conf?format=json", "ssh_public_keys.key"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if s := tc.status[r.URL.RequestURI()]; s != 0 {
					w.WriteHeader(s)
					return
				}
				b, ok := tc.answers[r.URL.RequestURI()]
				if !ok {
					http.NotFound(w, r)
					return
				}
				w.Write([]byte(b))
			}))
			defer srv.Close()
			_, err := (&Client{BaseURL: srv.URL, HTTPClient: datasource.HTTPClient{HTTP: &httpget.Getter{Retries: -1}}}).Read(context.Background())
			if err == nil {
				t.Fatal("no error")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
		})
	}
}
