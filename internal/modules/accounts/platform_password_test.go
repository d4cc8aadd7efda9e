package accounts

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"io"
	"math/big"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/earlyinit/earlyinit/internal/datasource/openstack"
	"github.com/earlyinit/earlyinit/internal/instance"
	"github.com/earlyinit/earlyinit/internal/modules/core"
	"github.com/earlyinit/earlyinit/internal/modules/coretest"
	"github.com/earlyinit/earlyinit/internal/paths"
)

const (
	platformSecret = "Pl4tform-admin:pass"
	userSecret     = "us3r-given-secret"
	optIn          = "earlyinit: {inject_user_password: true}\n"
	sensitiveFile  = paths.RunDir + "/" + instance.InstanceDataSensitiveFile
)

// writeSensitive writes the boot's sensitive instance data for instance
// iid with meta_data md.
func writeSensitive(te *coretest.Env, iid string, md map[string]any) {
	te.T.Helper()
	b, err := json.Marshal(map[string]any{"v1": map[string]any{"instance_id": iid}, "ds": map[string]any{"meta_data": md}})
	if err != nil {
		te.T.Fatal(err)
	}
	te.Write(sensitiveFile, string(b), 0o600)
}

// stdins records what chpasswd got on stdin, one string per run.
func stdins(te *coretest.Env, fail bool) *[]string {
	var got []string
	te.Fake.Handlers["chpasswd"] = func(c core.Cmd) ([]byte, error) {
		got = append(got, string(c.Stdin))
		if fail {
			return []byte("chpasswd: failed"), coretest.ExitErr(1)
		}
		return nil, nil
	}
	return &got
}

// noSecret fails if any secret is in the log, the output log or err.
func noSecret(te *coretest.Env, err error, secrets ...string) {
	te.T.Helper()
	for _, s := range secrets {
		if strings.Contains(te.LogBuf.String(), s) || strings.Contains(te.OutBuf.String(), s) || (err != nil && strings.Contains(err.Error(), s)) {
			te.T.Errorf("secret %q leaked: log %q, output %q, error %v", s, te.LogBuf.String(), te.OutBuf.String(), err)
		}
	}
}

