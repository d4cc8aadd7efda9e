// Package proc is how earlyinit runs a command, so that no command can
// hold earlyinit up: the one place that decides the process group, the
// cancellation and the waits of every command the program starts.
//
// The fault it exists for: user-data such as `bootcmd: ["mydaemon &"]`
// leaves a background child holding the shell's stdout. os/exec copies a
// non-file Stdout through a pipe and, with no WaitDelay, Wait reads that
// pipe until every holder has closed it: the daemon's lifetime. On a root
// without systemd (`earlyinit late --exec`) the real init never started.
//
// The semantics, for a command run with Run:
//
//   - It leads a process group of its own (Prepare). Whatever it starts
//     stays in that group unless it leaves on purpose (setsid, setpgid: a
//     daemon that detaches properly).
//   - When its context ends while it runs, the whole group is killed with
//     SIGKILL: the command and its background children, so nothing it
//     started keeps running past the deadline.
//   - When the command itself exits, Run returns its status. Background
//     children keep running; they hold nothing up. Their output is read
//     for at most WaitDelay after the command's exit (what the command
//     wrote before it exited is in the pipe and is read in that time), and
//     then Run returns: no write reaches the caller's writer afterwards.
//     The pipe is still read, and the output dropped, for as long as this
//     process lives, so a background child that keeps writing is not
//     killed by SIGPIPE. When this process exits (or execs, as `late
//     --exec` does), the read end closes; such a child should send its
//     output elsewhere.
//   - A signal that ends earlyinit (a terminal's Ctrl-C, which now reaches
//     only earlyinit's group; SIGTERM; hang-up) is sent on to the group of
//     the command it is waiting for, and then ends earlyinit as before.
//   - A success is a success: the command's exit status 0 is reported as
//     nil even when something it left behind still holds its stdin
//     (exec.ErrWaitDelay).
//
// A command started and never waited for (the late stages' child of
// `late --exec`, in a session of its own for the real init to reap) is not
// run through here: it is meant to outlive its starter.
package proc

import (
	"errors"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// WaitDelay is the command's exec.Cmd.WaitDelay (unless the caller set
// one), and Run's grace for output after the command has exited. It only
// has to cover scheduling: once the command has exited, all it wrote is in
// the pipe.
const WaitDelay = 2 * time.Second

// Prepare makes cmd, not yet started, a command that cannot outlive its
// context or hold its waiter (Run calls it; call it when starting cmd some
// other way):
//
//   - SysProcAttr.Setpgid with Pgid 0, added to what the caller set
//     (Chroot, Credential...): the command leads a new process group,
//     whose id is its pid. With Setsid it leads a new session, and so a
//     new group, already: Setpgid is left off (setpgid fails for a session
//     leader).
//   - Cancel, which exec.CommandContext sets (it must stay nil on a
//     command made by exec.Command: Start refuses one), kills the whole
//     group with SIGKILL, not only the command.
//   - WaitDelay, if zero, is WaitDelay: after the context has ended the
//     command is waited for at most that long, and exec's own copying of a
//     non-file Stdin is abandoned that long after the command has exited.
//
// Prepare may be called more than once.
func Prepare(cmd *exec.Cmd) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	if !cmd.SysProcAttr.Setsid {
		cmd.SysProcAttr.Setpgid = true
		cmd.SysProcAttr.Pgid = 0
	}
	if cmd.Cancel != nil {
		cmd.Cancel = func() error { return killGroup(cmd.Process) }
	}
	if cmd.WaitDelay == 0 {
		cmd.WaitDelay = WaitDelay
	}
}

// killGroup kills the group p leads.
func killGroup(p *os.Process) error { return signalGroup(p, unix.SIGKILL) }

// signalGroup sends sig to the group p leads. Once Wait has reaped p its
// handle says so and nothing is sent: the number could since name another
// group. The handle is a pidfd on Linux 5.4 and later; before, Go keeps
// the pid and marks it done before Wait reaps it (TestOnLinux310). While
// p is only a zombie its pid, and so the group's id, are still reserved.
func signalGroup(p *os.Process, sig syscall.Signal) error {
	if err := p.Signal(syscall.Signal(0)); errors.Is(err, os.ErrProcessDone) {
		return err
	}
	if err := unix.Kill(-p.Pid, sig); err != nil {
		if errors.Is(err, unix.ESRCH) {
			return os.ErrProcessDone
		}
		return err
	}
	return nil
}

