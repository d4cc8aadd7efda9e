//go:build !initrd

package httpget

import (
	"context"
	"encoding/base64"
	"errors"
	"io"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/earlyinit/earlyinit/internal/httpget/httpgettest"
)

// proxyEnvNames are the variables ProxyFromEnvironment reads.
var proxyEnvNames = []string{"http_proxy", "HTTP_PROXY", "https_proxy", "HTTPS_PROXY", "all_proxy", "ALL_PROXY", "no_proxy", "NO_PROXY"}

// clearProxyEnv unsets the proxy variables for the test (t.Setenv puts
// them back after it).
func clearProxyEnv(t *testing.T) {
	for _, k := range proxyEnvNames {
		t.Setenv(k, "")
	}
	for _, k := range proxyEnvNames {
		if err := os.Unsetenv(k); err != nil {
			t.Fatal(err)
		}
	}
}

// TestProxyFromEnvironment: which variable wins, as Python's requests
// reads them (its answers for these cases, checked with requests 2.34).
func TestProxyFromEnvironment(t *testing.T) {
	for _, tt := range []struct {
		env         map[string]string
		http, https string // the proxy of http://x.test/ and https://x.test/, "" for none, "!..." for an error containing ...
	}{
		{env: nil},
		{env: map[string]string{"http_proxy": "http://a:1", "HTTP_PROXY": "http://b:2"}, http: "http://a:1"},
		{env: map[string]string{"HTTP_PROXY": "http://b:2"}, http: "http://b:2"},
		// Set but empty, the lowercase one still wins: no proxy.
		{env: map[string]string{"http_proxy": "", "HTTP_PROXY": "http://b:2"}},
		{env: map[string]string{"all_proxy": "http://c:3"}, http: "http://c:3", https: "http://c:3"},
		{env: map[string]string{"https_proxy": "http://h:4", "ALL_PROXY": "http://c:3"}, http: "http://c:3", https: "http://h:4"},
		{env: map[string]string{"http_proxy": "", "all_proxy": "http://c:3"}, http: "http://c:3", https: "http://c:3"},
		// no_proxy empty: NO_PROXY counts.
		{env: map[string]string{"http_proxy": "http://a:1", "no_proxy": "", "NO_PROXY": "x.test"}},
		{env: map[string]string{"https_proxy": "http://a:1", "no_proxy": "*"}},
		// No scheme is http://.
		{env: map[string]string{"https_proxy": "proxy.corp:3128"}, https: "http://proxy.corp:3128"},
		{env: map[string]string{"https_proxy": "http://u:p%40ss@proxy.corp:3128/"}, https: "http://u:p%40ss@proxy.corp:3128/"},
		{env: map[string]string{"HTTPS_PROXY": "socks5://u:hunter2@proxy.corp:1080", "http_proxy": "http://a:1"}, http: "http://a:1",
			https: `!HTTPS_PROXY: proxy URL: scheme "socks5" is not supported: only http:// proxies are, which also tunnel https`},
		{env: map[string]string{"https_proxy": "https://u:hunter2@proxy.corp"}, https: "!https_proxy: proxy URL: https:// (TLS to the proxy) is not supported"},
		{env: map[string]string{"http_proxy": "http://u:hunter2@proxy corp:80"}, http: "!http_proxy: not a URL"},
	} {
		f := proxyFromEnv(func(k string) (string, bool) { v, ok := tt.env[k]; return v, ok })
		if tt.http == "" && tt.https == "" && len(tt.env) == 0 {
			if f != nil {
				t.Errorf("no variables: a proxy function")
			}
			continue
		}
		for _, c := range []struct{ url, want string }{{"http://x.test/", tt.http}, {"https://x.test/", tt.https}} {
			got := ""
			var err error
			if f != nil {
				u, _ := url.Parse(c.url)
				var p *url.URL
				p, err = f(u)
				if p != nil {
					got = p.String()
				}
			}
			if want, ok := strings.CutPrefix(c.want, "!"); ok {
				if err == nil || !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "hunter2") {
					t.Errorf("%v: %s: err %v, want %q", tt.env, c.url, err, want)
				}
				continue
			}
			if err != nil || got != c.want {
				t.Errorf("%v: %s: proxy %q, %v; want %q", tt.env, c.url, got, err, c.want)
			}
		}
	}
}

