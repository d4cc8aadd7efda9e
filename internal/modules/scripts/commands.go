package scripts

import (
	"fmt"

	"github.com/earlyinit/earlyinit/internal/ccfg"
	"github.com/earlyinit/earlyinit/internal/modules/core"
)

// commandsScript is key's commands (bootcmd or runcmd) as util.shellify's
// script. A command is a string or a list (ccfg.Commands keeps them as
// they come: Shellify reads each). A lone string is refused (Decode: no
// list of one where the items are not strings), as shellify refuses it;
// so is null, and a missing key, which the module's Keys keep from
// running it.
func commandsScript(e *core.Env, key string) (string, error) {
	cmds, ok, err := ccfg.Decode[ccfg.Commands](e.Cfg, key)
	if err != nil {
		return "", err
	}
	if !ok {
		return "", fmt.Errorf("%s: want a list, got null", key)
	}
	return core.Shellify(key, []any(cmds))
}
