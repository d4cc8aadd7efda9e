package scripts

import (
	"context"

	"github.com/earlyinit/earlyinit/internal/modules/core"
)

// Runcmd is cc_runcmd: the runcmd list made into a sh script (shellify)
// written to instances/<iid>/scripts/runcmd, 0700. It does not run it:
// scripts_user runs everything in that directory, runcmd included, as in
// cloud-init.
func Runcmd(ctx context.Context, e *core.Env) error {
	script, err := commandsScript(e, "runcmd")
	if err != nil {
		return err
	}
	return e.Root.WriteFile(core.ScriptsDir(e.InstanceID)+"/runcmd", []byte(script), 0o700, 0, 0)
}
