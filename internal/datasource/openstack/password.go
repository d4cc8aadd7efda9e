package openstack

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"math/big"
	"strings"

	"github.com/earlyinit/earlyinit/internal/httpget"
)

// Nova's password endpoint, openstack/2013-04-04/password: the guest
// posts its password, encrypted with the instance's SSH public key, and
// `nova get-password SERVER PRIVATE_KEY` fetches it through the compute
// API and decrypts it with the private key. As cloudbase-init's
// HttpService and SetUserPasswordPlugin do it:
//
//   - the key is the first of the instance's public keys, and only RSA
//     (ssh-rsa) can encrypt: the password is RSA PKCS#1 v1.5 encrypted
//     (what `openssl rsautl -decrypt` undoes) and base64 encoded;
//   - a password is posted only when GET of the endpoint answers empty (an
//     endpoint that holds one already keeps it: nova refuses a second one
//     with 409 Conflict until it is cleared by `nova clear-password`);
//   - the body is sent as cloudbase-init's urllib sends it
//     (application/x-www-form-urlencoded, the base64 text as it is).
//
// Differences: cloudbase-init first fetches 2013-04-04/meta_data.json to
// learn whether the version exists; here a 404 from the endpoint itself
// says so (one request fewer). Nova stores at most 4 chunks of 255
// characters (MaxPasswordBody), so a key whose ciphertext would not fit
// (over 6120 bits) is refused before anything is sent, as is a key under
// 1024 bits.
//
// The password never appears in an error or a log line: errors name the
// URL, the key's type and size, and the reason.

// PasswordVersion is the metadata version that has the password endpoint.
const PasswordVersion = "2013-04-04"

// PasswordPath is the endpoint, under the service's base URL.
const PasswordPath = "openstack/" + PasswordVersion + "/password"

// MaxPasswordBody is the largest body nova takes (CHUNKS * CHUNK_LENGTH
// in nova/api/metadata/password.py); larger is 400 Bad Request.
const MaxPasswordBody = 4 * 255

// maxPasswordAnswer bounds GET's answer: what nova stores, with room.
const maxPasswordAnswer = 4 << 10

// Key sizes the endpoint can take: Go's crypto/rsa refuses keys under
// 1024 bits, and the base64 of a ciphertext (the key's size) must fit in
// MaxPasswordBody.
const (
	minRSABits = 1024
	maxRSABits = MaxPasswordBody / 4 * 3 * 8 // 6120
)

// passwordResult is what PostPassword did.
type passwordResult int

const (
	// PasswordPosted: the endpoint was empty and took the password.
	PasswordPosted passwordResult = iota + 1
	// passwordAlreadySet: the endpoint holds a password already (GET
	// answered one, or POST answered 409): nothing was changed.
	passwordAlreadySet
	// passwordUnsupported: the service has no password endpoint (404).
	passwordUnsupported
)

func (r passwordResult) String() string {
	switch r {
	case PasswordPosted:
		return "posted"
	case passwordAlreadySet:
		return "the metadata service holds a password already: not posted"
	case passwordUnsupported:
		return "the metadata service has no password endpoint (" + PasswordPath + "): not posted"
	}
	return "nothing done"
}

// PostPassword posts password, encrypted with authorizedKey (an
// authorized_keys line, which must be ssh-rsa), to the password endpoint
// of the service at c.BaseURL, unless the endpoint holds one already.
// The key is checked before any request. ctx bounds the whole exchange;
// each request has c's timeout and retries.
func (c *Client) PostPassword(ctx context.Context, authorizedKey, password string) (passwordResult, error) {
	pub, err := parseSSHRSAKey(authorizedKey)
	if err != nil {
		return 0, err
	}
	if err := checkPasswordFits(pub, password); err != nil {
		return 0, err
	}
	base := strings.TrimRight(c.BaseURL, "/")
	if base == "" {
		base = DefaultBaseURL
	}
	u := base + "/" + PasswordPath
	g := c.http()
	cur, err := g.Get(ctx, httpget.Request{URL: u, Limit: maxPasswordAnswer})
	switch {
	case httpget.NotFound(err):
		return passwordUnsupported, nil
	case err != nil:
		return 0, fmt.Errorf("password endpoint: %w", err)
	case strings.TrimSpace(string(cur)) != "":
		return passwordAlreadySet, nil
	}
	enc, err := encryptPassword(pub, password)
	if err != nil {
		return 0, err
	}
	_, err = g.Get(ctx, httpget.Request{
		Method: "POST", URL: u, Body: []byte(enc), Limit: maxPasswordAnswer,
		Header: map[string]string{"Content-Type": "application/x-www-form-urlencoded"},
	})
	switch {
	case httpget.Status(err) == 409:
		// Set meanwhile (or by this POST's own earlier try, retried after
		// a lost answer).
		return passwordAlreadySet, nil
	case err != nil:
		return 0, fmt.Errorf("password endpoint: %w", err)
	}
	return PasswordPosted, nil
}