// TestBypassProxy: no_proxy's entries match as requests matches them
// (should_bypass_proxies, with urllib's proxy_bypass_environment): each
// case's answer is requests 2.34's.
func TestBypassProxy(t *testing.T) {
	const list = "192.168.0.0/24,127.0.0.1,localhost.localdomain,172.16.1.1,google.com:6000"
	for _, tt := range []struct {
		no, url string
		bypass  bool
	}{
		{list, "http://192.168.0.1:5000/", true},
		{list, "http://192.168.0.1/", true},
		{list, "http://172.16.1.1/", true},
		{list, "http://172.16.1.1:5000/", true},
		{list, "http://localhost.localdomain:5000/v1.0/", true},
		{list, "http://google.com:6000/", true},
		{list, "http://www.google.com:6000/", true},
		{list, "http://172.16.1.12/", false},
		{list, "http://172.16.1.12:5000/", false},
		{list, "http://google.com:5000/v1.0/", false},
		{"example.com", "http://example.com/", true},
		{"example.com", "http://www.example.com/", true},
		{"example.com", "http://notexample.com/", false},
		{"example.com", "http://EXAMPLE.com/", true},
		{"example.com", "http://example.com:8080/", true},
		{".example.com", "http://example.com/", true},
		{".example.com", "http://a.b.example.com/", true},
		{".example.com", "https://example.org/", false},
		{"*", "http://anything/", true},
		{"*", "http://10.0.0.1/", true},
		{"*,foo", "http://bar/", false},
		{"*.example.com", "http://www.example.com/", false},
		{" EXAMPLE.COM , foo ", "http://example.com/", true},
		{" EXAMPLE.COM , foo ", "http://x.foo/", true},
		{"example.com:8080", "http://example.com:8080/", true},
		{"example.com:8080", "http://example.com/", false},
		{"example.com:8080", "http://sub.example.com:8080/", true},
		{"0.0.1", "http://10.0.0.1/", true},
		{"0.0.1", "http://10.0.0.2/", false},
		{"10.0.0.1:80", "http://10.0.0.1:80/", false},
		{"10.1.2.3/8", "http://10.200.0.1/", true},
		{"10.1.2.3/8", "http://11.0.0.1/", false},
		{"0.0.0.0/0", "http://10.0.0.1/", false},
		{"::1", "http://[::1]/", true},
		{"::1", "http://[::1]:8080/", true},
		{"[::1]", "http://[::1]/", false},
		{".", "http://bar/", false},
		{"", "http://bar/", false},
	} {
		u, err := url.Parse(tt.url)
		if err != nil {
			t.Fatal(err)
		}
		if got := bypassProxy(tt.no, u); got != tt.bypass {
			t.Errorf("no_proxy %q, %s: bypass %v, want %v", tt.no, tt.url, got, tt.bypass)
		}
	}
}

// via is a Proxy function that names p for every URL.
func via(p string) func(*url.URL) (*url.URL, error) {
	return func(*url.URL) (*url.URL, error) { return url.Parse(p) }
}

// TestProxyHTTP: an http request goes to the proxy in absolute form; the
// server's name is the proxy's to resolve (the Getter has no resolver).
func TestProxyHTTP(t *testing.T) {
	proxy := httpgettest.NewProxy(t)
	origin := newRecorder(t, func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "through") })
	g := getter()
	g.Proxy = via(proxy.URL)
	u := "http://origin.test" + origin.port + "/x?y=1"
	b, err := g.Get(context.Background(), Request{URL: u, Limit: 100})
	if err != nil || string(b) != "through" {
		t.Fatalf("Get %s: %q, %v", u, b, err)
	}
	if got := proxy.Requests(); !slices.Equal(got, []string{"GET " + u}) {
		t.Errorf("the proxy got %q", got)
	}
	if got := origin.got(); len(got) != 1 || got[0].host != "origin.test"+origin.port || got[0].path != "/x?y=1" {
		t.Errorf("the server got %+v", got)
	}
}

