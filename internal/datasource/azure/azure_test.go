package azure

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"sync"
	"testing"
	"testing/fstest"
	"time"

	"github.com/earlyinit/earlyinit/internal/datasource"
	"github.com/earlyinit/earlyinit/internal/dmi"
	"github.com/earlyinit/earlyinit/internal/httpget"
	"github.com/earlyinit/earlyinit/internal/instance"
	"github.com/earlyinit/earlyinit/internal/netcfg"
	"github.com/earlyinit/earlyinit/internal/userdata"
)

func TestPlatform(t *testing.T) {
	for _, tt := range []struct {
		name string
		info dmi.Info
		want bool
	}{
		// cloud-init's tests/unittests/test_ds_identify.py
		// "Azure-dmi-detection".
		{"ds-identify Azure", dmi.Info{ChassisAssetTag: "7783-7084-3265-9085-8269-3286-77"}, true},
		{"an Azure VM's DMI", dmi.Info{SysVendor: "Microsoft Corporation", ProductName: "Virtual Machine", ChassisAssetTag: "7783-7084-3265-9085-8269-3286-77"}, true},
		// Hyper-V outside Azure has the same vendor and product.
		{"Hyper-V, not Azure", dmi.Info{SysVendor: "Microsoft Corporation", ProductName: "Virtual Machine", ChassisAssetTag: "0000-0000-0000-0000-0000-0000-00"}, false},
		{"tag with more", dmi.Info{ChassisAssetTag: "7783-7084-3265-9085-8269-3286-77x"}, false},
		{"no DMI", dmi.Info{}, false},
	} {
		if got := Platform(tt.info); got != tt.want {
			t.Errorf("%s: Platform(%+v) = %v, want %v", tt.name, tt.info, got, tt.want)
		}
	}
}

// imds plays Azure's IMDS: the instance document for api-version
// 2021-08-01 (extended) or 2019-06-01, only with "Metadata: true" (400
// otherwise, as IMDS answers).
type imds struct {
	doc string
	// refuse answers these api-versions with 400; notYet answers the
	// first notYet requests with 404.
	refuse map[string]bool
	notYet int

	mu   sync.Mutex
	hits []string
}

func (m *imds) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	m.mu.Lock()
	m.hits = append(m.hits, r.URL.RequestURI())
	n := len(m.hits)
	m.mu.Unlock()
	if r.Header.Get("Metadata") != "true" {
		http.Error(w, `{"error": "Bad request. Required metadata header not specified"}`, http.StatusBadRequest)
		return
	}
	if r.URL.Path != "/metadata/instance" {
		http.NotFound(w, r)
		return
	}
	v := r.URL.Query().Get("api-version")
	if m.refuse[v] || (v != APIVersion && v != fallbackAPIVersion) {
		w.WriteHeader(http.StatusBadRequest)
		return
	}
	if n <= m.notYet {
		http.NotFound(w, r)
		return
	}
	w.Write([]byte(m.doc))
}

func serve(t *testing.T, m *imds) string {
	srv := httptest.NewServer(m)
	t.Cleanup(srv.Close)
	return srv.URL
}

func client(base string) *Client {
	return &Client{BaseURL: base, HTTPClient: datasource.HTTPClient{RequestTimeout: 300 * time.Millisecond, Backoff: time.Millisecond}}
}

// imdsDoc is cloud-init's NETWORK_METADATA with the osProfile and
// userData of its test_azure.py tests, edited by edit.
func imdsDoc(t *testing.T, edit func(m map[string]any)) string {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(readFixture(t, "imds.json"), &m); err != nil {
		t.Fatal(err)
	}
	if edit != nil {
		edit(m)
	}
	b, _ := json.Marshal(m)
	return string(b)
}

func compute(m map[string]any) map[string]any { return m["compute"].(map[string]any) }

// vendorConfig is the cloud-config the vendor-data gives.
func vendorConfig(t *testing.T, vd []byte) map[string]any {
	t.Helper()
	if vd == nil {
		return nil
	}
	parts, _, err := userdata.Decode(vd)
	if err != nil {
		t.Fatalf("vendor-data %q: %v", vd, err)
	}
	cfg, _ := userdata.Merge(nil, parts)
	return cfg
}

