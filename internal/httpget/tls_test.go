//go:build !initrd

package httpget

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"net"
	"net/http"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/earlyinit/earlyinit/internal/httpget/httpgettest"
)

// tlsServer is an HTTPS server counting its handshakes and recording the
// SNI names and requests it got.
type tlsServer struct {
	url        string
	port       string // ":PORT"
	handshakes atomic.Int32
	mu         sync.Mutex
	sni        []string
	reqs       []string // "METHOD PATH BODY"
}

func newTLSServer(t *testing.T, cert tls.Certificate, cfg *tls.Config, h http.HandlerFunc) *tlsServer {
	s := &tlsServer{}
	if cfg == nil {
		cfg = &tls.Config{}
	}
	cfg.GetConfigForClient = func(hi *tls.ClientHelloInfo) (*tls.Config, error) {
		s.handshakes.Add(1)
		s.mu.Lock()
		s.sni = append(s.sni, hi.ServerName)
		s.mu.Unlock()
		return nil, nil
	}
	if h == nil {
		h = func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "secret-free body") }
	}
	srv := httpgettest.Server(t, cert, cfg, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		s.mu.Lock()
		s.reqs = append(s.reqs, r.Method+" "+r.URL.Path+" "+string(b))
		s.mu.Unlock()
		h(w, r)
	}))
	s.url = srv.URL
	s.port = srv.URL[strings.LastIndex(srv.URL, ":"):]
	return s
}

// resolveTo answers every name with 127.0.0.1.
func resolveTo(ctx context.Context, host string) ([]netip.Addr, error) {
	return []netip.Addr{netip.MustParseAddr("127.0.0.1")}, nil
}

func TestHTTPS(t *testing.T) {
	ca := httpgettest.NewCA(t, "earlyinit test CA")
	other := httpgettest.NewCA(t, "some other CA")
	root := httpgettest.Root(t, ca)
	good := newTLSServer(t, ca.Issue(t, httpgettest.Leaf{}), nil, nil)
	expired := newTLSServer(t, ca.Issue(t, httpgettest.Leaf{NotBefore: time.Now().Add(-48 * time.Hour), NotAfter: time.Now().Add(-24 * time.Hour)}), nil, nil)
	unknown := newTLSServer(t, other.Issue(t, httpgettest.Leaf{}), nil, nil)
	old := newTLSServer(t, ca.Issue(t, httpgettest.Leaf{}), &tls.Config{MinVersion: tls.VersionTLS10, MaxVersion: tls.VersionTLS11}, nil)

	for _, tt := range []struct {
		name    string
		srv     *tlsServer
		url     string // "" means srv.url + "/x"
		want    string // the body, or
		err     string // the error's text after "GET URL: "
		certErr any    // the x509 error type a *CertError wraps
		tries   int32  // handshakes the server saw
		sni     string
	}{
		{name: "IP address", srv: good, want: "secret-free body", tries: 1},
		{name: "name", srv: good, url: "https://" + httpgettest.Name + good.port + "/x", want: "secret-free body", tries: 1, sni: httpgettest.Name},
		{name: "unknown CA", srv: unknown, err: "TLS: certificate of 127.0.0.1 not trusted (checked against " + root + "/etc/ssl/certs/ca-certificates.crt): x509: certificate signed by unknown authority", certErr: x509.UnknownAuthorityError{}, tries: 1},
		{name: "wrong name", srv: good, url: "https://other.test" + good.port + "/x", err: "TLS: certificate of other.test not trusted (checked against " + root + "/etc/ssl/certs/ca-certificates.crt): x509: certificate is valid for earlyinit.test, not other.test", certErr: x509.HostnameError{}, tries: 1, sni: "other.test"},
		{name: "expired", srv: expired, err: "x509: certificate has expired or is not yet valid", certErr: x509.CertificateInvalidError{}, tries: 1},
		{name: "TLS 1.1", srv: old, err: "TLS handshake with 127.0.0.1: remote error: tls: protocol version not supported (2 tries)", tries: 2},
	} {
		t.Run(tt.name, func(t *testing.T) {
			tt.srv.handshakes.Store(0)
			tt.srv.mu.Lock()
			tt.srv.sni = nil
			tt.srv.mu.Unlock()
			u := tt.url
			if u == "" {
				u = tt.srv.url + "/x"
			}
			g := &Getter{CARoot: root, Resolve: resolveTo, Retries: 1, Backoff: time.Millisecond}
			b, err := g.Get(context.Background(), Request{URL: u, Limit: 100})
			if tt.err == "" {
				if err != nil || string(b) != tt.want {
					t.Fatalf("Get %s = %q, %v; want %q", u, b, err, tt.want)
				}
			} else {
				if err == nil || !strings.HasPrefix(err.Error(), "GET "+u+": ") || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("Get %s: err = %v, want one naming the URL and saying %q", u, err, tt.err)
				}
				var ce *CertError
				if got := errors.As(err, &ce); got != (tt.certErr != nil) {
					t.Errorf("err is a *CertError: %v, want %v", got, tt.certErr != nil)
				} else if got && !sameType(ce.Err, tt.certErr) {
					t.Errorf("CertError wraps %T, want %T", ce.Err, tt.certErr)
				}
			}
			if n := tt.srv.handshakes.Load(); n != tt.tries {
				t.Errorf("%d handshakes, want %d (a certificate that fails is not tried again)", n, tt.tries)
			}
			tt.srv.mu.Lock()
			defer tt.srv.mu.Unlock()
			if len(tt.srv.sni) == 0 || tt.srv.sni[0] != tt.sni {
				t.Errorf("SNI %q, want %q", tt.srv.sni, tt.sni)
			}
		})
	}
}

