package configdrive

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"mime"
	"mime/multipart"
	"os"
	"reflect"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/earlyinit/earlyinit/internal/datasource"
	"github.com/earlyinit/earlyinit/internal/instance"
)

const key1 = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIGVhcmx5aW5pdCB0ZXN0IGtleSBvbmx5 alice@laptop"
const key2 = "ssh-rsa AAAAB3NzaC1yc2EAAAADAQABAAABAQCearlyinit bob@desk"

func file(s string) *fstest.MapFile { return &fstest.MapFile{Data: []byte(s)} }

// drive returns a config drive whose latest/meta_data.json is md, plus extra
// files.
func drive(md string, extra ...string) fstest.MapFS {
	fsys := fstest.MapFS{"openstack/latest/meta_data.json": file(md)}
	for i := 0; i+1 < len(extra); i += 2 {
		fsys[extra[i]] = file(extra[i+1])
	}
	return fsys
}

// TestReadDirectory reads the fixture tree in testdata/config-2 through
// os.DirFS, as the boot code reads a mounted drive.
func TestReadDirectory(t *testing.T) {
	d, err := Read(os.DirFS("testdata/config-2"))
	if err != nil {
		t.Fatal(err)
	}
	zero := 0
	want := &instance.Data{
		Datasource:       "configdrive",
		CloudName:        "openstack",
		Platform:         "openstack",
		InstanceID:       "2b3c84ef-9c33-4a1e-b7a6-2d3b4c07c5f1",
		LocalHostname:    "web-1.example.internal",
		AvailabilityZone: "az-1",
		PublicKeys:       []string{key1},
		LaunchIndex:      &zero,
		UserData:         []byte("#cloud-config\nhostname: web-1\nruncmd:\n  - [touch, /run/user-data-ran]\n"),
		VendorData:       []byte("#cloud-config\npackages: [htop]\n"),
		NetworkFormat:    instance.NetworkDataJSON,
		Files: []instance.File{
			{Path: "/etc/motd.d/10-cloud", Content: []byte("Welcome to web-1.\n")},
			{Path: "/etc/app/app.conf", Content: []byte("[app]\nlisten = 0.0.0.0:8080\n")},
		},
		RandomSeed: []byte("garbage for the kernel's entropy pool"),
	}
	// Fields checked on their own below.
	got := *d
	got.Meta, got.Network, got.VendorData2 = nil, nil, nil
	if !reflect.DeepEqual(&got, want) {
		t.Errorf("Read:\n got %+v\nwant %+v", &got, want)
	}
	netJSON, err := os.ReadFile("testdata/config-2/openstack/2018-08-27/network_data.json")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(d.Network, netJSON) {
		t.Errorf("Network = %q, want network_data.json byte for byte", d.Network)
	}
	parts := mimeParts(t, d.VendorData2)
	if want := []string{"#!/bin/sh\necho part one\n", "#cloud-config\nruncmd: [[echo, two]]\n"}; !reflect.DeepEqual(parts, want) {
		t.Errorf("VendorData2 parts = %q, want %q", parts, want)
	}
	if d.Meta["name"] != "web-1" || d.Meta["project_id"] != "6f1c0e3e0b2d4b5c8a1f9e7d3c2b1a00" {
		t.Errorf("Meta lacks meta_data.json's keys: %v", d.Meta)
	}
	for _, k := range []string{"random_seed", "admin_pass"} {
		if _, ok := d.Meta[k]; ok {
			t.Errorf("Meta[%q] is set: secrets must stay out of Meta", k)
		}
	}
	ec2, ok := d.Meta["ec2_metadata"].(map[string]any)
	if !ok || ec2["instance-id"] != "i-00000001" {
		t.Errorf(`Meta["ec2_metadata"] = %v, want ec2/latest/meta-data.json`, d.Meta["ec2_metadata"])
	}
}