func TestInjectUserPassword(t *testing.T) {
	meta := map[string]any{"admin_pass": platformSecret, "meta": map[string]any{"role": "web"}}
	for _, tc := range []struct {
		name    string
		cfg     string
		ds      string // Data.Datasource; "" means openstack
		admin   string // Data.AdminPass
		meta    map[string]any
		iid     string // of the sensitive data; "" means the instance's
		fail    bool   // chpasswd fails
		stdins  []string
		calls   []string
		pending string // pendingPasswordFile's content, "" none
		wantErr string
		log     string
	}{
		{name: "opted in: admin_pass for the default user, kept to post",
			cfg: optIn, meta: meta,
			stdins: []string{"debian:" + platformSecret + "\n"}, calls: []string{"chpasswd", "passwd --expire -- debian"},
			pending: platformSecret, log: "debian gets the platform's password (openstack's admin_pass)"},
		{name: "meta.admin_pass first, as cloudbase-init",
			cfg: optIn, meta: map[string]any{"admin_pass": "other", "meta": map[string]any{"admin_pass": platformSecret}},
			stdins: []string{"debian:" + platformSecret + "\n"}, calls: []string{"chpasswd", "passwd --expire -- debian"},
			pending: platformSecret, log: "(openstack's meta.admin_pass)"},
		{name: "not opted in: the platform's password is not used",
			meta: meta, calls: nil},
		{name: "opted out",
			cfg: "earlyinit: {inject_user_password: false}\n", meta: meta, calls: nil},
		{name: "opt-in of the wrong type is off",
			cfg: "earlyinit: [inject_user_password]\n", meta: meta, calls: nil, log: "earlyinit: want a map, got a list"},
		{name: "user-data's password wins, and is the one posted",
			cfg: optIn + "password: " + userSecret + "\nchpasswd: {expire: false}\n", meta: meta,
			stdins: []string{"debian:" + userSecret + "\n"}, calls: []string{"chpasswd"},
			pending: userSecret, log: "user-data gives debian a password: the platform's is not used"},
		{name: "chpasswd for others only: the default user still gets the platform's",
			cfg: optIn + "chpasswd: {users: [{name: alice, password: a1, type: text}]}\n", meta: meta,
			stdins: []string{"alice:a1\ndebian:" + platformSecret + "\n"}, calls: []string{"chpasswd", "passwd --expire -- alice", "passwd --expire -- debian"},
			pending: platformSecret},
		{name: "a hash for the default user: nothing to post",
			cfg: optIn + "chpasswd: {users: [{name: debian, password: '$6$salt$hash'}], expire: false}\n", meta: meta,
			stdins: []string{"debian:$6$salt$hash\n"}, calls: []string{"chpasswd -e"},
			log: "debian has no clear-text password from this run (a hash, or none): nothing to post"},
		{name: "config drive: set, not kept (no endpoint to post to)",
			cfg: optIn, ds: "configdrive", meta: meta,
			stdins: []string{"debian:" + platformSecret + "\n"}, calls: []string{"chpasswd", "passwd --expire -- debian"}},
		{name: "CloudStack's password in the instance",
			cfg: optIn, ds: "cloudstack", admin: platformSecret,
			stdins: []string{"debian:" + platformSecret + "\n"}, calls: []string{"chpasswd", "passwd --expire -- debian"},
			log: "(cloudstack's admin_pass)"},
		{name: "no password from the platform",
			cfg: optIn, meta: map[string]any{"uuid": "x"}, log: "the platform gave no password"},
		{name: "another instance's sensitive data is not used",
			cfg: optIn, meta: meta, iid: "iid-old",
			wantErr: `v1.instance_id is "iid-old", not "iid-1": not used`},
		{name: "a line break in the platform's password is refused",
			cfg: optIn, meta: map[string]any{"admin_pass": platformSecret + "\nroot:owned"},
			wantErr: "the platform's password (openstack's admin_pass) contains a line break or a NUL: not set"},
		{name: "chpasswd fails: nothing kept",
			cfg: optIn, meta: meta, fail: true,
			stdins: []string{"debian:" + platformSecret + "\n"}, calls: []string{"chpasswd", "passwd --expire -- debian"},
			wantErr: "chpasswd for debian failed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			te := coretest.NewEnv(t, "users: [default]\n"+tc.cfg)
			ds := tc.ds
			if ds == "" {
				ds = "openstack"
			}
			te.Data = &instance.Data{InstanceID: "iid-1", Datasource: ds, AdminPass: tc.admin}
			if tc.meta != nil {
				iid := tc.iid
				if iid == "" {
					iid = "iid-1"
				}
				writeSensitive(te, iid, tc.meta)
			}
			got := stdins(te, tc.fail)
			err := SetPasswords(context.Background(), te.Env)
			if tc.wantErr == "" && err != nil || tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)) {
				t.Errorf("error %v, want %q", err, tc.wantErr)
			}
			var calls []string
			for _, c := range te.Calls() {
				if !strings.HasPrefix(c, "useradd") {
					calls = append(calls, c)
				}
			}
			if strings.Join(calls, "|") != strings.Join(tc.calls, "|") {
				t.Errorf("commands %q, want %q", calls, tc.calls)
			}
			if strings.Join(*got, "|") != strings.Join(tc.stdins, "|") {
				t.Errorf("chpasswd stdin %q, want %q", *got, tc.stdins)
			}
			if tc.pending == "" {
				if te.Root.Exists(pendingPasswordFile) {
					t.Errorf("%s kept: %q", pendingPasswordFile, te.Read(pendingPasswordFile))
				}
			} else {
				te.WantFile(pendingPasswordFile, tc.pending, 0o600, 0, 0)
			}
			if tc.log != "" && !strings.Contains(te.LogBuf.String(), tc.log) {
				t.Errorf("log %q lacks %q", te.LogBuf.String(), tc.log)
			}
			noSecret(te, err, platformSecret, userSecret, "root:owned")
		})
	}
}

