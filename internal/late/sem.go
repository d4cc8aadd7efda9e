package late

import (
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/earlyinit/earlyinit/internal/instance"
	"github.com/earlyinit/earlyinit/internal/modules"
	"github.com/earlyinit/earlyinit/internal/paths"
	"github.com/earlyinit/earlyinit/internal/rootfs"
)

// semDir holds the semaphores of "once" modules.
const semDir = paths.CacheDir + "/sem"

// semPath is the semaphore of module at frequency f for instance iid:
// instances/<iid>/sem/<module> per instance, sem/<module>.once once, ""
// for always (no semaphore).
func semPath(iid, module string, f modules.Frequency) string {
	switch f {
	case modules.PerInstance:
		return paths.InstancesDir + "/" + instance.InstanceDirName(iid) + "/sem/" + module
	case modules.Once:
		return semDir + "/" + module + ".once"
	}
	return ""
}

// stateDir is where module keeps per-item markers (scripts already run)
// at frequency f: next to its semaphore, "" for always.
func stateDir(iid, module string, f modules.Frequency) string {
	if p := semPath(iid, module, f); p != "" {
		return p + ".d"
	}
	return ""
}

// hasRun tells whether module's semaphore exists: earlyinit's, or
// cloud-init's (cloudSemPath) for an instance cloud-init provisioned.
func hasRun(r *rootfs.Root, iid, module string, f modules.Frequency) bool {
	p := semPath(iid, module, f)
	return p != "" && r.Exists(p) || cloudInitRan(r, iid, module, f)
}

// cloudInitRan tells whether cloud-init's semaphore of module exists.
func cloudInitRan(r *rootfs.Root, iid, module string, f modules.Frequency) bool {
	p := cloudSemPath(iid, module, f)
	return p != "" && r.Exists(p)
}

// cloudSemName is the name of cloud-init's semaphore of earlyinit's
// module: "config_" and cloud-init's module name (config/modules.py runs
// a module as "config-<name>", helpers.canon_sem_name makes "-" "_");
// power_state is cloud-init's power_state_change. "" for a module
// cloud-init does not have (post_password).
func cloudSemName(module string) string {
	m := modules.Module{Name: module}
	if m.EarlyinitOnly() {
		return ""
	}
	if module == "power_state" {
		module = "power_state_change"
	}
	return "config_" + strings.ReplaceAll(module, "-", "_")
}

// cloudSemPath is cloud-init's semaphore of module at frequency f for
// instance iid, where helpers.Runners and FileSemaphores put it:
// instances/<iid>/sem/config_<module> per instance,
// sem/config_<module>.once once, "" for always (no semaphore) or a module
// cloud-init does not have.
func cloudSemPath(iid, module string, f modules.Frequency) string {
	name := cloudSemName(module)
	if name == "" {
		return ""
	}
	switch f {
	case modules.PerInstance:
		return paths.CloudInstancesDir + "/" + instance.InstanceDirName(iid) + "/sem/" + name
	case modules.Once:
		return paths.CloudSemDir + "/" + name + "." + string(modules.Once)
	}
	return ""
}

// markCloudInit writes cloud-init's semaphore of module, as cloud-init's
// FileSemaphores does ("<pid>: <time>"), so that a cloud-init booted later
// on the same instance does not run again what earlyinit ran.
func markCloudInit(r *rootfs.Root, iid, module string, f modules.Frequency, now time.Time) error {
	p := cloudSemPath(iid, module, f)
	if p == "" {
		return nil
	}
	t := strconv.FormatFloat(float64(now.UnixNano())/1e9, 'f', -1, 64)
	return r.WriteFile(p, []byte(strconv.Itoa(os.Getpid())+": "+t+"\n"), 0o644, 0, 0)
}

// markRun writes module's semaphore: the time it ran, as cloud-init's
// "<pid>: <time>" content says when.
func markRun(r *rootfs.Root, iid, module string, f modules.Frequency, now time.Time) error {
	p := semPath(iid, module, f)
	if p == "" {
		return nil
	}
	return r.WriteFile(p, []byte(now.UTC().Format(time.RFC3339Nano)+"\n"), 0o644, 0, 0)
}
