package datasource

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/earlyinit/earlyinit/internal/httpget"
	"github.com/earlyinit/earlyinit/internal/instance"
)

// HTTPClient is how a metadata source's Client makes its requests; each
// Client embeds it. The zero value uses httpget's defaults.
type HTTPClient struct {
	// HTTP makes the requests; nil means an httpget.Getter with the
	// settings below.
	HTTP httpget.Fetcher
	// RequestTimeout bounds each try of each request, Retries is how many
	// times a request that failed with a connection error, a timeout or a
	// 5xx answer is tried again (a negative value: never), Backoff is the
	// wait before the first retry, doubled for each next one. 0 means
	// httpget's default (2 s, 2 retries, 200 ms).
	RequestTimeout time.Duration
	Retries        int
	Backoff        time.Duration
	// Logf, if set, is told of retries and of what the source chose or
	// skipped; never of a secret.
	Logf func(format string, args ...any)
}

// Fetcher is h.HTTP, or an httpget.Getter with h's settings.
func (h HTTPClient) Fetcher() httpget.Fetcher {
	if h.HTTP != nil {
		return h.HTTP
	}
	return &httpget.Getter{RequestTimeout: h.RequestTimeout, Retries: h.Retries, Backoff: h.Backoff, Logf: h.Logf}
}

// Log tells h.Logf, if set.
func (h HTTPClient) Log(format string, args ...any) {
	if h.Logf != nil {
		h.Logf(format, args...)
	}
}

// HTTPClient is how a source reads s: s.HTTP, s.Logf, and s.Timeout as
// the request timeout.
func (s Service) HTTPClient() HTTPClient {
	return HTTPClient{HTTP: s.HTTP, RequestTimeout: s.Timeout, Logf: s.Logf}
}

// BaseURL is a service's root: base without trailing slashes, or def when
// that is "".
func BaseURL(base, def string) string {
	if base = strings.TrimRight(base, "/"); base == "" {
		return def
	}
	return base
}

// Limit is a body limit a Client was given, or def when it was not (0 or
// less).
func Limit(n, def int64) int64 {
	if n <= 0 {
		return def
	}
	return n
}

// Optional is a fetch's answer for a document the service may not have: a
// 404 is no document (nil, and no error); any other error is returned as
// is; a document is never nil (an empty answer is an empty document).
// Call it as Optional(f.Get(ctx, r)).
func Optional(b []byte, err error) ([]byte, error) {
	switch {
	case httpget.NotFound(err):
		return nil, nil
	case err != nil:
		return nil, err
	case b == nil:
		return []byte{}, nil
	}
	return b, nil
}

// ReadDocument is the whole read of a source whose metadata is one
// document: it fetches r with f, gives the body to parse with r.URL (to
// name in its errors), and names base in the instance's Subplatform. A
// failed fetch is returned as is (httpget's errors name the URL).
func ReadDocument(ctx context.Context, f httpget.Fetcher, base string, r httpget.Request, parse func(u string, b []byte) (*instance.Data, error)) (*instance.Data, error) {
	b, err := f.Get(ctx, r)
	if err != nil {
		return nil, err
	}
	d, err := parse(r.URL, b)
	if err != nil {
		return nil, err
	}
	d.Subplatform = fmt.Sprintf("metadata (%s)", base)
	return d, nil
}
