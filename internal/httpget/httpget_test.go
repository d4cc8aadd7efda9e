package httpget

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

func getter() *Getter {
	return &Getter{RequestTimeout: 50 * time.Millisecond, Backoff: time.Millisecond}
}

func TestGet(t *testing.T) {
	var calls atomic.Int32
	mux := http.NewServeMux()
	mux.HandleFunc("/ok", func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		if r.Header.Get("X-Test") != "yes" {
			http.Error(w, "no header", http.StatusBadRequest)
			return
		}
		w.Write([]byte("hello"))
	})
	mux.HandleFunc("/500", func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		http.Error(w, "boom", http.StatusInternalServerError)
	})
	mux.HandleFunc("/flaky", func(w http.ResponseWriter, r *http.Request) {
		if calls.Add(1) < 3 {
			http.Error(w, "busy", http.StatusServiceUnavailable)
			return
		}
		w.Write([]byte("at last"))
	})
	mux.HandleFunc("/404", func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		http.NotFound(w, r)
	})
	mux.HandleFunc("/slow", func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		select {
		case <-r.Context().Done():
		case <-time.After(time.Second):
		}
	})
	mux.HandleFunc("/slowbody", func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		w.Write([]byte("start"))
		w.(http.Flusher).Flush()
		select {
		case <-r.Context().Done():
		case <-time.After(time.Second):
		}
	})
	mux.HandleFunc("/big", func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		w.Write([]byte(strings.Repeat("x", 11)))
	})
	mux.HandleFunc("/bigchunked", func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		for range 11 {
			w.Write([]byte("x"))
			w.(http.Flusher).Flush()
		}
	})
	srv := httptest.NewServer(mux)
	defer srv.Close()

	for _, tt := range []struct {
		path             string
		noRetryOnTimeout bool
		want             string // body, or error text after the URL
		calls            int32
		check            func(error) bool
	}{
		{path: "/ok", want: "hello", calls: 1},
		{path: "/flaky", want: "at last", calls: 3},
		{path: "/500", want: ": HTTP 500 Internal Server Error (3 tries)", calls: 3, check: func(err error) bool { return Status(err) == 500 }},
		{path: "/404", want: ": HTTP 404 Not Found", calls: 1, check: NotFound},
		{path: "/slow", want: ": no complete answer within 50ms (3 tries)", calls: 3, check: isTimeout},
		{path: "/slow", noRetryOnTimeout: true, want: ": no complete answer within 50ms", calls: 1, check: isTimeout},
		{path: "/slowbody", want: ": no complete answer within 50ms (3 tries)", calls: 3, check: isTimeout},
		{path: "/big", want: ": body over the 10 byte limit", calls: 1, check: tooBig},
		{path: "/bigchunked", want: ": body over the 10 byte limit", calls: 1, check: tooBig},
	} {
		calls.Store(0)
		url := srv.URL + tt.path
		b, err := getter().Get(context.Background(), Request{URL: url, Header: map[string]string{"X-Test": "yes"}, Limit: 10, NoRetryOnTimeout: tt.noRetryOnTimeout})
		if tt.check == nil {
			if err != nil || string(b) != tt.want {
				t.Errorf("%s: got %q, %v; want %q", tt.path, b, err, tt.want)
			}
		} else {
			if err == nil || err.Error() != "GET "+url+tt.want || !tt.check(err) {
				t.Errorf("%s: got %q, %v; want error %q", tt.path, b, err, "GET "+url+tt.want)
			}
		}
		if got := calls.Load(); got != tt.calls {
			t.Errorf("%s: %d calls, want %d", tt.path, got, tt.calls)
		}
	}
}

func tooBig(err error) bool { var e *TooBigError; return errors.As(err, &e) }

func TestRetriesKnob(t *testing.T) {
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		w.WriteHeader(http.StatusBadGateway)
	}))
	defer srv.Close()
	for _, tt := range []struct{ retries, calls int32 }{{-1, 1}, {1, 2}, {4, 5}} {
		calls.Store(0)
		g := getter()
		g.Retries = int(tt.retries)
		if _, err := g.Get(context.Background(), Request{URL: srv.URL, Limit: 1}); Status(err) != 502 {
			t.Errorf("Retries %d: err %v, want a 502", tt.retries, err)
		}
		if calls.Load() != tt.calls {
			t.Errorf("Retries %d: %d calls, want %d", tt.retries, calls.Load(), tt.calls)
		}
	}
}

func TestConnectionRefused(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL + "/x"
	srv.Close()
	var logged []string
	g := getter()
	g.Logf = func(f string, a ...any) { logged = append(logged, f) }
	_, err := g.Get(context.Background(), Request{Method: http.MethodPut, URL: url, Limit: 1})
	if err == nil || !strings.HasPrefix(err.Error(), "PUT "+url+": dial tcp") || !strings.HasSuffix(err.Error(), "(3 tries)") {
		t.Errorf("err = %v, want a dial error naming the URL after 3 tries", err)
	}
	if len(logged) != 2 {
		t.Errorf("logged %d retries, want 2", len(logged))
	}
}

func TestContextBoundsRetries(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusInternalServerError)
	}))
	defer srv.Close()

	// A cancelled context: no request at all.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := getter().Get(ctx, Request{URL: srv.URL, Limit: 1})
	if !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), srv.URL) {
		t.Errorf("cancelled: err = %v, want context.Canceled naming the URL", err)
	}

	// A deadline shorter than the backoff: one try, then the 500 is the
	// answer, at once.
	g := getter()
	g.Backoff = time.Second
	ctx, cancel = context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err = g.Get(ctx, Request{URL: srv.URL, Limit: 1})
	if Status(err) != 500 {
		t.Errorf("deadline: err = %v, want the 500", err)
	}
	if d := time.Since(start); d >= g.Backoff {
		t.Errorf("deadline: took %v, want no wait for a retry that cannot happen", d)
	}
}

func TestContextDeadlineDuringRequest(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		<-r.Context().Done()
	}))
	defer srv.Close()
	g := getter()
	g.RequestTimeout = time.Second
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	_, err := g.Get(ctx, Request{URL: srv.URL, Limit: 1})
	if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), srv.URL) {
		t.Errorf("err = %v, want the context's deadline, naming the URL", err)
	}
}
