package httpget

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"testing"
)

// TestPrivilegedPort: with PrivilegedPort the request comes from a source
// port below 1024; without, from an ephemeral one.
func TestPrivilegedPort(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Fatal("binding a port below 1024 needs root: run the tests as root (make test does)")
	}
	var port int
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, p, _ := net.SplitHostPort(r.RemoteAddr)
		port, _ = strconv.Atoi(p)
		w.Write([]byte("ok"))
	}))
	defer srv.Close()
	for _, priv := range []bool{true, false} {
		g := &Getter{PrivilegedPort: priv, Retries: -1}
		if _, err := g.Get(context.Background(), Request{URL: srv.URL + "/user_data", Limit: 64}); err != nil {
			t.Fatalf("privileged=%v: %v", priv, err)
		}
		if (port < 1024) != priv {
			t.Errorf("privileged=%v: request from port %d", priv, port)
		}
	}
}
