// Package kmod loads kernel modules the way udev's coldplug does, without
// udev: it reads every modalias under /sys/devices, matches it against
// modules.alias, and loads the matches with their dependencies (modules.dep)
// and soft dependencies (modules.softdep), independent modules at once, up
// to one per CPU. A module built in (modules.builtin) or already loaded
// (/sys/module/NAME) costs a map look-up or one stat.
package kmod

import (
	"bufio"
	"fmt"
	"io"
	"io/fs"
	"path"
	"path/filepath"
	"sort"
	"strings"
)

// Alias is one "alias PATTERN MODULE" line of modules.alias.
type Alias struct {
	Pattern string
	Module  string
}

// Softdep is one "softdep MODULE pre: A B post: C" line of modules.softdep.
type Softdep struct {
	Pre, Post []string
}

// Index is what coldplug needs to know about the module set: aliases and
// soft dependencies. It is read once and never changes.
type Index struct {
	aliases  []Alias
	exact    map[string][]string // patterns without wildcards, for speed
	softdeps map[string]Softdep
	// files maps a normalised module name to its file's base name
	// ("nls_iso8859_1" -> "nls_iso8859-1"): the kernel treats - and _
	// alike, a file is named as it is.
	files map[string]string
	// paths maps a normalised module name to its file as modules.dep
	// names it, relative to the module directory
	// ("kernel/fs/fat/vfat.ko.xz"); deps to the normalised names of the
	// modules it needs, as modules.dep lists them.
	paths map[string]string
	deps  map[string][]string
	// builtin holds the normalised names of modules.builtin.
	builtin map[string]bool
}