func sameType(err error, want any) bool {
	switch want.(type) {
	case x509.UnknownAuthorityError:
		var e x509.UnknownAuthorityError
		return errors.As(err, &e)
	case x509.HostnameError:
		var e x509.HostnameError
		return errors.As(err, &e)
	case x509.CertificateInvalidError:
		var e x509.CertificateInvalidError
		return errors.As(err, &e) && e.Reason == x509.Expired
	}
	return false
}

// TestHTTPSPost: phone_home's POST goes over TLS with its body.
func TestHTTPSPost(t *testing.T) {
	ca := httpgettest.NewCA(t, "earlyinit test CA")
	srv := newTLSServer(t, ca.Issue(t, httpgettest.Leaf{}), nil, nil)
	g := &Getter{CARoot: httpgettest.Root(t, ca)}
	if _, err := g.Post(context.Background(), srv.url+"/phone", "application/x-www-form-urlencoded", []byte("instance_id=i-1"), 100); err != nil {
		t.Fatal(err)
	}
	if len(srv.reqs) != 1 || srv.reqs[0] != "POST /phone instance_id=i-1" {
		t.Errorf("server got %q", srv.reqs)
	}
}

// TestHTTPSRedirect: an https server's redirect, to http or https, is not
// followed by a Getter without Redirects (the metadata clients'): the
// error names the target. TestRedirectHTTPS is System's.
func TestHTTPSRedirect(t *testing.T) {
	var plain atomic.Int32
	httpSrv := newRawServer(t, listen(t, "127.0.0.1:0"), func(c net.Conn, _ *http.Request) {
		plain.Add(1)
		c.Write([]byte("HTTP/1.1 200 OK\r\n\r\ndowngraded"))
	})
	ca := httpgettest.NewCA(t, "earlyinit test CA")
	srv := newTLSServer(t, ca.Issue(t, httpgettest.Leaf{}), nil, func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, httpSrv.url+"/plain", http.StatusFound)
	})
	g := &Getter{CARoot: httpgettest.Root(t, ca)}
	_, err := g.Get(context.Background(), Request{URL: srv.url + "/x", Limit: 100})
	want := "GET " + srv.url + "/x: HTTP 302 Found (redirect to " + httpSrv.url + "/plain not followed)"
	if Status(err) != 302 || err.Error() != want {
		t.Errorf("err = %v\nwant %s", err, want)
	}
	if n := plain.Load(); n != 0 {
		t.Errorf("the http server got %d connections, want none", n)
	}
}

