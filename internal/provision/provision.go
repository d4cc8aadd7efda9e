// Package provision is earlyinit's work on a mounted real root: find the
// instance (internal/discover), store it (the instance cache, and on a new
// instance its identity), name the NICs and write the network config
// (internal/network), and set up the late-stage runner. Each is a logged step run
// under a recover; none stops the boot.
//
// internal/boot runs it as PID 1 between mounting the root and switch_root; a
// distro initramfs hook runs the same steps on the root the distro mounted.
package provision

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/earlyinit/earlyinit/internal/datasource/none"
	"github.com/earlyinit/earlyinit/internal/discover"
	"github.com/earlyinit/earlyinit/internal/instance"
	"github.com/earlyinit/earlyinit/internal/instance/cache"
	"github.com/earlyinit/earlyinit/internal/logs"
	"github.com/earlyinit/earlyinit/internal/nic"
	"github.com/earlyinit/earlyinit/internal/paths"
	"github.com/earlyinit/earlyinit/internal/rootfs"
	"github.com/earlyinit/earlyinit/internal/selinux"
	"github.com/earlyinit/earlyinit/internal/settings"
	"golang.org/x/sys/unix"
)

// Log is where the steps report. Step runs fn as a named, timed step under a
// recover (logs.Guard), as boot.Log's does.
type Log interface {
	logs.Logger
	Step(name string, fn func() error) error
}

// Env is what a run needs: the mounted root, the settings, the log and the
// boot's coldplug hooks.
type Env struct {
	// Root is where the real root is mounted, read-write.
	Root     string
	Settings settings.Settings
	Log      Log
	// Scan runs a coldplug round between device polls; LoadFS loads the
	// modules a filesystem needs; LoadTime is the time spent loading
	// modules so far. Each may be nil.
	Scan     func()
	LoadFS   func(fstype string)
	LoadTime func() time.Duration

	// System is what discovery reads the datasources through; nil means
	// the machine's (a discover.Linux made from the fields above).
	System discover.System
	// Netlink names the NICs; nil means nic.System().
	Netlink nic.Netlinker
	// RunRoot is the directory /run is in, for the run directory's
	// instance-data; "" means "/".
	RunRoot string
	// Live is the running system (AwaitCustomization: Root and RunRoot
	// "/"): the root is not grown again, the initramfs did that.
	Live bool
}

func (env Env) netlink() nic.Netlinker {
	if env.Netlink == nil {
		return nic.System()
	}
	return env.Netlink
}

func (env Env) runRoot() string {
	if env.RunRoot == "" {
		return "/"
	}
	return env.RunRoot
}

// Result is what the caller needs for its handoff.
type Result struct {
	// Instance is set when an instance was found and stored: the late
	// stages have work.
	Instance bool
	// Mounts are the drives discovery mounted, innermost last, to
	// unmount before switch_root.
	Mounts []string
	// DeviceWait and NetWait are the time spent waiting for devices and
	// on the metadata service.
	DeviceWait, NetWait time.Duration
}

// Run finds the instance and provisions env.Root with it: the image's
// configuration, then the steps datasource, grow (the root's partition and
// filesystem), instance and network. Every failure is logged; Run always
// returns.
func Run(env Env) (res Result) {
	img := loadImageConfig(env)
	sys := env.System
	if sys == nil {
		linux := &discover.Linux{
			Root: env.Root, Timeout: env.Settings.Timeout, MetadataURL: env.Settings.MetadataURL,
			KeepNet: env.Settings.KeepNet, Log: env.Log, Scan: env.Scan, LoadFS: env.LoadFS, LoadTime: env.LoadTime,
			Netlink: env.Netlink,
		}
		defer func() {
			res.Mounts, res.DeviceWait, res.NetWait = linux.Mounts, res.DeviceWait+linux.DeviceWait, linux.NetWait
		}()
		sys = linux
	}
	var d *instance.Data
	err := env.Log.Step("datasource", func() error {
		var err error
		d, err = discover.FindWith(sys, env.Settings, discoverImage(img, env.Log), env.Log)
		return err
	})
	kept := false
	if err == nil && d != nil {
		d, kept = keepCachedInstance(env, d)
	}
	if err := logs.Guard(env.Log, "DHCP NTP servers", func() error { return writeLeaseNTP(env, sys) }); err != nil {
		env.Log.Errorf("%v", err)
	}
	// The root grows on every boot, found instance or not: growpart's
	// defaults need no user-data.
	cfg := effectiveConfig(img, d, env.Log)
	if !env.Live {
		env.Log.Step("grow", func() error { return growRoot(env, cfg) })
	}
	if !kept && !env.Live && (err != nil || d == nil || d.InstanceID == none.InstanceID) && deferToCustomization(env, sys, d) {
		// The boot stage provisions, once VMware Tools deliver the
		// customization, or with what was found here if they do not.
		res.Instance = true
		return res
	}
	if kept {
		// The late stages run for the cached instance: its record
		// back in the run directory, nothing stored or rendered anew.
		if err := env.Log.Step("instance", func() error { return restoreInstance(env) }); err == nil {
			res.Instance = true
		}
		return res
	}
	if err != nil || d == nil {
		return res
	}
	isNew := false
	var root *rootfs.Root // labelled: both steps write through it
	if err := env.Log.Step("instance", func() error {
		var err error
		if root, err = selinux.OpenRoot(env.Root, env.Log); err != nil {
			return err
		}
		isNew, err = writeInstance(env, root, d, cfg)
		return err
	}); err != nil {
		return res
	}
	res.Instance = true
	env.Log.Step("network", func() error {
		wait, err := networkStep(env, root, d, isNew, img)
		res.DeviceWait += wait
		return err
	})
	return res
}

