package handoff

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/earlyinit/earlyinit/internal/late"
	"github.com/earlyinit/earlyinit/internal/modules"
)

// execed is what the fake Exec panics with when the exec succeeds: a real
// exec does not return, so nothing after it may run.
type execed struct{}

// fake records the side effects of a Config, in order.
type fake struct {
	events []string
	stderr bytes.Buffer
	// child is the command Start got.
	child *exec.Cmd
	// sleeps are the durations Sleep got.
	sleeps []time.Duration
	now    time.Time
}

// config is a Config whose side effects f records: the root is
// read-only at the ReadOnly calls readOnly says (counted from 1), Options
// fails with errOpts if optsErr, Await finds no instance if awaitNo, a
// stage does what run does, and Start and Exec return startErr and
// execErr (Exec, without one, panics with execed).
func (f *fake) config(readOnly func(call int) bool, optsErr, awaitNo bool, run func(modules.Stage) error, startErr, execErr error) Config {
	roCalls := 0
	return Config{
		Options: func(root string) (late.Options, error) {
			f.events = append(f.events, "options "+root)
			if optsErr {
				return late.Options{}, errOpts
			}
			return late.Options{Version: "test"}, nil
		},
		Await: func(ctx context.Context, root string) bool {
			f.events = append(f.events, "await "+root)
			if _, ok := ctx.Deadline(); !ok {
				f.events = append(f.events, "await without a deadline")
			}
			return !awaitNo
		},
		Run: func(ctx context.Context, st modules.Stage, opts late.Options) error {
			f.events = append(f.events, "run "+string(st))
			if opts.Version != "test" {
				f.events = append(f.events, "run without Options' options")
			}
			if _, ok := ctx.Deadline(); !ok {
				f.events = append(f.events, "run without a deadline")
			}
			return run(st)
		},
		ReadOnly: func(dir string) bool {
			roCalls++
			return readOnly(roCalls)
		},
		Start: func(c *exec.Cmd) error {
			f.child = c
			f.events = append(f.events, "start "+strings.Join(c.Args, " "))
			return startErr
		},
		Exec: func(argv0 string, argv, envv []string) error {
			f.events = append(f.events, fmt.Sprintf("exec %s %q %q", argv0, argv, envv))
			if execErr != nil {
				return execErr
			}
			panic(execed{})
		},
		Environ: func() []string { return []string{"PATH=/bin", "TERM=linux"} },
		Self:    "/usr/bin/earlyinit",
		Now:     func() time.Time { return f.now },
		Sleep: func(d time.Duration) {
			f.sleeps = append(f.sleeps, d)
			f.now = f.now.Add(d)
		},
		Stderr: &f.stderr,
	}
}

var (
	errOpts  = errors.New("open root: no such policy")
	errStage = errors.New("module bootcmd failed")
)

// execInit runs c.ExecInit, telling whether it exec'd (the fake Exec's
// panic) and, if not, its code.
func execInit(c Config, root, init string, args []string) (rc int, didExec bool) {
	defer func() {
		if p := recover(); p != nil {
			if _, ok := p.(execed); !ok {
				panic(p)
			}
			didExec = true
		}
	}()
	return c.ExecInit(root, init, args), false
}