// ParseAliases reads modules.alias. Module names are normalised with "_".
func ParseAliases(r io.Reader) ([]Alias, error) {
	var out []Alias
	s := bufio.NewScanner(r)
	s.Buffer(make([]byte, 64*1024), 1024*1024)
	for n := 1; s.Scan(); n++ {
		line := strings.TrimSpace(s.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		f := strings.Fields(line)
		if len(f) != 3 || f[0] != "alias" {
			return nil, fmt.Errorf("modules.alias:%d: want \"alias PATTERN MODULE\", got %q", n, line)
		}
		out = append(out, Alias{Pattern: f[1], Module: Normalize(f[2])})
	}
	if err := s.Err(); err != nil {
		return nil, fmt.Errorf("modules.alias: %w", err)
	}
	return out, nil
}

// ParseSoftdeps reads modules.softdep. Lines in other forms than
// "softdep MOD pre: ... post: ..." are ignored, as modprobe does.
func ParseSoftdeps(r io.Reader) (map[string]Softdep, error) {
	out := map[string]Softdep{}
	s := bufio.NewScanner(r)
	for s.Scan() {
		f := strings.Fields(s.Text())
		if len(f) < 3 || f[0] != "softdep" {
			continue
		}
		mod := Normalize(f[1])
		sd := out[mod]
		var list *[]string
		for _, w := range f[2:] {
			switch w {
			case "pre:":
				list = &sd.Pre
			case "post:":
				list = &sd.Post
			default:
				if list != nil {
					*list = append(*list, w)
				}
			}
		}
		out[mod] = sd
	}
	if err := s.Err(); err != nil {
		return nil, fmt.Errorf("modules.softdep: %w", err)
	}
	return out, nil
}

// NewIndex builds an index from parsed aliases and softdeps.
func NewIndex(aliases []Alias, softdeps map[string]Softdep) *Index {
	ix := &Index{exact: map[string][]string{}, softdeps: softdeps, files: map[string]string{},
		paths: map[string]string{}, deps: map[string][]string{}, builtin: map[string]bool{}}
	for _, a := range aliases {
		if strings.ContainsAny(a.Pattern, "*?[") {
			ix.aliases = append(ix.aliases, a)
		} else {
			ix.exact[a.Pattern] = append(ix.exact[a.Pattern], a.Module)
		}
	}
	if ix.softdeps == nil {
		ix.softdeps = map[string]Softdep{}
	}
	return ix
}

// ReadIndex reads modules.alias, modules.softdep (optional), modules.dep
// (optional: the module files and their dependencies) and modules.builtin
// (optional) from a module directory such as /lib/modules/6.1.0-56-amd64.
func ReadIndex(fsys fs.FS, dir string) (*Index, error) {
	af, err := fsys.Open(path.Join(dir, "modules.alias"))
	if err != nil {
		return nil, fmt.Errorf("open modules.alias: %w", err)
	}
	defer af.Close()
	aliases, err := ParseAliases(af)
	if err != nil {
		return nil, err
	}
	softdeps := map[string]Softdep{}
	if sf, err := fsys.Open(path.Join(dir, "modules.softdep")); err == nil {
		defer sf.Close()
		if softdeps, err = ParseSoftdeps(sf); err != nil {
			return nil, err
		}
	}
	ix := NewIndex(aliases, softdeps)
	if df, err := fsys.Open(path.Join(dir, "modules.dep")); err == nil {
		defer df.Close()
		if err := ix.ReadDeps(df); err != nil {
			return nil, err
		}
	}
	if bf, err := fsys.Open(path.Join(dir, "modules.builtin")); err == nil {
		defer bf.Close()
		if err := ix.ReadBuiltin(bf); err != nil {
			return nil, err
		}
	}
	return ix, nil
}

// ReadDeps reads modules.dep ("kernel/fs/fat/vfat.ko: kernel/fs/fat/fat.ko")
// into ix: each module's file and the modules it needs.
func (ix *Index) ReadDeps(r io.Reader) error {
	s := bufio.NewScanner(r)
	s.Buffer(make([]byte, 64*1024), 1024*1024)
	for n := 1; s.Scan(); n++ {
		mod, deps, ok := strings.Cut(s.Text(), ":")
		mod = strings.TrimSpace(mod)
		if !ok || mod == "" {
			continue
		}
		base := fileBase(mod)
		name := Normalize(base)
		ix.files[name] = base
		ix.paths[name] = mod
		var names []string
		for _, d := range strings.Fields(deps) {
			names = append(names, Normalize(fileBase(d)))
		}
		ix.deps[name] = names
	}
	if err := s.Err(); err != nil {
		return fmt.Errorf("modules.dep: %w", err)
	}
	return nil
}

// ReadBuiltin reads modules.builtin ("kernel/fs/ext4/ext4.ko") into ix.
func (ix *Index) ReadBuiltin(r io.Reader) error {
	s := bufio.NewScanner(r)
	for s.Scan() {
		if l := strings.TrimSpace(s.Text()); l != "" {
			ix.builtin[Normalize(fileBase(l))] = true
		}
	}
	if err := s.Err(); err != nil {
		return fmt.Errorf("modules.builtin: %w", err)
	}
	return nil
}

// fileBase is a module file's name without directory and ".ko*" suffix.
func fileBase(p string) string {
	base := path.Base(p)
	if i := strings.Index(base, ".ko"); i >= 0 {
		base = base[:i]
	}
	return base
}

// FileName returns the name of module's file (without .ko), which may mix
// "-" and "_" ("nls_iso8859-1"); the normalised name when unknown.
func (ix *Index) FileName(module string) string {
	if f, ok := ix.files[Normalize(module)]; ok {
		return f
	}
	return Normalize(module)
}

// Lookup returns the modules whose alias patterns match name, which is a
// modalias ("pci:v00001AF4d00001001sv...") or a plain alias ("fs-ext4"), in
// sorted order without duplicates. A name that is itself a module name is not
// resolved here; see Resolve.
func (ix *Index) Lookup(name string) []string {
	set := map[string]bool{}
	for _, m := range ix.exact[name] {
		set[m] = true
	}
	for _, a := range ix.aliases {
		if ok, _ := path.Match(a.Pattern, name); ok {
			set[a.Module] = true
		}
	}
	out := make([]string, 0, len(set))
	for m := range set {
		out = append(out, m)
	}
	sort.Strings(out)
	return out
}

// Softdep returns the soft dependencies of module.
func (ix *Index) Softdep(module string) Softdep { return ix.softdeps[Normalize(module)] }

// Normalize makes module names comparable: the kernel treats "-" and "_"
// alike in them.
func Normalize(name string) string {
	name = strings.TrimSuffix(filepath.Base(name), ".ko")
	return strings.ReplaceAll(name, "-", "_")
}