// mimeParts splits a multipart/mixed message and checks each part's type.
func mimeParts(t *testing.T, msg []byte) []string {
	t.Helper()
	head, body, ok := bytes.Cut(msg, []byte("\n\n"))
	if !ok {
		t.Fatalf("no header/body separator in %q", msg)
	}
	var ctype string
	for _, line := range strings.Split(string(head), "\n") {
		if k, v, ok := strings.Cut(line, ":"); ok && strings.EqualFold(k, "Content-Type") {
			ctype = strings.TrimSpace(v)
		}
	}
	mt, params, err := mime.ParseMediaType(ctype)
	if err != nil || mt != "multipart/mixed" {
		t.Fatalf("Content-Type %q: %v", ctype, err)
	}
	r := multipart.NewReader(bytes.NewReader(body), params["boundary"])
	var parts []string
	for {
		p, err := r.NextPart()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("next part of %q: %v", msg, err)
		}
		b, err := io.ReadAll(p)
		if err != nil {
			t.Fatal(err)
		}
		if ct := p.Header.Get("Content-Type"); ct != "text/x-not-multipart" && p.Header.Get("Mime-Version") == "" {
			t.Errorf("part %q has Content-Type %q", b, ct)
		}
		parts = append(parts, string(b))
	}
	return parts
}

func TestVersionChoice(t *testing.T) {
	md := func(id string) *fstest.MapFile { return file(fmt.Sprintf(`{"uuid": %q}`, id)) }
	for _, tt := range []struct {
		name string
		fsys fstest.MapFS
		want string // instance id, which names the version read
	}{
		{"latest only", fstest.MapFS{"openstack/latest/meta_data.json": md("latest")}, "latest"},
		{"oldest known beats latest", fstest.MapFS{
			"openstack/latest/meta_data.json":     md("latest"),
			"openstack/2012-08-10/meta_data.json": md("2012-08-10"),
		}, "2012-08-10"},
		{"newest known", fstest.MapFS{
			"openstack/latest/meta_data.json":     md("latest"),
			"openstack/2012-08-10/meta_data.json": md("2012-08-10"),
			"openstack/2016-10-06/meta_data.json": md("2016-10-06"),
			"openstack/2018-08-27/meta_data.json": md("2018-08-27"),
			"openstack/2017-02-22/meta_data.json": md("2017-02-22"),
		}, "2018-08-27"},
		{"content is not a version", fstest.MapFS{
			"openstack/latest/meta_data.json":  md("latest"),
			"openstack/content/0000":           file("x"),
			"openstack/content/meta_data.json": md("content"),
		}, "latest"},
		{"unknown future version is skipped", fstest.MapFS{
			"openstack/latest/meta_data.json":     md("latest"),
			"openstack/2013-04-04/meta_data.json": md("2013-04-04"),
			"openstack/2020-10-14/meta_data.json": md("2020-10-14"),
			"openstack/2099-01-01/meta_data.json": md("2099-01-01"),
		}, "2013-04-04"},
		{"known version without meta_data.json", fstest.MapFS{
			"openstack/latest/meta_data.json":     md("latest"),
			"openstack/2018-08-27/user_data":      file("x"),
			"openstack/2017-02-22/meta_data.json": md("2017-02-22"),
		}, "2017-02-22"},
		{"meta_data.json that is a directory", fstest.MapFS{
			"openstack/latest/meta_data.json":        md("latest"),
			"openstack/2018-08-27/meta_data.json/x":  file("x"),
			"openstack/2015-10-15/meta_data.json":    md("2015-10-15"),
			"openstack/2015-10-15/unrelated/content": file("x"),
		}, "2015-10-15"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			d, err := Read(tt.fsys)
			if err != nil {
				t.Fatal(err)
			}
			if d.InstanceID != tt.want {
				t.Errorf("read version %q, want %q", d.InstanceID, tt.want)
			}
		})
	}
}

func TestNotConfigDrive(t *testing.T) {
	for name, fsys := range map[string]fstest.MapFS{
		"empty":               {},
		"nocloud":             {"meta-data": file("instance-id: x\n"), "user-data": file("")},
		"unknown version":     {"openstack/2099-01-01/meta_data.json": file(`{"uuid": "x"}`)},
		"content only":        {"openstack/content/0000": file("x")},
		"latest without meta": {"openstack/latest/user_data": file("x")},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := Read(fsys)
			if !errors.Is(err, ErrNotConfigDrive) {
				t.Errorf("Read = %v, want ErrNotConfigDrive", err)
			}
		})
	}
	// A broken drive is not "not a config drive".
	_, err := Read(drive(`{"hostname": "x"}`))
	if err == nil || errors.Is(err, ErrNotConfigDrive) {
		t.Errorf("Read(no uuid) = %v, want an error other than ErrNotConfigDrive", err)
	}
}

