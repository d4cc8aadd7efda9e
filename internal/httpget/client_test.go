package httpget

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

func TestParseURL(t *testing.T) {
	for _, tt := range []struct {
		url  string
		want target
		err  string
	}{
		{url: "http://169.254.169.254", want: target{hostname: "169.254.169.254", port: 80, host: "169.254.169.254", uri: "/"}},
		{url: "http://169.254.169.254/latest/meta-data/?x=1#frag", want: target{hostname: "169.254.169.254", port: 80, host: "169.254.169.254", uri: "/latest/meta-data/?x=1"}},
		{url: "HTTP://10.0.0.1:8080/a%20b", want: target{hostname: "10.0.0.1", port: 8080, host: "10.0.0.1:8080", uri: "/a%20b"}},
		{url: "http://[fd00:ec2::254]/x", want: target{hostname: "fd00:ec2::254", port: 80, host: "[fd00:ec2::254]", uri: "/x"}},
		{url: "http://[fe80::a9fe:a9fe%25eth0]/x", want: target{hostname: "fe80::a9fe:a9fe%eth0", port: 80, host: "[fe80::a9fe:a9fe]", uri: "/x"}},
		{url: "http://[fe80::a9fe:a9fe%25enp0s3]:81/openstack", want: target{hostname: "fe80::a9fe:a9fe%enp0s3", port: 81, host: "[fe80::a9fe:a9fe]:81", uri: "/openstack"}},
		{url: "http://metadata.google.internal/x", want: target{hostname: "metadata.google.internal", port: 80, host: "metadata.google.internal", uri: "/x"}},
		{url: "https://169.254.169.254/", want: target{hostname: "169.254.169.254", port: 443, host: "169.254.169.254", uri: "/", tls: true}},
		{url: "HTTPS://seed.example:8443/x/", want: target{hostname: "seed.example", port: 8443, host: "seed.example:8443", uri: "/x/", tls: true}},
		{url: "https://[fd00::1%25eth0]/x", want: target{hostname: "fd00::1%eth0", port: 443, host: "[fd00::1]", uri: "/x", tls: true}},
		{url: "ftp://169.254.169.254/", err: `bad URL: scheme "ftp", want http or https`},
		{url: "169.254.169.254/latest", err: `bad URL: scheme "", want http or https`},
		{url: "http://user:pw@169.254.169.254/", err: "bad URL: user info is not supported"},
		{url: "http:169.254.169.254", err: "bad URL: not hierarchical"},
		{url: "http:///x", err: "bad URL: no host"},
		{url: "http://169.254.169.254:/", err: "bad URL: empty port"},
		{url: "http://169.254.169.254:0/", err: `bad URL: port "0"`},
		{url: "http://169.254.169.254:65536/", err: `bad URL: port "65536"`},
		{url: "http://[fe80::1%eth0]/", err: "bad URL: invalid URL escape"},
		{url: "http://bad host/", err: "bad URL: invalid character"},
		{url: "http://10.0.0.1%25eth0/", err: `bad URL: host "10.0.0.1%eth0": only a bracketed IPv6 address has a zone`},
	} {
		got, err := parseURL(tt.url)
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("parseURL(%q): err = %v, want one containing %q", tt.url, err, tt.err)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("parseURL(%q) = %+v, %v; want %+v", tt.url, got, err, tt.want)
		}
	}
}

