package kmod

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"time"
)

// Loader is the kernel's side of loading modules. SysLoader is the real
// one.
type Loader interface {
	// Loaded tells whether module (a normalised name) is in the kernel
	// already.
	Loaded(module string) bool
	// Load loads one module file, named as modules.dep names it, whose
	// dependencies are loaded. It may be called from several goroutines
	// at once.
	Load(file string) error
}

// Coldplug loads the modules the devices under a sysfs tree ask for. Its
// methods may be called from several goroutines; each call's modules load
// concurrently where modules.dep allows, Workers at a time.
type Coldplug struct {
	ix     *Index
	loader Loader
	sysfs  string // normally "/sys"
	// Workers bounds how many modules load at once; NewColdplug sets
	// runtime.NumCPU().
	Workers int

	mu    sync.Mutex
	tried map[string]bool // modules already attempted (normalised names)
	seen  map[string]bool // modaliases already handled
	// Loaded are the modules loaded, in the order their loads ended.
	Loaded []string
	Failed map[string]error
	// LoadTime is the time spent loading modules (wall time, loads
	// overlapping).
	LoadTime time.Duration
	logf     func(format string, args ...any)
}

// NewColdplug returns a coldplugger over sysfs (normally "/sys"). logf
// receives one line per module loaded or failed; it may be nil.
func NewColdplug(ix *Index, l Loader, sysfs string, logf func(string, ...any)) *Coldplug {
	if logf == nil {
		logf = func(string, ...any) {}
	}
	return &Coldplug{ix: ix, loader: l, sysfs: sysfs, Workers: runtime.NumCPU(), tried: map[string]bool{}, seen: map[string]bool{}, Failed: map[string]error{}, logf: logf}
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
// modules loaded, all in one concurrent round. It returns how many new
// modaliases it found.
func (c *Coldplug) Scan() (int, error) {
	aliases, err := Modaliases(c.sysfs)
	if err != nil {
		return 0, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	var mods []string
	for _, a := range aliases {
		if c.seen[a] {
			continue
		}
		c.seen[a] = true
		n++
		mods = append(mods, c.ix.Lookup(a)...)
	}
	c.loadAll([][]string{mods})
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

// Load loads modules by name or alias, with their dependencies and soft
// dependencies (pre before, post after), all in one concurrent round: a
// filesystem and its code pages load at once. A module is attempted once
// per boot. An alias served by several modules (crc32c: intel and
// generic) is satisfied when one of them loads. The error joins one per
// name none of whose modules loaded.
func (c *Coldplug) Load(names ...string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	groups := make([][]string, len(names))
	for i, name := range names {
		groups[i] = c.resolve(name)
	}
	c.loadAll(groups)
	var errs []error
	for _, mods := range groups {
		var failed []error
		for _, m := range mods {
			if err := c.Failed[m]; err != nil {
				failed = append(failed, err)
			}
		}
		if len(failed) == len(mods) {
			errs = append(errs, failed...)
		}
	}
	return errors.Join(errs...)
}

// resolve is the modules name stands for: an alias's, or itself.
func (c *Coldplug) resolve(name string) []string {
	if r := c.ix.Lookup(name); len(r) > 0 {
		return r
	}
	return []string{Normalize(name)}
}

// loadAll plans and runs one round: the modules of groups, each with what
// it needs. c.mu is held.
func (c *Coldplug) loadAll(groups [][]string) {
	p := &plan{c: c, nodes: map[string]*node{}}
	for _, g := range groups {
		for _, m := range g {
			p.add(Normalize(m))
		}
	}
	if len(p.order) == 0 {
		return
	}
	t0 := time.Now()
	p.run(max(c.Workers, 1))
	c.LoadTime += time.Since(t0)
}

// node is a module to load in a round: after every node it waits for
// (waiting of them not done yet), before next.
type node struct {
	name, file string
	hard       []*node // its modules.dep dependencies in this round
	err        error   // set before the round when a dependency failed earlier
	waiting    int
	next       []*node
	adding     bool // add is still adding what it needs
}

// plan is one round's modules, in the order they were asked for.
type plan struct {
	c     *Coldplug
	nodes map[string]*node
	order []*node
}

// add puts module m (normalised) and what it needs into the plan. It
// returns m's node, or nil when m needs no loading this round: built in,
// already in the kernel, attempted before (err is then that attempt's
// error), or unknown (err says so). A module reached again while what it
// needs is still being added (softdeps can make cycles) is nil too: the
// cycle is broken there, as modprobe's recursion breaks it.
func (p *plan) add(m string) (*node, error) {
	if n, ok := p.nodes[m]; ok {
		if n.adding {
			return nil, nil
		}
		return n, nil
	}
	c := p.c
	if c.tried[m] {
		return nil, c.Failed[m]
	}
	c.tried[m] = true
	if c.ix.builtin[m] {
		c.logf("module %s: built in", m)
		return nil, nil
	}
	if c.loader.Loaded(m) {
		c.logf("module %s: already loaded", m)
		return nil, nil
	}
	file, ok := c.ix.paths[m]
	if !ok {
		err := fmt.Errorf("module %s: not in modules.dep nor modules.builtin", m)
		c.Failed[m] = err
		c.logf("%v", err)
		return nil, err
	}
	n := &node{name: m, file: file, adding: true}
	defer func() { n.adding = false }()
	p.nodes[m] = n
	p.order = append(p.order, n)
	sd := c.ix.Softdep(m)
	for _, pre := range sd.Pre {
		for _, pm := range c.resolve(pre) {
			if d, _ := p.add(pm); d != nil {
				p.edge(d, n)
			}
		}
	}
	for _, dep := range c.ix.deps[m] {
		d, err := p.add(dep)
		if err != nil && n.err == nil {
			n.err = fmt.Errorf("dependency %s: %w", dep, err)
		}
		if d != nil && p.edge(d, n) {
			n.hard = append(n.hard, d)
		}
	}
	for _, post := range sd.Post {
		for _, pm := range c.resolve(post) {
			if d, _ := p.add(pm); d != nil {
				p.edge(n, d)
			}
		}
	}
	return n, nil
}

// edge makes b wait for a, unless b comes before a already (a cycle
// add did not see: it is broken where it would close). It tells whether
// the edge was made.
func (p *plan) edge(a, b *node) bool {
	if a == b || reaches(b, a, map[*node]bool{}) {
		return false
	}
	a.next = append(a.next, b)
	b.waiting++
	return true
}

// reaches tells whether to can be reached from from along next.
func reaches(from, to *node, seen map[*node]bool) bool {
	if from == to {
		return true
	}
	if seen[from] {
		return false
	}
	seen[from] = true
	for _, n := range from.next {
		if reaches(n, to, seen) {
			return true
		}
	}
	return false
}

// run loads the plan's modules, workers at a time, each once every node
// it waits for is done. A module whose modules.dep dependency failed is
// not loaded and fails too. c.mu is held; results are recorded under
// p's own lock.
func (p *plan) run(workers int) {
	c := p.c
	var mu sync.Mutex
	cond := sync.NewCond(&mu)
	var ready []*node
	for _, n := range p.order {
		if n.waiting == 0 {
			ready = append(ready, n)
		}
	}
	left := len(p.order)
	var wg sync.WaitGroup
	for range min(workers, len(p.order)) {
		wg.Go(func() {
			mu.Lock()
			defer mu.Unlock()
			for {
				for len(ready) == 0 && left > 0 {
					cond.Wait()
				}
				if left == 0 {
					return
				}
				n := ready[0]
				ready = ready[1:]
				for _, h := range n.hard {
					if h.err != nil && n.err == nil {
						n.err = fmt.Errorf("dependency %s: %w", h.name, h.err)
					}
				}
				if n.err == nil {
					mu.Unlock()
					err := c.loader.Load(n.file)
					mu.Lock()
					n.err = err
				}
				if n.err != nil {
					c.Failed[n.name] = n.err
					c.logf("module %s: %v", n.name, n.err)
				} else {
					c.Loaded = append(c.Loaded, n.name)
					c.logf("module %s loaded", n.name)
				}
				left--
				for _, s := range n.next {
					if s.waiting--; s.waiting == 0 {
						ready = append(ready, s)
					}
				}
				cond.Broadcast()
			}
		})
	}
	wg.Wait()
}
