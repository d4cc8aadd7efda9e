package cfgmgmt

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/earlyinit/earlyinit/internal/ccfg"
	"github.com/earlyinit/earlyinit/internal/instance"
	"github.com/earlyinit/earlyinit/internal/modules/core"
	"github.com/earlyinit/earlyinit/internal/pyyaml"
)

// Ansible is cc_ansible (cloud-init 22.4.2), once per instance in the
// final stage (cloud_final_modules, after chef):
//
//   - install_method (distro or pip) and package_name are required, as
//     cloud-init 22.4's validate_config has them (its schema's defaults do
//     not apply), and so are pull.url and pull.playbook_name with pull,
//     and repositories or run_ansible with setup_controller;
//   - distro: without ansible on the root's PATH, package_name is
//     installed through the root's package manager; pip: without
//     "ansible" in `python3 -m pip list`, pip is bootstrapped
//     (python3-pip) when python3 cannot import it, then `python3 -m pip
//     install [--user] --upgrade pip` and `... install [--user]
//     package_name`, and the user's site base's bin is added to PATH;
//   - every command runs as run_user when set (su --login, /bin/sh),
//     else as root with HOME=/root when the runner has no HOME;
//     ansible_config is ANSIBLE_CONFIG in their environment;
//   - galaxy.actions run in order, each an argv;
//   - pull runs `ansible-pull --KEY=VALUE... PLAYBOOK`: each pull key but
//     playbook_name as an option ("_" is "-"; true a bare flag, false
//     left out), checked against `ansible-pull --version` for diff (2.7+);
//   - setup_controller: each repository `git clone -- SOURCE PATH`, then
//     each run_ansible entry `ansible-playbook PLAYBOOK --KEY=VALUE...` in
//     its playbook_dir.
//
// Secrets: ansible-pull takes a private key and vault passwords only as
// files named by options (private_key, vault_password_file), and the
// repository URL as --url: these are in its argv. Log lines and errors
// show every command with the values of private_key, vault_id,
// vault_password_file, *_password_file and extra_vars replaced, and a
// URL's credentials removed.
//
// Differences from cloud-init 22.4: ANSIBLE_CONFIG is set (22.4 sets the
// lower-case ansible_config, which ansible does not read) and reaches a
// run_user's commands; the site base is found (22.4's quoting makes
// Python print nothing, so ~/.local/bin never reached PATH); argv is passed
// as argv to su's shell (22.4 joins it with blanks, unquoted); the options
// are in sorted order; run_ansible's true options are bare flags (22.4
// writes --check=True, which ansible-playbook refuses); pip's absence is
// an install, not a failure of `pip list`.
func Ansible(ctx context.Context, e *core.Env) error {
	ac, ok, err := ccfg.Decode[*ccfg.Ansible](e.Cfg, "ansible")
	if !ok || err != nil || ac.Empty {
		return err
	}
	// A value false in Python (validate_config's test) reads as "".
	for _, k := range []struct{ key, v string }{{"install_method", ac.InstallMethod}, {"package_name", ac.PackageName}} {
		if k.v == "" {
			return fmt.Errorf("ansible.%s: missing (cloud-init 22.4's ansible module requires it)", k.key)
		}
	}
	if err := ansibleCheckPullController(ac); err != nil {
		return err
	}
	method := ac.InstallMethod
	if method != "pip" && method != "distro" {
		return fmt.Errorf("ansible.install_method %q: want distro or pip", method)
	}
	pkg := ac.PackageName
	if err := checkWord("ansible.package_name", pkg); err != nil {
		return err
	}
	r := &ansibleRunner{e: e}
	if ac.RunUser != nil {
		r.user = *ac.RunUser
		if err := core.CheckNamed("ansible.run_user", r.user); err != nil {
			return err
		}
	} else if os.Getenv("HOME") == "" {
		r.env = append(r.env, "HOME=/root")
	}

	if err := r.install(ctx, method, pkg); err != nil {
		return err
	}

	if s := ac.AnsibleConfig; s != "" {
		if !core.IniSafe(s) {
			return fmt.Errorf("ansible.ansible_config: has a control character")
		}
		r.env = append(r.env, "ANSIBLE_CONFIG="+s)
	}

	if ac.Galaxy != nil {
		if err := r.galaxy(ctx, ac.Galaxy); err != nil {
			return err
		}
	}

	if ac.Pull != nil {
		if err := r.pull(ctx, ac.Pull); err != nil {
			return err
		}
	}
	if ac.SetupController != nil {
		if err := r.controller(ctx, ac.SetupController); err != nil {
			return err
		}
	}
	return nil
}

