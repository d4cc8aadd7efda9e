package proc

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/earlyinit/earlyinit/internal/proc/proctest"
)

// slack is what a loaded machine may add to a bound.
const slack = proctest.Slack

// TestRunBackgroundChild: a shell that leaves a child in the background
// (which holds its stdout, stderr or stdin) returns as soon as the shell
// exits plus at most WaitDelay, with the shell's status and output, and
// the child keeps running. Before proc, each case waited for the child
// (30s): exec read the pipes until their last holder closed them.
func TestRunBackgroundChild(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		script string // $1 is the file the background child's pid goes to
		stdin  []byte
		split  bool // stderr to a writer of its own
		out    string
		errOut string
		code   int // -1: success
		bg     bool
	}{
		{name: "stdout held", script: `echo before; sleep 30 & echo $! > "$1"; echo after`,
			out: "before\nafter\n", code: -1, bg: true},
		{name: "stdout and stderr held, two writers", script: `echo out; echo err >&2; sleep 30 & echo $! > "$1"`,
			split: true, out: "out\n", errOut: "err\n", code: -1, bg: true},
		{name: "failing exit, stdout held", script: `sleep 30 & echo $! > "$1"; echo bad >&2; exit 3`,
			out: "bad\n", code: 3, bg: true},
		// exec's own stdin copy is stuck behind the child (1 MiB does not
		// fit in the pipe): exec.ErrWaitDelay, reported as the success it is.
		// (fd 3: sh gives a background job /dev/null as stdin before its
		// own redirections.)
		{name: "stdin held", script: `exec 3<&0; sleep 30 <&3 3<&- & echo $! > "$1"; echo started`,
			stdin: bytes.Repeat([]byte("x"), 1<<20), out: "started\n", code: -1, bg: true},
		{name: "no background, one writer keeps the order", script: `echo a; echo b >&2; echo c`,
			out: "a\nb\nc\n", code: -1},
		{name: "no background, failing exit", script: `echo no; exit 3`,
			out: "no\n", code: 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			pidFile := filepath.Join(t.TempDir(), "pid")
			var out, errOut bytes.Buffer
			cmd := exec.CommandContext(context.Background(), "sh", "-c", tc.script, "sh", pidFile)
			cmd.Stdout, cmd.Stderr = &out, &out
			if tc.split {
				cmd.Stderr = &errOut
			}
			if tc.stdin != nil {
				cmd.Stdin = bytes.NewReader(tc.stdin)
			}
			t0 := time.Now()
			err := Run(cmd)
			took := time.Since(t0)
			var pid int
			if tc.bg {
				pid = proctest.Pid(t, pidFile)
				proctest.KillAtCleanup(t, pid)
			}
			if took > WaitDelay+slack {
				t.Errorf("Run took %s, want at most WaitDelay (%s) + %s", took, WaitDelay, slack)
			}
			switch code, ok := exitCode(err); {
			case tc.code < 0 && err != nil:
				t.Errorf("err %v, want success", err)
			case tc.code >= 0 && (!ok || code != tc.code):
				t.Errorf("err %v, want exit status %d", err, tc.code)
			}
			if out.String() != tc.out || errOut.String() != tc.errOut {
				t.Errorf("output %q, stderr %q; want %q, %q", out.String(), errOut.String(), tc.out, tc.errOut)
			}
			if tc.bg && !proctest.Running(pid) {
				t.Errorf("the background child %d is not running after Run", pid)
			}
		})
	}
}

func exitCode(err error) (int, bool) {
	var ee *exec.ExitError
	if errors.As(err, &ee) && ee.ExitCode() >= 0 {
		return ee.ExitCode(), true
	}
	return 0, false
}

