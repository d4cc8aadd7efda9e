package oracle

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/earlyinit/earlyinit/internal/datasource"
	"github.com/earlyinit/earlyinit/internal/dmi"
	"github.com/earlyinit/earlyinit/internal/instance"
	"github.com/earlyinit/earlyinit/internal/netcfg"
)

func TestPlatform(t *testing.T) {
	for _, tt := range []struct {
		name string
		info dmi.Info
		want bool
	}{
		// cloud-init's tests/unittests/test_ds_identify.py "Oracle" and
		// its negative ("Not Oracle").
		{"ds-identify Oracle", dmi.Info{ChassisAssetTag: "OracleCloud.com"}, true},
		{"ds-identify not Oracle", dmi.Info{ChassisAssetTag: "Not Oracle"}, false},
		{"other case (compared exactly)", dmi.Info{ChassisAssetTag: "oraclecloud.com"}, false},
		{"vendor only", dmi.Info{SysVendor: "Oracle Corporation", ProductName: "VirtualBox"}, false},
		{"no DMI", dmi.Info{}, false},
	} {
		if got := Platform(tt.info); got != tt.want {
			t.Errorf("%s: Platform(%+v) = %v, want %v", tt.name, tt.info, got, tt.want)
		}
	}
}

func fixture(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// imds plays OCI's IMDS: paths (under /opc/) answered with bodies; /opc/v2/
// only with Authorization: Bearer Oracle (401 otherwise), /opc/v1/ only
// without it.
type imds struct {
	docs   map[string]string
	status map[string]int

	mu   sync.Mutex
	hits []string
}

func (m *imds) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	m.mu.Lock()
	m.hits = append(m.hits, r.URL.Path)
	m.mu.Unlock()
	if code := m.status[r.URL.Path]; code != 0 {
		w.WriteHeader(code)
		return
	}
	auth := r.Header.Get("Authorization")
	if strings.HasPrefix(r.URL.Path, "/opc/v2/") && auth != "Bearer Oracle" {
		w.WriteHeader(http.StatusUnauthorized)
		return
	}
	if strings.HasPrefix(r.URL.Path, "/opc/v1/") && auth != "" {
		http.Error(w, "v1 takes no Authorization", http.StatusBadRequest)
		return
	}
	if b, ok := m.docs[r.URL.Path]; ok {
		w.Write([]byte(b))
		return
	}
	http.NotFound(w, r)
}

func serve(t *testing.T, m *imds) string {
	srv := httptest.NewServer(m)
	t.Cleanup(srv.Close)
	return srv.URL
}

func client(base string) *Client {
	return &Client{BaseURL: base, HTTPClient: datasource.HTTPClient{RequestTimeout: 300 * time.Millisecond, Backoff: time.Millisecond}}
}

