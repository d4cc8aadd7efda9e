package ec2

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/earlyinit/earlyinit/internal/datasource"
	"github.com/earlyinit/earlyinit/internal/datasource/ec2/ec2test"
	"github.com/earlyinit/earlyinit/internal/httpget"
	"github.com/earlyinit/earlyinit/internal/instance"
)

const testToken = "AQAEAB-test-token=="

// imds is EC2's instance metadata service serving tree at version (and
// "latest"), versions its answer to GET /, handing out testToken under
// EC2's header names.
func imds(version, versions string, tree map[string]string) *ec2test.Service {
	return &ec2test.Service{Version: version, Versions: versions, Tree: tree,
		TokenHeader: TokenHeader, TokenTTLHeader: TokenTTLHeader, TokenTTL: "21600", Token: testToken}
}

func client(base string) *Client {
	return &Client{BaseURL: base, HTTPClient: datasource.HTTPClient{RequestTimeout: 500 * time.Millisecond, Backoff: time.Millisecond}}
}

const (
	mac0 = ec2test.AWSMAC0
	mac1 = ec2test.AWSMAC1
	key0 = ec2test.AWSKey
)

func TestIMDSv2(t *testing.T) {
	ud := "#cloud-config\nhostname: web\n"
	m := imds("2021-03-23", "1.0\n2009-04-04\n2016-09-02\n2021-03-23\nlatest", ec2test.AWSTree())
	m.UserData, m.TokenRequired = &ud, true
	base := ec2test.Serve(t, m)
	var logs []string
	c := client(base)
	c.Logf = func(f string, a ...any) { logs = append(logs, f) }
	d, err := c.Read(context.Background())
	if err != nil {
		t.Fatalf("Read: %v", err)
	}
	zero := 0
	want := &instance.Data{
		Datasource:       "ec2",
		CloudName:        "aws",
		Platform:         "ec2",
		Subplatform:      "metadata (" + base + ")",
		InstanceID:       "i-0123456789abcdef0",
		LocalHostname:    "ip-172-31-20-5.eu-west-1.compute.internal",
		AvailabilityZone: "eu-west-1b",
		Region:           "eu-west-1",
		PublicKeys:       []string{key0},
		LaunchIndex:      &zero,
		UserData:         []byte(ud),
		NetworkFormat:    instance.NetworkEC2Metadata,
	}
	got := *d
	got.Meta, got.Network = nil, nil
	if !reflect.DeepEqual(&got, want) {
		t.Errorf("Read:\n got %+v\nwant %+v", &got, want)
	}
	if m.Hits("PUT /latest/api/token") != 1 || len(m.Tokenless()) != 0 {
		t.Errorf("%d token PUTs, GETs without the token: %v", m.Hits("PUT /latest/api/token"), m.Tokenless())
	}
	if m.Hits("GET /2021-03-23/meta-data/iam/security-credentials/role") != 0 {
		t.Error("security-credentials was fetched")
	}
	wantMeta := map[string]any{
		"ami-id":           "ami-0abcdef1234567890",
		"ami-launch-index": "0",
		"hostname":         "ip-172-31-20-5.eu-west-1.compute.internal",
		"instance-id":      "i-0123456789abcdef0",
		"instance-type":    "t3.micro",
		"local-hostname":   "ip-172-31-20-5.eu-west-1.compute.internal",
		"local-ipv4":       "172.31.20.5",
		"placement":        map[string]any{"availability-zone": "eu-west-1b", "availability-zone-id": "euw1-az1"},
		"public-keys":      map[string]any{"my-key": []any{key0}},
		"iam":              map[string]any{},
		"identity-credentials": map[string]any{"ec2": map[string]any{
			"info": map[string]any{"Code": "Success", "AccountId": "123456789012"}}},
		"block-device-mapping": map[string]any{"ami": "/dev/xvda", "root": "/dev/xvda"},
		"network":              wantNetwork(),
	}
	if !reflect.DeepEqual(d.Meta, wantMeta) {
		gj, _ := json.MarshalIndent(d.Meta, "", " ")
		t.Errorf("Meta:\n%s", gj)
	}
	var net any
	if err := json.Unmarshal(d.Network, &net); err != nil || !reflect.DeepEqual(net, wantNetwork()) {
		t.Errorf("Network = %s (%v), want the network/ tree as JSON", d.Network, err)
	}
	if len(logs) == 0 {
		t.Error("nothing logged")
	}
}

