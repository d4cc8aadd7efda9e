package dmi

import (
	"testing"
	"testing/fstest"
)

func TestRead(t *testing.T) {
	fsys := fstest.MapFS{
		"sys_vendor":        {Data: []byte("QEMU\n")},
		"product_name":      {Data: []byte("Standard PC (i440FX + PIIX, 1996)\n")},
		"product_serial":    {Data: []byte("ds=nocloud;s=http://10.0.2.2/\n")},
		"chassis_asset_tag": {Data: []byte("  OpenTelekomCloud \n")},
	}
	i, err := Read(fsys)
	if err != nil {
		t.Fatal(err)
	}
	want := Info{SysVendor: "QEMU", ProductName: "Standard PC (i440FX + PIIX, 1996)", ProductSerial: "ds=nocloud;s=http://10.0.2.2/", ChassisAssetTag: "OpenTelekomCloud"}
	if i != want {
		t.Errorf("Read = %+v, want %+v", i, want)
	}
	if s := i.String(); s != `sys_vendor="QEMU" product_name="Standard PC (i440FX + PIIX, 1996)" chassis_asset_tag="OpenTelekomCloud"` {
		t.Errorf("String = %s", s)
	}
	if s := (Info{}).String(); s != "no DMI strings" {
		t.Errorf("empty String = %s", s)
	}
}