// TestPasswordLineBreakRefused: no password can add a chpasswd line.
func TestPasswordLineBreakRefused(t *testing.T) {
	for _, tc := range []struct{ cfg, wantErr string }{
		{"users: [default]\npassword: \"a\\nroot:owned\"\n", "password: contains a line break or a NUL: not set"},
		{"chpasswd: {users: [{name: alice, password: \"a\\nroot:owned\", type: text}]}\n", "chpasswd.users.0: password contains a line break"},
		{"chpasswd: {users: [{name: alice, password: \"$6$a\\nroot:owned\"}]}\n", "chpasswd.users.0: password contains a line break"},
		{"chpasswd: {list: [\"alice:a\\nroot:owned\"]}\n", "chpasswd.list.0: password contains a line break"},
		{"chpasswd: {list: [\"alice:a\\u0000b\"]}\n", "chpasswd.list.0: password contains a line break or a NUL"},
	} {
		te := coretest.NewEnv(t, tc.cfg)
		got := stdins(te, false)
		err := SetPasswords(context.Background(), te.Env)
		if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
			t.Errorf("%q: error %v, want %q", tc.cfg, err, tc.wantErr)
		}
		for _, in := range *got {
			if strings.Contains(in, "root:owned") {
				t.Errorf("%q: chpasswd got %q", tc.cfg, in)
			}
		}
		noSecret(te, err, "root:owned")
	}
}

// stand-in for nova's password endpoint, as in internal/datasource/openstack's
// tests: GET answers what is stored, POST stores unless one is (409).
type novaStandIn struct {
	mu       sync.Mutex
	stored   string
	requests []string
}

func (n *novaStandIn) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.requests = append(n.requests, r.Method+" "+r.URL.Path)
	if r.URL.Path != "/"+openstack.PasswordPath {
		http.NotFound(w, r)
		return
	}
	switch r.Method {
	case "GET":
		io.WriteString(w, n.stored)
	case "POST":
		b, _ := io.ReadAll(r.Body)
		if n.stored != "" {
			w.WriteHeader(http.StatusConflict)
			return
		}
		n.stored = string(b)
	}
}

var (
	instanceKeyOnce sync.Once
	instanceKey     *rsa.PrivateKey
)

// instanceRSA is the instance's key pair, made once for all tests.
func instanceRSA(t *testing.T) *rsa.PrivateKey {
	instanceKeyOnce.Do(func() {
		k, err := rsa.GenerateKey(rand.Reader, 2048)
		if err != nil {
			t.Fatal(err)
		}
		instanceKey = k
	})
	return instanceKey
}

// sshRSALine is k's authorized_keys line.
func sshRSALine(k *rsa.PublicKey) string {
	str := func(b []byte) []byte { return append(binary.BigEndian.AppendUint32(nil, uint32(len(b))), b...) }
	mp := func(n *big.Int) []byte {
		b := n.Bytes()
		if b[0]&0x80 != 0 {
			b = append([]byte{0}, b...)
		}
		return str(b)
	}
	blob := append(append(str([]byte("ssh-rsa")), mp(big.NewInt(int64(k.E)))...), mp(k.N)...)
	return "ssh-rsa " + base64.StdEncoding.EncodeToString(blob) + " nova-key"
}

// decryptPosted undoes the post with the instance's private key, as
// `nova get-password` does.
func decryptPosted(t *testing.T, k *rsa.PrivateKey, b64 string) string {
	t.Helper()
	ct, err := base64.StdEncoding.DecodeString(b64)
	if err != nil {
		t.Fatalf("posted %q: not base64: %v", b64, err)
	}
	pt, err := rsa.DecryptPKCS1v15(nil, k, ct)
	if err != nil {
		t.Fatalf("decrypt what was posted: %v", err)
	}
	return string(pt)
}

