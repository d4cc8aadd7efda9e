// Package initramfs builds earlyinit's initramfs: earlyinit at /init, the
// kernel modules of common hypervisors with their dependency closure, and
// the index files coldplug reads. It writes a reproducible, compressed newc
// cpio with u-root's mkuimage/cpio, packing either an earlyinit it compiles
// (make initramfs) or a prebuilt static one: `earlyinit initramfs` packs
// itself on the target, with no Go toolchain.
package initramfs

import (
	"bufio"
	_ "embed"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"

	"github.com/earlyinit/earlyinit/internal/kmod"
)

// DefaultModules is modules.conf, the module set of a build that names
// none: the installed binary carries it.
//
//go:embed modules.conf
var DefaultModules string

// ModuleSet is the resolved set of modules for one kernel.
type ModuleSet struct {
	Dir   string   // /lib/modules/<kver> on the build host
	Paths []string // module files, relative to Dir, sorted
	// Missing are the entries that are no module of this kernel (built
	// in, or absent).
	Missing []string
	deps    map[string][]string // relative path -> relative deps
}

// ReadConfig reads a modules.conf: one module name or path glob a line.
func ReadConfig(r io.Reader) ([]string, error) {
	var out []string
	s := bufio.NewScanner(r)
	for s.Scan() {
		l := strings.TrimSpace(s.Text())
		if i := strings.IndexByte(l, '#'); i >= 0 {
			l = strings.TrimSpace(l[:i])
		}
		if l != "" {
			out = append(out, l)
		}
	}
	return out, s.Err()
}

func readDeps(dir string) (map[string][]string, error) {
	f, err := os.Open(filepath.Join(dir, "modules.dep"))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	deps := map[string][]string{}
	s := bufio.NewScanner(f)
	s.Buffer(make([]byte, 64*1024), 1024*1024)
	for s.Scan() {
		mod, rest, ok := strings.Cut(s.Text(), ":")
		if !ok {
			continue
		}
		deps[mod] = strings.Fields(rest)
	}
	return deps, s.Err()
}

// ResolveModules turns config entries into the closure of module files
// under dir (a /lib/modules/<kver> directory).
func ResolveModules(dir string, entries []string) (*ModuleSet, error) {
	deps, err := readDeps(dir)
	if err != nil {
		return nil, fmt.Errorf("modules.dep: %w", err)
	}
	byName := map[string]string{}
	for p := range deps {
		byName[modName(p)] = p
	}
	af, err := os.Open(filepath.Join(dir, "modules.alias"))
	if err != nil {
		return nil, err
	}
	aliases, err := kmod.ParseAliases(af)
	af.Close()
	if err != nil {
		return nil, err
	}
	sf, err := os.Open(filepath.Join(dir, "modules.softdep"))
	if err != nil {
		return nil, err
	}
	softdeps, err := kmod.ParseSoftdeps(sf)
	sf.Close()
	if err != nil {
		return nil, err
	}
	ix := kmod.NewIndex(aliases, softdeps)

	set := map[string]bool{}
	var add func(p string)
	add = func(p string) {
		if set[p] {
			return
		}
		set[p] = true
		for _, d := range deps[p] {
			add(d)
		}
		sd := ix.Softdep(modName(p))
		for _, n := range append(append([]string{}, sd.Pre...), sd.Post...) {
			for _, m := range append(ix.Lookup(n), kmod.Normalize(n)) {
				if q, ok := byName[m]; ok {
					add(q)
				}
			}
		}
	}
	var missing []string
	for _, e := range entries {
		if strings.Contains(e, "/") {
			n := 0
			for p := range deps {
				if ok, _ := path.Match("kernel/"+e, p); ok {
					add(p)
					n++
				}
			}
			if n == 0 {
				missing = append(missing, e)
			}
			continue
		}
		if p, ok := byName[kmod.Normalize(e)]; ok {
			add(p)
		} else {
			missing = append(missing, e)
		}
	}
	// A module the kernel builds in, or does not have, is not an error:
	// the set is shared across kernels.
	ms := &ModuleSet{Dir: dir, Missing: missing, deps: deps}
	for p := range set {
		ms.Paths = append(ms.Paths, p)
	}
	sort.Strings(ms.Paths)
	return ms, nil
}

func modName(p string) string {
	b := path.Base(p)
	if i := strings.Index(b, ".ko"); i >= 0 {
		b = b[:i]
	}
	return kmod.Normalize(b)
}

// IndexFiles returns modules.dep, modules.alias and modules.softdep
// restricted to the set, and modules.builtin as is.
func (ms *ModuleSet) IndexFiles() (map[string][]byte, error) {
	in := map[string]bool{}
	names := map[string]bool{}
	for _, p := range ms.Paths {
		in[p] = true
		names[modName(p)] = true
	}
	var dep strings.Builder
	for _, p := range ms.Paths {
		fmt.Fprintf(&dep, "%s:", p)
		for _, d := range ms.deps[p] {
			if in[d] {
				fmt.Fprintf(&dep, " %s", d)
			}
		}
		dep.WriteString("\n")
	}
	out := map[string][]byte{"modules.dep": []byte(dep.String())}
	for _, name := range []string{"modules.alias", "modules.softdep"} {
		b, err := os.ReadFile(filepath.Join(ms.Dir, name))
		if err != nil {
			return nil, err
		}
		var keep strings.Builder
		for _, l := range strings.Split(string(b), "\n") {
			f := strings.Fields(l)
			switch {
			case len(f) == 3 && f[0] == "alias" && names[kmod.Normalize(f[2])]:
				keep.WriteString(l + "\n")
			case len(f) > 2 && f[0] == "softdep" && names[kmod.Normalize(f[1])]:
				keep.WriteString(l + "\n")
			}
		}
		out[name] = []byte(keep.String())
	}
	b, err := os.ReadFile(filepath.Join(ms.Dir, "modules.builtin"))
	if err != nil && !os.IsNotExist(err) {
		return nil, err
	}
	out["modules.builtin"] = b
	return out, nil
}