func TestBuildRequest(t *testing.T) {
	tg := target{hostname: "fe80::1%eth0", port: 80, host: "[fe80::1]", uri: "/latest/api/token"}
	for _, tt := range []struct {
		name string
		r    Request
		want string
		err  string
	}{
		{name: "GET", r: Request{Method: "GET"},
			want: "GET /latest/api/token HTTP/1.1\r\nHost: [fe80::1]\r\nUser-Agent: earlyinit\r\nConnection: close\r\n\r\n"},
		{name: "PUT without a body says so", r: Request{Method: "PUT", Header: map[string]string{"X-aws-ec2-metadata-token-ttl-seconds": "21600"}},
			want: "PUT /latest/api/token HTTP/1.1\r\nHost: [fe80::1]\r\nUser-Agent: earlyinit\r\nX-aws-ec2-metadata-token-ttl-seconds: 21600\r\nConnection: close\r\nContent-Length: 0\r\n\r\n"},
		{name: "POST, headers sorted", r: Request{Method: "POST", Header: map[string]string{"Content-Type": "application/x-www-form-urlencoded", "B": "2", "A": "1"}, Body: []byte("a=1&b=2")},
			want: "POST /latest/api/token HTTP/1.1\r\nHost: [fe80::1]\r\nUser-Agent: earlyinit\r\nA: 1\r\nB: 2\r\nContent-Type: application/x-www-form-urlencoded\r\nConnection: close\r\nContent-Length: 7\r\n\r\na=1&b=2"},
		{name: "User-Agent replaced", r: Request{Method: "GET", Header: map[string]string{"user-agent": "x/1"}},
			want: "GET /latest/api/token HTTP/1.1\r\nHost: [fe80::1]\r\nuser-agent: x/1\r\nConnection: close\r\n\r\n"},
		{name: "CRLF in a value", r: Request{Method: "GET", Header: map[string]string{"X-Token": "a\r\nEvil: 1"}}, err: `header X-Token: bad value "a\r\nEvil: 1"`},
		{name: "NUL in a value", r: Request{Method: "GET", Header: map[string]string{"X-Token": "a\x00"}}, err: `header X-Token: bad value`},
		{name: "bad name", r: Request{Method: "GET", Header: map[string]string{"X Token": "a"}}, err: `bad header name "X Token"`},
		{name: "empty name", r: Request{Method: "GET", Header: map[string]string{"": "a"}}, err: `bad header name ""`},
		{name: "Host is the client's", r: Request{Method: "GET", Header: map[string]string{"host": "a"}}, err: "header host is set by the client"},
		{name: "Content-Length is the client's", r: Request{Method: "POST", Header: map[string]string{"Content-Length": "1"}}, err: "header Content-Length is set by the client"},
		{name: "bad method", r: Request{Method: "GET /x HTTP/1.1\r\n"}, err: "bad method"},
	} {
		got, err := buildRequest(tt.r, tg)
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("%s: err = %v, want one containing %q", tt.name, err, tt.err)
			}
			continue
		}
		if err != nil || string(got) != tt.want {
			t.Errorf("%s: got %q, %v\nwant %q", tt.name, got, err, tt.want)
		}
	}
}

// rawServer accepts connections on l and hands each, with the request
// read from it by net/http (so a request it cannot parse fails the test),
// to handle; the connection is closed when handle returns.
type rawServer struct {
	url   string
	conns atomic.Int32
	reqs  chan *http.Request
}

func newRawServer(t *testing.T, l net.Listener, handle func(c net.Conn, r *http.Request)) *rawServer {
	t.Helper()
	s := &rawServer{reqs: make(chan *http.Request, 16)}
	s.url = "http://" + l.Addr().String()
	var wg sync.WaitGroup
	t.Cleanup(func() { l.Close(); wg.Wait() })
	wg.Go(func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			s.conns.Add(1)
			wg.Go(func() {
				defer c.Close()
				r, err := http.ReadRequest(bufio.NewReader(c))
				if err != nil {
					t.Errorf("server: read request: %v", err)
					return
				}
				body, err := io.ReadAll(r.Body)
				if err != nil {
					t.Errorf("server: read request body: %v", err)
					return
				}
				r.Body = io.NopCloser(strings.NewReader(string(body)))
				select {
				case s.reqs <- r:
				default:
				}
				handle(c, r)
			})
		}
	})
	return s
}