func TestRead(t *testing.T) {
	inst, vnics := fixture(t, "instance-v2.json"), fixture(t, "vnics-vm-secondary.json")
	for _, tt := range []struct {
		name    string
		docs    map[string]string
		status  map[string]int
		version string
	}{
		{"IMDSv2", map[string]string{"/opc/v2/instance/": inst, "/opc/v2/vnics/": vnics}, nil, "v2"},
		{"IMDSv1 when v2 is not there", map[string]string{"/opc/v1/instance/": inst, "/opc/v1/vnics/": vnics}, nil, "v1"},
		{"IMDSv1 when v2 refuses", map[string]string{"/opc/v1/instance/": inst, "/opc/v1/vnics/": vnics}, map[string]int{"/opc/v2/instance/": 403}, "v1"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			m := &imds{docs: tt.docs, status: tt.status}
			base := serve(t, m)
			d, err := client(base).Read(context.Background())
			if err != nil {
				t.Fatalf("Read: %v", err)
			}
			zero := 0
			want := instance.Data{
				Datasource: "oracle", CloudName: "oracle", Platform: "oracle",
				Subplatform:      "metadata (" + base + "/opc/" + tt.version + "/)",
				InstanceID:       "ocid1.instance.oc1.phx.anyhqljtniwq6syc3nex55sep5w34qbwmw6TRUNCATED",
				LocalHostname:    "instance-20200320-1400",
				AvailabilityZone: "phx-ad-3",
				Region:           "us-phoenix-1",
				PublicKeys:       []string{"ssh-rsa AAAAB3NzaC1yc2EAAAADAQABAAABAQ truncated"},
				LaunchIndex:      &zero,
				UserData:         []byte("#!/bin/sh\ntouch /tmp/foo"),
				NetworkFormat:    instance.NetworkYAML,
			}
			got := *d
			got.Meta, got.Network = nil, nil
			if !reflect.DeepEqual(got, want) {
				t.Errorf("Read:\n got %+v\nwant %+v", got, want)
			}
			if d.Meta["displayName"] != "instance-20200320-1400" || d.Meta["shape"] != "VM.Standard2.1" {
				t.Errorf("Meta = %v", d.Meta)
			}
			if last := m.hits[len(m.hits)-1]; last != "/opc/"+tt.version+"/vnics/" {
				t.Errorf("requests %v: VNICs not read from %s", m.hits, tt.version)
			}
			cfg, err := netcfg.Parse(string(d.NetworkFormat), d.Network, map[string]string{"02:00:17:05:d1:db": "ens3", "00:00:17:02:2b:b1": "ens4"})
			if err != nil {
				t.Fatalf("network %s: %v", d.Network, err)
			}
			// Secondary VNICs are not configured unless asked.
			if len(cfg.Interfaces) != 1 {
				t.Fatalf("network = %+v", cfg.Interfaces)
			}
			i := cfg.Interfaces[0]
			if i.Name != "ens3" || i.MAC != "02:00:17:05:d1:db" || i.MTU != 9000 || len(i.Subnets) != 1 || i.Subnets[0].Type != netcfg.DHCP4 {
				t.Errorf("primary = %+v", i)
			}
		})
	}
}

// TestNetwork: cloud-init's test_imds_nic_setup_v1 (and _ipv6_only) with
// secondary VNICs asked for, and its bare metal case.
func TestNetwork(t *testing.T) {
	type nic struct {
		name, mac string
		subnets   []string // types, or addresses for static ones
	}
	for _, tt := range []struct {
		file      string
		secondary bool
		names     map[string]string
		want      []nic
	}{
		{"vnics-vm-secondary.json", true, map[string]string{"02:00:17:05:d1:db": "ens3", "00:00:17:02:2b:b1": "ens4"},
			[]nic{{"ens3", "02:00:17:05:d1:db", []string{"dhcp4"}}, {"ens4", "00:00:17:02:2b:b1", []string{"10.0.0.231/24"}}}},
		{"vnics-vm-ipv6-only-secondary.json", true, map[string]string{"02:00:17:0d:6b:be": "ens3", "02:00:17:18:f6:ff": "ens4"},
			[]nic{{"ens3", "02:00:17:0d:6b:be", []string{"dhcp6"}}, {"ens4", "02:00:17:18:f6:ff", []string{"2603:c020:400d:5d7e:aacc:8e5f:3b1b:3a4a/128"}}}},
		{"vnics-vm-dual-stack-secondary.json", true, map[string]string{"02:00:17:0d:6b:be": "ens3", "02:00:17:18:f6:ff": "ens4"},
			[]nic{{"ens3", "02:00:17:0d:6b:be", []string{"dhcp4"}}, {"ens4", "02:00:17:18:f6:ff", []string{"2603:c020:400d:5d7e:aacc:8e5f:3b1b:3a4a/128"}}}},
		{"vnics-vm-ipv6.json", false, map[string]string{"02:00:17:15:92:4e": "ens3"},
			[]nic{{"ens3", "02:00:17:15:92:4e", []string{"dhcp6"}}}},
		// Bare metal (nicIndex): the secondary VNIC is never configured.
		{"vnics-bm-secondary.json", true, map[string]string{"90:e2:ba:d4:f1:68": "eno2"},
			[]nic{{"eno2", "90:e2:ba:d4:f1:68", []string{"dhcp4"}}}},
	} {
		t.Run(tt.file, func(t *testing.T) {
			var logs []string
			b, err := Network("vnics", []byte(fixture(t, tt.file)), tt.secondary, func(f string, a ...any) { logs = append(logs, f) })
			if err != nil {
				t.Fatal(err)
			}
			cfg, err := netcfg.Parse("yaml", b, tt.names)
			if err != nil {
				t.Fatalf("%s: %v", b, err)
			}
			var got []nic
			for _, i := range cfg.Interfaces {
				n := nic{name: i.Name, mac: i.MAC}
				if i.MTU != 9000 {
					t.Errorf("%s: MTU %d", i.Name, i.MTU)
				}
				for _, s := range i.Subnets {
					if s.Type == netcfg.Static {
						n.subnets = append(n.subnets, s.Address.String())
					} else {
						n.subnets = append(n.subnets, string(s.Type))
					}
				}
				got = append(got, n)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("network %s:\n got %+v\nwant %+v", b, got, tt.want)
			}
			if strings.Contains(tt.file, "bm") && len(logs) == 0 {
				t.Error("bare metal's skipped VNICs not logged")
			}
		})
	}
}