// TestRunContextKillsGroup: when the context ends while the command runs,
// its whole group is killed: the shell and the child it put in the
// background, which no longer holds Run up either. Before proc only the
// shell was killed, the child ran on, and Run waited for it.
func TestRunContextKillsGroup(t *testing.T) {
	t.Parallel()
	proctest.Subreaper(t)
	for _, tc := range []struct {
		name string
		attr *syscall.SysProcAttr
	}{
		{name: "own group"},
		{name: "own session", attr: &syscall.SysProcAttr{Setsid: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			pidFile := filepath.Join(t.TempDir(), "pid")
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			var out bytes.Buffer
			cmd := exec.CommandContext(ctx, "sh", "-c", `sleep 30 & echo started; echo $! > "$1"; sleep 30`, "sh", pidFile)
			cmd.Stdout, cmd.Stderr = &out, &out
			cmd.SysProcAttr = tc.attr
			done := make(chan error, 1)
			go func() { done <- Run(cmd) }()
			pid := proctest.Pid(t, pidFile)
			proctest.KillAtCleanup(t, pid)
			t0 := time.Now()
			cancel()
			var err error
			select {
			case err = <-done:
			case <-time.After(WaitDelay + 10*time.Second):
				t.Fatalf("Run did not return %s after its context ended", WaitDelay+10*time.Second)
			}
			if took := time.Since(t0); took > WaitDelay+slack {
				t.Errorf("Run returned %s after its context ended, want at most %s", took, WaitDelay+slack)
			}
			if err == nil {
				t.Errorf("Run succeeded; want the kill reported")
			}
			if !proctest.Gone(pid, 5*time.Second) {
				t.Errorf("the background child %d outlived its command's context", pid)
			}
			if out.String() != "started\n" {
				t.Errorf("output %q", out.String())
			}
		})
	}
}

// TestRunLateOutput: what a background child writes after Run has returned
// reaches no writer (the caller owns its buffer again), and the child is
// not killed by SIGPIPE for writing it: the pipe is still read. With
// exec's WaitDelay alone the pipe is closed and the child dies.
func TestRunLateOutput(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	pidFile, goOn, wrote := filepath.Join(dir, "pid"), filepath.Join(dir, "go-on"), filepath.Join(dir, "wrote")
	var out bytes.Buffer
	cmd := exec.Command("sh", "-c", `echo first
(while [ ! -e "$2" ]; do sleep 0.05; done; echo late; echo later >&2; : > "$3"; exec sleep 30) &
echo $! > "$1"`, "sh", pidFile, goOn, wrote)
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := Run(cmd); err != nil {
		t.Fatal(err)
	}
	pid := proctest.Pid(t, pidFile)
	proctest.KillAtCleanup(t, pid)
	if err := os.WriteFile(goOn, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(slack)
	for _, err := os.Stat(wrote); err != nil && time.Now().Before(deadline); _, err = os.Stat(wrote) {
		time.Sleep(20 * time.Millisecond)
	}
	time.Sleep(100 * time.Millisecond) // its exec of sleep
	if !proctest.Running(pid) {
		t.Errorf("the background child %d died writing after Run returned", pid)
	}
	if got := out.String(); got != "first\n" {
		t.Errorf("output %q, want only what came before Run returned", got)
	}
}

// failingWriter takes n writes, then fails.
type failingWriter struct{ n int }

var errFull = errors.New("full")

func (w *failingWriter) Write(p []byte) (int, error) {
	if w.n <= 0 {
		return 0, errFull
	}
	w.n--
	return len(p), nil
}

// TestRunWriterFails: a writer that fails stops the copy and closes the
// pipe, so a command printing without end dies of SIGPIPE, as under
// exec's own copy (the VMware tools' output cap counts on it); the
// writer's error is reported when the command exits 0.
func TestRunWriterFails(t *testing.T) {
	t.Parallel()
	cmd := exec.Command("sh", "-c", `while :; do echo y || exit 1; done`)
	cmd.Stdout = &failingWriter{n: 1}
	done := make(chan error, 1)
	go func() { done <- Run(cmd) }()
	select {
	case err := <-done:
		if err == nil {
			t.Error("Run succeeded with a failing writer")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("a command writing to a failed writer still runs after 10s")
	}

	cmd = exec.Command("sh", "-c", `echo a; sleep 0.2; echo b`)
	cmd.Stdout = &failingWriter{n: 1}
	if err := Run(cmd); !errors.Is(err, errFull) {
		t.Errorf("exit 0 after a failed write: err %v, want %v", err, errFull)
	}
}

// TestRunGroupLeader: the command leads a process group of its own, with
// and without attributes of the caller's (kept), and with Setsid.
func TestRunGroupLeader(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		attr *syscall.SysProcAttr
		root bool
	}{
		{name: "no attributes"},
		{name: "setsid", attr: &syscall.SysProcAttr{Setsid: true}},
		{name: "chroot", attr: &syscall.SysProcAttr{Chroot: "/"}, root: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.root && os.Geteuid() != 0 {
				t.Skip("chroot needs root")
			}
			var out bytes.Buffer
			cmd := exec.Command("sh", "-c", `read -r pid comm state ppid pgrp sid rest < /proc/$$/stat; echo $$ $pgrp $sid`)
			cmd.Stdout = &out
			cmd.SysProcAttr = tc.attr
			if err := Run(cmd); err != nil {
				t.Fatal(err)
			}
			f := strings.Fields(out.String())
			if len(f) != 3 || f[0] != f[1] {
				t.Fatalf("pid pgrp sid %q: want the command its group's leader", out.String())
			}
			if sid := f[2]; (sid == f[0]) != (tc.attr != nil && tc.attr.Setsid) {
				t.Errorf("pid pgrp sid %q: session leader only with Setsid", out.String())
			}
			if tc.root && cmd.SysProcAttr.Chroot != "/" {
				t.Errorf("the caller's Chroot was lost: %+v", cmd.SysProcAttr)
			}
		})
	}
}

