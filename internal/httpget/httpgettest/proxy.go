package httpgettest

import (
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// Proxy is a forward HTTP proxy for tests, on 127.0.0.1: a request in
// absolute form ("GET http://host/path") is forwarded and its answer
// passed back, redirects included; a CONNECT opens a tunnel. Host names
// ending in ".test" (Name among them) are reached at 127.0.0.1, so a
// test can name a server that only the proxy can reach; other hosts are
// dialed as they are.
type Proxy struct {
	URL string // http://127.0.0.1:PORT
	// Auth, if set, is the Proxy-Authorization value the proxy wants: a
	// request without it gets 407.
	Auth string

	mu   sync.Mutex
	reqs []string
}

// NewProxy starts a Proxy, closed when the test ends.
func NewProxy(t testing.TB) *Proxy {
	t.Helper()
	p := &Proxy{}
	srv := httptest.NewUnstartedServer(p)
	srv.Config.ErrorLog = log.New(io.Discard, "", 0)
	srv.Start()
	t.Cleanup(srv.Close)
	p.URL = srv.URL
	return p
}

// Requests are the requests the proxy got, in order: "GET
// http://host:port/path" for one forwarded, "CONNECT host:port" for a
// tunnel, each followed by " auth=VALUE" when it carried
// Proxy-Authorization.
func (p *Proxy) Requests() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.reqs...)
}

// dial connects to addr, a name under .test at 127.0.0.1.
func dial(network, addr string) (net.Conn, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, err
	}
	if strings.HasSuffix(host, ".test") {
		host = "127.0.0.1"
	}
	return net.Dial(network, net.JoinHostPort(host, port))
}

// forward is how the proxy fetches: no proxy of its own, no redirect
// followed, names under .test at 127.0.0.1.
var forward = &http.Transport{
	Proxy: nil,
	Dial:  dial,
}

func (p *Proxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	line := r.Method + " " + r.URL.String()
	if r.Method == http.MethodConnect {
		line = "CONNECT " + r.Host
	}
	auth := r.Header.Get("Proxy-Authorization")
	if auth != "" {
		line += " auth=" + auth
	}
	p.mu.Lock()
	p.reqs = append(p.reqs, line)
	p.mu.Unlock()
	if p.Auth != "" && auth != p.Auth {
		w.Header().Set("Proxy-Authenticate", `Basic realm="test"`)
		http.Error(w, "proxy credentials wanted", http.StatusProxyAuthRequired)
		return
	}
	if r.Method == http.MethodConnect {
		p.tunnel(w, r)
		return
	}
	if !r.URL.IsAbs() {
		http.Error(w, "not a proxy request: "+r.RequestURI, http.StatusBadRequest)
		return
	}
	out := r.Clone(r.Context())
	out.RequestURI = ""
	out.Header.Del("Proxy-Authorization")
	out.Header.Del("Proxy-Connection")
	resp, err := forward.RoundTrip(out)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	defer resp.Body.Close()
	for k, vs := range resp.Header {
		for _, v := range vs {
			w.Header().Add(k, v)
		}
	}
	w.WriteHeader(resp.StatusCode)
	io.Copy(w, resp.Body)
}

// tunnel answers a CONNECT: 200, then bytes both ways.
func (p *Proxy) tunnel(w http.ResponseWriter, r *http.Request) {
	up, err := dial("tcp", r.Host)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	defer up.Close()
	hj, ok := w.(http.Hijacker)
	if !ok {
		http.Error(w, "no hijacking", http.StatusInternalServerError)
		return
	}
	c, buf, err := hj.Hijack()
	if err != nil {
		return
	}
	defer c.Close()
	if _, err := io.WriteString(c, "HTTP/1.1 200 Connection established\r\n\r\n"); err != nil {
		return
	}
	done := make(chan struct{})
	go func() {
		io.Copy(up, buf) // what the client sent, buffered or not
		if tc, ok := up.(*net.TCPConn); ok {
			tc.CloseWrite()
		}
		close(done)
	}()
	io.Copy(c, up)
	c.Close()
	<-done
}
