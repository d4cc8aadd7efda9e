package aliyun

import (
	"context"
	"encoding/json"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/earlyinit/earlyinit/internal/datasource"
	"github.com/earlyinit/earlyinit/internal/datasource/ec2/ec2test"
	"github.com/earlyinit/earlyinit/internal/dmi"
	"github.com/earlyinit/earlyinit/internal/instance"
	"github.com/earlyinit/earlyinit/internal/netcfg"
)

func TestPlatform(t *testing.T) {
	for _, tt := range []struct {
		name string
		info dmi.Info
		want bool
	}{
		// cloud-init's tests/unittests/test_ds_identify.py "AliYun".
		{"ds-identify AliYun", dmi.Info{SysVendor: "Alibaba Cloud", ProductName: "Alibaba Cloud ECS"}, true},
		{"product name only", dmi.Info{ProductName: "Alibaba Cloud ECS"}, true},
		{"other case (compared exactly)", dmi.Info{ProductName: "alibaba cloud ecs"}, false},
		{"vendor only", dmi.Info{SysVendor: "Alibaba Cloud"}, false},
		{"EC2", dmi.Info{SysVendor: "Amazon EC2", ProductName: "t3.micro"}, false},
		{"no DMI", dmi.Info{}, false},
	} {
		if got := Platform(tt.info); got != tt.want {
			t.Errorf("%s: Platform(%+v) = %v, want %v", tt.name, tt.info, got, tt.want)
		}
	}
}

// The user-data and vendor-data of cloud-init's test_aliyun.py.
const (
	userData   = "#cloud-config\n\nhostname: localhost"
	vendorData = "#cloud-config\nbootcmd:\n- echo hello world > /tmp/vendor"
	testToken  = "AQAEAFake-ecs-token=="
)

// allJSON is cloud-init's DEFAULT_METADATA_RAW: what meta-data/all answers
// on a real ECS instance.
func allJSON(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile("testdata/meta-data-all.json")
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// asTree lays the same meta-data out as the EC2-style tree ECS serves
// under meta-data/, as cloud-init's register_mock_metaserver does: objects
// are directories, lists are lines.
func asTree(t *testing.T, all string) map[string]string {
	t.Helper()
	var v map[string]any
	if err := json.Unmarshal([]byte(all), &v); err != nil {
		t.Fatal(err)
	}
	tree := map[string]string{}
	var walk func(prefix string, v any)
	walk = func(prefix string, v any) {
		switch v := v.(type) {
		case map[string]any:
			for k, e := range v {
				walk(prefix+k+"/", e)
			}
		case []any:
			var lines []string
			for _, e := range v {
				lines = append(lines, e.(string))
			}
			tree[strings.TrimSuffix(prefix, "/")] = strings.Join(lines, "\n")
		case string:
			tree[strings.TrimSuffix(prefix, "/")] = v
		}
	}
	walk("", v)
	return tree
}

func service(t *testing.T) *ec2test.Service {
	ud, vd := userData, vendorData
	return &ec2test.Service{
		Version:        Version,
		UserData:       &ud,
		VendorData:     &vd,
		TokenHeader:    TokenHeader,
		TokenTTLHeader: TokenTTLHeader,
		Token:          testToken,
		TokenRequired:  true,
	}
}

func client(base string) *Client {
	return &Client{BaseURL: base, HTTPClient: datasource.HTTPClient{RequestTimeout: 300 * time.Millisecond, Backoff: time.Millisecond}}
}

func TestRead(t *testing.T) {
	all := allJSON(t)
	for _, tt := range []struct {
		name  string
		setup func(s *ec2test.Service)
		walk  bool
	}{
		{"meta-data/all", func(s *ec2test.Service) { s.Raw = map[string]string{"/2016-01-01/meta-data/all": all} }, false},
		{"no meta-data/all: the tree", func(s *ec2test.Service) { s.Tree = asTree(t, all) }, true},
		{"meta-data/all not an object: the tree", func(s *ec2test.Service) {
			s.Tree = asTree(t, all)
			s.Raw = map[string]string{"/2016-01-01/meta-data/all": `["not", "an object"]`}
		}, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s := service(t)
			tt.setup(s)
			base := ec2test.Serve(t, s)
			var logs []string
			c := client(base)
			c.Logf = func(f string, a ...any) { logs = append(logs, f) }
			d, err := c.Read(context.Background())
			if err != nil {
				t.Fatalf("Read: %v", err)
			}
			got := *d
			got.Meta, got.Network = nil, nil
			want := instance.Data{
				Datasource: "aliyun", CloudName: "aliyun", Platform: "aliyun",
				Subplatform:      "metadata (" + base + ")",
				InstanceID:       "i-bp15ojxppkmsnyjxxxxx",
				LocalHostname:    "aliyun-test-vm-00",
				Region:           "cn-hangzhou",
				AvailabilityZone: "cn-hangzhou-j",
				PublicKeys:       []string{"ssh-rsa AAAAB3Nza", "ssh-rsa AAAAB3Nza"},
				UserData:         []byte(userData),
				VendorData:       []byte(vendorData),
				NetworkFormat:    instance.NetworkEC2Metadata,
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("Read:\n got %+v\nwant %+v", got, want)
			}
			// Both ways give the same meta-data (cloud-init decodes
			// meta-data/all's values as tree leaves for that).
			if ns := d.Meta["dns-conf"].(map[string]any)["nameservers"]; !reflect.DeepEqual(ns, []any{"100.100.2.136", "100.100.2.138"}) {
				t.Errorf("dns-conf/nameservers = %#v", ns)
			}
			if tl := s.Tokenless(); len(tl) != 0 {
				t.Errorf("GETs without the token: %v", tl)
			}
			if n := s.Hits("PUT /latest/api/token"); n != 1 {
				t.Errorf("%d token PUTs, want 1", n)
			}
			if walked := s.Hits("GET /2016-01-01/meta-data/") == 1; walked != tt.walk {
				t.Errorf("tree walked: %v, want %v", walked, tt.walk)
			}
			for _, l := range logs {
				if strings.Contains(l, testToken) {
					t.Errorf("token logged: %q", l)
				}
			}
			cfg, err := netcfg.Parse(string(d.NetworkFormat), d.Network, nil)
			if err != nil {
				t.Fatalf("network: %v", err)
			}
			if len(cfg.Interfaces) != 1 || cfg.Interfaces[0].MAC != "00:16:3e:14:59:58" || cfg.Interfaces[0].Subnets[0].Type != netcfg.DHCP4 {
				t.Errorf("network = %+v", cfg.Interfaces)
			}
		})
	}
}

