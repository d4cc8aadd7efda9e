package nocloud

import (
	"encoding/json"
	"errors"
	"os"
	"reflect"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/earlyinit/earlyinit/internal/instance"
)

const (
	key1 = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIGVhcmx5aW5pdCB0ZXN0IGtleSBvbmx5 alice@laptop"
	key2 = "ssh-rsa AAAAB3NzaC1yc2EAAAADAQABAAABAQCearlyinit bob@desk"
)

func file(s string) *fstest.MapFile { return &fstest.MapFile{Data: []byte(s)} }

// seed returns a seed whose meta-data is md, plus extra name, content pairs.
func seed(md string, extra ...string) fstest.MapFS {
	fsys := fstest.MapFS{"meta-data": file(md)}
	for i := 0; i+1 < len(extra); i += 2 {
		fsys[extra[i]] = file(extra[i+1])
	}
	return fsys
}

// TestReadDirectory reads testdata/cidata through os.DirFS, as the boot code
// reads a mounted cidata drive or a seed directory.
func TestReadDirectory(t *testing.T) {
	d, err := Read(os.DirFS("testdata/cidata"))
	if err != nil {
		t.Fatal(err)
	}
	read := func(name string) []byte {
		b, err := os.ReadFile("testdata/cidata/" + name)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	want := &instance.Data{
		Datasource:    "nocloud",
		CloudName:     "nocloud",
		Platform:      "nocloud",
		InstanceID:    "iid-db-7f3a91",
		LocalHostname: "db-1",
		PublicKeys:    []string{key1, key2},
		UserData:      read("user-data"),
		VendorData:    read("vendor-data"),
		Network:       read("network-config"),
		NetworkFormat: instance.NetworkYAML,
	}
	got := *d
	got.Meta = nil
	if !reflect.DeepEqual(&got, want) {
		t.Errorf("Read:\n got %+v\nwant %+v", &got, want)
	}
	if d.Meta["instance-id"] != "iid-db-7f3a91" || d.Meta["network-interfaces"] != "auto eth0\niface eth0 inet dhcp\n" {
		t.Errorf("Meta = %v, want meta-data's keys", d.Meta)
	}
}

func TestRead(t *testing.T) {
	for _, tt := range []struct {
		name string
		fsys fstest.MapFS
		want instance.Data // Datasource, CloudName, Platform default to nocloud; Meta not compared
	}{
		{"minimal, no user-data", seed("instance-id: i-1\n"),
			instance.Data{InstanceID: "i-1"}},
		{"JSON meta-data", seed(`{"instance-id": "i-1", "local-hostname": "h"}`),
			instance.Data{InstanceID: "i-1", LocalHostname: "h"}},
		{"JSON meta-data YAML refuses", seed("{\n\t\"instance-id\": \"i\\/1\",\n\t\"public-keys\": [\"" + key1 + "\"]\n}\n"),
			instance.Data{InstanceID: "i/1", PublicKeys: []string{key1}}},
		{"instance-id as written", seed("instance-id: 0123\nlocal-hostname: 1e3\n"),
			instance.Data{InstanceID: "0123", LocalHostname: "1e3"}},
		{"quoted instance-id", seed("instance-id: \"iid-local01\"\n"),
			instance.Data{InstanceID: "iid-local01"}},
		{"alias", seed("x: &id i-9\ninstance-id: *id\n"),
			instance.Data{InstanceID: "i-9"}},
		{"hostname when no local-hostname", seed("instance-id: i-1\nhostname: h.example\n"),
			instance.Data{InstanceID: "i-1", LocalHostname: "h.example"}},
		{"local-hostname wins", seed("instance-id: i-1\nhostname: a\nlocal-hostname: b\n"),
			instance.Data{InstanceID: "i-1", LocalHostname: "b"}},
		{"cloud-name", seed("instance-id: i-1\ncloud-name: MyCloud\n"),
			instance.Data{InstanceID: "i-1", CloudName: "mycloud"}},
		{"public-keys string", seed("instance-id: i-1\npublic-keys: |\n  " + key1 + "\n\n  " + key2 + "\n"),
			instance.Data{InstanceID: "i-1", PublicKeys: []string{key1, key2}}},
		{"public-keys mapping", seed("instance-id: i-1\npublic-keys:\n  zz: " + key2 + "\n  aa: [\"" + key1 + "\"]\n"),
			instance.Data{InstanceID: "i-1", PublicKeys: []string{key1, key2}}},
		{"public-keys list", seed("instance-id: i-1\npublic-keys: [\"" + key2 + "\", \"" + key1 + "\"]\n"),
			instance.Data{InstanceID: "i-1", PublicKeys: []string{key2, key1}}},
		{"raw payloads", seed("instance-id: i-1\n", "user-data", "\x1f\x8b\x08binary", "vendor-data", ""),
			instance.Data{InstanceID: "i-1", UserData: []byte("\x1f\x8b\x08binary"), VendorData: []byte{}}},
		{"network-interfaces", seed("instance-id: i-1\nnetwork-interfaces: |\n  auto eth0\n  iface eth0 inet dhcp\n"),
			instance.Data{InstanceID: "i-1", Network: []byte("auto eth0\niface eth0 inet dhcp\n"), NetworkFormat: instance.NetworkENI}},
		{"network-config v1 without network key", seed("instance-id: i-1\n", "network-config", "version: 1\nconfig:\n  - type: physical\n    name: eth0\n"),
			instance.Data{InstanceID: "i-1", Network: []byte("version: 1\nconfig:\n  - type: physical\n    name: eth0\n"), NetworkFormat: instance.NetworkYAML}},
		{"network-config disabled", seed("instance-id: i-1\n", "network-config", "network: {config: disabled}\n"),
			instance.Data{InstanceID: "i-1", Network: []byte("network: {config: disabled}\n"), NetworkFormat: instance.NetworkYAML}},
		{"empty network-config falls back to network-interfaces", seed("instance-id: i-1\nnetwork-interfaces: \"auto lo\\n\"\n", "network-config", "# nothing\n"),
			instance.Data{InstanceID: "i-1", Network: []byte("auto lo\n"), NetworkFormat: instance.NetworkENI}},
		{"network-config wins over network-interfaces", seed("instance-id: i-1\nnetwork-interfaces: \"auto lo\\n\"\n", "network-config", "version: 2\n"),
			instance.Data{InstanceID: "i-1", Network: []byte("version: 2\n"), NetworkFormat: instance.NetworkYAML}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			d, err := Read(tt.fsys)
			if err != nil {
				t.Fatal(err)
			}
			got := *d
			got.Meta = nil
			want := tt.want
			want.Datasource, want.Platform = "nocloud", "nocloud"
			if want.CloudName == "" {
				want.CloudName = "nocloud"
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("Read:\n got %+v\nwant %+v", got, want)
			}
			if _, err := json.Marshal(d.Meta); err != nil {
				t.Errorf("Meta does not marshal to JSON: %v", err)
			}
		})
	}
}

