package netcfg

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
)

func ec2Macs(m map[string]any) map[string]any {
	return map[string]any{"interfaces": map[string]any{"macs": m}}
}

// ec2Cases are inputs for convertEC2, with the live NICs.
var ec2Cases = []struct {
	name    string
	network map[string]any
	nics    map[string]string // mac -> name
}{
	{"aws two NICs", ec2Network(), map[string]string{ec2Mac0: "ens5", ec2Mac1: "ens6"}},
	{"one NIC with IPv6", ec2Macs(map[string]any{
		ec2Mac0: map[string]any{"device-number": "0", "local-ipv4s": "10.0.0.5", "ipv6s": "2001:db8::5"},
	}), map[string]string{ec2Mac0: "eth0"}},
	{"a NIC that is not on this system", ec2Network(), map[string]string{ec2Mac1: "eth1"}},
	{"no device-number, default prefixes", ec2Macs(map[string]any{
		ec2Mac1: map[string]any{"local-ipv4s": []any{"10.0.1.5", "10.0.1.6"}, "ipv6s": []any{"2001:db8::5", "2001:db8::6", "2001:db8::10"}, "subnet-ipv4-cidr-block": "bogus"},
		ec2Mac0: map[string]any{"local-ipv4s": []any{"10.0.0.5", "10.0.0.50", "10.0.0.6"}, "subnet-ipv4-cidr-block": "10.0.0.0/16"},
	}), map[string]string{ec2Mac0: "eth0", ec2Mac1: "eth1"}},
	{"empty ipv6s", ec2Macs(map[string]any{
		ec2Mac0: map[string]any{"device-number": "2", "ipv6s": ""},
		ec2Mac1: map[string]any{"device-number": "0", "ipv6s": []any{}},
	}), map[string]string{ec2Mac0: "a", ec2Mac1: "b"}},
}

// TestParseEC2LikeCloudInit runs cloud-init's
// convert_ec2_metadata_network_config on the same inputs and reads its v2
// output with Parse: the models must match.
func TestParseEC2LikeCloudInit(t *testing.T) {
	python := cloudInitPython(t)
	type in struct {
		Network map[string]any    `json:"network"`
		Macs    map[string]string `json:"macs"`
	}
	var ins []in
	for _, c := range ec2Cases {
		ins = append(ins, in{c.network, c.nics})
	}
	b, err := json.Marshal(ins)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(python, "testdata/ec2convert.py")
	cmd.Stdin = bytes.NewReader(b)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("cloud-init's converter (apt-get install -y cloud-init): %v\n%s", err, stderr.String())
	}
	var theirs []json.RawMessage
	if err := json.Unmarshal(out, &theirs); err != nil || len(theirs) != len(ec2Cases) {
		t.Fatalf("cloud-init's output %s: %v", out, err)
	}
	for i, c := range ec2Cases {
		want, err := Parse("yaml", theirs[i], c.nics)
		if err != nil {
			t.Fatalf("%s: parse cloud-init's %s: %v", c.name, theirs[i], err)
		}
		got, err := convertEC2(c.network, c.nics)
		if err != nil {
			t.Fatalf("%s: convertEC2: %v", c.name, err)
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

func TestParseEC2(t *testing.T) {
	pfx := netip.MustParsePrefix
	got, err := convertEC2(ec2Network(), nil)
	if err != nil {
		t.Fatal(err)
	}
	// Two NICs: each one's DHCP routes get 100 × (device-number + 1).
	want := &Config{Version: 2, Interfaces: []Interface{
		{Name: "nic0", Kind: Physical, MAC: ec2Mac0, NoRename: true, Subnets: []Subnet{{Type: DHCP4, Metric: 100}}},
		{Name: "nic1", Kind: Physical, MAC: ec2Mac1, NoRename: true, Subnets: []Subnet{
			{Type: DHCP4, Metric: 200}, {Type: DHCP6, Metric: 200},
			{Type: Static, Address: pfx("172.31.30.8/20")},
			{Type: Static, Address: pfx("172.31.30.9/20")},
			{Type: Static, Address: pfx("2a05:d018::8/128")},
		}},
	}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("convertEC2:\n got %+v\nwant %+v", got, want)
	}
	if err := got.Validate(); err != nil {
		t.Errorf("Validate: %v", err)
	}

	// Through Data.Network's bytes, with upper-case MACs and duplicate
	// device numbers.
	got, err = ParseEC2([]byte(`{"interfaces": {"macs": {
		"0A:00:00:00:00:02": {"device-number": "0"},
		"0a:00:00:00:00:01": {"device-number": 0}}}}`), nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Interfaces) != 2 || got.Interfaces[0].Name != "nic0" || got.Interfaces[0].MAC != "0a:00:00:00:00:01" ||
		got.Interfaces[1].Name != "nic-0a0000000002" || got.Interfaces[1].MAC != "0a:00:00:00:00:02" {
		t.Errorf("ParseEC2 = %+v", got.Interfaces)
	}
}

func TestParseEC2Errors(t *testing.T) {
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
		_, err := ParseEC2([]byte(tt.in), nil)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("ParseEC2(%s) = %v, want an error containing %q", tt.in, err, tt.want)
		}
	}
}

