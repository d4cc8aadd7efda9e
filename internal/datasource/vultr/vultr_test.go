package vultr

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
		{dmi.Info{SysVendor: "Vultr", ProductName: "VC2"}, true},
		{dmi.Info{SysVendor: "Vultr", ProductName: "HFC"}, true},
		{dmi.Info{SysVendor: "vultr"}, false},
		{dmi.Info{SysVendor: "Supermicro", ProductName: "Super Server"}, false}, // bare metal: the command line says it
		{dmi.Info{SysVendor: "QEMU", ProductName: "Standard PC (i440FX + PIIX, 1996)"}, false},
		{dmi.Info{}, false},
	} {
		if got := Source.Platform(tc.info); got != tc.want {
			t.Errorf("Platform(%+v) = %v, want %v", tc.info, got, tc.want)
		}
	}
	for _, tc := range []struct {
		params map[string]string
		want   bool
	}{
		{map[string]string{"vultr": ""}, true},
		{map[string]string{"quiet": "", "root": "/dev/vda1"}, false},
		{map[string]string{"vultrx": ""}, false},
	} {
		if _, ok, err := Source.Cmdline(tc.params); ok != tc.want || err != nil {
			t.Errorf("Cmdline(%v) = %v, %v; want %v", tc.params, ok, err, tc.want)
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

// serve answers GET /v1.json with body when the request carries the token
// header cloud-init sends, 401 without it.
func serve(t *testing.T, body []byte) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.URL.Path != Path:
			http.NotFound(w, r)
		case r.Header.Get(TokenHeader) != TokenValue:
			w.WriteHeader(http.StatusUnauthorized)
		default:
			w.Write(body)
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

func readFrom(t *testing.T, body []byte) *Client {
	srv := serve(t, body)
	return &Client{BaseURL: srv.URL, HTTPClient: datasource.HTTPClient{HTTP: &httpget.Getter{Retries: -1}}}
}

// interfaceMap is cloud-init's test INTERFACE_MAP: the live NICs by MAC.
var interfaceMap = map[string]string{
	"56:00:03:15:c4:65": "eth0",
	"56:00:03:1b:4e:ca": "eth0",
	"5a:00:03:1b:4e:ca": "eth1",
}

// named is the network config with each physical NIC named after the live
// NIC with its MAC, as cloud-init names it.
func named(t *testing.T, nc []byte) any {
	t.Helper()
	var v map[string]any
	if err := json.Unmarshal(nc, &v); err != nil {
		t.Fatal(err)
	}
	for _, e := range v["config"].([]any) {
		m := e.(map[string]any)
		if m["type"] == "physical" {
			if _, ok := m["name"]; ok {
				t.Errorf("entry %v has a name", m)
			}
			m["name"] = interfaceMap[m["mac_address"].(string)]
		}
	}
	return v
}

// TestRead: cloud-init's recorded metadata gives what cloud-init's test
// expects, the network configuration included once its NICs are named.
func TestRead(t *testing.T) {
	for _, tc := range []struct {
		doc, expected, hostname string
	}{
		{"v1_1.json", "expected_vultr_network_1.json", "CLOUDINIT_1"},
		{"v1_2.json", "expected_vultr_network_2.json", "CLOUDINIT_2"},
		{"v1_3.json", "expected_vultr_network_2.json", "CLOUDINIT_2"}, // cloud_interfaces
	} {
		t.Run(tc.doc, func(t *testing.T) {
			c := readFrom(t, read(t, tc.doc))
			d, err := c.Read(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if d.InstanceID != "29bea708-2e6e-480a-90ad-0e6b5d5ad62f" || d.LocalHostname != tc.hostname || d.Region != "us" {
				t.Errorf("id %q, hostname %q, region %q", d.InstanceID, d.LocalHostname, d.Region)
			}
			if want := []string{"ssh-rsa AAAAB3NzaC1y...IQQhv5PAOKaIl+mM3c= test3@key"}; !reflect.DeepEqual(d.PublicKeys, want) {
				t.Errorf("keys %q", d.PublicKeys)
			}
			if d.UserData != nil || !strings.HasPrefix(string(d.VendorData), "#cloud-config\npackage_upgrade: true\n") {
				t.Errorf("user-data %q, vendor-data %q", d.UserData, d.VendorData)
			}
			var want any
			if err := json.Unmarshal(read(t, tc.expected), &want); err != nil {
				t.Fatal(err)
			}
			if got := named(t, d.Network); !reflect.DeepEqual(got, want) || d.NetworkFormat != "yaml" {
				g, _ := json.Marshal(got)
				t.Errorf("network\n%s\nwant\n%s", g, read(t, tc.expected))
			}
			if _, ok := d.Meta["startup-script"]; ok {
				t.Error("startup-script kept in the metadata")
			}
			if d.Meta["instance-id"] != d.InstanceID || d.Meta["instanceid"] == nil || d.Meta["region"] != "us" {
				t.Errorf("meta %v", d.Meta)
			}
		})
	}
}

// TestNetworkParses: the generated configuration, once named, is one
// internal/netcfg takes.
func TestNetworkParses(t *testing.T) {
	d, err := Parse("u", read(t, "v1_2.json"))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(named(t, d.Network))
	c, err := netcfg.Parse("yaml", b, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	if len(c.Interfaces) != 2 || len(c.Interfaces[0].Subnets) != 3 || c.Interfaces[1].Subnets[0].Address.String() != "10.1.112.3/20" {
		t.Errorf("parsed %+v", c.Interfaces)
	}
	if len(c.DNS.Nameservers) != 2 {
		t.Errorf("dns %+v", c.DNS)
	}
}

// TestUnconfigured: a private NIC marked unconfigured is left out.
func TestUnconfigured(t *testing.T) {
	var md map[string]any
	if err := json.Unmarshal(read(t, "v1_2.json"), &md); err != nil {
		t.Fatal(err)
	}
	md["interfaces"].([]any)[1].(map[string]any)["unconfigured"] = true
	md["hostname"] = ""
	md["region"] = map[string]any{"regioncode": "EWR"}
	md["user-data"] = "#!/bin/sh\necho hi\n"
	b, _ := json.Marshal(md)
	d, err := Parse("u", b)
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(d.Network), `"physical"`); n != 1 {
		t.Errorf("%d NICs in %s", n, d.Network)
	}
	if d.LocalHostname != "guest" || d.Region != "ewr" || string(d.UserData) != "#!/bin/sh\necho hi\n" {
		t.Errorf("hostname %q, region %q, user-data %q", d.LocalHostname, d.Region, d.UserData)
	}
}

func TestReadErrors(t *testing.T) {
	for _, tc := range []struct {
		name    string
		body    string
		noToken bool
		path    string
		maxBody int64
		want    []string
	}{
		{name: "404", body: `{}`, path: "/v2.json", want: []string{"/v1.json", "404"}},
		{name: "no token", body: `{}`, noToken: true, want: []string{"/v1.json", "401"}},
		{name: "oversized", body: `{"instance-v2-id": "x", "user-data": "` + strings.Repeat("x", 100) + `"}`, maxBody: 64, want: []string{"/v1.json", "64 byte limit"}},
		{name: "syntax", body: "{\n\"instance-v2-id\": \"x\"\n", want: []string{"/v1.json", "unexpected end"}},
		{name: "no instance id", body: `{"instance-id": "x"}`, want: []string{"/v1.json", "instance-v2-id: missing"}},
		{name: "hostname a list", body: `{"instance-v2-id": "x", "hostname": []}`, want: []string{"/v1.json", "hostname: want string"}},
		{name: "region a string", body: `{"instance-v2-id": "x", "region": "ewr"}`, want: []string{"/v1.json", "region"}},
		{name: "user-data an object", body: `{"instance-v2-id": "x", "user-data": {}}`, want: []string{"/v1.json", "user-data: want a string"}},
		{name: "vendor-data a number", body: `{"instance-v2-id": "x", "vendor-data": 1}`, want: []string{"/v1.json", "vendor-data: want a string"}},
		{name: "nic without mac", body: `{"instance-v2-id": "x", "interfaces": [{"ipv4": {"address": "1.2.3.4"}}]}`, want: []string{"/v1.json", "interfaces: [0]: mac"}},
		{name: "private nic without address", body: `{"instance-v2-id": "x", "interfaces": [{"mac": "56:00:03:1b:4e:ca"}, {"mac": "5a:00:03:1b:4e:ca"}]}`, want: []string{"interfaces: [1]: ipv4.address"}},
		{name: "keys an object of numbers", body: `{"instance-v2-id": "x", "public-keys": {"a": 1}}`, want: []string{"/v1.json", "public-keys"}},
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
				if tc.noToken {
					w.WriteHeader(http.StatusUnauthorized)
					return
				}
				w.Write([]byte(tc.body))
			}))
			defer srv.Close()
			c := &Client{BaseURL: srv.URL, HTTPClient: datasource.HTTPClient{HTTP: &httpget.Getter{Retries: -1}}, MaxBody: tc.maxBody}
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
