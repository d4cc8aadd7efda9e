package core

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/earlyinit/earlyinit/internal/httpget"
	"github.com/earlyinit/earlyinit/internal/imagecfg"
	"github.com/earlyinit/earlyinit/internal/instance"
	"github.com/earlyinit/earlyinit/internal/paths"
	"github.com/earlyinit/earlyinit/internal/rootfs"
)

// User is a user to create, as a cloud-config users entry: the image's
// default user's type (imagecfg.User), one definition for both.
type User = imagecfg.User

// DebianDefaultUser is Debian's cloud.cfg default_user (see
// imagecfg.VariantDefaultUser for the other distributions'). The late
// stage takes the default user from the image's configuration.
func DebianDefaultUser() User {
	return imagecfg.DebianDefaultUser()
}

// PowerRequest is what power_state asks the runner to do once everything
// else has run.
type PowerRequest struct {
	// Argv is the command, as cloud-init's: shutdown -P|-r|-H now|+M [message].
	Argv []string
	// Condition: nil or true means go; false means do not; a string runs
	// with sh -c and a list as argv, exit 0 meaning go.
	Condition any
	// Timeout bounds the condition command.
	Timeout time.Duration
}

// Incomplete is the error of a module that did not finish and must run
// again at the next boot without counting as a failure: a script asked
// for it with exit code 1002 or 1003, or asked for a reboot with 1001.
type Incomplete struct {
	// Reboot asks the runner to stop the stage and reboot now.
	Reboot bool
	// Rerun means the module is not done (no semaphore is written).
	Rerun  bool
	Reason string
	// Err, if set, is a failure that happened before the request: the
	// module failed, and the reboot still happens.
	Err error
}

func (e *Incomplete) Error() string {
	if e.Err != nil {
		return e.Reason + "; " + e.Err.Error()
	}
	return e.Reason
}

func (e *Incomplete) Unwrap() error { return e.Err }

// Env is what a module runs with.
type Env struct {
	// Root is "/" in the real system, a temporary directory in tests.
	Root *rootfs.Root
	// Cfg is the merged cloud-config (BaseConfig under the image's
	// configuration under vendor-data under user-data).
	Cfg        map[string]any
	InstanceID string
	// Data is the cached instance (may be nil: RunSingle without one).
	Data *instance.Data
	Exec Exec
	// Log is the runner's log (/var/log/earlyinit.log). Secrets never go
	// there.
	Log func(format string, args ...any)
	// Output receives script and command output
	// (/var/log/earlyinit-output.log).
	Output      io.Writer
	DefaultUser User
	// StateDir is a directory in Root where the running module may keep
	// per-item markers (scripts already run); the runner sets it for
	// once and per-instance modules, "" for always.
	StateDir string
	// HTTP posts phone_home (plain http); nil means one try of 10 s per attempt.
	HTTP *httpget.Getter
	// Now and Uptime feed final_message; nil means the real clock and
	// /proc/uptime.
	Now    func() time.Time
	Uptime func() float64
	// Version is earlyinit's version, for final_message.
	Version string
	// Power is set by power_state for the runner to act on at the end.
	Power *PowerRequest
	// Sleep waits between phone_home tries; nil means time.Sleep bounded by ctx.
	Sleep func(ctx context.Context, d time.Duration)
}

func (e *Env) Logf(format string, args ...any) {
	if e.Log != nil {
		e.Log(format, args...)
	}
}

func (e *Env) Out() io.Writer {
	if e.Output == nil {
		return io.Discard
	}
	return e.Output
}

// InstanceDir is instances/<iid> in the cache.
func (e *Env) InstanceDir() string {
	return paths.InstancesDir + "/" + instance.InstanceDirName(e.InstanceID)
}

// ScriptsDir is where the runner writes user-data scripts and runcmd for
// instance id.
func ScriptsDir(id string) string {
	return paths.InstancesDir + "/" + instance.InstanceDirName(id) + "/scripts"
}

// ErrNoExec guards modules from a nil Exec.
var ErrNoExec = errors.New("no command runner")

// ForSysvinit adapts a shutdown argv of power_state's to sysvinit's
// shutdown, which wants -h with -P or -H (systemd's takes -h as poweroff
// too, but the runner only calls this when systemd is not running).
func ForSysvinit(argv []string) []string {
	if len(argv) < 2 || argv[0] != "shutdown" || (argv[1] != "-P" && argv[1] != "-H") {
		return argv
	}
	return append([]string{"shutdown", "-h"}, argv[1:]...)
}

// Go checks the request's condition through x: true unless the condition
// is false or its command exits non-zero (or does not finish within the
// timeout).
func (p *PowerRequest) Go(ctx context.Context, x Exec) (bool, error) {
	var c Cmd
	switch t := p.Condition.(type) {
	case nil:
		return true, nil
	case bool:
		return t, nil
	case string:
		c = Cmd{Name: "/bin/sh", Args: []string{"-c", t}}
	case []any:
		if len(t) == 0 {
			return false, fmt.Errorf("power_state.condition: empty command")
		}
		argv := make([]string, len(t))
		for i, a := range t {
			argv[i] = ScalarString(a)
		}
		c = Cmd{Name: argv[0], Args: argv[1:]}
	default:
		return false, fmt.Errorf("power_state.condition: want a boolean, a string or a list")
	}
	if p.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, p.Timeout)
		defer cancel()
	}
	_, err := x.Run(ctx, c)
	if err == nil {
		return true, nil
	}
	if code, ok := ExitCode(err); ok && code == 1 {
		return false, nil
	}
	return false, fmt.Errorf("power_state.condition %s: %w", c.String(), err)
}

// BaseConfig is the built-in configuration, under the image's own
// (cloud.cfg, see internal/imagecfg) and user-data: the default user is
// created and root cannot log in by SSH, as in every distribution's
// cloud.cfg.
func BaseConfig() map[string]any {
	return map[string]any{
		"users":             []any{"default"},
		"disable_root":      true,
		"preserve_hostname": false,
	}
}