// ansibleCheckPullController checks ansible's pull and setup_controller
// as validate_config does (a false one is nil; a false url or
// playbook_name "").
func ansibleCheckPullController(ac *ccfg.Ansible) error {
	if p := ac.Pull; p != nil {
		for _, k := range []struct{ key, v string }{{"url", p.URL}, {"playbook_name", p.PlaybookName}} {
			if k.v == "" {
				return fmt.Errorf("ansible.pull.%s: missing", k.key)
			}
		}
	}
	if c := ac.SetupController; c != nil && len(c.Repositories) == 0 && len(c.RunAnsible) == 0 {
		return fmt.Errorf("ansible.setup_controller: want repositories or run_ansible")
	}
	return nil
}

// install installs ansible: package pkg with pip, or, by install_method
// distro, through the root's package manager unless ansible is on PATH.
func (r *ansibleRunner) install(ctx context.Context, method, pkg string) error {
	if method == "pip" {
		return r.pipInstall(ctx, pkg)
	}
	if r.distroInstalled() {
		return nil
	}
	r.e.Logf("ansible: installing %s", pkg)
	if err := installPackages(ctx, r.e, "ansible.package_name", []any{pkg}); err != nil {
		return fmt.Errorf("ansible: install: %w", err)
	}
	if !r.distroInstalled() {
		return fmt.Errorf("ansible: ansible is not installed (no ansible on PATH after installing %s)", pkg)
	}
	return nil
}

// galaxy runs each of galaxy's actions, an argv each.
func (r *ansibleRunner) galaxy(ctx context.Context, g *ccfg.AnsibleGalaxy) error {
	if len(g.Actions) == 0 {
		r.e.Logf("ansible.galaxy: no actions")
	}
	for i, a := range g.Actions {
		key := fmt.Sprintf("ansible.galaxy.actions.%d", i)
		argv := []string(a)
		if err := core.CheckArgs(key, argv); err != nil {
			return fmt.Errorf("%s: empty, or an argument has a control character", key)
		}
		if _, err := r.run(ctx, "", argv, true); err != nil {
			return fmt.Errorf("%s: %w", key, err)
		}
	}
	return nil
}

// ansibleRunner runs the module's commands as cloud-init's AnsiblePull
// does_as: as the run user or root, with the module's environment.
type ansibleRunner struct {
	e    *core.Env
	user string
	// env is added to each command's environment (HOME for root,
	// ANSIBLE_CONFIG).
	env []string
	// extraPath is the pip site base's bin, added to PATH.
	extraPath string
}

// ansibleScript is the shell su (or sh, for a command in a directory)
// runs: $1 is a directory to add to PATH, $2 one to change to (each may
// be empty), the rest the argv, passed as words (never joined into a
// command line).
const ansibleScript = `p=$1 d=$2; shift 2; if [ -n "$p" ]; then PATH=$PATH:$p; export PATH; fi; if [ -n "$d" ]; then cd -- "$d" || exit 1; fi; exec "$@"`

// cmd is argv as the run user or root, in dir ("" for any).
func (r *ansibleRunner) cmd(dir string, argv []string) core.Cmd {
	if r.user != "" {
		inner := []string{"--login", "--shell=/bin/sh", "--command=" + ansibleScript, "--", r.user, "sh", r.extraPath, dir}
		if len(r.env) > 0 {
			inner = append(append(inner, "env"), r.env...)
		}
		return core.Cmd{Name: "su", Args: append(inner, argv...)}
	}
	if dir != "" {
		return core.Cmd{Name: "sh", Args: append([]string{"-c", ansibleScript, "sh", r.extraPath, dir}, argv...), Env: r.env}
	}
	env := r.env
	if r.extraPath != "" {
		p := os.Getenv("PATH")
		if p == "" {
			p = core.DefaultPath
		}
		env = append(append([]string{}, env...), "PATH="+p+":"+r.extraPath)
	}
	return core.Cmd{Name: argv[0], Args: argv[1:], Env: env}
}

// run runs argv (its output to the output log with toLog, else returned),
// logged and reported with its secrets hidden (ansibleShown).
func (r *ansibleRunner) run(ctx context.Context, dir string, argv []string, toLog bool) ([]byte, error) {
	c := r.cmd(dir, argv)
	shown := ansibleShown(argv)
	if dir != "" {
		shown = "(in " + dir + ") " + shown
	}
	if r.user != "" {
		shown = "(as " + r.user + ") " + shown
	}
	if toLog {
		c.Output = r.e.Out()
		r.e.Logf("ansible: %s", shown)
	}
	return r.e.RunShown(ctx, c, shown)
}

