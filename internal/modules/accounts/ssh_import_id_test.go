package accounts

import (
	"context"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"math/big"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/earlyinit/earlyinit/internal/httpget"
	"github.com/earlyinit/earlyinit/internal/httpget/httpgettest"
	"github.com/earlyinit/earlyinit/internal/modules/core"
	"github.com/earlyinit/earlyinit/internal/modules/coretest"
)

// sshString is an SSH wire string (RFC 4251).
func sshString(b []byte) []byte {
	out := binary.BigEndian.AppendUint32(nil, uint32(len(b)))
	return append(out, b...)
}

// sshMPInt is an SSH mpint of a positive number.
func sshMPInt(n *big.Int) []byte {
	b := n.Bytes()
	if len(b) > 0 && b[0]&0x80 != 0 {
		b = append([]byte{0}, b...)
	}
	return sshString(b)
}

// edKey is a fresh ed25519 public key, as "type base64".
func edKey(t *testing.T) string {
	t.Helper()
	pub, _, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return "ssh-ed25519 " + base64.StdEncoding.EncodeToString(append(sshString([]byte("ssh-ed25519")), sshString(pub)...))
}

// testKeys are fresh public keys of each kind, as "type base64".
func testKeys(t *testing.T) (ed, rsaKey, ec string) {
	t.Helper()
	ed = edKey(t)
	rk, err := rsa.GenerateKey(rand.Reader, 1024)
	if err != nil {
		t.Fatal(err)
	}
	blob := append(sshString([]byte("ssh-rsa")), sshMPInt(big.NewInt(int64(rk.E)))...)
	rsaKey = "ssh-rsa " + base64.StdEncoding.EncodeToString(append(blob, sshMPInt(rk.N)...))
	ek, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	point, err := ek.PublicKey.Bytes()
	if err != nil {
		t.Fatal(err)
	}
	blob = append(sshString([]byte("ecdsa-sha2-nistp256")), sshString([]byte("nistp256"))...)
	ec = "ecdsa-sha2-nistp256 " + base64.StdEncoding.EncodeToString(append(blob, sshString(point)...))
	return ed, rsaKey, ec
}

// keyServer is GitHub's API, Launchpad and GitLab in one local HTTPS
// server: pages maps a path to its answer (a missing path is a 404), and
// it counts what it was asked.
type keyServer struct {
	mu    sync.Mutex
	pages map[string]string
	asked []string
}

func (s *keyServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	s.asked = append(s.asked, r.URL.EscapedPath())
	body, ok := s.pages[r.URL.EscapedPath()]
	s.mu.Unlock()
	if !ok {
		http.NotFound(w, r)
		return
	}
	fmt.Fprint(w, body)
}

// importEnv is a root with users debian (the default, 1000) and dave
// (1001), whose CA bundle trusts the key server's CA, the servers pointed
// at the local one.
func importEnv(t *testing.T, cfg string, s *keyServer) *coretest.Env {
	t.Helper()
	ca := httpgettest.NewCA(t, "key server CA")
	srv := httpgettest.Server(t, ca.Issue(t, httpgettest.Leaf{}), nil, s)
	for _, v := range []*string{&sshImportGitHub, &sshImportLaunchpad, &sshImportGitLab} {
		old := *v
		*v = srv.URL
		t.Cleanup(func() { *v = old })
	}
	te := coretest.NewEnv(t, cfg)
	if _, ok := te.Cfg["users"]; !ok {
		te.Cfg["users"] = core.BaseConfig()["users"] // the default user
	}
	te.Write("/etc/passwd", coretest.BasePasswd+"debian:x:1000:1000::/home/debian:/bin/bash\ndave:x:1001:1001::/home/dave:/bin/bash\n", 0o644)
	te.Write("/etc/ssl/certs/ca-certificates.crt", string(ca.PEM), 0o644)
	for _, h := range []struct {
		dir string
		id  int
	}{{"/home/debian", 1000}, {"/home/dave", 1001}} {
		if err := te.Root.MkdirAll(h.dir, 0o755, h.id, h.id); err != nil {
			t.Fatal(err)
		}
	}
	te.HTTP = &httpget.Getter{CARoot: te.Dir, Retries: -1, RequestTimeout: 5 * time.Second}
	return te
}

