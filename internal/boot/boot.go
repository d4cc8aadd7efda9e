// Package boot is the initramfs pipeline: earlyinit as PID 1 mounts the
// kernel's filesystems, loads modules, finds and mounts the real root, does
// its provisioning work, and switch_roots to the real init. Every step is
// timed and logged to the console and /dev/kmsg.
package boot

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"time"

	"github.com/earlyinit/earlyinit/internal/blockdev"
	"github.com/earlyinit/earlyinit/internal/kmod"
	"github.com/earlyinit/earlyinit/internal/logs"
	"github.com/earlyinit/earlyinit/internal/paths"
	"github.com/earlyinit/earlyinit/internal/provision"
	"github.com/earlyinit/earlyinit/internal/settings"
	"golang.org/x/sys/unix"
)

// Version is set by the build.
var Version = "dev"

// newRoot is where PID 1 mounts the real root.
const newRoot = "/newroot"

// Boot is one run of the pipeline.
type Boot struct {
	// root is where the real root is mounted: newRoot as PID 1, the
	// distro's mount point (Provision) in a distro initramfs.
	root  string
	Log   *Log
	Cmd   settings.Settings
	start time.Time
	cold  *kmod.Coldplug
	// private mounts (config drives...) to undo before switch_root,
	// innermost last.
	private []string
	// netWait adds up the time spent on the metadata service: DHCP,
	// carrier and HTTP waits.
	netWait time.Duration
	// deviceWait adds up the time spent polling for devices.
	deviceWait time.Duration
	// uptime is the seconds since the kernel started, when earlyinit did.
	uptime float64
	// rootMounted is set once the real root is on newRoot; readOnly when
	// it could only be mounted read-only, so nothing may be written into it.
	rootMounted, readOnly bool
}

// Main is PID 1's entry point. It returns only to report that the boot
// cannot go on; the caller then exits, which makes the kernel panic so that
// panic= reboots.
func Main() error {
	start := time.Now()
	b := &Boot{root: newRoot, start: start, uptime: bootUptime()}
	mountErr := earlyMounts()
	kmsg, _ := os.OpenFile("/dev/kmsg", os.O_WRONLY, 0)
	b.Log = newLog(os.Stdout, kmsg, start)
	b.Log.Printf("earlyinit %s starting as PID %d", Version, os.Getpid())
	if mountErr != nil {
		b.Log.Errorf("early mounts: %v", mountErr)
	}
	raw, err := os.ReadFile("/proc/cmdline")
	if err != nil {
		b.Log.Errorf("read /proc/cmdline: %v", err)
	}
	var errs []error
	b.Cmd, errs = settings.ParseCmdline(string(raw))
	b.Log.SetDebug(b.Cmd.Debug)
	for _, e := range errs {
		b.Log.Errorf("%v", e)
	}
	b.Log.Debugf("cmdline: %s", strings.TrimSpace(string(raw)))
	return b.guardedRun()
}

// guardedRun is run under a last recover: the steps have their own, so a
// panic here is in the glue between them. With the root mounted, the boot
// still goes on to the real init; without it there is nothing to hand over
// to, and Main reports why.
func (b *Boot) guardedRun() (err error) {
	defer func() {
		r := recover()
		if r == nil {
			return
		}
		b.Log.Errorf("earlyinit panicked: %v\n%s", r, logs.Stack(debug.Stack()))
		if !b.rootMounted {
			err = fmt.Errorf("panic before the root was mounted: %v", r)
			return
		}
		b.saveLog()
		init := ChooseInit(b.root, b.Cmd.Init, b.Log)
		b.Log.Printf("switch_root to %s after a panic, skipping what was left of earlyinit's work", init)
		err = switchRoot(b.root, init, os.Args[1:], b.Log)
	}()
	return b.run()
}

