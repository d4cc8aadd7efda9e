package linode

import (
	"context"
	"encoding/base64"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/earlyinit/earlyinit/internal/datasource"
	"github.com/earlyinit/earlyinit/internal/dmi"
	"github.com/earlyinit/earlyinit/internal/httpget"
)

// TestPlatform: cloud-init's is_on_akamai cases and ds-identify's.
func TestPlatform(t *testing.T) {
	for _, tc := range []struct {
		info dmi.Info
		want bool
	}{
		{dmi.Info{SysVendor: "Linode"}, true},
		{dmi.Info{SysVendor: "Akamai"}, true},
		{dmi.Info{SysVendor: "Linode", ProductName: "Compute Instance"}, true},
		{dmi.Info{SysVendor: "GCE"}, false},
		{dmi.Info{SysVendor: "EC2"}, false},
		{dmi.Info{SysVendor: ""}, false},
		{dmi.Info{SysVendor: "linode"}, false},
		{dmi.Info{SysVendor: "Akamai Technologies"}, false},
	} {
		if got := Source.Platform(tc.info); got != tc.want {
			t.Errorf("Platform(%+v) = %v, want %v", tc.info, got, tc.want)
		}
	}
	if Source.Name != "akamai" || Source.Class != "Akamai" {
		t.Errorf("source %q, class %q", Source.Name, Source.Class)
	}
}

const testToken = "tok-3f9a"

// service plays the metadata service: a token for a PUT with the expiry
// header, then the documents for GETs that carry it.
type service struct {
	instance, userData, network       string
	noInstance, noUserData, noNetwork bool
	tokenStatus                       int

	mu    sync.Mutex
	asked []string
}

func (s *service) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	s.asked = append(s.asked, r.Method+" "+r.URL.Path)
	s.mu.Unlock()
	if r.URL.Path == TokenPath {
		switch {
		case r.Method != http.MethodPut:
			w.WriteHeader(http.StatusMethodNotAllowed)
		case s.tokenStatus != 0:
			w.WriteHeader(s.tokenStatus)
		case r.Header.Get(TokenExpiryHeader) != TokenExpiry:
			w.WriteHeader(http.StatusBadRequest)
		default:
			w.Write([]byte(testToken))
		}
		return
	}
	if r.Header.Get(TokenHeader) != testToken {
		w.WriteHeader(http.StatusUnauthorized)
		return
	}
	wantJSON := r.Header.Get("Accept") == "application/json"
	switch {
	case r.URL.Path == InstancePath && wantJSON && !s.noInstance:
		w.Write([]byte(s.instance))
	case r.URL.Path == UserDataPath && !s.noUserData:
		w.Write([]byte(s.userData))
	case r.URL.Path == NetworkPath && wantJSON && !s.noNetwork:
		w.Write([]byte(s.network))
	default:
		http.NotFound(w, r)
	}
}

