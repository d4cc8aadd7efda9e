package userdata

import (
	"context"
	"fmt"
	"net/http"
	"testing"

	"github.com/earlyinit/earlyinit/internal/httpget"
	"github.com/earlyinit/earlyinit/internal/httpget/httpgettest"
)

// TestFetchIncludesHTTPS: #include https:// URLs go through httpget's TLS
// (the late stage's include getter is an httpget.Getter whose CA bundle
// is the root's): a server the bundle trusts is fetched and its payload
// decoded, one it does not is a warning with the TLS reason, and a
// redirect is not followed.
func TestFetchIncludesHTTPS(t *testing.T) {
	ca := httpgettest.NewCA(t, "include CA")
	srv := httpgettest.Server(t, ca.Issue(t, httpgettest.Leaf{}), nil, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/cc":
			fmt.Fprint(w, "#cloud-config\nb: 2\n")
		case "/nested":
			fmt.Fprintf(w, "#include https://%s/cc2\n", r.Host)
		case "/cc2":
			fmt.Fprint(w, "#cloud-config\nc: 3\n")
		case "/moved":
			http.Redirect(w, r, "http://"+r.Host+"/cc", http.StatusMovedPermanently)
		default:
			http.NotFound(w, r)
		}
	}))
	untrusted := httpgettest.Server(t, httpgettest.NewCA(t, "another CA").Issue(t, httpgettest.Leaf{}), nil, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, "#cloud-config\nd: 4\n")
	}))
	root := httpgettest.Root(t, ca)
	g := &httpget.Getter{CARoot: root, Retries: -1}
	get := func(ctx context.Context, url string, once bool) ([]byte, error) {
		return g.Get(ctx, httpget.Request{URL: url, Limit: MaxSize})
	}
	raw := "#include " + srv.URL + "/cc\n" + srv.URL + "/nested\n" + untrusted.URL + "/x\n" + srv.URL + "/moved\n"
	parts, warns, err := Decode([]byte(raw))
	if err != nil || len(warns) != 0 {
		t.Fatalf("Decode: %v %q", err, warns)
	}
	out, warns := FetchIncludes(context.Background(), parts, get, 3)
	sameParts(t, out, []got{
		{TypeCloudConfig, "part-001", "#cloud-config\nb: 2\n", ""},
		{TypeCloudConfig, "part-002", "#cloud-config\nc: 3\n", ""},
	})
	for _, w := range []string{
		"include " + untrusted.URL + "/x: GET " + untrusted.URL + "/x: TLS: certificate of 127.0.0.1 not trusted (checked against " + root + "/etc/ssl/certs/ca-certificates.crt): x509: certificate signed by unknown authority",
		"include " + srv.URL + "/moved: GET " + srv.URL + "/moved: HTTP 301 Moved Permanently (redirect to http://" + srv.Listener.Addr().String() + "/cc not followed)",
	} {
		if !hasWarning(warns, w) {
			t.Errorf("no warning %q in %q", w, warns)
		}
	}
	if len(warns) != 2 {
		t.Errorf("warnings %q, want 2", warns)
	}
}
