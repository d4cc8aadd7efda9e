package ec2

import (
	"testing"

	"github.com/earlyinit/earlyinit/internal/dmi"
)

// TestPlatform: ds-identify's dscheck_Ec2 with strict_id, against the DMI
// strings of cloud-init's tests/unittests/test_ds_identify.py
// (VALID_CFG["Ec2-*"]) and of a Nitro instance.
func TestPlatform(t *testing.T) {
	for _, tt := range []struct {
		name string
		info dmi.Info
		want bool
	}{
		{"AWS HVM (Ec2-hvm)", dmi.Info{ProductSerial: "ec23aef5-54be-4843-8d24-8c819f88453e", ProductUUID: "EC23AEF5-54BE-4843-8D24-8C819F88453E"}, true},
		{"AWS HVM, uuid only", dmi.Info{ProductUUID: "EC23AEF5-54BE-4843-8D24-8C819F88453E"}, true},
		{"AWS HVM, serial only", dmi.Info{ProductSerial: "ec23aef5-54be-4843-8d24-8c819f88453e"}, true},
		{"AWS, swapped byte order (Ec2-hvm-swap-endianness)", dmi.Info{ProductUUID: "AB232AEC-54BE-4843-8D24-8C819F88453E"}, true},
		{"AWS Nitro", dmi.Info{SysVendor: "Amazon EC2", ProductName: "m5.large", ProductUUID: "ec2e1916-9099-7caf-fd21-012345abcdef"}, true},
		{"AWS Nitro, vendor only", dmi.Info{SysVendor: "Amazon EC2", ProductName: "t3.micro"}, true},
		{"Brightbox (Ec2-brightbox)", dmi.Info{ProductSerial: "srv-otuxg.gb1.brightbox.com"}, true},
		{"not Brightbox (Ec2-brightbox-negative)", dmi.Info{ProductSerial: "tricky-host.bobrightbox.com"}, false},
		{"e24cloud (Ec2-E24Cloud)", dmi.Info{SysVendor: "e24cloud"}, true},
		{"not e24cloud (Ec2-E24Cloud-negative)", dmi.Info{SysVendor: "e24cloudyday"}, false},
		{"Tilaa (Ec2-Tilaa)", dmi.Info{SysVendor: "Tilaa"}, true},
		{"a uuid with ec2 elsewhere", dmi.Info{ProductUUID: "45e12aed-dcd1-b213-94ed-0ec2345abcde"}, false},
		{"plain QEMU", dmi.Info{SysVendor: "QEMU", ProductName: "Standard PC (i440FX + PIIX, 1996)", ProductUUID: "5b0e5e5c-1111-4a4a-8b8b-123456789abc"}, false},
		{"nova", dmi.Info{SysVendor: "OpenStack Foundation", ProductName: "OpenStack Nova"}, false},
		{"no DMI", dmi.Info{}, false},
	} {
		if got := Platform(tt.info); got != tt.want {
			t.Errorf("%s: Platform(%+v) = %v, want %v", tt.name, tt.info, got, tt.want)
		}
	}
	if Source.Platform == nil {
		t.Error("Source.Platform is not set")
	}
}