func TestRead(t *testing.T) {
	full, err := ParseOVF("ovf-env.xml", readFixture(t, "ovf-env-full.xml"))
	if err != nil {
		t.Fatal(err)
	}
	full.Subplatform = "config-disk (/dev/sr0)"
	ovfKey := "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOvfKey azureuser"
	for _, tt := range []struct {
		name     string
		edit     func(m map[string]any)
		ovf      *OVF
		host     string
		user     string
		pwauth   any
		userData string
		keys     []string
		sub      string
	}{
		// test_hostname_from_imds, test_username_from_imds,
		// test_disable_password_from_imds_true, test_userdata_from_imds.
		{name: "IMDS alone", host: "hostname1", user: "username1", pwauth: false, userData: "userdataImds", keys: []string{"ssh-rsa key1"}},
		// test_userdata_from_imds_with_customdata_from_OVF: custom data
		// wins; IMDS's names and keys win over ovf-env.xml's.
		{name: "with ovf-env.xml", ovf: full, host: "hostname1", user: "username1", pwauth: false, userData: "#cloud-config\nruncmd: [touch /run/azure]\n", keys: []string{"ssh-rsa key1"}, sub: "config-disk (/dev/sr0)"},
		// test_disable_password_from_imds_false.
		{name: "password auth allowed", edit: func(m map[string]any) {
			compute(m)["osProfile"].(map[string]any)["disablePasswordAuthentication"] = "false"
		}, host: "hostname1", user: "username1", pwauth: true, userData: "userdataImds", keys: []string{"ssh-rsa key1"}},
		{name: "IMDS without osProfile and keys: ovf-env.xml's", edit: func(m map[string]any) {
			delete(compute(m), "osProfile")
			delete(compute(m), "publicKeys")
		}, ovf: full, host: "vm-azure-1", user: "azureuser", pwauth: false, userData: "#cloud-config\nruncmd: [touch /run/azure]\n", keys: []string{ovfKey}, sub: "config-disk (/dev/sr0)"},
		{name: "IMDS keys not OpenSSH: ovf-env.xml's", edit: func(m map[string]any) {
			compute(m)["publicKeys"] = []any{map[string]any{"keyData": "---- BEGIN SSH2 PUBLIC KEY ----", "path": "p"}}
		}, ovf: full, host: "hostname1", user: "username1", pwauth: false, userData: "#cloud-config\nruncmd: [touch /run/azure]\n", keys: []string{ovfKey}, sub: "config-disk (/dev/sr0)"},
		{name: "IMDS key with CRLF inside", edit: func(m map[string]any) {
			compute(m)["publicKeys"] = []any{map[string]any{"keyData": "ssh-rsa AAAA\r\nBBBB user\r\n", "path": "p"}}
		}, host: "hostname1", user: "username1", pwauth: false, userData: "userdataImds", keys: []string{"ssh-rsa AAAABBBB user"}},
		{name: "no osProfile, no ovf-env.xml", edit: func(m map[string]any) {
			delete(compute(m), "osProfile")
			delete(compute(m), "userData")
		}, keys: []string{"ssh-rsa key1"}},
		{name: "bad user-data is left out", edit: func(m map[string]any) {
			compute(m)["userData"] = "%%% not base64"
		}, host: "hostname1", user: "username1", pwauth: false, keys: []string{"ssh-rsa key1"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			base := serve(t, &imds{doc: imdsDoc(t, tt.edit)})
			var logs []string
			c := client(base)
			c.OVF = tt.ovf
			c.Logf = func(f string, a ...any) { logs = append(logs, f) }
			d, err := c.Read(context.Background())
			if err != nil {
				t.Fatalf("Read: %v", err)
			}
			sub := tt.sub
			if sub == "" {
				sub = "metadata (" + base + ")"
			}
			want := instance.Data{
				Datasource: "azure", CloudName: "azure", Platform: "azure", Subplatform: sub,
				InstanceID:       "ff702a6b-cb6a-4fcd-ad68-b4ce38227642",
				LocalHostname:    tt.host,
				Region:           "eastus2",
				AvailabilityZone: "0",
				PublicKeys:       tt.keys,
				NetworkFormat:    instance.NetworkYAML,
			}
			if tt.userData != "" {
				want.UserData = []byte(tt.userData)
			}
			got := *d
			got.Meta, got.Network, got.VendorData = nil, nil, nil
			if !reflect.DeepEqual(got, want) {
				t.Errorf("Read:\n got %+v\nwant %+v", got, want)
			}
			cfg := vendorConfig(t, d.VendorData)
			var user any
			if si, ok := cfg["system_info"].(map[string]any); ok {
				user = si["default_user"].(map[string]any)["name"]
			}
			if tt.user == "" && user != nil || tt.user != "" && user != tt.user {
				t.Errorf("vendor-data default user %v, want %q (%s)", user, tt.user, d.VendorData)
			}
			if cfg["ssh_pwauth"] != tt.pwauth {
				t.Errorf("vendor-data ssh_pwauth %v, want %v", cfg["ssh_pwauth"], tt.pwauth)
			}
			if d.Meta["imds"] == nil || d.Meta["instance-id"] != want.InstanceID {
				t.Errorf("Meta = %v", d.Meta)
			}
			nc, err := netcfg.Parse("yaml", d.Network, nil)
			if err != nil || len(nc.Interfaces) != 1 || nc.Interfaces[0].MAC != "00:0d:3a:04:75:98" {
				t.Errorf("network %s: %v", d.Network, err)
			}
			for _, l := range logs {
				if strings.Contains(l, "userdataImds") || strings.Contains(l, "key1") {
					t.Errorf("logged user-data or a key: %q", l)
				}
			}
		})
	}
}

