package kmod

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// Prober loads one module and its modules.dep dependencies. u-root's
// kmodule.Prober is the real one.
type Prober interface {
	Probe(name, params string) error
}

// Coldplug loads the modules the devices under a sysfs tree ask for.
type Coldplug struct {
	ix     *Index
	prober Prober
	sysfs  string          // normally "/sys"
	tried  map[string]bool // modules already attempted (normalised names)
	seen   map[string]bool // modaliases already handled
	Loaded []string        // modules loaded, in order
	Failed map[string]error
	// LoadTime is the time spent inside the kernel loading modules.
	LoadTime time.Duration
	logf     func(format string, args ...any)
}

// NewColdplug returns a coldplugger over sysfs (normally "/sys"). logf
// receives one line per module loaded or failed; it may be nil.
func NewColdplug(ix *Index, p Prober, sysfs string, logf func(string, ...any)) *Coldplug {
	if logf == nil {
		logf = func(string, ...any) {}
	}
	return &Coldplug{ix: ix, prober: p, sysfs: sysfs, tried: map[string]bool{}, seen: map[string]bool{}, Failed: map[string]error{}, logf: logf}
}

// Modaliases returns every distinct modalias under sysfs/devices, sorted.
func Modaliases(sysfs string) ([]string, error) {
	set := map[string]bool{}
	root := filepath.Join(sysfs, "devices")
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			// Devices come and go while we walk: skip what vanished.
			if p == root {
				return err
			}
			return nil
		}
		if d.Name() != "modalias" || d.IsDir() {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return nil
		}
		if a := strings.TrimSpace(string(b)); a != "" {
			set[a] = true
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("walk %s: %w", root, err)
	}
	out := make([]string, 0, len(set))
	for a := range set {
		out = append(out, a)
	}
	sort.Strings(out)
	return out, nil
}

// Scan makes one pass: every modalias not seen before is matched and its
// modules loaded. It returns how many new modaliases it found.
func (c *Coldplug) Scan() (int, error) {
	aliases, err := Modaliases(c.sysfs)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, a := range aliases {
		if c.seen[a] {
			continue
		}
		c.seen[a] = true
		n++
		for _, m := range c.ix.Lookup(a) {
			c.Load(m)
		}
	}
	return n, nil
}

// Settle scans until a pass finds no new modalias twice in a row (a loaded
// bus driver makes new devices appear, sometimes a little later), or until
// ctx ends. It never fails the boot: errors are logged by the caller.
func (c *Coldplug) Settle(ctx context.Context, interval time.Duration) error {
	quiet := 0
	for quiet < 2 {
		n, err := c.Scan()
		if err != nil {
			return err
		}
		if n == 0 {
			quiet++
		} else {
			quiet = 0
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("coldplug did not settle: %w", ctx.Err())
		case <-time.After(interval):
		}
	}
	return nil
}

// Load loads a module by name or alias, with its soft dependencies (pre
// before, post after). A module is attempted once per boot.
func (c *Coldplug) Load(name string) error {
	mods := []string{Normalize(name)}
	if r := c.ix.Lookup(name); len(r) > 0 {
		mods = r
	}
	var errs []error
	for _, m := range mods {
		if err := c.load(m); err != nil {
			errs = append(errs, err)
		}
	}
	// An alias served by several modules (crc32c: intel and generic) is
	// satisfied when one of them loads.
	if len(errs) == len(mods) {
		return errors.Join(errs...)
	}
	return nil
}

func (c *Coldplug) load(m string) error {
	if c.tried[m] {
		return c.Failed[m]
	}
	c.tried[m] = true
	sd := c.ix.Softdep(m)
	for _, p := range sd.Pre {
		c.Load(p)
	}
	t0 := time.Now()
	err := c.prober.Probe(c.ix.FileName(m), "")
	c.LoadTime += time.Since(t0)
	if err != nil {
		c.Failed[m] = err
		c.logf("module %s: %v", m, err)
	} else {
		c.Loaded = append(c.Loaded, m)
		c.logf("module %s loaded", m)
	}
	for _, p := range sd.Post {
		c.Load(p)
	}
	return err
}
