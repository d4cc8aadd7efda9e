package httpget

import (
	"bufio"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net"
	"net/textproto"
	"net/url"
	"strconv"
	"strings"
)

// Requests through a proxy (Getter.Proxy), in the full build only: the
// initramfs build's proxySupport is false (proxyenv_initrd.go), which
// leaves this code out of it.

// proxyHop is the proxy a request goes through.
type proxyHop struct {
	target target // the proxy, to dial
	// auth is the Proxy-Authorization value (Basic, from the proxy URL's
	// user information), "" without credentials.
	auth string
	// shown is the proxy for messages: http://host:port, never the
	// credentials.
	shown string
}

// proxyError is a proxy's answer other than 2xx to the CONNECT that
// opens a tunnel to an https server: 407 when it wants credentials, 403
// when it refuses the host, 502 or 504 when it could not reach it. A 4xx
// answer is not retried. (Through a proxy, an http request's answers,
// the proxy's own included, are the server's: a *StatusError.)
type proxyError struct {
	Proxy string // http://host:port
	Code  int
}

func (e *proxyError) Error() string {
	s := fmt.Sprintf("the proxy refused the tunnel: HTTP %d", e.Code)
	if t := statusText(e.Code); t != "" {
		s += " " + t
	}
	return s
}

// proxyFor asks g.Proxy which proxy a request for raw goes through, and
// checks what it says: an http:// proxy with a host.
func (g *Getter) proxyFor(raw string) (*proxyHop, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("bad URL: %w", err)
	}
	p, err := g.Proxy(u)
	if err != nil {
		return nil, fmt.Errorf("proxy: %w", err)
	}
	if p == nil {
		return nil, nil
	}
	return newProxyHop(p)
}

// newProxyHop checks a proxy URL: http://[user[:password]@]host[:port][/],
// port 80 if none, as Python's requests (urllib3) takes it. Its messages
// never show the user information.
func newProxyHop(p *url.URL) (*proxyHop, error) {
	if p.Scheme != "http" {
		what := fmt.Sprintf("scheme %q", p.Scheme)
		if p.Scheme == "https" {
			what = "https:// (TLS to the proxy)"
		}
		return nil, fmt.Errorf("proxy URL: %s is not supported: only http:// proxies are, which also tunnel https", what)
	}
	bare := url.URL{Scheme: "http", Host: p.Host, Path: "/"}
	t, err := parseURL(bare.String())
	if err != nil {
		return nil, fmt.Errorf("proxy URL: %w", err)
	}
	h := &proxyHop{target: t, shown: "http://" + authority(t)}
	if p.User != nil {
		pw, _ := p.User.Password()
		h.auth = "Basic " + base64.StdEncoding.EncodeToString([]byte(p.User.Username()+":"+pw))
	}
	return h, nil
}

// authority is t's host:port, as CONNECT's request-target has it (RFC
// 9112, 3.2.3): the port always, an IPv6 address bracketed, no zone.
func authority(t target) string {
	h := t.hostname
	if i := strings.IndexByte(h, '%'); i >= 0 {
		h = h[:i]
	}
	return net.JoinHostPort(h, strconv.Itoa(int(t.port)))
}

// connect opens a tunnel to t through the proxy conn is connected to: a
// CONNECT request, and its answer's status line and header read. A 2xx
// answer leaves conn a byte stream to t, for TLS; anything else is a
// *proxyError. TLS has the client speak first, so a proxy sends nothing
// after its answer until then: bytes that come early are an error.
func (h *proxyHop) connect(conn net.Conn, t target) error {
	a := authority(t)
	msg := "CONNECT " + a + " HTTP/1.1\r\nHost: " + a + "\r\nUser-Agent: " + userAgent + "\r\n"
	if h.auth != "" {
		msg += "Proxy-Authorization: " + h.auth + "\r\n"
	}
	if _, err := io.WriteString(conn, msg+"\r\n"); err != nil {
		return fmt.Errorf("CONNECT: write: %w", err)
	}
	lr := &io.LimitedReader{R: conn, N: maxHeaderBytes}
	br := bufio.NewReader(lr)
	tp := textproto.NewReader(br)
	over := func() bool { return lr.N <= 0 && br.Buffered() == 0 }
	fail := func(err error) error { return fmt.Errorf("CONNECT: %w", err) }
	line, err := tp.ReadLine()
	if over() {
		return fail(fmt.Errorf("read status line: header over %d bytes", maxHeaderBytes))
	}
	if err != nil {
		return fail(headerErr("read status line", err, line == ""))
	}
	code, err := parseStatusLine(line)
	if err != nil {
		return fail(err)
	}
	_, err = tp.ReadMIMEHeader()
	if over() {
		return fail(fmt.Errorf("read header: header over %d bytes", maxHeaderBytes))
	}
	if err != nil {
		return fail(headerErr("read header", err, false))
	}
	if code < 200 || code > 299 {
		return &proxyError{Proxy: h.shown, Code: code}
	}
	if br.Buffered() > 0 {
		return fail(errors.New("data after the answer, before the TLS handshake"))
	}
	return nil
}
