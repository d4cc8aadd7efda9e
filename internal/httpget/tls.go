//go:build !initrd

package httpget

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"strings"

	"github.com/earlyinit/earlyinit/internal/rootfs"
)

// TLS says whether this build of earlyinit speaks https: true here, false
// in the initramfs build (notls.go).
const TLS = true

// CAPool is the certificates of a root's CA bundle, and which file they
// came from, for messages.
type CAPool struct {
	Pool *x509.CertPool
	// File is the bundle's path as the caller sees it (its root joined
	// with one of caBundles), or a description of where Pool came from.
	File string
}

// LoadCABundle reads the first of caBundles in the root dir ("" means
// "/"): the real root mounted at /sysroot in the initramfs, "/" after
// switch_root. Symlinks are resolved inside the root (internal/rootfs), so a
// root's absolute link to its bundle cannot reach the initramfs's files.
// A bundle with no certificate in it is an error, as is a root without
// any of the files.
func LoadCABundle(dir string) (*CAPool, error) {
	if dir == "" {
		dir = "/"
	}
	r, err := rootfs.Open(dir)
	if err != nil {
		return nil, fmt.Errorf("CA bundle: %w", err)
	}
	for _, name := range caBundles {
		fi, err := r.Stat(name)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		full := r.Path(name)
		if err == nil && fi.Mode()&fs.ModeSymlink == 0 && fi.Size() > MaxCABundle {
			return nil, fmt.Errorf("CA bundle %s: %d bytes is over the %d byte limit", full, fi.Size(), MaxCABundle)
		}
		b, err := r.ReadFile(name)
		if errors.Is(err, fs.ErrNotExist) {
			continue // a dangling symlink: try the next name
		}
		if err != nil {
			return nil, fmt.Errorf("CA bundle: %w", err)
		}
		if len(b) > MaxCABundle {
			return nil, fmt.Errorf("CA bundle %s: %d bytes is over the %d byte limit", full, len(b), MaxCABundle)
		}
		p := x509.NewCertPool()
		if !p.AppendCertsFromPEM(b) {
			return nil, fmt.Errorf("CA bundle %s: no PEM certificate in it", full)
		}
		return &CAPool{Pool: p, File: full}, nil
	}
	return nil, fmt.Errorf("no CA bundle in %s (looked for %s): https needs the root's CA certificates", dir, strings.Join(caBundles, ", "))
}

// caPool is g.CAs, or the CA bundle of g.CARoot.
func (g *Getter) caPool() (*CAPool, error) {
	if g.CAs != nil {
		return g.CAs, nil
	}
	return LoadCABundle(g.CARoot)
}

// handshake runs TLS over conn for t: TLS 1.2 or later, the server's
// certificate chain verified against cas and its name (or IP address)
// against t.hostname, which is also sent as SNI when it is a name.
func handshake(ctx context.Context, conn net.Conn, t target, cas *CAPool) (net.Conn, error) {
	name := t.hostname
	if i := strings.IndexByte(name, '%'); i >= 0 {
		name = name[:i] // an IPv6 zone is no part of the certificate
	}
	tc := tls.Client(conn, &tls.Config{
		ServerName: name,
		RootCAs:    cas.Pool,
		MinVersion: tls.VersionTLS12,
		NextProtos: []string{"http/1.1"},
	})
	if err := tc.HandshakeContext(ctx); err != nil {
		var ve *tls.CertificateVerificationError
		if errors.As(err, &ve) {
			return nil, &CertError{Host: name, CAFile: cas.File, Err: ve.Err}
		}
		return nil, fmt.Errorf("TLS handshake with %s: %w", name, err)
	}
	return tc, nil
}
