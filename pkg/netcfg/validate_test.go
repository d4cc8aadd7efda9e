package netcfg

import (
	"os"
	"reflect"
	"testing"
)

func TestParseENIFile(t *testing.T) {
	data, err := os.ReadFile("testdata/interfaces")
	if err != nil {
		t.Fatal(err)
	}
	got, err := Parse("eni", data, nil)
	if err != nil {
		t.Fatal(err)
	}
	checkConfig(t, got, &Config{Version: 1, Interfaces: []Interface{
		{Name: "eth0", Kind: Physical, MAC: "fa:16:3e:9d:10:29", Subnets: []Subnet{{Type: Static, Address: pfx("10.0.0.5/24"),
			Gateway: ip("10.0.0.1"), DNS: DNS{Nameservers: ips("8.8.8.8", "8.8.4.4"), Search: []string{"example.org"}}}}},
		{Name: "eth1", Kind: Physical, Subnets: []Subnet{{Type: Static, Address: pfx("2001:db8::5/64"), Gateway: ip("2001:db8::1")}}},
	}})
	if err := got.Validate(); err != nil {
		t.Error(err)
	}
}

func TestParseUnknownFormat(t *testing.T) {
	checkErr(t, func() error { _, err := Parse("ec2", []byte("{}"), nil); return err }(), `unknown format "ec2"`)
}

func TestValidate(t *testing.T) {
	phy := func(name, mac string) Interface { return Interface{Name: name, Kind: Physical, MAC: mac} }
	for _, tt := range []struct {
		name   string
		ifaces []Interface
		want   []string // nil: valid
	}{
		{"valid", []Interface{phy("eth0", "52:54:00:00:00:01"), phy("eth1", "52:54:00:00:00:02"),
			{Name: "bond0", Kind: Bond, Bond: &BondConfig{Members: []string{"eth0", "eth1"}}},
			{Name: "bond0.5", Kind: VLAN, VLAN: &VLANConfig{ID: 5, Link: "bond0"}},
			{Name: "br0", Kind: Bridge, Bridge: &BridgeConfig{Members: []string{"bond0.5"}}},
			{Name: "br1", Kind: Bridge, Bridge: &BridgeConfig{}}}, nil},
		{"unnamed", []Interface{phy("", "52:54:00:00:00:01")}, []string{`interfaces[0] (physical ""): no name (MAC "52:54:00:00:00:01")`}},
		{"duplicate name", []Interface{phy("eth0", ""), phy("eth0", "")}, []string{`interfaces[1] (physical "eth0"): name already used by interfaces[0]`}},
		{"duplicate mac", []Interface{phy("eth0", "52:54:00:00:00:01"), phy("eth1", "52:54:00:00:00:01")},
			[]string{`interfaces[1] (physical "eth1"): MAC 52:54:00:00:00:01 already used by interfaces[0] ("eth0")`}},
		{"vlan without parent", []Interface{{Name: "v", Kind: VLAN, VLAN: &VLANConfig{ID: 3}}}, []string{`interfaces[0] (vlan "v"): vlan without a parent link`}},
		{"vlan unknown parent", []Interface{{Name: "v", Kind: VLAN, VLAN: &VLANConfig{ID: 3, Link: "eth9"}}}, []string{`vlan link "eth9": no such interface`}},
		{"vlan id", []Interface{phy("eth0", ""), {Name: "v", Kind: VLAN, VLAN: &VLANConfig{ID: 0, Link: "eth0"}}}, []string{`vlan id 0 out of range`}},
		{"bond without members", []Interface{{Name: "b", Kind: Bond, Bond: &BondConfig{}}}, []string{`interfaces[0] (bond "b"): bond without members`}},
		{"bond unknown member", []Interface{phy("eth0", ""), {Name: "b", Kind: Bond, Bond: &BondConfig{Members: []string{"eth0", "eth7"}}}},
			[]string{`interfaces[1] (bond "b"): bond member "eth7": no such interface`}},
		{"bond of itself", []Interface{{Name: "b", Kind: Bond, Bond: &BondConfig{Members: []string{"b"}}}}, []string{`bond member "b" is the interface itself`}},
		{"bridge unknown port", []Interface{{Name: "br", Kind: Bridge, Bridge: &BridgeConfig{Members: []string{"tap0"}}}}, []string{`bridge port "tap0": no such interface`}},
		{"kind mismatch", []Interface{{Name: "b", Kind: Bond}}, []string{`kind does not match`}},
		{"unknown kind", []Interface{{Name: "w", Kind: "wifi"}}, []string{`interfaces[0] (wifi "w"): unknown kind`}},
		{"static without address", []Interface{{Name: "e", Kind: Physical, Subnets: []Subnet{{Type: Static}}}}, []string{`subnets[0]: static without an address`}},
		{"several problems", []Interface{phy("", ""), {Name: "b", Kind: Bond, Bond: &BondConfig{}}}, []string{"no name", "bond without members"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			err := (&Config{Interfaces: tt.ifaces}).Validate()
			if tt.want == nil {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			checkErr(t, err, tt.want...)
		})
	}
	if err := (&Config{Disabled: true, Interfaces: []Interface{{}}}).Validate(); err != nil {
		t.Errorf("disabled config: %v", err)
	}
}

func TestRenameMap(t *testing.T) {
	c := &Config{Interfaces: []Interface{
		{Name: "eth0", Kind: Physical, MAC: "52:54:00:00:00:01"},
		{Name: "", Kind: Physical, MAC: "52:54:00:00:00:02"},
		{Name: "eth2", Kind: Physical},
		{Name: "id3", Kind: Physical, MAC: "52:54:00:00:00:03", NoRename: true},
		{Name: "bond0", Kind: Bond, MAC: "52:54:00:00:00:04", Bond: &BondConfig{Members: []string{"eth0"}}},
	}}
	want := map[string]string{"52:54:00:00:00:01": "eth0"}
	if got := c.RenameMap(); !reflect.DeepEqual(got, want) {
		t.Errorf("RenameMap = %v, want %v", got, want)
	}
}
