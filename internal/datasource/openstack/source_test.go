package openstack

import (
	"testing"

	"github.com/earlyinit/earlyinit/internal/dmi"
)

// TestPlatform: ds-identify's dscheck_OpenStack, against the DMI strings of
// cloud-init's tests/unittests/test_ds_identify.py (VALID_CFG["OpenStack*"])
// and of real nova guests.
func TestPlatform(t *testing.T) {
	for _, tt := range []struct {
		name string
		info dmi.Info
		want bool
	}{
		{"nova (OpenStack)", dmi.Info{SysVendor: "OpenStack Foundation", ProductName: "OpenStack Nova"}, true},
		{"RDO nova", dmi.Info{SysVendor: "Red Hat", ProductName: "OpenStack Compute"}, true},
		{"Open Telekom Cloud on Xen (OpenStack-OpenTelekom)", dmi.Info{ChassisAssetTag: "OpenTelekomCloud"}, true},
		{"SAP Converged Cloud on VMware (OpenStack-SAPCCloud)", dmi.Info{SysVendor: "VMware, Inc.", ChassisAssetTag: "SAP CCloud VM"}, true},
		{"Huawei Cloud (OpenStack-HuaweiCloud)", dmi.Info{ChassisAssetTag: "HUAWEICLOUD"}, true},
		{"Samsung Cloud Platform", dmi.Info{ChassisAssetTag: "Samsung Cloud Platform"}, true},
		{"asset tag nova, vSphere (OpenStack-AssetTag-Nova)", dmi.Info{ChassisAssetTag: "OpenStack Nova"}, true},
		{"asset tag compute (OpenStack-AssetTag-Compute)", dmi.Info{ChassisAssetTag: "OpenStack Compute"}, true},
		{"plain QEMU", dmi.Info{SysVendor: "QEMU", ProductName: "Standard PC (i440FX + PIIX, 1996)", ProductVersion: "pc-i440fx-8.2"}, false},
		{"Proxmox VE (QEMU defaults)", dmi.Info{SysVendor: "QEMU", ProductName: "Standard PC (Q35 + ICH9, 2009)", ProductVersion: "pc-q35-9.2", ChassisVendor: "QEMU"}, false},
		{"a prefix is not the name", dmi.Info{ProductName: "OpenStack Nova Compute"}, false},
		{"case counts, as in ds-identify", dmi.Info{ChassisAssetTag: "huaweicloud"}, false},
		{"the vendor alone is not a rule", dmi.Info{SysVendor: "OpenTelekomCloud"}, false},
		{"AWS", dmi.Info{SysVendor: "Amazon EC2", ProductUUID: "ec23aef5-54be-4843-8d24-8c819f88453e"}, false},
		{"no DMI", dmi.Info{}, false},
	} {
		if got := Platform(tt.info); got != tt.want {
			t.Errorf("%s: Platform(%s) = %v, want %v", tt.name, tt.info, got, tt.want)
		}
	}
	if Source.Platform == nil {
		t.Error("Source.Platform is not set")
	}
}
