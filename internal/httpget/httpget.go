// Package httpget fetches metadata documents for the metadata service
// clients (internal/datasource/openstack, internal/datasource/ec2), #include URLs
// and NoCloud seeds, and posts small forms (phone_home): one request at a
// time, each on its own connection with its own timeout, retried with
// backoff on connection errors, timeouts and 5xx answers, its body read
// through a limit.
//
// It speaks HTTP/1.1 itself, over net.Dialer, rather than with net/http:
// net/http brings HTTP/2, its transport and proxy machinery along, and a
// link-local metadata service needs none of it. https URLs are spoken
// over crypto/tls (TLS 1.2 or later), the server's certificate verified
// against a root's CA bundle (LoadCABundle: the real root's, mounted or
// "/"), by name or IP address; there is no way to skip the check. The
// initramfs build (build tag initrd) leaves TLS out: there every https
// request fails with ErrNoTLS before it is made. No keep-alive
// ("Connection: close"), no compression.
//
// By default there is no proxy and redirects are not followed (a 3xx
// answer is a *StatusError naming the Location): the metadata clients ask
// link-local services. The late stages' fetches use System's Getter,
// which, as Python's requests does for cloud-init, takes the proxy from
// the environment (Getter.Proxy, ProxyFromEnvironment; an http:// proxy,
// with a CONNECT tunnel for https) and follows redirects (Getter.Redirects:
// bounded, never from https to http, no Authorization to another server).
// Both are in the full build only: the initramfs build (tag initrd), whose
// late stages run only on roots without the package, keeps the small
// client that goes straight and follows nothing.
package httpget

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/netip"
	"net/url"
	"strings"
	"time"
)

// Defaults for the zero values of Getter's fields.
const (
	defaultRequestTimeout = 2 * time.Second
	DefaultRetries        = 2 // 3 tries in all
	DefaultBackoff        = 200 * time.Millisecond
)

// Fetcher is what a metadata client needs of HTTP: one GET. *Getter is
// the real one; tests and other transports give their own.
type Fetcher interface {
	Get(ctx context.Context, r Request) ([]byte, error)
}

// Getter fetches URLs. The zero value is usable.
type Getter struct {
	// RequestTimeout bounds one try, from dialing to the end of the body.
	// 0 means defaultRequestTimeout.
	RequestTimeout time.Duration
	// Retries is how many times a failed request is tried again: 0 means
	// DefaultRetries, a negative value means never.
	Retries int
	// Backoff is the wait before the first retry; it doubles for each next
	// one, with ±25% jitter. 0 means DefaultBackoff.
	Backoff time.Duration
	// Logf, if set, is told of each retry.
	Logf func(format string, args ...any)
	// Resolve, if set, finds the addresses of a URL's host name, as
	// net.DefaultResolver.LookupNetIP(ctx, "ip", host) does. Without it
	// hosts must be IP addresses: a metadata service is one, and leaving
	// the resolver out keeps the binary some 200 KB smaller.
	Resolve func(ctx context.Context, host string) ([]netip.Addr, error)
	// PrivilegedPort dials from a source port below 1024 (the first free
	// one from 1023 down), as Scaleway's metadata API demands for
	// user-data: only root can bind one, which is what the API trusts.
	PrivilegedPort bool
	// CARoot is the root whose CA bundle verifies https servers (see
	// LoadCABundle): "" means "/", the real root after switch_root; in the
	// initramfs, the real root's mount point. The bundle is read for each
	// Get of an https URL, so certificates added by ca_certs count.
	CARoot string
	// CAs, if set, verifies https servers instead of CARoot's bundle.
	CAs *CAPool
	// Redirects is how many redirects Get follows (redirect.go): 0, as
	// the metadata clients have it, follows none, and a 3xx answer is a
	// *StatusError naming its Location. System's Getter has maxRedirects.
	// The initramfs build follows none whatever this says.
	Redirects int
	// Proxy, if set, says which proxy a request for a URL goes through,
	// as http.Transport's Proxy does: nil for none (straight to the
	// server). Only http:// proxies are spoken: a request forwarded in
	// absolute form for http, a CONNECT tunnel for https, with Basic
	// credentials from the proxy URL's user information (proxy.go).
	// ProxyFromEnvironment reads it from the environment. The initramfs
	// build (tag initrd) never uses a proxy: there Proxy is not consulted.
	Proxy func(u *url.URL) (*url.URL, error)
}

