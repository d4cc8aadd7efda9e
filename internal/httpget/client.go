package httpget

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// userAgent is sent unless the request's Header sets User-Agent.
const userAgent = "earlyinit"

// target is where a request goes.
type target struct {
	hostname string // to dial: a name or an IP address, an IPv6 zone kept
	port     uint16
	host     string // the Host header: no zone (RFC 9110, 7.2; RFC 6874, 4)
	uri      string // the request-target: path and query
	tls      bool   // https
	// absolute is set for a plain http request through a proxy: the
	// request-target is the absolute URI (RFC 9112, 3.2.2), and
	// proxyAuth, if set, the Proxy-Authorization value.
	absolute  bool
	proxyAuth string
}

// parseURL checks that raw is an absolute http or https URL and splits it for
// dialing and the request line. An IPv6 literal's zone is percent-encoded
// in a URL: http://[fe80::a9fe:a9fe%25eth0]/x dials [fe80::a9fe:a9fe%eth0]:80.
func parseURL(raw string) (target, error) {
	u, err := url.Parse(raw)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return target{}, fmt.Errorf("bad URL: %w", err)
	}
	switch {
	case u.Scheme != "http" && u.Scheme != "https":
		return target{}, fmt.Errorf("bad URL: scheme %q, want http or https", u.Scheme)
	case u.User != nil:
		return target{}, errors.New("bad URL: user info is not supported")
	case u.Opaque != "":
		return target{}, errors.New("bad URL: not hierarchical")
	}
	hostname, port := u.Hostname(), u.Port()
	if hostname == "" {
		return target{}, errors.New("bad URL: no host")
	}
	t := target{hostname: hostname, port: 80, uri: u.RequestURI(), tls: u.Scheme == "https"}
	if t.tls {
		t.port = 443
	}
	if port != "" {
		n, err := strconv.ParseUint(port, 10, 16)
		if err != nil || n == 0 {
			return target{}, fmt.Errorf("bad URL: port %q", port)
		}
		t.port = uint16(n)
	} else if strings.HasSuffix(u.Host, ":") {
		return target{}, errors.New("bad URL: empty port")
	}
	if i := strings.IndexByte(hostname, '%'); i >= 0 {
		if !strings.HasPrefix(u.Host, "[") {
			return target{}, fmt.Errorf("bad URL: host %q: only a bracketed IPv6 address has a zone", hostname)
		}
		hostname = hostname[:i]
	}
	t.host = hostname
	if strings.Contains(hostname, ":") {
		t.host = "[" + hostname + "]"
	}
	if port != "" {
		t.host += ":" + port
	}
	return t, nil
}

// reserved tells whether a header field is one the client writes itself.
func reserved(name string) bool {
	switch strings.ToLower(name) {
	case "host", "connection", "content-length", "transfer-encoding", "proxy-authorization":
		return true
	}
	return false
}

// buildRequest writes the request message: request line, header, body.
func buildRequest(r Request, t target) ([]byte, error) {
	if !isToken(r.Method) {
		return nil, fmt.Errorf("bad method %q", r.Method)
	}
	var b strings.Builder
	uri := t.uri
	if t.absolute {
		uri = "http://" + t.host + t.uri
	}
	b.WriteString(r.Method + " " + uri + " HTTP/1.1\r\nHost: " + t.host + "\r\n")
	if t.proxyAuth != "" {
		b.WriteString("Proxy-Authorization: " + t.proxyAuth + "\r\n")
	}
	if _, ok := headerValue(r.Header, "User-Agent"); !ok {
		b.WriteString("User-Agent: " + userAgent + "\r\n")
	}
	keys := make([]string, 0, len(r.Header))
	for k := range r.Header {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		v := r.Header[k]
		if !isToken(k) {
			return nil, fmt.Errorf("bad header name %q", k)
		}
		if reserved(k) {
			return nil, fmt.Errorf("header %s is set by the client", k)
		}
		if strings.IndexFunc(v, func(r rune) bool { return r < ' ' && r != '\t' || r == 0x7f }) >= 0 {
			return nil, fmt.Errorf("header %s: bad value %q", k, v)
		}
		b.WriteString(k + ": " + v + "\r\n")
	}
	b.WriteString("Connection: close\r\n")
	if r.Body != nil || r.Method == "POST" || r.Method == "PUT" || r.Method == "PATCH" {
		b.WriteString("Content-Length: " + strconv.Itoa(len(r.Body)) + "\r\n")
	}
	b.WriteString("\r\n")
	b.Write(r.Body)
	return []byte(b.String()), nil
}

