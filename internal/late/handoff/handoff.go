// Package handoff is `earlyinit late --exec INIT` and
// `earlyinit late --when-writable`: PID 1's path on roots without
// systemd, where no unit runs the late stages. The boot stage runs in the
// foreground, the final stage in a child of its own session, and then the
// real init replaces us as PID 1; a root still read-only gets both stages
// in a child that waits for the init system to make it writable.
//
// Its side effects (the stages, the read-only check, the child, the exec,
// the clock) are fields of Config, so that it is tested without root, exec
// or real waits; the zero values are the real ones.
package handoff

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"

	"github.com/earlyinit/earlyinit/internal/boot"
	"github.com/earlyinit/earlyinit/internal/late"
	"github.com/earlyinit/earlyinit/internal/modules"
	"github.com/earlyinit/earlyinit/internal/paths"
	"golang.org/x/sys/unix"
)

// StageBound bounds a whole stage; each module has its own bounds.
const StageBound = 2 * time.Hour

// writableWait bounds WhenWritable's wait: the init system's fsck of a big
// root may take minutes.
const writableWait = 15 * time.Minute

// writablePoll is how often WhenWritable looks at the root.
const writablePoll = 200 * time.Millisecond

// Config is the handoff's side effects. Options is required; any other
// field left nil (or empty) is the real thing, given in its comment.
type Config struct {
	// Options makes the late stages' options for a root (the CLI's,
	// with its SELinux labels and #include getter).
	Options func(root string) (late.Options, error)
	// Await waits for a VMware guest customization still to come and
	// tells whether the boot has an instance: boot.AwaitCustomization.
	Await func(ctx context.Context, root string) bool
	// Run runs one stage: late.Run.
	Run func(ctx context.Context, st modules.Stage, opts late.Options) error
	// ReadOnly tells whether the filesystem holding dir is mounted
	// read-only: a statfs for ST_RDONLY.
	ReadOnly func(dir string) bool
	// Start starts the child, not waited for: (*exec.Cmd).Start.
	Start func(c *exec.Cmd) error
	// Exec replaces this process by argv0: syscall.Exec. It returns
	// only on failure.
	Exec func(argv0 string, argv, envv []string) error
	// Environ is the environment init gets: os.Environ.
	Environ func() []string
	// Self is the earlyinit binary the child runs: os.Executable, else
	// paths.LateBinary.
	Self string
	// Now and Sleep are WhenWritable's clock: time.Now and time.Sleep.
	Now   func() time.Time
	Sleep func(time.Duration)
	// Stderr gets the log lines and the child's output: os.Stderr.
	Stderr io.Writer
}

// errNoOptions is what a Config without Options gives for them.
var errNoOptions = errors.New("handoff: Config.Options is nil")