// TestProxyHTTPS: an https request goes through a CONNECT tunnel; TLS is
// end to end, the server verified by its name against the root's bundle.
func TestProxyHTTPS(t *testing.T) {
	proxy := httpgettest.NewProxy(t)
	ca := httpgettest.NewCA(t, "earlyinit test CA")
	var proxyAuth []string
	srv := newTLSServer(t, ca.Issue(t, httpgettest.Leaf{}), nil, func(w http.ResponseWriter, r *http.Request) {
		proxyAuth = append(proxyAuth, r.Header.Get("Proxy-Authorization"))
		io.WriteString(w, "tunnelled")
	})
	g := getter()
	g.CARoot = httpgettest.Root(t, ca)
	g.Proxy = via(proxy.URL)
	u := "https://" + httpgettest.Name + srv.port + "/x"
	b, err := g.Get(context.Background(), Request{URL: u, Limit: 100})
	if err != nil || string(b) != "tunnelled" {
		t.Fatalf("Get %s: %q, %v", u, b, err)
	}
	if got := proxy.Requests(); !slices.Equal(got, []string{"CONNECT " + httpgettest.Name + srv.port}) {
		t.Errorf("the proxy got %q", got)
	}
	if !slices.Equal(srv.sni, []string{httpgettest.Name}) || !slices.Equal(srv.reqs, []string{"GET /x "}) {
		t.Errorf("the server got SNI %q, requests %q", srv.sni, srv.reqs)
	}

	// A proxy with credentials: the proxy gets them, in the CONNECT only;
	// wrong ones are a 407, which is not tried again.
	proxy = httpgettest.NewProxy(t)
	proxy.Auth = "Basic " + base64.StdEncoding.EncodeToString([]byte("user:p@ss"))
	p, _ := url.Parse(proxy.URL)
	p.User = url.UserPassword("user", "p@ss")
	g.Proxy = via(p.String())
	if b, err := g.Get(context.Background(), Request{URL: u, Limit: 100}); err != nil || string(b) != "tunnelled" {
		t.Fatalf("with credentials: %q, %v", b, err)
	}
	if got := proxy.Requests(); !slices.Equal(got, []string{"CONNECT " + httpgettest.Name + srv.port + " auth=" + proxy.Auth}) {
		t.Errorf("the proxy got %q", got)
	}
	if !slices.Equal(proxyAuth, []string{"", ""}) {
		t.Errorf("the server got Proxy-Authorization %q", proxyAuth)
	}
	p.User = url.UserPassword("user", "hunter2")
	g.Proxy = via(p.String())
	_, err = g.Get(context.Background(), Request{URL: u, Limit: 100})
	var pe *proxyError
	want := "GET " + u + " (through proxy " + proxy.URL + "): the proxy refused the tunnel: HTTP 407 Proxy Authentication Required"
	if !errors.As(err, &pe) || err.Error() != want {
		t.Errorf("wrong credentials: err = %v\nwant %s", err, want)
	}
	if n := len(proxy.Requests()); n != 2 {
		t.Errorf("wrong credentials: %d CONNECTs in all, want 2 (no retry)", n)
	}
}