// ansibleSecretOpts are the options whose values are never shown: files
// of secrets (private_key, vault and connection passwords), vault ids
// (which may name a password file) and extra_vars (which may hold
// passwords).
func ansibleSecretOpt(name string) bool {
	n := strings.ReplaceAll(strings.ToLower(name), "-", "_")
	switch n {
	case "private_key", "vault_id", "vault_password_file", "extra_vars", "e":
		return true
	}
	return instance.IsSensitiveKey(n) || strings.HasSuffix(n, "_private")
}

// ansibleShown is argv for a log line or an error: --OPT=VALUE options
// that ansibleSecretOpt names with their value hidden, credentials of URLs
// removed.
func ansibleShown(argv []string) string {
	out := make([]string, len(argv))
	for i, a := range argv {
		if strings.HasPrefix(a, "--") {
			if name, _, ok := strings.Cut(a[2:], "="); ok && ansibleSecretOpt(name) {
				out[i] = "--" + name + "=(not shown)"
				continue
			}
		}
		out[i] = core.RedactURL(a)
	}
	return strings.Join(out, " ")
}

// whichRoot tells whether name is in one of the root's PATH directories
// (defaultPath's).
func whichRoot(e *core.Env, name string) bool {
	for _, d := range strings.Split(core.DefaultPath, ":") {
		if fi, err := e.Root.Stat(d + "/" + name); err == nil && !fi.IsDir() {
			return true
		}
	}
	return false
}

// distroInstalled is AnsiblePullDistro.is_installed: ansible on PATH.
func (r *ansibleRunner) distroInstalled() bool { return whichRoot(r.e, "ansible") }

// pipInstall is AnsiblePullPip: the site base's bin on PATH, then pip and
// package_name installed unless pip lists ansible.
func (r *ansibleRunner) pipInstall(ctx context.Context, pkg string) error {
	out, err := r.run(ctx, "", []string{"python3", "-c", "import site; print(site.getuserbase())"}, false)
	if err != nil {
		return fmt.Errorf("ansible: the pip site base: %w", err)
	}
	if base := lastLine(out); strings.HasPrefix(base, "/") && core.IniSafe(base) {
		r.extraPath = base + "/bin"
	}
	if !r.pipHasAnsible(ctx) {
		if err := r.pipInstallAnsible(ctx, pkg); err != nil {
			return err
		}
	}
	// check_deps, as cloud-init: pip is asked again.
	if !r.pipHasAnsible(ctx) {
		return fmt.Errorf("ansible: ansible is not installed (pip lists no ansible after installing %s)", pkg)
	}
	return nil
}

// pipInstallAnsible is AnsiblePullPip.install's work: pip bootstrapped
// when python3 cannot import it, pip upgraded, package_name installed.
func (r *ansibleRunner) pipInstallAnsible(ctx context.Context, pkg string) error {
	e := r.e
	if _, err := e.Run(ctx, core.Cmd{Name: "python3", Args: []string{"-c", "import pip"}}); err != nil {
		e.Logf("ansible: python3 has no pip: installing python3-pip")
		if err := installPackages(ctx, e, "ansible", []any{"python3-pip"}); err != nil {
			return fmt.Errorf("ansible: install python3-pip: %w", err)
		}
	}
	base := []string{"python3", "-m", "pip", "install"}
	if r.user != "" {
		base = append(base, "--user")
	}
	for _, args := range [][]string{{"--upgrade", "pip"}, {pkg}} {
		if _, err := r.run(ctx, "", append(append([]string{}, base...), args...), true); err != nil {
			return fmt.Errorf("ansible: install: %w", err)
		}
	}
	return nil
}

// pipHasAnsible is AnsiblePullPip.is_installed: "ansible" in `python3 -m
// pip list` (a pip that does not run lists nothing).
func (r *ansibleRunner) pipHasAnsible(ctx context.Context) bool {
	out, err := r.run(ctx, "", []string{"python3", "-m", "pip", "list"}, false)
	return err == nil && strings.Contains(string(out), "ansible")
}

func lastLine(b []byte) string {
	l := strings.Split(strings.TrimRight(string(b), " \t\r\n"), "\n")
	return strings.TrimSpace(l[len(l)-1])
}

