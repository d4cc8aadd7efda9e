package datasource

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/earlyinit/earlyinit/internal/httpget"
	"github.com/earlyinit/earlyinit/internal/instance"
)

// fetchFunc is an httpget.Fetcher from a function.
type fetchFunc func(ctx context.Context, r httpget.Request) ([]byte, error)

func (f fetchFunc) Get(ctx context.Context, r httpget.Request) ([]byte, error) { return f(ctx, r) }

func TestHTTPClientFetcher(t *testing.T) {
	own := fetchFunc(func(context.Context, httpget.Request) ([]byte, error) { return nil, nil })
	logf := func(string, ...any) {}
	for _, tc := range []struct {
		name string
		h    HTTPClient
		want *httpget.Getter // nil: h.HTTP itself
	}{
		{"zero", HTTPClient{}, &httpget.Getter{}},
		{"settings", HTTPClient{RequestTimeout: time.Second, Retries: -1, Backoff: time.Millisecond},
			&httpget.Getter{RequestTimeout: time.Second, Retries: -1, Backoff: time.Millisecond}},
		{"own fetcher wins", HTTPClient{HTTP: own, RequestTimeout: time.Second, Retries: 5}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := tc.h.Fetcher()
			if tc.want == nil {
				if _, ok := got.(fetchFunc); !ok {
					t.Fatalf("Fetcher() = %T, want the HTTP set", got)
				}
				return
			}
			g, ok := got.(*httpget.Getter)
			if !ok {
				t.Fatalf("Fetcher() = %T, want *httpget.Getter", got)
			}
			if g.Logf != nil {
				t.Error("Getter has a Logf, none was set")
			}
			if g.RequestTimeout != tc.want.RequestTimeout || g.Retries != tc.want.Retries || g.Backoff != tc.want.Backoff || g.Resolve != nil {
				t.Errorf("Fetcher() = %+v, want %+v", *g, *tc.want)
			}
		})
	}
	if g := (HTTPClient{Logf: logf}).Fetcher().(*httpget.Getter); g.Logf == nil {
		t.Error("the Getter is not given Logf")
	}
}

func TestHTTPClientLog(t *testing.T) {
	HTTPClient{}.Log("no Logf: %d", 1) // must not panic
	var got []string
	h := HTTPClient{Logf: func(f string, a ...any) { got = append(got, fmt.Sprintf(f, a...)) }}
	h.Log("a %s %d", "b", 2)
	if !reflect.DeepEqual(got, []string{"a b 2"}) {
		t.Errorf("logged %q", got)
	}
}

func TestServiceHTTPClient(t *testing.T) {
	own := fetchFunc(func(context.Context, httpget.Request) ([]byte, error) { return []byte("own"), nil })
	var logged int
	svc := Service{Base: "http://x", HTTP: own, Timeout: 3 * time.Second, DHCPServer: "10.0.0.1",
		Logf: func(string, ...any) { logged++ }}
	h := svc.HTTPClient()
	if h.RequestTimeout != 3*time.Second || h.Retries != 0 || h.Backoff != 0 {
		t.Errorf("HTTPClient() = %+v: want the service's timeout and the default retries", h)
	}
	if b, _ := h.Fetcher().Get(context.Background(), httpget.Request{}); string(b) != "own" {
		t.Error("HTTPClient() does not make its requests with the service's HTTP")
	}
	h.Log("x")
	if logged != 1 {
		t.Error("HTTPClient() does not log to the service's Logf")
	}
}

func TestBaseURL(t *testing.T) {
	for _, tc := range []struct{ base, want string }{
		{"", "http://def"},
		{"/", "http://def"},
		{"///", "http://def"},
		{"http://10.0.0.1", "http://10.0.0.1"},
		{"http://10.0.0.1/", "http://10.0.0.1"},
		{"http://10.0.0.1/x//", "http://10.0.0.1/x"},
		{"http://[fe80::1%25eth0]/", "http://[fe80::1%25eth0]"},
	} {
		if got := BaseURL(tc.base, "http://def"); got != tc.want {
			t.Errorf("BaseURL(%q) = %q, want %q", tc.base, got, tc.want)
		}
	}
}