func TestPublicKeys(t *testing.T) {
	for _, tt := range []struct {
		name, keys string
		want       []string
	}{
		{"absent", ``, nil},
		{"null", `"public_keys": null,`, nil},
		{"object", `"public_keys": {"alice": "` + key1 + `\n"},`, []string{key1}},
		{"object sorted by name", `"public_keys": {"zed": "` + key2 + `", "alice": "` + key1 + `"},`, []string{key1, key2}},
		{"object of lists", `"public_keys": {"a": ["` + key2 + `", "", "` + key1 + `"]},`, []string{key2, key1}},
		{"list keeps order", `"public_keys": ["` + key2 + `", "` + key1 + `"],`, []string{key2, key1}},
		{"string of lines", `"public_keys": "` + key2 + `\n\n` + key1 + `\r\n",`, []string{key2, key1}},
		{"empty string", `"public_keys": "",`, nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			d, err := Read(drive(`{` + tt.keys + `"uuid": "i-1"}`))
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(d.PublicKeys, tt.want) {
				t.Errorf("PublicKeys = %q, want %q", d.PublicKeys, tt.want)
			}
		})
	}
}

func TestMetaDataFields(t *testing.T) {
	three := 3
	for _, tt := range []struct {
		name string
		fsys fstest.MapFS
		want instance.Data // only the fields set here are compared
	}{
		{"hostname", drive(`{"uuid": "i-1", "hostname": "a.example", "name": "b"}`),
			instance.Data{InstanceID: "i-1", LocalHostname: "a.example"}},
		{"name when no hostname", drive(`{"uuid": "i-1", "name": "b"}`),
			instance.Data{InstanceID: "i-1", LocalHostname: "b"}},
		{"launch index and zone", drive(`{"uuid": "i-1", "launch_index": 3, "availability_zone": "nova"}`),
			instance.Data{InstanceID: "i-1", LaunchIndex: &three, AvailabilityZone: "nova"}},
		{"secrets", drive(`{"uuid": "i-1", "admin_pass": "hunter2", "random_seed": "AAEC\n/w=="}`),
			instance.Data{InstanceID: "i-1", AdminPass: "hunter2", RandomSeed: []byte{0, 1, 2, 255}}},
		{"files", drive(`{"uuid": "i-1", "files": [
				{"path": "/etc/a", "content_path": "/content/0000"},
				{"content_path": "/content/0001"},
				{"path": "etc/b", "content_path": "content/0001"},
				{"path": "/etc/empty", "content_path": "/content/0002"}]}`,
			"openstack/content/0000", "A\n", "openstack/content/0001", "B", "openstack/content/0002", ""),
			instance.Data{InstanceID: "i-1", Files: []instance.File{
				{Path: "/etc/a", Content: []byte("A\n")},
				{Path: "/etc/b", Content: []byte("B")},
				{Path: "/etc/empty", Content: []byte{}},
			}}},
		{"legacy network_config", drive(`{"uuid": "i-1", "network_config": {"content_path": "/content/0000"}}`,
			"openstack/content/0000", "auto eth0\niface eth0 inet dhcp\n"),
			instance.Data{InstanceID: "i-1", Network: []byte("auto eth0\niface eth0 inet dhcp\n"), NetworkFormat: instance.NetworkENI}},
		{"network_data.json wins over network_config", drive(`{"uuid": "i-1", "network_config": {"content_path": "/content/0000"}}`,
			"openstack/content/0000", "auto eth0\n",
			"openstack/latest/network_data.json", `{"links": []}`),
			instance.Data{InstanceID: "i-1", Network: []byte(`{"links": []}`), NetworkFormat: instance.NetworkDataJSON}},
		{"user data byte for byte", drive(`{"uuid": "i-1"}`, "openstack/latest/user_data", "\x1f\x8b\x08\x00binary\r\n"),
			instance.Data{InstanceID: "i-1", UserData: []byte("\x1f\x8b\x08\x00binary\r\n")}},
		{"empty user data", drive(`{"uuid": "i-1"}`, "openstack/latest/user_data", ""),
			instance.Data{InstanceID: "i-1", UserData: []byte{}}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			d, err := Read(tt.fsys)
			if err != nil {
				t.Fatal(err)
			}
			got := *d
			got.Meta = nil
			want := tt.want
			want.Datasource, want.CloudName, want.Platform = "configdrive", "openstack", "openstack"
			if !reflect.DeepEqual(got, want) {
				t.Errorf("Read:\n got %+v\nwant %+v", got, want)
			}
		})
	}
}