// Run runs cmd, prepared with Prepare, and waits for it as cmd.Run does,
// with the package's semantics: a Stdout or Stderr that is not an
// *os.File (a buffer, a log) gets the write end of an os.Pipe of Run's
// own, drained by Run's goroutine, so exec starts no copy that Wait would
// wait for; one pipe when both are the same writer, as exec does. After
// the command has exited Run waits at most cmd.WaitDelay for the pipes'
// end of file, and returns.
//
// The error is cmd.Wait's (an *exec.ExitError for an exit status other
// than 0; a context's error when Cancel killed the group), nil for
// exec.ErrWaitDelay after a clean exit, or else the first error of
// writing the output (as exec reports its copy's): a writer that fails
// is not written to again, and the pipe's read end is closed, so the
// command's next write fails (SIGPIPE), as under exec's own copy. Once
// Run has returned, nothing writes to Stdout or Stderr: the caller may
// read a buffer it passed without a lock.
func Run(cmd *exec.Cmd) error {
	Prepare(cmd)
	stdout, stderr := cmd.Stdout, cmd.Stderr
	defer func() { cmd.Stdout, cmd.Stderr = stdout, stderr }()

	var p outPipes
	if err := p.attach(cmd, stdout, stderr); err != nil {
		return err
	}

	// Signals are caught from before the start: one that comes while the
	// command starts is relayed once it has.
	rl := catch()
	err := cmd.Start()
	// The child has its copies of the write ends (or none, if Start
	// failed): ours must go, or the read ends never see end of file.
	p.closeChildEnds()
	if err != nil {
		rl.stop()
		p.closeReadEnds()
		return err
	}
	rl.relay(cmd.Process)
	for _, d := range p.drains {
		go d.copy()
	}
	err = cmd.Wait()
	rl.stop()
	// The output's grace counts from the command's exit, as exec's own
	// wait does: when that wait ran out (a Stdin copy still blocked), so
	// did the grace.
	expired := errors.Is(err, exec.ErrWaitDelay)
	if expired && cmd.ProcessState != nil && cmd.ProcessState.Success() {
		err = nil
	}
	return collect(p.drains, cmd.WaitDelay, expired, err)
}

// outPipes are Run's pipes for a command's non-file Stdout and Stderr:
// a drain on each read end, and the write ends the child gets.
type outPipes struct {
	drains    []*drain
	childEnds []*os.File
}

// attach sets cmd's Stdout and Stderr, the writers stdout and stderr, to
// pipes where they need them: one pipe when both are the same writer. On
// an error no pipe is left open.
func (p *outPipes) attach(cmd *exec.Cmd, stdout, stderr io.Writer) error {
	if needsPipe(stdout) {
		wf, err := p.pipe(stdout)
		if err != nil {
			return err
		}
		cmd.Stdout = wf
		if same(stdout, stderr) {
			cmd.Stderr = wf
		}
	}
	if needsPipe(stderr) && !same(stdout, stderr) {
		wf, err := p.pipe(stderr)
		if err != nil {
			p.closeChildEnds()
			p.closeReadEnds()
			return err
		}
		cmd.Stderr = wf
	}
	return nil
}

// pipe makes a pipe drained into w, and returns its write end.
func (p *outPipes) pipe(w io.Writer) (*os.File, error) {
	r, wf, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	p.drains = append(p.drains, &drain{w: w, r: r, done: make(chan struct{})})
	p.childEnds = append(p.childEnds, wf)
	return wf, nil
}

// closeChildEnds closes our copies of the write ends.
func (p *outPipes) closeChildEnds() {
	for _, f := range p.childEnds {
		f.Close()
	}
	p.childEnds = nil
}

// closeReadEnds closes the read ends of drains that never started.
func (p *outPipes) closeReadEnds() {
	for _, d := range p.drains {
		d.r.Close()
	}
}