func TestLimit(t *testing.T) {
	for _, tc := range []struct{ n, want int64 }{
		{0, 100},
		{-1, 100},
		{1, 1},
		{1 << 40, 1 << 40},
	} {
		if got := Limit(tc.n, 100); got != tc.want {
			t.Errorf("Limit(%d, 100) = %d, want %d", tc.n, got, tc.want)
		}
	}
}

func TestReadDocument(t *testing.T) {
	fetchErr := errors.New("GET http://svc/doc: HTTP 500")
	parseErr := errors.New("http://svc/doc: id: missing")
	req := httpget.Request{URL: "http://svc/doc", Header: map[string]string{"K": "v"}, Limit: 42}
	for _, tc := range []struct {
		name     string
		body     []byte
		fetchErr error
		parseErr error
		wantErr  error
	}{
		{name: "read", body: []byte(`{"id": "i"}`)},
		{name: "empty body", body: []byte{}},
		{name: "fetch fails", fetchErr: fetchErr, wantErr: fetchErr},
		{name: "parse fails", body: []byte(`{}`), parseErr: parseErr, wantErr: parseErr},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var asked httpget.Request
			f := fetchFunc(func(_ context.Context, r httpget.Request) ([]byte, error) {
				asked = r
				return tc.body, tc.fetchErr
			})
			parsed := false
			parse := func(u string, b []byte) (*instance.Data, error) {
				parsed = true
				if u != req.URL || string(b) != string(tc.body) {
					t.Errorf("parse(%q, %q), want (%q, %q)", u, b, req.URL, tc.body)
				}
				if tc.parseErr != nil {
					return nil, tc.parseErr
				}
				return &instance.Data{InstanceID: "i"}, nil
			}
			d, err := ReadDocument(context.Background(), f, "http://svc", req, parse)
			if !reflect.DeepEqual(asked, req) {
				t.Errorf("fetched %+v, want %+v", asked, req)
			}
			if err != tc.wantErr {
				t.Fatalf("err = %v, want %v (as is)", err, tc.wantErr)
			}
			if tc.fetchErr != nil && parsed {
				t.Error("parse called after a failed fetch")
			}
			if err != nil {
				if d != nil {
					t.Errorf("d = %+v with an error", d)
				}
				return
			}
			if d.InstanceID != "i" || d.Subplatform != "metadata (http://svc)" {
				t.Errorf("d = %+v, want the parsed instance with Subplatform %q", d, "metadata (http://svc)")
			}
		})
	}
}

func TestOptional(t *testing.T) {
	notFound := &httpget.StatusError{Method: "GET", URL: "http://svc/ud", Code: 404}
	gone := &httpget.StatusError{Method: "GET", URL: "http://svc/ud", Code: 410}
	timeout := &httpget.TimeoutError{Method: "GET", URL: "http://svc/ud", After: time.Second}
	wrapped := fmt.Errorf("svc: %w", notFound)
	for _, tc := range []struct {
		name    string
		b       []byte
		err     error
		want    []byte
		wantErr error
	}{
		{name: "document", b: []byte("#cloud-config\n"), want: []byte("#cloud-config\n")},
		{name: "empty answer", b: []byte{}, want: []byte{}},
		{name: "nil answer", b: nil, want: []byte{}},
		{name: "404", err: notFound},
		{name: "404 wrapped", err: wrapped},
		{name: "410", err: gone, wantErr: gone},
		{name: "timeout", err: timeout, wantErr: timeout},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Optional(tc.b, tc.err)
			if err != tc.wantErr {
				t.Fatalf("err = %v, want %v (as is)", err, tc.wantErr)
			}
			if (got == nil) != (tc.want == nil) || string(got) != string(tc.want) {
				t.Errorf("Optional = %#v, want %#v", got, tc.want)
			}
		})
	}
}
