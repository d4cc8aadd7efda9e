//go:build !initrd

package httpget

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/earlyinit/earlyinit/internal/httpget/httpgettest"
)

// TestRedirectHTTPS: a redirect from http to https is followed, the
// server verified against the root's bundle; one from https to http is
// refused before anything is sent in the clear.
func TestRedirectHTTPS(t *testing.T) {
	ca := httpgettest.NewCA(t, "earlyinit test CA")
	var plain *recorder
	secure := newTLSServer(t, ca.Issue(t, httpgettest.Leaf{}), nil, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/down" {
			http.Redirect(w, r, plain.srv.URL+"/plain?token=s3cret", http.StatusMovedPermanently)
			return
		}
		io.WriteString(w, "secure")
	})
	plain = newRecorder(t, func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, secure.url+"/up", http.StatusFound)
	})
	g := following()
	g.CARoot = httpgettest.Root(t, ca)

	b, err := g.Get(context.Background(), Request{URL: plain.srv.URL + "/start", Limit: 100})
	if err != nil || string(b) != "secure" || len(secure.reqs) != 1 || secure.reqs[0] != "GET /up " {
		t.Fatalf("http to https: %q, %v; https server got %q", b, err, secure.reqs)
	}

	plain.reqs = nil
	u := secure.url + "/down"
	_, err = g.Get(context.Background(), Request{URL: u, Limit: 100})
	var re *redirectError
	want := "GET " + u + ": redirect to " + plain.srv.URL + "/plain?REDACTED refused: from https to http (earlyinit never downgrades)"
	if !errors.As(err, &re) || err.Error() != want {
		t.Errorf("https to http: err = %v\nwant %s", err, want)
	}
	if got := plain.got(); len(got) != 0 || strings.Contains(err.Error(), "s3cret") {
		t.Errorf("https to http: the http server got %+v", got)
	}
}