// headerValue looks a field up, ignoring case.
func headerValue(h map[string]string, name string) (string, bool) {
	for k, v := range h {
		if strings.EqualFold(k, name) {
			return v, true
		}
	}
	return "", false
}

// isToken tells whether s is an RFC 9110 token (a method or field name).
func isToken(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0 {
			continue
		}
		return false
	}
	return s != ""
}

// dial connects to t: to its IP address, else to the addresses
// g.Resolve finds for its name, in turn.
func (g *Getter) dial(ctx context.Context, t target) (net.Conn, error) {
	d := net.Dialer{KeepAlive: -1}
	if ip, err := netip.ParseAddr(t.hostname); err == nil {
		if z := ip.Zone(); z != "" && !allDigits(z) {
			// net would take an unknown name as no zone at all.
			if _, err := net.InterfaceByName(z); err != nil {
				return nil, fmt.Errorf("zone %s: %w", z, err)
			}
		}
		c, err := g.dialTCP(ctx, &d, netip.AddrPortFrom(ip, t.port))
		if err != nil {
			return nil, err // not a nil *TCPConn in a non-nil net.Conn
		}
		return c, nil
	}
	if g.Resolve == nil {
		return nil, fmt.Errorf("host %q is not an IP address, and no resolver", t.hostname)
	}
	ips, err := g.Resolve(ctx, t.hostname)
	if err == nil && len(ips) == 0 {
		err = errors.New("no address")
	}
	if err != nil {
		return nil, fmt.Errorf("resolve %s: %w", t.hostname, err)
	}
	for _, ip := range ips {
		c, derr := g.dialTCP(ctx, &d, netip.AddrPortFrom(ip.Unmap(), t.port))
		if derr == nil {
			return c, nil
		}
		err = derr
	}
	return nil, err
}

// dialTCP connects to raddr, from a privileged source port when
// g.PrivilegedPort says so: 1023 down to 512, skipping ports in use.
func (g *Getter) dialTCP(ctx context.Context, d *net.Dialer, raddr netip.AddrPort) (*net.TCPConn, error) {
	if !g.PrivilegedPort {
		return d.DialTCP(ctx, "tcp", netip.AddrPort{}, raddr)
	}
	local := netip.IPv6Unspecified()
	if raddr.Addr().Is4() {
		local = netip.IPv4Unspecified()
	}
	var err error
	for port := uint16(1023); port >= 512; port-- {
		var c *net.TCPConn
		c, err = d.DialTCP(ctx, "tcp", netip.AddrPortFrom(local, port), raddr)
		if err == nil {
			return c, nil
		}
		if !errors.Is(err, syscall.EADDRINUSE) {
			return nil, err
		}
	}
	return nil, fmt.Errorf("no free source port below 1024: %w", err)
}

// roundTrip sends msg to t on a new connection and reads the answer. ctx
// bounds it all: its deadline is the connection's, and its end, whenever
// it comes, interrupts a blocked read or write.
// An https target's connection is TLS, verified against cas. With via,
// the connection is to the proxy, and for https a tunnel through it.
func (g *Getter) roundTrip(ctx context.Context, t target, via *proxyHop, msg []byte, method string, limit int64, cas *CAPool) (*response, error) {
	to := t
	if proxySupport && via != nil {
		to = via.target
	}
	tcp, err := g.dial(ctx, to)
	if err != nil {
		return nil, err
	}
	defer tcp.Close()
	if dl, ok := ctx.Deadline(); ok {
		tcp.SetDeadline(dl)
	}
	stop := context.AfterFunc(ctx, func() { tcp.SetDeadline(time.Unix(1, 0)) })
	defer stop()
	conn := tcp
	if proxySupport && via != nil && t.tls {
		if err := via.connect(tcp, t); err != nil {
			return nil, err
		}
	}
	if t.tls {
		if cas == nil {
			return nil, errors.New("https: no CA certificates to verify the server with")
		}
		if conn, err = handshake(ctx, tcp, t, cas); err != nil {
			return nil, err
		}
	}
	if _, err := conn.Write(msg); err != nil {
		return nil, fmt.Errorf("write request: %w", err)
	}
	return readResponse(conn, method, limit)
}