func TestVendorData(t *testing.T) {
	for _, tt := range []struct {
		name, json string
		want       []byte   // exact, when parts is nil
		parts      []string // MIME parts, for lists
	}{
		{"string", `"#cloud-config\nfoo: 1\n"`, []byte("#cloud-config\nfoo: 1\n"), nil},
		{"object", `{"cloud-init": "#!/bin/sh\necho hi\n", "other": 1}`, []byte("#!/bin/sh\necho hi\n"), nil},
		{"object without cloud-init", `{"nova": {"x": 1}}`, nil, nil},
		{"null cloud-init", `{"cloud-init": null}`, nil, nil},
		{"empty object", `{}`, nil, nil},
		{"null", `null`, nil, nil},
		{"empty string", `""`, nil, nil},
		{"false", `false`, nil, nil},
		{"zero", `0`, nil, nil},
		{"empty list", `[]`, nil, nil},
		{"list of empties", `["", ""]`, nil, nil},
		{"list", `["#cloud-config\na: 1\n", "", "#!/bin/sh\nno newline"]`, nil,
			[]string{"#cloud-config\na: 1\n", "#!/bin/sh\nno newline"}},
		{"object with list", `{"cloud-init": ["#cloud-config\n"]}`, nil, []string{"#cloud-config\n"}},
		{"list with a MIME part", `["MIME-Version: 1.0\nContent-Type: text/cloud-config\n\nruncmd: []\n", "#cloud-config\n"]`, nil,
			[]string{"runcmd: []\n", "#cloud-config\n"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ConvertVendorData("vendor_data.json", []byte(tt.json))
			if err != nil {
				t.Fatal(err)
			}
			if tt.parts != nil {
				if p := mimeParts(t, got); !reflect.DeepEqual(p, tt.parts) {
					t.Errorf("parts = %q, want %q", p, tt.parts)
				}
				again, _ := ConvertVendorData("vendor_data.json", []byte(tt.json))
				if !bytes.Equal(got, again) {
					t.Errorf("output differs between runs:\n%s\n%s", got, again)
				}
				return
			}
			if !bytes.Equal(got, tt.want) || (got == nil) != (tt.want == nil) {
				t.Errorf("ConvertVendorData = %q, want %q", got, tt.want)
			}
		})
	}
}

// TestMultipartBoundaryClash puts the boundary the first try would use into a
// part: the boundary must change.
func TestMultipartBoundaryClash(t *testing.T) {
	parts := []string{"#cloud-config\n", "x"}
	first := mimeMultipart(parts)
	_, params, err := mime.ParseMediaType(strings.TrimPrefix(strings.SplitN(string(first), "\n", 2)[0], "Content-Type: "))
	if err != nil {
		t.Fatal(err)
	}
	b := params["boundary"]
	parts[1] = "--" + b + "\n"
	second := mimeMultipart(parts)
	if bytes.Contains(second[:200], []byte(b+`"`)) {
		t.Errorf("boundary %q reused though a part contains it", b)
	}
	if got := mimeParts(t, second); !reflect.DeepEqual(got, parts) {
		t.Errorf("parts = %q, want %q", got, parts)
	}
}