// TestPostPassword runs set_passwords (boot) then post_password (final)
// against a stand-in metadata service and decrypts what was posted with
// the instance's private key.
func TestPostPassword(t *testing.T) {
	k := instanceRSA(t)
	key := sshRSALine(&k.PublicKey)
	pwPath := "/" + openstack.PasswordPath
	meta := map[string]any{"admin_pass": platformSecret}
	for _, tc := range []struct {
		name      string
		cfg       string // boot and final
		finalCfg  *string
		ds        string
		keys      []string
		stored    string // on the endpoint before
		requests  []string
		want      string // decrypted post; "random" the random-passwords entry
		wantErr   string
		log       string
		badSubURL bool
	}{
		{name: "admin_pass posted", cfg: optIn, keys: []string{key},
			requests: []string{"GET " + pwPath, "POST " + pwPath}, want: platformSecret, log: ": posted"},
		{name: "user-data's password posted", cfg: optIn + "password: " + userSecret + "\n", keys: []string{key},
			requests: []string{"GET " + pwPath, "POST " + pwPath}, want: userSecret},
		{name: "RANDOM posted", cfg: optIn + "chpasswd: {users: [{name: debian, type: RANDOM}]}\n", keys: []string{key},
			requests: []string{"GET " + pwPath, "POST " + pwPath}, want: "random"},
		{name: "no opt-in: nothing posted", cfg: "", keys: []string{key}, requests: nil,
			log: "post_password: earlyinit.inject_user_password is off: nothing posted"},
		{name: "endpoint holds one: not overwritten", cfg: optIn, keys: []string{key}, stored: "earlier",
			requests: []string{"GET " + pwPath}, log: "holds a password already: not posted"},
		{name: "ed25519 key refused", cfg: optIn, keys: []string{"ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIHoOS6CdkWQfFqXs0ZVyM9IRsZ9EMIFxMaeZyAhjvbb9 me"},
			wantErr: "post_password: public key: type ssh-ed25519: the password endpoint takes an RSA key (ssh-rsa) only"},
		{name: "first key only", cfg: optIn, keys: []string{"ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIHoOS6CdkWQfFqXs0ZVyM9IRsZ9EMIFxMaeZyAhjvbb9 me", key},
			wantErr: "type ssh-ed25519"},
		{name: "no key: not posted", cfg: optIn, log: "no SSH public key to encrypt the password with: not posted"},
		{name: "not OpenStack's service", cfg: optIn, ds: "configdrive", keys: []string{key},
			log: `the datasource is "configdrive", not OpenStack's metadata service`},
		{name: "a hash: nothing to post", cfg: optIn + "chpasswd: {users: [{name: debian, password: '$6$s$h'}]}\n", keys: []string{key},
			log: "post_password: no clear-text password was set for the default user at boot: nothing to post"},
		{name: "subplatform without a URL", cfg: optIn, keys: []string{key}, badSubURL: true,
			wantErr: `subplatform "config-disk (/dev/sr0)" names no metadata service URL`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			nova := &novaStandIn{stored: tc.stored}
			srv := httptest.NewServer(nova)
			defer srv.Close()
			te := coretest.NewEnv(t, "users: [default]\n"+tc.cfg)
			ds := tc.ds
			if ds == "" {
				ds = "openstack"
			}
			te.Data = &instance.Data{InstanceID: "iid-1", Datasource: ds, Subplatform: "metadata (" + srv.URL + ")", PublicKeys: tc.keys}
			if tc.badSubURL {
				te.Data.Subplatform = "config-disk (/dev/sr0)"
			}
			writeSensitive(te, "iid-1", meta)
			stdins(te, false)
			if err := SetPasswords(context.Background(), te.Env); err != nil {
				t.Fatalf("set_passwords: %v", err)
			}
			err := PostPassword(context.Background(), te.Env)
			if tc.wantErr == "" && err != nil || tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)) {
				t.Errorf("error %v, want %q", err, tc.wantErr)
			}
			if strings.Join(nova.requests, "|") != strings.Join(tc.requests, "|") {
				t.Errorf("requests %q, want %q", nova.requests, tc.requests)
			}
			switch want := tc.want; {
			case want == "random":
				line := strings.TrimSpace(te.Read(te.InstanceDir() + "/" + randomPasswordsFile))
				want = strings.TrimPrefix(line, "debian:")
				if p := decryptPosted(t, k, nova.stored); p != want || len(p) != 20 {
					t.Errorf("posted %q, want the random password %q", p, want)
				}
				noSecret(te, err, want)
			case want != "":
				if p := decryptPosted(t, k, nova.stored); p != want {
					t.Errorf("posted %q, want %q", p, want)
				}
			case nova.stored != tc.stored:
				t.Errorf("endpoint holds %q, want %q", nova.stored, tc.stored)
			}
			if te.Root.Exists(pendingPasswordFile) {
				t.Errorf("%s left after post_password", pendingPasswordFile)
			}
			if tc.log != "" && !strings.Contains(te.LogBuf.String(), tc.log) {
				t.Errorf("log %q lacks %q", te.LogBuf.String(), tc.log)
			}
			noSecret(te, err, platformSecret, userSecret)
			if nova.stored != "" && nova.stored != tc.stored {
				noSecret(te, nil, nova.stored) // the ciphertext is not logged either
			}
		})
	}
}

