package openstack

import (
	"context"
	"errors"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"reflect"
	"strings"
	"sync"
	"testing"
	"testing/fstest"
	"time"

	"github.com/earlyinit/earlyinit/internal/datasource"
	"github.com/earlyinit/earlyinit/internal/datasource/configdrive"
	"github.com/earlyinit/earlyinit/internal/instance"
)

// nova plays nova's metadata API from a config drive tree: GET /openstack
// lists the version directories (not content/), and GET /openstack/<path>
// serves the drive's file. fault, if set, answers a path instead.
type nova struct {
	fsys  fs.FS
	fault map[string]http.HandlerFunc

	mu   sync.Mutex
	hits map[string]int
}

func (n *nova) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	n.mu.Lock()
	if n.hits == nil {
		n.hits = map[string]int{}
	}
	n.hits[r.URL.Path]++
	n.mu.Unlock()
	if h := n.fault[r.URL.Path]; h != nil {
		h(w, r)
		return
	}
	if r.Method != http.MethodGet {
		http.Error(w, "method", http.StatusMethodNotAllowed)
		return
	}
	if r.URL.Path == "/openstack" || r.URL.Path == "/openstack/" {
		ents, err := fs.ReadDir(n.fsys, "openstack")
		if err != nil {
			http.NotFound(w, r)
			return
		}
		var vs []string
		for _, e := range ents {
			if e.IsDir() && e.Name() != "content" {
				vs = append(vs, e.Name())
			}
		}
		w.Write([]byte(strings.Join(vs, "\n")))
		return
	}
	b, err := fs.ReadFile(n.fsys, strings.TrimPrefix(r.URL.Path, "/"))
	if err != nil {
		http.NotFound(w, r)
		return
	}
	w.Write(b)
}

func (n *nova) hit(p string) int {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.hits[p]
}

func serve(t *testing.T, n *nova) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(n)
	t.Cleanup(srv.Close)
	return srv
}

// client is a Client with timeouts short enough for tests.
func client(base string) *Client {
	return &Client{BaseURL: base, HTTPClient: datasource.HTTPClient{RequestTimeout: 500 * time.Millisecond, Backoff: time.Millisecond}}
}

// viaDrive is what configdrive.Read makes of fsys, as the HTTP source
// labels it.
func viaDrive(t *testing.T, fsys fs.FS, base string) *instance.Data {
	t.Helper()
	d, err := configdrive.Read(fsys)
	if err != nil {
		t.Fatalf("configdrive.Read: %v", err)
	}
	d.Datasource, d.Subplatform = "openstack", "metadata ("+base+")"
	return d
}

func file(s string) *fstest.MapFile { return &fstest.MapFile{Data: []byte(s)} }

const md = `{"uuid": "83679162-1378-4288-a2d4-70e13ec132aa", "hostname": "vm-1", "name": "vm-1",
 "availability_zone": "nova", "launch_index": 0, "public_keys": {"k": "ssh-ed25519 AAAA k@x"},
 "random_seed": "c2VlZA==", "admin_pass": "s3cret", "meta": {"role": "web"}}`

// TestSameModelAsConfigDrive serves config drives over HTTP and checks that
// the HTTP source reads the same instance as the config drive reader.
func TestSameModelAsConfigDrive(t *testing.T) {
	for _, tt := range []struct {
		name string
		fsys fs.FS
		// drop, from the drive's model, what the HTTP source does not read.
		drop func(*instance.Data)
	}{
		{"configdrive fixture", os.DirFS("../configdrive/testdata/config-2"), func(d *instance.Data) { delete(d.Meta, "ec2_metadata") }},
		{"latest only", fstest.MapFS{"openstack/latest/meta_data.json": file(md)}, nil},
		{"newest known of several", fstest.MapFS{
			"openstack/2013-04-04/meta_data.json": file(`{"uuid": "old"}`),
			"openstack/2017-02-22/meta_data.json": file(md),
			"openstack/2017-02-22/user_data":      file("#!/bin/sh\necho hi\n"),
			"openstack/2099-01-01/meta_data.json": file(`{"uuid": "unknown-future"}`),
			"openstack/latest/meta_data.json":     file(`{"uuid": "latest"}`),
		}, nil},
		{"empty user_data, vendor data lists, files and content", fstest.MapFS{
			"openstack/latest/meta_data.json": file(`{"uuid": "i-1", "files": [
				{"path": "/etc/a", "content_path": "/content/0000"},
				{"path": "etc/b", "content_path": "content/0001"},
				{"path": "/etc/again", "content_path": "/content//0000"},
				{"content_path": "/content/9999"}]}`),
			"openstack/latest/user_data":         file(""),
			"openstack/latest/vendor_data.json":  file(`{"cloud-init": ["#cloud-config\na: 1\n", "#!/bin/sh\ntrue\n"], "other": 1}`),
			"openstack/latest/vendor_data2.json": file(`"#cloud-config\nb: 2\n"`),
			"openstack/content/0000":             file("file a\n"),
			"openstack/content/0001":             file(""),
		}, nil},
		{"legacy network_config", fstest.MapFS{
			"openstack/latest/meta_data.json": file(`{"uuid": "i-2", "network_config": {"content_path": "/content/0000"}}`),
			"openstack/content/0000":          file("auto eth0\niface eth0 inet dhcp\n"),
		}, nil},
		{"network_data.json wins over network_config", fstest.MapFS{
			"openstack/latest/meta_data.json":    file(`{"uuid": "i-3", "network_config": {"content_path": "/content/0000"}}`),
			"openstack/latest/network_data.json": file(`{"links": [], "networks": [], "services": []}`),
		}, nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			n := &nova{fsys: tt.fsys}
			srv := serve(t, n)
			got, err := client(srv.URL).Read(context.Background())
			if err != nil {
				t.Fatalf("Read: %v", err)
			}
			want := viaDrive(t, tt.fsys, srv.URL)
			if tt.drop != nil {
				tt.drop(want)
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("Read over HTTP:\n got %+v\nwant %+v", got, want)
			}
			if got.InstanceID == "" || got.CloudName != "openstack" || got.Platform != "openstack" {
				t.Errorf("got %+v, want an instance id and openstack labels", got)
			}
		})
	}
}

