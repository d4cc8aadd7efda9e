package initramfs

import (
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sort"

	"github.com/u-root/gobusybox/src/pkg/golang"
	"github.com/u-root/mkuimage/cpio"
	"github.com/u-root/mkuimage/uimage"
	"github.com/u-root/mkuimage/uimage/builder"
	"github.com/u-root/uio/llog"
)

// Options say what to build.
type Options struct {
	// KVer is the kernel release whose modules go in ("6.1.0-56-amd64").
	KVer string
	// ModulesRoot holds lib/modules/<KVer> ("/" on the build host).
	ModulesRoot string
	// Config is the module set (initramfs/modules.conf).
	Config string
	// Package is earlyinit's main package ("./cmd/earlyinit").
	Package string
	// Tags are Go build tags for earlyinit (tests: "faultinject").
	Tags []string
	// Output is the compressed cpio to write.
	Output string
	// Compression is one of Compressions; "" means DefaultCompression.
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
	// CPIOSize is the uncompressed archive, Size the file written.
	CPIOSize, Size int64
}

// NewestKernel returns the release of the newest /boot/vmlinuz-* (by
// version order), for builds that do not name one.
func NewestKernel(boot string) (string, error) {
	m, err := filepath.Glob(filepath.Join(boot, "vmlinuz-*"))
	if err != nil || len(m) == 0 {
		return "", fmt.Errorf("no %s/vmlinuz-* (install linux-image-amd64)", boot)
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
	tmp := o.TempDir
	if tmp == "" {
		var err error
		if tmp, err = os.MkdirTemp("", "earlyinit-initramfs"); err != nil {
			return res, err
		}
		defer os.RemoveAll(tmp)
	}
	if err := checkCompression(o.ModulesRoot, o.KVer, o.Compression); err != nil {
		return res, err
	}
	cf, err := os.Open(o.Config)
	if err != nil {
		return res, fmt.Errorf("module set: %w", err)
	}
	entries, err := ReadConfig(cf)
	cf.Close()
	if err != nil {
		return res, fmt.Errorf("module set %s: %w", o.Config, err)
	}
	modDir := filepath.Join(o.ModulesRoot, "lib/modules", o.KVer)
	if o.HostOnly != nil {
		deps, err := readDeps(modDir)
		if err != nil {
			return res, fmt.Errorf("modules.dep: %w", err)
		}
		all := make([]string, 0, len(deps))
		for p := range deps {
			all = append(all, p)
		}
		entries = o.HostOnly.Filter(entries, all)
	}
	ms, err := ResolveModules(modDir, entries)
	if err != nil {
		return res, fmt.Errorf("modules of %s: %w", o.KVer, err)
	}
	res.Modules = len(ms.Paths)
	idx, err := ms.IndexFiles()
	if err != nil {
		return res, err
	}
	dest := "lib/modules/" + o.KVer + "/"
	var files []string
	for _, p := range ms.Paths {
		files = append(files, filepath.Join(modDir, p)+":"+dest+p)
	}
	idxDir := filepath.Join(tmp, "index")
	if err := os.MkdirAll(idxDir, 0o755); err != nil {
		return res, err
	}
	for name, b := range idx {
		p := filepath.Join(idxDir, name)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			return res, err
		}
		files = append(files, p+":"+dest+name)
	}
	base, err := cpio.ArchiveFromRecords([]cpio.Record{
		cpio.Directory("dev", 0o755),
		cpio.Directory("proc", 0o755),
		cpio.Directory("sys", 0o755),
		cpio.Directory("run", 0o755),
		cpio.Directory("newroot", 0o755),
		cpio.Directory("tmp", 0o1777),
		cpio.CharDev("dev/console", 0o600, 5, 1),
		cpio.CharDev("dev/null", 0o666, 1, 3),
		cpio.CharDev("dev/kmsg", 0o644, 1, 11),
	})
	if err != nil {
		return res, err
	}
	raw := filepath.Join(tmp, "initramfs.cpio")
	l := llog.New(slog.LevelWarn, func(format string, args ...any) { logf(format, args...) })
	env := golang.Default(golang.DisableCGO(), golang.WithBuildTag(o.Tags...))
	err = uimage.Create(l,
		uimage.WithReplaceEnv(env),
		uimage.WithTempDir(tmp),
		uimage.WithBaseArchive(base),
		// mkuimage builds without inlining by default: 9% smaller,
		// and earlyinit waits on devices, not on CPU.
		uimage.WithCommands(&golang.BuildOpts{}, builder.Binary, o.Package),
		uimage.WithInit("earlyinit"),
		uimage.WithFiles(files...),
		uimage.WithSkipLDD(),
		uimage.WithCPIOOutput(raw),
	)
	if err != nil {
		return res, fmt.Errorf("mkuimage: %w", err)
	}
	if res.CPIOSize, res.Size, err = compressFile(raw, o.Output, o.Compression); err != nil {
		return res, err
	}
	return res, nil
}
