// Package late is earlyinit's late-stage runner: after switch_root, in
// the real system, it applies user-data with the config modules of
// internal/modules, in two stages:
//
//   - boot (earlyinit-boot.service, before network-pre.target): user-data
//     decoded and its scripts written, boothooks run, then bootcmd,
//     write_files, mounts, hostname, /etc/hosts, users and groups, SSH,
//     passwords, resolv.conf, timezone;
//   - final (earlyinit-final.service, after network-online.target):
//     #include URLs fetched, then runcmd, deferred write_files, the
//     per-once/boot/instance scripts, user scripts, phone_home,
//     final_message, and at the very end the power_state action.
//
// The configuration the modules see is user-data over vendor-data over
// the image's own (/etc/cloud/cloud.cfg and cloud.cfg.d, earlyinit.cfg:
// internal/imagecfg) over core.BaseConfig, and its module lists, when it has
// any, choose and order the modules of each stage (see image.go).
//
// Each module runs at its frequency, with semaphores in the instance
// cache (see semPath); as in cloud-init, a module that fails still writes it,
// so it does not run again; only a script's exit code 1002 or 1003 (which
// Linux delivers as 234 and 235: see modules.ExitRerun) runs it
// again next time. Every module and step runs under a recover: a panic is
// logged with a few frames of its stack, recorded as that module's or
// step's failure, and the stage goes on. Each module's result goes into /run/earlyinit/status.json
// (cloud-init's status.json shape), and /run/earlyinit/result.json marks
// the end of the final stage. The runner's log is /var/log/earlyinit.log;
// scripts' and commands' output is /var/log/earlyinit-output.log.
//
// An installed cloud-init sees the same boot (cloudinit.go): each write of
// status.json and result.json writes cloud-init's too, in its 22.4 shape
// (/var/lib/cloud/data, linked from /run/cloud-init), so `cloud-init
// status [--wait]` follows the stages; a module's semaphore is written in
// cloud-init's name as well (cloudSemPath), and cloud-init's semaphores
// count as earlyinit's (hasRun), so that neither program runs again on an
// instance what the other ran; final_message's boot-finished is copied to
// cloud-init's instance.
//
// Handoff: before switch_root the boot step copies the earlyinit binary
// to /run/earlyinit/earlyinit and writes Units into /run/systemd/system
// (InstallUnits); /run moves into the real root, so nothing in the image
// changes. Roots without systemd are entered through `earlyinit late
// --exec <init>`: boot stage, final stage in the background, exec init.
package late

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"runtime/debug"
	"strings"
	"time"

	"github.com/earlyinit/earlyinit/internal/httpget"
	"github.com/earlyinit/earlyinit/internal/modules/core"

	"github.com/earlyinit/earlyinit/internal/imagecfg"
	"github.com/earlyinit/earlyinit/internal/instance"
	"github.com/earlyinit/earlyinit/internal/modules"
	"github.com/earlyinit/earlyinit/internal/paths"
	"github.com/earlyinit/earlyinit/internal/rootfs"
	"github.com/earlyinit/earlyinit/internal/userdata"
)

// Options are what Run and RunSingle work with. Only Root is required.
type Options struct {
	// Root is the real root: "/" once switched.
	Root *rootfs.Root
	// Exec runs commands; nil means core.SystemExec.
	Exec core.Exec
	// DefaultUser; nil means the configuration's: system_info.default_user
	// of the merged configuration (user-data, vendor-data, the image's),
	// else the default of the root's distribution (see imagecfg).
	DefaultUser *core.User
	// Image is the image's own configuration (/etc/cloud/cloud.cfg,
	// cloud.cfg.d, earlyinit.cfg); nil means read it from Root.
	Image *imagecfg.Config
	// Version is earlyinit's, for final_message.
	Version string
	// Include fetches #include URLs in the final stage; nil drops them.
	Include userdata.Getter
	// HTTP posts phone_home; nil means a default bounded client.
	HTTP *httpget.Getter
	// Now and Uptime are the clocks; nil means the real ones.
	Now    func() time.Time
	Uptime func() float64
	// Action runs the power_state command or, for a script's 1001/1003,
	// the reboot ([shutdown -r now]); nil runs it through Exec.
	Action func(ctx context.Context, argv []string) error
	// Console, if set, gets a copy of the log (the journal, a console).
	Console io.Writer
	// Modules replaces modules.All() (tests).
	Modules []modules.Module
}

// RebootArgv is what a script's 1001/1003 runs.
var rebootArgv = []string{"shutdown", "-r", "now"}

