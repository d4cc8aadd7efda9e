package initramfs

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"

	"github.com/earlyinit/earlyinit/internal/kmod"
	"github.com/earlyinit/earlyinit/internal/proc"
)

// Compressed module files (.ko.xz, .ko.zst, .ko.gz: Fedora, RHEL,
// openEuler, Ubuntu, newer Debian) go into the image as they are when the
// kernel unpacks that format itself (CONFIG_MODULE_DECOMPRESS, Linux 5.17
// and later, for its CONFIG_MODULE_COMPRESS_<FORMAT>): earlyinit loads
// them with finit_module's MODULE_INIT_COMPRESSED_FILE. Any other is
// unpacked here, by the format's own tool, and goes in as a plain .ko, so
// that earlyinit needs no decompressor of its own (internal/kmod: one would be
// linked, and initialised, in every earlyinit process). The image is
// compressed as a whole, so a plain module costs it little.

// kernelUnpacks returns the module compression the kernel configured in
// cfg unpacks itself, "" for none (or no config file, cfg "").
func kernelUnpacks(cfg string) (string, error) {
	if cfg == "" {
		return "", nil
	}
	b, err := os.ReadFile(cfg)
	if err != nil {
		return "", fmt.Errorf("kernel config: %w", err)
	}
	has := func(opt string) bool {
		return bytes.HasPrefix(b, []byte(opt+"=y\n")) || bytes.Contains(b, []byte("\n"+opt+"=y\n"))
	}
	if !has("CONFIG_MODULE_DECOMPRESS") {
		return "", nil
	}
	for _, c := range []struct{ opt, comp string }{
		{"CONFIG_MODULE_COMPRESS_XZ", "xz"},
		{"CONFIG_MODULE_COMPRESS_ZSTD", "zstd"},
		{"CONFIG_MODULE_COMPRESS_GZIP", "gzip"},
	} {
		if has(c.opt) {
			return c.comp, nil
		}
	}
	return "", nil
}

// unpackCommand is the command writing a module file compressed with comp
// (kmod.Compression's names) to standard output, unpacked.
func unpackCommand(comp string) []string {
	switch comp {
	case "xz":
		return []string{"xz", "-dc", "--"}
	case "zstd":
		return []string{"zstd", "-dcq", "--"}
	case "gzip":
		return []string{"gzip", "-dc", "--"}
	}
	return nil
}

// unpack unpacks, into dir, each module file of ms compressed otherwise
// than keep (the format the kernel unpacks itself, "" for none), and
// renames it in ms to its plain .ko name. It returns the file on the host
// each of ms.Paths is to be read from.
func (ms *ModuleSet) unpack(keep, dir string) (map[string]string, error) {
	srcs := map[string]string{}
	renamed := map[string]string{}
	for _, p := range ms.Paths {
		src := filepath.Join(ms.Dir, p)
		comp := kmod.Compression(p)
		if comp == "" || comp == keep {
			srcs[p] = src
			continue
		}
		plain := p[:strings.LastIndex(p, ".ko")+len(".ko")]
		dst := filepath.Join(dir, plain)
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return nil, err
		}
		argv := append(unpackCommand(comp), src)
		if _, err := exec.LookPath(argv[0]); err != nil {
			return nil, fmt.Errorf("module %s: %s-compressed, and the kernel cannot unpack it (no CONFIG_MODULE_DECOMPRESS for %s): install %s to unpack it here: %w", src, comp, comp, argv[0], err)
		}
		out, err := os.Create(dst)
		if err != nil {
			return nil, err
		}
		var stderr bytes.Buffer
		cmd := exec.Command(argv[0], argv[1:]...)
		cmd.Stdout, cmd.Stderr = out, &stderr
		err = proc.Run(cmd) // as every command (compressFile says why)
		if cerr := out.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return nil, fmt.Errorf("module %s: %s: %w: %s", src, strings.Join(argv, " "), err, strings.TrimSpace(stderr.String()))
		}
		renamed[p] = plain
		srcs[plain] = dst
	}
	if len(renamed) == 0 {
		return srcs, nil
	}
	name := func(p string) string {
		if r, ok := renamed[p]; ok {
			return r
		}
		return p
	}
	deps := make(map[string][]string, len(ms.deps))
	for p, ds := range ms.deps {
		nd := make([]string, len(ds))
		for i, d := range ds {
			nd[i] = name(d)
		}
		deps[name(p)] = nd
	}
	ms.deps = deps
	for i, p := range ms.Paths {
		ms.Paths[i] = name(p)
	}
	sort.Strings(ms.Paths)
	return srcs, nil
}
