//go:build !initrd

package accounts

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/earlyinit/earlyinit/internal/httpget/httpgettest"
	"github.com/earlyinit/earlyinit/internal/modules/coretest"
)

// TestSSHImportIDProxy: without Env.HTTP, the keys are fetched through a
// CONNECT tunnel of the proxy https_proxy names, as ssh-import-id's
// requests fetches them, the key server still verified against the
// root's CA bundle by its name (which only the proxy resolves).
func TestSSHImportIDProxy(t *testing.T) {
	coretest.ClearProxyEnv(t)
	ed, _, _ := testKeys(t)
	s := &keyServer{pages: map[string]string{"/users/alice/keys": `[{"id": 7, "key": "` + ed + `"}]`}}
	te := importEnv(t, "ssh_import_id: [gh:alice]", s)
	te.HTTP = nil
	// importEnv points the key servers at https://127.0.0.1:PORT: the
	// same server by the name its certificate has.
	hostPort := httpgettest.Name + sshImportGitHub[strings.LastIndex(sshImportGitHub, ":"):]
	sshImportGitHub = "https://" + hostPort
	proxy := httpgettest.NewProxy(t)
	t.Setenv("https_proxy", proxy.URL)
	if err := SSHImportID(context.Background(), te.Env); err != nil {
		t.Fatalf("sshImportID: %v\n%s", err, te.LogBuf.String())
	}
	te.WantFile("/home/debian/.ssh/authorized_keys", ed+" alice@github/7 # ssh-import-id gh:alice\n", 0o600, 1000, 1000)
	if want := []string{"CONNECT " + hostPort}; !slices.Equal(proxy.Requests(), want) {
		t.Errorf("the proxy got %q, want %q", proxy.Requests(), want)
	}
}