func TestSSHImportID(t *testing.T) {
	ed, rsaKey, ec := testKeys(t)
	ed2 := edKey(t)
	s := &keyServer{pages: map[string]string{
		"/users/alice/keys": `[{"id": 101, "key": "` + ed + `"}, {"id": 102, "key": "` + rsaKey + `"}]`,
		// Launchpad's text: a comment on each key, a blank line, and
		// lines that are not keys (an option, a bad blob, a
		// certificate, a control character in the comment).
		"/~bob/+sshkeys": ec + " bob@laptop\r\n\n" +
			`command="/bin/sh" ` + ed2 + " bob@evil\n" +
			"ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIA== short\n" +
			"ssh-ed25519-cert-v01@openssh.com " + strings.Fields(ed2)[1] + " cert\n" +
			ed2 + " bell\x07\n" +
			"not a key at all\n",
		"/carol.keys": "# GitLab's keys\n" + ed2 + "\n",
	}}
	te := importEnv(t, `
ssh_import_id: [gh:alice, bob, gh:alice]
users:
  - default
  - {name: dave, ssh_import_id: "gl:carol, gh:alice"}
  - {name: erin}
`, s)
	// alice's ed25519 key is already debian's, with options: it stays
	// as it is, not replaced by an unrestricted line.
	old := "# mine\nno-pty,from=\"10.0.0.0/8\" " + ed + " old\n"
	if err := te.Root.WriteFile("/home/debian/.ssh/authorized_keys", []byte(old), 0o600, 1000, 1000); err != nil {
		t.Fatal(err)
	}
	if err := SSHImportID(context.Background(), te.Env); err != nil {
		t.Fatalf("sshImportID: %v\n%s", err, te.LogBuf.String())
	}
	te.WantFile("/home/debian/.ssh/authorized_keys", old+
		rsaKey+" alice@github/102 # ssh-import-id gh:alice\n"+
		ec+" bob@laptop # ssh-import-id lp:bob\n", 0o600, 1000, 1000)
	te.WantFile("/home/dave/.ssh/authorized_keys",
		ed2+" carol@gitlab # ssh-import-id gl:carol\n"+
			ed+" alice@github/101 # ssh-import-id gh:alice\n"+
			rsaKey+" alice@github/102 # ssh-import-id gh:alice\n", 0o600, 1001, 1001)
	te.WantMode("/home/dave/.ssh", 0o700, 1001, 1001)
	for _, want := range []string{
		"ssh_import_id: gh:alice: 2 key(s) for debian (1 already authorized)",
		"ssh_import_id: bob: 1 key(s) for debian (0 already authorized)",
		"ssh_import_id: bob: 5 line(s) from " + sshImportLaunchpad + "/~bob/+sshkeys are not OpenSSH public keys: skipped",
	} {
		if !strings.Contains(te.LogBuf.String(), want) {
			t.Errorf("log lacks %q:\n%s", want, te.LogBuf.String())
		}
	}
	// Each ID once per user; GitHub's asked for twice, once per user;
	// the users in cloud-init's order, the default user last.
	want := "/carol.keys /users/alice/keys /users/alice/keys /~bob/+sshkeys"
	if got := strings.Join(s.asked, " "); got != want {
		t.Errorf("asked %s, want %s", got, want)
	}
}

// TestSSHImportIDErrors: an ID that fails is an error naming the user,
// the ID and the reason; the user's other IDs are still imported, and
// an ID that cannot be one is not fetched.
func TestSSHImportIDErrors(t *testing.T) {
	ed, _, _ := testKeys(t)
	for _, tc := range []struct {
		name, cfg string
		pages     map[string]string
		wantErr   []string
		asked     string
		keys      string // debian's authorized_keys after, "" for none
	}{
		{"unknown user at GitHub", "ssh_import_id: [gh:nobody, gh:alice]",
			map[string]string{"/users/alice/keys": `[{"id": 1, "key": "` + ed + `"}]`},
			[]string{"ssh_import_id: user debian: gh:nobody: no such user at ", "/users/nobody/keys: GET ", "HTTP 404"},
			"/users/nobody/keys /users/alice/keys", ed + " alice@github/1 # ssh-import-id gh:alice\n"},
		{"no keys", "ssh_import_id: [gh:alice]", map[string]string{"/users/alice/keys": `[]`},
			[]string{"ssh_import_id: user debian: gh:alice: no keys found at "}, "/users/alice/keys", ""},
		{"only bad keys", "ssh_import_id: [lp:bob]", map[string]string{"/~bob/+sshkeys": "<html>login</html>\n"},
			[]string{"ssh_import_id: user debian: lp:bob: no keys found at "}, "/~bob/+sshkeys", ""},
		{"not GitHub's JSON", "ssh_import_id: [gh:alice]", map[string]string{"/users/alice/keys": `{"message": "x"}`},
			[]string{"gh:alice: ", "/users/alice/keys: not GitHub's list of keys"}, "/users/alice/keys", ""},
		{"bad IDs are not fetched", `ssh_import_id: ["xx:alice", "gh:", "a:b:c", "gh:../../etc", "gh:a b", "lp:-x"]`, nil,
			[]string{
				`xx:alice: protocol "xx": want gh (GitHub), lp (Launchpad) or gl (GitLab)`,
				`gh:: user name "": want`, "a:b:c: not an ID: want PROTOCOL:NAME",
				`gh:../../etc: user name "../../etc"`, `gh:a b: user name "a b"`, `lp:-x: user name "-x"`,
			}, "", ""},
		{"missing user", "users: [{name: ghost, ssh_import_id: [gh:alice]}]", nil,
			[]string{"ssh_import_id: user ghost: no such user in /etc/passwd"}, "", ""},
		{"not a list", "users: [{name: dave, ssh_import_id: {a: b}}]", nil,
			[]string{"ssh_import_id: user dave: users entry dave: ssh_import_id: want a string or a list of strings, got a map"}, "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := &keyServer{pages: tc.pages}
			te := importEnv(t, tc.cfg, s)
			err := SSHImportID(context.Background(), te.Env)
			if err == nil {
				t.Fatalf("no error; log:\n%s", te.LogBuf.String())
			}
			for _, w := range tc.wantErr {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
			if got := strings.Join(s.asked, " "); got != tc.asked {
				t.Errorf("asked %q, want %q", got, tc.asked)
			}
			b, rerr := te.Root.ReadFile("/home/debian/.ssh/authorized_keys")
			if tc.keys == "" && rerr == nil || tc.keys != "" && string(b) != tc.keys {
				t.Errorf("debian's keys %q (%v), want %q", b, rerr, tc.keys)
			}
		})
	}
}

