package provision

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/earlyinit/earlyinit/internal/blockdev"
	"github.com/earlyinit/earlyinit/internal/datasource"
	"github.com/earlyinit/earlyinit/internal/datasource/none"
	"github.com/earlyinit/earlyinit/internal/datasource/ovf"
	"github.com/earlyinit/earlyinit/internal/datasource/vmware"
	"github.com/earlyinit/earlyinit/internal/discover"
	"github.com/earlyinit/earlyinit/internal/instance"
	"github.com/earlyinit/earlyinit/internal/instance/cache"
	"github.com/earlyinit/earlyinit/internal/late"
	"github.com/earlyinit/earlyinit/internal/paths"
	"github.com/earlyinit/earlyinit/internal/rootfs"
	"golang.org/x/sys/unix"
)

// IMCWaitFile, in the run directory, tells the boot stage to wait for a
// VMware guest customization: "SECONDS\n", or "SECONDS none\n" when the
// initramfs would have fallen back to None.
const IMCWaitFile = paths.RunDir + "/vmware-imc-wait"

// deferToCustomization is the initramfs's side of a VMware guest
// customization that VMware Tools have not delivered yet (ovf.Pending): on
// a VMware VM whose root has no instance yet, where discovery found
// nothing (or only None), it leaves the instance to the boot stage, which
// waits for the package once VMware Tools run (AwaitCustomization), and
// orders that stage after them. It reports whether it did.
func deferToCustomization(env Env, sys discover.System, d *instance.Data) bool {
	if d != nil && d.InstanceID != none.InstanceID {
		return false
	}
	r, ok := sys.(discover.DMIReader)
	if !ok {
		return false
	}
	info, err := r.DMI()
	if err != nil || !vmware.Platform(info) {
		return false
	}
	root, err := rootfs.Open(env.Root)
	if err != nil {
		return false
	}
	if prev, err := cache.New(root).CachedID(); err != nil || prev != "" {
		// A known instance stays (keepCachedInstance): the boot stage
		// waits only on the first boot.
		return false
	}
	wait, ok, err := ovf.Pending(datasource.DriveFS(env.Root, 0))
	if err != nil {
		env.Log.Errorf("VMware guest customization: %v", err)
		return false
	}
	if !ok {
		return false
	}
	run, err := rootfs.Open(env.runRoot())
	if err != nil {
		env.Log.Errorf("VMware guest customization: %v", err)
		return false
	}
	marker := strconv.Itoa(int(wait/time.Second)) + "\n"
	if d != nil {
		marker = strconv.Itoa(int(wait/time.Second)) + " none\n"
	}
	drop := late.VMwareToolsDropIn()
	for _, f := range []struct {
		name string
		data []byte
	}{{IMCWaitFile, []byte(marker)}, {drop.Path, drop.Data}} {
		if err := run.MkdirAll(filepath.Dir(f.name), 0o755, 0, 0); err == nil {
			err = run.WriteFile(f.name, f.data, 0o644, 0, 0)
		}
		if err != nil {
			env.Log.Errorf("VMware guest customization: %v", err)
			return false
		}
	}
	env.Log.Printf("VMware guest customization allowed, not delivered yet (VMware Tools bring it once the system runs): the boot stage waits up to %s for it, after VMware Tools start", wait)
	return true
}

// AwaitCustomization is the boot stage's wait for a VMware guest
// customization the initramfs left to it (IMCWaitFile, in the running
// system, env.Root "/"): cust.cfg is polled for as long as the marker
// says, as cloud-init's DataSourceOVF waits for it; when it comes, the
// running system is provisioned with it as the initramfs would have been
// (the ovf source alone, then the instance and network steps, before
// network-pre.target); when it does not, with None if the initramfs had
// fallen back to None, else not at all. waited is false when there was
// no marker; instance reports whether the boot stage now has an instance.
func AwaitCustomization(ctx context.Context, env Env) (waited, instance bool) {
	run, err := rootfs.Open(env.runRoot())
	if err != nil {
		return false, false
	}
	b, err := run.ReadFile(IMCWaitFile)
	if errors.Is(err, fs.ErrNotExist) {
		return false, false
	}
	if err != nil {
		env.Log.Errorf("VMware guest customization: %v", err)
		return true, false
	}
	if err := run.Remove(IMCWaitFile); err != nil {
		env.Log.Errorf("VMware guest customization: %v", err)
	}
	f := strings.Fields(string(b))
	secs, err := 0, errors.New("empty")
	if len(f) > 0 {
		secs, err = strconv.Atoi(f[0])
	}
	if err != nil || secs < 0 || secs > 3600 {
		env.Log.Errorf("VMware guest customization: %s: %q is not a wait in seconds", IMCWaitFile, b)
		return true, false
	}
	none := len(f) > 1 && f[1] == "none"
	fsys := datasource.DriveFS(env.Root, 0)
	t0 := time.Now()
	deadline := t0.Add(time.Duration(secs) * time.Second)
	path, found := ovf.HasCustomization(fsys)
	for !found && time.Now().Before(deadline) {
		select {
		case <-ctx.Done():
			deadline = time.Now()
		case <-time.After(200 * time.Millisecond):
		}
		path, found = ovf.HasCustomization(fsys)
	}
	s := env.Settings
	switch {
	case found:
		env.Log.Printf("VMware guest customization: %s after %s", path, time.Since(t0).Round(time.Millisecond))
		s.Datasources = "ovf"
	case none:
		env.Log.Printf("VMware guest customization: none within %ds: None, as the initramfs would have", secs)
		s.Datasources = "none"
	default:
		env.Log.Printf("VMware guest customization: none within %ds: no instance this boot", secs)
		return true, false
	}
	env.Settings, env.Live = s, true
	if env.System == nil {
		env.System = liveSystem{&discover.Linux{Root: env.Root, Timeout: s.Timeout, Log: env.Log, Netlink: env.Netlink}}
	}
	res := Run(env)
	for i := len(res.Mounts) - 1; i >= 0; i-- {
		if err := unix.Unmount(res.Mounts[i], unix.MNT_DETACH); err != nil {
			env.Log.Errorf("unmount %s: %v", res.Mounts[i], err)
			continue
		}
		os.Remove(res.Mounts[i])
	}
	if !res.Instance {
		env.Log.Errorf("VMware guest customization: no instance from it (see above)")
	}
	return true, res.Instance
}

// liveSystem is the running system as discovery sees it in
// AwaitCustomization: no drives are polled (the initramfs looked for
// them; the customization is in the root), so a source asked for by name
// is not waited for up to earlyinit.timeout.
type liveSystem struct{ *discover.Linux }

func (liveSystem) Drives(time.Duration, func(blockdev.Device) bool) []blockdev.Device { return nil }