// TestCABundleLayouts: the bundle is found where each distribution keeps
// it, symlinks resolved inside the root.
func TestCABundleLayouts(t *testing.T) {
	ca := httpgettest.NewCA(t, "earlyinit test CA")
	// A bundle outside the root that an absolute symlink in it names:
	// never read.
	outside := t.TempDir()
	if err := os.WriteFile(filepath.Join(outside, "host.pem"), ca.PEM, 0o644); err != nil {
		t.Fatal(err)
	}
	type file struct{ name, data, link string }
	for _, tt := range []struct {
		name  string
		files []file
		want  string // the bundle read, in the root
		err   string
	}{
		{name: "Debian", files: []file{{name: "/etc/ssl/certs/ca-certificates.crt", data: "pem"}}, want: "/etc/ssl/certs/ca-certificates.crt"},
		{name: "RHEL", files: []file{
			{name: "/etc/pki/ca-trust/extracted/pem/tls-ca-bundle.pem", data: "pem"},
			{name: "/etc/pki/tls/certs/ca-bundle.crt", link: "/etc/pki/ca-trust/extracted/pem/tls-ca-bundle.pem"},
		}, want: "/etc/pki/tls/certs/ca-bundle.crt"},
		{name: "RHEL without the link", files: []file{{name: "/etc/pki/ca-trust/extracted/pem/tls-ca-bundle.pem", data: "pem"}}, want: "/etc/pki/ca-trust/extracted/pem/tls-ca-bundle.pem"},
		{name: "openSUSE", files: []file{
			{name: "/var/lib/ca-certificates/ca-bundle.pem", data: "pem"},
			{name: "/etc/ssl/ca-bundle.pem", link: "/var/lib/ca-certificates/ca-bundle.pem"},
		}, want: "/var/lib/ca-certificates/ca-bundle.pem"},
		{name: "Alpine", files: []file{
			{name: "/etc/ssl/certs/ca-certificates.crt", data: "pem"},
			{name: "/etc/ssl/cert.pem", link: "certs/ca-certificates.crt"},
		}, want: "/etc/ssl/certs/ca-certificates.crt"},
		{name: "Alpine, the link alone", files: []file{
			{name: "/etc/ssl/certs/bundle", data: "pem"},
			{name: "/etc/ssl/cert.pem", link: "certs/bundle"},
		}, want: "/etc/ssl/cert.pem"},
		{name: "absolute link out of the root", files: []file{
			{name: "/etc/ssl/certs/ca-certificates.crt", link: filepath.Join(outside, "host.pem")},
		}, err: "no CA bundle in ROOT (looked for /etc/ssl/certs/ca-certificates.crt, /etc/pki/tls/certs/ca-bundle.crt, /etc/pki/ca-trust/extracted/pem/tls-ca-bundle.pem, /var/lib/ca-certificates/ca-bundle.pem, /etc/ssl/ca-bundle.pem, /etc/ssl/cert.pem): https needs the root's CA certificates"},
		{name: "none", err: "no CA bundle in ROOT (looked for /etc/ssl/certs/ca-certificates.crt,"},
		{name: "not PEM", files: []file{{name: "/etc/ssl/certs/ca-certificates.crt", data: "not a certificate\n"}}, err: "CA bundle ROOT/etc/ssl/certs/ca-certificates.crt: no PEM certificate in it"},
		{name: "too big", files: []file{{name: "/etc/ssl/certs/ca-certificates.crt", data: strings.Repeat("x", MaxCABundle+1)}}, err: "CA bundle ROOT/etc/ssl/certs/ca-certificates.crt: 8388609 bytes is over the 8388608 byte limit"},
		{name: "a directory", files: []file{{name: "/etc/ssl/certs/ca-certificates.crt/x", data: "pem"}}, err: "CA bundle: read /etc/ssl/certs/ca-certificates.crt in ROOT"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			root := t.TempDir()
			for _, f := range tt.files {
				p := filepath.Join(root, f.name)
				if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
					t.Fatal(err)
				}
				var err error
				if f.link != "" {
					err = os.Symlink(f.link, p)
				} else {
					data := []byte(f.data)
					if f.data == "pem" {
						data = ca.PEM
					}
					err = os.WriteFile(p, data, 0o644)
				}
				if err != nil {
					t.Fatal(err)
				}
			}
			p, err := LoadCABundle(root)
			if tt.err != "" {
				want := strings.ReplaceAll(tt.err, "ROOT", root)
				if err == nil || !strings.Contains(err.Error(), want) {
					t.Fatalf("err = %v, want one containing %q", err, want)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if p.File != filepath.Join(root, tt.want) {
				t.Errorf("read %s, want %s", p.File, filepath.Join(root, tt.want))
			}
			if _, err := ca.Cert.Verify(x509.VerifyOptions{Roots: p.Pool}); err != nil {
				t.Errorf("the CA is not in the pool: %v", err)
			}
		})
	}
}

