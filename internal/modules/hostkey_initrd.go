//go:build initrd

package modules

import "errors"

// inProcessKeyTypes: none in the initramfs build (see hostkey.go);
// genHostKeys runs ssh-keygen for every type.
var inProcessKeyTypes []string

func (e *Env) makeHostKey(t, comment string, gid int) ([]byte, error) {
	return nil, errors.New("host keys are ssh-keygen's in the initramfs build")
}