// Result is how a stage went.
type Result struct {
	Stage      modules.Stage
	InstanceID string
	Modules    []ModuleResult
	Errors     []string
	Warnings   []string
	// Disabled: paths.DisabledFile exists; nothing ran.
	Disabled bool
	// Reboot: a script asked for a reboot; the runner did it.
	Reboot bool
	// Power is the power_state request, if one was made and its
	// condition held; the runner ran it.
	Power *core.PowerRequest
}

func (o *Options) now() time.Time {
	if o.Now != nil {
		return o.Now()
	}
	return time.Now()
}

func (o *Options) exec() core.Exec {
	if o.Exec != nil {
		return o.Exec
	}
	return core.SystemExec{}
}

func (o *Options) modules() []modules.Module {
	if o.Modules != nil {
		return o.Modules
	}
	return modules.All()
}

func (o *Options) action(ctx context.Context, argv []string) error {
	if o.Action != nil {
		return o.Action(ctx, argv)
	}
	_, err := o.exec().Run(ctx, core.Cmd{Name: argv[0], Args: argv[1:]})
	return err
}

func epoch(t time.Time) *float64 {
	f := float64(t.UnixNano()) / 1e9
	return &f
}

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

// Run runs stage: at boot it starts status.json afresh (a new boot), at
// final it continues it. Module errors do not stop the stage; they are in
// the Result and status.json. The error is for what stops the stage
// itself: no cached instance, status or log files that cannot be written.
// After the final stage, a power_state request whose condition holds is
// carried out; after any stage, a script's reboot request is.
//
// Run does not panic: each module and step (decoding, scripts, boothooks,
// power_state) runs under a recover that logs a few frames of the stack,
// records the failure and goes on; a panic anywhere else ends the stage
// with an error.
func Run(ctx context.Context, stage modules.Stage, opts Options) (res *Result, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = errors.Join(err, fmt.Errorf("late: stage %s: panic: %v", stage, p))
		}
	}()
	if _, err := modules.ParseStage(string(stage)); err != nil {
		return nil, err
	}
	if opts.Root == nil {
		return nil, errors.New("late: no root")
	}
	r := opts.Root
	res = &Result{Stage: stage}
	s := newSession(&opts, string(stage))
	if r.Exists(paths.DisabledFile) {
		res.Disabled = true
		s.logf("%s exists: earlyinit is disabled", paths.DisabledFile)
		return res, s.flush()
	}
	if stage == modules.StageBoot {
		// To the log file alone: the console showed these lines when the
		// initramfs wrote them.
		if b, err := r.ReadFile(paths.InitramfsLogFile); err == nil && len(b) > 0 {
			s.log.writeFileOnly(b)
		}
	}
	s.logf("earlyinit %s: stage %s starting", opts.Version, stage)

	sr := &stageRun{session: s, stage: stage, res: res}
	if err := sr.startStatus(); err != nil {
		return nil, err
	}
	if err := sr.loadUserData(ctx); err != nil {
		return res, errors.Join(err, sr.finish())
	}
	sr.scripts(ctx)
	sr.runModules(ctx)
	argv := sr.lastAction(ctx)
	ferr := sr.finish()
	if argv != nil {
		if err := sr.act(ctx, argv); err != nil {
			return res, errors.Join(ferr, err)
		}
	}
	return res, ferr
}

// stageRun is one stage of Run: its session, its Result and its part of
// status.json.
type stageRun struct {
	*session
	stage modules.Stage
	res   *Result
	st    *statusFile
	cur   *StageStatus
}

