package nocloud

import (
	"encoding/json"
	"os"
	"strings"
	"testing"
	"testing/fstest"
)

func FuzzNoCloudMetaData(f *testing.F) {
	b, err := os.ReadFile("testdata/cidata/meta-data")
	if err != nil {
		f.Fatal(err)
	}
	f.Add(b)
	for _, s := range []string{
		"instance-id: iid-local01\nlocal-hostname: cloudimg\n",
		"instance-id: i-87018aed\nlocal-hostname: ubuntu\npublic-keys:\n  default: ssh-rsa AAAA default\n",
		"{\"instance-id\": \"nocloud-\\/1\", \"dsmode\": \"local\"}",
		"instance-id: 0x1F\nhostname: yes\ncloud-name: Lab\n",
		"instance-id: i-1\nnetwork-interfaces: |\n  iface eth0 inet static\n    address 10.0.0.2/24\n",
		"a: &a [*a]\ninstance-id: i\n",
		"x: &x {a: 1}\n<<: *x\ninstance-id: i\n",
		"? [a]\n: b\ninstance-id: i\n",
		"instance-id: !!binary aGk=\nt: 2002-12-14\nn: .nan\n",
		"--- |\n  text\n",
		"- a\n- b\n",
		"",
		"\t",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		fsys := fstest.MapFS{
			"meta-data":      &fstest.MapFile{Data: b},
			"network-config": &fstest.MapFile{Data: b},
		}
		d, err := Read(fsys)
		if err != nil {
			if !strings.Contains(err.Error(), "meta-data") && !strings.Contains(err.Error(), "network-config") {
				t.Errorf("error %q names no file", err)
			}
			return
		}
		if strings.TrimSpace(d.InstanceID) == "" || d.Datasource != "nocloud" {
			t.Errorf("Read = %+v: no instance id or datasource", d)
		}
		if _, err := json.Marshal(d.Meta); err != nil {
			t.Errorf("Meta does not marshal to JSON: %v", err)
		}
		for _, k := range d.PublicKeys {
			if k == "" || strings.Contains(k, "\n") {
				t.Errorf("public key %q is empty or has a newline", k)
			}
		}
	})
}

func FuzzParseCmdline(f *testing.F) {
	for _, s := range []string{
		"nocloud",
		"nocloud-net",
		"nocloud;s=file:///var/lib/cloud/seed/nocloud/",
		"nocloud;s=/seed/;i=iid-abc;h=host.example",
		"nocloud-net;s=http://192.168.1.1:8000/;h=vm",
		"nocloud;seedfrom=file://localhost/x%20y/;local-hostname=h",
		"\"nocloud;h=x\"",
		"nocloud;s",
		"nocloud;;;=;",
		"configdrive",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) {
		c, ok, err := ParseCmdline(v)
		if !ok {
			if err != nil || c != (Cmdline{}) {
				t.Errorf("not nocloud but got %+v, %v", c, err)
			}
			return
		}
		if !strings.Contains(v, "nocloud") {
			t.Errorf("%q accepted as nocloud", v)
		}
		if err != nil {
			return
		}
		for _, s := range []string{c.Seed, c.InstanceID, c.Hostname} {
			if strings.Contains(s, ";") {
				t.Errorf("value %q holds a separator", s)
			}
		}
		if p, err := c.SeedPath(); err == nil && !strings.HasPrefix(p, "/") {
			t.Errorf("SeedPath = %q, not absolute", p)
		}
	})
}
