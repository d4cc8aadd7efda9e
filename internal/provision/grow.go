package provision

import (
	"errors"
	"fmt"
	"io/fs"
	"path"
	"strings"

	"github.com/earlyinit/earlyinit/internal/growpart"
	"github.com/earlyinit/earlyinit/internal/rootfs"
)

// growRoot grows the partitions of the mounted filesystems the
// cloud-config's growpart names (by default the root's) to the end of the
// free space on their disks, then the root filesystem to fill its device,
// as cloud-init's cc_growpart and cc_resizefs do, but in the initramfs
// and with no external tools. cfg is the merged cloud-config (the image's
// cloud.cfg, vendor-data and user-data; nil for the defaults).
// earlyinit.growpart=0 on the kernel command line turns both off. Each
// action is one log line; what cannot be grown (not a partition, not
// followed by free space) is a line too, not an error.
func growRoot(env Env, cfg map[string]any) error {
	if env.Settings.NoGrow {
		env.Log.Printf("growpart: disabled by earlyinit.growpart=0 (resizefs too)")
		return nil
	}
	gc := growpart.ParseConfig(cfg)
	for _, w := range gc.Warnings {
		env.Log.Errorf("%s", w)
	}
	for _, n := range gc.Notes {
		env.Log.Printf("%s", n)
	}
	var sys growpart.System
	var errs []error
	if gc.Grow {
		errs = append(errs, growParts(env, sys, gc))
	}
	if gc.Resize {
		errs = append(errs, resizeRoot(env, sys))
	} else {
		env.Log.Printf("resizefs: disabled (resize_rootfs is false)")
	}
	return errors.Join(errs...)
}

// growParts grows the partition under each of gc.Devices, unless the root
// has /etc/growroot-disabled and gc does not ignore it.
func growParts(env Env, sys growpart.System, gc growpart.Config) error {
	if !gc.IgnoreDisabled {
		disabled, err := hasFile(env.Root, growpart.DisabledFile)
		if err != nil {
			return fmt.Errorf("growpart: %w", err)
		}
		if disabled {
			env.Log.Printf("growpart: disabled by %s (growpart.ignore_growroot_disabled ignores it)", growpart.DisabledFile)
			return nil
		}
	}
	var errs []error
	var later []string
	for _, d := range gc.Devices {
		if path.Clean(d) != "/" {
			// Other filesystems are mounted by the real system: the
			// late stage's growpart module grows them.
			later = append(later, d)
			continue
		}
		if err := growPart(env, sys, "/", env.Root); err != nil {
			errs = append(errs, err)
		}
	}
	if len(later) > 0 {
		env.Log.Printf("growpart: %s: left to the late stage (growpart module), once mounted", strings.Join(later, ", "))
	}
	return errors.Join(errs...)
}

// growPart grows the partition holding the filesystem mounted at mount,
// the devices entry d.
func growPart(env Env, sys growpart.System, d, mount string) error {
	dev, err := sys.MountDevice(mount)
	if errors.Is(err, growpart.ErrNotMountPoint) {
		// A root that is a directory, not a filesystem of its own (a
		// chroot, a test): nothing to grow.
		env.Log.Printf("growpart: %s: skipped: %v", d, err)
		return nil
	}
	if err != nil {
		return fmt.Errorf("growpart: %s: %w", d, err)
	}
	line, err := sys.GrowDevice(dev)
	if err != nil {
		return fmt.Errorf("growpart: %s: %w", d, err)
	}
	env.Log.Printf("growpart: %s", line)
	return nil
}

// resizeRoot grows the root filesystem to fill its device.
func resizeRoot(env Env, sys growpart.System) error {
	dev, err := sys.MountDevice(env.Root)
	if errors.Is(err, growpart.ErrNotMountPoint) {
		env.Log.Printf("resizefs: /: skipped: %v", err)
		return nil
	}
	if err != nil {
		return fmt.Errorf("resizefs: /: %w", err)
	}
	line, unsupported, err := sys.ResizeMounted("/", env.Root, dev)
	if err != nil {
		return fmt.Errorf("resizefs: %w", err)
	}
	if unsupported {
		env.Log.Errorf("resizefs: %s", line)
	} else {
		env.Log.Printf("resizefs: %s", line)
	}
	return nil
}

// hasFile tells whether name is a file in the root (cloud-init's
// os.path.isfile: a link to a file counts), links resolved inside it.
func hasFile(root, name string) (bool, error) {
	r, err := rootfs.Open(root)
	if err != nil {
		return false, err
	}
	fi, err := r.Stat(name)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	switch {
	case fi.Mode().IsRegular():
		return true, nil
	case fi.Mode()&fs.ModeSymlink != 0:
		_, err := r.ReadFile(name)
		return err == nil, nil
	}
	return false, nil
}
