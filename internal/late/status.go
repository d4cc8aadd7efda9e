package late

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/earlyinit/earlyinit/internal/paths"
	"github.com/earlyinit/earlyinit/internal/rootfs"
)

// Run-time files, in cloud-init's /run/cloud-init shape. The ones other
// packages write (paths.RunDisabledFile, paths.InitramfsLogFile) are in
// internal/paths.
const (
	StatusFile = paths.RunDir + "/status.json"
	ResultFile = paths.RunDir + "/result.json"
)

// ModuleResult is how one module went.
type ModuleResult struct {
	Name      string `json:"name"`
	Frequency string `json:"frequency"`
	// Status is "ok", "error", "skipped" (not active, already run, or
	// after a reboot request) or "incomplete" (a script asked to run
	// again at the next boot).
	Status   string  `json:"status"`
	Start    float64 `json:"start"`
	Duration float64 `json:"duration"`
	Error    string  `json:"error,omitempty"`
	Reason   string  `json:"reason,omitempty"`
}

// Module result statuses.
const (
	ModuleOK         = "ok"
	ModuleError      = "error"
	ModuleSkipped    = "skipped"
	moduleIncomplete = "incomplete"
)

// StageStatus is one stage in status.json, cloud-init's shape (start,
// finished, errors, recoverable_errors) plus the modules.
type StageStatus struct {
	Start             *float64            `json:"start"`
	Finished          *float64            `json:"finished"`
	Errors            []string            `json:"errors"`
	RecoverableErrors map[string][]string `json:"recoverable_errors"`
	Modules           []ModuleResult      `json:"modules"`
}

// statusV1 is status.json's "v1".
type statusV1 struct {
	Datasource *string      `json:"datasource"`
	Stage      *string      `json:"stage"`
	Boot       *StageStatus `json:"boot"`
	Final      *StageStatus `json:"final"`
}

type statusFile struct {
	V1 statusV1 `json:"v1"`
}

type resultFile struct {
	V1 struct {
		Datasource *string  `json:"datasource"`
		Errors     []string `json:"errors"`
	} `json:"v1"`
}

func newStage() *StageStatus {
	return &StageStatus{Errors: []string{}, RecoverableErrors: map[string][]string{}, Modules: []ModuleResult{}}
}

func readStatus(r *rootfs.Root) (*statusFile, error) {
	b, err := readCapped(r, StatusFile, maxInstanceData)
	if err != nil {
		return nil, err
	}
	if b == nil {
		return nil, nil
	}
	var s statusFile
	if err := json.Unmarshal(b, &s); err != nil {
		return nil, fmt.Errorf("parse %s: %w", StatusFile, err)
	}
	return &s, nil
}

func writeJSON(r *rootfs.Root, name string, v any) error {
	b, err := json.MarshalIndent(v, "", " ")
	if err != nil {
		return err
	}
	return r.WriteFile(name, append(b, '\n'), 0o644, 0, 0)
}

// Overall statuses, as cloud-init status prints them.
const (
	StatusNotRun   = "not run"
	StatusRunning  = "running"
	statusDone     = "done"
	StatusError    = "error"
	StatusDisabled = "disabled"
)

// StatusReport is what `earlyinit status` shows, cloud-init's keys.
type StatusReport struct {
	Status string `json:"status"`
	// ExtendedStatus is Status, or "degraded done"/"degraded running"
	// when there are recoverable errors (warnings).
	ExtendedStatus    string              `json:"extended_status"`
	BootStatusCode    string              `json:"boot_status_code"`
	Detail            string              `json:"detail"`
	Errors            []string            `json:"errors"`
	RecoverableErrors map[string][]string `json:"recoverable_errors"`
	LastUpdate        string              `json:"last_update"`
	Datasource        string              `json:"datasource"`
	// Stages is status.json's stages, for --long.
	Stages map[string]*StageStatus `json:"stages,omitempty"`
}

// ExitCode is `status`'s exit code: 1 on error, 2 when degraded (done or
// running with recoverable errors), 0 otherwise.
func (s StatusReport) ExitCode() int {
	switch {
	case s.Status == StatusError:
		return 1
	case strings.HasPrefix(s.ExtendedStatus, "degraded"):
		return 2
	}
	return 0
}