// Request is one fetch.
type Request struct {
	Method string // "" means GET
	URL    string // http[s]://host[:port]/path?query
	// Header holds extra header fields. Host, Connection, Content-Length
	// and Transfer-Encoding are the client's; User-Agent is "earlyinit"
	// unless set here.
	Header map[string]string
	// Body is sent with a Content-Length (which PUT, POST and PATCH always
	// get, 0 without a body).
	Body []byte
	// Limit is the most body bytes taken; a longer body is an error. It
	// must be positive.
	Limit int64
	// NoRetryOnTimeout makes a try that timed out final, for probes whose
	// silence is an answer (the IMDSv2 token PUT).
	NoRetryOnTimeout bool

	// shown, if set, stands for URL in messages: a redirect's, which
	// names the URL asked for and where it led (redirect.go).
	shown string
}

// name is what messages call r's URL.
func (r *Request) name() string {
	if r.shown != "" {
		return r.shown
	}
	return r.URL
}

// StatusError is an answer other than 2xx (after any retries for 5xx).
type StatusError struct {
	Method, URL string
	Code        int
	Tries       int
	// Location is a redirect's target (the Location field), which is not
	// followed.
	Location string
}

func (e *StatusError) Error() string {
	s := fmt.Sprintf("%s %s: HTTP %d", e.Method, e.URL, e.Code)
	if t := statusText(e.Code); t != "" {
		s += " " + t
	}
	if e.Location != "" {
		s += fmt.Sprintf(" (redirect to %s not followed)", e.Location)
	}
	return s + tries(e.Tries)
}

// TimeoutError is a try that got no complete answer within the request
// timeout (after any retries).
type TimeoutError struct {
	Method, URL string
	After       time.Duration // the request timeout
	Tries       int
}

func (e *TimeoutError) Error() string {
	return fmt.Sprintf("%s %s: no complete answer within %v%s", e.Method, e.URL, e.After, tries(e.Tries))
}

// Timeout tells that this is a timeout, as net.Error does.
func (e *TimeoutError) Timeout() bool { return true }

// TooBigError is a body over the request's limit.
type TooBigError struct {
	Method, URL string
	Limit       int64
}

func (e *TooBigError) Error() string {
	return fmt.Sprintf("%s %s: body over the %d byte limit", e.Method, e.URL, e.Limit)
}

func tries(n int) string {
	if n > 1 {
		return fmt.Sprintf(" (%d tries)", n)
	}
	return ""
}

// Status returns the HTTP status code of err if it is (or wraps) a
// *StatusError, else 0.
func Status(err error) int {
	var se *StatusError
	if errors.As(err, &se) {
		return se.Code
	}
	return 0
}

// NotFound tells whether err is an HTTP 404 answer.
func NotFound(err error) bool { return Status(err) == 404 }

// Get fetches r.URL and returns its body. ctx bounds the whole fetch,
// retries and redirects included: once it is done, Get returns an error
// wrapping ctx.Err() that names the URL. 4xx answers are never retried.
// With g.Redirects, a redirect is followed as Python's requests follows it
// (redirect.go), each URL it leads to with tries of its own; not in the
// initramfs build.
func (g *Getter) Get(ctx context.Context, r Request) ([]byte, error) {
	if r.Method == "" {
		r.Method = "GET"
	}
	if r.Limit <= 0 {
		return nil, fmt.Errorf("%s %s: no body limit", r.Method, r.URL)
	}
	r.shown = ""
	first := r
	for n := 0; ; n++ {
		b, err := g.get(ctx, r)
		se, ok := err.(*StatusError)
		if !redirectSupport || g.Redirects <= 0 || !ok || !redirectCode(se.Code) || se.Location == "" {
			return b, err
		}
		if r, err = g.redirect(first, r, n, se); err != nil {
			return nil, err
		}
	}
}

// get fetches r.URL, with retries: Get without the redirects.
func (g *Getter) get(ctx context.Context, r Request) ([]byte, error) {
	retries := g.Retries
	switch {
	case retries == 0:
		retries = DefaultRetries
	case retries < 0:
		retries = 0
	}
	wait := g.Backoff
	if wait <= 0 {
		wait = DefaultBackoff
	}
	var cas *CAPool
	if u, err := url.Parse(r.URL); err == nil && strings.EqualFold(u.Scheme, "https") {
		if cas, err = g.caPool(); err != nil {
			return nil, fmt.Errorf("%s %s: %w", r.Method, r.name(), err)
		}
	}
	for try := 1; ; try++ {
		b, again, err := g.try(ctx, r, try, cas)
		if err == nil {
			return b, nil
		}
		if !again || try > retries {
			return nil, err
		}
		if cerr := ctx.Err(); cerr != nil {
			return nil, fmt.Errorf("%w; then %w", err, cerr)
		}
		d := wait/4*3 + rand.N(wait/2+1)
		if dl, ok := ctx.Deadline(); ok && time.Until(dl) < d {
			// No time left for another try: the last error says more than
			// the deadline would.
			return nil, err
		}
		if g.Logf != nil {
			g.Logf("%v; retrying in %v", err, d.Round(time.Millisecond))
		}
		t := time.NewTimer(d)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, fmt.Errorf("%w; then %w", err, ctx.Err())
		case <-t.C:
		}
		wait *= 2
	}
}

