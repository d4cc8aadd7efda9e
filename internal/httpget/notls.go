//go:build initrd

package httpget

import (
	"context"
	"net"
)

// TLS says whether this build of earlyinit speaks https: false in the
// initramfs build (build tag initrd), which leaves crypto/tls and
// crypto/x509 out to keep the initramfs within its size goal (docs/reference.md,
// "HTTPS"). The late stages run the root's installed /usr/bin/earlyinit,
// which has them, when the image has the package.
const TLS = false

// CAPool stands in for tls.go's: this build has no certificates to hold.
type CAPool struct {
	File string
}

// LoadCABundle fails: without TLS there is nothing to verify with.
func LoadCABundle(dir string) (*CAPool, error) { return nil, ErrNoTLS }

func (g *Getter) caPool() (*CAPool, error) { return nil, ErrNoTLS }

func handshake(context.Context, net.Conn, target, *CAPool) (net.Conn, error) {
	return nil, ErrNoTLS
}
