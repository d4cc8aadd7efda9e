package scripts

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"slices"
	"sort"
	"strings"

	"github.com/earlyinit/earlyinit/internal/modules/core"
)

// Script exit statuses with a meaning, cloudbase-init's 1001, 1002 and
// 1003 as Linux delivers them. cloudbase-init documents them as: 1001,
// reboot now and do not run this again; 1002, do not reboot, run this
// again at the next boot; 1003, reboot now and run this again at the next
// boot. A Linux exit status has 8 bits: a script that does `exit 1001`
// (sh, bash, C's exit(1001), Python's sys.exit(1001)) is seen by its
// parent as 1001 mod 256 = 233. So these are the statuses earlyinit acts
// on: scripts written for cloudbase-init work unchanged, and a script may
// as well exit 233, 234 or 235 itself.
const (
	// ExitRebootDone (exit 1001, seen as 233): reboot now; this script
	// is done and does not run again. The rest of the stage runs at the
	// next boot.
	ExitRebootDone = 1001 % 256
	// ExitRerun (exit 1002, seen as 234): do not reboot, run this script
	// again at the next boot. The module goes on with its other scripts.
	ExitRerun = 1002 % 256
	// ExitRebootRerun (exit 1003, seen as 235): reboot now, and run this
	// script again at the next boot. The rest of the stage does not run
	// before the reboot.
	ExitRebootRerun = 1003 % 256
)

// runParts runs the executable regular files of directory dir (in the
// root), sorted by name, as cloud-init's subp.runparts. A missing
// directory runs nothing.
func runParts(ctx context.Context, e *core.Env, dir string) error {
	scripts, err := parts(e, dir, nil, "")
	if err != nil {
		return err
	}
	return runScripts(ctx, e, scripts)
}

// script is one script to run: its path in the root, the command its
// path follows (vendor_data.prefix) and the name of its marker in
// StateDir.
type script struct {
	path   string
	prefix []string
	marker string
}

// parts lists dir's scripts as runParts runs them, each after prefix, its
// marker its name after markerPrefix.
func parts(e *core.Env, dir string, prefix []string, markerPrefix string) ([]script, error) {
	names, err := listExecutables(e, dir)
	if err != nil {
		return nil, err
	}
	out := make([]script, len(names))
	for i, n := range names {
		out[i] = script{dir + "/" + n, prefix, markerPrefix + n}
	}
	return out, nil
}

// listExecutables lists the executable regular files of dir in the root,
// sorted. The listing reads the directory through the caller's file
// system (rootfs has no ReadDir); each entry is then checked with
// Root.Stat, which is confined.
func listExecutables(e *core.Env, dir string) ([]string, error) {
	fi, err := e.Root.Stat(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if !fi.IsDir() {
		return nil, fmt.Errorf("%s is not a directory", dir)
	}
	ents, err := os.ReadDir(e.Root.Path(dir))
	if err != nil {
		return nil, fmt.Errorf("list %s: %w", dir, err)
	}
	var out []string
	for _, ent := range ents {
		if strings.HasPrefix(ent.Name(), ".") && strings.Contains(ent.Name(), ".earlyinit-") {
			continue // a temporary file of an atomic write
		}
		st, err := e.Root.Stat(dir + "/" + ent.Name())
		if err != nil || !st.Mode().IsRegular() || st.Mode().Perm()&0o111 == 0 {
			continue
		}
		out = append(out, ent.Name())
	}
	sort.Strings(out)
	return out, nil
}

// runScripts runs scripts (paths in the root) in order, output to
// e.Output, and interprets their exit codes (see ExitRebootRerun...).
// With e.StateDir set, a script that finished is marked there and skipped
// at a later run of the same module, so that a module run again (after a
// failure, or a 1002) runs only what did not finish.
//
// A script that fails does not stop the others; the error lists every
// failure. 1001 and 1003 stop the module and return an *Incomplete asking
// for a reboot.
func runScripts(ctx context.Context, e *core.Env, scripts []script) error {
	var failed []string
	rerun := false
	for i, sc := range scripts {
		p := sc.path
		marker := ""
		if e.StateDir != "" {
			marker = e.StateDir + "/" + sc.marker
			if e.Root.Exists(marker) {
				e.Logf("script %s: already run, skipped", p)
				continue
			}
		}
		cmd := core.Cmd{Name: e.Root.Path(p), Output: e.Out()}
		if len(sc.prefix) > 0 {
			e.Logf("running script %s after %q", p, sc.prefix)
			cmd.Name, cmd.Args = sc.prefix[0], append(slices.Clone(sc.prefix[1:]), e.Root.Path(p))
		} else {
			e.Logf("running script %s", p)
		}
		_, err := e.Run(ctx, cmd)
		code, isExit := core.ExitCode(err)
		switch {
		case err == nil, isExit && code == ExitRebootDone:
			if marker != "" {
				if merr := e.Root.WriteFile(marker, nil, 0o644, 0, 0); merr != nil {
					return merr
				}
			}
			if err != nil {
				e.Logf("script %s: exit %d (1001): done, reboot requested", p, code)
				return incomplete(e, true, i+1 < len(scripts), failed, fmt.Sprintf("script %s asked for a reboot (exit %d, i.e. 1001)", p, code))
			}
		case isExit && code == ExitRebootRerun:
			e.Logf("script %s: exit %d (1003): reboot requested, will run again", p, code)
			return incomplete(e, true, true, failed, fmt.Sprintf("script %s asked for a reboot and to run again (exit %d, i.e. 1003)", p, code))
		case isExit && code == ExitRerun:
			e.Logf("script %s: exit %d (1002): will run again at next boot", p, code)
			rerun = true
		default:
			e.Logf("script %s failed: %v", p, err)
			failed = append(failed, fmt.Sprintf("%s (%v)", p, err))
		}
	}
	if len(failed) > 0 {
		return fmt.Errorf("%d script(s) failed: %s", len(failed), strings.Join(failed, "; "))
	}
	if rerun {
		return &core.Incomplete{Rerun: true, Reason: "a script asked to run again at next boot (exit 1002, seen as 234)"}
	}
	return nil
}

func incomplete(e *core.Env, reboot, rerun bool, failed []string, reason string) error {
	inc := &core.Incomplete{Reboot: reboot, Rerun: rerun, Reason: reason}
	if len(failed) > 0 {
		inc.Err = fmt.Errorf("%d script(s) failed: %s", len(failed), strings.Join(failed, "; "))
		inc.Rerun = true
	}
	return inc
}