func listen(t *testing.T, addr string) net.Listener {
	t.Helper()
	l, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// answer returns a handler that writes raw.
func answer(raw string) func(net.Conn, *http.Request) {
	return func(c net.Conn, _ *http.Request) { io.WriteString(c, raw) }
}

// stall returns a handler that writes raw, then waits for the client to
// hang up.
func stall(raw string) func(net.Conn, *http.Request) {
	return func(c net.Conn, _ *http.Request) {
		io.WriteString(c, raw)
		io.Copy(io.Discard, c)
	}
}

// TestGetRaw runs Get against servers that write exact bytes.
func TestGetRaw(t *testing.T) {
	for _, tt := range []struct {
		name   string
		handle func(net.Conn, *http.Request)
		body   string
		err    string // after "GET <url>"
		conns  int32
		check  func(error) bool
	}{
		{name: "chunked", handle: answer("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n4\r\ni-12\r\n4\r\n3456\r\n0\r\n\r\n"), body: "i-123456", conns: 1},
		{name: "content-length, server keeps the connection", handle: stall("HTTP/1.1 200 OK\r\nContent-Length: 4\r\n\r\ni-12"), body: "i-12", conns: 1},
		{name: "until EOF", handle: answer("HTTP/1.0 200 OK\r\n\r\ni-12"), body: "i-12", conns: 1},
		{name: "over the limit", handle: answer("HTTP/1.1 200 OK\r\n\r\n" + strings.Repeat("x", 100)),
			err: ": body over the 10 byte limit", conns: 1, check: tooBig},
		{name: "over the limit, server keeps sending", handle: func(c net.Conn, _ *http.Request) {
			io.WriteString(c, "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n")
			for {
				if _, err := io.WriteString(c, "1\r\nx\r\n"); err != nil {
					return
				}
			}
		}, err: ": body over the 10 byte limit", conns: 1, check: tooBig},
		{name: "stalls mid-body", handle: stall("HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\ni-12"),
			err: ": no complete answer within 50ms (3 tries)", conns: 3, check: isTimeout},
		{name: "stalls mid-chunk", handle: stall("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n4\r\ni-"),
			err: ": no complete answer within 50ms (3 tries)", conns: 3, check: isTimeout},
		{name: "stalls with no end of body", handle: stall("HTTP/1.1 200 OK\r\n\r\ni-12"),
			err: ": no complete answer within 50ms (3 tries)", conns: 3, check: isTimeout},
		{name: "stalls in the header", handle: stall("HTTP/1.1 200 OK\r\nContent-"),
			err: ": no complete answer within 50ms (3 tries)", conns: 3, check: isTimeout},
		{name: "malformed status line, retried", handle: answer("HTTP/1.1 OK\r\n\r\n"),
			err: `: malformed status line "HTTP/1.1 OK" (3 tries)`, conns: 3},
		{name: "malformed header, retried", handle: answer("HTTP/1.1 200 OK\r\nno colon\r\n\r\n"),
			err: `: read header: malformed MIME header: missing colon: "no colon" (3 tries)`, conns: 3},
		{name: "cut short", handle: answer("HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\ni-12"),
			err: ": read body: unexpected EOF after 4 of 10 bytes (3 tries)", conns: 3},
		{name: "hang-up", handle: answer(""),
			err: ": connection closed with no answer (3 tries)", conns: 3},
		{name: "redirect not followed", handle: answer("HTTP/1.1 301 Moved Permanently\r\nLocation: http://10.0.0.1/x\r\n\r\n"),
			err: ": HTTP 301 Moved Permanently (redirect to http://10.0.0.1/x not followed)", conns: 1,
			check: func(err error) bool { return Status(err) == 301 }},
		{name: "unknown status", handle: answer("HTTP/1.1 599 Whatever\r\n\r\n"),
			err: ": HTTP 599 (3 tries)", conns: 3, check: func(err error) bool { return Status(err) == 599 }},
	} {
		t.Run(tt.name, func(t *testing.T) {
			srv := newRawServer(t, listen(t, "127.0.0.1:0"), tt.handle)
			url := srv.url + "/latest/meta-data/instance-id"
			b, err := getter().Get(context.Background(), Request{URL: url, Limit: 10})
			if tt.err == "" {
				if err != nil || string(b) != tt.body {
					t.Errorf("got %q, %v; want %q", b, err, tt.body)
				}
			} else if err == nil || err.Error() != "GET "+url+tt.err || (tt.check != nil && !tt.check(err)) {
				t.Errorf("got %q, %v\nwant error %q", b, err, "GET "+url+tt.err)
			}
			if got := srv.conns.Load(); got != tt.conns {
				t.Errorf("%d connections, want %d", got, tt.conns)
			}
		})
	}
}

// TestRequestOnTheWire checks what the server gets, as net/http reads it.
func TestRequestOnTheWire(t *testing.T) {
	srv := newRawServer(t, listen(t, "127.0.0.1:0"), answer("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"))
	g := getter()
	if _, err := g.Get(context.Background(), Request{Method: "PUT", URL: srv.url + "/latest/api/token?a=b%20c", Header: map[string]string{"X-aws-ec2-metadata-token-ttl-seconds": "21600"}, Limit: 10}); err != nil {
		t.Fatal(err)
	}
	r := <-srv.reqs
	host := strings.TrimPrefix(srv.url, "http://")
	if r.Method != "PUT" || r.RequestURI != "/latest/api/token?a=b%20c" || r.Proto != "HTTP/1.1" || r.Host != host ||
		r.UserAgent() != "earlyinit" || !r.Close || r.ContentLength != 0 || r.Header.Get("X-Aws-Ec2-Metadata-Token-Ttl-Seconds") != "21600" {
		t.Errorf("server got %s %s %s, Host %q, header %v, Close %v, ContentLength %d", r.Method, r.RequestURI, r.Proto, r.Host, r.Header, r.Close, r.ContentLength)
	}

	b, err := g.Post(context.Background(), srv.url+"/phone-home/i-1", "application/x-www-form-urlencoded", []byte("instance_id=i-1&hostname=h"), 10)
	if err != nil || string(b) != "ok" {
		t.Fatalf("Post: %q, %v", b, err)
	}
	r = <-srv.reqs
	body, _ := io.ReadAll(r.Body)
	if r.Method != "POST" || r.URL.Path != "/phone-home/i-1" || r.Header.Get("Content-Type") != "application/x-www-form-urlencoded" ||
		r.ContentLength != 26 || string(body) != "instance_id=i-1&hostname=h" {
		t.Errorf("server got %s %s, header %v, ContentLength %d, body %q", r.Method, r.RequestURI, r.Header, r.ContentLength, body)
	}
}

// TestPostHTTPTest posts to net/http's own server.
func TestPostHTTPTest(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := r.ParseForm(); err != nil || r.Method != "POST" || r.PostForm.Get("pub_key_rsa") != "ssh-rsa AAA= x@y" {
			http.Error(w, fmt.Sprintf("%s %v %v", r.Method, r.PostForm, err), http.StatusBadRequest)
			return
		}
		fmt.Fprint(w, "thanks")
	}))
	defer srv.Close()
	b, err := getter().Post(context.Background(), srv.URL+"/$INSTANCE_ID/", "application/x-www-form-urlencoded", []byte("pub_key_rsa=ssh-rsa+AAA%3D+x%40y"), 100)
	if err != nil || string(b) != "thanks" {
		t.Errorf("Post: %q, %v; want thanks", b, err)
	}
}