func (b *Boot) run() error {
	b.Log.Step("modules", b.coldplug)

	var dev blockdev.Device
	if err := b.Log.Step("root", func() error {
		var err error
		dev, err = b.mountRoot()
		return err
	}); err != nil && !b.rootMounted {
		return err
	}

	disabled := b.Cmd.Disabled
	if disabled {
		b.Log.Printf("earlyinit=disabled on the command line: only mounting the root and switch_root")
	} else if _, err := os.Lstat(filepath.Join(b.root, paths.DisabledFile)); err == nil {
		disabled = true
		b.Log.Printf("%s exists in the real root: only switch_root", paths.DisabledFile)
	}
	_ = dev
	runner := false
	if b.readOnly && !disabled {
		b.Log.Printf("the root is read-only: earlyinit writes nothing into it this boot (no instance cache, network files or late stages)")
	} else if !disabled {
		runner = b.provision()
	} else if err := markDisabled(); err != nil {
		b.Log.Errorf("%v", err)
	}

	init, args := b.chooseInit()
	rec := Record{Version: Version, Init: init, Disabled: disabled}
	execPath, execArgs := init, args
	if runner {
		execPath, execArgs = provision.InstallRunner(b.env(), init, args)
	}
	b.Log.Step("handoff", func() error { return b.prepareHandoff(rec) })
	if execPath != init {
		b.Log.Printf("switch_root to %s (through %s) after %s", init, execPath, round(time.Since(b.start)))
	} else {
		b.Log.Printf("switch_root to %s after %s", init, round(time.Since(b.start)))
	}
	b.saveLog()
	return switchRoot(b.root, execPath, execArgs, b.Log)
}

// provision does earlyinit's work in the real root (internal/provision: the
// steps datasource, instance and network). Nothing there stops the boot.
// It reports whether there is an instance for the late-stage runner.
func (b *Boot) provision() bool {
	res := provision.Run(b.env())
	b.private = append(b.private, res.Mounts...)
	b.deviceWait += res.DeviceWait
	b.netWait += res.NetWait
	return res.Instance
}

// env is what internal/provision needs from the boot.
func (b *Boot) env() provision.Env {
	return provision.Env{Root: b.root, Settings: b.Cmd, Log: b.Log, Scan: b.scan, LoadFS: b.LoadFS, LoadTime: b.loadTime}
}

// coldplug loads the modules the hardware asks for, until no new device
// shows up, within the bound.
func (b *Boot) coldplug() error {
	if err := b.startColdplug(); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), b.Cmd.Timeout)
	defer cancel()
	err := b.cold.Settle(ctx, 20*time.Millisecond)
	b.Log.Printf("loaded %d modules: %s", len(b.cold.Loaded), strings.Join(b.cold.Loaded, " "))
	return err
}

// startColdplug reads the module index and makes b.cold. The root wait
// calls it again when the modules step failed before it, so a failed or
// panicked modules step still gets the root's drivers loaded.
func (b *Boot) startColdplug() error {
	rel, err := kernelRelease()
	if err != nil {
		return err
	}
	dir := filepath.Join("lib/modules", rel)
	ix, err := kmod.ReadIndex(os.DirFS("/"), dir)
	if err != nil {
		return fmt.Errorf("module index: %w", err)
	}
	// The index has modules.dep and modules.builtin: independent modules
	// load at once, one per CPU, and a built-in or loaded one is skipped.
	b.cold = kmod.NewColdplug(ix, kmod.SysLoader{Dir: "/" + dir, Sysfs: "/sys"}, "/sys", b.Log.Debugf)
	return nil
}

// loadModules loads modules or aliases on demand, in one concurrent
// round, if coldplug is available.
func (b *Boot) loadModules(names ...string) {
	if b.cold != nil {
		if err := b.cold.Load(names...); err != nil {
			// One line: the joined errors each name their module.
			b.Log.Debugf("load %s: %s", strings.Join(names, " "), strings.ReplaceAll(err.Error(), "\n", "; "))
		}
	}
}

