package hetzner

import (
	"context"
	"encoding/json"
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
		{dmi.Info{SysVendor: "Hetzner"}, true}, // ds-identify's test
		{dmi.Info{SysVendor: "Hetzner", ProductName: "vServer", BIOSVendor: "Hetzner"}, true},
		{dmi.Info{SysVendor: "QEMU", ProductName: "Standard PC (Q35 + ICH9, 2009)"}, false},
		{dmi.Info{SysVendor: "Hetzner Online GmbH"}, false},
		{dmi.Info{SysVendor: "hetzner"}, false},
		{dmi.Info{SysVendor: "NWCS"}, false},
		{dmi.Info{}, false},
	} {
		if got := Source.Platform(tc.info); got != tc.want {
			t.Errorf("Platform(%+v) = %v, want %v", tc.info, got, tc.want)
		}
	}
}

// service plays the metadata service with the given answers by path; a
// path with no answer is a 404, an empty one a 204.
func service(t *testing.T, answers map[string][]byte) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, ok := answers[r.URL.Path]
		switch {
		case !ok || r.Method != http.MethodGet:
			http.NotFound(w, r)
		case len(b) == 0:
			w.WriteHeader(http.StatusNoContent)
		default:
			w.Write(b)
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

func read(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func recorded(t *testing.T) map[string][]byte {
	return map[string][]byte{
		MetadataPath:        read(t, "metadata.yaml"),
		PrivateNetworksPath: read(t, "private-networks.yaml"),
		UserDataPath:        read(t, "userdata"),
	}
}

func TestRead(t *testing.T) {
	srv := service(t, recorded(t))
	c := &Client{BaseURL: srv.URL, HTTPClient: datasource.HTTPClient{HTTP: &httpget.Getter{Retries: -1}}}
	d, err := c.Read(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if d.InstanceID != "123456" || d.LocalHostname != "cloudinit-test" || d.CloudName != "hetzner" || d.Datasource != "hetzner" {
		t.Errorf("id %q, hostname %q, cloud %q, ds %q", d.InstanceID, d.LocalHostname, d.CloudName, d.Datasource)
	}
	if want := []string{"ssh-ed25519   AAAAC3Nzac1lZdI1NTE5AaaAIaFrcac0yVITsmRrmueq6MD0qYNKlEvW8O1Ib4nkhmWh   test-key@workstation"}; !reflect.DeepEqual(d.PublicKeys, want) {
		t.Errorf("keys %q", d.PublicKeys)
	}
	if string(d.UserData) != string(read(t, "userdata")) || string(d.VendorData) != "test" {
		t.Errorf("user-data %q, vendor-data %q", d.UserData, d.VendorData)
	}
	var nc struct {
		Version int              `json:"version"`
		Config  []map[string]any `json:"config"`
	}
	if err := json.Unmarshal(d.Network, &nc); err != nil || d.NetworkFormat != "yaml" {
		t.Fatalf("network %s (%s): %v", d.Network, d.NetworkFormat, err)
	}
	if nc.Version != 1 || len(nc.Config) != 2 || nc.Config[0]["name"] != "eth0" || nc.Config[0]["mac_address"] != "96:00:00:08:19:da" {
		t.Fatalf("network %s", d.Network)
	}
	priv, _ := json.Marshal(nc.Config[1])
	if want := `{"mac_address":"86:00:00:aa:5d:f8","subnets":[{"ipv4":true,"type":"dhcp"}],"type":"physical"}`; string(priv) != want {
		t.Errorf("private network %s, want %s", priv, want)
	}
	if _, ok := d.Meta["network-sysconfig"]; ok {
		t.Error("meta keeps more than cloud-init does")
	}
	pn, _ := d.Meta["private-networks"].([]any)
	if len(pn) != 1 || d.Meta["instance-id"] != "123456" {
		t.Errorf("meta %v", d.Meta)
	}
	if _, err := json.Marshal(d.Meta); err != nil {
		t.Errorf("meta is not JSON: %v", err)
	}
}

// TestUserDataEncodings: base64 user-data is decoded, anything else kept,
// and an empty answer (204) is empty user-data.
func TestUserDataEncodings(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"I2Nsb3VkLWNvbmZpZwpob3N0bmFtZTogeAo=", "#cloud-config\nhostname: x\n"},
		{"#cloud-config\nhostname: x\n", "#cloud-config\nhostname: x\n"},
		{"I2Nsb3VkLWNvbmZpZwpob3N0bmFtZTogeAo", "I2Nsb3VkLWNvbmZpZwpob3N0bmFtZTogeAo"}, // bad padding
		{"I2Nsb3Vk\nLWNvbmZpZwo=", "I2Nsb3Vk\nLWNvbmZpZwo="},                           // a line break: not strict base64
		{"", ""},
	} {
		a := recorded(t)
		a[UserDataPath] = []byte(tc.in)
		srv := service(t, a)
		d, err := (&Client{BaseURL: srv.URL, HTTPClient: datasource.HTTPClient{HTTP: &httpget.Getter{Retries: -1}}}).Read(context.Background())
		if err != nil {
			t.Fatalf("%q: %v", tc.in, err)
		}
		if string(d.UserData) != tc.want {
			t.Errorf("user-data %q read as %q, want %q", tc.in, d.UserData, tc.want)
		}
	}
}

// TestNoPrivateNetworks: an empty list, or a 204, leaves the network
// configuration as served.
func TestNoPrivateNetworks(t *testing.T) {
	for _, pn := range []string{"", "[]\n"} {
		a := recorded(t)
		a[PrivateNetworksPath] = []byte(pn)
		srv := service(t, a)
		d, err := (&Client{BaseURL: srv.URL, HTTPClient: datasource.HTTPClient{HTTP: &httpget.Getter{Retries: -1}}}).Read(context.Background())
		if err != nil {
			t.Fatalf("%q: %v", pn, err)
		}
		if n := strings.Count(string(d.Network), `"type":"physical"`); n != 1 {
			t.Errorf("%q: %d physical NICs in %s", pn, n, d.Network)
		}
	}
}

func TestReadErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		path string
		body string // "" with del: the path is not served
		del  bool
		want []string
	}{
		{name: "no metadata", path: MetadataPath, del: true, want: []string{MetadataPath, "404"}},
		{name: "no private networks", path: PrivateNetworksPath, del: true, want: []string{PrivateNetworksPath, "404"}},
		{name: "no userdata", path: UserDataPath, del: true, want: []string{UserDataPath, "404"}},
		{name: "metadata too big", path: MetadataPath, body: "hostname: " + strings.Repeat("x", MaxMetadata), want: []string{MetadataPath, "limit"}},
		{name: "bad yaml", path: MetadataPath, body: "instance-id: [1\n", want: []string{MetadataPath, "meta-data"}},
		{name: "no instance-id", path: MetadataPath, body: "hostname: h\n", want: []string{MetadataPath, "instance-id"}},
		{name: "hostname a list", path: MetadataPath, body: "instance-id: 1\nhostname: [a]\n", want: []string{MetadataPath, "hostname"}},
		{name: "network-config a list", path: MetadataPath, body: "instance-id: 1\nnetwork-config: [a]\n", want: []string{MetadataPath, "network-config", "want a mapping"}},
		{name: "config not a list", path: MetadataPath, body: "instance-id: 1\nnetwork-config: {config: 3}\n", want: []string{MetadataPath, "network-config: config"}},
		{name: "vendor_data a list", path: MetadataPath, body: "instance-id: 1\nvendor_data: [a]\n", want: []string{MetadataPath, "vendor_data"}},
		{name: "private networks a mapping", path: PrivateNetworksPath, body: "a: b\n", want: []string{PrivateNetworksPath}},
		{name: "private network without mac", path: PrivateNetworksPath, body: "- ip: 10.0.0.2\n", want: []string{PrivateNetworksPath, "[0]: mac_address"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := recorded(t)
			if tc.del {
				delete(a, tc.path)
			} else {
				a[tc.path] = []byte(tc.body)
			}
			srv := service(t, a)
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

// TestPrivateNetworksJSON: what YAML has and JSON does not (keys that are
// not strings, NaN) is kept as text, so the metadata can be written as
// instance data.
func TestPrivateNetworksJSON(t *testing.T) {
	nets, err := privateNetworks("pn", []byte("- mac_address: 86:00:00:aa:5d:f8\n  1: one\n  mtu: .nan\n"))
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(nets)
	if want := `[{"1":"one","mac_address":"86:00:00:aa:5d:f8","mtu":"NaN"}]`; err != nil || string(b) != want {
		t.Errorf("private networks %s, %v; want %s", b, err, want)
	}
}
