package h3c

import (
	"reflect"
	"strings"
	"testing"

	"github.com/earlyinit/earlyinit/internal/datasource"
	"github.com/earlyinit/earlyinit/internal/datasource/configdrive"
	"github.com/earlyinit/earlyinit/internal/instance"
	"github.com/earlyinit/earlyinit/internal/netcfg"
)

// casDrive is a professional-mode disk in OpenStack's config-2 layout,
// with admin_pass. The reference notes (../shared/seeds/003) say of CAS's
// modes: "标准模式：云主机利用虚拟化平台提供的接口进行初始化操作" (standard
// mode: initialised through the virtualisation platform's interface) and
// "专业模式：云主机利用开机运行的cloud-init工具进行初始化 ... 包括VFAT与ISO两
// 种格式，选择VFAT格式时云主机将挂载一块64MB磁盘 ... 云主机初始化模式为“专业模
// 式”时可进行此项配置" (professional mode: initialised by cloud-init; the
// VFAT (a 64 MB disk) or ISO setting exists only in professional mode).
const casDrive = "testdata/professional-mode"

// TestProfessionalModeDrive: the drive's labels are configdrive's, and its
// host name, password and network are read.
func TestProfessionalModeDrive(t *testing.T) {
	for _, d := range []struct{ fstype, label string }{{"vfat", "CONFIG-2"}, {"vfat", "config-2"}, {"iso9660", "config-2"}} {
		if !configdrive.Source.Drive(d.fstype, d.label) {
			t.Errorf("a %s drive labelled %s is not read", d.fstype, d.label)
		}
	}
	d, err := configdrive.Source.ReadFS(datasource.DriveFS(casDrive, datasource.MaxDriveTotal))
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