// keepCachedInstance returns nil in place of the None instance discovery
// fell back to when the root holds an instance a real source provisioned
// (its seed ISO detached, VMware's customization package gone, a metadata
// service down): that instance stays and nothing is provisioned again,
// where None would be a new instance (new host keys, users' passwords
// set again, every per-instance module rerun). cloud-init keeps its cached
// instance then only when the datasource confirms it from the machine
// (check_instance_id: OpenStack's id is the DMI system UUID); otherwise
// its local stage drops the cache and the network stage takes None, a new
// instance, or finds nothing and runs no module
// (TestCachedInstanceAgainstCloudInit). earlyinit keeps it in every case,
// and the late stages run for it (its data/instance-id). None alone
// asked for on the command line (earlyinit.ds=none) is None, and so is
// None when None is what the root holds.
func keepCachedInstance(env Env, d *instance.Data) (*instance.Data, bool) {
	if d.InstanceID != none.InstanceID || d.Datasource != none.Source.Name || strings.EqualFold(env.Settings.Datasources, none.Source.Name) {
		return d, false
	}
	r, err := rootfs.Open(env.Root)
	if err != nil {
		return d, false
	}
	prev, err := cache.New(r).CachedID()
	if err != nil {
		env.Log.Errorf("datasource: the cached instance cannot be read (%v): None it is", err)
		return d, false
	}
	if prev == "" || prev == none.InstanceID {
		return d, false
	}
	env.Log.Printf("datasource: no source answered; instance %q (cached) stays, not provisioned again as None", prev)
	return nil, true
}

// restoreInstance puts the cached instance's record back in the run
// directory for the late stages (cache.Restore).
func restoreInstance(env Env) error {
	root, err := rootfs.Open(env.Root)
	if err != nil {
		return err
	}
	run, err := rootfs.Open(env.runRoot())
	if err != nil {
		return err
	}
	id, err := cache.New(root).Restore(run, paths.RunDir)
	if err != nil {
		return fmt.Errorf("instance %q (cached): %w", id, err)
	}
	env.Log.Printf("instance %q: kept from the cache (no source answered); the late stages run for it", id)
	return nil
}

// writeInstance writes the instance cache into the real root and, on a new
// instance, its identity (hostname, /etc/hosts, injected files; cfg, the
// effective cloud-config, may keep the host name: preserve_hostname). The
// random seed goes into the kernel pool on every boot it is present.
// root is env.Root, opened with its labels (selinux.OpenRoot).
func writeInstance(env Env, root *rootfs.Root, d *instance.Data, cfg map[string]any) (isNew bool, err error) {
	run, err := rootfs.Open(env.runRoot())
	if err != nil {
		return false, err
	}
	if len(d.RandomSeed) > 0 {
		if err := seedKernel(d.RandomSeed); err != nil {
			env.Log.Errorf("random_seed: %v", err)
		} else {
			env.Log.Printf("random_seed: %d bytes into the kernel pool", len(d.RandomSeed))
		}
	}
	c := cache.New(root)
	prev, err := c.CachedID()
	if err != nil {
		return false, fmt.Errorf("read cached instance id: %w", err)
	}
	isNew, err = c.IsNew(d)
	if err != nil {
		return false, err
	}
	// One batch for the step: the cache, then (after data/instance-id)
	// a new instance's identity, written with one flush for all.
	b := rootfs.NewBatch()
	defer b.Abort()
	if err := c.Stage(b, d, cache.StoreOptions{Run: run, RunDir: paths.RunDir, Sys: sysInfo(env.Root)}); err != nil {
		return isNew, fmt.Errorf("instance cache: %w", err)
	}
	if err := c.CloudInitErr(); err != nil {
		env.Log.Errorf("instance %q: %v: cloud-init's CLI and a later cloud-init boot do not see this boot", d.InstanceID, err)
	}
	// A host name or an injected file that cannot be applied is that
	// one thing's error: the instance is stored, its network and late
	// stages still run.
	var applyErr error
	if isNew {
		applyErr = stageNewInstance(env, b, root, d, cfg)
	}
	if err := b.Commit(); err != nil {
		if !c.Stored(b) {
			return isNew, fmt.Errorf("instance cache: %w", err)
		}
		applyErr = errors.Join(applyErr, err)
	}
	if !isNew {
		env.Log.Printf("instance %q: same as last boot", d.InstanceID)
		return false, nil
	}
	if prev == "" {
		env.Log.Printf("instance %q: first boot", d.InstanceID)
	} else {
		env.Log.Printf("instance %q: new instance (was %q)", d.InstanceID, prev)
	}
	if applyErr != nil {
		env.Log.Errorf("instance %q: %v; the rest of the instance is applied", d.InstanceID, applyErr)
	}
	return true, nil
}

func seedKernel(seed []byte) error {
	f, err := os.OpenFile("/dev/urandom", os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	err = cache.SeedRandom(f, seed)
	return errors.Join(err, f.Close())
}

// sysInfo describes the real root's OS and the kernel for instance-data.
func sysInfo(root string) instance.SysInfo {
	var si instance.SysInfo
	for _, p := range []string{"/etc/os-release", "/usr/lib/os-release"} {
		if raw, err := os.ReadFile(root + p); err == nil {
			si = instance.OSRelease(raw)
			break
		}
	}
	var u unix.Utsname
	if unix.Uname(&u) == nil {
		si.KernelRelease = unix.ByteSliceToString(u.Release[:])
	}
	si.Machine = "x86_64"
	return si
}