// collect waits, unless the grace already expired, at most delay in all
// for each drain's end of file, then detaches it; it returns err, or if
// that is nil the first drain's error.
func collect(drains []*drain, delay time.Duration, expired bool, err error) error {
	grace := time.NewTimer(delay)
	defer grace.Stop()
	for _, d := range drains {
		if !expired {
			select {
			case <-d.done:
			case <-grace.C:
				expired = true
			}
		}
		if derr := d.detach(); err == nil {
			err = derr
		}
	}
	return err
}

// needsPipe tells whether exec would copy w through a pipe and a
// goroutine of its own: a writer that is not a file.
func needsPipe(w io.Writer) bool {
	if w == nil {
		return false
	}
	_, isFile := w.(*os.File)
	return !isFile
}

// same is exec's test for sharing one pipe: the two writers are equal
// interface values (writers of an uncomparable type never are).
func same(a, b io.Writer) (eq bool) {
	defer func() {
		if recover() != nil {
			eq = false
		}
	}()
	return a != nil && a == b
}

// drain copies one pipe's read end into the caller's writer until end of
// file, or until it is detached: from then on it reads and drops.
type drain struct {
	w    io.Writer
	r    *os.File
	done chan struct{}

	mu       sync.Mutex
	detached bool
	err      error
}

func (d *drain) copy() {
	defer close(d.done)
	defer d.r.Close()
	buf := make([]byte, 32<<10)
	for {
		n, err := d.r.Read(buf)
		if n > 0 && !d.write(buf[:n]) {
			return
		}
		if err != nil {
			if err != io.EOF {
				d.fail(err)
			}
			return
		}
	}
}

// write gives p to the writer unless detached; false when the writer
// failed, which ends the copy.
func (d *drain) write(p []byte) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.detached {
		return true
	}
	if _, err := d.w.Write(p); err != nil {
		d.err = err
		return false
	}
	return true
}

func (d *drain) fail(err error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if !d.detached && d.err == nil {
		d.err = err
	}
}

// detach ends the writes to the writer (waiting for one under way) and
// returns the copy's error so far.
func (d *drain) detach() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.detached = true
	return d.err
}

// relayed are the signals on which earlyinit exits by default (Go's
// runtime) and which a terminal sends its foreground process group:
// Ctrl-C, Ctrl-\, hang-up; and SIGTERM, which ends the command's waiter.
var relayed = []syscall.Signal{unix.SIGINT, unix.SIGQUIT, unix.SIGHUP, unix.SIGTERM}

// catch starts keeping what a command in a group of its own would
// otherwise lose: a signal that ends earlyinit ends the command too. A
// terminal's Ctrl-C reaches only its foreground group, earlyinit's, no
// longer the command's (GNU timeout(1) relays for the same reason). While
// the command runs, such a signal is sent on to its group, and then to
// earlyinit itself again with its own handling restored: it ends as it
// did before. A signal earlyinit ignores (nohup) is left alone. Being in
// a background group also means that a command which changes the
// terminal's settings (stty), or reads from it, is stopped by SIGTTOU or
// SIGTTIN: earlyinit runs none that do (their stdin is /dev/null or a
// pipe).
func catch() *relayer {
	r := &relayer{ch: make(chan os.Signal, 1), quit: make(chan struct{}), done: make(chan struct{})}
	var sigs []os.Signal
	for _, s := range relayed {
		if !signal.Ignored(s) {
			sigs = append(sigs, s)
		}
	}
	if len(sigs) > 0 {
		signal.Notify(r.ch, sigs...)
	}
	return r
}

// relayer relays the caught signals to one command's group.
type relayer struct {
	ch         chan os.Signal
	quit, done chan struct{}
	started    bool
}

// relay sends what is caught, from now until stop, to the group p leads.
func (r *relayer) relay(p *os.Process) {
	r.started = true
	go func() {
		defer close(r.done)
		select {
		case s := <-r.ch:
			sig := s.(syscall.Signal)
			signalGroup(p, sig)
			signal.Stop(r.ch)
			unix.Kill(os.Getpid(), sig)
		case <-r.quit:
		}
	}()
}

// stop ends the catching. A signal caught but not yet relayed is raised
// again.
func (r *relayer) stop() {
	if r.started {
		close(r.quit)
		<-r.done
	}
	signal.Stop(r.ch)
	select {
	case s := <-r.ch:
		unix.Kill(os.Getpid(), s.(syscall.Signal))
	default:
	}
}