func wantNetwork() map[string]any {
	return map[string]any{"interfaces": map[string]any{"macs": map[string]any{
		mac0: map[string]any{"device-number": "0", "local-ipv4s": "172.31.20.5", "subnet-ipv4-cidr-block": "172.31.16.0/20", "vpc-id": "vpc-1"},
		mac1: map[string]any{"device-number": "1", "local-ipv4s": []any{"172.31.30.7", "172.31.30.9", "172.31.30.8"},
			"subnet-ipv4-cidr-block": "172.31.16.0/20", "ipv6s": []any{"2a05:d018::7", "2a05:d018::8"}, "subnet-ipv6-cidr-blocks": "2a05:d018::/64"},
	}}}
}

func minimalTree() map[string]string {
	return map[string]string{
		"instance-id":                 "i-1",
		"local-hostname":              "host-1",
		"placement/availability-zone": "zone-9x",
		"placement/region":            "region-9",
	}
}

// TestIMDSv1Fallback: a service that answers the token PUT with an HTTP
// error, or never, is read without a token.
func TestIMDSv1Fallback(t *testing.T) {
	for _, tt := range []struct {
		name      string
		putStatus int
		putHang   bool
	}{
		{"403", http.StatusForbidden, false},
		{"404", http.StatusNotFound, false},
		{"405", http.StatusMethodNotAllowed, false},
		{"500", http.StatusInternalServerError, false},
		{"no answer", 0, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			m := imds("2009-04-04", "1.0\n2007-01-19\n2009-04-04\nlatest\n", minimalTree())
			m.PutStatus = tt.putStatus
			if tt.putHang {
				m.Handlers = map[string]http.HandlerFunc{"/latest/api/token": func(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() }}
			}
			base := ec2test.Serve(t, m)
			start := time.Now()
			d, err := client(base).Read(context.Background())
			if err != nil {
				t.Fatalf("Read: %v", err)
			}
			if d.InstanceID != "i-1" || d.LocalHostname != "host-1" || d.AvailabilityZone != "zone-9x" || d.Region != "region-9" || d.UserData != nil || d.Network != nil {
				t.Errorf("Read = %+v", d)
			}
			if m.Hits("GET /2009-04-04/meta-data/instance-id") != 1 {
				t.Errorf("instance-id not read from the 2009-04-04 tree")
			}
			if gets := m.Gets(); len(m.Tokenless()) != gets || gets != 8 {
				t.Errorf("GETs without a token: %v of %d, want all 8", m.Tokenless(), gets)
			}
			wantPuts := 1
			if tt.putStatus >= 500 {
				wantPuts = 3
			}
			if n := m.Hits("PUT /latest/api/token"); n != wantPuts {
				t.Errorf("%d token PUTs, want %d", n, wantPuts)
			}
			if tt.putHang && time.Since(start) > time.Second {
				t.Errorf("took %v: the silent PUT must cost one request timeout", time.Since(start))
			}
		})
	}
}

func TestPickVersion(t *testing.T) {
	for _, tt := range []struct{ list, want string }{
		{"1.0\n2009-04-04\n2016-09-02\n2018-09-24\n2021-03-23\n2021-07-15\nlatest", "2021-03-23"},
		{"2009-04-04\n2016-09-02\r\n2018-09-24\r\nlatest", "2018-09-24"},
		{"2009-04-04\n2016-09-02", "2016-09-02"},
		{"1.0\n2007-01-19\n2009-04-04\nlatest", "2009-04-04"},
		{"1.0\nlatest", "latest"},
		{"", "latest"},
	} {
		if got := PickVersion(tt.list); got != tt.want {
			t.Errorf("PickVersion(%q) = %q, want %q", tt.list, got, tt.want)
		}
	}
}

func TestVersionListMissing(t *testing.T) {
	m := imds("none", "", minimalTree())
	m.Handlers = map[string]http.HandlerFunc{"/": http.NotFound}
	d, err := client(ec2test.Serve(t, m)).Read(context.Background())
	if err != nil || d.InstanceID != "i-1" || m.Hits("GET /latest/meta-data/instance-id") != 1 {
		t.Fatalf("Read = %+v, %v; want the latest tree", d, err)
	}
}

