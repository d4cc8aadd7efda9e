package h3c

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/earlyinit/earlyinit/pkg/datasource"
	"github.com/earlyinit/earlyinit/pkg/datasource/configdrive"
	"github.com/earlyinit/earlyinit/pkg/instance"
	"github.com/earlyinit/earlyinit/pkg/netcfg"
)

// casDrive writes the disk standard mode is assumed to attach (see the
// package documentation) under a new directory.
func casDrive(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	files := map[string]string{
		"openstack/latest/meta_data.json": `{
  "uuid": "5f0a1c52-8b7e-4f0c-9d1a-3e2b7c6d4a10",
  "hostname": "cas-vm-01",
  "name": "cas-vm-01",
  "admin_pass": "Cas@Passw0rd",
  "public_keys": {"ops": "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIH ops@cas"},
  "launch_index": 0
}`,
		"openstack/latest/network_data.json": `{
  "links": [{"id": "tap0", "type": "phy", "ethernet_mac_address": "0c:da:41:1d:5e:01", "mtu": 1500}],
  "networks": [{"id": "net0", "type": "ipv4", "link": "tap0", "ip_address": "192.168.10.21", "netmask": "255.255.255.0",
    "routes": [{"network": "0.0.0.0", "netmask": "0.0.0.0", "gateway": "192.168.10.1"}]}],
  "services": [{"type": "dns", "address": "192.168.10.2"}]
}`,
	}
	for name, content := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// TestStandardModeDrive: the drive's labels are configdrive's, and its
// host name, password and network are read.
func TestStandardModeDrive(t *testing.T) {
	for _, d := range []struct{ fstype, label string }{{"vfat", "CONFIG-2"}, {"vfat", "config-2"}, {"iso9660", "config-2"}} {
		if !configdrive.Source.Drive(d.fstype, d.label) {
			t.Errorf("a %s drive labelled %s is not read", d.fstype, d.label)
		}
	}
	d, err := configdrive.Source.ReadFS(datasource.DriveFS(casDrive(t), datasource.MaxDriveTotal))
	if err != nil {
		t.Fatal(err)
	}
	if d.InstanceID != "5f0a1c52-8b7e-4f0c-9d1a-3e2b7c6d4a10" || d.LocalHostname != "cas-vm-01" || d.AdminPass != "Cas@Passw0rd" {
		t.Errorf("id %q, hostname %q, password set %v", d.InstanceID, d.LocalHostname, d.AdminPass != "")
	}
	if !reflect.DeepEqual(d.PublicKeys, []string{"ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIH ops@cas"}) {
		t.Errorf("keys %q", d.PublicKeys)
	}
	c, err := netcfg.Parse(string(d.NetworkFormat), d.Network, map[string]string{"0c:da:41:1d:5e:01": "eth0"})
	if err == nil {
		err = c.Validate()
	}
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Interfaces) != 1 || c.Interfaces[0].Name != "eth0" || c.Interfaces[0].Subnets[0].Address.String() != "192.168.10.21/24" {
		t.Errorf("network %+v", c.Interfaces)
	}

	// The password is in the sensitive instance data only.
	redacted, sensitive, err := instance.InstanceData(d, instance.SysInfo{})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(redacted), "Cas@Passw0rd") || !strings.Contains(string(sensitive), "Cas@Passw0rd") {
		t.Errorf("password in the redacted file %v, in the sensitive one %v", strings.Contains(string(redacted), "Cas@Passw0rd"), strings.Contains(string(sensitive), "Cas@Passw0rd"))
	}
}
