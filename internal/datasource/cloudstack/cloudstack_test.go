package cloudstack

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"sync"
	"testing"
	"testing/fstest"

	"github.com/earlyinit/earlyinit/internal/datasource"
	"github.com/earlyinit/earlyinit/internal/dmi"
	"github.com/earlyinit/earlyinit/internal/httpget"
)

func TestPlatform(t *testing.T) {
	for _, tc := range []struct {
		info dmi.Info
		want bool
	}{
		{dmi.Info{SysVendor: "Apache Software Foundation", ProductName: "CloudStack KVM Hypervisor"}, true},
		{dmi.Info{ProductName: "CloudStack"}, true}, // cloud-init's test value
		{dmi.Info{SysVendor: "Xen", ProductName: "HVM domU"}, false},
		{dmi.Info{SysVendor: "VMware, Inc.", ProductName: "VMware Virtual Platform"}, false},
		{dmi.Info{SysVendor: "Exoscale", ProductName: "Exoscale Compute Platform"}, false},
		{dmi.Info{ProductName: "cloudstack"}, false},
		{dmi.Info{}, false},
	} {
		if got := Source.Platform(tc.info); got != tc.want {
			t.Errorf("Platform(%+v) = %v, want %v", tc.info, got, tc.want)
		}
	}
}

// router plays a CloudStack virtual router: the meta-data tree and
// user-data under /latest/.
type router struct {
	meta     map[string]string // name -> value; the listing is their names
	listing  string            // "" for the names of meta, in order of order
	order    []string
	userData *string
	udStatus int
}

func (r *router) ServeHTTP(w http.ResponseWriter, q *http.Request) {
	switch p := q.URL.Path; {
	case p == "/latest/meta-data/":
		if r.listing != "" {
			w.Write([]byte(r.listing))
			return
		}
		w.Write([]byte(strings.Join(r.order, "\n")))
	case strings.HasPrefix(p, "/latest/meta-data/"):
		v, ok := r.meta[strings.TrimPrefix(p, "/latest/meta-data/")]
		if !ok {
			http.NotFound(w, q)
			return
		}
		w.Write([]byte(v))
	case p == "/latest/user-data" && r.udStatus != 0:
		w.WriteHeader(r.udStatus)
	case p == "/latest/user-data" && r.userData != nil:
		w.Write([]byte(*r.userData))
	default:
		http.NotFound(w, q)
	}
}

// passwordServer plays the router's password server: answer to
// send_my_password, and the requests it got.
type passwordServer struct {
	answer string
	status int
	mu     sync.Mutex
	got    []string
}

func (p *passwordServer) ServeHTTP(w http.ResponseWriter, q *http.Request) {
	p.mu.Lock()
	p.got = append(p.got, q.Header.Get(PasswordHeader))
	p.mu.Unlock()
	switch {
	case p.status != 0:
		w.WriteHeader(p.status)
	case q.Header.Get(PasswordHeader) == SendPassword:
		w.Write([]byte(p.answer))
	case q.Header.Get(PasswordHeader) == SavedPassword:
		w.Write([]byte("saved_password"))
	default:
		w.Write([]byte("bad_request"))
	}
}

// recorded is a virtual router's meta-data as CloudStack lists it.
func recorded() *router {
	ud := "#cloud-config\nhostname: cs\n"
	r := &router{userData: &ud, meta: map[string]string{
		"service-offering":     "Small Instance",
		"availability-zone":    "zone1",
		"local-ipv4":           "10.1.1.23",
		"local-hostname":       "VM-8ba7d1ac-5c1e-4b61-9c1b-0e1a3f7a2b11",
		"public-ipv4":          "192.0.2.10",
		"public-hostname":      "192.0.2.10",
		"instance-id":          "8ba7d1ac-5c1e-4b61-9c1b-0e1a3f7a2b11",
		"vm-id":                "8ba7d1ac-5c1e-4b61-9c1b-0e1a3f7a2b11",
		"public-keys":          "ssh-rsa AAAAB3NzaC1yc2EAAAADAQABAAABAQC7 user@host\n",
		"cloud-identifier":     "CloudStack-{7e1f2c1a-2f1e-4c55-b1a4-6f0c8b9e2d10}",
		"hypervisor-host-name": "kvm1",
	}}
	r.order = []string{"service-offering", "availability-zone", "local-ipv4", "local-hostname", "public-ipv4", "public-hostname", "instance-id", "vm-id", "public-keys", "cloud-identifier", "hypervisor-host-name"}
	return r
}

