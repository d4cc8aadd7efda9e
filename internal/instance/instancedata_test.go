package instance

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"os"
	"reflect"
	"sort"
	"strings"
	"testing"
)

// TestPyJSONAgainstPython compares the encoder with Python's
// json.dumps(json.load(f), indent=1, sort_keys=True) + "\n" on
// testdata/pyjson-in.json (testdata/pyjson-python.out, written by Python 3.11).
func TestPyJSONAgainstPython(t *testing.T) {
	in, err := os.ReadFile("testdata/pyjson-in.json")
	if err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile("testdata/pyjson-python.out")
	if err != nil {
		t.Fatal(err)
	}
	v, err := decodeGeneric(in)
	if err != nil {
		t.Fatal(err)
	}
	got, err := pyJSON(v)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("pyJSON =\n%s\nPython wrote\n%s", got, want)
	}
}

func FuzzPyJSON(f *testing.F) {
	in, err := os.ReadFile("testdata/pyjson-in.json")
	if err != nil {
		f.Fatal(err)
	}
	f.Add(in)
	f.Add([]byte(`{"a": "\ud800", "b": [0.000001, 1e-7, 123e20]}`))
	f.Add([]byte(`"\u2028<>&"`))
	f.Fuzz(func(t *testing.T, in []byte) {
		v, err := decodeGeneric(in)
		if err != nil {
			return
		}
		out, err := pyJSON(v)
		if err != nil {
			return // a number out of float64 range
		}
		for _, c := range out {
			if c > 0x7e || c < 0x20 && c != '\n' {
				t.Fatalf("byte %#x in output %q", c, out)
			}
		}
		// Same value back, as encoding/json reads both.
		var a, b any
		if json.Unmarshal(in, &a) != nil {
			return
		}
		if err := json.Unmarshal(out, &b); err != nil {
			t.Fatalf("output does not parse: %v\n%s", err, out)
		}
		if !reflect.DeepEqual(a, b) {
			t.Fatalf("value changed: %v -> %v", a, b)
		}
	})
}

func decodeFile(t *testing.T, b []byte) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("%v\n%s", err, b)
	}
	return m
}

// at walks a "/"-separated path through decoded JSON.
func at(v any, path string) any {
	for _, p := range strings.Split(path, "/") {
		switch c := v.(type) {
		case map[string]any:
			v = c[p]
		case []any:
			i := 0
			for _, r := range p {
				i = i*10 + int(r-'0')
			}
			v = c[i]
		default:
			return nil
		}
	}
	return v
}