// fsModules are the modules a filesystem needs beyond its own (vfat needs
// code pages; the kernel would ask a modprobe we do not have).
func fsModules(fstype string) []string {
	switch fstype {
	case "vfat":
		return []string{"nls_cp437", "nls_ascii", "nls_iso8859-1", "nls_utf8"}
	case "iso9660":
		return []string{"nls_utf8"}
	}
	return nil
}

// LoadFS loads the modules filesystem type fstype needs, at once.
func (b *Boot) LoadFS(fstype string) {
	b.loadModules(append([]string{"fs-" + fstype}, fsModules(fstype)...)...)
}

func (b *Boot) mountRoot() (blockdev.Device, error) {
	req, err := newRootRequest(b.Cmd)
	if err != nil {
		return blockdev.Device{}, &rootError{Asked: fmt.Sprintf("root=%q", b.Cmd.Root), Err: err, FSTypes: knownFilesystems()}
	}
	if b.Cmd.RootDelay > 0 {
		d := min(b.Cmd.RootDelay, b.Cmd.Timeout)
		b.Log.Printf("rootdelay: waiting %s", d)
		time.Sleep(d)
	}
	t0 := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), b.Cmd.Timeout)
	defer cancel()
	loaded := b.loadTime()
	dev, seen, err := b.pollDevices(ctx, req.Spec.Match)
	b.deviceWait += time.Since(t0) - (b.loadTime() - loaded)
	if err != nil {
		return dev, &rootError{Asked: "root=" + b.Cmd.Root, Waited: time.Since(t0), Seen: seen, FSTypes: knownFilesystems(), Err: fmt.Errorf("no such device: %w", err)}
	}
	b.Log.Printf("root device %s", dev)
	types := req.FSTypes
	if len(types) == 0 && dev.FS.Type != "" {
		types = []string{dev.FS.Type}
	}
	if len(types) == 0 {
		err := fmt.Errorf("unknown filesystem on %s (%v); give rootfstype=", dev.Path, dev.ProbeErr)
		return dev, &rootError{Asked: "root=" + b.Cmd.Root, Waited: time.Since(t0), Seen: seen, FSTypes: knownFilesystems(), Err: err}
	}
	if err := os.MkdirAll(b.root, 0o755); err != nil {
		return dev, err
	}
	// Mount read-write to do our work; the requested mode is restored
	// before switch_root. With earlyinit=disabled, mount as asked at once.
	flags := req.Flags
	if b.Cmd.Disabled && req.ReadOnly {
		flags |= unix.MS_RDONLY
	}
	var errs []error
	for _, t := range types {
		b.LoadFS(t)
		err := unix.Mount(dev.Path, b.root, t, flags, req.Data)
		if err == nil {
			b.Log.Printf("mounted %s (%s) on %s", dev.Path, t, b.root)
			b.rootMounted = true
			return dev, nil
		}
		errs = append(errs, fmt.Errorf("mount -t %s %s: %w", t, dev.Path, err))
		if flags&unix.MS_RDONLY != 0 {
			continue
		}
		// A write-protected disk (EACCES/EROFS), an ext4 with a read-only
		// compat feature this kernel lacks (EINVAL), ISO9660: the root
		// may still mount read-only. Boot it, writing nothing into it.
		if rerr := unix.Mount(dev.Path, b.root, t, flags|unix.MS_RDONLY, req.Data); rerr == nil {
			b.Log.Errorf("mount -t %s %s read-write: %v; mounted it read-only instead", t, dev.Path, err)
			b.rootMounted, b.readOnly = true, true
			return dev, nil
		}
	}
	return dev, &rootError{Asked: "root=" + b.Cmd.Root, Waited: time.Since(t0), Seen: seen, FSTypes: knownFilesystems(), Err: errors.Join(errs...)}
}

