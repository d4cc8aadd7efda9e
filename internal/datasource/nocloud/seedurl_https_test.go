package nocloud

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/earlyinit/earlyinit/internal/datasource"
	"github.com/earlyinit/earlyinit/internal/httpget"
	"github.com/earlyinit/earlyinit/internal/httpget/httpgettest"
)

// TestReadURLHTTPS: a seed served over https (ds=nocloud;s=https://...)
// is read when the root's CA bundle holds the server's CA, and refused
// with the TLS reason when it does not.
func TestReadURLHTTPS(t *testing.T) {
	ca := httpgettest.NewCA(t, "seed CA")
	docs := map[string]string{
		"/seed/meta-data": "instance-id: iid-https\nlocal-hostname: h\n",
		"/seed/user-data": "#cloud-config\nhostname: over-tls\n",
	}
	srv := httpgettest.Server(t, ca.Issue(t, httpgettest.Leaf{}), nil, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, ok := docs[r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		w.Write([]byte(b))
	}))
	base := srv.URL + "/seed/"

	svc := datasource.Service{HTTP: &httpget.Getter{CARoot: httpgettest.Root(t, ca), Retries: -1}}
	d, err := ReadURL(context.Background(), svc, base)
	if err != nil {
		t.Fatal(err)
	}
	if d.InstanceID != "iid-https" || string(d.UserData) != docs["/seed/user-data"] {
		t.Errorf("read %q, user-data %q", d.InstanceID, d.UserData)
	}

	otherRoot := httpgettest.Root(t, httpgettest.NewCA(t, "another CA"))
	svc = datasource.Service{HTTP: &httpget.Getter{CARoot: otherRoot, Retries: -1}}
	_, err = ReadURL(context.Background(), svc, base)
	want := "seed " + base + ": meta-data: GET " + base + "meta-data: TLS: certificate of 127.0.0.1 not trusted (checked against " + otherRoot + "/etc/ssl/certs/ca-certificates.crt): x509: certificate signed by unknown authority"
	if err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Errorf("err = %v\nwant %s", err, want)
	}
}

// TestReadURLHTTPSRoot: without svc.HTTP, the seed's certificate is
// checked against the CA bundle of svc.Root, the mounted real root.
func TestReadURLHTTPSRoot(t *testing.T) {
	ca := httpgettest.NewCA(t, "seed CA")
	srv := httpgettest.Server(t, ca.Issue(t, httpgettest.Leaf{}), nil, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/meta-data" {
			http.NotFound(w, r)
			return
		}
		w.Write([]byte("instance-id: iid-root\n"))
	}))
	d, err := ReadURL(context.Background(), datasource.Service{Root: httpgettest.Root(t, ca)}, srv.URL+"/")
	if err != nil || d.InstanceID != "iid-root" {
		t.Fatalf("ReadURL: %v, %v", d, err)
	}
	empty := t.TempDir()
	_, err = ReadURL(context.Background(), datasource.Service{Root: empty}, srv.URL+"/")
	if want := "no CA bundle in " + empty + " (looked for "; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("err = %v, want one containing %q", err, want)
	}
}