// TestSSHImportIDTLS: a key server the root's CA bundle does not trust is
// refused, with the TLS reason, and nothing is written.
func TestSSHImportIDTLS(t *testing.T) {
	ed, _, _ := testKeys(t)
	s := &keyServer{pages: map[string]string{"/users/alice/keys": `[{"id": 1, "key": "` + ed + `"}]`}}
	te := importEnv(t, "ssh_import_id: [gh:alice]", s)
	te.Write("/etc/ssl/certs/ca-certificates.crt", string(httpgettest.NewCA(t, "another CA").PEM), 0o644)
	err := SSHImportID(context.Background(), te.Env)
	if err == nil || !strings.Contains(err.Error(), "gh:alice: GET ") || !strings.Contains(err.Error(), "certificate signed by unknown authority") {
		t.Fatalf("error %v, want the TLS refusal", err)
	}
	if te.Root.Exists("/home/debian/.ssh/authorized_keys") {
		t.Error("keys written from an untrusted server")
	}
}

// TestSSHImportIDBounds: at most sshImportMaxKeys keys of one ID, a body
// past sshImportMaxBody refused, at most sshImportMaxIDs IDs a user.
func TestSSHImportIDBounds(t *testing.T) {
	var lines []string
	for i := 0; i < sshImportMaxKeys+20; i++ {
		lines = append(lines, edKey(t))
	}
	s := &keyServer{pages: map[string]string{
		"/~many/+sshkeys": strings.Join(lines, "\n"),
		"/~huge/+sshkeys": strings.Repeat("#", sshImportMaxBody+1),
	}}
	te := importEnv(t, "ssh_import_id: [many, huge]", s)
	err := SSHImportID(context.Background(), te.Env)
	if err == nil || !strings.Contains(err.Error(), "huge: GET ") || !strings.Contains(err.Error(), fmt.Sprintf("body over the %d byte limit", sshImportMaxBody)) {
		t.Errorf("error %v, want the huge body refused", err)
	}
	got := te.Read("/home/debian/.ssh/authorized_keys")
	if n := strings.Count(got, "\n"); n != sshImportMaxKeys || !strings.HasPrefix(got, lines[0]+" # ssh-import-id lp:many\n") {
		t.Errorf("%d keys written, want the first %d", n, sshImportMaxKeys)
	}
	if want := fmt.Sprintf("many: more than %d keys: the rest are left out", sshImportMaxKeys); !strings.Contains(te.LogBuf.String(), want) {
		t.Errorf("log lacks %q:\n%s", want, te.LogBuf.String())
	}

	var ids []string
	for i := 0; i <= sshImportMaxIDs; i++ {
		ids = append(ids, fmt.Sprintf("gh:u%d", i))
	}
	s = &keyServer{}
	te = importEnv(t, "ssh_import_id: ["+strings.Join(ids, ", ")+"]", s)
	err = SSHImportID(context.Background(), te.Env)
	if want := fmt.Sprintf("ssh_import_id: user debian: ssh_import_id: %d IDs, more than the limit of %d", sshImportMaxIDs+1, sshImportMaxIDs); err == nil || err.Error() != want {
		t.Errorf("error %v, want %q", err, want)
	}
	if len(s.asked) != 0 {
		t.Errorf("asked %q", s.asked)
	}
}