// TestHTTPSNoBundle: without a CA bundle an https request is not made.
func TestHTTPSNoBundle(t *testing.T) {
	ca := httpgettest.NewCA(t, "earlyinit test CA")
	srv := newTLSServer(t, ca.Issue(t, httpgettest.Leaf{}), nil, nil)
	root := t.TempDir()
	g := &Getter{CARoot: root}
	_, err := g.Get(context.Background(), Request{URL: srv.url + "/x", Limit: 100})
	want := "GET " + srv.url + "/x: no CA bundle in " + root + " (looked for "
	if err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Errorf("err = %v, want one starting %q", err, want)
	}
	if n := srv.handshakes.Load(); n != 0 {
		t.Errorf("%d handshakes, want none", n)
	}
	// Plain http needs no bundle.
	plain := newRawServer(t, listen(t, "127.0.0.1:0"), answer("HTTP/1.1 200 OK\r\n\r\nplain"))
	if b, err := g.Get(context.Background(), Request{URL: plain.url, Limit: 100}); err != nil || string(b) != "plain" {
		t.Errorf("http: %q, %v", b, err)
	}
}

// TestHTTPSHandshakeTimeout: a server that accepts and never answers the
// handshake is a timeout within the request timeout, retried like one.
func TestHTTPSHandshakeTimeout(t *testing.T) {
	l := listen(t, "127.0.0.1:0")
	var conns atomic.Int32
	var wg sync.WaitGroup
	t.Cleanup(func() { l.Close(); wg.Wait() })
	wg.Go(func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			conns.Add(1)
			wg.Go(func() { io.Copy(io.Discard, c); c.Close() })
		}
	})
	ca := httpgettest.NewCA(t, "earlyinit test CA")
	g := getter()
	g.CAs = &CAPool{Pool: x509.NewCertPool(), File: "test pool"}
	g.Retries = 1
	g.CAs.Pool.AddCert(ca.Cert)
	u := "https://" + l.Addr().String() + "/x"
	start := time.Now()
	_, err := g.Get(context.Background(), Request{URL: u, Limit: 10})
	var te *TimeoutError
	if !errors.As(err, &te) || te.Tries != 2 {
		t.Errorf("err = %v, want a timeout after 2 tries", err)
	}
	if d := time.Since(start); d > time.Second {
		t.Errorf("took %v", d)
	}
	if n := conns.Load(); n != 2 {
		t.Errorf("%d connections, want 2", n)
	}
}
