package configdrive

import (
	"bytes"
	"encoding/json"
	"os"
	"strings"
	"testing"
	"testing/fstest"
)

func FuzzMetaDataJSON(f *testing.F) {
	for _, p := range []string{
		"testdata/config-2/openstack/2018-08-27/meta_data.json",
		"testdata/config-2/openstack/2012-08-10/meta_data.json",
	} {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	for _, s := range []string{
		// Nova, Rocky and later, with devices and keys.
		`{"uuid": "d8e02d56-2648-49a3-bf97-6be8f1204f38", "availability_zone": "nova", "hostname": "test.novalocal",
		  "launch_index": 0, "meta": {"priority": "low", "role": "webserver"}, "devices": [{"type": "nic", "bus": "pci",
		  "address": "0000:00:02.0", "mac": "00:11:22:33:44:55", "tags": ["trusted"], "vf_trusted": true}],
		  "keys": [{"name": "k", "type": "ssh", "data": "ssh-rsa AAAA k"}], "public_keys": {"k": "ssh-rsa AAAA k\n"},
		  "name": "test", "project_id": "p"}`,
		// Grizzly, with injected files and a legacy interfaces file.
		`{"uuid": "b0fa911b-69d4-4476-bbe2-1c92bff6535c", "hostname": "sm-foo-test.novalocal", "name": "sm-foo-test",
		  "files": [{"content_path": "/content/0000", "path": "/etc/foo.cfg"}, {"content_path": "/content/0001", "path": "/etc/bar/bar.cfg"}],
		  "network_config": {"content_path": "/content/0002"}, "random_seed": "cmFuZG9tIHNlZWQ=", "admin_pass": "pw",
		  "public_keys": {"mykey": "ssh-rsa AAAAB3NzaC1yc2E mykey"}}`,
		`{"uuid": "i-1", "public_keys": ["a", "b"], "launch_index": 1e3}`,
		`{"uuid": "i-1", "public_keys": "a\nb\n", "files": [{"path": "/x", "content_path": "/content/../x"}]}`,
		`{"uuid": ""}`,
		`[]`,
		`{"uuid": "x", "uuid": 1}`,
		"{\"uuid\": \"\xff\xfe\"}",
		``,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		fsys := fstest.MapFS{
			"openstack/latest/meta_data.json": &fstest.MapFile{Data: b},
			"openstack/content/0000":          &fstest.MapFile{Data: []byte("zero\n")},
			"openstack/content/0001":          &fstest.MapFile{Data: []byte("one\n")},
			"openstack/content/0002":          &fstest.MapFile{Data: []byte("auto lo\n")},
		}
		d, err := Read(fsys)
		if err != nil {
			if !strings.Contains(err.Error(), "openstack/latest/meta_data.json") {
				t.Errorf("error %q does not name meta_data.json", err)
			}
			return
		}
		if !json.Valid(b) {
			t.Errorf("invalid JSON %q was accepted", b)
		}
		if strings.TrimSpace(d.InstanceID) == "" || d.Datasource != "configdrive" {
			t.Errorf("Read = %+v: no instance id or datasource", d)
		}
		if _, ok := d.Meta["random_seed"]; ok {
			t.Error("random_seed left in Meta")
		}
		if _, ok := d.Meta["admin_pass"]; ok {
			t.Error("admin_pass left in Meta")
		}
		for _, k := range d.PublicKeys {
			if k == "" || strings.Contains(k, "\n") {
				t.Errorf("public key %q is empty or has a newline", k)
			}
		}
		for _, fl := range d.Files {
			if !strings.HasPrefix(fl.Path, "/") {
				t.Errorf("file path %q is not absolute", fl.Path)
			}
		}
		if _, err := json.Marshal(d.Meta); err != nil {
			t.Errorf("Meta does not marshal back to JSON: %v", err)
		}
	})
}

func FuzzVendorData(f *testing.F) {
	for _, s := range []string{
		`{"cloud-init": "#cloud-config\npackage_upgrade: true\n", "vendor": {"k": "v"}}`,
		`{"static": {"foo": "bar"}, "cloud-init": ["#!/bin/sh\necho one\n", "#cloud-config\nruncmd: [ls]\n"]}`,
		`"#cloud-config\nfoo: bar\n"`,
		`["MIME-Version: 1.0\nContent-Type: multipart/mixed; boundary=\"b\"\n\n--b\nContent-Type: text/x-shellscript\n\n#!/bin/sh\n--b--\n", "x"]`,
		`{"cloud-init": {"cloud-init": "x"}}`,
		`{}`,
		`null`,
		`0.0`,
		`true`,
		`[1]`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		out, err := ConvertVendorData("vendor_data.json", b)
		if err != nil {
			if !strings.Contains(err.Error(), "vendor_data.json") {
				t.Errorf("error %q does not name the file", err)
			}
			return
		}
		if !json.Valid(b) {
			t.Errorf("invalid JSON %q was accepted", b)
		}
		var v any
		if json.Unmarshal(b, &v) != nil {
			return
		}
		if m, ok := v.(map[string]any); ok {
			v = m["cloud-init"]
		}
		switch v := v.(type) {
		case string:
			if !bytes.Equal(out, []byte(v)) {
				t.Errorf("string payload %q came out as %q", v, out)
			}
		case []any:
			if out != nil && !bytes.HasPrefix(out, []byte("Content-Type: multipart/mixed; boundary=")) {
				t.Errorf("list payload came out as %q", out)
			}
		default:
			if out != nil {
				t.Errorf("%T payload came out as %q", v, out)
			}
		}
	})
}