// TestNoVNICs: the VNICs are not needed: without them the instance is read
// and the fallback network configuration applies (cloud-init warns too).
func TestNoVNICs(t *testing.T) {
	inst := fixture(t, "instance-v2.json")
	for _, tt := range []struct {
		name  string
		vnics *string
		code  int
		want  string
	}{
		{"404", nil, 0, "/opc/v2/vnics/: HTTP 404"},
		{"500", nil, 500, "/opc/v2/vnics/: HTTP 500"},
		{"not JSON", ptr("[{"), 0, "vnics/: unexpected end of JSON input"},
		{"empty list", ptr("[]"), 0, "no VNICs"},
		{"bad MAC", ptr(`[{"macAddr": "02:00:17"}]`), 0, `macAddr "02:00:17": not a MAC address`},
		{"bad address", ptr(`[{"macAddr": "02:00:17:05:D1:DB"}, {"macAddr": "00:00:17:02:2B:B1", "privateIp": "10.0.0"}]`), 0, `VNIC 1: privateIp: "10.0.0": not an IP address`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			m := &imds{docs: map[string]string{"/opc/v2/instance/": inst}}
			if tt.vnics != nil {
				m.docs["/opc/v2/vnics/"] = *tt.vnics
			}
			if tt.code != 0 {
				m.status = map[string]int{"/opc/v2/vnics/": tt.code}
			}
			var logs []string
			c := client(serve(t, m))
			c.SecondaryNICs = true
			c.Logf = func(f string, a ...any) { logs = append(logs, strings.TrimSpace(sprintf(f, a...))) }
			d, err := c.Read(context.Background())
			if err != nil {
				t.Fatalf("Read: %v", err)
			}
			if d.Network != nil || d.NetworkFormat != instance.NetworkNone {
				t.Errorf("Network = %s %q, want none", d.Network, d.NetworkFormat)
			}
			if !strings.Contains(strings.Join(logs, "\n"), tt.want) {
				t.Errorf("logs %q do not say %q", logs, tt.want)
			}
		})
	}
}