func TestFixtureFields(t *testing.T) {
	n := &nova{fsys: fstest.MapFS{
		"openstack/2018-08-27/meta_data.json":    file(md),
		"openstack/2018-08-27/network_data.json": file(`{"links": []}`),
		"openstack/2018-08-27/user_data":         file("#cloud-config\n"),
	}}
	srv := serve(t, n)
	d, err := client(srv.URL + "/").Read(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	zero := 0
	if d.InstanceID != "83679162-1378-4288-a2d4-70e13ec132aa" || d.LocalHostname != "vm-1" || d.AvailabilityZone != "nova" ||
		!reflect.DeepEqual(d.PublicKeys, []string{"ssh-ed25519 AAAA k@x"}) || !reflect.DeepEqual(d.LaunchIndex, &zero) ||
		string(d.RandomSeed) != "seed" || d.AdminPass != "s3cret" || string(d.UserData) != "#cloud-config\n" ||
		d.NetworkFormat != instance.NetworkDataJSON || string(d.Network) != `{"links": []}` ||
		d.VendorData != nil || d.VendorData2 != nil {
		t.Errorf("Read = %+v", d)
	}
	if d.Datasource != "openstack" || d.Subplatform != "metadata ("+srv.URL+")" {
		t.Errorf("Datasource %q Subplatform %q", d.Datasource, d.Subplatform)
	}
	if _, ok := d.Meta["admin_pass"]; ok {
		t.Error("admin_pass is in Meta")
	}
	// vendor_data.json and vendor_data2.json were asked for and 404ed.
	for _, p := range []string{"/openstack", "/openstack/2018-08-27/vendor_data.json", "/openstack/2018-08-27/vendor_data2.json"} {
		if n.hit(p) != 1 {
			t.Errorf("%s fetched %d times, want once", p, n.hit(p))
		}
	}
}

func TestPickVersion(t *testing.T) {
	for _, tt := range []struct{ list, want string }{
		{"2012-08-10\n2013-04-04\n2018-08-27\nlatest\n", "2018-08-27"},
		{"2012-08-10\r\n2016-06-30\r\nlatest", "2016-06-30"},
		{" 2013-10-17 \n2099-12-31\n", "2013-10-17"},
		{"2099-12-31\nlatest", "latest"},
		{"", "latest"},
		{"<html>nope</html>", "latest"},
	} {
		if got := PickVersion(tt.list); got != tt.want {
			t.Errorf("PickVersion(%q) = %q, want %q", tt.list, got, tt.want)
		}
	}
}

func TestVersionListFallback(t *testing.T) {
	// A 404 on /openstack (a proxy that serves files only): "latest".
	n := &nova{
		fsys:  fstest.MapFS{"openstack/latest/meta_data.json": file(`{"uuid": "from-latest"}`)},
		fault: map[string]http.HandlerFunc{"/openstack": http.NotFound},
	}
	srv := serve(t, n)
	d, err := client(srv.URL).Read(context.Background())
	if err != nil || d.InstanceID != "from-latest" {
		t.Fatalf("Read = %+v, %v; want the latest instance", d, err)
	}
}

func TestBadServers(t *testing.T) {
	drive := fstest.MapFS{
		"openstack/2018-08-27/meta_data.json": file(md),
		"openstack/2018-08-27/user_data":      file(strings.Repeat("u", 1000)),
		"openstack/content/0000":              file("c"),
	}
	const mdPath = "/openstack/2018-08-27/meta_data.json"
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
	for _, tt := range []struct {
		name    string
		fault   map[string]http.HandlerFunc
		maxBody int64
		want    string // in the error, after the server's URL
		hits    map[string]int
	}{
		{name: "500 on meta_data.json", fault: map[string]http.HandlerFunc{mdPath: status(500)},
			want: mdPath + ": HTTP 500 Internal Server Error (3 tries)", hits: map[string]int{mdPath: 3}},
		{name: "500 on the version list", fault: map[string]http.HandlerFunc{"/openstack": status(503)},
			want: "/openstack: HTTP 503 Service Unavailable (3 tries)", hits: map[string]int{"/openstack": 3, mdPath: 0}},
		{name: "404 on meta_data.json", fault: map[string]http.HandlerFunc{mdPath: http.NotFound},
			want: mdPath + ": HTTP 404 Not Found", hits: map[string]int{mdPath: 1}},
		{name: "403 on user_data", fault: map[string]http.HandlerFunc{"/openstack/2018-08-27/user_data": status(403)},
			want: "/openstack/2018-08-27/user_data: HTTP 403 Forbidden"},
		{name: "slow meta_data.json", fault: map[string]http.HandlerFunc{mdPath: slow},
			want: mdPath + ": no complete answer within 500ms (3 tries)", hits: map[string]int{mdPath: 3}},
		{name: "garbage meta_data.json", fault: map[string]http.HandlerFunc{mdPath: body(`{"uuid": "x",,}`)},
			want: mdPath + ": invalid JSON at byte 14 (line 1:14)"},
		{name: "meta_data.json not an object", fault: map[string]http.HandlerFunc{mdPath: body(`["uuid"]`)},
			want: mdPath + ": want a JSON object, got a list"},
		{name: "garbage network_data.json", fault: map[string]http.HandlerFunc{"/openstack/2018-08-27/network_data.json": body("{\n\"links\": [}")},
			want: "/openstack/2018-08-27/network_data.json: invalid JSON at byte 13 (line 2:11)"},
		{name: "garbage vendor_data2.json", fault: map[string]http.HandlerFunc{"/openstack/2018-08-27/vendor_data2.json": body("nope")},
			want: "/openstack/2018-08-27/vendor_data2.json: invalid JSON at byte 2"},
		{name: "oversized user_data", maxBody: 999,
			want: "/openstack/2018-08-27/user_data: body over the 999 byte limit"},
		{name: "oversized meta_data.json", fault: map[string]http.HandlerFunc{mdPath: body(`{"uuid": "x", "pad": "` + strings.Repeat("p", MaxMetadata) + `"}`)},
			want: mdPath + ": body over the 1048576 byte limit"},
		{name: "no uuid", fault: map[string]http.HandlerFunc{mdPath: body(`{"hostname": "h"}`)},
			want: ": openstack/2018-08-27/meta_data.json: \"uuid\": missing"},
		{name: "missing injected file", fault: map[string]http.HandlerFunc{mdPath: body(`{"uuid": "x", "files": [{"path": "/etc/f", "content_path": "/content/0001"}]}`)},
			want: ": openstack/2018-08-27/meta_data.json: \"files\" element 0: file /etc/f: open openstack/content/0001: file does not exist"},
		{name: "500 on an injected file", fault: map[string]http.HandlerFunc{
			mdPath:                    body(`{"uuid": "x", "files": [{"path": "/etc/f", "content_path": "/content/0000"}]}`),
			"/openstack/content/0000": status(500)},
			want: "/openstack/content/0000: HTTP 500 Internal Server Error (3 tries)"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			n := &nova{fsys: drive, fault: tt.fault}
			srv := serve(t, n)
			c := client(srv.URL)
			c.MaxBody = tt.maxBody
			d, err := c.Read(context.Background())
			if err == nil || !strings.Contains(err.Error(), srv.URL+tt.want) {
				t.Fatalf("Read = %+v, %v; want an error containing %q", d, err, srv.URL+tt.want)
			}
			for p, want := range tt.hits {
				if got := n.hit(p); got != want {
					t.Errorf("%s: %d requests, want %d", p, got, want)
				}
			}
		})
	}
}

func TestContext(t *testing.T) {
	n := &nova{fsys: fstest.MapFS{"openstack/latest/meta_data.json": file(md)}}
	srv := serve(t, n)

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := client(srv.URL).Read(ctx)
	if !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), srv.URL+"/openstack") {
		t.Errorf("cancelled: err = %v, want context.Canceled naming the URL", err)
	}
	if n.hit("/openstack") != 0 {
		t.Errorf("cancelled: %d requests, want none", n.hit("/openstack"))
	}

	// A server that never answers, a request timeout longer than the
	// whole bound: the bound wins.
	n.fault = map[string]http.HandlerFunc{"/openstack": func(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() }}
	c := client(srv.URL)
	c.RequestTimeout = 10 * time.Second
	ctx, cancel = context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err = c.Read(ctx)
	if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), srv.URL+"/openstack") {
		t.Errorf("deadline: err = %v, want the deadline naming the URL", err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("deadline: Read took %v", d)
	}
}

func TestNoServer(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	base := srv.URL
	srv.Close()
	_, err := client(base).Read(context.Background())
	if err == nil || !strings.Contains(err.Error(), "GET "+base+"/openstack: dial tcp") {
		t.Errorf("err = %v, want a dial error naming the URL", err)
	}
}
