package netcfg

import "testing"

// TestV1PhysicalByMAC: a physical entry with a MAC and no name is the
// live NIC with that MAC, under its own name (Vultr, UpCloud, Hetzner,
// DigitalOcean); with no such NIC it is an error naming the MAC.
func TestV1PhysicalByMAC(t *testing.T) {
	in := []byte("version: 1\nconfig:\n  - type: physical\n    mac_address: 52:54:00:12:34:56\n    subnets: [{type: dhcp}]\n")
	c, err := Parse("yaml", in, map[string]string{"52:54:00:12:34:56": "ens3"})
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Interfaces) != 1 || c.Interfaces[0].Name != "ens3" || !c.Interfaces[0].NoRename {
		t.Errorf("interfaces = %+v", c.Interfaces)
	}
	if _, err := Parse("yaml", in, nil); err == nil {
		t.Errorf("no NIC with the MAC: no error")
	}
}
