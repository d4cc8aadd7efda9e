package openstack

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/base64"
	"encoding/binary"
	"encoding/pem"
	"io"
	"math/big"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// sshString and sshMpint lay out RFC 4251 values, for test keys.
func sshString(b []byte) []byte {
	out := binary.BigEndian.AppendUint32(nil, uint32(len(b)))
	return append(out, b...)
}

func sshMpint(n *big.Int) []byte {
	b := n.Bytes()
	if len(b) > 0 && b[0]&0x80 != 0 {
		b = append([]byte{0}, b...)
	}
	return sshString(b)
}

// authorizedKey is the authorized_keys line of an RSA key with modulus n
// and exponent e.
func authorizedKey(typ string, e, n *big.Int) string {
	blob := append(append(sshString([]byte(typ)), sshMpint(e)...), sshMpint(n)...)
	return "ssh-rsa " + base64.StdEncoding.EncodeToString(blob) + " test@host"
}

var (
	testKeyOnce sync.Once
	testKey     *rsa.PrivateKey
)

// rsaKey is one 2048-bit key for every test (generating is slow).
func rsaKey(t *testing.T) *rsa.PrivateKey {
	t.Helper()
	testKeyOnce.Do(func() {
		k, err := rsa.GenerateKey(rand.Reader, 2048)
		if err != nil {
			t.Fatal(err)
		}
		testKey = k
	})
	return testKey
}

func keyLine(k *rsa.PrivateKey) string {
	return authorizedKey("ssh-rsa", big.NewInt(int64(k.E)), k.N)
}

// decrypt undoes EncryptPassword with the private key, as nova's clients do.
func decrypt(t *testing.T, k *rsa.PrivateKey, b64 string) string {
	t.Helper()
	ct, err := base64.StdEncoding.DecodeString(b64)
	if err != nil {
		t.Fatalf("posted body is not base64: %v", err)
	}
	pt, err := rsa.DecryptPKCS1v15(nil, k, ct)
	if err != nil {
		t.Fatalf("decrypt the posted password: %v", err)
	}
	return string(pt)
}

// novaPassword is a stand-in for nova's password endpoint: GET answers
// the stored value, POST stores the body unless one is stored (409) or
// it is over MaxPasswordBody (400).
type novaPassword struct {
	mu       sync.Mutex
	stored   string
	missing  bool // 404 for the endpoint
	fail     int  // answer this status to every request
	requests []string
	ctype    string
}

func (n *novaPassword) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.requests = append(n.requests, r.Method+" "+r.URL.Path)
	switch {
	case n.fail != 0:
		w.WriteHeader(n.fail)
	case n.missing || r.URL.Path != "/"+PasswordPath:
		http.NotFound(w, r)
	case r.Method == "GET":
		io.WriteString(w, n.stored)
	case r.Method == "POST":
		b, _ := io.ReadAll(r.Body)
		n.ctype = r.Header.Get("Content-Type")
		switch {
		case n.stored != "":
			w.WriteHeader(http.StatusConflict)
		case len(b) > MaxPasswordBody:
			w.WriteHeader(http.StatusBadRequest)
		default:
			n.stored = string(b)
		}
	default:
		w.WriteHeader(http.StatusBadRequest)
	}
}

func servePassword(t *testing.T, n *novaPassword) *Client {
	t.Helper()
	srv := httptest.NewServer(n)
	t.Cleanup(srv.Close)
	c := &Client{BaseURL: srv.URL}
	c.Backoff = time.Millisecond
	return c
}

