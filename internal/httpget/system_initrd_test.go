//go:build initrd

package httpget

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestSystemInitrd: the initramfs build's System Getter goes straight,
// whatever proxy the environment names, and follows no redirect: a 3xx
// answer is an error naming its Location.
func TestSystemInitrd(t *testing.T) {
	var got []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = append(got, r.RequestURI)
		if r.URL.Path == "/moved" {
			http.Redirect(w, r, "/there", http.StatusFound)
			return
		}
		io.WriteString(w, "straight")
	}))
	defer srv.Close()
	t.Setenv("http_proxy", "http://127.0.0.1:1")
	g := System("")
	if g.Proxy != nil {
		t.Error("a proxy function in the initramfs build")
	}
	if b, err := g.Get(context.Background(), Request{URL: srv.URL + "/x", Limit: 100}); err != nil || string(b) != "straight" {
		t.Errorf("Get: %q, %v", b, err)
	}
	_, err := g.Get(context.Background(), Request{URL: srv.URL + "/moved", Limit: 100})
	if Status(err) != 302 || !strings.Contains(err.Error(), "(redirect to /there not followed)") {
		t.Errorf("redirect: %v", err)
	}
	if strings.Join(got, " ") != "/x /moved" {
		t.Errorf("the server got %q", got)
	}
}
