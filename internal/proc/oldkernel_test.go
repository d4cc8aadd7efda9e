package proc

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/earlyinit/earlyinit/internal/oldkernel"
)

// pidfds counts this process's open pidfds.
func pidfds(t *testing.T) int {
	t.Helper()
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, e := range ents {
		if l, err := os.Readlink(filepath.Join("/proc/self/fd", e.Name())); err == nil && l == "anon_inode:[pidfd]" {
			n++
		}
	}
	return n
}

// TestSignalGroupAfterWait: once Wait has reaped a command, signalGroup
// sends nothing (the pid, and so the group's id, may be another's by
// then): os.ErrProcessDone. With pidfds (Linux 5.4 and later) the handle
// says so; without (before 5.3, pidfd_open ENOSYS) Go keeps the pid and
// the state Wait left in it.
func TestSignalGroupAfterWait(t *testing.T) {
	fd, err := unix.PidfdOpen(os.Getpid(), 0)
	hasPidfd := err == nil
	if hasPidfd {
		unix.Close(fd)
	}
	before := pidfds(t)
	cmd := exec.Command("sleep", "30")
	Prepare(cmd)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	if got := pidfds(t) - before; hasPidfd && got != 1 || !hasPidfd && got != 0 {
		t.Errorf("%d pidfds for the command, pidfd_open %v", got, err)
	}
	if err := signalGroup(cmd.Process, unix.SIGKILL); err != nil {
		t.Fatalf("signalGroup while it runs: %v", err)
	}
	cmd.Wait()
	if err := signalGroup(cmd.Process, unix.SIGKILL); !errors.Is(err, os.ErrProcessDone) {
		t.Errorf("signalGroup after Wait: %v, want os.ErrProcessDone", err)
	}
}

// TestOnLinux310 runs the process-group tests with Linux 3.10's system
// calls: no pidfd_open, pidfd_send_signal, clone3 or waitid(P_PIDFD)
// (5.3, 5.1, 5.3, 5.4), so Go's os/exec runs on pids, as before Go 1.23.
func TestOnLinux310(t *testing.T) {
	if !oldkernel.Run(t, oldkernel.Linux310()) {
		return
	}
	if _, err := unix.PidfdOpen(os.Getpid(), 0); !errors.Is(err, unix.ENOSYS) {
		t.Fatalf("pidfd_open under the filter: %v, want ENOSYS", err)
	}
	t.Run("SignalGroupAfterWait", TestSignalGroupAfterWait)
	t.Run("RunGroupLeader", TestRunGroupLeader)
	t.Run("RunContextKillsGroup", TestRunContextKillsGroup)
	t.Run("RunBackgroundChild", TestRunBackgroundChild)
	t.Run("RunRelaysSignals", TestRunRelaysSignals)
}