func TestInstanceDataRedaction(t *testing.T) {
	d := testData()
	d.Meta = map[string]any{
		"uuid":        "u-1",
		"admin_pass":  "meta-admin-pass",
		"random_seed": "bWV0YS1zZWVk",
		"meta": map[string]any{
			"role":        "web",
			"db_Password": "s3cr3t-db",
			"Api-Token":   "tok-123",
			"nested":      map[string]any{"SECRET_key": "s3cr3t-nested", "ok": "visible"},
			"passwd":      map[string]any{"whole": "s3cr3t-subtree"},
		},
		"services":  []any{map[string]any{"type": "dns", "password": "s3cr3t-list"}},
		"user-data": "s3cr3t-ud",
		"encoded":   "ci-b64:aGVsbG8=",
	}
	d.Network = []byte(`{"links": [{"id": "eth0", "type": "phy"}], "services": [{"token": "s3cr3t-net"}]}`)
	d.NetworkFormat = NetworkDataJSON
	redactedB, sensitiveB, err := InstanceData(d, SysInfo{})
	if err != nil {
		t.Fatal(err)
	}
	wantSensitive := []any{
		"ds/meta_data/admin_pass",
		"ds/meta_data/meta/Api-Token",
		"ds/meta_data/meta/db_Password",
		"ds/meta_data/meta/nested/SECRET_key",
		"ds/meta_data/meta/passwd",
		"ds/meta_data/random_seed",
		"ds/meta_data/services/0/password",
		"ds/meta_data/user-data",
		"ds/network_json/services/0/token",
	}
	secrets := map[string]any{
		"ds/meta_data/admin_pass":             "meta-admin-pass",
		"ds/meta_data/meta/Api-Token":         "tok-123",
		"ds/meta_data/meta/db_Password":       "s3cr3t-db",
		"ds/meta_data/meta/nested/SECRET_key": "s3cr3t-nested",
		"ds/meta_data/meta/passwd":            map[string]any{"whole": "s3cr3t-subtree"},
		"ds/meta_data/random_seed":            "bWV0YS1zZWVk",
		"ds/meta_data/services/0/password":    "s3cr3t-list",
		"ds/meta_data/user-data":              "s3cr3t-ud",
		"ds/network_json/services/0/token":    "s3cr3t-net",
	}
	redacted, sensitive := decodeFile(t, redactedB), decodeFile(t, sensitiveB)
	for _, m := range []map[string]any{redacted, sensitive} {
		if !reflect.DeepEqual(m["sensitive_keys"], wantSensitive) {
			t.Errorf("sensitive_keys = %v\nwant %v", m["sensitive_keys"], wantSensitive)
		}
		if got := m["base64_encoded_keys"]; !reflect.DeepEqual(got, []any{"ds/meta_data/encoded"}) {
			t.Errorf("base64_encoded_keys = %v", got)
		}
		if got := at(m, "ds/meta_data/encoded"); got != "aGVsbG8=" {
			t.Errorf("ci-b64 value = %v", got)
		}
		if got := at(m, "ds/meta_data/meta/nested/ok"); got != "visible" {
			t.Errorf("non-secret sibling = %v", got)
		}
		if got := at(m, "ds/network_json/links/0/id"); got != "eth0" {
			t.Errorf("network_json = %v", at(m, "ds/network_json"))
		}
	}
	for path, secret := range secrets {
		if got := at(redacted, path); got != Redacted {
			t.Errorf("redacted %s = %v", path, got)
		}
		if got := at(sensitive, path); !reflect.DeepEqual(got, secret) {
			t.Errorf("sensitive %s = %v, want %v", path, got, secret)
		}
	}
	for _, s := range []string{"s3cr3t", "tok-123", "meta-admin-pass", "bWV0YS1zZWVk", d.AdminPass} {
		if bytes.Contains(redactedB, []byte(s)) {
			t.Errorf("redacted file holds %q", s)
		}
	}
	for _, b := range [][]byte{redactedB, sensitiveB} {
		for _, s := range [][]byte{d.UserData, d.VendorData} {
			if bytes.Contains(b, s) {
				t.Errorf("instance data holds a payload %q", s)
			}
		}
	}
	// The metadata's own admin_pass and random_seed win over Data's.
	if got := at(sensitive, "ds/meta_data/admin_pass"); got != "meta-admin-pass" {
		t.Errorf("admin_pass = %v", got)
	}
}

func TestInstanceDataSecretsFromData(t *testing.T) {
	d := testData()
	redactedB, sensitiveB, err := InstanceData(d, SysInfo{})
	if err != nil {
		t.Fatal(err)
	}
	redacted, sensitive := decodeFile(t, redactedB), decodeFile(t, sensitiveB)
	if got := at(sensitive, "ds/meta_data/admin_pass"); got != d.AdminPass {
		t.Errorf("admin_pass = %v", got)
	}
	seed, _ := base64.StdEncoding.DecodeString(at(sensitive, "ds/meta_data/random_seed").(string))
	if !bytes.Equal(seed, d.RandomSeed) {
		t.Errorf("random_seed = %q", seed)
	}
	if got := sensitive["base64_encoded_keys"]; !reflect.DeepEqual(got, []any{"ds/meta_data/random_seed"}) {
		t.Errorf("base64_encoded_keys = %v", got)
	}
	for _, k := range []string{"ds/meta_data/admin_pass", "ds/meta_data/random_seed"} {
		if at(redacted, k) != Redacted {
			t.Errorf("%s = %v in the redacted file", k, at(redacted, k))
		}
	}
}

