package accounts

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/earlyinit/earlyinit/internal/ccfg"
	"github.com/earlyinit/earlyinit/internal/modules/core"
)

// starter is an Exec that can start a command and wait for it later, so
// that independent commands run side by side. wait returns what Run
// would have, and is called once. An Exec without Start runs each
// command when it is started (Env.start), one after the other.
type starter interface {
	Start(ctx context.Context, c core.Cmd) (wait func() ([]byte, error))
}

// start is run, started: through the Exec's Start when it has one, else
// run at once with wait returning its result. A failure is wrapped as
// run's.
func start(ctx context.Context, e *core.Env, c core.Cmd) (wait func() ([]byte, error)) {
	s, ok := e.Exec.(starter)
	if !ok {
		out, err := e.Run(ctx, c)
		return func() ([]byte, error) { return out, err }
	}
	w := s.Start(ctx, c)
	return func() ([]byte, error) {
		out, err := w()
		if err != nil {
			return out, fmt.Errorf("run %s: %w", c.String(), err)
		}
		return out, nil
	}
}

// missingHostKeys is the types of ssh_genkeytypes whose host key is not
// there, each once, in the list's order; an unknown type is an error
// and skipped.
func missingHostKeys(e *core.Env, types []string) ([]string, error) {
	var todo []string
	var errs []error
	seen := map[string]bool{}
	for _, t := range types {
		switch {
		case !validKeyType(t):
			errs = append(errs, fmt.Errorf("ssh_genkeytypes: unknown key type %q", t))
		case seen[t] || e.Root.Exists(core.HostKeyFile(t)):
		default:
			todo = append(todo, t)
		}
		seen[t] = true
	}
	return todo, errors.Join(errs...)
}

// genHostKeys makes the host keys of types as cloud-init's cc_ssh does
// (ssh-keygen -t T -N "" -f /etc/ssh/ssh_host_T_key, LANG=C, its output
// to the output log unless ssh_quiet_keygen; with a group ssh_keys the
// private key is root:ssh_keys 0640, "the same sanitize permissions as
// sshd-keygen"), but the types of inProcessKeyTypes (internal/sshkey: rsa,
// ecdsa, ed25519, except in the initramfs build) are made in-process:
// the same files and the same words, without a process per key. Any
// other type is ssh-keygen's, started before the Go keys are made and
// waited for after.
// A failure names its type, and the other types still complete.
func genHostKeys(ctx context.Context, e *core.Env, types []string) error {
	quiet, _, err := ccfg.Decode[bool](e.Cfg, "ssh_quiet_keygen")
	if err != nil {
		return err
	}
	waits := make([]func() ([]byte, error), len(types))
	for i, t := range types {
		if !slices.Contains(inProcessKeyTypes, t) {
			waits[i] = start(ctx, e, core.Cmd{Name: "ssh-keygen", Args: []string{"-t", t, "-N", "", "-f", e.Root.Path(core.HostKeyFile(t))}, Env: []string{"LANG=C"}})
		}
	}
	gid := -1
	if a, err := core.ReadAccounts(e.Root); err == nil {
		if g, ok := a.Group("ssh_keys"); ok {
			gid = g.GID
		}
	}
	host, _ := core.OsHostname()
	var errs []error
	for i, t := range types {
		var out []byte
		var err error
		if waits[i] != nil {
			out, err = waits[i]()
			if err == nil && gid >= 0 {
				// cc_ssh: os.chown(keyfile, -1, gid), chmod 0640.
				var b []byte
				if b, err = e.Root.ReadFile(core.HostKeyFile(t)); err == nil {
					err = e.Root.WriteFile(core.HostKeyFile(t), b, 0o640, 0, gid)
				}
			}
		} else {
			out, err = makeHostKey(e, t, "root@"+host, gid)
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("ssh host key %s: %w", t, err))
			continue
		}
		if !quiet {
			e.Out().Write(out)
		}
	}
	return errors.Join(errs...)
}
