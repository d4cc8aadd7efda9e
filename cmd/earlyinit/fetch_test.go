//go:build !initrd

package main

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/earlyinit/earlyinit/internal/httpget/httpgettest"
)

// TestFetchURLProxy: an #include URL is fetched through the proxy the
// environment names (the server's name is the proxy's to resolve), and
// its redirect followed; a host in no_proxy is fetched straight.
func TestFetchURLProxy(t *testing.T) {
	for _, k := range []string{"HTTP_PROXY", "https_proxy", "HTTPS_PROXY", "all_proxy", "ALL_PROXY", "no_proxy", "NO_PROXY"} {
		t.Setenv(k, "")
	}
	proxy := httpgettest.NewProxy(t)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/moved" {
			http.Redirect(w, r, "/config", http.StatusFound)
			return
		}
		io.WriteString(w, "#cloud-config\n")
	}))
	defer srv.Close()
	port := srv.URL[strings.LastIndex(srv.URL, ":"):]
	t.Setenv("http_proxy", proxy.URL)

	u := "http://include.test" + port + "/moved"
	b, err := fetchURL(context.Background(), u)
	if err != nil || string(b) != "#cloud-config\n" {
		t.Fatalf("fetchURL %s: %q, %v", u, b, err)
	}
	want := []string{"GET " + u, "GET http://include.test" + port + "/config"}
	if got := proxy.Requests(); !slices.Equal(got, want) {
		t.Errorf("the proxy got %q, want %q", got, want)
	}

	t.Setenv("no_proxy", "127.0.0.1")
	if b, err := fetchURL(context.Background(), srv.URL+"/config"); err != nil || string(b) != "#cloud-config\n" {
		t.Fatalf("fetchURL %s: %q, %v", srv.URL, b, err)
	}
	if got := proxy.Requests(); len(got) != 2 {
		t.Errorf("no_proxy: the proxy got %q", got)
	}
}
