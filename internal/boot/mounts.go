package boot

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// kernelMounts are what PID 1 mounts first; switch_root moves them into the
// real root so nothing is left behind.
var kernelMounts = []struct {
	dir, fstype, data string
	flags             uintptr
}{
	{"/proc", "proc", "", unix.MS_NOSUID | unix.MS_NODEV | unix.MS_NOEXEC},
	{"/sys", "sysfs", "", unix.MS_NOSUID | unix.MS_NODEV | unix.MS_NOEXEC},
	{"/dev", "devtmpfs", "mode=0755", unix.MS_NOSUID},
	{"/run", "tmpfs", "mode=0755,size=20%", unix.MS_NOSUID | unix.MS_NODEV},
}

func earlyMounts() error {
	var errs []error
	for _, m := range kernelMounts {
		if err := os.MkdirAll(m.dir, 0o755); err != nil {
			errs = append(errs, err)
			continue
		}
		if err := unix.Mount(m.fstype, m.dir, m.fstype, m.flags, m.data); err != nil && !errors.Is(err, unix.EBUSY) {
			errs = append(errs, fmt.Errorf("mount %s on %s: %w", m.fstype, m.dir, err))
		}
	}
	return errors.Join(errs...)
}

// switchRoot moves the kernel mounts into root, makes root the new /,
// empties the initramfs to give its memory back, and execs init with the
// arguments and environment the kernel gave us. It returns only on failure.
func switchRoot(root, init string, args []string, log *Log) error {
	for _, m := range kernelMounts {
		target := filepath.Join(root, m.dir)
		if err := os.MkdirAll(target, 0o755); err != nil {
			log.Errorf("switch_root: %s: %v", target, err)
		}
		if err := unix.Mount(m.dir, target, "", unix.MS_MOVE, ""); err != nil {
			log.Errorf("switch_root: move %s to %s: %v", m.dir, target, err)
		}
	}
	if err := unix.Chdir(root); err != nil {
		return fmt.Errorf("switch_root: chdir %s: %w", root, err)
	}
	old, err := unix.Open("/", unix.O_RDONLY|unix.O_DIRECTORY, 0)
	if err != nil {
		return fmt.Errorf("switch_root: open old root: %w", err)
	}
	if err := unix.Mount(".", "/", "", unix.MS_MOVE, ""); err != nil {
		return fmt.Errorf("switch_root: move %s to /: %w", root, err)
	}
	if err := unix.Chroot("."); err != nil {
		return fmt.Errorf("switch_root: chroot: %w", err)
	}
	if err := unix.Chdir("/"); err != nil {
		return fmt.Errorf("switch_root: chdir /: %w", err)
	}
	if err := emptyDir(old); err != nil {
		log.Errorf("switch_root: freeing the initramfs: %v", err)
	}
	unix.Close(old)
	argv := append([]string{init}, args...)
	err = unix.Exec(init, argv, os.Environ())
	// init= failed at the last moment: try the defaults, like the kernel.
	for _, d := range DefaultInits {
		if d == init {
			continue
		}
		log.Errorf("exec %s: %v; trying %s", init, err, d)
		init = d
		argv[0] = d
		err = unix.Exec(d, argv, os.Environ())
	}
	return fmt.Errorf("switch_root: no init could be executed: %w", err)
}

// emptyDir deletes everything under the directory fd that is on the same
// filesystem (the initramfs), without crossing into mounts.
func emptyDir(fd int) error {
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return err
	}
	return emptyDirDev(fd, st.Dev)
}

func emptyDirDev(fd int, dev uint64) error {
	dup, err := unix.Dup(fd)
	if err != nil {
		return err
	}
	f := os.NewFile(uintptr(dup), "dir")
	names, err := f.Readdirnames(-1)
	f.Close()
	if err != nil {
		return err
	}
	var errs []error
	for _, n := range names {
		child, err := unix.Openat(fd, n, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW, 0)
		if err != nil {
			if err := unix.Unlinkat(fd, n, 0); err != nil {
				errs = append(errs, fmt.Errorf("unlink %s: %w", n, err))
			}
			continue
		}
		var st unix.Stat_t
		if err := unix.Fstat(child, &st); err == nil && st.Dev == dev {
			if err := emptyDirDev(child, dev); err != nil {
				errs = append(errs, err)
			}
			unix.Close(child)
			if err := unix.Unlinkat(fd, n, unix.AT_REMOVEDIR); err != nil {
				errs = append(errs, fmt.Errorf("rmdir %s: %w", n, err))
			}
			continue
		}
		unix.Close(child)
	}
	return errors.Join(errs...)
}
