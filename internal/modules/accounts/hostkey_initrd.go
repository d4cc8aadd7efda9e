//go:build initrd

package accounts

import (
	"errors"

	"github.com/earlyinit/earlyinit/internal/modules/core"
)

// inProcessKeyTypes: none in the initramfs build (see hostkey.go);
// genHostKeys runs ssh-keygen for every type.
var inProcessKeyTypes []string

func makeHostKey(e *core.Env, t, comment string, gid int) ([]byte, error) {
	return nil, errors.New("host keys are ssh-keygen's in the initramfs build")
}
