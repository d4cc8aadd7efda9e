package kmod

import (
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
// for that format. earlyinit carries no decompressor: u-root's kmodule,
// which unpacked modules in Go, linked the xz, zstd and parallel gzip
// decoders into every earlyinit process and built their tables at start-up
// (issue 18). Where the kernel cannot unpack a module, the initramfs holds
// it uncompressed.
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
	switch {
	case err == nil || errors.Is(err, unix.EEXIST):
		return nil
	case comp != "" && (errors.Is(err, unix.EOPNOTSUPP) || errors.Is(err, unix.EINVAL) || errors.Is(err, unix.ENOSYS)):
		return fmt.Errorf("load %s: the kernel cannot unpack a %s-compressed module (it needs CONFIG_MODULE_DECOMPRESS for %s, Linux 5.17 or later); build the initramfs with the module uncompressed: %w", p, comp, comp, err)
	}
	return fmt.Errorf("load %s: %w", p, err)
}
