package boot

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime/debug"
	"time"

	"github.com/earlyinit/earlyinit/internal/logs"
	"github.com/earlyinit/earlyinit/internal/paths"
	"github.com/earlyinit/earlyinit/internal/provision"
	"github.com/earlyinit/earlyinit/internal/settings"
	"golang.org/x/sys/unix"
)

// Provision is the distro-initramfs mode (`earlyinit provision --root
// DIR`): an initramfs-tools boot script or a dracut hook runs it after the
// distro's initramfs has mounted the real root on root and before it
// switches to it. It does PID 1's provisioning work on that root (the
// image's configuration, datasource, grow, instance, network, the late
// stages' units) and its handoff (drives unmounted, the boot record, the
// log), but no module loading, root mounting or switch_root: udev and the
// distro's drivers did those, which is what makes LVM, LUKS, md-RAID and
// network roots bootable. The kernel command line is read as PID 1 reads
// it. A root mounted read-only is remounted read-write for the work and
// read-only again after. Every failure is logged; the error returned only
// says the work could not start (no such root), and the boot goes on
// either way.
func Provision(root string, console io.Writer) (err error) {
	start := time.Now()
	kmsg, _ := os.OpenFile("/dev/kmsg", os.O_WRONLY, 0)
	if kmsg != nil {
		defer kmsg.Close()
	}
	b := &Boot{root: root, start: start, uptime: bootUptime(), Log: newLog(console, kmsg, start)}
	b.Log.Printf("earlyinit %s provisioning %s from the distribution's initramfs", Version, root)
	if fi, err := os.Stat(root); err != nil || !fi.IsDir() {
		b.Log.Errorf("the root %s is not a mounted directory: %v", root, err)
		return fmt.Errorf("root %s: not a directory", root)
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
	defer func() {
		if r := recover(); r != nil {
			b.Log.Errorf("earlyinit panicked: %v\n%s", r, logs.Stack(debug.Stack()))
			b.saveLog()
			err = nil
		}
	}()
	b.provisionMounted()
	return nil
}

// provisionMounted is Provision's work once the log and settings are set.
func (b *Boot) provisionMounted() {
	if b.Cmd.Disabled {
		b.Log.Printf("earlyinit=disabled on the command line: nothing to do")
		if err := markDisabled(); err != nil {
			b.Log.Errorf("%v", err)
		}
		return
	}
	if _, err := os.Lstat(filepath.Join(b.root, paths.DisabledFile)); err == nil {
		b.Log.Printf("%s exists in the real root: nothing to do", paths.DisabledFile)
		return
	}
	wasRO, err := b.remountWritable()
	if err != nil {
		b.Log.Errorf("%v: earlyinit writes nothing into the root this boot", err)
		return
	}
	// The root goes back as the distro mounted it, whatever the
	// command line says: the distro's init remounts it per its fstab.
	b.Cmd.ReadOnly = wasRO
	init := ChooseInit(b.root, b.Cmd.Init, b.Log)
	runner := b.provision()
	if runner {
		if provision.UsesSystemd(b.root, init) {
			// initramfs-tools mounts /run noexec: the units run the
			// package's binary (InstallRunner finds it), not a copy in
			// /run.
			provision.InstallRunner(b.env(), init, nil)
		} else {
			// The distro's initramfs execs init itself: earlyinit cannot
			// stand in front of it as `late --exec`.
			b.Log.Errorf("late stages: %s is not systemd; from a distribution's initramfs earlyinit runs its late stages as systemd units only, so user-data is not applied this boot (use earlyinit's own initramfs: earlyinit setup own)", init)
		}
	}
	rec := Record{Version: Version, Init: init, Mode: "distro"}
	b.Log.Step("handoff", func() error { return b.prepareHandoff(rec) })
	b.Log.Printf("done after %s; the distribution's initramfs switches to %s", round(time.Since(b.start)), init)
	b.saveLog()
}

// remountWritable makes b.root writable when it is mounted read-only,
// keeping its other mount flags, and reports whether it was.
func (b *Boot) remountWritable() (bool, error) {
	var st unix.Statfs_t
	if err := unix.Statfs(b.root, &st); err != nil {
		return false, fmt.Errorf("statfs %s: %w", b.root, err)
	}
	if st.Flags&unix.ST_RDONLY == 0 {
		return false, nil
	}
	// statfs's ST_* bits are the MS_* bits of the same names.
	keep := uintptr(st.Flags) & (unix.MS_NOSUID | unix.MS_NODEV | unix.MS_NOEXEC | unix.MS_SYNCHRONOUS |
		unix.MS_MANDLOCK | unix.MS_NOATIME | unix.MS_NODIRATIME | unix.MS_RELATIME)
	if err := unix.Mount("", b.root, "", unix.MS_REMOUNT|keep, ""); err != nil {
		return true, fmt.Errorf("remount %s read-write: %w", b.root, err)
	}
	b.Log.Printf("remounted %s read-write for earlyinit's work (read-only again at the handoff)", b.root)
	return true, nil
}