func TestReadErrors(t *testing.T) {
	inst := fixture(t, "instance-v2.json")
	for _, tt := range []struct {
		name   string
		docs   map[string]string
		status map[string]int
		want   []string
		never  string
	}{
		{"v2 500 (no v1 fallback)", map[string]string{"/opc/v1/instance/": inst}, map[string]int{"/opc/v2/instance/": 500}, []string{"/opc/v2/instance/: HTTP 500"}, ""},
		{"neither version", nil, nil, []string{"/opc/v1/instance/: HTTP 404"}, ""},
		{"not JSON", map[string]string{"/opc/v2/instance/": "<html>"}, nil, []string{"parse ", "/opc/v2/instance/: invalid JSON"}, ""},
		{"not an object", map[string]string{"/opc/v2/instance/": "[]"}, nil, []string{"/opc/v2/instance/: want a JSON object, got a list"}, ""},
		{"no id", map[string]string{"/opc/v2/instance/": `{"hostname": "h"}`}, nil, []string{`/opc/v2/instance/: "id": missing`}, ""},
		{"id not a string", map[string]string{"/opc/v2/instance/": `{"id": 5}`}, nil, []string{`"id": want a string, got a number`}, ""},
		{"metadata not an object", map[string]string{"/opc/v2/instance/": `{"id": "i", "metadata": "x"}`}, nil, []string{`"metadata": want an object`}, ""},
		{"user_data not base64", map[string]string{"/opc/v2/instance/": `{"id": "i", "metadata": {"user_data": "s3cret-not-base64!"}}`}, nil,
			[]string{`"metadata.user_data": not base64`}, "s3cret"},
		{"keys not a string", map[string]string{"/opc/v2/instance/": `{"id": "i", "metadata": {"ssh_authorized_keys": 5}}`}, nil, []string{`"metadata.ssh_authorized_keys": want a string`}, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			d, err := client(serve(t, &imds{docs: tt.docs, status: tt.status})).Read(context.Background())
			if err == nil {
				t.Fatalf("Read = %+v, want an error", d)
			}
			if !strings.HasPrefix(err.Error(), "oracle: ") {
				t.Errorf("error %q does not start with oracle:", err)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
			if tt.never != "" && strings.Contains(err.Error(), tt.never) {
				t.Errorf("error %q quotes user-data", err)
			}
		})
	}
}

func TestOversized(t *testing.T) {
	m := &imds{docs: map[string]string{"/opc/v2/instance/": fixture(t, "instance-v2.json")}}
	c := client(serve(t, m))
	c.MaxBody = 100
	if _, err := c.Read(context.Background()); err == nil || !strings.Contains(err.Error(), "/opc/v2/instance/: body over the 100 byte limit") {
		t.Errorf("Read error = %v, want the body limit", err)
	}
}

func TestSource(t *testing.T) {
	if Source.Name != "oracle" || Source.Class != "Oracle" || Source.Metadata == nil {
		t.Errorf("Source = %+v", Source)
	}
}

// TestSourceSecondaryNICs: the source configures the secondary VNICs when
// the image asks (Service.SecondaryNICs), and only then.
func TestSourceSecondaryNICs(t *testing.T) {
	base := serve(t, &imds{docs: map[string]string{
		"/opc/v2/instance/": fixture(t, "instance-v2.json"),
		"/opc/v2/vnics/":    fixture(t, "vnics-vm-secondary.json"),
	}})
	for _, tt := range []struct {
		secondary bool
		want      int // interfaces
	}{{false, 1}, {true, 2}} {
		d, err := Source.Metadata(context.Background(), datasource.Service{Base: base, SecondaryNICs: tt.secondary})
		if err != nil {
			t.Fatalf("secondary %v: %v", tt.secondary, err)
		}
		cfg, err := netcfg.Parse(string(d.NetworkFormat), d.Network, map[string]string{"02:00:17:05:d1:db": "ens3", "00:00:17:02:2b:b1": "ens4"})
		if err != nil {
			t.Fatalf("secondary %v: network %s: %v", tt.secondary, d.Network, err)
		}
		if len(cfg.Interfaces) != tt.want {
			t.Errorf("secondary %v: %d interfaces, want %d: %s", tt.secondary, len(cfg.Interfaces), tt.want, d.Network)
		}
	}
}

func ptr(s string) *string { return &s }

func sprintf(f string, a ...any) string { return fmt.Sprintf(f, a...) }