// chooseInit picks init= or the first of the kernel's defaults that exists
// in the real root. args are what the kernel gave us: its init arguments.
func (b *Boot) chooseInit() (string, []string) {
	return ChooseInit(b.root, b.Cmd.Init, b.Log), os.Args[1:]
}

// DefaultInits are tried in the kernel's order when init= is not given.
var DefaultInits = []string{"/sbin/init", "/etc/init", "/bin/init", "/bin/sh"}

// ChooseInit returns init= when it is executable in root, else the first
// default that is. Symlinks are resolved inside root.
func ChooseInit(root, requested string, log *Log) string {
	cands := DefaultInits
	if requested != "" {
		cands = append([]string{requested}, DefaultInits...)
	}
	for i, c := range cands {
		if provision.Executable(root, c) {
			return c
		}
		if i == 0 && requested != "" && log != nil {
			log.Errorf("init=%s is not an executable in the real root; trying %s", requested, strings.Join(DefaultInits, ", "))
		}
	}
	return cands[0]
}

// prepareHandoff writes the boot record, unmounts private mounts and puts
// the root in the mode the command line asked for.
func (b *Boot) prepareHandoff(rec Record) error {
	var errs []error
	for i := len(b.private) - 1; i >= 0; i-- {
		if err := unix.Unmount(b.private[i], 0); err != nil {
			// Busy, or a read of a stalled drive still blocked in it:
			// detach it, so it is gone from the real system's view.
			if derr := unix.Unmount(b.private[i], unix.MNT_DETACH); derr != nil {
				errs = append(errs, fmt.Errorf("unmount %s: %w", b.private[i], err))
				continue
			}
			b.Log.Printf("detached %s (busy: %v)", b.private[i], err)
			continue
		}
		b.Log.Printf("unmounted %s", b.private[i])
	}
	rec.Steps = b.Log.Steps()
	rec.StartedUnix = float64(b.start.UnixNano()) / 1e9
	rec.Uptime = b.uptime
	rec.Total = time.Since(b.start)
	rec.DeviceWait = b.deviceWait
	rec.NetworkWait = b.netWait
	rec.ModuleLoad = b.loadTime()
	b.Log.Printf("time: total %s, module loading %s, device waits %s, metadata service %s, earlyinit's own %s",
		round(rec.Total), round(rec.ModuleLoad), round(rec.DeviceWait), round(rec.NetworkWait),
		round(rec.Total-rec.ModuleLoad-rec.DeviceWait-rec.NetworkWait))
	if err := os.MkdirAll(paths.RunDir, 0o755); err == nil {
		if err := os.WriteFile(paths.BootRecordFile, rec.Marshal(), 0o644); err != nil {
			errs = append(errs, err)
		}
	}
	unix.Sync()
	if b.Cmd.ReadOnly && !b.Cmd.Disabled && !b.readOnly {
		if err := unix.Mount("", b.root, "", unix.MS_REMOUNT|unix.MS_RDONLY, ""); err != nil {
			errs = append(errs, fmt.Errorf("remount %s read-only: %w", b.root, err))
		}
	}
	return errors.Join(errs...)
}

// loadTime is the time spent loading modules so far.
func (b *Boot) loadTime() time.Duration {
	if b.cold == nil {
		return 0
	}
	return b.cold.LoadTime
}

// bootUptime is CLOCK_BOOTTIME in seconds: the time since the kernel
// started; 0 if it cannot be read.
func bootUptime() float64 {
	var ts unix.Timespec
	if unix.ClockGettime(unix.CLOCK_BOOTTIME, &ts) != nil {
		return 0
	}
	return float64(ts.Nano()) / 1e9
}

func kernelRelease() (string, error) {
	var u unix.Utsname
	if err := unix.Uname(&u); err != nil {
		return "", fmt.Errorf("uname: %w", err)
	}
	return unix.ByteSliceToString(u.Release[:]), nil
}