// TestExecInit: late --exec INIT, PID 1 on roots without systemd. A
// writable root gets the boot stage in-process, then a child for the final
// stage; a read-only root a child that waits; init is exec'd after either,
// with its arguments and our environment, whatever the boot stage did.
func TestExecInit(t *testing.T) {
	const root, init = "/r", "/sbin/init"
	writable := func(int) bool { return false }
	ro := func(int) bool { return true }
	ok := func(modules.Stage) error { return nil }
	execLine := `exec /sbin/init ["/sbin/init" "splash" "3"] ["PATH=/bin" "TERM=linux"]`
	for _, tc := range []struct {
		name     string
		readOnly func(int) bool
		optsErr  bool
		awaitNo  bool
		run      func(modules.Stage) error
		startErr error
		execErr  error

		wantEvents []string
		wantExec   bool
		wantRC     int
		wantStderr []string
		// wantChild: the child is a session leader writing to Stderr.
		wantChild bool
	}{
		{
			name: "writable root", readOnly: writable, run: ok,
			wantEvents: []string{"options /r", "await /r", "run boot", "start /usr/bin/earlyinit late --stage final --root /r", execLine},
			wantExec:   true, wantChild: true,
		},
		{
			name: "read-only root", readOnly: ro, run: ok,
			wantEvents: []string{"start /usr/bin/earlyinit late --when-writable --root /r", execLine},
			wantExec:   true, wantChild: true,
			wantStderr: []string{"earlyinit: /r is read-only: the late stages run once /sbin/init has made it writable\n"},
		},
		{
			name: "boot stage panics", readOnly: writable,
			run:        func(modules.Stage) error { panic("nil map") },
			wantEvents: []string{"options /r", "await /r", "run boot", "start /usr/bin/earlyinit late --stage final --root /r", execLine},
			wantExec:   true,
			wantStderr: []string{"earlyinit: late boot stage: panic: nil map\n"},
		},
		{
			name: "boot stage fails", readOnly: writable,
			run:        func(modules.Stage) error { return errStage },
			wantEvents: []string{"options /r", "await /r", "run boot", "start /usr/bin/earlyinit late --stage final --root /r", execLine},
			wantExec:   true,
			wantStderr: []string{"earlyinit: late boot stage: module bootcmd failed\n"},
		},
		{
			name: "no instance", readOnly: writable, awaitNo: true, run: ok,
			wantEvents: []string{"options /r", "await /r", "start /usr/bin/earlyinit late --stage final --root /r", execLine},
			wantExec:   true,
			wantStderr: []string{"earlyinit: late boot stage: no instance this boot (no VMware guest customization came, nothing else was found)\n"},
		},
		{
			name: "options fail", readOnly: writable, optsErr: true, run: ok,
			wantEvents: []string{"options /r", "start /usr/bin/earlyinit late --stage final --root /r", execLine},
			wantExec:   true,
			wantStderr: []string{"earlyinit: late boot stage: open root: no such policy\n"},
		},
		{
			name: "child does not start", readOnly: writable, run: ok, startErr: errors.New("fork/exec: ENOMEM"),
			wantEvents: []string{"options /r", "await /r", "run boot", "start /usr/bin/earlyinit late --stage final --root /r", execLine},
			wantExec:   true,
			wantStderr: []string{"earlyinit: start late --stage final --root /r: fork/exec: ENOMEM\n"},
		},
		{
			name: "exec fails", readOnly: writable, run: ok, execErr: errors.New("no such file or directory"),
			wantEvents: []string{"options /r", "await /r", "run boot", "start /usr/bin/earlyinit late --stage final --root /r", execLine},
			wantRC:     1,
			wantStderr: []string{"earlyinit: exec /sbin/init: no such file or directory\n"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var f fake
			c := f.config(tc.readOnly, tc.optsErr, tc.awaitNo, tc.run, tc.startErr, tc.execErr)
			rc, didExec := execInit(c, root, init, []string{"splash", "3"})
			if didExec != tc.wantExec {
				t.Errorf("exec'd: %v, want %v", didExec, tc.wantExec)
			}
			if !tc.wantExec && rc != tc.wantRC {
				t.Errorf("ExecInit = %d, want %d", rc, tc.wantRC)
			}
			if !slices.Equal(f.events, tc.wantEvents) {
				t.Errorf("events:\n%s\nwant:\n%s", strings.Join(f.events, "\n"), strings.Join(tc.wantEvents, "\n"))
			}
			if got, want := f.stderr.String(), strings.Join(tc.wantStderr, ""); got != want {
				t.Errorf("stderr:\n%q\nwant:\n%q", got, want)
			}
			if tc.wantChild {
				if f.child == nil {
					t.Fatal("no child started")
				}
				if f.child.Path != "/usr/bin/earlyinit" {
					t.Errorf("child's path %q, want /usr/bin/earlyinit", f.child.Path)
				}
				if a := f.child.SysProcAttr; a == nil || !a.Setsid {
					t.Errorf("child's SysProcAttr %+v: want a session of its own (Setsid)", a)
				}
				if f.child.Stdout != c.Stderr || f.child.Stderr != c.Stderr {
					t.Errorf("child's output not our stderr")
				}
			}
		})
	}
}

// TestExecInitSelf: without Self the child is this binary, os.Executable.
func TestExecInitSelf(t *testing.T) {
	var f fake
	c := f.config(func(int) bool { return false }, false, false, func(modules.Stage) error { return nil }, nil, nil)
	c.Self = ""
	if _, didExec := execInit(c, "/r", "/sbin/init", nil); !didExec {
		t.Fatal("init not exec'd")
	}
	self, err := os.Executable()
	if err != nil {
		t.Skip(err)
	}
	if f.child == nil || f.child.Path != self {
		t.Errorf("child %v, want %s", f.child, self)
	}
}

