package core

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/earlyinit/earlyinit/internal/proc"
	"github.com/earlyinit/earlyinit/internal/proc/proctest"
)

// TestSystemExecBackgroundChild: a command that leaves a child in the
// background holding its stdout (bootcmd's `mydaemon &`), captured or
// through Output as bootcmd's, returns when the command exits plus at most
// proc.WaitDelay, with its status and output, and the child runs on.
// Before, Run waited for the child (here 30s; a daemon: forever, and on a
// root without systemd the real init never started).
func TestSystemExecBackgroundChild(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		script  string // $1: the background child's pid file
		toLog   bool   // Output set, as bootcmd's
		out     string
		code    int // -1: success
		errTail string
	}{
		{name: "captured", script: `echo hi; sleep 30 & echo $! > "$1"`, out: "hi\n", code: -1},
		{name: "to the output log", script: `echo hi; sleep 30 & echo $! > "$1"`, toLog: true, out: "hi\n", code: -1},
		{name: "captured, failing", script: `sleep 30 & echo $! > "$1"; echo broken >&2; exit 3`, out: "broken\n", code: 3, errTail: "broken"},
		{name: "to the output log, failing", script: `sleep 30 & echo $! > "$1"; echo broken >&2; exit 3`, toLog: true, out: "broken\n", code: 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			pidFile := filepath.Join(t.TempDir(), "pid")
			var log bytes.Buffer
			c := Cmd{Name: "sh", Args: []string{"-c", tc.script, "sh", pidFile}}
			if tc.toLog {
				c.Output = &log
			}
			t0 := time.Now()
			out, err := SystemExec{}.Run(context.Background(), c)
			took := time.Since(t0)
			pid := proctest.Pid(t, pidFile)
			proctest.KillAtCleanup(t, pid)
			if took > proc.WaitDelay+proctest.Slack {
				t.Errorf("Run took %s, want at most %s", took, proc.WaitDelay+proctest.Slack)
			}
			code, ok := ExitCode(err)
			switch {
			case tc.code < 0 && err != nil:
				t.Errorf("err %v, want success", err)
			case tc.code >= 0 && (!ok || code != tc.code):
				t.Errorf("err %v, want exit status %d", err, tc.code)
			case tc.errTail != "" && !strings.Contains(err.Error(), tc.errTail):
				t.Errorf("err %v, want the output's tail %q in it", err, tc.errTail)
			}
			got := string(out)
			if tc.toLog {
				if len(out) != 0 {
					t.Errorf("Run returned output %q with Output set", out)
				}
				got = log.String()
			}
			if got != tc.out {
				t.Errorf("output %q, want %q", got, tc.out)
			}
			if !proctest.Running(pid) {
				t.Errorf("the background child %d is not running after Run", pid)
			}
		})
	}
}

// TestSystemExecContextKillsGroup: when ctx ends, the command and the
// child it put in the background are killed together, and Run returns.
// Before, only the command was killed, and Run waited for the child.
func TestSystemExecContextKillsGroup(t *testing.T) {
	t.Parallel()
	proctest.Subreaper(t)
	pidFile := filepath.Join(t.TempDir(), "pid")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	type result struct {
		out []byte
		err error
	}
	done := make(chan result, 1)
	go func() {
		out, err := SystemExec{}.Run(ctx, Cmd{Name: "sh", Args: []string{"-c", `sleep 30 & echo started; echo $! > "$1"; sleep 30`, "sh", pidFile}})
		done <- result{out, err}
	}()
	pid := proctest.Pid(t, pidFile)
	proctest.KillAtCleanup(t, pid)
	cancel()
	var r result
	select {
	case r = <-done:
	case <-time.After(proc.WaitDelay + 10*time.Second):
		t.Fatalf("Run did not return %s after its context ended", proc.WaitDelay+10*time.Second)
	}
	if r.err == nil || string(r.out) != "started\n" {
		t.Errorf("Run: %q %v; want the output and the kill", r.out, r.err)
	}
	if !proctest.Gone(pid, 5*time.Second) {
		t.Errorf("the background child %d outlived its command's context", pid)
	}
}
