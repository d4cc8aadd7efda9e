package digitalocean

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
	"github.com/earlyinit/earlyinit/internal/netcfg"
)

// TestPlatform: ds-identify's rule against DMI strings as droplets and
// other machines give them.
func TestPlatform(t *testing.T) {
	for _, tc := range []struct {
		name string
		info dmi.Info
		want bool
	}{
		{"droplet", dmi.Info{SysVendor: "DigitalOcean", ProductName: "Droplet", BIOSVendor: "DigitalOcean"}, true},
		{"vendor only", dmi.Info{SysVendor: "DigitalOcean"}, true},
		{"qemu", dmi.Info{SysVendor: "QEMU", ProductName: "Standard PC (i440FX + PIIX, 1996)"}, false},
		{"other case", dmi.Info{SysVendor: "digitalocean"}, false},
		{"in product name only", dmi.Info{SysVendor: "QEMU", ProductName: "DigitalOcean"}, false},
		{"hetzner", dmi.Info{SysVendor: "Hetzner", ProductName: "vServer"}, false},
		{"none", dmi.Info{}, false},
	} {
		if got := Platform(tc.info); got != tc.want {
			t.Errorf("%s: Platform(%+v) = %v, want %v", tc.name, tc.info, got, tc.want)
		}
		if got := Source.Platform(tc.info); got != tc.want {
			t.Errorf("%s: Source.Platform = %v, want %v", tc.name, got, tc.want)
		}
	}
}

// serve answers GET /metadata/v1.json with body (404 for anything else).
func serve(t *testing.T, body []byte) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet || r.URL.Path != Path {
			http.NotFound(w, r)
			return
		}
		w.Write(body)
	}))
	t.Cleanup(srv.Close)
	return srv
}

func client(base string) *Client {
	return &Client{BaseURL: base, HTTPClient: datasource.HTTPClient{HTTP: &httpget.Getter{Retries: -1}}}
}

