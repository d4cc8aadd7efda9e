package late

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"strings"

	"github.com/earlyinit/earlyinit/internal/imagecfg"
	"github.com/earlyinit/earlyinit/internal/instance"
	"github.com/earlyinit/earlyinit/internal/modules"
	"github.com/earlyinit/earlyinit/internal/modules/core"
	"github.com/earlyinit/earlyinit/internal/userdata"
)

// session is one run's logs and environment.
type session struct {
	opts *Options
	log  *fileLog
	out  *fileLog
	lg   *logger
	env  *core.Env
	data *instance.Data
	proc *processed
	img  *imagecfg.Config
}

func newSession(opts *Options, stage string) *session {
	s := &session{opts: opts}
	s.log = &fileLog{root: opts.Root, name: LogFile, tee: opts.Console}
	s.out = &fileLog{root: opts.Root, name: OutputLogFile}
	s.lg = &logger{w: s.log, stage: stage, now: opts.now}
	return s
}

func (s *session) logf(format string, args ...any) { s.lg.logf(format, args...) }

func (s *session) flush() error {
	return errors.Join(s.log.Flush(), s.out.Flush())
}

// load reads the instance and user-data and builds the modules' Env.
// What could not be read or decoded (user-data past its cap, a panic while
// decoding) is in problems: the stage goes on without it.
func (s *session) load(ctx context.Context, get userdata.Getter) (problems []string, err error) {
	d, probs, err := loadInstance(s.opts.Root)
	if err != nil {
		return nil, err
	}
	for _, p := range probs {
		s.logf("ERROR: %s", p)
	}
	problems = probs
	s.data = d
	img, err := s.loadImage()
	if err != nil {
		problems = append(problems, err.Error()+": the image's configuration not applied")
	}
	s.img = img
	if perr := s.guard("user-data decoding", func() error {
		s.proc = processUserData(ctx, d, includeOnce(s.opts.Root, d.InstanceID, get, s.logf), sensitiveInstanceData(s.opts.Root), img.Raw, s.logf)
		return nil
	}); perr != nil {
		// Nothing of user-data is trusted after a panic: the modules run
		// with the base configuration only.
		problems = append(problems, perr.Error()+": user-data and vendor-data not applied")
		s.proc = &processed{cfg: baseConfig(img.Raw, func(string, ...any) {})}
	}
	du := defaultUser(s.proc.cfg, img.OS)
	if s.opts.DefaultUser != nil {
		du = *s.opts.DefaultUser
	}
	s.env = &core.Env{
		Root: s.opts.Root, Cfg: s.proc.cfg, InstanceID: d.InstanceID, Data: d,
		Exec: s.opts.exec(), Log: s.logf, Output: s.out, DefaultUser: du,
		HTTP: s.opts.HTTP, Now: s.opts.Now, Uptime: s.opts.Uptime, Version: s.opts.Version,
	}
	return problems, nil
}