// ansibleOpts is filter_args and the options cloud-init builds from it:
// each key but skip as --KEY=VALUE ("_" is "-"), true a bare flag (with
// flags), false left out; sorted by key.
func ansibleOpts(key string, m map[string]any, skip []string, flags bool) ([]string, error) {
	var out []string
	for _, k := range core.SortedKeys(m) {
		skipped := false
		for _, s := range skip {
			skipped = skipped || s == k
		}
		if skipped {
			continue
		}
		opt := "--" + strings.ReplaceAll(k, "_", "-")
		if !iniOptionName(k) || strings.ContainsAny(k, " \t") {
			return nil, fmt.Errorf("%s.%s: not an option name", key, k)
		}
		var val string
		switch t := m[k].(type) {
		case bool:
			if !t {
				continue
			}
			if flags {
				out = append(out, opt)
				continue
			}
			val = "True"
		case string:
			val = t
		case int:
			val = strconv.Itoa(t)
		case float64:
			val = pyyaml.FloatRepr(t)
		default:
			return nil, fmt.Errorf("%s.%s: want a string, number or boolean, got %s", key, k, core.Kind(m[k]))
		}
		if !core.IniSafe(val) {
			return nil, fmt.Errorf("%s.%s: has a control character", key, k)
		}
		out = append(out, opt+"="+val)
	}
	return out, nil
}

// playbookName checks a playbook argument: not an option, no control
// characters.
func playbookName(key string, s string) (string, error) {
	if s == "" || s[0] == '-' || !core.IniSafe(s) {
		return "", fmt.Errorf("%s: want a playbook file name, not starting with '-'", key)
	}
	return s, nil
}

// pull is run_ansible_pull.
func (r *ansibleRunner) pull(ctx context.Context, pull *ccfg.AnsiblePull) error {
	book, err := playbookName("ansible.pull.playbook_name", pull.PlaybookName)
	if err != nil {
		return err
	}
	opts, err := ansibleOpts("ansible.pull", pull.Options, []string{"playbook_name"}, true)
	if err != nil {
		return err
	}
	out, err := r.run(ctx, "", []string{"ansible-pull", "--version"}, false)
	if err != nil {
		return fmt.Errorf("ansible: %w", err)
	}
	if v, ok := ansibleVersion(out); !ok {
		r.e.Logf("ansible: cannot parse ansible-pull's version")
	} else if (v[0] < 2 || v[0] == 2 && v[1] < 7) && pull.Diff {
		return fmt.Errorf("ansible.pull.diff: ansible %d.%d.%d has no --diff (2.7 and later)", v[0], v[1], v[2])
	}
	if _, err := r.run(ctx, "", append(append([]string{"ansible-pull"}, opts...), book), true); err != nil {
		return fmt.Errorf("ansible.pull: %w", err)
	}
	return nil
}

// ansibleVersion is get_version: the first run of digits and dots of the
// output's first line, as major, minor, patch.
func ansibleVersion(out []byte) ([3]int, bool) {
	var v [3]int
	first, _, _ := strings.Cut(string(out), "\n")
	i := strings.IndexAny(first, "0123456789.")
	if i < 0 {
		return v, false
	}
	j := i
	for j < len(first) && strings.IndexByte("0123456789.", first[j]) >= 0 {
		j++
	}
	for n, part := range strings.SplitN(first[i:j], ".", 3) {
		x, err := strconv.Atoi(strings.Split(part, ".")[0])
		if err != nil {
			return v, false
		}
		v[n] = x
	}
	return v, true
}

// controller is ansible_controller: the repositories cloned, then each
// run_ansible playbook run in its directory.
func (r *ansibleRunner) controller(ctx context.Context, ctl *ccfg.AnsibleSetupController) error {
	for i, repo := range ctl.Repositories {
		key := fmt.Sprintf("ansible.setup_controller.repositories.%d", i)
		src, dst := repo.Source, repo.Path
		if src == "" || dst == "" || !core.IniSafe(src) || !core.IniSafe(dst) {
			return fmt.Errorf("%s: want source and path strings", key)
		}
		if _, err := r.run(ctx, "", []string{"git", "clone", "--", src, dst}, true); err != nil {
			return fmt.Errorf("%s: %w", key, err)
		}
	}
	for i, run := range ctl.RunAnsible {
		key := fmt.Sprintf("ansible.setup_controller.run_ansible.%d", i)
		dir := run.PlaybookDir
		if dir == "" || !core.IniSafe(dir) {
			return fmt.Errorf("%s.playbook_dir: missing", key)
		}
		book, err := playbookName(key+".playbook_name", run.PlaybookName)
		if err != nil {
			return err
		}
		opts, err := ansibleOpts(key, run.Options, []string{"playbook_dir", "playbook_name"}, true)
		if err != nil {
			return err
		}
		if _, err := r.run(ctx, dir, append([]string{"ansible-playbook", book}, opts...), true); err != nil {
			return fmt.Errorf("%s: %w", key, err)
		}
	}
	return nil
}