// TestRead: cloud-init's recorded droplet metadata, read as cloud-init
// reads it.
func TestRead(t *testing.T) {
	body, err := os.ReadFile("testdata/metadata-v1.json")
	if err != nil {
		t.Fatal(err)
	}
	srv := serve(t, body)
	d, err := client(srv.URL).Read(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if d.InstanceID != "22532410" || d.LocalHostname != "utl-96268" || d.AvailabilityZone != "nyc3" {
		t.Errorf("id %q, hostname %q, zone %q", d.InstanceID, d.LocalHostname, d.AvailabilityZone)
	}
	if want := []string{"ssh-rsa AAAAB3NzaC1yc2EAAAA... test@do.co"}; !reflect.DeepEqual(d.PublicKeys, want) {
		t.Errorf("keys %q, want %q", d.PublicKeys, want)
	}
	if string(d.UserData) != "userdata goes here" || string(d.VendorData) != "vendordata goes here" {
		t.Errorf("user-data %q, vendor-data %q", d.UserData, d.VendorData)
	}
	if d.Subplatform != "metadata ("+srv.URL+")" || d.CloudName != "digitalocean" {
		t.Errorf("subplatform %q, cloud %q", d.Subplatform, d.CloudName)
	}
	if _, ok := d.Meta["auth_key"]; ok {
		t.Error("auth_key kept in the metadata")
	}
	if d.Meta["instance-id"] != "22532410" || d.Meta["availability_zone"] != "nyc3" {
		t.Errorf("meta %v", d.Meta)
	}
	wantNet := `{"version":1,"config":[` +
		`{"type":"physical","name":"eth0","mac_address":"04:01:57:d1:9e:01","subnets":[` +
		`{"type":"static","control":"auto","address":"192.0.0.20","netmask":"255.255.255.0","gateway":"104.236.0.1"},` +
		`{"type":"static","control":"auto","address":"2604:A880:0800:0000:1000:0000:0000:0000/64","gateway":"2604:A880:0800:0000:0000:0000:0000:0001"},` +
		`{"type":"static","control":"auto","address":"10.0.0.5","netmask":"255.255.0.0"}]},` +
		`{"type":"physical","name":"eth1","mac_address":"04:01:57:d1:9e:02","subnets":[` +
		`{"type":"static","control":"auto","address":"10.132.6.205","netmask":"255.255.0.0"}]},` +
		`{"type":"nameserver","address":["2001:4860:4860::8844","2001:4860:4860::8888","8.8.8.8"]}]}`
	if string(d.Network) != wantNet || d.NetworkFormat != "yaml" {
		t.Errorf("network (%s):\n%s\nwant\n%s", d.NetworkFormat, d.Network, wantNet)
	}
	// And internal/netcfg takes it: the NICs renamed by MAC, as cloud-init does.
	c, err := netcfg.Parse(string(d.NetworkFormat), d.Network, map[string]string{"04:01:57:d1:9e:01": "ens1", "04:01:57:d1:9e:02": "ens2"})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	if len(c.Interfaces) != 2 || c.Interfaces[0].Name != "eth0" || c.Interfaces[0].MAC != "04:01:57:d1:9e:01" || c.Interfaces[1].Name != "eth1" {
		t.Errorf("interfaces %+v", c.Interfaces)
	}
	if got := c.Interfaces[0].Subnets[0].Gateway.String(); got != "104.236.0.1" {
		t.Errorf("public gateway %s", got)
	}
	if g := c.Interfaces[0].Subnets[2].Gateway; g.IsValid() {
		t.Errorf("anchor subnet has gateway %s", g)
	}
}

// TestParse: numeric ids, defaults and NICs of other types.
func TestParse(t *testing.T) {
	d, err := Parse("u", []byte(`{"droplet_id": 27223699, "public_keys": ["k1", "k2"],
		"interfaces": {"public": [{"mac": "ae:cc:08:7c:88:00", "type": "public", "ipv4": {"ip_address": "45.55.249.133", "netmask": "255.255.192.0", "gateway": "45.55.192.1"}}],
		"floating": [{"mac": "ae:cc:08:7c:88:01", "type": "floating", "ipv4": {"ip_address": "10.1.1.1", "netmask": "255.0.0.0", "gateway": "10.0.0.1"}}]}}`))
	if err != nil {
		t.Fatal(err)
	}
	if d.InstanceID != "27223699" || d.LocalHostname != "27223699" || d.AvailabilityZone != "default" {
		t.Errorf("id %q, hostname %q, zone %q", d.InstanceID, d.LocalHostname, d.AvailabilityZone)
	}
	if !reflect.DeepEqual(d.PublicKeys, []string{"k1", "k2"}) || d.UserData != nil || d.VendorData != nil {
		t.Errorf("keys %q, user-data %q, vendor-data %q", d.PublicKeys, d.UserData, d.VendorData)
	}
	// A NIC of another type keeps its system name: no "name", no gateway.
	want := `{"type":"physical","mac_address":"ae:cc:08:7c:88:01","subnets":[{"type":"static","control":"auto","address":"10.1.1.1","netmask":"255.0.0.0"}]}`
	if !strings.Contains(string(d.Network), want) {
		t.Errorf("network %s\nlacks %s", d.Network, want)
	}
}

// TestReadErrors: each failure names the URL and, for a bad value, the key.
func TestReadErrors(t *testing.T) {
	for _, tc := range []struct {
		name    string
		body    string
		maxBody int64
		path    string // served path, "" for Path
		want    []string
	}{
		{name: "404", body: `{}`, path: "/other", want: []string{"/metadata/v1.json", "404"}},
		{name: "oversized", body: `{"droplet_id": 1, "user_data": "` + strings.Repeat("x", 200) + `"}`, maxBody: 100, want: []string{"/metadata/v1.json", "over the 100 byte limit"}},
		{name: "syntax", body: "{\n\"droplet_id\": 1,,\n}", want: []string{"/metadata/v1.json", "line 2"}},
		{name: "not an object", body: `[1]`, want: []string{"/metadata/v1.json", "want a JSON object"}},
		{name: "hostname a number", body: `{"droplet_id": 1, "hostname": 5}`, want: []string{"/metadata/v1.json", "hostname"}},
		{name: "droplet_id an object", body: `{"droplet_id": {}}`, want: []string{"/metadata/v1.json", "droplet_id"}},
		{name: "no droplet_id", body: `{"hostname": "h"}`, want: []string{"/metadata/v1.json", "droplet_id: missing"}},
		{name: "keys a number", body: `{"droplet_id": 1, "public_keys": 3}`, want: []string{"/metadata/v1.json", "public_keys"}},
		{name: "nic without mac", body: `{"droplet_id": 1, "interfaces": {"public": [{"type": "public"}]}}`, want: []string{"interfaces: public[0]: no mac"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				p := tc.path
				if p == "" {
					p = Path
				}
				if r.URL.Path != p {
					http.NotFound(w, r)
					return
				}
				w.Write([]byte(tc.body))
			}))
			defer srv.Close()
			c := client(srv.URL)
			c.MaxBody = tc.maxBody
			_, err := c.Read(context.Background())
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

// TestSourceLinkLocal4: without a lease the source asks the IPv4
// link-local base (Base4), not the IPv6 one in Base, which DigitalOcean
// does not serve; with no Base4, Base.
func TestSourceLinkLocal4(t *testing.T) {
	body, err := os.ReadFile("testdata/metadata-v1.json")
	if err != nil {
		t.Fatal(err)
	}
	srv := serve(t, body)
	dead := "http://127.0.0.1:1"
	for _, tt := range []struct {
		name string
		svc  datasource.Service
	}{
		{"no lease", datasource.Service{Base: dead, Base4: srv.URL}},
		{"lease", datasource.Service{Base: srv.URL}},
	} {
		tt.svc.HTTP = &httpget.Getter{Retries: -1}
		d, err := Source.Metadata(context.Background(), tt.svc)
		if err != nil || d.InstanceID != "22532410" {
			t.Errorf("%s: Metadata = %v, %v", tt.name, d, err)
		}
	}
	if _, err := Source.Metadata(context.Background(), datasource.Service{Base: srv.URL, Base4: dead, HTTP: &httpget.Getter{Retries: -1}}); err == nil {
		t.Errorf("Base4 set: the source asked Base, not Base4")
	}
}
