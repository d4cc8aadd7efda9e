package initramfs

import (
	"fmt"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"

	"github.com/earlyinit/earlyinit/internal/kmod"
	"github.com/u-root/mkuimage/cpio"
)

// Options say what to build.
type Options struct {
	// KVer is the kernel release whose modules go in ("6.1.0-56-amd64").
	KVer string
	// ModulesRoot holds lib/modules/<KVer> ("/" on the build host).
	ModulesRoot string
	// Config is the module set file (initramfs/modules.conf's format);
	// "" is the set built into the binary (DefaultModules).
	Config string
	// ModulesAdd are module names or path globs added to the set (after
	// HostOnly's filter, which they pass).
	ModulesAdd []string
	// ModulesOmit are module names or path globs taken out of the set; a
	// module a kept one depends on stays.
	ModulesOmit []string
	// Binary is the static earlyinit to pack as the init
	// ("/proc/self/exe" for `earlyinit initramfs`; gobuild.Compile's
	// output for builds from the tree).
	Binary string
	// Output is the compressed cpio to write, atomically.
	Output string
	// Compression is "auto" or one of Compressions; "" means
	// DefaultCompression.
	Compression string
	// HostOnly, when set, keeps only the modules one machine needs.
	HostOnly *HostOnly
	// TempDir for the build; a new one under os.TempDir when empty.
	TempDir string
	// Log receives progress lines; nil is quiet.
	Log func(format string, args ...any)
}

// Result describes what was built.
type Result struct {
	Modules int
	// Compression is the method used ("auto" resolved), Compressor what
	// did it: the tool's command line, or a Go encoder (zstd's when the
	// tool is missing).
	Compression, Compressor string
	// CPIOSize is the uncompressed archive, Size the file written.
	CPIOSize, Size int64
}

// NewestKernel returns the release of the newest /boot/vmlinuz-* (by
// version order), for builds that do not name one.
func NewestKernel(boot string) (string, error) {
	m, err := filepath.Glob(filepath.Join(boot, "vmlinuz-*"))
	if err != nil || len(m) == 0 {
		return "", fmt.Errorf("no %s/vmlinuz-*: no kernel installed there", boot)
	}
	vers := make([]string, len(m))
	for i, p := range m {
		vers[i] = filepath.Base(p)[len("vmlinuz-"):]
	}
	sort.Slice(vers, func(i, j int) bool { return versionLess(vers[i], vers[j]) })
	return vers[len(vers)-1], nil
}

// versionLess compares kernel releases number by number ("6.1.0-9" <
// "6.1.0-56").
func versionLess(a, b string) bool {
	for a != "" && b != "" {
		na, ra := leadingNumber(a)
		nb, rb := leadingNumber(b)
		if na != nb {
			return na < nb
		}
		if ra == "" || rb == "" || ra[0] != rb[0] {
			return ra < rb
		}
		a, b = ra[1:], rb[1:]
	}
	return len(a) < len(b)
}

func leadingNumber(s string) (int, string) {
	n, i := 0, 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		n = n*10 + int(s[i]-'0')
		i++
	}
	return n, s[i:]
}