// TestSSHImportIDLaunchpadConf: the root's /etc/ssh/ssh_import_id names
// the Launchpad-protocol key server, as ssh-import-id reads it (a private
// cloud's own keyserver); a template it cannot use is an error.
func TestSSHImportIDLaunchpadConf(t *testing.T) {
	ed, _, _ := testKeys(t)
	for _, tc := range []struct{ name, tmpl, path, err string }{
		{"{}", "/keys/{}.pub", "/keys/bob%2Bx.pub", ""},
		{"old %s", "/keys?u=%s", "/keys", ""},
		{"two placeholders", "/{}/{}", "", "want a template with one {}"},
		{"a stray %", "/%d/%s", "", "want a template with one {}"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := &keyServer{pages: map[string]string{tc.path: ed + " bob\n"}}
			te := importEnv(t, "ssh_import_id: [lp:bob+x]", s)
			te.Write("/etc/ssh/ssh_import_id", `{"URL": "`+sshImportLaunchpad+tc.tmpl+`"}`, 0o644)
			err := SSHImportID(context.Background(), te.Env)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), "/etc/ssh/ssh_import_id: URL ") || !strings.Contains(err.Error(), tc.err) {
					t.Errorf("error %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := strings.Join(s.asked, " "); got != tc.path {
				t.Errorf("asked %q, want %q", got, tc.path)
			}
			te.WantFile("/home/debian/.ssh/authorized_keys", ed+" bob # ssh-import-id lp:bob+x\n", 0o600, 1000, 1000)
		})
	}
}

// TestSSHImportIDInactive: without ssh_import_id anywhere nothing is
// fetched nor written; cloud-init looks for the key in nested maps and in
// maps in lists, as importWanted.
func TestSSHImportIDInactive(t *testing.T) {
	s := &keyServer{}
	te := importEnv(t, "users: [default, {name: dave}]\nruncmd: [ls]", s)
	if err := SSHImportID(context.Background(), te.Env); err != nil {
		t.Fatal(err)
	}
	if len(s.asked) != 0 || te.Root.Exists("/home/debian/.ssh") {
		t.Errorf("asked %q with no ssh_import_id", s.asked)
	}
	for _, tc := range []struct {
		cfg  map[string]any
		want bool
	}{
		{map[string]any{"ssh_import_id": nil}, true},
		{map[string]any{"users": []any{"default", map[string]any{"name": "x", "ssh_import_id": []any{"gh:x"}}}}, true},
		{map[string]any{"user": map[string]any{"ssh_import_id": "gh:x"}}, true},
		{map[string]any{"users": []any{[]any{map[string]any{"ssh_import_id": "x"}}}}, false}, // a list in a list is not walked
		{map[string]any{"users": []any{"default"}}, false},
	} {
		te := coretest.NewEnv(t, "")
		te.Cfg = tc.cfg
		if got := importWanted(te.Env); got != tc.want {
			t.Errorf("importWanted(%v) = %v, want %v", tc.cfg, got, tc.want)
		}
	}
}

// TestCheckPublicKey: OpenSSH public keys of each type pass; options,
// certificates, blobs of another type or cut short do not.
func TestCheckPublicKey(t *testing.T) {
	ed, rsaKey, ec := testKeys(t)
	edBlob, _ := base64.StdEncoding.DecodeString(strings.Fields(ed)[1])
	b64 := func(b []byte) string { return base64.StdEncoding.EncodeToString(b) }
	for _, tc := range []struct {
		line string
		ok   bool
	}{
		{ed, true},
		{ed + " a comment with spaces", true},
		{rsaKey + " x", true},
		{ec, true},
		{"ssh-ed25519", false},
		{"ssh-rsa " + strings.Fields(ed)[1], false}, // another type's blob
		{"ssh-ed25519 " + b64(edBlob[:len(edBlob)-1]), false},                                                   // cut short
		{"ssh-ed25519 " + b64(append(append([]byte{}, edBlob...), 0)), false},                                   // trailing byte
		{"ssh-ed25519 " + b64(append(sshString([]byte("ssh-ed25519")), sshString(make([]byte, 31))...)), false}, // 31 bytes
		{"ecdsa-sha2-nistp384 " + strings.Fields(ec)[1], false},                                                 // curve mismatch
		{"ssh-ed25519 !!!", false},
		{`no-pty ` + ed, false},
		{"ssh-ed25519-cert-v01@openssh.com " + strings.Fields(ed)[1], false},
		{ed + " tab\x00", false},
	} {
		err := checkPublicKey(strings.Fields(tc.line), len(tc.line))
		if (err == nil) != tc.ok {
			t.Errorf("checkPublicKey(%.60q) = %v, want ok %v", tc.line, err, tc.ok)
		}
	}
	if err := checkPublicKey(strings.Fields(ed), sshImportMaxLine+1); err == nil {
		t.Error("a line over the limit passed")
	}
}