func TestInstanceDataV1(t *testing.T) {
	for _, tt := range []struct {
		name string
		edit func(d *Data)
		sys  SysInfo
		want map[string]any
	}{
		{
			name: "openstack config drive",
			sys:  SysInfo{Distro: "debian", DistroVersion: "12", DistroRelease: "bookworm", Variant: "debian", KernelRelease: "6.1.0-9-amd64", Machine: "x86_64"},
			want: map[string]any{
				"_beta_keys": []any{"subplatform"}, "availability-zone": "nova", "availability_zone": "nova",
				"cloud_id": "openstack", "cloud-name": "openstack", "cloud_name": "openstack",
				"instance-id": "83679162-1378-4288-a2d4-70e13ec132aa", "instance_id": "83679162-1378-4288-a2d4-70e13ec132aa",
				"local-hostname": "web-1", "local_hostname": "web-1", "platform": "openstack",
				"public_ssh_keys": []any{"ssh-ed25519 AAAA first", "ssh-rsa BBBB second"},
				"region":          nil, "subplatform": "config-disk (/dev/sr0)",
				"distro": "debian", "distro_version": "12", "distro_release": "bookworm", "variant": "debian",
				"kernel_release": "6.1.0-9-amd64", "machine": "x86_64",
			},
		},
		{
			name: "nocloud with defaults",
			edit: func(d *Data) {
				*d = Data{Datasource: "nocloud", DatasourceClass: "NoCloud", InstanceID: "iid-local01", Meta: map[string]any{"cloud-name": "MyCloud"}}
			},
			want: map[string]any{
				"_beta_keys": []any{"subplatform"}, "availability-zone": nil, "availability_zone": nil,
				"cloud_id": "mycloud", "cloud-name": "mycloud", "cloud_name": "mycloud",
				"instance-id": "iid-local01", "instance_id": "iid-local01",
				"local-hostname": nil, "local_hostname": nil, "platform": "nocloud",
				"public_ssh_keys": []any{}, "region": nil, "subplatform": "unknown",
			},
		},
		{
			name: "aws china region",
			edit: func(d *Data) {
				*d = Data{Datasource: "ec2", CloudName: "aws", Platform: "ec2", InstanceID: "i-1", Region: "cn-north-1", LocalHostname: "10.1.2.3"}
			},
			want: map[string]any{
				"_beta_keys": []any{"subplatform"}, "availability-zone": nil, "availability_zone": nil,
				"cloud_id": "aws-china", "cloud-name": "aws", "cloud_name": "aws",
				"instance-id": "i-1", "instance_id": "i-1",
				"local-hostname": "ip-10-1-2-3", "local_hostname": "ip-10-1-2-3", "platform": "ec2",
				"public_ssh_keys": []any{}, "region": "cn-north-1", "subplatform": "unknown",
			},
		},
	} {
		t.Run(tt.name, func(t *testing.T) {
			d := testData()
			if tt.edit != nil {
				tt.edit(d)
			}
			redacted, sensitive, err := InstanceData(d, tt.sys)
			if err != nil {
				t.Fatal(err)
			}
			for _, b := range [][]byte{redacted, sensitive} {
				if got := decodeFile(t, b)["v1"]; !reflect.DeepEqual(got, tt.want) {
					t.Errorf("v1 =\n%v\nwant\n%v", got, tt.want)
				}
			}
			m := decodeFile(t, redacted)
			var top []string
			for k := range m {
				top = append(top, k)
			}
			sort.Strings(top)
			if !reflect.DeepEqual(top, []string{"base64_encoded_keys", "ds", "sensitive_keys", "v1"}) {
				t.Errorf("top-level keys %v", top)
			}
			if at(m, "ds/_doc") != experimentalDoc {
				t.Errorf("ds._doc = %v", at(m, "ds/_doc"))
			}
			// cloud-init's format: one-space indent, sorted keys.
			if !bytes.HasPrefix(redacted, []byte("{\n \"base64_encoded_keys\": [")) || !bytes.HasSuffix(redacted, []byte("\n}\n")) {
				t.Errorf("not in cloud-init's layout:\n%s", redacted)
			}
		})
	}
}

func TestInstanceDataErrors(t *testing.T) {
	d := testData()
	d.Network, d.NetworkFormat = []byte(`{"links": [`), NetworkDataJSON
	if _, _, err := InstanceData(d, SysInfo{}); err == nil || !strings.Contains(err.Error(), "network_data.json") {
		t.Errorf("bad network_data.json: %v", err)
	}
	d = testData()
	d.Meta = map[string]any{"f": func() {}}
	if _, _, err := InstanceData(d, SysInfo{}); err == nil || !strings.Contains(err.Error(), "metadata") {
		t.Errorf("unencodable metadata: %v", err)
	}
}