func TestPostPassword(t *testing.T) {
	k := rsaKey(t)
	const secret = "S3cret-päss:word with spaces"
	for _, tc := range []struct {
		name     string
		srv      *novaPassword
		want     passwordResult
		wantErr  string
		requests []string
		stored   string // "" with want Posted: the decrypted secret
	}{
		{name: "empty endpoint: posted", want: PasswordPosted,
			requests: []string{"GET /" + PasswordPath, "POST /" + PasswordPath}},
		{name: "one stored: left alone", srv: &novaPassword{stored: "b64-of-another"}, want: passwordAlreadySet,
			requests: []string{"GET /" + PasswordPath}, stored: "b64-of-another"},
		// A blank answer is taken as none (nova answers ""): the POST that
		// follows meets nova's own check, 409, and nothing is overwritten.
		{name: "blank answer, then 409", srv: &novaPassword{stored: "\n"}, want: passwordAlreadySet,
			requests: []string{"GET /" + PasswordPath, "POST /" + PasswordPath}, stored: "\n"},
		{name: "no endpoint", srv: &novaPassword{missing: true}, want: passwordUnsupported,
			requests: []string{"GET /" + PasswordPath}},
		{name: "server error", srv: &novaPassword{fail: 500}, wantErr: "HTTP 500",
			requests: []string{"GET /" + PasswordPath, "GET /" + PasswordPath, "GET /" + PasswordPath}},
		{name: "forbidden", srv: &novaPassword{fail: 403}, wantErr: "HTTP 403",
			requests: []string{"GET /" + PasswordPath}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n := tc.srv
			if n == nil {
				n = &novaPassword{}
			}
			c := servePassword(t, n)
			got, err := c.PostPassword(context.Background(), keyLine(k), secret)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want %q", err, tc.wantErr)
				}
				if strings.Contains(err.Error(), secret) {
					t.Errorf("the error holds the password: %v", err)
				}
			} else if err != nil || got != tc.want {
				t.Fatalf("got %v, %v; want %v", got, err, tc.want)
			}
			if strings.Join(n.requests, ",") != strings.Join(tc.requests, ",") {
				t.Errorf("requests %q, want %q", n.requests, tc.requests)
			}
			switch {
			case tc.want == PasswordPosted:
				if p := decrypt(t, k, n.stored); p != secret {
					t.Errorf("decrypted %q, want %q", p, secret)
				}
				if n.ctype != "application/x-www-form-urlencoded" {
					t.Errorf("content type %q", n.ctype)
				}
			case n.stored != tc.stored:
				t.Errorf("stored %q, want %q (not to be overwritten)", n.stored, tc.stored)
			}
		})
	}
}

// TestPostPasswordKeyChecked: a key the endpoint cannot use is refused
// before any request, with a message naming the key's type or size.
func TestPostPasswordKeyChecked(t *testing.T) {
	n := &novaPassword{}
	c := servePassword(t, n)
	_, err := c.PostPassword(context.Background(), "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIHoOS6CdkWQfFqXs0ZVyM9IRsZ9EMIFxMaeZyAhjvbb9 me@host", "pw")
	if err == nil || !strings.Contains(err.Error(), "type ssh-ed25519: the password endpoint takes an RSA key (ssh-rsa) only") {
		t.Errorf("error %v", err)
	}
	k := rsaKey(t)
	long := strings.Repeat("x", 2048/8-10)
	if _, err := c.PostPassword(context.Background(), keyLine(k), long); err == nil || !strings.Contains(err.Error(), "too long for a 2048-bit RSA key (at most 245 bytes)") || strings.Contains(err.Error(), long) {
		t.Errorf("long password: %v", err)
	}
	if _, err := c.PostPassword(context.Background(), keyLine(k), ""); err == nil {
		t.Error("an empty password was accepted")
	}
	if len(n.requests) != 0 {
		t.Errorf("requests made: %q", n.requests)
	}
}