func TestRegionFromZone(t *testing.T) {
	tree := minimalTree()
	delete(tree, "placement/region")
	tree["ami-launch-index"] = "3"
	ud := ""
	m := imds("2016-09-02", "2016-09-02", tree)
	m.UserData = &ud
	d, err := client(ec2test.Serve(t, m)).Read(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if d.Region != "zone-9" || d.LaunchIndex == nil || *d.LaunchIndex != 3 || d.UserData == nil || len(d.UserData) != 0 {
		t.Errorf("Read = %+v, want region zone-9, launch index 3, empty user-data", d)
	}
}

func TestBadServers(t *testing.T) {
	const iid = "/latest/meta-data/instance-id"
	status := func(code int) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(code) }
	}
	body := func(s string) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) { w.Write([]byte(s)) }
	}
	slow := func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-time.After(2 * time.Second):
		}
	}
	ud := strings.Repeat("u", 1000)
	for _, tt := range []struct {
		name    string
		tree    map[string]string
		fault   map[string]http.HandlerFunc
		maxBody int64
		want    string // in the error, after the server's URL
		hits    map[string]int
	}{
		{name: "500 on instance-id", fault: map[string]http.HandlerFunc{iid: status(500)},
			want: iid + ": HTTP 500 Internal Server Error (3 tries)", hits: map[string]int{"GET " + iid: 3}},
		{name: "500 on the version list", fault: map[string]http.HandlerFunc{"/": status(500)},
			want: "/: HTTP 500 Internal Server Error (3 tries)", hits: map[string]int{"GET " + iid: 0}},
		{name: "500 on the meta-data listing", fault: map[string]http.HandlerFunc{"/latest/meta-data/": status(502)},
			want: "/latest/meta-data/: HTTP 502 Bad Gateway (3 tries)"},
		{name: "404 on instance-id", fault: map[string]http.HandlerFunc{iid: http.NotFound},
			want: iid + ": HTTP 404 Not Found", hits: map[string]int{"GET " + iid: 1}},
		{name: "no instance-id", tree: map[string]string{"local-hostname": "h"},
			want: "/latest/meta-data/instance-id: missing or empty (it is required)"},
		{name: "two instance-ids", tree: map[string]string{"instance-id": "i-1\ni-2"},
			want: "/latest/meta-data/instance-id: want one value, got 2 lines"},
		{name: "placement a leaf", tree: map[string]string{"instance-id": "i-1", "placement": "x"},
			want: "/latest/meta-data/placement: want a directory, got a string"},
		{name: "bad launch index", tree: map[string]string{"instance-id": "i-1", "ami-launch-index": "one"},
			want: "/latest/meta-data/ami-launch-index: want a non-negative integer, got \"one\""},
		{name: "slow instance-id", fault: map[string]http.HandlerFunc{iid: slow},
			want: iid + ": no complete answer within 500ms (3 tries)", hits: map[string]int{"GET " + iid: 3}},
		{name: "oversized leaf", fault: map[string]http.HandlerFunc{iid: body(strings.Repeat("i", MaxMetadata+1))},
			want: iid + ": body over the 1048576 byte limit"},
		{name: "oversized user-data", maxBody: 999,
			want: "/latest/user-data: body over the 999 byte limit"},
		{name: "endless tree", fault: map[string]http.HandlerFunc{"/latest/meta-data/": func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("a/")) }},
			want: "/latest/meta-data/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/: the meta-data tree is deeper than 16 levels"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			tree := tt.tree
			if tree == nil {
				tree = minimalTree()
			}
			fault := map[string]http.HandlerFunc{}
			for k, v := range tt.fault {
				fault[k] = v
			}
			if fault["/latest/meta-data/"] != nil {
				// Every directory under it answers the same.
				h := fault["/latest/meta-data/"]
				for p := "/latest/meta-data/a/"; len(p) < 200; p += "a/" {
					fault[p] = h
				}
			}
			m := imds("latest", "latest", tree)
			m.UserData, m.Handlers = &ud, fault
			base := ec2test.Serve(t, m)
			c := client(base)
			c.MaxBody = tt.maxBody
			d, err := c.Read(context.Background())
			if err == nil || !strings.Contains(err.Error(), base+tt.want) {
				t.Fatalf("Read = %+v, %v; want an error containing %q", d, err, base+tt.want)
			}
			for p, want := range tt.hits {
				if got := m.Hits(p); got != want {
					t.Errorf("%s: %d requests, want %d", p, got, want)
				}
			}
		})
	}
}