func checkPasswordFits(pub *rsa.PublicKey, password string) error {
	if password == "" {
		return errors.New("password endpoint: no password to post")
	}
	if max := pub.Size() - 11; len(password) > max {
		return fmt.Errorf("password endpoint: the password is too long for a %d-bit RSA key (at most %d bytes): not posted", pub.N.BitLen(), max)
	}
	return nil
}

func encryptPassword(pub *rsa.PublicKey, password string) (string, error) {
	// PKCS #1 v1.5 is what nova's clients decrypt (openssl rsautl's
	// default padding); OAEP would be better and nothing could read it.
	ct, err := rsa.EncryptPKCS1v15(rand.Reader, pub, []byte(password))
	if err != nil {
		return "", fmt.Errorf("password endpoint: encrypt with the %d-bit RSA key: %w", pub.N.BitLen(), err)
	}
	return base64.StdEncoding.EncodeToString(ct), nil
}

// parseSSHRSAKey reads the RSA public key of an authorized_keys line
// ("[options] ssh-rsa BASE64 [comment]"), as RFC 4253 lays it out: the
// string "ssh-rsa", then the exponent e and the modulus n as mpints. Any
// other key type is an error naming it; so is a key outside 1024 to 6120
// bits (see MaxPasswordBody) or an exponent that is not an odd number
// from 3 to 2^31-1.
func parseSSHRSAKey(line string) (*rsa.PublicKey, error) {
	typ, blob, err := keyFields(line)
	if err != nil {
		return nil, err
	}
	if typ != "ssh-rsa" {
		return nil, fmt.Errorf("public key: type %s: the password endpoint takes an RSA key (ssh-rsa) only", typ)
	}
	raw, err := base64.StdEncoding.DecodeString(blob)
	if err != nil {
		return nil, fmt.Errorf("public key: ssh-rsa: the key is not base64: %w", err)
	}
	r := sshReader{b: raw}
	inner, e, n := r.str(), r.mpint(), r.mpint()
	switch {
	case r.err != nil:
		return nil, fmt.Errorf("public key: ssh-rsa: %w", r.err)
	case len(r.b) != 0:
		return nil, errors.New("public key: ssh-rsa: trailing bytes after the modulus")
	case string(inner) != "ssh-rsa":
		return nil, fmt.Errorf("public key: the line says ssh-rsa, the key inside says %q", truncate(string(inner), 40))
	case n.Sign() <= 0 || n.Bit(0) == 0:
		return nil, errors.New("public key: ssh-rsa: the modulus is not an odd positive number")
	case !e.IsInt64() || e.Int64() < 3 || e.Int64() > 1<<31-1 || e.Bit(0) == 0:
		return nil, errors.New("public key: ssh-rsa: the exponent is not an odd number from 3 to 2^31-1")
	}
	if bits := n.BitLen(); bits < minRSABits || bits > maxRSABits {
		return nil, fmt.Errorf("public key: ssh-rsa: a %d-bit key: the password endpoint takes %d to %d bits (nova stores at most %d base64 characters)", bits, minRSABits, maxRSABits, MaxPasswordBody)
	}
	return &rsa.PublicKey{N: n, E: int(e.Int64())}, nil
}

// keyFields finds the key type and base64 blob in an authorized_keys line,
// after any options (which may hold quoted spaces).
func keyFields(line string) (typ, blob string, err error) {
	f := strings.Fields(line)
	for i, w := range f {
		if keyTypeName(w) && i+1 < len(f) {
			return w, f[i+1], nil
		}
	}
	if len(f) == 0 {
		return "", "", errors.New("public key: empty")
	}
	return "", "", errors.New("public key: no key type (ssh-rsa, ssh-ed25519, ecdsa-sha2-...) followed by a key")
}

// keyTypeName tells whether s looks like an OpenSSH key type name.
func keyTypeName(s string) bool {
	for _, p := range []string{"ssh-", "ecdsa-", "sk-ssh-", "sk-ecdsa-", "rsa-sha2-"} {
		if strings.HasPrefix(s, p) && !strings.ContainsAny(s, `"=,`) {
			return true
		}
	}
	return false
}

func truncate(s string, n int) string {
	if len(s) > n {
		return s[:n] + "..."
	}
	return s
}

// sshReader reads RFC 4251 strings and mpints; the first problem sticks
// in err.
type sshReader struct {
	b   []byte
	err error
}

func (r *sshReader) str() []byte {
	if r.err != nil {
		return nil
	}
	if len(r.b) < 4 {
		r.err = errors.New("the key is truncated")
		return nil
	}
	n := binary.BigEndian.Uint32(r.b)
	if uint64(n) > uint64(len(r.b)-4) {
		r.err = errors.New("the key is truncated")
		return nil
	}
	s := r.b[4 : 4+n]
	r.b = r.b[4+n:]
	return s
}

func (r *sshReader) mpint() *big.Int {
	b := r.str()
	if r.err != nil {
		return new(big.Int)
	}
	if len(b) > 0 && b[0]&0x80 != 0 {
		r.err = errors.New("a negative number in the key")
		return new(big.Int)
	}
	return new(big.Int).SetBytes(b)
}
