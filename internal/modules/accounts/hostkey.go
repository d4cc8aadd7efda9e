//go:build !initrd

package accounts

import (
	"crypto/rand"
	"io/fs"

	"github.com/earlyinit/earlyinit/internal/modules/core"
	"github.com/earlyinit/earlyinit/internal/sshkey"
)

// inProcessKeyTypes are the host key types genHostKeys makes itself
// (makeHostKey). The initramfs build has none: its crypto (0.44 MB of
// zstd initramfs) would put the generic image over its 6 MB goal, so the
// late stages that run that build (a root without the package) make host
// keys with ssh-keygen.
var inProcessKeyTypes = sshkey.Types

// makeHostKey writes a host key of type t (one of sshkey.Types) as
// ssh-keygen does: the private file 0600, then the public one 0644, both
// root's; with gid >= 0 (the group ssh_keys) the private file is
// root:gid 0640, as cc_ssh leaves it. It returns what ssh-keygen would
// have printed.
func makeHostKey(e *core.Env, t, comment string, gid int) ([]byte, error) {
	k, err := sshkey.Generate(t, comment, rand.Reader)
	if err != nil {
		return nil, err
	}
	f := core.HostKeyFile(t)
	mode := fs.FileMode(0o600)
	if gid >= 0 {
		mode = 0o640
	} else {
		gid = 0
	}
	if err := e.Root.WriteFile(f, k.Private, mode, 0, gid); err != nil {
		return nil, err
	}
	if err := e.Root.WriteFile(f+".pub", k.Public, 0o644, 0, 0); err != nil {
		return nil, err
	}
	e.Logf("ssh: host key %s made (%s)", f, k.Fingerprint())
	return []byte(k.Report(f)), nil
}