// TestPostPasswordUnreachable: a service that does not answer is this
// module's error, within its time bound, and the password is gone from
// /run all the same.
func TestPostPasswordUnreachable(t *testing.T) {
	k := instanceRSA(t)
	srv := httptest.NewServer(http.NotFoundHandler())
	base := srv.URL
	srv.Close() // nothing listens there now
	te := coretest.NewEnv(t, "users: [default]\n"+optIn)
	te.Data = &instance.Data{InstanceID: "iid-1", Datasource: "openstack", Subplatform: "metadata (" + base + ")", PublicKeys: []string{sshRSALine(&k.PublicKey)}}
	writeSensitive(te, "iid-1", map[string]any{"admin_pass": platformSecret})
	stdins(te, false)
	if err := SetPasswords(context.Background(), te.Env); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	err := PostPassword(context.Background(), te.Env)
	if err == nil || !strings.Contains(err.Error(), "post_password: password endpoint: GET "+base+"/"+openstack.PasswordPath) {
		t.Errorf("error %v", err)
	}
	if d := time.Since(start); d > postPasswordBudget {
		t.Errorf("took %v, more than the %v bound", d, postPasswordBudget)
	}
	if te.Root.Exists(pendingPasswordFile) {
		t.Errorf("%s left", pendingPasswordFile)
	}
	noSecret(te, err, platformSecret)
}

func TestMetadataBase(t *testing.T) {
	for _, tc := range []struct{ sub, want, wantErr string }{
		{"metadata (http://169.254.169.254)", "http://169.254.169.254", ""},
		{"metadata (http://10.0.0.1:8775/)", "http://10.0.0.1:8775", ""},
		{"metadata (https://169.254.169.254)", "", "not http://HOST[:PORT]"},
		{"metadata (http://u:p@169.254.169.254)", "", "not http://HOST[:PORT]"},
		{"metadata (http://169.254.169.254/openstack)", "", "not http://HOST[:PORT]"},
		{"metadata (http://169.254.169.254?x=1)", "", "not http://HOST[:PORT]"},
		{"seed-dir (/var/lib/cloud/seed)", "", "names no metadata service URL"},
		{"", "", "names no metadata service URL"},
	} {
		got, err := metadataBase(tc.sub)
		if got != tc.want || (tc.wantErr == "") != (err == nil) || err != nil && !strings.Contains(err.Error(), tc.wantErr) {
			t.Errorf("metadataBase(%q) = %q, %v; want %q, %q", tc.sub, got, err, tc.want, tc.wantErr)
		}
	}
}

// TestTakePending: the kept password is read once and removed; one over
// the size bound is removed unread.
func TestTakePending(t *testing.T) {
	te := coretest.NewEnv(t, "")
	te.Write(pendingPasswordFile, "pw", 0o600)
	if p, err := takePending(te.Env); p != "pw" || err != nil {
		t.Errorf("got %q, %v", p, err)
	}
	if p, err := takePending(te.Env); p != "" || err != nil || te.Root.Exists(pendingPasswordFile) {
		t.Errorf("second take: %q, %v", p, err)
	}
	te.Write(pendingPasswordFile, strings.Repeat("x", maxPendingPassword+1), 0o600)
	if p, err := takePending(te.Env); p != "" || err == nil || te.Root.Exists(pendingPasswordFile) {
		t.Errorf("oversized: %q, %v", p, err)
	}
}
