package cloudstack

import (
	"strings"
	"testing"
	"testing/fstest"

	"github.com/earlyinit/earlyinit/internal/datasource"
	"github.com/earlyinit/earlyinit/internal/datasource/configdrive"
	"github.com/earlyinit/earlyinit/internal/instance"
	"github.com/earlyinit/earlyinit/internal/netcfg"
)

// driveTree is the recorded config drive, as CloudStack's
// ConfigDriveBuilder lays it out.
const driveTree = "testdata/configdrive"

// TestReadDrive: the cloudstack/ tree of a CloudStack config drive: the
// instance id of the metadata service (instance-id.txt), host name, zone,
// key, user-data, the password (sensitive only) and the NIC of
// network_data.json.
func TestReadDrive(t *testing.T) {
	d, err := readFS(datasource.DriveFS(driveTree, 0))
	if err != nil {
		t.Fatal(err)
	}
	if d.InstanceID != "8b0d6b1a-4d8c-4f33-a1d2-3c6e5f7a9b01" || d.LocalHostname != "web-01" || d.AvailabilityZone != "zone-ams1" {
		t.Errorf("instance %q, hostname %q, zone %q", d.InstanceID, d.LocalHostname, d.AvailabilityZone)
	}
	if len(d.PublicKeys) != 1 || d.PublicKeys[0] != "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAICsDrive cs@key" {
		t.Errorf("keys %q", d.PublicKeys)
	}
	if string(d.UserData) != "#cloud-config\nruncmd:\n  - [touch, /root/cs-drive]\n" {
		t.Errorf("user-data %q", d.UserData)
	}
	if d.AdminPass != "Xk9mPq2w" {
		t.Errorf("the password was not read")
	}
	if d.Meta["service-offering"] != "Small Instance" || d.Meta["vm-id"] != d.InstanceID {
		t.Errorf("meta-data %v", d.Meta)
	}
	if d.Datasource != "cloudstack" || d.CloudName != "cloudstack" {
		t.Errorf("datasource %q, cloud %q", d.Datasource, d.CloudName)
	}
	if d.NetworkFormat != instance.NetworkDataJSON {
		t.Fatalf("network format %q", d.NetworkFormat)
	}
	c, err := netcfg.Parse(string(d.NetworkFormat), d.Network, map[string]string{"02:00:4c:4f:00:17": "ens3"})
	if err != nil || len(c.Interfaces) != 1 {
		t.Fatalf("network_data.json: %v %+v", err, c)
	}
}

