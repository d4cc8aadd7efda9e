package late

import (
	"context"
	"errors"
	"fmt"
	"io/fs"

	"github.com/earlyinit/earlyinit/internal/imagecfg"
	"github.com/earlyinit/earlyinit/internal/instance"
	"github.com/earlyinit/earlyinit/internal/modules"
	"github.com/earlyinit/earlyinit/internal/modules/core"
	"github.com/earlyinit/earlyinit/internal/userdata"
)

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