// runModule runs m (unless inactive or, with force false, its semaphore
// says it ran) and records the result.
func (s *session) runModule(ctx context.Context, m modules.Module, freq modules.Frequency, force bool) (res ModuleResult, inc *core.Incomplete) {
	r := s.opts.Root
	iid := s.env.InstanceID
	start := s.opts.now()
	res = ModuleResult{Name: m.Name, Frequency: string(freq), Start: *epoch(start)}
	if !m.Active(s.env.Cfg) {
		res.Status, res.Reason = ModuleSkipped, "no configuration for it"
		// cloud-init would have run it (most of its modules have no
		// activate_by_schema_keys) and kept its semaphore: a
		// cloud-init booted later on this instance must not run now
		// what this instance's first boot left alone. earlyinit's own
		// semaphore is not written: configuration given later (earlyinit
		// single) still runs it.
		if freq != modules.Always && !cloudInitRan(r, iid, m.Name, freq) {
			if err := markCloudInit(r, iid, m.Name, freq, s.opts.now()); err != nil {
				s.logf("WARNING: module %s: cloud-init's semaphore: %v", m.Name, err)
			}
		}
		return res, nil
	}
	if !force && hasRun(r, iid, m.Name, freq) {
		by := ""
		if p := semPath(iid, m.Name, freq); p == "" || !r.Exists(p) {
			by = ", by cloud-init"
		}
		res.Status, res.Reason = ModuleSkipped, "already ran ("+string(freq)+by+")"
		s.logf("module %s: already ran (%s%s)", m.Name, freq, by)
		return res, nil
	}
	s.env.StateDir = stateDir(iid, m.Name, freq)
	s.logf("module %s: running (%s)", m.Name, freq)
	err := s.guard("module "+m.Name, func() error { return m.Run(ctx, s.env) })
	res.Duration = s.opts.now().Sub(start).Seconds()
	// As in cloud-init, a module that ran is marked as run even when it
	// failed: a failing runcmd does not run again at every boot. Only a
	// script asking for it (1002, 1003) runs again.
	done := true
	switch {
	case err == nil:
		res.Status = ModuleOK
	case errors.As(err, &inc):
		res.Status, res.Reason = moduleIncomplete, inc.Reason
		if inc.Err != nil {
			res.Status, res.Error = ModuleError, inc.Err.Error()
		}
		done = !inc.Rerun
	default:
		res.Status, res.Error = ModuleError, err.Error()
	}
	if done {
		if err := markRun(r, iid, m.Name, freq, s.opts.now()); err != nil {
			res.Status, res.Error = ModuleError, err.Error()
		} else if err := markCloudInit(r, iid, m.Name, freq, s.opts.now()); err != nil {
			// earlyinit's own semaphore is written: only a cloud-init
			// booted later on this instance would run the module again.
			s.logf("WARNING: module %s: cloud-init's semaphore: %v", m.Name, err)
		}
	}
	if res.Error != "" {
		s.logf("module %s: FAILED after %.3fs: %s", m.Name, res.Duration, res.Error)
	} else {
		s.logf("module %s: %s in %.3fs %s", m.Name, res.Status, res.Duration, res.Reason)
	}
	if err := s.flush(); err != nil && res.Error == "" {
		res.Status, res.Error = ModuleError, "write logs: "+err.Error()
	}
	return res, inc
}

// guard runs f, turning a panic into an error ("what: panic: value"): one
// bad module or step must not stop the others, nor the stage. The stack,
// a few frames of it, goes to the log file only (not the console).
func (s *session) guard(what string, f func() error) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("%s: panic: %v", what, p)
			s.logf("PANIC in %s: %v (stack in %s)", what, p, LogFile)
			s.log.writeFileOnly(shortStack(debug.Stack(), maxStackFrames))
		}
	}()
	return f()
}

// maxStackFrames is how many frames of a panic's stack are logged.
const maxStackFrames = 8

// shortStack keeps, of a debug.Stack() taken in a deferred recover, the
// frames from where the panic happened: at most n of them, each "func" and
// "\tfile:line", indented.
func shortStack(stack []byte, n int) []byte {
	lines := strings.Split(strings.TrimSpace(string(stack)), "\n")
	start := 1 // after "goroutine N [running]:"
	for i := 1; i+1 < len(lines); i++ {
		if strings.HasPrefix(lines[i], "panic(") {
			start = i + 2 // the frame after panic's own
			break
		}
	}
	var b strings.Builder
	for i := start; i+1 < len(lines) && n > 0; i, n = i+2, n-1 {
		fmt.Fprintf(&b, "    %s\n    %s\n", lines[i], strings.TrimSpace(lines[i+1]))
	}
	return []byte(b.String())
}

// boothooks runs the boot stage's boothooks (paths in the root), each
// under a guard; a failure is a warning.
func (s *session) boothooks(ctx context.Context, hooks []string) []string {
	r := s.opts.Root
	var warns []string
	for _, h := range hooks {
		s.logf("running boothook %s", h)
		err := s.guard("boothook "+h, func() error {
			c := core.Cmd{Name: r.Path(h), Env: []string{"INSTANCE_ID=" + s.data.InstanceID}, Output: s.out}
			if b, err := r.ReadFile(h); err == nil && !strings.HasPrefix(string(b), "#!") {
				c.Name, c.Args = "/bin/sh", []string{r.Path(h)} // no interpreter line
			}
			_, err := s.env.Exec.Run(ctx, c)
			return err
		})
		if err != nil {
			msg := fmt.Sprintf("boothook %s: %v", h, err)
			warns = append(warns, msg)
			s.logf("WARNING: %s", msg)
		}
	}
	return warns
}
