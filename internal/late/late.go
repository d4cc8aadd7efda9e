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
	"time"

	"github.com/earlyinit/earlyinit/internal/httpget"
	"github.com/earlyinit/earlyinit/internal/imagecfg"
	"github.com/earlyinit/earlyinit/internal/modules"
	"github.com/earlyinit/earlyinit/internal/modules/core"
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