// TestIPv6Zone fetches from [::1] with a zone, as the link-local metadata
// address fe80::a9fe:a9fe%<nic> is fetched: the zone picks the interface
// and stays out of the Host header.
func TestIPv6Zone(t *testing.T) {
	lo, err := loopbackName()
	if err != nil {
		t.Fatal(err)
	}
	l := listen(t, "[::1]:0")
	srv := newRawServer(t, l, answer("HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\nv6!"))
	port := l.Addr().(*net.TCPAddr).Port
	url := fmt.Sprintf("http://[::1%%25%s]:%d/openstack", lo, port)
	b, err := getter().Get(context.Background(), Request{URL: url, Limit: 10})
	if err != nil || string(b) != "v6!" {
		t.Fatalf("Get %s: %q, %v", url, b, err)
	}
	r := <-srv.reqs
	if want := fmt.Sprintf("[::1]:%d", port); r.Host != want || r.RequestURI != "/openstack" {
		t.Errorf("server got Host %q, URI %q; want %q, /openstack", r.Host, r.RequestURI, want)
	}

	// A zone naming no interface: an error naming the URL and the zone.
	url = fmt.Sprintf("http://[::1%%25no-such-nic]:%d/openstack", port)
	g := getter()
	g.Retries = -1
	if _, err := g.Get(context.Background(), Request{URL: url, Limit: 10}); err == nil || !strings.HasPrefix(err.Error(), "GET "+url+": zone no-such-nic: ") {
		t.Errorf("unknown zone: err = %v, want one naming the URL and the zone", err)
	}
	if n := srv.conns.Load(); n != 1 {
		t.Errorf("%d connections, want 1", n)
	}
}

// loopbackName is the name of the loopback interface ("lo" on Linux).
func loopbackName() (string, error) {
	ifs, err := net.Interfaces()
	if err != nil {
		return "", err
	}
	for _, i := range ifs {
		if i.Flags&net.FlagLoopback != 0 {
			return i.Name, nil
		}
	}
	return "", errors.New("no loopback interface")
}