// TestReadDriveVariants: vm-id stands in for a missing instance-id;
// "saved_password" or an empty file is no password; no password file, no
// network_data.json are fine; no id at all, bad network_data.json and a
// tree without metadata are errors; the password is never in one.
func TestReadDriveVariants(t *testing.T) {
	base := func() fstest.MapFS {
		return fstest.MapFS{
			"cloudstack/metadata/instance-id.txt":    {Data: []byte("i-2-34-VM\n")},
			"cloudstack/metadata/local-hostname.txt": {Data: []byte("vm34")},
		}
	}
	for _, tc := range []struct {
		name   string
		change func(fstest.MapFS)
		iid    string
		pw     string
		err    string
	}{
		{name: "minimal", iid: "i-2-34-VM"},
		{name: "vm-id only", change: func(m fstest.MapFS) {
			delete(m, "cloudstack/metadata/instance-id.txt")
			m["cloudstack/metadata/vm-id.txt"] = &fstest.MapFile{Data: []byte("uuid-34")}
		}, iid: "uuid-34"},
		{name: "saved_password", change: func(m fstest.MapFS) {
			m["cloudstack/password/vm_password.txt"] = &fstest.MapFile{Data: []byte("saved_password\n")}
		}, iid: "i-2-34-VM"},
		{name: "empty password", change: func(m fstest.MapFS) {
			m["cloudstack/password/vm_password.txt"] = &fstest.MapFile{Data: nil}
		}, iid: "i-2-34-VM"},
		{name: "password", change: func(m fstest.MapFS) {
			m["cloudstack/password/vm_password.txt"] = &fstest.MapFile{Data: []byte("s3cr3t-pw\n")}
		}, iid: "i-2-34-VM", pw: "s3cr3t-pw"},
		{name: "no id", change: func(m fstest.MapFS) {
			delete(m, "cloudstack/metadata/instance-id.txt")
		}, err: "instance-id: missing"},
		{name: "network_data.json not an object", change: func(m fstest.MapFS) {
			m["openstack/latest/network_data.json"] = &fstest.MapFile{Data: []byte("[1]")}
			m["cloudstack/password/vm_password.txt"] = &fstest.MapFile{Data: []byte("s3cr3t-pw\n")}
		}, err: "want an object"},
		{name: "no metadata directory", change: func(m fstest.MapFS) {
			delete(m, "cloudstack/metadata/instance-id.txt")
			delete(m, "cloudstack/metadata/local-hostname.txt")
			m["cloudstack/userdata/user_data.txt"] = &fstest.MapFile{Data: []byte("#cloud-config\n")}
		}, err: "not a CloudStack config drive"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := base()
			if tc.change != nil {
				tc.change(m)
			}
			d, err := readFS(m)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) || strings.Contains(err.Error(), "s3cr3t") {
					t.Fatalf("err = %v, want one with %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if d.InstanceID != tc.iid || d.AdminPass != tc.pw || d.Network != nil {
				t.Errorf("instance %q, password set %v (want %v), network %q", d.InstanceID, d.AdminPass != "", tc.pw != "", d.Network)
			}
		})
	}
}

// TestReadFSSeedAndOther: cloud-init's seed directory is still read as
// NoCloud's layout; a config-2 drive without cloudstack/ (an OpenStack one
// configdrive refused) is not a CloudStack one.
func TestReadFSSeedAndOther(t *testing.T) {
	d, err := readFS(fstest.MapFS{"meta-data": {Data: []byte("instance-id: cs-seed\nlocal-hostname: seeded\n")}})
	if err != nil || d.InstanceID != "cs-seed" || d.Datasource != "cloudstack" {
		t.Errorf("seed: %v %+v", err, d)
	}
	if _, err := readFS(fstest.MapFS{"openstack/latest/meta_data.json": {Data: []byte("{}")}}); err == nil {
		t.Errorf("an OpenStack drive read as CloudStack's")
	}
	if !Source.Drive("iso9660", "config-2") || !Source.Drive("vfat", "CONFIG-2") || Source.Drive("iso9660", "cidata") {
		t.Errorf("Source.Drive: config-2 drives are CloudStack's too")
	}
}

// TestDriveReadByConfigDrive: the same drive read by configdrive, which
// comes first in the registry and reads it as cloud-init 22.4 does: its
// openstack/ tree, the same instance id (meta_data.json's uuid is
// vm-id), host name, key and network, no password. The difference is
// what the reference's platform table says.
func TestDriveReadByConfigDrive(t *testing.T) {
	cs, err := ReadDrive(datasource.DriveFS(driveTree, 0))
	if err != nil {
		t.Fatal(err)
	}
	cd, err := configdrive.Read(datasource.DriveFS(driveTree, 0))
	if err != nil {
		t.Fatal(err)
	}
	if cd.InstanceID != cs.InstanceID || cd.LocalHostname != cs.LocalHostname || strings.Join(cd.PublicKeys, "\n") != strings.Join(cs.PublicKeys, "\n") ||
		string(cd.UserData) != string(cs.UserData) || string(cd.Network) != string(cs.Network) {
		t.Errorf("configdrive: %q %q %q; cloudstack: %q %q %q", cd.InstanceID, cd.LocalHostname, cd.PublicKeys, cs.InstanceID, cs.LocalHostname, cs.PublicKeys)
	}
	if cd.AdminPass != "" {
		t.Errorf("configdrive read a password from CloudStack's drive")
	}
}
