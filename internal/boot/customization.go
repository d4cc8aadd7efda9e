package boot

import (
	"context"
	"os"
	"path/filepath"
	"time"

	"github.com/earlyinit/earlyinit/internal/paths"
	"github.com/earlyinit/earlyinit/internal/provision"
	"github.com/earlyinit/earlyinit/internal/rootfs"
	"github.com/earlyinit/earlyinit/internal/settings"
)

// noInstanceFile, in the run directory, says this boot has no instance
// after all: the VMware guest customization the initramfs left to the
// boot stage did not come, and there was nothing to fall back to. The late
// stages then have nothing to do.
const noInstanceFile = paths.RunDir + "/no-instance"

// AwaitCustomization is the boot stage's first step in the running system
// (root "/"): when the initramfs left the instance to a VMware guest
// customization not delivered yet (provision.IMCWaitFile), it waits for
// it and provisions the system with it (provision.AwaitCustomization),
// logging as the initramfs does, to the console and, for the boot stage's
// log, after the initramfs's own lines. It reports whether the late
// stages have an instance to work on: false only when the customization
// did not come and there is nothing else.
func AwaitCustomization(ctx context.Context, root string) bool {
	if _, err := os.Lstat(filepath.Join(root, provision.IMCWaitFile)); err != nil {
		return !exists(filepath.Join(root, noInstanceFile))
	}
	raw, _ := os.ReadFile("/proc/cmdline")
	s, _ := settings.ParseCmdline(string(raw))
	log := newLog(os.Stderr, nil, time.Now())
	log.SetDebug(s.Debug)
	_, ok := provision.AwaitCustomization(ctx, provision.Env{Root: root, RunRoot: root, Settings: s, Log: log})
	if r, err := rootfs.Open(root); err == nil {
		prev, _ := r.ReadFile(paths.InitramfsLogFile)
		r.WriteFile(paths.InitramfsLogFile, append(prev, log.Bytes()...), 0o600, 0, 0)
		if !ok {
			r.WriteFile(noInstanceFile, nil, 0o644, 0, 0)
		}
	}
	return ok
}

func exists(p string) bool {
	_, err := os.Lstat(p)
	return err == nil
}
