package late

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"strings"
	"time"

	"github.com/earlyinit/earlyinit/internal/instance"
	"github.com/earlyinit/earlyinit/internal/paths"
	"github.com/earlyinit/earlyinit/internal/rootfs"
)

// cloud-init's status and result, where cloud-init 22.4's status_wrapper
// (cloudinit/cmd/main.py) keeps them: the files in its data directory, and
// in its run directory relative symlinks to them, which are what `cloud-init
// status` reads (a link is gone after a reboot, with /run: "not run" until
// the next boot stage starts). The late stage writes them with its own
// status.json and result.json, from the same statusFile (cloudStatus), so
// that `cloud-init status [--wait] [--long]` of an installed cloud-init
// follows earlyinit's stages.
const (
	cloudStatusFile = paths.CloudDataDir + "/status.json"
	cloudResultFile = paths.CloudDataDir + "/result.json"
	cloudStatusLink = paths.CloudRunDir + "/status.json"
	cloudResultLink = paths.CloudRunDir + "/result.json"
	// cloudBootFinished is what cloud-init's final_message writes at the
	// end of every boot and its init-local stage removes at the start
	// (purge_cache); scripts wait for it.
	cloudBootFinished = paths.CloudInstanceLink + "/boot-finished"
)

// cloudStages are the stages of cloud-init's status.json, each present
// from the first write as status_wrapper makes them. earlyinit's boot
// stage is "init" (it does what init-local, init and modules-config do
// before the network is up), its final stage "modules-final".
var cloudStages = []string{"init", "init-local", "modules-config", "modules-final", "modules-init"}

// cloudStage is one stage of cloud-init's status.json: 22.4's errors,
// start and finished, and the recoverable_errors of 23.4 and later (which
// 22.4 ignores; later versions report them as "degraded").
type cloudStage struct {
	Errors            []string            `json:"errors"`
	Finished          *float64            `json:"finished"`
	RecoverableErrors map[string][]string `json:"recoverable_errors"`
	Start             *float64            `json:"start"`
}

// cloudStatus is st in cloud-init's status.json shape: v1's keys sorted as
// cloud-init writes them; "stage" is the running stage's cloud-init name.
func cloudStatus(st *statusFile) map[string]any {
	v1 := map[string]any{"datasource": cloudDatasource(st.V1.Datasource), "stage": nil}
	for _, s := range cloudStages {
		v1[s] = cloudStage{Errors: []string{}, RecoverableErrors: map[string][]string{}}
	}
	for _, s := range []struct {
		name string
		st   *StageStatus
	}{{"init", st.V1.Boot}, {"modules-final", st.V1.Final}} {
		if s.st == nil {
			continue
		}
		cs := cloudStage{Errors: s.st.Errors, Start: s.st.Start, Finished: s.st.Finished, RecoverableErrors: s.st.RecoverableErrors}
		if cs.Errors == nil {
			cs.Errors = []string{}
		}
		if cs.RecoverableErrors == nil {
			cs.RecoverableErrors = map[string][]string{}
		}
		v1[s.name] = cs
	}
	if st.V1.Stage != nil {
		switch *st.V1.Stage {
		case "boot":
			v1["stage"] = "init"
		case "final":
			v1["stage"] = "modules-final"
		}
	}
	return map[string]any{"v1": v1}
}

// cloudDatasource is status.json's datasource as cloud-init writes it,
// str() of its DataSource: the class, then what it read in brackets
// ("DataSourceNoCloud [seed-dir (/var/lib/cloud/seed/nocloud)]"), from
// earlyinit's "DataSourceNoCloud: seed-dir (...)" (instance.DatasourceString).
// `cloud-init status` shows it as the detail and takes the datasource's
// name from its first word.
func cloudDatasource(s *string) *string {
	if s == nil {
		return nil
	}
	name, sub, ok := strings.Cut(*s, ": ")
	if !ok {
		return s
	}
	v := name + " [" + sub + "]"
	return &v
}

// writeCloudStatus writes cloud-init's status.json for st and, with
// result, its result.json (the errors of every stage, as status_wrapper
// gathers them after modules-final), each with its link in cloud-init's
// run directory.
func writeCloudStatus(r *rootfs.Root, st *statusFile, result bool) error {
	cs := cloudStatus(st)
	if err := writeJSON(r, cloudStatusFile, cs); err != nil {
		return err
	}
	if err := cloudLink(r, cloudStatusFile, cloudStatusLink); err != nil {
		return err
	}
	if !result {
		return nil
	}
	errs := []string{}
	for _, s := range cloudStages {
		errs = append(errs, cs["v1"].(map[string]any)[s].(cloudStage).Errors...)
	}
	rf := map[string]any{"v1": map[string]any{"datasource": cloudDatasource(st.V1.Datasource), "errors": errs}}
	if err := writeJSON(r, cloudResultFile, rf); err != nil {
		return err
	}
	return cloudLink(r, cloudResultFile, cloudResultLink)
}

// cloudLink makes link (in cloud-init's run directory) the relative
// symlink to file cloud-init makes (os.path.relpath), unless it is.
func cloudLink(r *rootfs.Root, file, link string) error {
	target := "../.." + file
	if t, err := r.Readlink(link); err == nil && t == target {
		return nil
	}
	return r.Symlink(target, link)
}

// purgeCloudStatus removes, at the start of a boot, what cloud-init's
// init-local removes: the result of the previous boot (file and link) and
// boot-finished; status.json is rewritten right after.
func purgeCloudStatus(r *rootfs.Root) error {
	var errs []error
	for _, f := range []string{cloudResultLink, cloudResultFile, cloudBootFinished} {
		if err := r.Remove(f); err != nil && !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// copyBootFinished gives cloud-init's instance the boot-finished that
// earlyinit's final_message wrote for iid this boot, byte for byte.
func copyBootFinished(r *rootfs.Root, iid string) error {
	name := instance.InstanceDirName(iid)
	b, err := readCapped(r, paths.InstancesDir+"/"+name+"/boot-finished", maxSmallFile)
	if err != nil || b == nil {
		return err
	}
	return r.WriteFile(paths.CloudInstancesDir+"/"+name+"/boot-finished", b, 0o644, 0, 0)
}

// WaitStatus is `status [--wait]`'s reading, as cloud-init's
// handle_status_args: the status of root (Status) and, with wait, again
// every 250 ms while it is "not run" or "running". With format "tabular"
// (or ""), it writes to progress what cloud-init prints while it waits: a
// "." before each new reading, and a newline once done, before the
// caller's "status: ..." line.
func WaitStatus(root string, wait bool, format string, progress io.Writer) (StatusReport, error) {
	rep, err := Status(root)
	if !wait {
		return rep, err
	}
	dots := progress != nil && (format == "tabular" || format == "")
	for err == nil && (rep.Status == StatusNotRun || rep.Status == StatusRunning) {
		if dots {
			fmt.Fprint(progress, ".")
		}
		rep, err = Status(root)
		time.Sleep(250 * time.Millisecond)
	}
	if dots {
		fmt.Fprint(progress, "\n")
	}
	return rep, err
}