const (
	ec2Mac0 = "0a:49:e5:e5:4a:01"
	ec2Mac1 = "0a:49:e5:e5:4a:02"
)

// ec2Network is the network/ tree of a real instance with two NICs, the
// second with secondary addresses and IPv6, as the EC2 reader returns it.
func ec2Network() map[string]any {
	return map[string]any{"interfaces": map[string]any{"macs": map[string]any{
		ec2Mac0: map[string]any{"device-number": "0", "local-ipv4s": "172.31.20.5", "subnet-ipv4-cidr-block": "172.31.16.0/20", "vpc-id": "vpc-1"},
		ec2Mac1: map[string]any{"device-number": "1", "local-ipv4s": []any{"172.31.30.7", "172.31.30.9", "172.31.30.8"},
			"subnet-ipv4-cidr-block": "172.31.16.0/20", "ipv6s": []any{"2a05:d018::7", "2a05:d018::8"}, "subnet-ipv6-cidr-blocks": "2a05:d018::/64"},
	}}}
}

func FuzzParseEC2(f *testing.F) {
	b, _ := json.Marshal(ec2Network())
	f.Add(b)
	for _, s := range []string{
		`{"interfaces": {"macs": {"0a:00:00:00:00:01": {"device-number": "0", "local-ipv4s": ["10.0.0.1", "10.0.0.2"], "subnet-ipv4-cidr-block": "10.0.0.0/8"}}}}`,
		`{"interfaces": {"macs": {"0A-00-00-00-00-01": {"device-number": 3.5}}}}`,
		`{"interfaces": {"macs": {}}}`, `{"interfaces": []}`, `null`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		c, err := ParseEC2(b, nil)
		if err != nil {
			return
		}
		names := map[string]bool{}
		for _, i := range c.Interfaces {
			if i.Name == "" || names[i.Name] || i.MAC == "" || len(i.Subnets) == 0 || i.Subnets[0].Type != "dhcp4" {
				t.Fatalf("ParseEC2(%s): interface %+v", b, i)
			}
			names[i.Name] = true
		}
	})
}

// TestParseEC2ErrorsAsBefore: the JSON errors are worded exactly as when
// the parser lived in the EC2 reader and decoded with
// jsondoc.Decode, and Parse reaches ParseEC2 by the "ec2" format.
func TestParseEC2ErrorsAsBefore(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"", "parse ec2 network metadata: invalid JSON at byte 0 (line 1:1): unexpected end of JSON input"},
		{"{", "parse ec2 network metadata: invalid JSON at byte 1 (line 1:1): unexpected end of JSON input"},
		{"{\"interfaces\": {\"macs\": {\"0a:00:00:00:00:01\": {}}}", "parse ec2 network metadata: invalid JSON at byte 50 (line 1:50): unexpected end of JSON input"},
		{"{}\n{}", "parse ec2 network metadata: invalid JSON at byte 4 (line 2:1): data after the top-level value"},
		{"{\n\"a\": tru}", "parse ec2 network metadata: invalid JSON at byte 11 (line 2:9): invalid character '}' in literal true (expecting 'e')"},
		{"[]", "ec2 network metadata: want an object, got a list"},
		{"\"x\"", "ec2 network metadata: want an object, got a string"},
		{"7", "ec2 network metadata: want an object, got a number"},
		{"null", "ec2 network metadata: want an object, got null"},
	} {
		_, err := Parse("ec2", []byte(tt.in), nil)
		if err == nil || err.Error() != tt.want {
			t.Errorf("Parse(ec2, %q) = %v, want %s", tt.in, err, tt.want)
		}
	}
	c, err := Parse("ec2", []byte(`{"interfaces": {"macs": {"0a:00:00:00:00:01": {}}}}`), map[string]string{"0a:00:00:00:00:01": "ens5"})
	if err != nil || len(c.Interfaces) != 1 || c.Interfaces[0].Name != "ens5" || c.Interfaces[0].NoRename {
		t.Errorf("Parse(ec2) = %+v, %v", c, err)
	}
}
