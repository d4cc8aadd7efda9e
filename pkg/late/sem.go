package late

import (
	"time"

	"github.com/earlyinit/earlyinit/pkg/instance"
	"github.com/earlyinit/earlyinit/pkg/modules"
	"github.com/earlyinit/earlyinit/pkg/paths"
	"github.com/earlyinit/earlyinit/pkg/rootfs"
)

// SemDir holds the semaphores of "once" modules.
const SemDir = paths.CacheDir + "/sem"

// SemPath is the semaphore of module at frequency f for instance iid:
// instances/<iid>/sem/<module> per instance, sem/<module>.once once, ""
// for always (no semaphore).
func SemPath(iid, module string, f modules.Frequency) string {
	switch f {
	case modules.PerInstance:
		return paths.InstancesDir + "/" + instance.InstanceDirName(iid) + "/sem/" + module
	case modules.Once:
		return SemDir + "/" + module + ".once"
	}
	return ""
}

// stateDir is where module keeps per-item markers (scripts already run)
// at frequency f: next to its semaphore, "" for always.
func stateDir(iid, module string, f modules.Frequency) string {
	if p := SemPath(iid, module, f); p != "" {
		return p + ".d"
	}
	return ""
}

// HasRun tells whether module's semaphore exists.
func HasRun(r *rootfs.Root, iid, module string, f modules.Frequency) bool {
	p := SemPath(iid, module, f)
	return p != "" && r.Exists(p)
}

// markRun writes module's semaphore: the time it ran, as cloud-init's
// "<pid>: <time>" content says when.
func markRun(r *rootfs.Root, iid, module string, f modules.Frequency, now time.Time) error {
	p := SemPath(iid, module, f)
	if p == "" {
		return nil
	}
	return r.WriteFile(p, []byte(now.UTC().Format(time.RFC3339Nano)+"\n"), 0o644, 0, 0)
}