// Build writes the initramfs.
func Build(o Options) (Result, error) {
	var res Result
	logf := o.Log
	if logf == nil {
		logf = func(string, ...any) {}
	}
	if o.KVer == "" || strings.ContainsRune(o.KVer, '/') || o.KVer == "." || o.KVer == ".." {
		return res, fmt.Errorf("kernel release %q: want a release such as 6.1.0-56-amd64", o.KVer)
	}
	modDir := filepath.Join(o.ModulesRoot, "lib/modules", o.KVer)
	if fi, err := os.Stat(modDir); err != nil || !fi.IsDir() {
		return res, fmt.Errorf("kernel %s: no modules directory %s (is that kernel's modules package installed?)", o.KVer, modDir)
	}
	if _, err := os.Stat(filepath.Join(modDir, "modules.dep")); err != nil {
		return res, fmt.Errorf("kernel %s: %w (run depmod %s)", o.KVer, err, o.KVer)
	}
	res.Compression = o.Compression
	if res.Compression == "auto" {
		res.Compression = autoCompression(o.ModulesRoot, o.KVer)
	}
	if err := checkCompression(o.ModulesRoot, o.KVer, res.Compression); err != nil {
		return res, err
	}
	if res.Compression == "" {
		res.Compression = DefaultCompression
	}
	tmp := o.TempDir
	if tmp == "" {
		var err error
		if tmp, err = os.MkdirTemp("", "earlyinit-initramfs"); err != nil {
			return res, err
		}
		defer os.RemoveAll(tmp)
	}
	entries, err := moduleEntries(o.Config)
	if err != nil {
		return res, err
	}
	var all []string
	if o.HostOnly != nil || len(o.ModulesOmit) > 0 {
		deps, err := readDeps(modDir)
		if err != nil {
			return res, fmt.Errorf("modules.dep: %w", err)
		}
		for p := range deps {
			all = append(all, p)
		}
		sort.Strings(all)
	}
	if o.HostOnly != nil {
		entries = o.HostOnly.Filter(entries, all)
	}
	entries = append(entries, o.ModulesAdd...)
	if len(o.ModulesOmit) > 0 {
		entries = omit(entries, all, o.ModulesOmit)
	}
	ms, err := ResolveModules(modDir, entries)
	if err != nil {
		return res, fmt.Errorf("modules of %s: %w", o.KVer, err)
	}
	if len(ms.Missing) > 0 {
		logf("initramfs: not modules of kernel %s (built in or absent): %s", o.KVer, strings.Join(ms.Missing, " "))
	}
	res.Modules = len(ms.Paths)
	keep, err := kernelUnpacks(kernelConfig(o.ModulesRoot, o.KVer))
	if err != nil {
		return res, err
	}
	srcs, err := ms.unpack(keep, filepath.Join(tmp, "modules"))
	if err != nil {
		return res, err
	}
	idx, err := ms.IndexFiles()
	if err != nil {
		return res, err
	}

	bin := o.Binary
	if bin == "" {
		return res, fmt.Errorf("no earlyinit binary to pack")
	}
	if err := checkStatic(bin); err != nil {
		return res, err
	}
	a := newArchive()
	a.addFile(BinaryPath, bin, 0o755)
	a.addRecord(cpio.Symlink(InitLink, BinaryPath))
	dest := "lib/modules/" + o.KVer + "/"
	for _, p := range ms.Paths {
		a.addFile(dest+p, srcs[p], 0o644)
	}
	for name, b := range idx {
		a.addRecord(cpio.StaticFile(dest+name, string(b), 0o644))
	}
	raw := filepath.Join(tmp, "initramfs.cpio")
	f, err := os.Create(raw)
	if err != nil {
		return res, err
	}
	err = a.writeTo(f)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return res, fmt.Errorf("write %s: %w", raw, err)
	}
	if res.CPIOSize, res.Size, res.Compressor, err = compressFileBy(raw, o.Output, res.Compression); err != nil {
		return res, err
	}
	if res.Compressor != "" {
		logf("initramfs: %s: %s", res.Compression, res.Compressor)
	}
	return res, nil
}

// moduleEntries reads the module set file, or the built-in one when file
// is "".
func moduleEntries(file string) ([]string, error) {
	if file == "" {
		entries, err := ReadConfig(strings.NewReader(DefaultModules))
		if err != nil {
			return nil, fmt.Errorf("built-in module set: %w", err)
		}
		return entries, nil
	}
	f, err := os.Open(file)
	if err != nil {
		return nil, fmt.Errorf("module set: %w", err)
	}
	defer f.Close()
	entries, err := ReadConfig(f)
	if err != nil {
		return nil, fmt.Errorf("module set %s: %w", file, err)
	}
	return entries, nil
}

// omit returns entries without the modules drop names: a name entry
// dropped if a drop word names or matches it, a glob entry replaced by the
// names of the modules it matches among all (modules.dep's paths) that no
// drop word names or matches. A drop word is a module name or a path glob,
// as entries are.
func omit(entries, all, drop []string) []string {
	dropped := func(name, p string) bool {
		for _, d := range drop {
			if strings.Contains(d, "/") {
				if ok, _ := path.Match("kernel/"+d, p); ok && p != "" {
					return true
				}
			} else if kmod.Normalize(d) == name {
				return true
			}
		}
		return false
	}
	byName := map[string]string{}
	for _, p := range all {
		byName[modName(p)] = p
	}
	var out []string
	for _, e := range entries {
		if !strings.Contains(e, "/") {
			if n := kmod.Normalize(e); !dropped(n, byName[n]) {
				out = append(out, e)
			}
			continue
		}
		for _, p := range all {
			if ok, _ := path.Match("kernel/"+e, p); ok && !dropped(modName(p), p) {
				out = append(out, modName(p))
			}
		}
	}
	return out
}
