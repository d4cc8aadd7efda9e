package initramfs

import (
	"compress/gzip"
	"fmt"
	"io"
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
	// Output is the .cpio.gz to write.
	Output string
	// TempDir for the build; a new one under os.TempDir when empty.
	TempDir string
	// Log receives progress lines; nil is quiet.
	Log func(format string, args ...any)
}

// Result describes what was built.
type Result struct {
	Modules          int
	CPIOSize, GzSize int64
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
	if res.CPIOSize, res.GzSize, err = gzipFile(raw, o.Output); err != nil {
		return res, err
	}
	return res, nil
}

// gzipFile compresses src into dst reproducibly (no name, no time in the
// header) and atomically.
func gzipFile(src, dst string) (int64, int64, error) {
	in, err := os.Open(src)
	if err != nil {
		return 0, 0, err
	}
	defer in.Close()
	tmp := dst + ".tmp"
	out, err := os.Create(tmp)
	if err != nil {
		return 0, 0, err
	}
	defer os.Remove(tmp)
	zw, err := gzip.NewWriterLevel(out, gzip.BestCompression)
	if err != nil {
		return 0, 0, err
	}
	n, err := io.Copy(zw, in)
	if err == nil {
		err = zw.Close()
	}
	if err == nil {
		err = out.Sync()
	}
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return 0, 0, fmt.Errorf("write %s: %w", dst, err)
	}
	fi, err := os.Stat(tmp)
	if err != nil {
		return 0, 0, err
	}
	return n, fi.Size(), os.Rename(tmp, dst)
}