// TestMetaSame: meta-data/all and the tree give the same Meta.
func TestMetaSame(t *testing.T) {
	all := allJSON(t)
	a := service(t)
	a.Raw = map[string]string{"/2016-01-01/meta-data/all": all}
	b := service(t)
	b.Tree = asTree(t, all)
	da, err := client(ec2test.Serve(t, a)).Read(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	db, err := client(ec2test.Serve(t, b)).Read(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	ja, _ := json.Marshal(da.Meta)
	jb, _ := json.Marshal(db.Meta)
	if string(ja) != string(jb) {
		t.Errorf("meta-data/all:\n%s\ntree:\n%s", ja, jb)
	}
}

func TestReadErrors(t *testing.T) {
	all := allJSON(t)
	noID := strings.Replace(all, `"instance-id"`, `"no-instance-id"`, 1)
	for _, tt := range []struct {
		name  string
		setup func(s *ec2test.Service, c *Client)
		want  []string
	}{
		{"token refused", func(s *ec2test.Service, c *Client) { s.PutStatus = 403 }, []string{"PUT ", "/latest/api/token: HTTP 403", "disabled"}},
		{"no token route", func(s *ec2test.Service, c *Client) { s.PutStatus = 404 }, []string{"/latest/api/token: HTTP 404"}},
		{"empty token", func(s *ec2test.Service, c *Client) { s.Token = "" }, []string{"empty or unprintable token"}},
		{"user-data 500", func(s *ec2test.Service, c *Client) {
			s.Status = map[string]int{"/2016-01-01/user-data": 500}
		}, []string{"/2016-01-01/user-data: HTTP 500"}},
		{"vendor-data 403", func(s *ec2test.Service, c *Client) {
			s.Status = map[string]int{"/2016-01-01/vendor-data": 403}
		}, []string{"/2016-01-01/vendor-data: HTTP 403"}},
		{"no instance-id", func(s *ec2test.Service, c *Client) {
			s.Raw["/2016-01-01/meta-data/all"] = noID
		}, []string{"/2016-01-01/meta-data/instance-id: missing"}},
		{"public-keys not a directory", func(s *ec2test.Service, c *Client) {
			s.Raw["/2016-01-01/meta-data/all"] = `{"instance-id": "i-1", "public-keys": 7}`
		}, []string{"/2016-01-01/meta-data/public-keys: want a directory"}},
		{"oversized meta-data/all", func(s *ec2test.Service, c *Client) { c.MaxBody = 512 }, []string{"/2016-01-01/meta-data/all: body over the 512 byte limit"}},
		{"oversized user-data", func(s *ec2test.Service, c *Client) {
			big := strings.Repeat("x", 8<<10)
			s.UserData = &big
			c.MaxBody = 4 << 10
			s.Raw["/2016-01-01/meta-data/all"] = `{"instance-id": "i-1"}`
		}, []string{"/2016-01-01/user-data: body over the 4096 byte limit"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s := service(t)
			s.Raw = map[string]string{"/2016-01-01/meta-data/all": all}
			c := client("")
			tt.setup(s, c)
			c.BaseURL = ec2test.Serve(t, s)
			d, err := c.Read(context.Background())
			if err == nil {
				t.Fatalf("Read = %+v, want an error", d)
			}
			if !strings.HasPrefix(err.Error(), "aliyun: ") {
				t.Errorf("error %q does not start with aliyun:", err)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
		})
	}
}

func TestPublicKeys(t *testing.T) {
	for _, tt := range []struct {
		in   any
		want []string
		err  string
	}{
		{in: nil},
		{in: ""},
		{in: map[string]any{"b": "ssh-rsa B\n", "a": []any{"ssh-rsa A1", "ssh-rsa A2"}}, want: []string{"ssh-rsa A1", "ssh-rsa A2", "ssh-rsa B"}},
		{in: map[string]any{"0": map[string]any{"openssh-key": []any{"ssh-ed25519 K"}}}, want: []string{"ssh-ed25519 K"}},
		{in: map[string]any{"0": map[string]any{"other": "x"}}},
		{in: map[string]any{"0": 5}, err: `"0": want a string`},
		{in: []any{"ssh-rsa A"}, err: "want a directory"},
	} {
		got, err := publicKeys(tt.in)
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("publicKeys(%#v) = %q, %v; want error %q", tt.in, got, err, tt.err)
			}
			continue
		}
		if err != nil || !reflect.DeepEqual(got, tt.want) {
			t.Errorf("publicKeys(%#v) = %q, %v; want %q", tt.in, got, err, tt.want)
		}
	}
}

func TestSource(t *testing.T) {
	if Source.Name != "aliyun" || Source.Class != "AliYun" || Source.MetadataBase != "http://100.100.100.200" || Source.Metadata == nil {
		t.Errorf("Source = %+v", Source)
	}
}