// TestNotTried: requests that cannot be made fail at once, untried and
// not retried, with an error naming the URL.
func TestNotTried(t *testing.T) {
	var conns atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { conns.Add(1) }))
	defer srv.Close()
	https := strings.Replace(srv.URL, "http://", "https://", 1)
	empty := t.TempDir()
	noCA := "no CA bundle in " + empty + " (looked for " + strings.Join(caBundles, ", ") + "): https needs the root's CA certificates"
	if !TLS {
		noCA = ErrNoTLS.Error() // the initramfs build (tag initrd)
	}
	for _, tt := range []struct {
		r    Request
		want string
	}{
		{r: Request{URL: https + "/x"}, want: "GET " + https + "/x: " + noCA},
		{r: Request{URL: "http://localhost/x"}, want: `GET http://localhost/x: host "localhost" is not an IP address, and the Getter has no resolver`},
		{r: Request{URL: srv.URL, Header: map[string]string{"X": "a\nb"}}, want: "GET " + srv.URL + `: header X: bad value "a\nb"`},
		{r: Request{URL: srv.URL, Method: "G T"}, want: "G T " + srv.URL + `: bad method "G T"`},
		{r: Request{URL: "://"}, want: "GET ://: bad URL: missing protocol scheme"},
	} {
		var logged int
		g := getter()
		g.CARoot = empty
		g.Logf = func(string, ...any) { logged++ }
		tt.r.Limit = 10
		if _, err := g.Get(context.Background(), tt.r); err == nil || err.Error() != tt.want {
			t.Errorf("err = %v\nwant %s", err, tt.want)
		}
		if logged != 0 {
			t.Errorf("%s: %d retries, want none", tt.r.URL, logged)
		}
	}
	if n := conns.Load(); n != 0 {
		t.Errorf("%d requests reached the server, want none", n)
	}
}

func TestResolve(t *testing.T) {
	srv := newRawServer(t, listen(t, "127.0.0.1:0"), answer("HTTP/1.1 200 OK\r\n\r\nresolved"))
	port := strings.TrimPrefix(srv.url, "http://127.0.0.1")
	closed := listen(t, "127.0.0.1:0")
	closed.Close()
	var asked []string
	g := getter()
	g.Resolve = func(ctx context.Context, host string) ([]netip.Addr, error) {
		asked = append(asked, host)
		switch host {
		case "metadata.test":
			// The first address refuses: the next is tried.
			return []netip.Addr{netip.MustParseAddr("127.0.0.2"), netip.MustParseAddr("::ffff:127.0.0.1")}, nil
		case "empty.test":
			return nil, nil
		}
		return nil, errors.New("no such host")
	}
	url := "http://metadata.test" + port + "/x"
	b, err := g.Get(context.Background(), Request{URL: url, Limit: 10})
	if err != nil || string(b) != "resolved" || len(asked) != 1 || asked[0] != "metadata.test" {
		t.Fatalf("Get %s: %q, %v, asked %q", url, b, err, asked)
	}
	if r := <-srv.reqs; r.Host != "metadata.test"+port {
		t.Errorf("Host %q, want the name", r.Host)
	}

	g.Retries = -1
	for host, want := range map[string]string{
		"nowhere.test": "resolve nowhere.test: no such host",
		"empty.test":   "resolve empty.test: no address",
	} {
		url := "http://" + host + "/x"
		if _, err := g.Get(context.Background(), Request{URL: url, Limit: 10}); err == nil || err.Error() != "GET "+url+": "+want {
			t.Errorf("err = %v, want %q", err, "GET "+url+": "+want)
		}
	}
}

// TestCancelMidBody: cancelling ctx interrupts a read at once.
func TestCancelMidBody(t *testing.T) {
	srv := newRawServer(t, listen(t, "127.0.0.1:0"), stall("HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\ni-12"))
	g := getter()
	g.RequestTimeout = 10 * time.Second
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(30*time.Millisecond, cancel)
	start := time.Now()
	_, err := g.Get(ctx, Request{URL: srv.url, Limit: 10})
	if !errors.Is(err, context.Canceled) || err.Error() != "GET "+srv.url+": context canceled" {
		t.Errorf("err = %v, want context.Canceled naming the URL", err)
	}
	if d := time.Since(start); d > time.Second {
		t.Errorf("took %v after the cancel", d)
	}
}
