package upcloud

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
	"github.com/earlyinit/earlyinit/internal/netcfg"
)

func TestPlatform(t *testing.T) {
	for _, tc := range []struct {
		info dmi.Info
		want bool
	}{
		{dmi.Info{SysVendor: "UpCloud"}, true}, // cloud-init's test
		{dmi.Info{SysVendor: "UpCloud", ProductName: "Cloud Server"}, true},
		{dmi.Info{SysVendor: "upcloud"}, false},
		{dmi.Info{SysVendor: "QEMU", ProductName: "Standard PC (i440FX + PIIX, 1996)"}, false},
		{dmi.Info{SysVendor: "OpenStack Foundation", ProductName: "OpenStack Nova"}, false},
		{dmi.Info{}, false},
	} {
		if got := Source.Platform(tc.info); got != tc.want {
			t.Errorf("Platform(%+v) = %v, want %v", tc.info, got, tc.want)
		}
	}
}

func read(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func serve(t *testing.T, body []byte) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != Path {
			http.NotFound(w, r)
			return
		}
		w.Write(body)
	}))
	t.Cleanup(srv.Close)
	return srv
}

// TestRead: cloud-init's recorded metadata, and the network configuration
// cloud-init's own converter makes of it once the NICs are named.
func TestRead(t *testing.T) {
	srv := serve(t, read(t, "metadata-v1.json"))
	d, err := (&Client{BaseURL: srv.URL, HTTPClient: datasource.HTTPClient{HTTP: &httpget.Getter{Retries: -1}}}).Read(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if d.InstanceID != "00322b68-0096-4042-9406-faad61922128" || d.LocalHostname != "test.example.com" || d.AvailabilityZone != "fi-hel2" || d.CloudName != "upcloud" {
		t.Errorf("id %q, hostname %q, zone %q, cloud %q", d.InstanceID, d.LocalHostname, d.AvailabilityZone, d.CloudName)
	}
	if want := []string{"ssh-rsa AAAAB.... test1@example.com", "ssh-rsa AAAAB.... test2@example.com"}; !reflect.DeepEqual(d.PublicKeys, want) {
		t.Errorf("keys %q", d.PublicKeys)
	}
	if string(d.UserData) != "#cloud-config\nruncmd:\n- [touch, /root/cloud-init-worked ]\n" || d.VendorData != nil {
		t.Errorf("user-data %q, vendor-data %q", d.UserData, d.VendorData)
	}
	if _, ok := d.Meta["storage"]; ok || d.Meta["network"] == nil {
		t.Errorf("meta %v", d.Meta)
	}

	// Named as cloud-init's test names them, it is cloud-init's config.
	var got map[string]any
	if err := json.Unmarshal(d.Network, &got); err != nil {
		t.Fatal(err)
	}
	for i, e := range got["config"].([]any) {
		m := e.(map[string]any)
		if m["type"] != "physical" {
			continue
		}
		if _, ok := m["name"]; ok {
			t.Errorf("config[%d] has a name", i)
		}
		m["name"] = "eth" + string(rune('0'+i))
	}
	var want any
	if err := json.Unmarshal(read(t, "expected-network.json"), &want); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		g, _ := json.Marshal(got)
		t.Errorf("network\n%s\nwant\n%s", g, read(t, "expected-network.json"))
	}
	b, _ := json.Marshal(got)
	c, err := netcfg.Parse("yaml", b, nil)
	if err == nil {
		err = c.Validate()
	}
	if err != nil {
		t.Fatalf("netcfg: %v", err)
	}
	if len(c.Interfaces) != 4 || c.Interfaces[2].Subnets[0].Type != netcfg.DHCPv6Stateless {
		t.Errorf("parsed %+v", c.Interfaces)
	}
}

// TestNetwork: static addresses keep their gateway, prefix and their own
// resolvers when they differ from the global ones.
func TestNetwork(t *testing.T) {
	nc, err := Network(Description{
		DNS: []string{"94.237.127.9"},
		Interfaces: []nic{{MAC: "3a:d6:ba:4a:36:e7", IPAddresses: []ipAddress{
			{Address: "10.0.0.5", Family: "IPv4", Gateway: "10.0.0.1", Network: "10.0.0.0/24", DNS: []string{"10.0.0.1"}},
			{Address: "10.0.1.5", Family: "IPv4", Network: "10.0.1.0/24", DNS: []string{"94.237.127.9"}},
			{Address: "2a04::5", Family: "IPv6", Gateway: "2a04::1", Network: "2a04::/64"},
		}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(nc)
	want := `{"version":1,"config":[{"type":"physical","mac_address":"3a:d6:ba:4a:36:e7","subnets":[` +
		`{"type":"static","control":"auto","address":"10.0.0.5","netmask":"24","gateway":"10.0.0.1","dns_nameservers":["10.0.0.1"]},` +
		`{"type":"static","control":"auto","address":"10.0.1.5","netmask":"24"},` +
		`{"type":"static6","control":"auto","address":"2a04::5","netmask":"64","gateway":"2a04::1"}]},` +
		`{"type":"nameserver","address":["94.237.127.9"]}]}`
	if string(b) != want {
		t.Errorf("network\n%s\nwant\n%s", b, want)
	}
}

func TestReadErrors(t *testing.T) {
	for _, tc := range []struct {
		name    string
		body    string
		path    string
		maxBody int64
		want    []string
	}{
		{name: "404", body: `{}`, path: "/metadata/v2.json", want: []string{Path, "404"}},
		{name: "oversized", body: `{"instance_id": "x", "user_data": "` + strings.Repeat("x", 100) + `"}`, maxBody: 64, want: []string{Path, "64 byte limit"}},
		{name: "syntax", body: `{"instance_id": "x",}`, want: []string{Path, "invalid JSON"}},
		{name: "not an object", body: `"x"`, want: []string{Path, "want a JSON object"}},
		{name: "no instance id", body: `{"hostname": "h"}`, want: []string{Path, "instance_id: missing"}},
		{name: "hostname a number", body: `{"instance_id": "x", "hostname": 1}`, want: []string{Path, "hostname: want string, got number"}},
		{name: "dhcp a string", body: `{"instance_id": "x", "network": {"interfaces": [{"mac": "3a:d6:ba:4a:36:e7", "ip_addresses": [{"dhcp": "yes"}]}]}}`, want: []string{Path, "dhcp"}},
		{name: "no interfaces", body: `{"instance_id": "x", "network": {"dns": []}}`, want: []string{Path, "network: interfaces: missing"}},
		{name: "nic without mac", body: `{"instance_id": "x", "network": {"interfaces": [{"ip_addresses": []}]}}`, want: []string{"network: interfaces[0]: mac"}},
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
			_, err := (&Client{BaseURL: srv.URL, HTTPClient: datasource.HTTPClient{HTTP: &httpget.Getter{Retries: -1}}, MaxBody: tc.maxBody}).Read(context.Background())
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