// TestPrepare: what Prepare sets and keeps.
func TestPrepare(t *testing.T) {
	plain := exec.Command("true")
	Prepare(plain)
	if plain.Cancel != nil {
		t.Error("Prepare gave exec.Command's command a Cancel (Start refuses it)")
	}
	if !plain.SysProcAttr.Setpgid || plain.WaitDelay != WaitDelay {
		t.Errorf("Setpgid %v, WaitDelay %s", plain.SysProcAttr.Setpgid, plain.WaitDelay)
	}
	own := exec.CommandContext(context.Background(), "true")
	own.WaitDelay = time.Minute
	own.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Chroot: "/x"}
	Prepare(own)
	Prepare(own)
	if own.Cancel == nil || own.WaitDelay != time.Minute || own.SysProcAttr.Setpgid || own.SysProcAttr.Chroot != "/x" {
		t.Errorf("Cancel %v, WaitDelay %s, attributes %+v", own.Cancel != nil, own.WaitDelay, own.SysProcAttr)
	}
}

// TestRunRelaysSignals: a signal that ends earlyinit while it waits for a
// command reaches the command's group too, and still ends earlyinit by
// that signal. A command in a group of its own no longer gets a
// terminal's Ctrl-C, which goes to the foreground group only: without the
// relay, earlyinit died and the command ran on. The waiting earlyinit is
// this test binary again (TestRelayHelper), which this test signals.
func TestRunRelaysSignals(t *testing.T) {
	t.Parallel()
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP} {
		t.Run(sig.String(), func(t *testing.T) {
			t.Parallel()
			if signal.Ignored(sig) {
				// Inherited (nohup): the helper and its command inherit
				// it too, and catch leaves an ignored signal alone, so
				// nothing here can end by it.
				t.Skipf("%v is ignored by whoever started the tests (nohup?): catch keeps that, so there is no %v to relay", sig, sig)
			}
			h := startRelayHelper(t, os.Args[0], "-test.run=^TestRelayHelper$")
			h.cmd.Process.Signal(sig)
			h.wantKilledBy(t, sig)
			h.wantTrap(t, map[syscall.Signal]string{syscall.SIGINT: "INT", syscall.SIGTERM: "TERM", syscall.SIGHUP: "HUP"}[sig])
		})
	}
}