func TestIsSensitiveKey(t *testing.T) {
	for key, want := range map[string]bool{
		"admin_pass": true, "password": true, "PASSWD": true, "root-password-hash": true,
		"client_secret": true, "X-Auth-Token": true, "private_key": true, "ssh-private-key": true,
		"security-credentials": true, "random_seed": true, "random-seed": true,
		"user-data": true, "userdata": true, "user_data": true, "vendor-data": true, "vendordata": true,
		"vendor_data": true, "merged_cfg": true,
		"hostname": false, "public_keys": false, "public_ssh_keys": false, "uuid": false,
		"keys": false, "network_config": false, "meta": false, "sensitive_keys": false,
	} {
		if got := IsSensitiveKey(key); got != want {
			t.Errorf("IsSensitiveKey(%q) = %v, want %v", key, got, want)
		}
	}
}

func TestDatasourceString(t *testing.T) {
	for _, tt := range []struct{ ds, class, sub, want string }{
		{"configdrive", "ConfigDrive", "config-disk (/dev/sr0)", "DataSourceConfigDrive: config-disk (/dev/sr0)"},
		{"nocloud", "NoCloud", "seed-dir (/var/lib/cloud/seed/nocloud)", "DataSourceNoCloud: seed-dir (/var/lib/cloud/seed/nocloud)"},
		{"openstack", "OpenStack", "metadata (http://169.254.169.254)", "DataSourceOpenStack: metadata (http://169.254.169.254)"},
		{"ec2", "", "", "DataSourceEc2: unknown"},
		{"azure", "", "x", "DataSourceAzure: x"},
	} {
		if got := DatasourceString(&Data{Datasource: tt.ds, DatasourceClass: tt.class, Subplatform: tt.sub}); got != tt.want {
			t.Errorf("DatasourceString(%s) = %q, want %q", tt.ds, got, tt.want)
		}
	}
}

func TestOSRelease(t *testing.T) {
	for _, tt := range []struct {
		name, in string
		want     SysInfo
	}{
		{"debian", "PRETTY_NAME=\"Debian GNU/Linux 12 (bookworm)\"\nNAME=\"Debian GNU/Linux\"\nVERSION_ID=\"12\"\nVERSION=\"12 (bookworm)\"\nVERSION_CODENAME=bookworm\nID=debian\n",
			SysInfo{Distro: "debian", DistroVersion: "12", DistroRelease: "bookworm", Variant: "debian"}},
		{"ubuntu", "NAME=\"Ubuntu\"\nVERSION=\"22.04.3 LTS (Jammy Jellyfish)\"\nID=ubuntu\nID_LIKE=debian\nVERSION_ID=\"22.04\"\nVERSION_CODENAME=jammy\n",
			SysInfo{Distro: "ubuntu", DistroVersion: "22.04", DistroRelease: "jammy", Variant: "ubuntu"}},
		{"rhel without codename", "NAME=\"Red Hat Enterprise Linux\"\nVERSION=\"9.2 (Plow)\"\nID=\"rhel\"\nVERSION_ID='9.2'\n",
			SysInfo{Distro: "redhat", DistroVersion: "9.2", DistroRelease: "Plow", Variant: "rhel"}},
		{"unknown distro, comments", "# ID=debian\nID=nixos\nVERSION_ID=\"23.11\"\n",
			SysInfo{Distro: "nixos", DistroVersion: "23.11", Variant: "linux"}},
		{"empty", "", SysInfo{}},
	} {
		if got := OSRelease([]byte(tt.in)); got != tt.want {
			t.Errorf("%s: OSRelease = %+v, want %+v", tt.name, got, tt.want)
		}
	}
}

func FuzzOSRelease(f *testing.F) {
	f.Add([]byte("ID=debian\nVERSION=\"10 (buster)\"\nVERSION_ID=\"10\"\n"))
	f.Add([]byte("ID=\"rhel\"\nVERSION_ID='9'\nVERSION=\"a (b)\""))
	f.Add([]byte("ID=\"\\\"x\\\\\"\n=\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		s := OSRelease(b)
		if s.Distro == "" && s.Variant != "" {
			t.Fatalf("variant %q without a distro", s.Variant)
		}
		if s.Distro != "" && s.Variant == "" {
			t.Fatalf("distro %q without a variant", s.Distro)
		}
	})
}
