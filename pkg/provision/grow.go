package provision

import (
	"errors"
	"fmt"
	"io/fs"
	"path"
	"path/filepath"
	"strings"

	"github.com/earlyinit/earlyinit/pkg/growpart"
	"github.com/earlyinit/earlyinit/pkg/resizefs"
	"github.com/earlyinit/earlyinit/pkg/rootfs"
	"github.com/earlyinit/earlyinit/pkg/scalar"
)

// growrootDisabled is the file that turns cc_growpart (and
// cloud-initramfs-tools' growroot) off, unless ignore_growroot_disabled.
const growrootDisabled = "/etc/growroot-disabled"

// growConfig is what the cloud-config says about growing the root:
// cc_growpart's growpart: {mode, devices, ignore_growroot_disabled} and
// cc_resizefs's resize_rootfs, with cloud-init 22.4's defaults.
type growConfig struct {
	growpart       bool     // mode is auto or growpart, not off
	devices        []string // what to grow: mount points, "/" the root
	ignoreDisabled bool     // ignore /etc/growroot-disabled
	resize         bool     // resize_rootfs: true or noblock

	// warnings are one line each for a value that is not valid (the
	// default is used) or deprecated; notes say why nothing is grown.
	warnings, notes []string
}

// parseGrowConfig reads cfg, the merged cloud-config (nil for none), as
// cloud-init 22.4's cc_growpart and cc_resizefs do. A value of the wrong
// type or an unknown word is one warning naming the key and the value's
// type, and the default is used, with one exception that keeps a user's
// "no" a no: growpart itself set to false or off (not a map) turns
// growpart off, as cloud-init, which skips a growpart that is not a map.
func parseGrowConfig(cfg map[string]any) growConfig {
	gc := growConfig{growpart: true, devices: []string{"/"}, resize: true}
	warn := func(format string, args ...any) { gc.warnings = append(gc.warnings, fmt.Sprintf(format, args...)) }

	var gp map[string]any
	switch v, ok := cfg["growpart"]; {
	case !ok:
	case isMap(v):
		gp = v.(map[string]any)
	case scalar.IsFalse(v):
		warn("growpart: want a map, got %s: read as {mode: off}", scalar.YAMLNoun(v))
		gc.growpart = false
		gc.notes = append(gc.notes, "growpart: disabled (growpart is off)")
	default:
		warn("growpart: want a map, got %s: the defaults are used ({mode: auto, devices: [/]})", scalar.YAMLNoun(v))
	}

	if v, ok := gp["mode"]; ok {
		s, isStr := v.(string)
		switch {
		case isStr && (s == "auto" || s == "growpart"):
		case scalar.IsFalse(v):
			if s != "off" {
				warn("growpart.mode: %v is deprecated, use off", v)
			}
			gc.growpart = false
			gc.notes = append(gc.notes, "growpart: disabled (growpart.mode is off)")
		case isStr && s == "gpart":
			warn("growpart.mode: gpart is FreeBSD's resizer: not supported; auto is used")
		default:
			warn("growpart.mode: want auto, growpart or off, got %s; auto is used", scalar.YAMLNoun(v))
		}
	}

	if v, ok := gp["ignore_growroot_disabled"]; ok {
		switch {
		case scalar.IsTrue(v):
			gc.ignoreDisabled = true
		case scalar.IsFalse(v):
		default:
			warn("growpart.ignore_growroot_disabled: want a boolean, got %s; false is used", scalar.YAMLNoun(v))
		}
	}

	if v, ok := gp["devices"]; ok {
		// util.get_cfg_option_list: null is an empty list, a string a
		// list of one.
		switch v := v.(type) {
		case nil:
			gc.devices = nil
		case string:
			gc.devices = []string{v}
		case []any:
			gc.devices = nil
			for i, e := range v {
				s, ok := e.(string)
				if !ok {
					warn("growpart.devices[%d]: want a string, got %s; skipped", i, scalar.YAMLNoun(e))
					continue
				}
				gc.devices = append(gc.devices, s)
			}
		default:
			warn("growpart.devices: want a list of mount points, got %s; [/] is used", scalar.YAMLNoun(v))
		}
		if gc.growpart && len(gc.devices) == 0 {
			gc.growpart = false
			gc.notes = append(gc.notes, "growpart: empty device list")
		}
	}

	if v, ok := cfg["resize_rootfs"]; ok {
		switch {
		case v == "noblock" || scalar.IsTrue(v):
			// noblock: cloud-init backgrounds the resize; an online
			// resize in the initramfs is quick, so it is the same.
		case scalar.IsFalse(v):
			gc.resize = false
		default:
			warn("resize_rootfs: want true, false or noblock, got %s; true is used", scalar.YAMLNoun(v))
		}
	}
	return gc
}