// TestRunKeepsIgnoredHangup: a signal ignored by whoever started
// earlyinit (nohup) is left alone, as catch says: a hangup neither ends
// the helper nor reaches the command; a SIGTERM after it is relayed and
// ends both, the command's trap recording TERM. Had catch caught the
// hangup, the command (started with it at default, Go handling it) would
// have got it first and recorded HUP: the test fails so with catch's
// signal.Ignored check taken out.
func TestRunKeepsIgnoredHangup(t *testing.T) {
	t.Parallel()
	// The shell ignores SIGHUP and execs the helper, which inherits that.
	h := startRelayHelper(t, "sh", "-c", `trap "" HUP; exec "$0" -test.run='^TestRelayHelper$'`, os.Args[0])
	h.cmd.Process.Signal(syscall.SIGHUP)
	time.Sleep(200 * time.Millisecond) // a relayed hangup would have reached the command by now
	h.cmd.Process.Signal(syscall.SIGTERM)
	h.wantKilledBy(t, syscall.SIGTERM)
	h.wantTrap(t, "TERM")
}

// relayHelper is a running TestRelayHelper: the waiting earlyinit, its
// output, and the directory where its command records what it got.
type relayHelper struct {
	cmd *exec.Cmd
	out *bytes.Buffer
	dir string
}

// startRelayHelper runs argv (which execs this binary's TestRelayHelper)
// and returns once the helper's command runs.
func startRelayHelper(t *testing.T, argv ...string) *relayHelper {
	t.Helper()
	h := &relayHelper{cmd: exec.Command(argv[0], argv[1:]...), out: &bytes.Buffer{}, dir: t.TempDir()}
	h.cmd.Env = append(os.Environ(), "PROC_RELAY_HELPER="+h.dir)
	h.cmd.Stdout, h.cmd.Stderr = h.out, h.out
	if err := h.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	proctest.Pid(t, filepath.Join(h.dir, "pid")) // the command runs
	return h
}

// wantKilledBy waits (up to 20 s) for the helper to end, and wants it
// killed by sig.
func (h *relayHelper) wantKilledBy(t *testing.T, sig syscall.Signal) {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- h.cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		h.cmd.Process.Kill()
		t.Fatalf("the helper did not end 20s after %v: %s", sig, h.out.String())
	}
	if ws, ok := h.cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() || ws.Signal() != sig {
		t.Errorf("the helper ended with %v, want killed by %v; output:\n%s", h.cmd.ProcessState, sig, h.out.String())
	}
}

// wantTrap wants the command's trap to have recorded want. The trap runs
// on its own time (the helper does not wait for it): up to slack.
func (h *relayHelper) wantTrap(t *testing.T, want string) {
	t.Helper()
	got := filepath.Join(h.dir, "got")
	deadline := time.Now().Add(slack)
	b, err := os.ReadFile(got)
	for ; !strings.HasSuffix(string(b), "\n") && time.Now().Before(deadline); b, err = os.ReadFile(got) {
		time.Sleep(20 * time.Millisecond)
	}
	if strings.TrimSpace(string(b)) != want {
		t.Errorf("the command's trap recorded %q (%v), want %s", b, err, want)
	}
}

// TestRelayHelper is TestRunRelaysSignals's waiting earlyinit: it runs a
// shell that records the signal it gets, and waits.
func TestRelayHelper(t *testing.T) {
	dir := os.Getenv("PROC_RELAY_HELPER")
	if dir == "" {
		t.Skip("run by TestRunRelaysSignals")
	}
	cmd := exec.Command("sh", "-c", `for s in INT TERM HUP; do trap "echo $s > $1/got; exit 1" $s; done
echo $$ > "$1/pid"
while :; do sleep 0.05; done`, "sh", dir)
	Run(cmd)
	time.Sleep(10 * time.Second) // the relay ends this process first
	t.Fatal("still alive after the command's end")
}
