//go:build !initrd

package scripts

import (
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/earlyinit/earlyinit/internal/httpget/httpgettest"
	"github.com/earlyinit/earlyinit/internal/modules/coretest"
)

// TestPhoneHomeProxy: without Env.HTTP, phone_home posts through the
// proxy http_proxy names (the URL's host is the proxy's to resolve), and
// follows the server's 307, posting again to where it points, as
// cloud-init's requests does.
func TestPhoneHomeProxy(t *testing.T) {
	coretest.ClearProxyEnv(t)
	proxy := httpgettest.NewProxy(t)
	var hits []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		hits = append(hits, r.Method+" "+r.URL.Path+" "+string(b))
		if r.URL.Path == "/iid-1/" {
			http.Redirect(w, r, "/posted/", http.StatusTemporaryRedirect)
		}
	}))
	defer srv.Close()
	host := "phone.test" + srv.URL[strings.LastIndex(srv.URL, ":"):]
	t.Setenv("http_proxy", proxy.URL)
	te := coretest.NewEnv(t, "phone_home: {url: 'http://"+host+"/$INSTANCE_ID/', post: [instance_id], tries: 1}")
	if err := te.RunFunc(PhoneHome); err != nil {
		t.Fatal(err)
	}
	form := url.Values{"instance_id": {"iid-1"}}.Encode()
	if want := []string{"POST /iid-1/ " + form, "POST /posted/ " + form}; !slices.Equal(hits, want) {
		t.Errorf("the server got %q, want %q\nlog: %s", hits, want, te.LogBuf.String())
	}
	if want := []string{"POST http://" + host + "/iid-1/", "POST http://" + host + "/posted/"}; !slices.Equal(proxy.Requests(), want) {
		t.Errorf("the proxy got %q, want %q", proxy.Requests(), want)
	}
	if !strings.Contains(te.LogBuf.String(), "phone_home: posted 1 key(s) to http://"+host+"/iid-1/") {
		t.Errorf("log: %s", te.LogBuf.String())
	}
}