// TestProxyHTTPAuth: for plain http, the credentials go to the proxy in
// Proxy-Authorization on the request it forwards.
func TestProxyHTTPAuth(t *testing.T) {
	proxy := httpgettest.NewProxy(t)
	proxy.Auth = "Basic " + base64.StdEncoding.EncodeToString([]byte("user:p@ss"))
	origin := newRecorder(t, func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "through") })
	p, _ := url.Parse(proxy.URL)
	p.User = url.UserPassword("user", "p@ss")
	g := getter()
	g.Proxy = via(p.String())
	u := "http://origin.test" + origin.port + "/x"
	if b, err := g.Get(context.Background(), Request{URL: u, Limit: 100}); err != nil || string(b) != "through" {
		t.Fatalf("Get %s: %q, %v", u, b, err)
	}
	if got := proxy.Requests(); !slices.Equal(got, []string{"GET " + u + " auth=" + proxy.Auth}) {
		t.Errorf("the proxy got %q", got)
	}
	// The caller cannot set it: it is the Getter's, for its proxy.
	_, err := g.Get(context.Background(), Request{URL: u, Header: map[string]string{"Proxy-Authorization": "x"}, Limit: 100})
	if err == nil || !strings.Contains(err.Error(), "header Proxy-Authorization is set by the client") {
		t.Errorf("caller's Proxy-Authorization: %v", err)
	}
}

// TestProxyFromEnvironmentGet: System's Getter takes the proxy from the
// environment: a host in no_proxy is reached straight, any other (the
// loopback address too, as with requests) through the proxy, and a
// redirect's target is decided on again.
func TestProxyFromEnvironmentGet(t *testing.T) {
	clearProxyEnv(t)
	proxy := httpgettest.NewProxy(t)
	direct := newRecorder(t, func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "direct") })
	origin := newRecorder(t, func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, direct.srv.URL+"/landed", http.StatusFound)
	})
	t.Setenv("http_proxy", proxy.URL)

	g := System("")
	u := direct.srv.URL + "/x"
	if b, err := g.Get(context.Background(), Request{URL: u, Limit: 100}); err != nil || string(b) != "direct" {
		t.Fatalf("Get %s: %q, %v", u, b, err)
	}
	if got := proxy.Requests(); !slices.Equal(got, []string{"GET " + u}) {
		t.Errorf("without no_proxy, the proxy got %q", got)
	}

	t.Setenv("no_proxy", "localhost,127.0.0.1")
	g = System("")
	start := "http://origin.test" + origin.port + "/start"
	if b, err := g.Get(context.Background(), Request{URL: start, Limit: 100}); err != nil || string(b) != "direct" {
		t.Fatalf("Get %s: %q, %v", start, b, err)
	}
	if got := proxy.Requests(); !slices.Equal(got, []string{"GET " + u, "GET " + start}) {
		t.Errorf("with no_proxy, the proxy got %q", got)
	}
	if got := direct.got(); len(got) != 2 || got[1].path != "/landed" {
		t.Errorf("the server in no_proxy got %+v", got)
	}
}

// TestProxyErrors: a proxy that does not answer and a proxy setting that
// cannot be used fail the request, naming the proxy and never its
// credentials.
func TestProxyErrors(t *testing.T) {
	closed := listen(t, "127.0.0.1:0")
	addr := closed.Addr().String()
	closed.Close()
	g := getter()
	g.Retries = -1
	g.Proxy = via("http://user:hunter2@" + addr)
	_, err := g.Get(context.Background(), Request{URL: "http://origin.test/x", Limit: 100})
	if err == nil || !strings.HasPrefix(err.Error(), "GET http://origin.test/x (through proxy http://"+addr+"): dial tcp ") || strings.Contains(err.Error(), "hunter2") {
		t.Errorf("closed proxy: %v", err)
	}

	clearProxyEnv(t)
	t.Setenv("https_proxy", "socks5h://user:hunter2@"+addr)
	_, err = System("").Get(context.Background(), Request{URL: "https://origin.test/x", Limit: 100})
	want := `GET https://origin.test/x: proxy: https_proxy: proxy URL: scheme "socks5h" is not supported: only http:// proxies are, which also tunnel https`
	if err == nil || err.Error() != want {
		t.Errorf("socks proxy: err = %v\nwant %s", err, want)
	}
}

// TestSystem: System's Getter follows maxRedirects, resolves names, and
// has no proxy when the environment names none.
func TestSystem(t *testing.T) {
	clearProxyEnv(t)
	g := System("/x")
	if g.Redirects != maxRedirects || g.Resolve == nil || g.Proxy != nil || g.CARoot != "/x" {
		t.Errorf("System: %+v", g)
	}
}