func TestBadInput(t *testing.T) {
	for _, tt := range []struct {
		name string
		fsys fstest.MapFS
		want []string // all must be in the error
	}{
		{"malformed meta_data.json", drive("{\n  \"uuid\": \"i-1\",\n  \"hostname\" \"x\"\n}"),
			[]string{"openstack/latest/meta_data.json", "byte 33", "line 3:14"}},
		{"truncated meta_data.json", drive(`{"uuid": "i-1"`),
			[]string{"openstack/latest/meta_data.json", "end of JSON input"}},
		{"trailing data", drive(`{"uuid": "i-1"} {}`),
			[]string{"openstack/latest/meta_data.json", "after the top-level value"}},
		{"not an object", drive(`["uuid"]`),
			[]string{"openstack/latest/meta_data.json", "want an object, got a list"}},
		{"missing uuid", drive(`{"hostname": "x"}`),
			[]string{"openstack/latest/meta_data.json", `"uuid"`, "missing"}},
		{"uuid not a string", drive(`{"uuid": 42}`),
			[]string{"openstack/latest/meta_data.json", `"uuid"`, "want a string, got a number"}},
		{"null uuid", drive(`{"uuid": null}`),
			[]string{"openstack/latest/meta_data.json", `"uuid"`, "empty or null"}},
		{"hostname not a string", drive(`{"uuid": "i-1", "hostname": ["a"]}`),
			[]string{"meta_data.json", `"hostname"`, "want a string, got a list"}},
		{"name not a string", drive(`{"uuid": "i-1", "name": {}}`),
			[]string{"meta_data.json", `"name"`, "got an object"}},
		{"public_keys a number", drive(`{"uuid": "i-1", "public_keys": 7}`),
			[]string{"meta_data.json", `"public_keys"`, "got a number"}},
		{"public_keys list of numbers", drive(`{"uuid": "i-1", "public_keys": ["ssh-rsa A", 7]}`),
			[]string{"meta_data.json", `"public_keys"`, "element 1", "got a number"}},
		{"public_keys object of objects", drive(`{"uuid": "i-1", "public_keys": {"k": {}}}`),
			[]string{"meta_data.json", `"public_keys"`, `"k"`, "got an object"}},
		{"launch_index a string", drive(`{"uuid": "i-1", "launch_index": "0"}`),
			[]string{"meta_data.json", `"launch_index"`, "got a string"}},
		{"launch_index fractional", drive(`{"uuid": "i-1", "launch_index": 1.5}`),
			[]string{"meta_data.json", `"launch_index"`, "1.5"}},
		{"launch_index negative", drive(`{"uuid": "i-1", "launch_index": -1}`),
			[]string{"meta_data.json", `"launch_index"`, "non-negative"}},
		{"random_seed bad base64", drive(`{"uuid": "i-1", "random_seed": "not base64!"}`),
			[]string{"meta_data.json", `"random_seed"`, "base64"}},
		{"random_seed a number", drive(`{"uuid": "i-1", "random_seed": 1}`),
			[]string{"meta_data.json", `"random_seed"`, "got a number"}},
		{"admin_pass a bool", drive(`{"uuid": "i-1", "admin_pass": true}`),
			[]string{"meta_data.json", `"admin_pass"`, "got a boolean"}},
		{"meta a list", drive(`{"uuid": "i-1", "meta": []}`),
			[]string{"meta_data.json", `"meta"`, "want an object"}},
		{"files not a list", drive(`{"uuid": "i-1", "files": {"path": "/a"}}`),
			[]string{"meta_data.json", `"files"`, "want a list, got an object"}},
		{"files element not an object", drive(`{"uuid": "i-1", "files": ["/etc/a"]}`),
			[]string{"meta_data.json", `"files" element 0`, "want an object, got a string"}},
		{"files path not a string", drive(`{"uuid": "i-1", "files": [{"path": 1, "content_path": "/content/0000"}]}`),
			[]string{"meta_data.json", `"files" element 0`, `"path"`, "got a number"}},
		{"files content_path missing", drive(`{"uuid": "i-1", "files": [{"path": "/etc/a"}]}`),
			[]string{"meta_data.json", `"files" element 0`, "/etc/a", `"content_path"`, "missing"}},
		{"files content missing", drive(`{"uuid": "i-1", "files": [{"path": "/etc/a", "content_path": "/content/0009"}]}`),
			[]string{"meta_data.json", `"files" element 0`, "/etc/a", "openstack/content/0009", "not exist"}},
		{"files content_path escapes", drive(`{"uuid": "i-1", "files": [{"path": "/etc/a", "content_path": "/content/../../ec2/x"}]}`),
			[]string{"meta_data.json", `"files" element 0`, "/etc/a", `".." is not allowed`}},
		{"files content_path names nothing", drive(`{"uuid": "i-1", "files": [{"path": "/etc/a", "content_path": "//"}]}`),
			[]string{"meta_data.json", `"files" element 0`, "names no file"}},
		{"network_config without content_path", drive(`{"uuid": "i-1", "network_config": {"path": "x"}}`),
			[]string{"meta_data.json", `"network_config"`, "content_path"}},
		{"network_config content missing", drive(`{"uuid": "i-1", "network_config": {"content_path": "/content/0002"}}`),
			[]string{"meta_data.json", `"network_config"`, "openstack/content/0002"}},
		{"network_data.json malformed", drive(`{"uuid": "i-1"}`, "openstack/latest/network_data.json", `{"links": [}`),
			[]string{"openstack/latest/network_data.json", "byte 12", "line 1:12"}},
		{"network_data.json not an object", drive(`{"uuid": "i-1"}`, "openstack/latest/network_data.json", `"x"`),
			[]string{"openstack/latest/network_data.json", "want an object"}},
		{"vendor_data.json malformed", drive(`{"uuid": "i-1"}`, "openstack/latest/vendor_data.json", "{\n\"cloud-init\": 'x'}"),
			[]string{"openstack/latest/vendor_data.json", "line 2:15"}},
		{"vendor_data.json a number", drive(`{"uuid": "i-1"}`, "openstack/latest/vendor_data.json", `12`),
			[]string{"openstack/latest/vendor_data.json", "got a number"}},
		{"vendor_data2.json nested object", drive(`{"uuid": "i-1"}`, "openstack/latest/vendor_data2.json", `{"cloud-init": {"cloud-init": "x"}}`),
			[]string{"openstack/latest/vendor_data2.json", `"cloud-init"`, "cannot be an object"}},
		{"vendor_data.json list of objects", drive(`{"uuid": "i-1"}`, "openstack/latest/vendor_data.json", `{"cloud-init": ["a", {}]}`),
			[]string{"openstack/latest/vendor_data.json", `"cloud-init"`, "element 1", "got an object"}},
		{"ec2 meta-data malformed", drive(`{"uuid": "i-1"}`, "ec2/latest/meta-data.json", `{`),
			[]string{"ec2/latest/meta-data.json", "end of JSON input"}},
		{"user_data a directory", drive(`{"uuid": "i-1"}`, "openstack/latest/user_data/x", `x`),
			[]string{"openstack/latest/user_data", "is a directory"}},
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

// bigFS serves files of a stated size without holding them in memory.
type bigFS struct {
	fstest.MapFS
	name    string
	size    int64 // what Stat says
	content int64 // how much Read serves
	read    *bool
}

func (b bigFS) Open(name string) (fs.File, error) {
	if name == b.name {
		return &bigFile{b: b}, nil
	}
	return b.MapFS.Open(name)
}

type bigFile struct {
	b   bigFS
	off int64
}

func (f *bigFile) Stat() (fs.FileInfo, error) { return bigInfo(f.b), nil }
func (f *bigFile) Close() error               { return nil }
func (f *bigFile) Read(p []byte) (int, error) {
	*f.b.read = true
	if f.off >= f.b.content {
		return 0, io.EOF
	}
	n := int64(len(p))
	if n > f.b.content-f.off {
		n = f.b.content - f.off
	}
	clear(p[:n])
	f.off += n
	return int(n), nil
}

type bigInfo bigFS

func (i bigInfo) Name() string       { return i.name }
func (i bigInfo) Size() int64        { return i.size }
func (i bigInfo) Mode() fs.FileMode  { return 0o444 }
func (i bigInfo) ModTime() time.Time { return time.Time{} }
func (i bigInfo) IsDir() bool        { return false }
func (i bigInfo) Sys() any           { return nil }

func TestSizeLimit(t *testing.T) {
	const limit = datasource.MaxFileSize
	for _, tt := range []struct {
		name          string
		file          string
		size, content int64
		wantRead      bool // whether the reader got to read any data
		wantErr       string
	}{
		{"user_data stated too big", "openstack/latest/user_data", limit + 1, limit + 1, false, "over the 16777216 byte limit"},
		{"user_data lies about its size", "openstack/latest/user_data", 10, limit + 100, true, "over the 16777216 byte limit"},
		{"vendor_data.json too big", "openstack/latest/vendor_data.json", 1 << 40, 0, false, "openstack/latest/vendor_data.json"},
		{"user_data at the limit", "openstack/latest/user_data", limit, limit, true, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			read := false
			fsys := bigFS{MapFS: drive(`{"uuid": "i-1"}`), name: tt.file, size: tt.size, content: tt.content, read: &read}
			d, err := Read(fsys)
			if tt.wantErr == "" {
				if err != nil {
					t.Fatal(err)
				}
				if int64(len(d.UserData)) != tt.content {
					t.Errorf("len(UserData) = %d, want %d", len(d.UserData), tt.content)
				}
			} else if err == nil || !strings.Contains(err.Error(), tt.wantErr) || !strings.Contains(err.Error(), tt.file) {
				t.Errorf("Read = %v, want an error naming %s and containing %q", err, tt.file, tt.wantErr)
			}
			if read != tt.wantRead {
				t.Errorf("file was read: %v, want %v", read, tt.wantRead)
			}
		})
	}
}