// TestWhenWritable: late --when-writable waits, polling every 200 ms of
// the clock, until the root is writable, then runs the boot and the final
// stage in that order under one deadline; after writableWait it gives up
// without running a stage.
func TestWhenWritable(t *testing.T) {
	const root = "/r"
	ok := func(modules.Stage) error { return nil }
	failing := func(bad modules.Stage) func(modules.Stage) error {
		return func(st modules.Stage) error {
			if st == bad {
				return errStage
			}
			return nil
		}
	}
	writableAfter := func(n int) func(int) bool { return func(call int) bool { return call <= n } }
	for _, tc := range []struct {
		name     string
		readOnly func(int) bool
		optsErr  bool
		run      func(modules.Stage) error

		wantRC     int
		wantSleeps int
		wantEvents []string
		wantStderr []string
	}{
		{
			name: "writable at once", readOnly: writableAfter(0), run: ok,
			wantEvents: []string{"options /r", "run boot", "run final"},
			wantStderr: []string{"earlyinit: /r is writable after 0s: running the late stages\n"},
		},
		{
			name: "writable after three polls", readOnly: writableAfter(3), run: ok,
			wantSleeps: 3,
			wantEvents: []string{"options /r", "run boot", "run final"},
			wantStderr: []string{"earlyinit: /r is writable after 600ms: running the late stages\n"},
		},
		{
			name: "boot stage fails", readOnly: writableAfter(0), run: failing(modules.StageBoot),
			wantRC:     1,
			wantEvents: []string{"options /r", "run boot", "run final"},
			wantStderr: []string{"earlyinit: /r is writable after 0s: running the late stages\n", "earlyinit: late stage boot: module bootcmd failed\n"},
		},
		{
			name: "final stage fails", readOnly: writableAfter(1), run: failing(modules.StageFinal),
			wantRC: 1, wantSleeps: 1,
			wantEvents: []string{"options /r", "run boot", "run final"},
			wantStderr: []string{"earlyinit: /r is writable after 200ms: running the late stages\n", "earlyinit: late stage final: module bootcmd failed\n"},
		},
		{
			name: "options fail", readOnly: writableAfter(0), optsErr: true, run: ok,
			wantRC:     1,
			wantEvents: []string{"options /r"},
			wantStderr: []string{"earlyinit: /r is writable after 0s: running the late stages\n", "earlyinit: late stages: open root: no such policy\n"},
		},
		{
			// 4500 polls make 15m0s, not yet past writableWait.
			name: "stays read-only", readOnly: func(int) bool { return true }, run: ok,
			wantRC: 1, wantSleeps: 4501,
			wantStderr: []string{"earlyinit: /r still read-only after 15m0s: the late stages do not run this boot\n"},
		},
		{
			name: "writable at the last poll", readOnly: writableAfter(4501), run: ok,
			wantSleeps: 4501,
			wantEvents: []string{"options /r", "run boot", "run final"},
			wantStderr: []string{"earlyinit: /r is writable after 15m0.2s: running the late stages\n"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := fake{now: time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)}
			c := f.config(tc.readOnly, tc.optsErr, false, tc.run, nil, nil)
			c.Exec = func(string, []string, []string) error { t.Fatal("WhenWritable exec'd"); return nil }
			c.Start = func(*exec.Cmd) error { t.Fatal("WhenWritable started a child"); return nil }
			if rc := c.WhenWritable(root); rc != tc.wantRC {
				t.Errorf("WhenWritable = %d, want %d", rc, tc.wantRC)
			}
			if !slices.Equal(f.events, tc.wantEvents) {
				t.Errorf("events:\n%s\nwant:\n%s", strings.Join(f.events, "\n"), strings.Join(tc.wantEvents, "\n"))
			}
			if got, want := f.stderr.String(), strings.Join(tc.wantStderr, ""); got != want {
				t.Errorf("stderr:\n%q\nwant:\n%q", got, want)
			}
			if len(f.sleeps) != tc.wantSleeps {
				t.Errorf("%d sleeps, want %d", len(f.sleeps), tc.wantSleeps)
			}
			for _, d := range f.sleeps {
				if d != 200*time.Millisecond {
					t.Fatalf("slept %s, want 200ms polls", d)
				}
			}
		})
	}
}

// TestDefaults: a zero Config is the real thing, and without Options the
// stages are not run but reported, init still exec'd.
func TestDefaults(t *testing.T) {
	c := Config{}.withDefaults()
	if c.Options == nil || c.Await == nil || c.Run == nil || c.ReadOnly == nil || c.Start == nil ||
		c.Exec == nil || c.Environ == nil || c.Self == "" || c.Now == nil || c.Sleep == nil || c.Stderr != os.Stderr {
		t.Fatalf("withDefaults left a side effect unset: %+v", c)
	}
	if _, err := c.Options("/"); !errors.Is(err, errNoOptions) {
		t.Errorf("default Options: %v, want %v", err, errNoOptions)
	}
	var b bytes.Buffer
	c = Config{Stderr: &b, ReadOnly: func(string) bool { return false },
		Start: func(*exec.Cmd) error { return nil },
		Exec:  func(string, []string, []string) error { return errors.New("not in a test") }}
	if rc := c.ExecInit("/r", "/sbin/init", nil); rc != 1 {
		t.Errorf("ExecInit = %d, want 1", rc)
	}
	if want := "earlyinit: late boot stage: handoff: Config.Options is nil\nearlyinit: exec /sbin/init: not in a test\n"; b.String() != want {
		t.Errorf("stderr %q, want %q", b.String(), want)
	}
}

// TestReadOnly: the statfs check; a directory it cannot stat is not
// read-only (the stages then run, and report their own errors).
func TestReadOnly(t *testing.T) {
	if dir := t.TempDir(); readOnly(dir) {
		t.Errorf("readOnly(%s) = true for a test's temporary directory", dir)
	}
	if readOnly("/nonexistent/earlyinit-handoff") {
		t.Error("readOnly of a missing directory = true, want false")
	}
}