func TestParseSSHRSAKey(t *testing.T) {
	k := rsaKey(t)
	e := big.NewInt(65537)
	odd := func(bits int) *big.Int { // an odd number of exactly bits bits
		n := new(big.Int).Lsh(big.NewInt(1), uint(bits-1))
		return n.SetBit(n, 0, 1)
	}
	good := keyLine(k)
	blob := strings.Fields(good)[1]
	for _, tc := range []struct {
		name, line, wantErr string
	}{
		{"plain", good, ""},
		{"options before", `no-pty,from="10.0.0.0/8" ` + good, ""},
		{"no comment", "ssh-rsa " + blob, ""},
		{"6120 bits", authorizedKey("ssh-rsa", e, odd(6120)), ""},
		{"ed25519", "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIHoOS6CdkWQfFqXs0ZVyM9IRsZ9EMIFxMaeZyAhjvbb9", "type ssh-ed25519"},
		{"ecdsa", "ecdsa-sha2-nistp256 AAAA x", "type ecdsa-sha2-nistp256"},
		{"empty", "  ", "empty"},
		{"no type", "AAAAB3NzaC1yc2E", "no key type"},
		{"not base64", "ssh-rsa !!!", "not base64"},
		{"truncated", "ssh-rsa " + blob[:40], "truncated"},
		{"inner type differs", authorizedKey("ssh-dss", e, k.N), `the key inside says "ssh-dss"`},
		{"8192 bits", authorizedKey("ssh-rsa", e, odd(8192)), "a 8192-bit key: the password endpoint takes 1024 to 6120 bits"},
		{"512 bits", authorizedKey("ssh-rsa", e, odd(512)), "a 512-bit key"},
		{"even modulus", authorizedKey("ssh-rsa", e, new(big.Int).Lsh(big.NewInt(1), 2047)), "modulus"},
		{"exponent 1", authorizedKey("ssh-rsa", big.NewInt(1), k.N), "exponent"},
		{"huge exponent", authorizedKey("ssh-rsa", new(big.Int).Lsh(big.NewInt(1), 40), k.N), "exponent"},
		{"trailing bytes", "ssh-rsa " + base64.StdEncoding.EncodeToString(append(mustDecode(blob), 0, 0, 0, 0)), "trailing bytes"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pub, err := parseSSHRSAKey(tc.line)
			if tc.wantErr == "" {
				if err != nil || pub.E == 0 || pub.N.Sign() <= 0 {
					t.Fatalf("got %v, %v", pub, err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("error %v, want %q", err, tc.wantErr)
			}
		})
	}
	pub, err := parseSSHRSAKey(good)
	if err != nil || pub.E != k.E || pub.N.Cmp(k.N) != 0 {
		t.Errorf("parsed %v, %v; want the generated key", pub, err)
	}
}

func mustDecode(s string) []byte {
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		panic(err)
	}
	return b
}

// TestEncryptPasswordOpenSSL: what is posted decrypts with openssl, which
// nova's clients run (novaclient's decrypt_password: openssl rsautl
// -decrypt -inkey KEY).
func TestEncryptPasswordOpenSSL(t *testing.T) {
	openssl, err := exec.LookPath("openssl")
	if err != nil {
		t.Fatal("openssl is not installed (make deps installs it): it is the oracle for the password endpoint's encryption")
	}
	k := rsaKey(t)
	const secret = "hunter2:with:colons"
	enc, err := EncryptPassword(keyLine(k), secret)
	if err != nil {
		t.Fatal(err)
	}
	if len(enc) > MaxPasswordBody {
		t.Errorf("%d base64 characters, more than nova stores", len(enc))
	}
	dir := t.TempDir()
	der, err := x509.MarshalPKCS8PrivateKey(k)
	if err != nil {
		t.Fatal(err)
	}
	keyFile, ctFile := filepath.Join(dir, "key.pem"), filepath.Join(dir, "ct")
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(ctFile, mustDecode(enc), 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(openssl, "pkeyutl", "-decrypt", "-inkey", keyFile, "-in", ctFile, "-pkeyopt", "rsa_padding_mode:pkcs1").Output()
	if err != nil {
		t.Fatalf("openssl pkeyutl -decrypt: %v", err)
	}
	if string(out) != secret {
		t.Errorf("openssl decrypted %q, want %q", out, secret)
	}
}