func TestReadTwoNICs(t *testing.T) {
	base := serve(t, &imds{doc: string(readFixture(t, "imds-two-nics.json"))})
	d, err := client(base).Read(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	nc, err := netcfg.Parse("yaml", d.Network, nil)
	if err != nil || len(nc.Interfaces) != 2 {
		t.Fatalf("network %s: %v", d.Network, err)
	}
	if nc.Interfaces[1].Name != "eth1" || nc.Interfaces[1].MAC != "22:0d:3a:04:75:98" || nc.Interfaces[1].Subnets[0].Metric != 200 {
		t.Errorf("second NIC = %+v", nc.Interfaces[1])
	}
}

func TestReadRequests(t *testing.T) {
	doc := imdsDoc(t, nil)
	for _, tt := range []struct {
		name string
		m    *imds
		want []string
	}{
		{"extended", &imds{doc: doc}, []string{"/metadata/instance?api-version=2021-08-01&extended=true"}},
		{"fallback api-version", &imds{doc: doc, refuse: map[string]bool{APIVersion: true}},
			[]string{"/metadata/instance?api-version=2021-08-01&extended=true", "/metadata/instance?api-version=2019-06-01"}},
		{"404 while the VM is set up", &imds{doc: doc, notYet: 2},
			[]string{"/metadata/instance?api-version=2021-08-01&extended=true", "/metadata/instance?api-version=2021-08-01&extended=true", "/metadata/instance?api-version=2021-08-01&extended=true"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := client(serve(t, tt.m)).Read(context.Background()); err != nil {
				t.Fatalf("Read: %v", err)
			}
			if !reflect.DeepEqual(tt.m.hits, tt.want) {
				t.Errorf("requests %q, want %q", tt.m.hits, tt.want)
			}
		})
	}
}

// dropHeader is a Fetcher that loses the Metadata header on the way.
type dropHeader struct{ f httpget.Fetcher }

func (d dropHeader) Get(ctx context.Context, r httpget.Request) ([]byte, error) {
	r.Header = nil
	return d.f.Get(ctx, r)
}

func TestReadErrors(t *testing.T) {
	for _, tt := range []struct {
		name  string
		doc   string
		setup func(m *imds, c *Client)
		want  []string
	}{
		{name: "no Metadata header", doc: imdsDoc(t, nil), setup: func(m *imds, c *Client) {
			c.HTTP = dropHeader{&httpget.Getter{RequestTimeout: time.Second, Retries: -1}}
		}, want: []string{"api-version=2019-06-01: HTTP 400"}},
		{name: "404 for good", doc: imdsDoc(t, nil), setup: func(m *imds, c *Client) { m.notYet = 100 }, want: []string{"HTTP 404"}},
		{name: "not JSON", doc: "<html>", want: []string{"parse ", "invalid JSON"}},
		{name: "not an object", doc: "[]", want: []string{"want a JSON object, got a list"}},
		{name: "no compute", doc: `{"network": {}}`, want: []string{"compute: want an object, got null"}},
		{name: "no vmId", doc: imdsDoc(t, func(m map[string]any) { delete(compute(m), "vmId") }), want: []string{"compute.vmId: missing"}},
		{name: "vmId a number", doc: imdsDoc(t, func(m map[string]any) { compute(m)["vmId"] = 5 }), want: []string{"compute.vmId: want a string, got a number"}},
		{name: "pre-provisioned", doc: imdsDoc(t, func(m map[string]any) {
			m["extended"] = map[string]any{"compute": map[string]any{"ppsType": "Running"}}
		}),
			want: []string{"extended.compute.ppsType \"Running\"", "not supported"}},
		{name: "pre-provisioned by ovf-env.xml", doc: imdsDoc(t, nil), setup: func(m *imds, c *Client) {
			o, _ := ParseOVF("ovf-env.xml", readFixture(t, "ovf-env-pps.xml"))
			c.OVF = o
		}, want: []string{"PreprovisionedVm true", "not supported"}},
		{name: "bad user name", doc: imdsDoc(t, func(m map[string]any) {
			compute(m)["osProfile"].(map[string]any)["adminUsername"] = "root\n- evil"
		}), want: []string{`compute.osProfile.adminUsername "root\n- evil": not a user name`}},
		{name: "osProfile not an object", doc: imdsDoc(t, func(m map[string]any) { compute(m)["osProfile"] = "x" }), want: []string{"compute.osProfile: want an object, got a string"}},
		{name: "oversized", doc: imdsDoc(t, nil), setup: func(m *imds, c *Client) { c.MaxBody = 64 }, want: []string{"body over the 64 byte limit"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			m := &imds{doc: tt.doc}
			c := client("")
			if tt.setup != nil {
				tt.setup(m, c)
			}
			c.BaseURL = serve(t, m)
			d, err := c.Read(context.Background())
			if err == nil {
				t.Fatalf("Read = %+v, want an error", d)
			}
			if !strings.HasPrefix(err.Error(), "azure: ") {
				t.Errorf("error %q does not start with azure:", err)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
		})
	}
}

func TestOversizedNotRetried(t *testing.T) {
	m := &imds{doc: imdsDoc(t, nil)}
	c := client(serve(t, m))
	c.MaxBody = 64
	c.Read(context.Background())
	if len(m.hits) != 1 {
		t.Errorf("%d requests for an oversized document, want 1", len(m.hits))
	}
}

func TestValidUser(t *testing.T) {
	for s, want := range map[string]bool{
		"azureuser": true, "test-user": true, "_svc": true, "a.b_c-1": true, "Admin": true,
		"": false, "-rf": false, "1user": false, ".hidden": false, "a b": false, "a:b": false, "ü": false,
		strings.Repeat("a", 64): true, strings.Repeat("a", 65): false,
	} {
		if got := validUser(s); got != want {
			t.Errorf("validUser(%q) = %v, want %v", s, got, want)
		}
	}
}

func TestReady(t *testing.T) {
	w := &wireServer{goalState: readFixture(t, "goalstate.xml")}
	ep := startWire(t, w)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	// Not Azure's instance: nothing is sent.
	if err := Ready(ctx, datasource.Service{}, &instance.Data{CloudName: "aws"}); err != nil || w.gets != 0 {
		t.Errorf("Ready for aws = %v after %d requests", err, w.gets)
	}
	r := &reporter{Endpoint: ep, HTTP: &httpget.Getter{RequestTimeout: time.Second}}
	if err := r.Report(ctx); err != nil || len(w.reports) != 1 {
		t.Errorf("Report = %v, %d reports", err, len(w.reports))
	}
}

func TestSource(t *testing.T) {
	if Source.Name != "azure" || Source.Class != "Azure" || Source.Metadata == nil || Source.ReadFS != nil {
		t.Errorf("Source = %+v", Source)
	}
}

// TestSourceDrive: the Source reads ovf-env.xml from the provisioning
// drive discovery hands over (its CustomData is the user-data), and a
// drive whose ovf-env.xml is broken rejects the source, naming the file.
func TestSourceDrive(t *testing.T) {
	if !Source.ProvisioningDrive("udf", "") || !Source.ProvisioningDrive("iso9660", "anything") || Source.ProvisioningDrive("vfat", "cidata") || Source.ProvisioningFile != OVFFile {
		t.Errorf("provisioning drive: udf or iso9660, any label, holding %s", OVFFile)
	}
	base := serve(t, &imds{doc: imdsDoc(t, nil)})
	svc := datasource.Service{Base: base, HTTP: &httpget.Getter{Retries: -1}}
	svc.Drive = fstest.MapFS{OVFFile: {Data: readFixture(t, "ovf-env-full.xml")}}
	d, err := Source.Metadata(context.Background(), svc)
	if err != nil || string(d.UserData) != "#cloud-config\nruncmd: [touch /run/azure]\n" {
		t.Errorf("with the drive: %v, user-data %q", err, d.UserData)
	}
	svc.Drive = fstest.MapFS{OVFFile: {Data: []byte("<not-ovf")}}
	if _, err := Source.Metadata(context.Background(), svc); err == nil || !strings.Contains(err.Error(), "provisioning media") || !strings.Contains(err.Error(), OVFFile) {
		t.Errorf("broken ovf-env.xml: %v", err)
	}
}
