package ec2

import (
	"bufio"
	"bytes"
	"encoding/json"
	"net/netip"
	"os"
	"os/exec"
	"reflect"
	"strings"
	"testing"

	"github.com/earlyinit/earlyinit/pkg/netcfg"
)

func macs(m map[string]any) map[string]any {
	return map[string]any{"interfaces": map[string]any{"macs": m}}
}

// networkCases are inputs for ConvertNetwork, with the live NICs.
var networkCases = []struct {
	name    string
	network map[string]any
	nics    map[string]string // mac -> name
}{
	{"aws two NICs", wantNetwork(), map[string]string{mac0: "ens5", mac1: "ens6"}},
	{"one NIC with IPv6", macs(map[string]any{
		mac0: map[string]any{"device-number": "0", "local-ipv4s": "10.0.0.5", "ipv6s": "2001:db8::5"},
	}), map[string]string{mac0: "eth0"}},
	{"a NIC that is not on this system", wantNetwork(), map[string]string{mac1: "eth1"}},
	{"no device-number, default prefixes", macs(map[string]any{
		mac1: map[string]any{"local-ipv4s": []any{"10.0.1.5", "10.0.1.6"}, "ipv6s": []any{"2001:db8::5", "2001:db8::6", "2001:db8::10"}, "subnet-ipv4-cidr-block": "bogus"},
		mac0: map[string]any{"local-ipv4s": []any{"10.0.0.5", "10.0.0.50", "10.0.0.6"}, "subnet-ipv4-cidr-block": "10.0.0.0/16"},
	}), map[string]string{mac0: "eth0", mac1: "eth1"}},
	{"empty ipv6s", macs(map[string]any{
		mac0: map[string]any{"device-number": "2", "ipv6s": ""},
		mac1: map[string]any{"device-number": "0", "ipv6s": []any{}},
	}), map[string]string{mac0: "a", mac1: "b"}},
}

// TestConvertNetworkLikeCloudInit runs cloud-init's
// convert_ec2_metadata_network_config on the same inputs and reads its v2
// output with netcfg.Parse: the models must match.
func TestConvertNetworkLikeCloudInit(t *testing.T) {
	python := cloudInitPython(t)
	type in struct {
		Network map[string]any    `json:"network"`
		Macs    map[string]string `json:"macs"`
	}
	var ins []in
	for _, c := range networkCases {
		ins = append(ins, in{c.network, c.nics})
	}
	b, err := json.Marshal(ins)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(python, "testdata/convert.py")
	cmd.Stdin = bytes.NewReader(b)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("cloud-init's converter (apt-get install -y cloud-init): %v\n%s", err, stderr.String())
	}
	var theirs []json.RawMessage
	if err := json.Unmarshal(out, &theirs); err != nil || len(theirs) != len(networkCases) {
		t.Fatalf("cloud-init's output %s: %v", out, err)
	}
	for i, c := range networkCases {
		want, err := netcfg.Parse("yaml", theirs[i], c.nics)
		if err != nil {
			t.Fatalf("%s: parse cloud-init's %s: %v", c.name, theirs[i], err)
		}
		got, err := ConvertNetwork(c.network, c.nics)
		if err != nil {
			t.Fatalf("%s: ConvertNetwork: %v", c.name, err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s:\n got %+v\nwant %+v (cloud-init: %s)", c.name, got, want, theirs[i])
		}
	}
}

// cloudInitPython returns the interpreter of the installed cloud-init
// command (its #! line), which can import the cloudinit package.
func cloudInitPython(t *testing.T) string {
	t.Helper()
	ci, err := exec.LookPath("cloud-init")
	if err != nil {
		t.Fatalf("cloud-init is not installed (make deps installs it; apt-get install -y cloud-init): %v", err)
	}
	f, err := os.Open(ci)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	line, err := bufio.NewReader(f).ReadString('\n')
	if err != nil || !strings.HasPrefix(line, "#!") {
		t.Fatalf("%s: no #! line: %v", ci, err)
	}
	return strings.Fields(strings.TrimPrefix(line, "#!"))[0]
}