func read(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func recorded(t *testing.T) *service {
	return &service{
		instance: read(t, "instance.json"),
		network:  read(t, "network.json"),
		userData: base64.StdEncoding.EncodeToString([]byte("#cloud-config\nhostname: linode\n")),
	}
}

func readFrom(t *testing.T, s *service) (*Client, string) {
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	return &Client{BaseURL: srv.URL, HTTPClient: datasource.HTTPClient{HTTP: &httpget.Getter{Retries: -1}}}, srv.URL
}

func TestRead(t *testing.T) {
	s := recorded(t)
	c, base := readFrom(t, s)
	d, err := c.Read(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if d.InstanceID != "1" || d.Region != "us-west" || d.LocalHostname != "" || d.CloudName != "akamai" {
		t.Errorf("id %q, region %q, hostname %q, cloud %q", d.InstanceID, d.Region, d.LocalHostname, d.CloudName)
	}
	if string(d.UserData) != "#cloud-config\nhostname: linode\n" {
		t.Errorf("user-data %q", d.UserData)
	}
	if d.Meta["label"] != "test-instance" || d.Meta["network"] == nil || d.Network != nil {
		t.Errorf("meta %v, network %s", d.Meta, d.Network)
	}
	if d.Subplatform != "metadata ("+base+")" {
		t.Errorf("subplatform %q", d.Subplatform)
	}
	want := "PUT /v1/token,GET /v1/instance,GET /v1/user-data,GET /v1/network"
	if got := strings.Join(s.asked, ","); got != want {
		t.Errorf("asked %s, want %s", got, want)
	}
}

// TestOptional: no user-data, no network description, or user-data that
// is not base64 (kept as it is, as cloud-init keeps it).
func TestOptional(t *testing.T) {
	s := recorded(t)
	s.noUserData, s.noNetwork = true, true
	c, _ := readFrom(t, s)
	d, err := c.Read(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if d.UserData != nil || d.Meta["network"] != nil {
		t.Errorf("user-data %q, network %v", d.UserData, d.Meta["network"])
	}

	s = recorded(t)
	s.userData = "#cloud-config\nhostname: x\n"
	c, _ = readFrom(t, s)
	var logged []string
	c.Logf = func(f string, a ...any) { logged = append(logged, f) }
	if d, err = c.Read(context.Background()); err != nil {
		t.Fatal(err)
	}
	if string(d.UserData) != s.userData || len(logged) != 1 {
		t.Errorf("user-data %q, logged %q", d.UserData, logged)
	}
}

func TestDecodeUserData(t *testing.T) {
	for _, tc := range []struct {
		in, want string
		ok       bool
	}{
		{"I2Nsb3VkLWNvbmZpZwo=", "#cloud-config\n", true},
		{"I2Nsb3Vk\nLWNvbmZpZwo=\n", "#cloud-config\n", true},
		{"", "", true},
		{"#cloud-config\n", "#cloud-config\n", false},
		{"I2Nsb3VkLWNvbmZpZwo", "I2Nsb3VkLWNvbmZpZwo", false},
	} {
		got, ok := DecodeUserData([]byte(tc.in))
		if string(got) != tc.want || ok != tc.ok {
			t.Errorf("DecodeUserData(%q) = %q, %v; want %q, %v", tc.in, got, ok, tc.want, tc.ok)
		}
	}
}

func TestReadErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		edit func(*service)
		want []string
	}{
		{"no token", func(s *service) { s.tokenStatus = 403 }, []string{"PUT", TokenPath, "403"}},
		{"instance 404", func(s *service) { s.noInstance = true }, []string{InstancePath, "404"}},
		{"instance empty", func(s *service) { s.instance = "" }, []string{InstancePath, "unexpected end"}},
		{"instance syntax", func(s *service) { s.instance = `{"id": 1` }, []string{InstancePath, "unexpected end"}},
		{"instance not an object", func(s *service) { s.instance = `[]` }, []string{InstancePath, "want a JSON object"}},
		{"no id", func(s *service) { s.instance = `{"label": "x"}` }, []string{InstancePath, "id: missing"}},
		{"id an object", func(s *service) { s.instance = `{"id": {}}` }, []string{InstancePath, "id: want string, got object"}},
		{"region a number", func(s *service) { s.instance = `{"id": 1, "region": 5}` }, []string{InstancePath, "region: want string, got number"}},
		{"network not an object", func(s *service) { s.network = `[1]` }, []string{NetworkPath, "want a JSON object"}},
		{"network syntax", func(s *service) { s.network = `{` }, []string{NetworkPath, "invalid JSON"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := recorded(t)
			tc.edit(s)
			c, _ := readFrom(t, s)
			_, err := c.Read(context.Background())
			if err == nil {
				t.Fatal("no error")
			}
			if strings.Contains(err.Error(), testToken) {
				t.Errorf("error %q shows the token", err)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
		})
	}
}
