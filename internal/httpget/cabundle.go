package httpget

import (
	"errors"
	"fmt"
	"path"

	"github.com/earlyinit/earlyinit/internal/paths"
)

// The CA bundle files and the certificate error, the same in both builds
// (tls.go; notls.go, the initramfs build without TLS).

// caBundles are the distributions' CA bundle files, inside a root, in the
// order they are looked for: the first one there is read, as Go's
// crypto/x509 does for "/" (root_linux.go), with openSUSE's real file
// first since its /etc/ssl/ca-bundle.pem is a symlink to it.
var caBundles = []string{
	"/etc/ssl/certs/ca-certificates.crt",                // Debian, Ubuntu, Alpine, Arch, Gentoo
	"/etc/pki/tls/certs/ca-bundle.crt",                  // Fedora, RHEL, CentOS, Rocky, Alma
	"/etc/pki/ca-trust/extracted/pem/tls-ca-bundle.pem", // RHEL 7 and later, the file itself
	"/var/lib/ca-certificates/ca-bundle.pem",            // openSUSE, SLES
	"/etc/ssl/ca-bundle.pem",                            // openSUSE's symlink to it
	"/etc/ssl/cert.pem",                                 // Alpine's symlink, BSDs
}

// MaxCABundle bounds a CA bundle's size (Debian's is some 220 KB).
const MaxCABundle = 8 << 20

// CertError is a server certificate that did not verify: signed by a CA
// not in the bundle, for another name, expired or not yet valid. It is
// not retried.
type CertError struct {
	Host   string
	CAFile string // the CA bundle it was checked against
	Err    error  // x509's reason
}

func (e *CertError) Error() string {
	return fmt.Sprintf("TLS: certificate of %s not trusted (checked against %s): %v", e.Host, path.Clean(e.CAFile), e.Err)
}

func (e *CertError) Unwrap() error { return e.Err }

// ErrNoTLS is the error of every https request in the initramfs build
// (notls.go), returned before any connection is made.
var ErrNoTLS = errors.New("https is not in earlyinit's initramfs build (it has no TLS, to keep the initramfs small); " +
	"the package's " + paths.InstalledBinary + " has it, and runs the late stages when the image has the package")
