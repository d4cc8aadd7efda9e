// Package proctest has what tests of commands run through proc share:
// following a command's background children by pid, telling a running
// one from a dead one, and killing what a test leaves running.
package proctest

import (
	"errors"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// Slack is what a loaded machine may add to a bound on a command's run
// (a shell's start alone took seconds at a load of 14 on 2 CPUs). The
// bounds tests put on a command that leaves a child in the background
// still fail when the child is waited for: it lives 30s. Unloaded, such a
// command takes proc.WaitDelay and some 50ms.
const Slack = 5 * time.Second

// Subreaper makes the test process the reaper of its orphaned
// descendants (PR_SET_CHILD_SUBREAPER, for the whole process): a command's
// background child whose parent died is then reaped by Gone, not left a
// zombie to an init that may never reap it (kill(pid, 0) succeeds on a
// zombie).
func Subreaper(t testing.TB) {
	t.Helper()
	if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
		t.Fatalf("PR_SET_CHILD_SUBREAPER: %v", err)
	}
}

// Pid reads the pid a test's command wrote to file (`echo $! > file`),
// waiting up to 30s for it to be there.
func Pid(t testing.TB, file string) int {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		b, err := os.ReadFile(file)
		if err == nil && strings.HasSuffix(string(b), "\n") {
			pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
			if err != nil || pid <= 1 {
				t.Fatalf("%s: %q is not a pid", file, b)
			}
			return pid
		}
		if time.Now().After(deadline) {
			t.Fatalf("no pid in %s after 30s: %q %v", file, b, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// alive tells whether pid exists (kill(pid, 0) succeeds; a zombie
// counts).
func alive(pid int) bool {
	return unix.Kill(pid, 0) == nil
}

// Running tells whether pid exists and is not a zombie.
func Running(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i >= 0 && len(s) > i+2 && s[i+2] != 'Z'
}

// Gone tells whether pid is gone within d: reaped (by this process when it
// is the subreaper, else by whoever is its parent) and kill(pid, 0) fails
// with ESRCH.
func Gone(pid int, d time.Duration) bool {
	deadline := time.Now().Add(d)
	for {
		var ws unix.WaitStatus
		unix.Wait4(pid, &ws, unix.WNOHANG, nil)
		if errors.Is(unix.Kill(pid, 0), unix.ESRCH) {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// KillAtCleanup kills pid with SIGKILL when the test ends, and reaps it if
// it is this process's.
func KillAtCleanup(t testing.TB, pid int) {
	t.Cleanup(func() {
		unix.Kill(pid, unix.SIGKILL)
		Gone(pid, 2*time.Second)
	})
}
