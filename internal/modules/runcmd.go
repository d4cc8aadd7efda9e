package modules

import "context"

// runcmd is cc_runcmd: the runcmd list made into a sh script (shellify)
// written to instances/<iid>/scripts/runcmd, 0700. It does not run it:
// scripts_user runs everything in that directory, runcmd included, as in
// cloud-init.
func runcmd(ctx context.Context, e *Env) error {
	script, err := shellify("runcmd", e.Cfg["runcmd"])
	if err != nil {
		return err
	}
	return e.Root.WriteFile(ScriptsDir(e.InstanceID)+"/runcmd", []byte(script), 0o700, 0, 0)
}
