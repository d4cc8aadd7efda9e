package core

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"

	"github.com/earlyinit/earlyinit/internal/proc"
)

// Cmd is one command to run in the real system.
type Cmd struct {
	Name string
	Args []string
	// Env is added to the runner's environment (KEY=VALUE).
	Env []string
	// Stdin is the command's standard input (nil: none). It may hold
	// secrets: never log it.
	Stdin []byte
	// Output, when set, receives stdout and stderr as they come; Run then
	// returns no output. Otherwise both are captured and returned.
	Output io.Writer
}

// String is the command for a log: name and arguments, never stdin.
func (c Cmd) String() string {
	return strings.Join(append([]string{c.Name}, c.Args...), " ")
}

// Exec runs commands. SystemExec runs them for real; tests record them.
type Exec interface {
	Run(ctx context.Context, c Cmd) (output []byte, err error)
}

// ExitCode returns a command error's exit status, if it has one.
func ExitCode(err error) (int, bool) {
	var ec interface{ ExitCode() int }
	if errors.As(err, &ec) {
		if c := ec.ExitCode(); c >= 0 {
			return c, true
		}
	}
	return 0, false
}

// SystemExec runs commands with os/exec, with a PATH that finds the
// root's sbin tools.
type SystemExec struct{}

// DefaultPath is the PATH commands run with.
const DefaultPath = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

// Run runs c through proc.Run: in a process group of its own, killed
// as a group when ctx ends; a child c leaves in the background (bootcmd's
// `mydaemon &`) keeps running but holds nothing up, and what it writes
// once Run has returned is dropped. A non-zero exit is an error that
// ExitCode understands, with the captured output's tail in its message.
func (SystemExec) Run(ctx context.Context, c Cmd) ([]byte, error) {
	cmd := exec.CommandContext(ctx, c.Name, c.Args...)
	env := os.Environ()
	hasPath := false
	for _, kv := range env {
		if strings.HasPrefix(kv, "PATH=") {
			hasPath = true
		}
	}
	if !hasPath {
		env = append(env, "PATH="+DefaultPath)
	}
	cmd.Env = append(env, c.Env...)
	if c.Stdin != nil {
		cmd.Stdin = bytes.NewReader(c.Stdin)
	}
	var buf bytes.Buffer
	if c.Output != nil {
		cmd.Stdout, cmd.Stderr = c.Output, c.Output
	} else {
		cmd.Stdout, cmd.Stderr = &buf, &buf
	}
	err := proc.Run(cmd)
	if err != nil {
		tail := strings.TrimSpace(buf.String())
		if len(tail) > 512 {
			tail = "..." + tail[len(tail)-512:]
		}
		if tail != "" {
			return buf.Bytes(), &CmdError{c.Name, err, tail}
		}
		return buf.Bytes(), &CmdError{c.Name, err, ""}
	}
	return buf.Bytes(), nil
}

type CmdError struct {
	Name string
	Err  error
	Tail string
}

func (e *CmdError) Error() string {
	if e.Tail != "" {
		return fmt.Sprintf("%s: %v: %s", e.Name, e.Err, e.Tail)
	}
	return fmt.Sprintf("%s: %v", e.Name, e.Err)
}

func (e *CmdError) Unwrap() error { return e.Err }

// Run runs c through e.Exec, wrapping a failure with the command (never
// its stdin).
func (e *Env) Run(ctx context.Context, c Cmd) ([]byte, error) {
	if e.Exec == nil {
		return nil, ErrNoExec
	}
	out, err := e.Exec.Run(ctx, c)
	if err != nil {
		return out, fmt.Errorf("run %s: %w", c.String(), err)
	}
	return out, nil
}

// Has tells whether any of the paths exists in the root (for choosing a
// tool), returning the first that does.
func (e *Env) Has(paths ...string) (string, bool) {
	for _, p := range paths {
		if e.Root.Exists(p) {
			return p, true
		}
	}
	return "", false
}

// Tool finds a command in the root's usual bin directories.
func (e *Env) Tool(name string) (string, bool) {
	return e.Has("/usr/sbin/"+name, "/sbin/"+name, "/usr/bin/"+name, "/bin/"+name)
}

// RunShown runs c, logging nothing; a failure names the command as shown
// (its secrets hidden) rather than c's own argv.
func (e *Env) RunShown(ctx context.Context, c Cmd, shown string) ([]byte, error) {
	if e.Exec == nil {
		return nil, ErrNoExec
	}
	out, err := e.Exec.Run(ctx, c)
	if err != nil {
		return out, fmt.Errorf("run %s: %w", shown, err)
	}
	return out, nil
}

// Start runs c in its own goroutine (Run, as is) and returns at once.
func (s SystemExec) Start(ctx context.Context, c Cmd) func() ([]byte, error) {
	type result struct {
		out []byte
		err error
	}
	done := make(chan result, 1)
	go func() {
		out, err := s.Run(ctx, c)
		done <- result{out, err}
	}()
	return func() ([]byte, error) {
		r := <-done
		return r.out, r.err
	}
}
