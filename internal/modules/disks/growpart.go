package disks

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"strings"

	"github.com/earlyinit/earlyinit/internal/growpart"
	"github.com/earlyinit/earlyinit/internal/modules/core"
)

// growSystem is where the growpart module looks at the machine; tests
// give a fake sysfs and mount table.
var growSystem = growpart.System{}

// growpartLate is cc_growpart for the growpart.devices entries other than
// "/": the initramfs grows the root before the real init starts (and
// leaves these to this module), because they are mounted by the real
// system. As cloud-init's devent2dev, an entry under /dev names the
// device itself (links such as /dev/disk/by-label/data followed); any
// other entry is a mount point, whose device is the one mounted there.
// Each partition grows to the end of the free space after it, checked as
// the root's (internal/growpart: never over another partition); beyond
// cloud-init, which grows only the partition, a mounted filesystem is
// then grown online to fill it, as resize_rootfs does for the root.
// growpart.mode off and /etc/growroot-disabled turn it off; it runs at
// every boot, as cloud-init's.
func Growpart(_ context.Context, e *core.Env) error {
	gc := growpart.ParseConfig(e.Cfg)
	var others []string
	for _, d := range gc.Devices {
		if path.Clean(d) != "/" {
			others = append(others, d)
		}
	}
	if !gc.Grow || len(others) == 0 {
		return nil
	}
	for _, w := range gc.Warnings {
		e.Logf("growpart: %s", w)
	}
	if !gc.IgnoreDisabled {
		if _, err := e.Root.Stat(growpart.DisabledFile); err == nil {
			e.Logf("growpart: disabled by %s (growpart.ignore_growroot_disabled ignores it)", growpart.DisabledFile)
			return nil
		} else if !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("growpart: %w", err)
		}
	}
	var errs []string
	for _, d := range others {
		if err := growEntry(e, d); err != nil {
			errs = append(errs, err.Error())
		}
	}
	if len(errs) > 0 {
		return errors.New(strings.Join(errs, "; "))
	}
	return nil
}

// growEntry grows what devices entry d names.
func growEntry(e *core.Env, d string) error {
	if !strings.HasPrefix(d, "/") || path.Clean(d) != d {
		return fmt.Errorf("growpart.devices %q: want an absolute path (a mount point or a /dev path)", d)
	}
	var dev growpart.Device
	var err error
	mount := ""
	if strings.HasPrefix(d, "/dev/") {
		dev, err = growSystem.NodeDevice(e.Root.Path(d))
	} else {
		mount = e.Root.Path(d)
		dev, err = growSystem.MountDevice(mount)
		if errors.Is(err, growpart.ErrNotMountPoint) {
			return fmt.Errorf("growpart.devices %q: nothing is mounted there", d)
		}
	}
	if err != nil {
		return fmt.Errorf("growpart.devices %q: %w", d, err)
	}
	line, err := growSystem.GrowDevice(dev)
	if err != nil {
		return fmt.Errorf("growpart.devices %q: %w", d, err)
	}
	e.Logf("growpart: %s: %s", d, line)
	if mount == "" {
		return nil
	}
	line, _, err = growSystem.ResizeMounted(d, mount, dev)
	if err != nil {
		return fmt.Errorf("resizefs: %w", err)
	}
	e.Logf("resizefs: %s", line)
	return nil
}