func isMap(v any) bool { _, ok := v.(map[string]any); return ok }

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
	gc := parseGrowConfig(cfg)
	for _, w := range gc.warnings {
		env.Log.Errorf("%s", w)
	}
	for _, n := range gc.notes {
		env.Log.Printf("%s", n)
	}
	var sys growpart.System
	var errs []error
	if gc.growpart {
		errs = append(errs, growParts(env, sys, gc))
	}
	if gc.resize {
		errs = append(errs, resizeRoot(env, sys))
	} else {
		env.Log.Printf("resizefs: disabled (resize_rootfs is false)")
	}
	return errors.Join(errs...)
}

// growParts grows the partition under each of gc.devices, unless the root
// has /etc/growroot-disabled and gc does not ignore it.
func growParts(env Env, sys growpart.System, gc growConfig) error {
	if !gc.ignoreDisabled {
		disabled, err := hasFile(env.Root, growrootDisabled)
		if err != nil {
			return fmt.Errorf("growpart: %w", err)
		}
		if disabled {
			env.Log.Printf("growpart: disabled by %s (growpart.ignore_growroot_disabled ignores it)", growrootDisabled)
			return nil
		}
	}
	var errs []error
	for _, d := range gc.devices {
		clean := path.Clean("/" + d)
		if !strings.HasPrefix(d, "/") || strings.HasPrefix(clean, "/dev/") {
			env.Log.Errorf("growpart: devices entry %q: not supported (earlyinit grows mount points in the root, not devices)", d)
			continue
		}
		mount := filepath.Join(env.Root, clean)
		if err := growPart(env, sys, d, mount); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// growPart grows the partition holding the filesystem mounted at mount,
// the devices entry d.
func growPart(env Env, sys growpart.System, d, mount string) error {
	dev, err := sys.MountDevice(mount)
	if errors.Is(err, growpart.ErrNotMountPoint) {
		if d == "/" {
			// A root that is a directory, not a filesystem of its own
			// (a chroot, a test): nothing to grow.
			env.Log.Printf("growpart: /: skipped: %v", err)
		} else {
			env.Log.Errorf("growpart: devices entry %q: not supported (not a mount point in the root)", d)
		}
		return nil
	}
	if err != nil {
		return fmt.Errorf("growpart: %s: %w", d, err)
	}
	p, err := sys.Partition(dev)
	if errors.Is(err, growpart.ErrNotPartition) {
		env.Log.Printf("growpart: %s: skipped: %v", d, err)
		return nil
	}
	if err != nil {
		return fmt.Errorf("growpart: %s: %w", d, err)
	}
	c, err := sys.GrowPartition(p)
	if err != nil {
		return fmt.Errorf("growpart: %s: %w", d, err)
	}
	switch {
	case c.Grown():
		how := ""
		if c.BackupMoved {
			how = " (GPT backup header moved)"
		}
		env.Log.Printf("growpart: %s grown from %d to %d sectors%s", p.Path, c.OldSize, c.NewSize, how)
	case c.KernelResized:
		env.Log.Printf("growpart: %s: the table already gives it %d sectors; the kernel was told", p.Path, c.NewSize)
	default:
		env.Log.Printf("growpart: %s (%s): nothing to grow: %s", d, p.Path, c.Reason)
	}
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
	// A root partition the kernel already sees overlapping another
	// one (a table enlarged over it by another tool or an older
	// earlyinit) is never filled: the filesystem would grow over the
	// other partition's data.
	if p, err := sys.Partition(dev); err == nil {
		if err := sys.CheckOverlap(p); err != nil {
			return fmt.Errorf("resizefs: / not resized: %w", err)
		}
	} else if !errors.Is(err, growpart.ErrNotPartition) {
		return fmt.Errorf("resizefs: / not resized: %w", err)
	}
	r, err := resizefs.Grow(env.Root, dev.Path)
	if errors.Is(err, resizefs.ErrUnsupported) {
		env.Log.Errorf("resizefs: / not resized: %v", err)
		return nil
	}
	if err != nil {
		return fmt.Errorf("resizefs: /: %w", err)
	}
	if r.Grown() {
		env.Log.Printf("resizefs: / (%s) grown from %d to %d bytes", r.FSType, r.Old, r.New)
	} else {
		env.Log.Printf("resizefs: / (%s): nothing to grow (%d bytes)", r.FSType, r.Old)
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