// try makes one request. again tells whether the error is worth a retry.
// cas verifies https servers.
func (g *Getter) try(ctx context.Context, r Request, try int, cas *CAPool) (body []byte, again bool, err error) {
	timeout := g.RequestTimeout
	if timeout <= 0 {
		timeout = defaultRequestTimeout
	}
	tctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	name := r.name()
	// failed classifies a transport or body read error.
	failed := func(err error) ([]byte, bool, error) {
		if dl, ok := tctx.Deadline(); ok && !time.Now().Before(dl) {
			// The connection's deadline is tctx's, but its timer may
			// not have fired yet: let it, to tell whose deadline it was.
			<-tctx.Done()
		}
		if cerr := ctx.Err(); cerr != nil {
			return nil, false, fmt.Errorf("%s %s: %w", r.Method, name, cerr)
		}
		if tctx.Err() != nil || isTimeout(err) {
			return nil, !r.NoRetryOnTimeout, &TimeoutError{Method: r.Method, URL: name, After: timeout, Tries: try}
		}
		return nil, true, fmt.Errorf("%s %s: %w%s", r.Method, name, err, tries(try))
	}

	t, err := parseURL(r.URL)
	if err != nil {
		return nil, false, fmt.Errorf("%s %s: %w", r.Method, name, err)
	}
	// via is the proxy the request goes through, nil for none. The
	// initramfs build has no proxy support (proxySupport is false there,
	// and the proxy code is left out of it).
	var via *proxyHop
	if proxySupport && g.Proxy != nil {
		if via, err = g.proxyFor(r.URL); err != nil {
			return nil, false, fmt.Errorf("%s %s: %w", r.Method, name, err)
		}
	}
	// Through a proxy, the proxy resolves the server's name, and
	// messages name the proxy too (a 502 may be its own).
	dialed := t.hostname
	if via != nil {
		dialed = via.target.hostname
		name += " (through proxy " + via.shown + ")"
		if !t.tls {
			t.proxyAuth, t.absolute = via.auth, true
		}
	}
	if _, err := netip.ParseAddr(dialed); err != nil && g.Resolve == nil {
		return nil, false, fmt.Errorf("%s %s: host %q is not an IP address, and the Getter has no resolver", r.Method, name, dialed)
	}
	msg, err := buildRequest(r, t)
	if err != nil {
		return nil, false, fmt.Errorf("%s %s: %w", r.Method, name, err)
	}
	resp, err := g.roundTrip(tctx, t, via, msg, r.Method, r.Limit, cas)
	if errors.Is(err, errTooBig) {
		return nil, false, &TooBigError{Method: r.Method, URL: name, Limit: r.Limit}
	}
	if ce := (*CertError)(nil); errors.As(err, &ce) {
		// Another try gets the same certificate.
		return nil, false, fmt.Errorf("%s %s: %w", r.Method, name, err)
	}
	if pe := (*proxyError)(nil); proxySupport && errors.As(err, &pe) && pe.Code < 500 {
		// The proxy refused the tunnel (407 credentials, 403 the host):
		// another try gets the same answer.
		return nil, false, fmt.Errorf("%s %s: %w", r.Method, name, err)
	}
	if err != nil {
		return failed(err)
	}
	if resp.code < 200 || resp.code > 299 {
		se := &StatusError{Method: r.Method, URL: name, Code: resp.code, Tries: try}
		if resp.code >= 300 && resp.code <= 399 {
			se.Location = resp.header.Get("Location")
		}
		return nil, resp.code >= 500, se
	}
	return resp.body, false, nil
}

func isTimeout(err error) bool {
	var te interface{ Timeout() bool }
	return errors.Is(err, context.DeadlineExceeded) || (errors.As(err, &te) && te.Timeout())
}

// Post sends body, of type contentType, to url and returns the answer's
// body, at most limit bytes. It is retried as Get retries, so the server
// may see it more than once.
func (g *Getter) Post(ctx context.Context, url, contentType string, body []byte, limit int64) ([]byte, error) {
	if body == nil {
		body = []byte{}
	}
	return g.Get(ctx, Request{Method: "POST", URL: url, Header: map[string]string{"Content-Type": contentType}, Body: body, Limit: limit})
}
