package repos

import (
	"context"
	"errors"
	"fmt"

	"github.com/earlyinit/earlyinit/internal/ccfg"
	"github.com/earlyinit/earlyinit/internal/modules/core"
)

// PackageUpdateUpgradeInstall is cc_package_update_upgrade_install with
// the root's package manager (pkgmgr.go): the package lists are refreshed
// when package_update, package_upgrade or packages asks for it (once per
// instance), then the system is upgraded, then packages installed. Every
// package name and version is checked before anything runs. A step that
// fails does not stop the next (as cloud-init); the module fails with
// each failure. With package_reboot_if_required, a reboot a package asked
// for after an upgrade or install is requested from the runner (cloud-init
// runs /sbin/reboot itself).
func PackageUpdateUpgradeInstall(ctx context.Context, e *core.Env) error {
	var readErrs []error
	anyTrue := func(keys ...string) bool {
		for _, k := range keys {
			on, _, err := ccfg.Decode[bool](e.Cfg, k)
			readErrs = append(readErrs, err)
			if on {
				return true
			}
		}
		return false
	}
	update := anyTrue("apt_update", "package_update")
	upgrade := anyTrue("package_upgrade", "apt_upgrade")
	reboot := anyTrue("apt_reboot_if_required", "package_reboot_if_required")
	if err := errors.Join(readErrs...); err != nil {
		return err
	}
	// Packages keeps the value as given: the package manager reads it.
	list, _, err := ccfg.Decode[*ccfg.Packages](e.Cfg, "packages")
	if err != nil {
		return err
	}
	if !update && !upgrade && list.Empty() {
		return nil
	}
	m, err := e.PackageManager()
	if err != nil {
		return err
	}
	var raw any
	if list != nil {
		raw = list.Value
	}
	pkgs, err := m.PackageSpecs("packages", raw)
	if err != nil {
		return err
	}
	var errs []error
	if err := e.UpdateSources(ctx, m); err != nil {
		errs = append(errs, fmt.Errorf("package update failed: %w", err))
	}
	if upgrade {
		if err := e.RunPkg(ctx, m, "upgrade", nil); err != nil {
			errs = append(errs, fmt.Errorf("package upgrade failed: %w", err))
		}
	}
	if len(pkgs) > 0 {
		if err := e.RunPkg(ctx, m, "install", pkgs); err != nil {
			errs = append(errs, fmt.Errorf("failed to install packages %v: %w", pkgs, err))
		}
	}
	err = errors.Join(errs...)
	if reboot && (upgrade || len(pkgs) > 0) {
		if need, why := e.RebootRequired(ctx, m); need {
			e.Logf("package_update_upgrade_install: rebooting after upgrade or install per %s", why)
			return &core.Incomplete{Reboot: true, Reason: "reboot after upgrade or install per " + why, Err: err}
		}
	}
	return err
}
