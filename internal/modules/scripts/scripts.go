package scripts

import (
	"context"
	"errors"

	"github.com/earlyinit/earlyinit/internal/ccfg"
	"github.com/earlyinit/earlyinit/internal/modules/core"
	"github.com/earlyinit/earlyinit/internal/paths"
)

// Script directories, as cloud-init's /var/lib/cloud/scripts/. Parts of
// user-data typed text/x-shellscript-per-{boot,instance,once} are written
// there by the runner; an image may ship its own.
const (
	ScriptsPerBootDir     = paths.CacheDir + "/scripts/per-boot"
	ScriptsPerInstanceDir = paths.CacheDir + "/scripts/per-instance"
	ScriptsPerOnceDir     = paths.CacheDir + "/scripts/per-once"
)

// ScriptsPerBoot, scriptsPerInstance and scriptsPerOnce are
// cc_scripts_per_*: the executable files of their directory, sorted.
func ScriptsPerBoot(ctx context.Context, e *core.Env) error {
	return runParts(ctx, e, ScriptsPerBootDir)
}

func ScriptsPerInstance(ctx context.Context, e *core.Env) error {
	return runParts(ctx, e, ScriptsPerInstanceDir)
}

func ScriptsPerOnce(ctx context.Context, e *core.Env) error {
	return runParts(ctx, e, ScriptsPerOnceDir)
}

// VendorScriptsDir is where the runner writes vendor-data's #! parts:
// instances/<iid>/scripts/vendor/, as cloud-init's vendor_scripts path,
// apart from user-data's, so that a vendor part never replaces the user's
// part of the same name (both are "part-001" without a MIME filename).
func VendorScriptsDir(id string) string { return core.ScriptsDir(id) + "/vendor" }

// ScriptsUser is cc_scripts_user, then cc_scripts_vendor: the instance's
// scripts directory, which holds the user-data #! parts (written by the
// runner) and runcmd, then vendor-data's, each run after
// vendor_data.prefix (a command, as a string or a list) as cloud-init's
// subp.runparts(exe_prefix=) does. They are one run of scripts: a reboot
// asked for by a user's script (1001, 1003) comes before the vendor's.
// Vendor scripts' markers in StateDir start with ".vendor.", which no
// part's name does (the runner strips leading dots).
func ScriptsUser(ctx context.Context, e *core.Env) error {
	user, err := parts(e, core.ScriptsDir(e.InstanceID), nil, "")
	if err != nil {
		return err
	}
	// A bad prefix or vendor directory fails the vendor's scripts only,
	// as cc_scripts_vendor fails apart from cc_scripts_user.
	var vendor []script
	prefix, verr := vendorPrefix(e)
	if verr == nil {
		vendor, verr = parts(e, VendorScriptsDir(e.InstanceID), prefix, ".vendor.")
	}
	err = runScripts(ctx, e, append(user, vendor...))
	var inc *core.Incomplete
	switch {
	case verr == nil:
		return err
	case errors.As(err, &inc):
		inc.Err = errors.Join(inc.Err, verr)
		return inc
	}
	return errors.Join(err, verr)
}

// vendorPrefix is vendor_data.prefix (ccfg.VendorPrefix): nil when unset
// or null, or when vendor_data is not a map.
func vendorPrefix(e *core.Env) ([]string, error) {
	vd, _, err := ccfg.Decode[*ccfg.VendorData](e.Cfg, "vendor_data")
	if err != nil || vd == nil {
		return nil, err
	}
	return vd.Prefix, nil
}
