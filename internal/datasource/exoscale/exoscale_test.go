package exoscale

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"

	"github.com/earlyinit/earlyinit/internal/datasource"
	"github.com/earlyinit/earlyinit/internal/dmi"
	"github.com/earlyinit/earlyinit/internal/httpget"
)

func TestPlatform(t *testing.T) {
	for _, tc := range []struct {
		info dmi.Info
		want bool
	}{
		{dmi.Info{SysVendor: "Exoscale", ProductName: "Exoscale Compute Platform"}, true},
		{dmi.Info{ProductName: "Exoscale"}, true},
		{dmi.Info{SysVendor: "Exoscale", ProductName: "OpenStack Nova"}, false},
		{dmi.Info{SysVendor: "Apache Software Foundation", ProductName: "CloudStack KVM Hypervisor"}, false},
		{dmi.Info{ProductName: "exoscale"}, false},
		{dmi.Info{}, false},
	} {
		if got := Source.Platform(tc.info); got != tc.want {
			t.Errorf("Platform(%+v) = %v, want %v", tc.info, got, tc.want)
		}
	}
}

// exoscale plays the metadata service and the password server on one
// mux, as cloud-init's test_get_data records them.
type exoscale struct {
	password   string
	pwStatus   int
	listing    string
	userData   string
	sent       []string
	noUserData bool
}

func (e *exoscale) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	answers := map[string]string{
		"/1.0/meta-data/":               e.listing,
		"/1.0/meta-data/instance-id":    "12345",
		"/1.0/meta-data/local-hostname": "myname",
	}
	if !e.noUserData {
		answers["/1.0/user-data"] = e.userData
	}
	if h := r.Header.Get("DomU_Request"); h != "" {
		e.sent = append(e.sent, r.URL.Path+" "+h)
		switch {
		case e.pwStatus != 0:
			w.WriteHeader(e.pwStatus)
		case h == "send_my_password":
			w.Write([]byte(e.password))
		default:
			w.Write([]byte("saved_password"))
		}
		return
	}
	b, ok := answers[r.URL.Path]
	if !ok {
		http.NotFound(w, r)
		return
	}
	w.Write([]byte(b))
}

func recorded() *exoscale {
	return &exoscale{password: "p@ssw0rd", listing: "instance-id\nlocal-hostname", userData: "#cloud-config"}
}

func client(t *testing.T, e *exoscale) *Client {
	srv := httptest.NewServer(e)
	t.Cleanup(srv.Close)
	return &Client{BaseURL: srv.URL, PasswordURL: srv.URL + "/1.0/", HTTPClient: datasource.HTTPClient{HTTP: &httpget.Getter{Retries: -1}}}
}

// TestRead: cloud-init's test_get_data, test_get_data_saved_password and
// test_get_data_no_password.
func TestRead(t *testing.T) {
	for _, tc := range []struct {
		name, answer, want string
		sent               []string
	}{
		{"password", "p@ssw0rd", "p@ssw0rd", []string{"/1.0/ send_my_password", "/1.0/ saved_password"}},
		{"saved", "saved_password", "", []string{"/1.0/ send_my_password"}},
		{"none", "", "", []string{"/1.0/ send_my_password"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := recorded()
			e.password = tc.answer
			c := client(t, e)
			var logged []string
			c.Logf = func(f string, a ...any) { logged = append(logged, fmt.Sprintf(f, a...)) }
			d, err := c.Read(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if d.InstanceID != "12345" || d.LocalHostname != "myname" || string(d.UserData) != "#cloud-config" {
				t.Errorf("id %q, hostname %q, user-data %q", d.InstanceID, d.LocalHostname, d.UserData)
			}
			if want := map[string]any{"instance-id": "12345", "local-hostname": "myname"}; !reflect.DeepEqual(d.Meta, want) {
				t.Errorf("meta %v", d.Meta)
			}
			if d.Datasource != "exoscale" || d.CloudName != "exoscale" {
				t.Errorf("ds %q, cloud %q", d.Datasource, d.CloudName)
			}
			if d.AdminPass != tc.want || !reflect.DeepEqual(e.sent, tc.sent) {
				t.Errorf("password %q, sent %q", d.AdminPass, e.sent)
			}
			if len(logged) != 0 {
				t.Errorf("logged %q", logged)
			}
		})
	}
}

// TestPasswordServerDown: cloud-init's
// test_read_metadata_when_password_server_unreachable: the metadata is
// read, without a password, and the failure logged.
func TestPasswordServerDown(t *testing.T) {
	e := recorded()
	e.pwStatus = 502
	c := client(t, e)
	var logged []string
	c.Logf = func(f string, a ...any) { logged = append(logged, fmt.Sprintf(f, a...)) }
	d, err := c.Read(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if d.AdminPass != "" || len(logged) != 1 || !strings.Contains(logged[0], "502") {
		t.Errorf("password %q, logged %q", d.AdminPass, logged)
	}
}

func TestPasswordURL(t *testing.T) {
	for _, tc := range []struct{ base, want string }{
		{"http://169.254.169.254", "http://169.254.169.254:8080/1.0/"},
		{"http://169.254.169.254:80", "http://169.254.169.254:8080/1.0/"},
		{"http://[fd00:ec2::254]", "http://[fd00:ec2::254]:8080/1.0/"},
		{"http://[fe80::a9fe:a9fe%25eth0]", "http://[fe80::a9fe:a9fe%25eth0]:8080/1.0/"},
	} {
		got, err := PasswordURL(tc.base)
		if err != nil || got != tc.want {
			t.Errorf("PasswordURL(%q) = %q, %v; want %q", tc.base, got, err, tc.want)
		}
	}
	if _, err := PasswordURL("no host"); err == nil {
		t.Error("no error for a URL without a host")
	}
}

func TestReadErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		edit func(*exoscale)
		want []string
	}{
		{"no instance-id", func(e *exoscale) { e.listing = "local-hostname" }, []string{"/1.0/meta-data/instance-id: missing"}},
		{"listing 404", func(e *exoscale) { e.listing = "nothing-here" }, []string{"/1.0/meta-data/nothing-here", "404"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := recorded()
			tc.edit(e)
			_, err := client(t, e).Read(context.Background())
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
	e := recorded()
	e.noUserData = true
	d, err := client(t, e).Read(context.Background())
	if err != nil || d.UserData != nil {
		t.Errorf("no user-data: %q, %v", d.UserData, err)
	}
}
