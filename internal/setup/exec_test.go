package setup

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/earlyinit/earlyinit/internal/proc"
	"github.com/earlyinit/earlyinit/internal/proc/proctest"
)

// TestSystemExecBackgroundChild: a command that leaves a child in the
// background holding its output returns when it exits (plus
// proc.WaitDelay at most), and one that outlives its Timeout is killed
// with its group. Before, both waited for the child (30s).
func TestSystemExecBackgroundChild(t *testing.T) {
	proctest.Subreaper(t)
	for _, tc := range []struct {
		name    string
		script  string // $1: the background child's pid file
		timeout time.Duration
		out     string
		err     string // "": success
	}{
		{name: "exits", script: `sleep 30 & echo $! > "$1"; echo done`, out: "done\n"},
		{name: "hangs", script: `sleep 30 & echo started; echo $! > "$1"; sleep 30`, timeout: time.Second, out: "started\n", err: "not done after 1s, killed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pidFile := filepath.Join(t.TempDir(), "pid")
			var out bytes.Buffer
			t0 := time.Now()
			err := SystemExec{Stdout: &out, Stderr: &out, Timeout: tc.timeout}.Run([]string{"sh", "-c", tc.script, "sh", pidFile})
			took := time.Since(t0)
			pid := proctest.Pid(t, pidFile)
			proctest.KillAtCleanup(t, pid)
			if took > tc.timeout+proc.WaitDelay+proctest.Slack {
				t.Errorf("Run took %s, want at most %s", took, tc.timeout+proc.WaitDelay+proctest.Slack)
			}
			if (tc.err == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tc.err)) {
				t.Errorf("err %v, want %q", err, tc.err)
			}
			if out.String() != tc.out {
				t.Errorf("output %q, want %q", out.String(), tc.out)
			}
			if tc.err == "" && !proctest.Running(pid) {
				t.Errorf("the background child %d is not running after Run", pid)
			}
			if tc.err != "" && !proctest.Gone(pid, 5*time.Second) {
				t.Errorf("the background child %d outlived the Timeout", pid)
			}
		})
	}
}
