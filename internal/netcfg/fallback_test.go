package netcfg

import (
	"strings"
	"testing"
)

func TestFallback(t *testing.T) {
	dhcp := func(name, mac string) *Config {
		return &Config{Version: 2, Interfaces: []Interface{{Name: name, Kind: Physical, MAC: mac, Subnets: []Subnet{{Type: DHCP4}}}}}
	}
	for _, tt := range []struct {
		name string
		nics []NIC
		want *Config
	}{
		{"natural order", []NIC{{Name: "ens10", MAC: "52:54:00:00:00:10"}, {Name: "ens9", MAC: "52:54:00:00:00:09"}, {Name: "ens11", MAC: "52:54:00:00:00:11"}},
			dhcp("ens9", "52:54:00:00:00:09")},
		{"eth0 first", []NIC{{Name: "eth1", MAC: "52:54:00:00:00:01"}, {Name: "eth0", MAC: "52:54:00:00:00:00"}, {Name: "abc0", MAC: "52:54:00:00:00:0a"}},
			dhcp("eth0", "52:54:00:00:00:00")},
		{"carrier first", []NIC{{Name: "eth0", MAC: "52:54:00:00:00:00"}, {Name: "eth10", MAC: "52:54:00:00:00:10", Carrier: true}, {Name: "eth2", MAC: "52:54:00:00:00:02", Carrier: true}},
			dhcp("eth2", "52:54:00:00:00:02")},
		{"eth0 first among carriers", []NIC{{Name: "eth1", MAC: "52:54:00:00:00:01", Carrier: true}, {Name: "eth0", MAC: "52:54:00:00:00:00", Carrier: true}},
			dhcp("eth0", "52:54:00:00:00:00")},
		{"skips", []NIC{
			{Name: "lo", MAC: "00:00:00:00:00:00", Loopback: true, Carrier: true},
			{Name: "veth0", MAC: "52:54:00:00:00:01", Carrier: true},
			{Name: "br0", MAC: "52:54:00:00:00:02", Bridge: true, Carrier: true},
			{Name: "bond0", MAC: "52:54:00:00:00:03", Bond: true, Carrier: true},
			{Name: "dummy0", MAC: "52:54:00:00:00:04", Virtual: true, Carrier: true},
			{Name: "eth5", MAC: "", Carrier: true},
			{Name: "eth9", MAC: "52:54:00:00:00:0A", Driver: "virtio_net"},
		}, dhcp("eth9", "52:54:00:00:00:0a")},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Fallback(tt.nics)
			if err != nil {
				t.Fatal(err)
			}
			checkConfig(t, got, tt.want)
		})
	}
	if c, err := Fallback([]NIC{{Name: "lo", Loopback: true, MAC: "00:00:00:00:00:00"}}); err == nil {
		t.Errorf("Fallback(lo only) = %+v, want an error", c)
	}
	if _, err := Fallback(nil); err == nil {
		t.Error("Fallback(nil): no error")
	}
}

func TestNaturalLess(t *testing.T) {
	sorted := []string{"ens0", "ens3", "ens8", "ens10", "ens12", "eth0", "eth2", "eth10", "eth10a"}
	for i := range sorted {
		for j := range sorted {
			if got, want := naturalLess(sorted[i], sorted[j]), i < j; got != want {
				t.Errorf("naturalLess(%q, %q) = %v, want %v", sorted[i], sorted[j], got, want)
			}
		}
	}
}

func TestFallbackOrder(t *testing.T) {
	nics := []NIC{
		{Name: "eth10", MAC: "52:54:00:00:00:0a"},
		{Name: "lo", MAC: "00:00:00:00:00:00", Loopback: true},
		{Name: "eth2", MAC: "52:54:00:00:00:02"},
		{Name: "ens3", MAC: "52:54:00:00:00:03", Carrier: true},
		{Name: "eth0", MAC: "52:54:00:00:00:00"},
		{Name: "br0", MAC: "52:54:00:00:00:0b", Bridge: true},
		{Name: "veth1", MAC: "52:54:00:00:00:0c"},
		{Name: "eth3", MAC: "not-a-mac"},
	}
	var got []string
	for _, n := range FallbackOrder(nics) {
		got = append(got, n.Name)
	}
	want := []string{"ens3", "eth0", "eth2", "eth10"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("FallbackOrder = %v, want %v", got, want)
	}
	if len(FallbackOrder(nil)) != 0 {
		t.Errorf("FallbackOrder(nil) not empty")
	}
}
