package system

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"strings"

	"github.com/earlyinit/earlyinit/internal/ccfg"
	"github.com/earlyinit/earlyinit/internal/modules/core"
)

// validLocale is a locale name: letters, digits and "_.@-" ("en_US.UTF-8",
// "C.UTF-8", "de_DE@euro").
func validLocale(s string) bool {
	if s == "" || s[0] == '-' || len(s) > 128 {
		return false
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("_.@-", r)) {
			return false
		}
	}
	return true
}

// Locale is cc_locale with each family's apply_locale:
//
//   - Debian and Ubuntu: when the locale differs from LANG in the file
//     (locale_configfile, default /etc/default/locale) or that has none,
//     locale-gen LOCALE (on Debian, whose locale-gen reads only
//     /etc/locale.gen, the locale's line there is uncommented, or added
//     from /usr/share/i18n/SUPPORTED, first) and update-locale
//     --locale-file=FILE LANG=LOCALE; C, C.UTF-8 and POSIX need no
//     generation;
//   - RHEL family and SUSE (systemd): LANG set in /etc/locale.conf (or
//     locale_configfile), the file's other lines kept;
//   - Alpine: /etc/profile.d/locale.sh (or locale_configfile) written as
//     cloud-init writes it.
//
// Unlike cloud-init, which sets the distribution's default (en_US.UTF-8)
// when locale is not given, nothing is done without the key (the image
// keeps its own locale; generating one costs seconds at boot). locale
// false does nothing either.
func Locale(ctx context.Context, e *core.Env) error {
	v, ok, err := ccfg.Decode[string](e.Cfg, "locale")
	if err != nil {
		return err
	}
	// util.is_false of its str(), as cc_locale reads it.
	if !ok || ccfg.IsFalse(v) {
		return nil
	}
	loc := strings.TrimSpace(v)
	if !validLocale(loc) {
		return fmt.Errorf("locale %q: not a locale name", loc)
	}
	out := ""
	f, ok, err := ccfg.Decode[string](e.Cfg, "locale_configfile")
	if err != nil {
		return err
	}
	if ok {
		p, err := core.ConfPath("locale_configfile", f)
		if err != nil {
			return err
		}
		out = p
	}
	d := e.DistroInfo()
	switch d.Family {
	case core.FamilyRHEL, core.FamilySUSE:
		if out == "" {
			out = "/etc/locale.conf"
		}
		return setShellVar(e, out, "LANG", loc)
	case core.FamilyAlpine:
		if out == "" {
			out = "/etc/profile.d/locale.sh"
		}
		content := "#\n# This file is created by cloud-init once per new instance boot\n#\nexport CHARSET=UTF-8\nexport LANG=" + loc + "\nexport LC_COLLATE=C\n"
		return e.Root.WriteFile(out, []byte(content), 0o644, 0, 0)
	}
	if out == "" {
		out = "/etc/default/locale"
	}
	return debianLocale(ctx, e, d, loc, out)
}

// debianLocale is Debian's apply_locale.
func debianLocale(ctx context.Context, e *core.Env, d core.DistroInfo, loc, out string) error {
	sys, exists, err := shellVar(e, out, "LANG")
	if err != nil {
		return fmt.Errorf("locale: %w", err)
	}
	current := sys
	if current == "" {
		current = "en_US.UTF-8"
	}
	if exists && sys != "" && strings.EqualFold(loc, current) {
		e.Logf("locale: %s already has LANG=%s", out, sys)
		return nil
	}
	switch strings.ToLower(loc) {
	case "c", "c.utf-8", "posix":
	default:
		if d.Name != "ubuntu" {
			if err := enableLocaleGen(e, loc); err != nil {
				return fmt.Errorf("locale: %w", err)
			}
		}
		if _, err := e.Run(ctx, core.Cmd{Name: "locale-gen", Args: []string{loc}, Output: e.Out()}); err != nil {
			return fmt.Errorf("locale: %w", err)
		}
	}
	if _, err := e.Run(ctx, core.Cmd{Name: "update-locale", Args: []string{"--locale-file=" + out, "LANG=" + loc}, Output: e.Out()}); err != nil {
		return fmt.Errorf("locale: %w", err)
	}
	e.Logf("locale: %s", loc)
	return nil
}

// enableLocaleGen makes /etc/locale.gen (when the root has one) list loc:
// its commented line uncommented, or the line of /usr/share/i18n/SUPPORTED
// added.
func enableLocaleGen(e *core.Env, loc string) error {
	const gen = "/etc/locale.gen"
	b, err := e.Root.ReadFile(gen)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	lines := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
	for i, line := range lines {
		f := strings.Fields(strings.TrimLeft(line, "# \t"))
		if len(f) == 2 && f[0] == loc {
			if !strings.HasPrefix(strings.TrimSpace(line), "#") {
				return nil
			}
			lines[i] = f[0] + " " + f[1]
			return e.Root.WriteFile(gen, []byte(strings.Join(lines, "\n")+"\n"), 0o644, 0, 0)
		}
	}
	sup, err := e.Root.ReadFile("/usr/share/i18n/SUPPORTED")
	if err != nil {
		return fmt.Errorf("locale %q: not in %s nor in /usr/share/i18n/SUPPORTED", loc, gen)
	}
	for _, line := range strings.Split(string(sup), "\n") {
		if f := strings.Fields(line); len(f) == 2 && f[0] == loc {
			return e.Root.AppendFile(gen, []byte(f[0]+" "+f[1]+"\n"), 0o644, 0, 0)
		}
	}
	return fmt.Errorf("locale %q: not a supported locale (/usr/share/i18n/SUPPORTED)", loc)
}

// shellVar reads KEY=value (quotes removed) from a shell-style file.
func shellVar(e *core.Env, name, key string) (val string, exists bool, err error) {
	b, err := e.Root.ReadFile(name)
	if errors.Is(err, fs.ErrNotExist) {
		return "", false, nil
	}
	if err != nil {
		return "", false, err
	}
	sc := bufio.NewScanner(strings.NewReader(string(b)))
	for sc.Scan() {
		line := strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(sc.Text()), "export "))
		k, v, ok := strings.Cut(line, "=")
		if ok && strings.TrimSpace(k) == key {
			val = strings.Trim(strings.TrimSpace(v), `"'`)
		}
	}
	return val, true, nil
}

// setShellVar is rhel_util.update_sysconfig_file for one key: its line
// replaced (or added at the end), the others kept; a new file starts with
// a header line.
func setShellVar(e *core.Env, name, key, val string) error {
	b, err := e.Root.ReadFile(name)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("locale: %w", err)
	}
	var lines []string
	if err != nil {
		lines = []string{"# Created by earlyinit"}
	} else if len(b) > 0 {
		lines = strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
	}
	done := false
	for i, line := range lines {
		if k, _, ok := strings.Cut(strings.TrimSpace(line), "="); ok && strings.TrimSpace(k) == key {
			lines[i] = key + "=" + val
			done = true
		}
	}
	if !done {
		lines = append(lines, key+"="+val)
	}
	if err := e.Root.WriteFile(name, []byte(strings.Join(lines, "\n")+"\n"), 0o644, 0, 0); err != nil {
		return fmt.Errorf("locale: %w", err)
	}
	return nil
}