// Status reads the runner's status in root ("/" for the running system,
// or a mounted image), as cloud-init's get_status_details:
//
//   - disabled: paths.DisabledFile in the root, paths.RunDisabledFile, or
//     earlyinit=disabled on root's /proc/cmdline;
//   - not run: no status.json;
//   - running: status.json without result.json, a stage in progress, or
//     a stage started and not finished;
//   - error: any stage recorded errors;
//   - done otherwise, "degraded done" with recoverable errors.
func Status(root string) (StatusReport, error) {
	r, err := rootfs.Open(root)
	if err != nil {
		return StatusReport{}, err
	}
	rep := StatusReport{Status: StatusNotRun, Errors: []string{}, RecoverableErrors: map[string][]string{}, BootStatusCode: "enabled"}
	cmdline, _ := os.ReadFile(r.Path("/proc/cmdline"))
	switch {
	case r.Exists(paths.DisabledFile):
		rep.Status, rep.BootStatusCode, rep.Detail = StatusDisabled, "disabled-by-marker-file", "earlyinit disabled by "+paths.DisabledFile
	case hasWord(string(cmdline), "earlyinit=disabled") || r.Exists(paths.RunDisabledFile):
		rep.Status, rep.BootStatusCode, rep.Detail = StatusDisabled, "disabled-by-kernel-cmdline", "earlyinit disabled by kernel parameter earlyinit=disabled"
	}
	st, err := readStatus(r)
	if err != nil {
		return rep, err
	}
	if st == nil {
		rep.ExtendedStatus = rep.Status
		return rep, nil
	}
	if !r.Exists(ResultFile) {
		rep.Status = StatusRunning
	}
	if st.V1.Datasource != nil {
		rep.Datasource = *st.V1.Datasource
		rep.Detail = *st.V1.Datasource
	}
	if st.V1.Stage != nil && *st.V1.Stage != "" {
		rep.Status = StatusRunning
		rep.Detail = "Running in stage: " + *st.V1.Stage
	}
	rep.Stages = map[string]*StageStatus{}
	latest := 0.0
	for _, s := range []struct {
		name string
		st   *StageStatus
	}{{"boot", st.V1.Boot}, {"final", st.V1.Final}} {
		if s.st == nil {
			continue
		}
		rep.Stages[s.name] = s.st
		rep.Errors = append(rep.Errors, s.st.Errors...)
		for k, v := range s.st.RecoverableErrors {
			rep.RecoverableErrors[k] = append(rep.RecoverableErrors[k], v...)
		}
		start, fin := val(s.st.Start), val(s.st.Finished)
		if fin == 0 && start != 0 {
			rep.Status = StatusRunning
		}
		latest = max(latest, start, fin)
	}
	if len(rep.Errors) > 0 {
		rep.Status = StatusError
		rep.Detail = strings.Join(rep.Errors, "\n")
	} else if rep.Status == StatusNotRun && latest > 0 {
		rep.Status = statusDone
	}
	rep.ExtendedStatus = rep.Status
	n := 0
	for _, v := range rep.RecoverableErrors {
		n += len(v)
	}
	if n > 0 && (rep.Status == statusDone || rep.Status == StatusRunning) {
		rep.ExtendedStatus = "degraded " + rep.Status
	}
	if latest > 0 {
		sec := int64(latest)
		rep.LastUpdate = time.Unix(sec, 0).UTC().Format("Mon, 02 Jan 2006 15:04:05 -0700")
	}
	return rep, nil
}

func val(p *float64) float64 {
	if p == nil {
		return 0
	}
	return *p
}

func hasWord(s, w string) bool {
	for _, f := range strings.Fields(s) {
		if f == w {
			return true
		}
	}
	return false
}

// Clean is `earlyinit clean`, as cloud-init's remove_artifacts: everything
// under /var/lib/earlyinit goes except seed/ (the cache, semaphores,
// scripts, instance data), and so does everything under cloud-init's
// /var/lib/cloud except its seed/ (earlyinit keeps cloud-init's record
// and reads it as its own: left, it would name the instance still), so
// the next boot is a first boot; with logs, LogFile and OutputLogFile go
// too. /run/earlyinit and /run/cloud-init are left alone, as cloud-init
// leaves /run/cloud-init.
func Clean(root string, logs bool) error {
	r, err := rootfs.Open(root)
	if err != nil {
		return err
	}
	if logs {
		for _, f := range []string{LogFile, OutputLogFile} {
			if err := r.Remove(f); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return err
			}
		}
	}
	for _, dir := range []string{paths.CacheDir, paths.CloudDir} {
		if err := cleanDir(r, dir); err != nil {
			return err
		}
	}
	return nil
}

// cleanDir removes everything in dir but seed/.
func cleanDir(r *rootfs.Root, dir string) error {
	fi, err := r.Stat(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if !fi.IsDir() {
		return fmt.Errorf("clean: %s is not a directory", dir)
	}
	names, err := listDir(r, dir)
	if err != nil {
		return err
	}
	for _, n := range names {
		if n == "seed" {
			continue
		}
		if err := removeAll(r, dir+"/"+n); err != nil {
			return fmt.Errorf("clean: %w", err)
		}
	}
	return nil
}

// listDir lists dir in the root, sorted. rootfs has no ReadDir: the names
// come from the caller's view of the directory; every removal is then
// confined by rootfs.
func listDir(r *rootfs.Root, dir string) ([]string, error) {
	ents, err := os.ReadDir(r.Path(dir))
	if err != nil {
		return nil, fmt.Errorf("list %s: %w", dir, err)
	}
	names := make([]string, len(ents))
	for i, e := range ents {
		names[i] = e.Name()
	}
	sort.Strings(names)
	return names, nil
}

// removeAll removes name and, for a directory (not a symlink to one), its
// contents.
func removeAll(r *rootfs.Root, name string) error {
	fi, err := r.Stat(name)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if fi.IsDir() {
		names, err := listDir(r, name)
		if err != nil {
			return err
		}
		for _, n := range names {
			if err := removeAll(r, name+"/"+n); err != nil {
				return err
			}
		}
	}
	return r.Remove(name)
}
