//go:build !initrd

package httpget

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// seen is a request a recorder got.
type seen struct {
	method, host, path, body   string
	auth, cookie, ctype, agent string
}

// recorder is an http server on 127.0.0.1 that records its requests and
// answers them with h.
type recorder struct {
	srv  *httptest.Server
	port string // ":PORT"
	mu   sync.Mutex
	reqs []seen
}

func newRecorder(t *testing.T, h http.HandlerFunc) *recorder {
	rec := &recorder{}
	rec.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		rec.mu.Lock()
		rec.reqs = append(rec.reqs, seen{method: r.Method, host: r.Host, path: r.URL.RequestURI(), body: string(b),
			auth: r.Header.Get("Authorization"), cookie: r.Header.Get("Cookie"), ctype: r.Header.Get("Content-Type"), agent: r.Header.Get("User-Agent")})
		rec.mu.Unlock()
		h(w, r)
	}))
	t.Cleanup(rec.srv.Close)
	rec.port = rec.srv.URL[strings.LastIndex(rec.srv.URL, ":"):]
	return rec
}

func (rec *recorder) got() []seen {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	return append([]seen(nil), rec.reqs...)
}

// redirector answers /hop/N with a redirect of code to /hop/N-1, and
// /hop/0 (and anything else) with 200 "done".
func redirector(code int) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if n, ok := strings.CutPrefix(r.URL.Path, "/hop/"); ok && n != "0" {
			i, _ := strconv.Atoi(n)
			w.Header().Set("Location", fmt.Sprintf("/hop/%d", i-1))
			w.WriteHeader(code)
			return
		}
		io.WriteString(w, "done")
	}
}

// following is a Getter that follows redirects and resolves every name
// under .test to 127.0.0.1.
func following() *Getter {
	g := getter()
	g.Redirects = maxRedirects
	g.Resolve = func(ctx context.Context, host string) ([]netip.Addr, error) {
		if strings.HasSuffix(host, ".test") {
			return []netip.Addr{netip.MustParseAddr("127.0.0.1")}, nil
		}
		return nil, errors.New("no such host")
	}
	return g
}

// TestRedirectMethods: a POST redirected by 301, 302 or 303 becomes a GET
// without its body or Content-Type; by 307 or 308 it stays a POST with
// both, as requests has it. A zero Getter follows none.
func TestRedirectMethods(t *testing.T) {
	for _, tt := range []struct {
		code         int
		method, body string
	}{
		{301, "GET", ""},
		{302, "GET", ""},
		{303, "GET", ""},
		{307, "POST", "k=v"},
		{308, "POST", "k=v"},
	} {
		rec := newRecorder(t, redirector(tt.code))
		b, err := following().Post(context.Background(), rec.srv.URL+"/hop/1", "application/x-www-form-urlencoded", []byte("k=v"), 100)
		if err != nil || string(b) != "done" {
			t.Errorf("%d: %q, %v", tt.code, b, err)
			continue
		}
		got := rec.got()
		if len(got) != 2 || got[0].method != "POST" || got[0].body != "k=v" {
			t.Fatalf("%d: requests %+v", tt.code, got)
		}
		ctype := ""
		if tt.body != "" {
			ctype = "application/x-www-form-urlencoded"
		}
		if r := got[1]; r.method != tt.method || r.path != "/hop/0" || r.body != tt.body || r.ctype != ctype || r.agent != userAgent {
			t.Errorf("%d: redirected request %+v, want %s with body %q", tt.code, r, tt.method, tt.body)
		}
	}

	// Without Redirects, a redirect is an error naming its target.
	rec := newRecorder(t, redirector(302))
	_, err := getter().Get(context.Background(), Request{URL: rec.srv.URL + "/hop/1", Limit: 100})
	if Status(err) != 302 || !strings.Contains(err.Error(), "(redirect to /hop/0 not followed)") || len(rec.got()) != 1 {
		t.Errorf("zero Getter: %v, %d requests", err, len(rec.got()))
	}
}

// TestRedirectBound: maxRedirects redirects are followed; one more is an
// error that says so, and its target is not asked for.
func TestRedirectBound(t *testing.T) {
	rec := newRecorder(t, redirector(302))
	g := following()
	b, err := g.Get(context.Background(), Request{URL: rec.srv.URL + fmt.Sprintf("/hop/%d", maxRedirects), Limit: 100})
	if err != nil || string(b) != "done" || len(rec.got()) != maxRedirects+1 {
		t.Fatalf("%d redirects: %q, %v, %d requests", maxRedirects, b, err, len(rec.got()))
	}
	rec.reqs = nil
	u := rec.srv.URL + fmt.Sprintf("/hop/%d", maxRedirects+1)
	_, err = g.Get(context.Background(), Request{URL: u, Limit: 100})
	var re *redirectError
	want := fmt.Sprintf("GET %s: redirect to %s/hop/0 refused: more than %d redirects", u, rec.srv.URL, maxRedirects)
	if !errors.As(err, &re) || err.Error() != want {
		t.Errorf("err = %v\nwant %s", err, want)
	}
	if n := len(rec.got()); n != maxRedirects+1 {
		t.Errorf("%d requests, want %d", n, maxRedirects+1)
	}
}

