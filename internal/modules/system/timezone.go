package system

import (
	"context"
	"fmt"
	"strings"

	"github.com/earlyinit/earlyinit/internal/ccfg"
	"github.com/earlyinit/earlyinit/internal/modules/core"
)

// Timezone is cc_timezone with the distribution's set_timezone. Debian's
// (every family but RHEL's): /etc/timezone gets the zone name, and
// /etc/localtime becomes a symlink to /usr/share/zoneinfo/<zone> when it is
// a symlink or missing, or a copy of it when it is a regular file. The
// RHEL family's under systemd: /etc/localtime becomes the symlink, whatever
// it was, and there is no /etc/timezone (timedatectl reads the zone from
// the link). The zone must exist in the root (TestTimezoneAsCloudInit).
// RHEL without systemd (cloud-init: ZONE in /etc/sysconfig/clock) is done
// as Debian.
func Timezone(_ context.Context, e *core.Env) error {
	tz, _, err := ccfg.Decode[string](e.Cfg, "timezone")
	if tz = strings.TrimSpace(tz); tz == "" || err != nil {
		return err
	}
	if strings.HasPrefix(tz, "/") || strings.Contains(tz, "..") || strings.ContainsAny(tz, " \t\n") {
		return fmt.Errorf("timezone %q: not a zone name", tz)
	}
	zf := "/usr/share/zoneinfo/" + tz
	fi, err := e.Root.Stat(zf)
	if err != nil || fi.IsDir() {
		return fmt.Errorf("timezone %q: no such zone in /usr/share/zoneinfo", tz)
	}
	if e.DistroInfo().Family == core.FamilyRHEL && e.RunningInit() == "systemd" {
		e.Logf("timezone: %s", tz)
		// Symlink replaces the file in one rename (cloud-init deletes
		// it first).
		return e.Root.Symlink(zf, "/etc/localtime")
	}
	if err := e.Root.WriteFile("/etc/timezone", []byte(tz+"\n"), 0o644, 0, 0); err != nil {
		return err
	}
	if lt, err := e.Root.Stat("/etc/localtime"); err == nil && lt.Mode().IsRegular() {
		b, err := e.Root.ReadFile(zf)
		if err != nil {
			return err
		}
		return e.Root.WriteFile("/etc/localtime", b, 0o644, 0, 0)
	}
	e.Logf("timezone: %s", tz)
	return e.Root.Symlink(zf, "/etc/localtime")
}
