package ovf

import (
	"strings"
	"testing"
	"testing/fstest"

	"github.com/earlyinit/earlyinit/internal/instance"
	"github.com/earlyinit/earlyinit/internal/netcfg"
)

// TestReadFSISO: the OVF environment ISO (or seed directory) as vSphere
// writes it: instance id, host name, key, user-data, network by MAC, and
// the password property as vendor-data's `password`, never elsewhere.
func TestReadFSISO(t *testing.T) {
	doc := mustRead(t, "testdata/ovfenv/vsphere-guestinfo.xml")
	for _, name := range EnvFiles {
		d, err := ReadFS(fstest.MapFS{name: {Data: doc}})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if d.InstanceID != "id-ovf-1042" || d.LocalHostname != "ovfguest" || d.Datasource != "ovf" || d.DatasourceClass != "OVF" {
			t.Errorf("%s: instance %q, hostname %q, %s/%s", name, d.InstanceID, d.LocalHostname, d.Datasource, d.DatasourceClass)
		}
		if len(d.PublicKeys) != 1 || d.PublicKeys[0] != "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOVF ovf@key" {
			t.Errorf("keys %q", d.PublicKeys)
		}
		if string(d.UserData) != "#cloud-config\nruncmd:\n  - [touch, /root/ovf-ran]\n" {
			t.Errorf("user-data %q", d.UserData)
		}
		if d.NetworkFormat != instance.NetworkYAML {
			t.Fatalf("network format %q", d.NetworkFormat)
		}
		c, err := netcfg.Parse("yaml", d.Network, map[string]string{"00:50:56:aa:bb:01": "eth0"})
		if err != nil || len(c.Interfaces) != 1 || c.Interfaces[0].Name != "ens192" {
			t.Errorf("network: %v %+v", err, c)
		}
		if vd := vendorCfg(t, d.VendorData); vd["password"] != "Pa55word!" || len(vd) != 1 {
			t.Errorf("vendor-data keys %v", keysOf(vd))
		}
		if strings.Contains(mustMarshal(t, d.Meta), "Pa55word") {
			t.Errorf("the password is in the metadata")
		}
	}
	if _, err := ReadFS(fstest.MapFS{"other.xml": {Data: doc}}); err == nil {
		t.Errorf("a drive without ovf-env.xml read")
	}
}

// TestFromEnvDefaults: no instance-id is cloud-init's iid-dsovf; a
// seedfrom is refused (its seed is not read); no network-config, no
// password, no vendor-data.
func TestFromEnvDefaults(t *testing.T) {
	e, err := ReadEnv(mustRead(t, "testdata/ovfenv/raw-userdata.xml"), true)
	if err != nil {
		t.Fatal(err)
	}
	d, err := fromEnv(e, "iso")
	if err != nil {
		t.Fatal(err)
	}
	if d.InstanceID != DefaultInstanceID || d.LocalHostname != "second-name" || d.Network != nil || d.VendorData != nil {
		t.Errorf("instance %q, hostname %q, network %q, vendor-data %q", d.InstanceID, d.LocalHostname, d.Network, d.VendorData)
	}
	if string(d.UserData) != "#!/bin/sh\necho hi > /run/ovf\n" {
		t.Errorf("user-data %q", d.UserData)
	}
	e.Meta["seedfrom"] = "/var/lib/seed/"
	if _, err := fromEnv(e, "iso"); err == nil || strings.Contains(err.Error(), "/var/lib/seed") {
		t.Errorf("seedfrom: err = %v", err)
	}
}
