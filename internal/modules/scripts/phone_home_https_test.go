package scripts

import (
	"context"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/earlyinit/earlyinit/internal/httpget"
	"github.com/earlyinit/earlyinit/internal/httpget/httpgettest"
	"github.com/earlyinit/earlyinit/internal/modules/coretest"
)

// TestPhoneHomeHTTPS: phone_home posts to an https URL whose server the
// root's CA bundle trusts; an untrusted one is logged with the TLS reason
// and is no module error, as any failure to post.
func TestPhoneHomeHTTPS(t *testing.T) {
	ca := httpgettest.NewCA(t, "phone_home CA")
	var hits []url.Values
	srv := httpgettest.Server(t, ca.Issue(t, httpgettest.Leaf{}), nil, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		v, _ := url.ParseQuery(string(b))
		hits = append(hits, v)
	}))
	te := coretest.NewEnv(t, "phone_home: {url: '"+srv.URL+"/$INSTANCE_ID/', post: [instance_id], tries: 2}")
	te.Write("/etc/ssl/certs/ca-certificates.crt", string(ca.PEM), 0o644)
	te.HTTP = &httpget.Getter{CARoot: te.Dir, Retries: -1, RequestTimeout: 5 * time.Second}
	te.Sleep = func(context.Context, time.Duration) {}
	if err := te.RunFunc(PhoneHome); err != nil {
		t.Fatal(err)
	}
	if len(hits) != 1 || hits[0].Get("instance_id") != "iid-1" {
		t.Fatalf("posted %v", hits)
	}
	if want := "phone_home: posted 1 key(s) to " + srv.URL + "/iid-1/"; !strings.Contains(te.LogBuf.String(), want) {
		t.Errorf("log %q, want %q", te.LogBuf.String(), want)
	}

	// The bundle without the server's CA.
	te.LogBuf.Reset()
	hits = nil
	te.Write("/etc/ssl/certs/ca-certificates.crt", string(httpgettest.NewCA(t, "another CA").PEM), 0o644)
	if err := te.RunFunc(PhoneHome); err != nil {
		t.Fatal(err)
	}
	want := "phone_home: failed to post to " + srv.URL + "/iid-1/ in 2 tries: POST " + srv.URL + "/iid-1/: TLS: certificate of 127.0.0.1 not trusted (checked against " + te.Dir + "/etc/ssl/certs/ca-certificates.crt): x509: certificate signed by unknown authority"
	if len(hits) != 0 || !strings.Contains(te.LogBuf.String(), want) {
		t.Errorf("hits %v, log %q\nwant %q", hits, te.LogBuf.String(), want)
	}
}
