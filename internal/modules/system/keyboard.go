package system

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"strings"

	"github.com/earlyinit/earlyinit/internal/ccfg"
	"github.com/earlyinit/earlyinit/internal/modules/core"
)

// validXKB is an XKB layout, model, variant or option list: letters,
// digits and "_.,:+()-", not starting with "-" ("" allowed).
func validXKB(s string) bool {
	if strings.HasPrefix(s, "-") || len(s) > 256 {
		return false
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("_.,:+()-", r)) {
			return false
		}
	}
	return true
}

// Keyboard is cc_keyboard: keyboard.layout (required), model (default
// pc105), variant and options. cloud-init runs localectl set-x11-keymap,
// which needs systemd-localed over D-Bus, not there yet in earlyinit's
// boot stage; earlyinit writes what localed would:
//
//   - Debian family: XKBMODEL, XKBLAYOUT, XKBVARIANT and XKBOPTIONS in
//     /etc/default/keyboard (the file's other lines kept; a new file as
//     Debian's keyboard-configuration writes it), then console-setup is
//     restarted (queued) as cloud-init does, when the root has it;
//   - RHEL family and SUSE: /etc/X11/xorg.conf.d/00-keyboard.conf as
//     localed writes it (the console keymap is left alone);
//   - Alpine: not supported (as in cloud-init).
func Keyboard(ctx context.Context, e *core.Env) error {
	kc, ok, err := ccfg.Decode[ccfg.Keyboard](e.Cfg, "keyboard")
	if !ok || err != nil {
		return err
	}
	vals := map[string]string{}
	for _, k := range []struct{ key, v string }{{"layout", kc.Layout}, {"model", kc.Model}, {"variant", kc.Variant}, {"options", kc.Options}} {
		v := strings.TrimSpace(k.v)
		if !validXKB(v) {
			return fmt.Errorf("keyboard.%s %q: not an XKB name", k.key, v)
		}
		vals[k.key] = v
	}
	if vals["layout"] == "" {
		return fmt.Errorf("keyboard.layout: required")
	}
	switch e.DistroInfo().Family {
	case core.FamilyAlpine:
		return fmt.Errorf("keyboard: not supported on Alpine (cloud-init sets it only with systemd's localectl)")
	case core.FamilyRHEL, core.FamilySUSE:
		return e.Root.WriteFile("/etc/X11/xorg.conf.d/00-keyboard.conf", []byte(xorgKeyboard(vals)), 0o644, 0, 0)
	}
	if err := debianKeyboard(e, vals); err != nil {
		return fmt.Errorf("keyboard: %w", err)
	}
	if _, ok := e.Has("/lib/systemd/system/console-setup.service", "/usr/lib/systemd/system/console-setup.service", "/etc/systemd/system/console-setup.service", "/etc/init.d/console-setup.sh"); ok {
		if err := e.ServiceAction(ctx, "restart", "console-setup"); err != nil {
			return fmt.Errorf("keyboard: %w", err)
		}
	}
	e.Logf("keyboard: layout %s", vals["layout"])
	return nil
}

// xorgKeyboard is the file systemd-localed writes (an empty value's
// option is left out, as localed does).
func xorgKeyboard(v map[string]string) string {
	var b strings.Builder
	b.WriteString("# Written by systemd-localed(8), read by systemd-localed and Xorg. It's\n# probably wise not to edit this file manually. Use localectl(1) to\n# update this file.\n")
	b.WriteString("Section \"InputClass\"\n        Identifier \"system-keyboard\"\n        MatchIsKeyboard \"on\"\n")
	for _, o := range []struct{ opt, key string }{{"XkbLayout", "layout"}, {"XkbModel", "model"}, {"XkbVariant", "variant"}, {"XkbOptions", "options"}} {
		if v[o.key] != "" {
			fmt.Fprintf(&b, "        Option \"%s\" \"%s\"\n", o.opt, v[o.key])
		}
	}
	b.WriteString("EndSection\n")
	return b.String()
}

// debianKeyboard sets the XKB* variables of /etc/default/keyboard.
func debianKeyboard(e *core.Env, v map[string]string) error {
	const name = "/etc/default/keyboard"
	vars := []struct{ k, key string }{{"XKBMODEL", "model"}, {"XKBLAYOUT", "layout"}, {"XKBVARIANT", "variant"}, {"XKBOPTIONS", "options"}}
	b, err := e.Root.ReadFile(name)
	if errors.Is(err, fs.ErrNotExist) {
		var out strings.Builder
		out.WriteString("# KEYBOARD CONFIGURATION FILE\n\n# Consult the keyboard(5) manual page.\n\n")
		for _, x := range vars {
			fmt.Fprintf(&out, "%s=\"%s\"\n", x.k, v[x.key])
		}
		out.WriteString("\nBACKSPACE=\"guess\"\n")
		return e.Root.WriteFile(name, []byte(out.String()), 0o644, 0, 0)
	}
	if err != nil {
		return err
	}
	lines := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
	for _, x := range vars {
		line := fmt.Sprintf("%s=\"%s\"", x.k, v[x.key])
		done := false
		for i, l := range lines {
			if k, _, ok := strings.Cut(strings.TrimSpace(l), "="); ok && k == x.k {
				lines[i], done = line, true
			}
		}
		if !done {
			lines = append(lines, line)
		}
	}
	return e.Root.WriteFile(name, []byte(strings.Join(lines, "\n")+"\n"), 0o644, 0, 0)
}
