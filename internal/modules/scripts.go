package modules

import (
	"context"

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

// scriptsPerBoot, scriptsPerInstance and scriptsPerOnce are
// cc_scripts_per_*: the executable files of their directory, sorted.
func scriptsPerBoot(ctx context.Context, e *Env) error {
	return e.runParts(ctx, ScriptsPerBootDir)
}

func scriptsPerInstance(ctx context.Context, e *Env) error {
	return e.runParts(ctx, ScriptsPerInstanceDir)
}

func scriptsPerOnce(ctx context.Context, e *Env) error {
	return e.runParts(ctx, ScriptsPerOnceDir)
}

// scriptsUser is cc_scripts_user: the instance's scripts directory, which
// holds the user-data #! parts (written by the runner) and runcmd.
func scriptsUser(ctx context.Context, e *Env) error {
	return e.runParts(ctx, ScriptsDir(e.InstanceID))
}
