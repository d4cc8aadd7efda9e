package scripts

import (
	"context"

	"github.com/earlyinit/earlyinit/internal/modules/core"
	"github.com/earlyinit/earlyinit/internal/paths"
)

// bootcmdPath is where bootcmd's script is written before it runs.
const bootcmdPath = paths.RunDir + "/bootcmd"

// Bootcmd is cc_bootcmd: the bootcmd list made into one sh script
// (shellify: a list item is an argv, quoted; a string is a shell line) and
// run with /bin/sh, INSTANCE_ID in its environment, at every boot. The
// script's exit status is the module's.
func Bootcmd(ctx context.Context, e *core.Env) error {
	script, err := commandsScript(e, "bootcmd")
	if err != nil {
		return err
	}
	if err := e.Root.WriteFile(bootcmdPath, []byte(script), 0o700, 0, 0); err != nil {
		return err
	}
	var env []string
	if e.InstanceID != "" {
		env = []string{"INSTANCE_ID=" + e.InstanceID}
	}
	_, err = e.Run(ctx, core.Cmd{Name: "/bin/sh", Args: []string{e.Root.Path(bootcmdPath)}, Env: env, Output: e.Out()})
	return err
}
