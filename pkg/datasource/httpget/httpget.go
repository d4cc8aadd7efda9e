// Package httpget fetches metadata documents over HTTP for the metadata
// service clients (pkg/datasource/openstack, pkg/datasource/ec2): one request
// at a time, each with its own timeout, retried with backoff on connection
// errors, timeouts and 5xx answers, its body read through a limit.
//
// It lives under openstack/ only because that is where its first user is;
// it has no OpenStack knowledge and would sit as well in pkg/datasource.
package httpget

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"time"
)

// Defaults for the zero values of Getter's fields.
const (
	DefaultRequestTimeout = 2 * time.Second
	DefaultRetries        = 2 // 3 tries in all
	DefaultBackoff        = 200 * time.Millisecond
)

// Getter fetches URLs. The zero value is usable except for HTTP, which must
// be set (NewClient makes one).
type Getter struct {
	HTTP *http.Client
	// RequestTimeout bounds one try, from dialing to the end of the body.
	// 0 means DefaultRequestTimeout.
	RequestTimeout time.Duration
	// Retries is how many times a failed request is tried again: 0 means
	// DefaultRetries, a negative value means never.
	Retries int
	// Backoff is the wait before the first retry; it doubles for each next
	// one, with ±25% jitter. 0 means DefaultBackoff.
	Backoff time.Duration
	// Logf, if set, is told of each retry.
	Logf func(format string, args ...any)
}

// NewClient returns an HTTP client for link-local metadata services: no
// proxy (whatever the environment says) and no overall timeout, since
// Getter bounds each try itself. Call CloseIdleConnections when done.
func NewClient() *http.Client {
	return &http.Client{Transport: &http.Transport{
		Proxy:                 nil,
		DialContext:           (&net.Dialer{KeepAlive: -1}).DialContext,
		MaxIdleConnsPerHost:   2,
		IdleConnTimeout:       10 * time.Second,
		ResponseHeaderTimeout: 0,
		DisableCompression:    true,
	}}
}

// Request is one fetch.
type Request struct {
	Method string // "" means GET
	URL    string
	Header http.Header
	// Limit is the most body bytes taken; a longer body is an error. It
	// must be positive.
	Limit int64
	// NoRetryOnTimeout makes a try that timed out final, for probes whose
	// silence is an answer (the IMDSv2 token PUT).
	NoRetryOnTimeout bool
}

// StatusError is an answer other than 2xx (after any retries for 5xx).
type StatusError struct {
	Method, URL string
	Code        int
	Tries       int
}

func (e *StatusError) Error() string {
	return fmt.Sprintf("%s %s: HTTP %d %s%s", e.Method, e.URL, e.Code, http.StatusText(e.Code), tries(e.Tries))
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
func NotFound(err error) bool { return Status(err) == http.StatusNotFound }

// Get fetches r.URL and returns its body. ctx bounds the whole fetch,
// retries included: once it is done, Get returns an error wrapping
// ctx.Err() that names the URL. 4xx answers are never retried.
func (g *Getter) Get(ctx context.Context, r Request) ([]byte, error) {
	if r.Method == "" {
		r.Method = http.MethodGet
	}
	if r.Limit <= 0 {
		return nil, fmt.Errorf("%s %s: no body limit", r.Method, r.URL)
	}
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
	for try := 1; ; try++ {
		b, again, err := g.try(ctx, r, try)
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
func (g *Getter) try(ctx context.Context, r Request, try int) (body []byte, again bool, err error) {
	timeout := g.RequestTimeout
	if timeout <= 0 {
		timeout = DefaultRequestTimeout
	}
	tctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	// failed classifies a transport or body read error.
	failed := func(err error) ([]byte, bool, error) {
		if cerr := ctx.Err(); cerr != nil {
			return nil, false, fmt.Errorf("%s %s: %w", r.Method, r.URL, cerr)
		}
		if tctx.Err() != nil || isTimeout(err) {
			return nil, !r.NoRetryOnTimeout, &TimeoutError{Method: r.Method, URL: r.URL, After: timeout, Tries: try}
		}
		var ue *url.Error
		if errors.As(err, &ue) {
			// It repeats method and URL; keep its cause.
			err = ue.Err
		}
		return nil, true, fmt.Errorf("%s %s: %w%s", r.Method, r.URL, err, tries(try))
	}

	req, err := http.NewRequestWithContext(tctx, r.Method, r.URL, nil)
	if err != nil {
		return nil, false, fmt.Errorf("%s %s: %w", r.Method, r.URL, err)
	}
	for k, vs := range r.Header {
		req.Header[k] = vs
	}
	resp, err := g.HTTP.Do(req)
	if err != nil {
		return failed(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		// Drain a little so the connection can be reused.
		io.CopyN(io.Discard, resp.Body, 4096)
		return nil, resp.StatusCode >= 500, &StatusError{Method: r.Method, URL: r.URL, Code: resp.StatusCode, Tries: try}
	}
	if resp.ContentLength > r.Limit {
		return nil, false, &TooBigError{Method: r.Method, URL: r.URL, Limit: r.Limit}
	}
	b, err := io.ReadAll(io.LimitReader(resp.Body, r.Limit+1))
	if err != nil {
		return failed(err)
	}
	if int64(len(b)) > r.Limit {
		return nil, false, &TooBigError{Method: r.Method, URL: r.URL, Limit: r.Limit}
	}
	return b, false, nil
}

func isTimeout(err error) bool {
	var te interface{ Timeout() bool }
	return errors.Is(err, context.DeadlineExceeded) || (errors.As(err, &te) && te.Timeout())
}