// startStatus writes status.json with the stage running: a fresh one at
// boot (and result.json of an earlier boot gone), the current one at final.
func (sr *stageRun) startStatus() error {
	r := sr.opts.Root
	st, err := readStatus(r)
	if err != nil {
		sr.logf("WARNING: %v: starting a new status", err)
	}
	if sr.stage == modules.StageBoot || st == nil {
		st = &statusFile{V1: statusV1{Boot: newStage(), Final: newStage()}}
		if err := r.Remove(ResultFile); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	var cloudErr error
	if sr.stage == modules.StageBoot {
		cloudErr = purgeCloudStatus(r)
	}
	cur := newStage()
	cur.Start = epoch(sr.opts.now())
	name := string(sr.stage)
	st.V1.Stage = &name
	setStage(st, sr.stage, cur)
	sr.st, sr.cur = st, cur
	if err := writeJSON(r, StatusFile, st); err != nil {
		return err
	}
	if err := errors.Join(cloudErr, writeCloudStatus(r, st, false)); err != nil {
		// Only cloud-init's CLI misses this stage: a warning of the stage.
		w := "cloud-init's status files: " + err.Error()
		sr.logf("WARNING: %s", w)
		sr.res.Warnings = append(sr.res.Warnings, w)
	}
	return nil
}

// finish records the Result in status.json (and, after the final stage,
// writes result.json), logs the stage's end and flushes the logs.
func (sr *stageRun) finish() error {
	r, res, st, cur := sr.opts.Root, sr.res, sr.st, sr.cur
	cur.Finished = epoch(sr.opts.now())
	st.V1.Stage = nil
	cur.Errors = append(cur.Errors, res.Errors...)
	if len(res.Warnings) > 0 {
		cur.RecoverableErrors["WARNING"] = append(cur.RecoverableErrors["WARNING"], res.Warnings...)
	}
	cur.Modules = append(cur.Modules, res.Modules...)
	err := writeJSON(r, StatusFile, st)
	final := sr.stage == modules.StageFinal
	if final {
		var rf resultFile
		rf.V1.Datasource = st.V1.Datasource
		rf.V1.Errors = append(append([]string{}, st.V1.Boot.Errors...), st.V1.Final.Errors...)
		err = errors.Join(err, writeJSON(r, ResultFile, rf))
		if sr.data != nil && ranOK(res.Modules, "final_message") {
			if cerr := copyBootFinished(r, sr.data.InstanceID); cerr != nil {
				sr.logf("WARNING: cloud-init's boot-finished: %v", cerr)
			}
		}
	}
	// cloud-init's status last: `cloud-init status --wait` returns once
	// earlyinit's own files say the stage is over.
	if cerr := writeCloudStatus(r, st, final); cerr != nil {
		sr.logf("WARNING: cloud-init's status files: %v", cerr)
	}
	sr.logf("stage %s finished: %d module(s), %d error(s), %d warning(s)", sr.stage, len(res.Modules), len(res.Errors), len(res.Warnings))
	return errors.Join(err, sr.flush())
}

// ranOK tells whether module name ran, without error, in mods.
func ranOK(mods []ModuleResult, name string) bool {
	for _, m := range mods {
		if m.Name == name && m.Status == ModuleOK {
			return true
		}
	}
	return false
}

// loadUserData loads the instance and user-data (#include URLs fetched in
// the final stage only) and records their problems, warnings and datasource.
func (sr *stageRun) loadUserData(ctx context.Context) error {
	res := sr.res
	var get userdata.Getter
	if sr.stage == modules.StageFinal {
		get = sr.opts.Include
	}
	probs, err := sr.load(ctx, get)
	if err != nil {
		res.Errors = append(res.Errors, err.Error())
		sr.logf("ERROR: %v", err)
		return err
	}
	res.Errors = append(res.Errors, probs...)
	res.InstanceID = sr.data.InstanceID
	// Decoding and schema warnings are recorded once per boot, at boot;
	// the final stage adds only what fetching #include URLs found. So are
	// the image configuration's problems; its keys and module list
	// entries earlyinit does not act on are only logged (a stock
	// cloud.cfg has many: they are not a degraded boot).
	if sr.stage == modules.StageBoot {
		for _, w := range sr.img.Warnings {
			sr.logf("WARNING: image configuration: %s", w)
			res.Warnings = append(res.Warnings, "image configuration: "+w)
		}
		for _, n := range imageNotes(sr.img) {
			sr.logf("%s", n)
		}
		res.Warnings = append(res.Warnings, sr.proc.warnings...)
	} else {
		res.Warnings = append(res.Warnings, sr.proc.includeWarnings...)
	}
	if sr.data.Datasource != "" {
		ds := instance.DatasourceString(sr.data)
		sr.st.V1.Datasource = &ds
	}
	return nil
}

// scripts writes user-data's scripts into the instance and, at boot, runs
// its boothooks.
func (sr *stageRun) scripts(ctx context.Context) {
	res := sr.res
	var hooks []string
	if err := sr.guard("user-data scripts", func() (err error) {
		hooks, err = writeScripts(sr.opts.Root, sr.data.InstanceID, sr.proc.parts)
		return err
	}); err != nil {
		res.Errors = append(res.Errors, "user-data scripts: "+err.Error())
		sr.logf("ERROR: user-data scripts: %v", err)
	}
	if sr.stage == modules.StageBoot {
		res.Warnings = append(res.Warnings, sr.boothooks(ctx, hooks)...)
	}
}

// runModules runs the stage's modules in order, each at its frequency; after
// a script's reboot request the rest are skipped.
func (sr *stageRun) runModules(ctx context.Context) {
	res := sr.res
	lists := (&imagecfg.Config{Raw: sr.proc.cfg}).ModuleLists()
	plan, notes := planModules(sr.opts.modules(), lists, sr.stage, sr.listOrigin)
	for _, n := range notes {
		sr.logf("%s", n)
	}
	for _, p := range plan {
		m := p.m
		if res.Reboot {
			res.Modules = append(res.Modules, ModuleResult{Name: m.Name, Frequency: string(p.freq), Status: ModuleSkipped, Reason: "reboot requested"})
			continue
		}
		mr, inc := sr.runModule(ctx, m, p.freq, false)
		res.Modules = append(res.Modules, mr)
		if mr.Error != "" {
			res.Errors = append(res.Errors, fmt.Sprintf("module %s: %s", m.Name, mr.Error))
		}
		if inc != nil && inc.Reboot {
			res.Reboot = true
		}
	}
}

// listOrigin says where a module list comes from: user-data (or
// vendor-data), or the image's file that sets it.
func (sr *stageRun) listOrigin(list string) string {
	if sr.proc.userKeys[list] {
		return "user-data"
	}
	if o := sr.img.Origin(list); o != "" {
		return o
	}
	return "the image's configuration"
}

// lastAction is what happens last, if anything: a reboot a script asked
// for, else, after the final stage, power_state if its condition holds.
func (sr *stageRun) lastAction(ctx context.Context) (argv []string) {
	res := sr.res
	if res.Reboot {
		return rebootArgv
	}
	if sr.stage != modules.StageFinal || sr.env.Power == nil {
		return nil
	}
	var ok bool
	err := sr.guard("power_state condition", func() (err error) {
		ok, err = sr.env.Power.Go(ctx, sr.env.Exec)
		return err
	})
	switch {
	case err != nil:
		res.Errors = append(res.Errors, err.Error())
	case !ok:
		sr.logf("power_state: condition not met: nothing done")
	default:
		res.Power = sr.env.Power
		argv = sr.env.Power.Argv
	}
	return argv
}

// act runs argv, the reboot or power action, under a guard, logging it.
func (sr *stageRun) act(ctx context.Context, argv []string) error {
	if !sr.opts.Root.Exists("/run/systemd/system") {
		// Not booted with systemd (sd_booted's test): sysvinit's shutdown.
		argv = core.ForSysvinit(argv)
	}
	sr.logf("running %v", argv)
	sr.flush()
	if err := sr.guard("power action", func() error { return sr.opts.action(ctx, argv) }); err != nil {
		sr.logf("ERROR: %v: %v", argv, err)
		sr.flush()
		return fmt.Errorf("%v: %w", argv, err)
	}
	return nil
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

func setStage(st *statusFile, stage modules.Stage, cur *StageStatus) {
	if stage == modules.StageBoot {
		st.V1.Boot = cur
	} else {
		st.V1.Final = cur
		if st.V1.Boot == nil {
			st.V1.Boot = newStage()
		}
	}
}

// RunSingle is `earlyinit single --name MOD [--frequency F]`: it runs one
// module with the cached instance's config, at its own frequency (its
// semaphore respected and written) or at freq; "always" forces a run.
// status.json is not touched; the log is.
func RunSingle(ctx context.Context, name string, freq modules.Frequency, opts Options) (ModuleResult, error) {
	m, ok := modules.Lookup(name)
	if opts.Modules != nil {
		ok = false
		for _, x := range opts.Modules {
			if x.Name == name {
				m, ok = x, true
			}
		}
	}
	if !ok {
		return ModuleResult{}, fmt.Errorf("single: no module %q", name)
	}
	if opts.Root == nil {
		return ModuleResult{}, errors.New("late: no root")
	}
	if freq == "" {
		freq = m.Frequency
	}
	s := newSession(&opts, "single")
	var get userdata.Getter
	if m.Stage == modules.StageFinal {
		get = opts.Include
	}
	if _, err := s.load(ctx, get); err != nil {
		s.logf("ERROR: %v", err)
		return ModuleResult{}, errors.Join(err, s.flush())
	}
	res, inc := s.runModule(ctx, m, freq, freq == modules.Always)
	var err error
	if res.Error != "" {
		err = fmt.Errorf("module %s: %s", m.Name, res.Error)
	}
	if s.env.Power != nil || (inc != nil && inc.Reboot) {
		s.logf("single: %s asked for a power action; not done by single", m.Name)
	}
	return res, errors.Join(err, s.flush())
}
