package boot

import (
	"errors"
	"fmt"
	"os"

	"github.com/earlyinit/earlyinit/pkg/instance"
	"github.com/earlyinit/earlyinit/pkg/instance/cache"
	"github.com/earlyinit/earlyinit/pkg/paths"
	"github.com/earlyinit/earlyinit/pkg/rootfs"
)

// writeInstance writes the instance cache into the real root and, on a new
// instance, its identity (hostname, /etc/hosts, injected files). The random
// seed goes into the kernel pool on every boot it is present.
func (b *Boot) writeInstance(d *instance.Data) (isNew bool, err error) {
	root, err := rootfs.Open(newRoot)
	if err != nil {
		return false, err
	}
	run, err := rootfs.Open("/")
	if err != nil {
		return false, err
	}
	if len(d.RandomSeed) > 0 {
		if err := seedKernel(d.RandomSeed); err != nil {
			b.Log.Errorf("random_seed: %v", err)
		} else {
			b.Log.Printf("random_seed: %d bytes into the kernel pool", len(d.RandomSeed))
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
	if err := c.Store(d, cache.StoreOptions{Run: run, RunDir: paths.RunDir, Sys: b.sysInfo()}); err != nil {
		return isNew, fmt.Errorf("instance cache: %w", err)
	}
	if !isNew {
		b.Log.Printf("instance %q: same as last boot", d.InstanceID)
		return false, nil
	}
	if prev == "" {
		b.Log.Printf("instance %q: first boot", d.InstanceID)
	} else {
		b.Log.Printf("instance %q: new instance (was %q)", d.InstanceID, prev)
	}
	return true, cache.ApplyNewInstance(root, d)
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
func (b *Boot) sysInfo() instance.SysInfo {
	var si instance.SysInfo
	for _, p := range []string{"/etc/os-release", "/usr/lib/os-release"} {
		if raw, err := os.ReadFile(newRoot + p); err == nil {
			si = instance.OSRelease(raw)
			break
		}
	}
	si.KernelRelease, _ = kernelRelease()
	si.Machine = "x86_64"
	return si
}
