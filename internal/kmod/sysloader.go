package kmod

import (
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"
)

// SysLoader is the running kernel's Loader: module files under Dir
// (/lib/modules/RELEASE), loaded with finit_module, and Sysfs/module/NAME
// telling what is in the kernel.
//
// A compressed module file (.ko.xz, .ko.zst, .ko.gz) is given to the
// kernel as it is, with MODULE_INIT_COMPRESSED_FILE: the kernel unpacks it
// when it was built with CONFIG_MODULE_DECOMPRESS (Linux 5.17 and later)
// for that format. earlyinit carries no xz or zstd decompressor: u-root's
// kmodule, which unpacked modules in Go, linked the xz, zstd and parallel
// gzip decoders into every earlyinit process and built their tables at
// start-up (issue 18). Where the kernel cannot unpack a module, the
// initramfs holds it uncompressed (the builder unpacks every format the
// kernel's config does not say it unpacks). A gzip module the kernel
// refuses is unpacked here, with the standard library's compress/gzip,
// which earlyinit links anyway (user-data), and loaded with init_module.
//
// The kernels before: finit_module is Linux 3.8 (ENOSYS before; a plain
// module then goes through init_module); a flag finit_module does not know
// is EINVAL (before 5.17), a format the kernel was not built to unpack
// EINVAL, and a kernel without CONFIG_MODULE_DECOMPRESS EOPNOTSUPP.
type SysLoader struct {
	Dir   string
	Sysfs string // normally "/sys"

	// sys is the kernel; nil is the running one (tests replace it).
	sys moduleSyscalls
}

// moduleSyscalls are the system calls that load a module.
type moduleSyscalls interface {
	FinitModule(fd int, params string, flags int) error
	InitModule(image []byte, params string) error
}

// kernel is the running kernel's moduleSyscalls.
type kernel struct{}

func (kernel) FinitModule(fd int, params string, flags int) error {
	return unix.FinitModule(fd, params, flags)
}

func (kernel) InitModule(image []byte, params string) error {
	return unix.InitModule(image, params)
}

// Compression returns the compression a module file's name says it has:
// "xz", "zstd", "gzip", or "" for a plain .ko.
func Compression(file string) string {
	switch {
	case strings.HasSuffix(file, ".ko.xz"):
		return "xz"
	case strings.HasSuffix(file, ".ko.zst"):
		return "zstd"
	case strings.HasSuffix(file, ".ko.gz"):
		return "gzip"
	}
	return ""
}

// maxUnpacked bounds a gzip module unpacked in Go: the biggest modules
// distributions ship (GPU drivers) are tens of MiB.
var maxUnpacked int64 = 256 << 20

// Loaded tells whether Sysfs/module/module exists: the module is loaded,
// or built in with parameters. It costs one stat.
func (l SysLoader) Loaded(module string) bool {
	var st unix.Stat_t
	return unix.Stat(filepath.Join(l.Sysfs, "module", module), &st) == nil
}

// Load loads Dir/file. A module loaded meanwhile (EEXIST) is no error.
func (l SysLoader) Load(file string) error {
	sys := l.sys
	if sys == nil {
		sys = kernel{}
	}
	p := filepath.Join(l.Dir, file)
	f, err := os.Open(p)
	if err != nil {
		return err
	}
	defer f.Close()
	comp := Compression(file)
	flags := 0
	if comp != "" {
		flags = unix.MODULE_INIT_COMPRESSED_FILE
	}
	err = sys.FinitModule(int(f.Fd()), "", flags)
	if errors.Is(err, unix.ENOSYS) && comp == "" {
		// No finit_module (before Linux 3.8): init_module with the
		// file's contents.
		var img []byte
		if img, err = io.ReadAll(f); err != nil {
			return fmt.Errorf("load %s: %w", p, err)
		}
		err = sys.InitModule(img, "")
	}
	refused := comp != "" && (errors.Is(err, unix.EOPNOTSUPP) || errors.Is(err, unix.EINVAL) || errors.Is(err, unix.ENOSYS))
	if refused && comp == "gzip" {
		// The kernel cannot unpack it (before 5.17, or not built for
		// gzip): unpacked here, given with init_module.
		img, gerr := gunzip(f)
		if gerr != nil {
			return fmt.Errorf("load %s: the kernel cannot unpack it (%v), and gzip here: %w", p, err, gerr)
		}
		err = sys.InitModule(img, "")
		refused = false
	}
	switch {
	case err == nil || errors.Is(err, unix.EEXIST):
		return nil
	case refused:
		return fmt.Errorf("load %s: the kernel cannot unpack a %s-compressed module (it needs CONFIG_MODULE_DECOMPRESS for %s, Linux 5.17 or later); build the initramfs with the module uncompressed: %w", p, comp, comp, err)
	}
	return fmt.Errorf("load %s: %w", p, err)
}

// gunzip is the module file f (read from its start) unpacked, at most
// maxUnpacked bytes.
func gunzip(f *os.File) ([]byte, error) {
	zr, err := gzip.NewReader(io.NewSectionReader(f, 0, 1<<62))
	if err != nil {
		return nil, err
	}
	img, err := io.ReadAll(io.LimitReader(zr, maxUnpacked+1))
	if err != nil {
		return nil, err
	}
	if int64(len(img)) > maxUnpacked {
		return nil, fmt.Errorf("unpacks past %d bytes", maxUnpacked)
	}
	return img, nil
}