// TestMetaJSON checks that YAML-only values become JSON ones in Meta.
func TestMetaJSON(t *testing.T) {
	d, err := Read(seed("instance-id: i-1\nwhen: 2001-12-14t21:59:43.10-05:00\nbig: .inf\n1: one\nnested:\n  2: two\n"))
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(d.Meta)
	if err != nil {
		t.Fatal(err)
	}
	const want = `{"1":"one","big":"+Inf","instance-id":"i-1","nested":{"2":"two"},"when":"2001-12-14T21:59:43.1-05:00"}`
	if string(b) != want {
		t.Errorf("Meta = %s, want %s", b, want)
	}
}

func TestNoSeed(t *testing.T) {
	for name, fsys := range map[string]fstest.MapFS{
		"empty":        {},
		"config drive": {"openstack/latest/meta_data.json": file(`{"uuid": "x"}`)},
		"user-data":    {"user-data": file("#cloud-config\n")},
	} {
		t.Run(name, func(t *testing.T) {
			if _, err := Read(fsys); !errors.Is(err, ErrNoSeed) {
				t.Errorf("Read = %v, want ErrNoSeed", err)
			}
		})
	}
	if _, err := Read(seed("local-hostname: x\n")); err == nil || errors.Is(err, ErrNoSeed) {
		t.Errorf("Read(no instance-id) = %v, want an error other than ErrNoSeed", err)
	}
}

func TestBadInput(t *testing.T) {
	for _, tt := range []struct {
		name string
		fsys fstest.MapFS
		want []string
	}{
		{"malformed YAML", seed("instance-id: i-1\nlocal-hostname: a\n  b: c\n"),
			[]string{"meta-data", "line 3", "mapping values are not allowed"}},
		{"unclosed flow", seed("instance-id: i-1\npublic-keys: [a,\n"),
			[]string{"meta-data", "line "}},
		{"malformed JSON", seed("{\"instance-id\": \"i-1\",\n\"x\": 1\n"),
			[]string{"meta-data", "line 2", "did not find expected"}},
		{"duplicate key", seed("instance-id: i-1\ninstance-id: i-2\n"),
			[]string{"meta-data", "line 2", `"instance-id" already defined`}},
		{"empty", seed(""),
			[]string{"meta-data", `"instance-id"`, "missing"}},
		{"missing instance-id", seed("local-hostname: h\n"),
			[]string{"meta-data", `"instance-id"`, "missing"}},
		{"null instance-id", seed("instance-id: ~\n"),
			[]string{"meta-data", `"instance-id"`, "missing"}},
		{"instance-id a list", seed("instance-id: [a]\n"),
			[]string{"meta-data", `"instance-id"`, "want a string, got a list"}},
		{"not a mapping", seed("- instance-id: i-1\n"),
			[]string{"meta-data", "line 1", "want a mapping, got a list"}},
		{"a scalar", seed("i-1\n"),
			[]string{"meta-data", "want a mapping, got a scalar (str)"}},
		{"hostname a mapping", seed("instance-id: i-1\nlocal-hostname: {a: b}\n"),
			[]string{"meta-data", `"local-hostname"`, "got an object"}},
		{"public-keys a number", seed("instance-id: i-1\npublic-keys: 3\n"),
			[]string{"meta-data", `"public-keys"`, "got a number"}},
		{"public-keys list of lists", seed("instance-id: i-1\npublic-keys: [[a]]\n"),
			[]string{"meta-data", `"public-keys"`, "element 0", "got a list"}},
		{"network-interfaces a list", seed("instance-id: i-1\nnetwork-interfaces: [eth0]\n"),
			[]string{"meta-data", `"network-interfaces"`, "got a list"}},
		{"network-config malformed", seed("instance-id: i-1\n", "network-config", "network:\n  version: 2\n ethernets: {}\n"),
			[]string{"network-config", "line 2", "did not find expected key"}},
		{"network-config a list", seed("instance-id: i-1\n", "network-config", "- version: 2\n"),
			[]string{"network-config", "want a mapping"}},
		{"user-data a directory", seed("instance-id: i-1\n", "user-data/x", ""),
			[]string{"user-data", "is a directory"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			d, err := Read(tt.fsys)
			if err == nil {
				t.Fatalf("Read = %+v, want an error", d)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
		})
	}
}