func TestTagsNotFoundSkipped(t *testing.T) {
	tree := minimalTree()
	tree["tags/instance/"] = "Name\nGone"
	tree["tags/instance/Name"] = "web"
	d, err := client(ec2test.Serve(t, imds("latest", "latest", tree))).Read(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if want := map[string]any{"instance": map[string]any{"Name": "web"}}; !reflect.DeepEqual(d.Meta["tags"], want) {
		t.Errorf("tags = %v, want %v", d.Meta["tags"], want)
	}
}

func TestContext(t *testing.T) {
	m := imds("latest", "latest", minimalTree())
	base := ec2test.Serve(t, m)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := client(base).Read(ctx)
	if !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), base+"/latest/api/token") {
		t.Errorf("cancelled: err = %v, want context.Canceled naming the URL", err)
	}
	if n := m.Requests(); n != 0 {
		t.Errorf("cancelled: %d requests, want none", n)
	}

	// The bound cuts a walk short, whatever the request timeout.
	m = imds("latest", "latest", minimalTree())
	m.Handlers = map[string]http.HandlerFunc{"/latest/meta-data/local-hostname": func(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() }}
	base = ec2test.Serve(t, m)
	c := client(base)
	c.RequestTimeout = 10 * time.Second
	ctx, cancel = context.WithTimeout(context.Background(), 150*time.Millisecond)
	defer cancel()
	_, err = c.Read(ctx)
	if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), base+"/latest/meta-data/local-hostname") {
		t.Errorf("deadline: err = %v, want the deadline naming the URL", err)
	}
}

func TestNoServer(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	base := srv.URL
	srv.Close()
	_, err := client(base).Read(context.Background())
	if err == nil || !strings.Contains(err.Error(), "PUT "+base+"/latest/api/token: dial tcp") {
		t.Errorf("err = %v, want a dial error naming the URL", err)
	}
}

// TestNoToken: with NoToken the service is read as IMDSv1 from the start,
// the token PUT never sent (cloud-init on ZStack and Outscale).
func TestNoToken(t *testing.T) {
	m := imds("2009-04-04", "1.0\n2009-04-04\nlatest\n", minimalTree())
	c := client(ec2test.Serve(t, m))
	c.NoToken = true
	d, err := c.Read(context.Background())
	if err != nil {
		t.Fatalf("Read: %v", err)
	}
	if d.InstanceID != "i-1" {
		t.Errorf("InstanceID = %q", d.InstanceID)
	}
	if n := m.Hits("PUT /latest/api/token"); n != 0 {
		t.Errorf("%d token PUTs, want none", n)
	}
}

// TestToken: the exported token request, as the Alibaba reader uses it
// with its own header names.
func TestToken(t *testing.T) {
	for _, tt := range []struct {
		name, body string
		status     int
		want       string
		wantStatus int
	}{
		{name: "token", body: " tok-1\n", want: "tok-1"},
		{name: "empty", body: "", want: ""},
		{name: "unprintable", body: "a\x01b", want: ""},
		{name: "403", status: 403, wantStatus: 403},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var ttl string
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				ttl = r.Header.Get("X-Test-Ttl")
				if r.Method != http.MethodPut {
					w.WriteHeader(http.StatusMethodNotAllowed)
					return
				}
				if tt.status != 0 {
					w.WriteHeader(tt.status)
					return
				}
				w.Write([]byte(tt.body))
			}))
			defer srv.Close()
			tok, err := Token(context.Background(), client(srv.URL).Fetcher(), srv.URL+"/latest/api/token", "X-Test-Ttl", 64)
			if tt.wantStatus != 0 {
				if got := httpget.Status(err); got != tt.wantStatus {
					t.Fatalf("Token = %q, %v; want HTTP %d", tok, err, tt.wantStatus)
				}
				return
			}
			if err != nil || tok != tt.want {
				t.Fatalf("Token = %q, %v; want %q", tok, err, tt.want)
			}
			if ttl != TokenTTL {
				t.Errorf("TTL header = %q, want %q", ttl, TokenTTL)
			}
		})
	}
}