func TestConvertNetwork(t *testing.T) {
	pfx := netip.MustParsePrefix
	got, err := ConvertNetwork(wantNetwork(), nil)
	if err != nil {
		t.Fatal(err)
	}
	// Two NICs: each one's DHCP routes get 100 × (device-number + 1).
	want := &netcfg.Config{Version: 2, Interfaces: []netcfg.Interface{
		{Name: "nic0", Kind: netcfg.Physical, MAC: mac0, NoRename: true, Subnets: []netcfg.Subnet{{Type: netcfg.DHCP4, Metric: 100}}},
		{Name: "nic1", Kind: netcfg.Physical, MAC: mac1, NoRename: true, Subnets: []netcfg.Subnet{
			{Type: netcfg.DHCP4, Metric: 200}, {Type: netcfg.DHCP6, Metric: 200},
			{Type: netcfg.Static, Address: pfx("172.31.30.8/20")},
			{Type: netcfg.Static, Address: pfx("172.31.30.9/20")},
			{Type: netcfg.Static, Address: pfx("2a05:d018::8/128")},
		}},
	}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("ConvertNetwork:\n got %+v\nwant %+v", got, want)
	}
	if err := got.Validate(); err != nil {
		t.Errorf("Validate: %v", err)
	}

	// Through Data.Network's bytes, with upper-case MACs and duplicate
	// device numbers.
	got, err = ParseNetwork([]byte(`{"interfaces": {"macs": {
		"0A:00:00:00:00:02": {"device-number": "0"},
		"0a:00:00:00:00:01": {"device-number": 0}}}}`), nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Interfaces) != 2 || got.Interfaces[0].Name != "nic0" || got.Interfaces[0].MAC != "0a:00:00:00:00:01" ||
		got.Interfaces[1].Name != "nic-0a0000000002" || got.Interfaces[1].MAC != "0a:00:00:00:00:02" {
		t.Errorf("ParseNetwork = %+v", got.Interfaces)
	}
}

func TestConvertNetworkErrors(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{`{"interfaces": {"macs": {"0a:00:00:00:00:01": {}}}`, "ec2 network metadata: invalid JSON at byte 50 (line 1:50): unexpected end of JSON input"},
		{`[]`, "ec2 network metadata: want an object, got a list"},
		{`{}`, `"interfaces": want a directory, got null`},
		{`{"interfaces": {"macs": "x"}}`, `"interfaces/macs": want a directory, got a string`},
		{`{"interfaces": {"macs": {"eth0": {}}}}`, `"interfaces/macs/eth0": not a MAC address`},
		{`{"interfaces": {"macs": {"0a:00:00:00:00:01": "x"}}}`, `"interfaces/macs/0a:00:00:00:00:01": want a directory, got a string`},
		{`{"interfaces": {"macs": {"0a:00:00:00:00:01": {}, "0A:00:00:00:00:01": {}}}}`, `the same MAC as`},
		{`{"interfaces": {"macs": {"0a:00:00:00:00:01": {"device-number": "first"}}}}`, `"interfaces/macs/0a:00:00:00:00:01/device-number": want a non-negative integer, got first`},
		{`{"interfaces": {"macs": {"0a:00:00:00:00:01": {"local-ipv4s": ["10.0.0.1", 7]}}}}`, `"interfaces/macs/0a:00:00:00:00:01/local-ipv4s" element 1: want a string, got a number`},
		{`{"interfaces": {"macs": {"0a:00:00:00:00:01": {"local-ipv4s": ["10.0.0.1", "10.0.0.300"]}}}}`, `"interfaces/macs/0a:00:00:00:00:01/local-ipv4s": secondary address "10.0.0.300/24": `},
		{`{"interfaces": {"macs": {"0a:00:00:00:00:01": {"ipv6s": ["::1", "::2"], "subnet-ipv6-cidr-block": "::/999"}}}}`, `"interfaces/macs/0a:00:00:00:00:01/ipv6s": secondary address "::2/999": `},
	} {
		_, err := ParseNetwork([]byte(tt.in), nil)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("ParseNetwork(%s) = %v, want an error containing %q", tt.in, err, tt.want)
		}
	}
}
