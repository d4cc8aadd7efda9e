// Package setup is how earlyinit gets into an installed system's boot: the
// mode recorded in /etc/earlyinit/setup, the initramfs generator the system
// has, its installed kernels, and the commands that regenerate every
// kernel's initramfs for a mode.
//
// The modes:
//   - own: earlyinit's own initramfs (`earlyinit initramfs`), earlyinit is
//     PID 1 in it; the kernel hooks and the kernel-install plugin
//     (packaging/kernel) keep it in step with the installed kernels, and
//     initramfs-tools' post-update hook (packaging/initramfs-tools) puts it
//     back when another package runs update-initramfs.
//   - distro: the distribution's initramfs (initramfs-tools or dracut) with
//     earlyinit added by its hook or module (packaging/initramfs-tools,
//     packaging/dracut), which runs `earlyinit provision` on the mounted
//     root.
//   - off: the distribution's initramfs as it is without earlyinit.
//
// The hooks, the dracut module and the kernel-install plugin read the state
// file themselves each time they run, so it is written before any
// regeneration. A missing state file is "not set up": every hook adds
// nothing, as in off.
package setup

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"

	"github.com/earlyinit/earlyinit/internal/rootfs"
)

// Mode is how earlyinit boots: Own, Distro or Off.
type Mode string

// The modes, as written in StateFile.
const (
	Own    Mode = "own"
	Distro Mode = "distro"
	Off    Mode = "off"
)

// Modes lists the valid modes.
var Modes = []Mode{Own, Distro, Off}

// StateFile holds the mode, one word and a newline, in the system's root.
// `earlyinit setup` writes it (it is not in the package); the kernel
// hooks, the initramfs-tools hook, the dracut module's check() and the
// kernel-install plugin read it; the package's postrm removes it on purge.
const StateFile = "/etc/earlyinit/setup"

// ParseMode returns the mode s names ("own", "distro" or "off").
func ParseMode(s string) (Mode, error) {
	for _, m := range Modes {
		if s == string(m) {
			return m, nil
		}
	}
	return "", fmt.Errorf("mode %q: not one of own, distro, off", s)
}

// ReadMode returns the mode recorded under root; recorded is false (and
// err nil) when there is no state file. Surrounding white space is
// ignored, as the shell hooks' `read` ignores it; anything else than one
// mode word is an error naming the file.
func ReadMode(root string) (m Mode, recorded bool, err error) {
	r, err := rootfs.Open(root)
	if err != nil {
		return "", false, err
	}
	b, err := r.ReadFile(StateFile)
	if errors.Is(err, fs.ErrNotExist) {
		return "", false, nil
	}
	if err != nil {
		return "", false, err
	}
	m, err = ParseMode(strings.TrimSpace(string(b)))
	if err != nil {
		return "", false, fmt.Errorf("%s: %w", filepath.Join(root, StateFile), err)
	}
	return m, true, nil
}

// WriteMode records m under root, atomically (0644, owned by the caller:
// root in a maintainer script).
func WriteMode(root string, m Mode) error {
	if _, err := ParseMode(string(m)); err != nil {
		return err
	}
	r, err := rootfs.Open(root)
	if err != nil {
		return err
	}
	return r.WriteFile(StateFile, []byte(string(m)+"\n"), 0o644, -1, -1)
}
