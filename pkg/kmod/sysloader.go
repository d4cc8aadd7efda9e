package kmod

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/u-root/u-root/pkg/kmodule"
	"golang.org/x/sys/unix"
)

// SysLoader is the running kernel's Loader: module files under Dir
// (/lib/modules/RELEASE), loaded with finit_module (or init_module for a
// compressed file), and Sysfs/module/NAME telling what is in the kernel.
type SysLoader struct {
	Dir   string
	Sysfs string // normally "/sys"
}

// Loaded tells whether Sysfs/module/module exists: the module is loaded,
// or built in with parameters. It costs one stat.
func (l SysLoader) Loaded(module string) bool {
	var st unix.Stat_t
	return unix.Stat(filepath.Join(l.Sysfs, "module", module), &st) == nil
}

// Load loads Dir/file. A module loaded meanwhile (EEXIST) is no error.
func (l SysLoader) Load(file string) error {
	p := filepath.Join(l.Dir, file)
	f, err := os.Open(p)
	if err != nil {
		return err
	}
	defer f.Close()
	if err := kmodule.FileInit(f, "", 0); err != nil && !errors.Is(err, unix.EEXIST) {
		return fmt.Errorf("load %s: %w", p, err)
	}
	return nil
}
