// Package httpgettest makes test certificate authorities and HTTPS servers
// for the tests of httpget and its users: a CA whose certificate goes into
// a root's CA bundle, and servers whose certificates it signs (valid,
// expired, for another name); and a forward proxy (Proxy) for http and,
// with CONNECT, https. It is for tests only.
package httpgettest

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"io"
	"log"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// Name is the DNS name the servers' certificates hold, besides 127.0.0.1
// and ::1.
const Name = "earlyinit.test"

// CA is a test certificate authority.
type CA struct {
	Cert *x509.Certificate
	key  *ecdsa.PrivateKey
	PEM  []byte // the certificate, PEM-encoded
}

// NewCA makes a CA named name, valid from an hour ago for a day.
func NewCA(t testing.TB, name string) *CA {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: name},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(24 * time.Hour),
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	return &CA{Cert: cert, key: key, PEM: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})}
}

// Leaf is what a server certificate says.
type Leaf struct {
	DNSNames  []string // nil means Name
	IPs       []net.IP // nil means 127.0.0.1 and ::1
	NotBefore time.Time
	NotAfter  time.Time // zero means valid from an hour ago for a day
}

// Issue signs a server certificate.
func (ca *CA) Issue(t testing.TB, l Leaf) tls.Certificate {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	if l.DNSNames == nil {
		l.DNSNames = []string{Name}
	}
	if l.IPs == nil {
		l.IPs = []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback}
	}
	if l.NotAfter.IsZero() {
		l.NotBefore, l.NotAfter = time.Now().Add(-time.Hour), time.Now().Add(24*time.Hour)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(time.Now().UnixNano()),
		Subject:      pkix.Name{CommonName: "server"},
		DNSNames:     l.DNSNames,
		IPAddresses:  l.IPs,
		NotBefore:    l.NotBefore,
		NotAfter:     l.NotAfter,
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.Cert, &key.PublicKey, ca.key)
	if err != nil {
		t.Fatal(err)
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
}

// Root makes a root directory whose Debian CA bundle
// (/etc/ssl/certs/ca-certificates.crt) holds the CAs' certificates, and
// returns its path.
func Root(t testing.TB, cas ...*CA) string {
	t.Helper()
	dir := t.TempDir()
	var b []byte
	for _, ca := range cas {
		b = append(b, ca.PEM...)
	}
	f := filepath.Join(dir, "etc/ssl/certs/ca-certificates.crt")
	if err := os.MkdirAll(filepath.Dir(f), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(f, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// Server starts an HTTPS server on 127.0.0.1 with cert, closed when the
// test ends. Its URL is https://127.0.0.1:PORT. cfg, if set, is its TLS
// configuration, cert added.
func Server(t testing.TB, cert tls.Certificate, cfg *tls.Config, h http.Handler) *httptest.Server {
	t.Helper()
	srv := httptest.NewUnstartedServer(h)
	if cfg == nil {
		cfg = &tls.Config{}
	}
	cfg.Certificates = []tls.Certificate{cert}
	srv.TLS = cfg
	// Refused handshakes are what the tests are about: not logged.
	srv.Config.ErrorLog = log.New(io.Discard, "", 0)
	srv.StartTLS()
	t.Cleanup(srv.Close)
	return srv
}