func start(t *testing.T, h http.Handler) string {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv.URL
}

func TestRead(t *testing.T) {
	pw := &passwordServer{answer: "SekritSquirrel\n"}
	var logged []string
	c := &Client{BaseURL: start(t, recorded()), PasswordURL: start(t, pw) + "/", HTTPClient: datasource.HTTPClient{HTTP: &httpget.Getter{Retries: -1},
		Logf: func(f string, a ...any) { logged = append(logged, fmt.Sprintf(f, a...)) }}}
	d, err := c.Read(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if d.InstanceID != "8ba7d1ac-5c1e-4b61-9c1b-0e1a3f7a2b11" || d.LocalHostname != "VM-8ba7d1ac-5c1e-4b61-9c1b-0e1a3f7a2b11" || d.AvailabilityZone != "zone1" {
		t.Errorf("id %q, hostname %q, zone %q", d.InstanceID, d.LocalHostname, d.AvailabilityZone)
	}
	if want := []string{"ssh-rsa AAAAB3NzaC1yc2EAAAADAQABAAABAQC7 user@host"}; !reflect.DeepEqual(d.PublicKeys, want) {
		t.Errorf("keys %q", d.PublicKeys)
	}
	if string(d.UserData) != "#cloud-config\nhostname: cs\n" || d.Datasource != "cloudstack" || d.CloudName != "cloudstack" {
		t.Errorf("user-data %q, ds %q, cloud %q", d.UserData, d.Datasource, d.CloudName)
	}
	if d.Meta["service-offering"] != "Small Instance" || len(d.Meta) != 11 {
		t.Errorf("meta %v", d.Meta)
	}
	// cloud-init's test_valid_response_means_password_marked_as_saved.
	if d.AdminPass != "SekritSquirrel" || !reflect.DeepEqual(pw.got, []string{SendPassword, SavedPassword}) {
		t.Errorf("password %q, requests %q", d.AdminPass, pw.got)
	}
	for _, l := range logged {
		if strings.Contains(l, "Sekrit") {
			t.Errorf("the password was logged: %q", l)
		}
	}
	if _, ok := d.Meta["admin_pass"]; ok {
		t.Error("password in the metadata")
	}
}

// TestPassword: cloud-init's password server cases. Nothing pending, or a
// bad request, is no password and no acknowledgement; a failing server is
// logged and the source still read.
func TestPassword(t *testing.T) {
	for _, tc := range []struct {
		name   string
		answer string
		status int
		want   string
		sent   []string
		logs   bool
	}{
		{name: "password", answer: "SekritSquirrel", want: "SekritSquirrel", sent: []string{SendPassword, SavedPassword}},
		{name: "empty", answer: "", sent: []string{SendPassword}},
		{name: "saved", answer: "saved_password", sent: []string{SendPassword}},
		{name: "bad request", answer: "bad_request", sent: []string{SendPassword}, logs: true},
		{name: "server error", status: 503, sent: []string{SendPassword}, logs: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pw := &passwordServer{answer: tc.answer, status: tc.status}
			var logged []string
			c := &Client{BaseURL: start(t, recorded()), PasswordURL: start(t, pw) + "/", HTTPClient: datasource.HTTPClient{HTTP: &httpget.Getter{Retries: -1},
				Logf: func(f string, a ...any) { logged = append(logged, fmt.Sprintf(f, a...)) }}}
			d, err := c.Read(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if d.AdminPass != tc.want || !reflect.DeepEqual(pw.got, tc.sent) {
				t.Errorf("password %q, sent %q; want %q, %q", d.AdminPass, pw.got, tc.want, tc.sent)
			}
			if (len(logged) > 0) != tc.logs {
				t.Errorf("logged %q", logged)
			}
		})
	}
}

// TestServer: with the router's address only, the metadata is at port 80
// and the password server at 8080, as cloud-init reaches them; this one
// has no lease and says so.
func TestServer(t *testing.T) {
	var asked []string
	fetch := fetchFunc(func(_ context.Context, r httpget.Request) ([]byte, error) {
		asked = append(asked, r.URL+" "+r.Header[PasswordHeader])
		return nil, &httpget.StatusError{Method: "GET", URL: r.URL, Code: 404}
	})
	_, err := Source.Metadata(context.Background(), datasource.Service{DHCPServer: "10.1.1.1", HTTP: fetch})
	if err == nil || !strings.Contains(err.Error(), "http://10.1.1.1/latest/meta-data/") {
		t.Errorf("error %v", err)
	}
	if len(asked) != 1 || asked[0] != "http://10.1.1.1/latest/meta-data/ " {
		t.Errorf("asked %q", asked)
	}
	_, err = Source.Metadata(context.Background(), datasource.Service{Base: "http://169.254.169.254", HTTP: fetch})
	if err == nil || !strings.Contains(err.Error(), "no virtual router") {
		t.Errorf("without a lease: %v", err)
	}

	// The password server's URL.
	routerURL := start(t, recorded())
	var pwURL string
	g := fetchFunc(func(_ context.Context, r httpget.Request) ([]byte, error) {
		if r.Header[PasswordHeader] != "" {
			pwURL = r.URL
			return []byte("saved_password"), nil
		}
		return (&httpget.Getter{Retries: -1}).Get(context.Background(), httpget.Request{URL: strings.Replace(r.URL, "http://10.1.1.1", routerURL, 1), Limit: r.Limit})
	})
	if _, err := (&Client{Server: "10.1.1.1", HTTPClient: datasource.HTTPClient{HTTP: g}}).Read(context.Background()); err != nil {
		t.Fatal(err)
	}
	if pwURL != "http://10.1.1.1:8080/" {
		t.Errorf("password server %q", pwURL)
	}
}

type fetchFunc func(context.Context, httpget.Request) ([]byte, error)

func (f fetchFunc) Get(ctx context.Context, r httpget.Request) ([]byte, error) { return f(ctx, r) }

func TestLeaf(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want any
	}{
		{"a", "a"},
		{"a\n", "a"},
		{"a\r\n", "a"},
		{"k1\nk2\n", []any{"k1", "k2"}},
		{"", ""},
	} {
		if got := leaf(tc.in); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("leaf(%q) = %#v, want %#v", tc.in, got, tc.want)
		}
	}
}

func TestReadErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		edit func(*router)
		want []string
	}{
		{"no instance-id", func(r *router) { delete(r.meta, "instance-id") }, []string{"/latest/meta-data/instance-id", "404"}},
		{"empty instance-id", func(r *router) { r.meta["instance-id"] = "\n" }, []string{"/latest/meta-data/instance-id: missing"}},
		{"two hostnames", func(r *router) { r.meta["local-hostname"] = "a\nb\n" }, []string{"/latest/meta-data/local-hostname: want one line"}},
		{"too many entries", func(r *router) { r.listing = strings.Repeat("x\n", MaxEntries+1) }, []string{"/latest/meta-data/", "101 entries"}},
		{"bad name", func(r *router) { r.listing = "instance-id\n..\n" }, []string{"/latest/meta-data/", "bad name"}},
		{"user-data error", func(r *router) { r.udStatus = 403 }, []string{"/latest/user-data", "403"}},
		{"value too big", func(r *router) { r.meta["vm-id"] = strings.Repeat("x", MaxMetadata+1) }, []string{"/latest/meta-data/vm-id", "limit"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := recorded()
			tc.edit(r)
			_, err := (&Client{BaseURL: start(t, r), HTTPClient: datasource.HTTPClient{HTTP: &httpget.Getter{Retries: -1}}}).Read(context.Background())
			if err == nil {
				t.Fatal("no error")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
		})
	}
	// No user-data is none; a directory in the listing is skipped.
	r := recorded()
	r.userData = nil
	r.order = append(r.order, "extra/")
	d, err := (&Client{BaseURL: start(t, r), HTTPClient: datasource.HTTPClient{HTTP: &httpget.Getter{Retries: -1}}}).Read(context.Background())
	if err != nil || d.UserData != nil {
		t.Errorf("user-data %q, %v", d.UserData, err)
	}
}

// TestSeed: cloud-init's seed directory /var/lib/cloud/seed/cs.
func TestSeed(t *testing.T) {
	d, err := Source.ReadFS(fstest.MapFS{
		"meta-data": {Data: []byte("instance-id: i-cs\nlocal-hostname: seeded\n")},
		"user-data": {Data: []byte("#cloud-config\n")},
	})
	if err != nil {
		t.Fatal(err)
	}
	if d.InstanceID != "i-cs" || d.LocalHostname != "seeded" || d.Datasource != "cloudstack" || string(d.UserData) != "#cloud-config\n" {
		t.Errorf("%+v", d)
	}
	if Source.SeedDirs[0] != "/var/lib/cloud/seed/cs" {
		t.Errorf("seed dirs %q", Source.SeedDirs)
	}
}