// withDefaults is c with the real side effects where c has none.
func (c Config) withDefaults() Config {
	if c.Options == nil {
		c.Options = func(string) (late.Options, error) { return late.Options{}, errNoOptions }
	}
	if c.Await == nil {
		c.Await = boot.AwaitCustomization
	}
	if c.Run == nil {
		c.Run = func(ctx context.Context, st modules.Stage, opts late.Options) error {
			_, err := late.Run(ctx, st, opts)
			return err
		}
	}
	if c.ReadOnly == nil {
		c.ReadOnly = readOnly
	}
	if c.Start == nil {
		c.Start = (*exec.Cmd).Start
	}
	if c.Exec == nil {
		c.Exec = syscall.Exec
	}
	if c.Environ == nil {
		c.Environ = os.Environ
	}
	if c.Self == "" {
		self, err := os.Executable()
		if err != nil {
			self = paths.LateBinary
		}
		c.Self = self
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.Sleep == nil {
		c.Sleep = time.Sleep
	}
	if c.Stderr == nil {
		c.Stderr = os.Stderr
	}
	return c
}

// ExecInit is PID 1's path on roots without systemd: the boot stage runs
// in the foreground, the final stage in a child of its own session, and
// then the real init replaces us as PID 1 with its arguments. A root
// still read-only (sysvinit and OpenRC remount it read-write themselves,
// after their fsck) gets both stages in a child that waits for that.
// Nothing here may stop the boot: a failed stage is logged and init is
// exec'd anyway. It returns (1) only when the exec failed.
func (c Config) ExecInit(root, init string, initArgs []string) int {
	c = c.withDefaults()
	if c.ReadOnly(root) {
		fmt.Fprintf(c.Stderr, "earlyinit: %s is read-only: the late stages run once %s has made it writable\n", root, init)
		c.startChild("late", "--when-writable", "--root", root)
	} else {
		c.bootAsInit(root)
		c.startChild("late", "--stage", "final", "--root", root)
	}
	argv := append([]string{init}, initArgs...)
	err := c.Exec(init, argv, c.Environ())
	fmt.Fprintf(c.Stderr, "earlyinit: exec %s: %v\n", init, err)
	return 1
}

// startChild starts earlyinit in a session of its own, not waited for:
// the real init, PID 1 after the exec, reaps it. It is the one command
// not run through proc.Run, on purpose: it must outlive us (we exec the
// real init right after), so no context, group kill or wait applies; its
// output goes to our stderr, a file, so nothing of ours holds a pipe of
// it either. The stages it runs start their own commands through proc.
func (c Config) startChild(args ...string) {
	cmd := exec.Command(c.Self, args...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	cmd.Stdout, cmd.Stderr = c.Stderr, c.Stderr
	if err := c.Start(cmd); err != nil {
		fmt.Fprintf(c.Stderr, "earlyinit: start %s: %v\n", strings.Join(args, " "), err)
	}
}

// readOnly tells whether the filesystem holding dir is mounted read-only.
func readOnly(dir string) bool {
	var st unix.Statfs_t
	return unix.Statfs(dir, &st) == nil && st.Flags&unix.ST_RDONLY != 0
}

// WhenWritable waits until root is writable, then runs the boot stage and
// the final stage, one after the other: 0 when both succeeded, 1 when
// either failed or the root stayed read-only for writableWait.
func (c Config) WhenWritable(root string) int {
	c = c.withDefaults()
	t0 := c.Now()
	for c.ReadOnly(root) {
		if c.Now().Sub(t0) > writableWait {
			fmt.Fprintf(c.Stderr, "earlyinit: %s still read-only after %s: the late stages do not run this boot\n", root, writableWait)
			return 1
		}
		c.Sleep(writablePoll)
	}
	fmt.Fprintf(c.Stderr, "earlyinit: %s is writable after %s: running the late stages\n", root, c.Now().Sub(t0).Round(time.Millisecond))
	opts, err := c.Options(root)
	if err != nil {
		fmt.Fprintf(c.Stderr, "earlyinit: late stages: %v\n", err)
		return 1
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*StageBound)
	defer cancel()
	rc := 0
	for _, st := range []modules.Stage{modules.StageBoot, modules.StageFinal} {
		if err := c.Run(ctx, st, opts); err != nil {
			fmt.Fprintf(c.Stderr, "earlyinit: late stage %s: %v\n", st, err)
			rc = 1
		}
	}
	return rc
}

// bootAsInit runs the boot stage for ExecInit. We are PID 1: whatever
// happens in it (late.Run contains its own panics; this is the last net),
// init is exec'd afterwards.
func (c Config) bootAsInit(root string) {
	defer func() {
		if p := recover(); p != nil {
			fmt.Fprintf(c.Stderr, "earlyinit: late boot stage: panic: %v\n", p)
		}
	}()
	opts, err := c.Options(root)
	if err != nil {
		fmt.Fprintf(c.Stderr, "earlyinit: late boot stage: %v\n", err)
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), StageBound)
	defer cancel()
	if !c.Await(ctx, root) {
		fmt.Fprintf(c.Stderr, "earlyinit: late boot stage: no instance this boot (no VMware guest customization came, nothing else was found)\n")
		return
	}
	if err := c.Run(ctx, modules.StageBoot, opts); err != nil {
		fmt.Fprintf(c.Stderr, "earlyinit: late boot stage: %v\n", err)
	}
}