// TestRedirectAuthorization: Authorization goes along to the same server
// only; Cookie never. The redirect to another host name, or to another
// port of the same one, does not carry it.
func TestRedirectAuthorization(t *testing.T) {
	var target *recorder
	target = newRecorder(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/same":
			http.Redirect(w, r, "/final", http.StatusFound)
		case "/to-host":
			http.Redirect(w, r, "http://other.test"+target.port+"/final", http.StatusFound)
		default:
			io.WriteString(w, "done")
		}
	})
	origin := newRecorder(t, func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "http://a.test"+target.port+"/final", http.StatusTemporaryRedirect)
	})
	hdr := map[string]string{"Authorization": "Bearer s3cret", "Cookie": "session=s3cret"}
	for _, tt := range []struct {
		name, url string
		auth      []string // Authorization of each request the target got
	}{
		{"same server", "http://a.test" + target.port + "/same", []string{"Bearer s3cret", "Bearer s3cret"}},
		{"another host name", "http://a.test" + target.port + "/to-host", []string{"Bearer s3cret", ""}},
		{"another port", "http://a.test" + origin.port + "/", []string{""}},
	} {
		target.reqs, origin.reqs = nil, nil
		if _, err := following().Get(context.Background(), Request{URL: tt.url, Header: hdr, Limit: 100}); err != nil {
			t.Errorf("%s: %v", tt.name, err)
			continue
		}
		got := target.got()
		if len(got) != len(tt.auth) {
			t.Errorf("%s: the target got %+v", tt.name, got)
			continue
		}
		for i, r := range got {
			if r.auth != tt.auth[i] {
				t.Errorf("%s: request %d to %s%s: Authorization %q, want %q", tt.name, i, r.host, r.path, r.auth, tt.auth[i])
			}
			if wantCookie := i == 0 && tt.name != "another port"; (r.cookie != "") != wantCookie {
				t.Errorf("%s: request %d to %s%s: Cookie %q", tt.name, i, r.host, r.path, r.cookie)
			}
		}
	}
}

// TestRedirectErrors: where a redirect leads is shown without its query,
// a failure at the end of the chain names the URL asked for, and a
// redirect to a URL that cannot be fetched is refused.
func TestRedirectErrors(t *testing.T) {
	var rec *recorder
	rec = newRecorder(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/signed":
			http.Redirect(w, r, "/gone?X-Signature=s3cret", http.StatusFound)
		case "/ftp":
			http.Redirect(w, r, "ftp://a.test/x", http.StatusFound)
		case "/user":
			w.Header().Set("Location", "http://user:pw@a.test"+rec.port+"/x")
			w.WriteHeader(http.StatusFound)
		default:
			http.NotFound(w, r)
		}
	})
	u := rec.srv.URL + "/signed"
	_, err := following().Get(context.Background(), Request{URL: u, Limit: 100})
	want := "GET " + u + " redirected to " + rec.srv.URL + "/gone?REDACTED: HTTP 404 Not Found"
	if !NotFound(err) || err.Error() != want || strings.Contains(err.Error(), "s3cret") {
		t.Errorf("err = %v\nwant %s", err, want)
	}
	for path, want := range map[string]string{
		"/ftp":  `redirect to ftp://a.test/x refused: bad URL: scheme "ftp", want http or https`,
		"/user": "redirect to http://REDACTED@a.test" + rec.port + "/x refused: bad URL: user info is not supported",
	} {
		_, err := following().Get(context.Background(), Request{URL: rec.srv.URL + path, Limit: 100})
		var re *redirectError
		if !errors.As(err, &re) || err.Error() != "GET "+rec.srv.URL+path+": "+want || strings.Contains(err.Error(), "pw") {
			t.Errorf("%s: err = %v\nwant %s", path, err, want)
		}
	}
}

// TestStripAuth is requests' should_strip_auth, case by case.
func TestStripAuth(t *testing.T) {
	for _, tt := range []struct {
		from, to string
		strip    bool
	}{
		{"http://a.example/x", "http://a.example/y", false},
		{"http://a.example/x", "http://A.EXAMPLE:80/y", false},
		{"http://a.example/x", "https://a.example/y", false},
		{"http://a.example:80/x", "https://a.example:443/y", false},
		{"https://a.example/x", "https://a.example:443/y", false},
		{"http://a.example/x", "http://b.example/y", true},
		{"http://a.example/x", "http://a.example:8080/y", true},
		{"http://a.example:8080/x", "https://a.example/y", true},
		{"http://a.example/x", "https://a.example:8443/y", true},
		{"https://a.example/x", "http://a.example/y", true},
	} {
		from, _ := url.Parse(tt.from)
		to, _ := url.Parse(tt.to)
		if got := stripAuth(from, to); got != tt.strip {
			t.Errorf("%s -> %s: strip %v, want %v", tt.from, tt.to, got, tt.strip)
		}
	}
}
