package core

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/earlyinit/earlyinit/internal/ccfg"
)

// pkgManager is the root's package manager, as cloud-init's distro classes
// drive it (distros/debian.py, rhel.py, opensuse.py, alpine.py
// package_command): the commands for refreshing the package lists,
// upgrading and installing.
type pkgManager struct {
	// Kind is apt, dnf, yum, zypper or apk.
	Kind string
	// aptCommand, aptUpgrade and wrapper are Debian's system_info
	// apt_get_command, apt_get_upgrade_subcommand and apt_get_wrapper.
	aptCommand []string
	aptUpgrade string
	wrapper    []string
}

// aptGetCommand is cloud-init's APT_GET_COMMAND.
var aptGetCommand = []string{
	"apt-get",
	"--option=Dpkg::Options::=--force-confold",
	"--option=Dpkg::options::=--force-unsafe-io",
	"--assume-yes",
	"--quiet",
}

// pkgManagers are the tools looked for in the root, in this order.
var pkgManagers = []struct{ kind, tool string }{
	{"apt", "apt-get"}, {"dnf", "dnf"}, {"yum", "yum"}, {"zypper", "zypper"}, {"apk", "apk"},
}

// PackageManager finds the root's package manager by its tool (never the
// host's): apt-get, dnf, yum, zypper or apk. For apt, system_info's
// apt_get_command, apt_get_upgrade_subcommand and apt_get_wrapper apply
// as in cloud-init (the wrapper, eatmydata, when the root has it).
func (e *Env) PackageManager() (*pkgManager, error) {
	kind := ""
	for _, m := range pkgManagers {
		if _, ok := e.Tool(m.tool); ok {
			kind = m.kind
			break
		}
	}
	if kind == "" {
		return nil, errors.New("no package manager in the root: looked for apt-get, dnf, yum, zypper and apk in /usr/sbin, /sbin, /usr/bin and /bin")
	}
	m := &pkgManager{Kind: kind}
	if kind != "apt" {
		return m, nil
	}
	// system_info's apt settings, each its default when not given or
	// null, or when system_info cannot be read (SystemInfo's warning).
	var command, upgrade any
	wrapper := &ccfg.AptGetWrapper{Enabled: "auto"}
	if si := SystemInfo(e, "package_update_upgrade_install", "apt_get_command", "apt_get_upgrade_subcommand", "apt_get_wrapper"); si != nil {
		command, upgrade = si.AptGetCommand, si.AptGetUpgradeSubcommand
		if si.AptGetWrapper != nil {
			wrapper = si.AptGetWrapper
		}
	}
	m.aptCommand = aptGetCommand
	if command != nil {
		l, err := ccfg.Strings("system_info.apt_get_command", command, false)
		if err != nil {
			return nil, err
		}
		if err := CheckArgs("system_info.apt_get_command", l); err != nil {
			return nil, err
		}
		m.aptCommand = l
	}
	m.aptUpgrade = "dist-upgrade"
	if upgrade != nil {
		m.aptUpgrade = ScalarString(upgrade)
	}
	if err := CheckArgs("system_info.apt_get_upgrade_subcommand", []string{m.aptUpgrade}); err != nil {
		return nil, err
	}
	wcmd, enabled := []string{"eatmydata"}, wrapper.Enabled
	if wrapper.Command != nil {
		l, err := ccfg.Strings("system_info.apt_get_wrapper.command", wrapper.Command, false)
		if err != nil {
			return nil, err
		}
		wcmd = l
	}
	if err := CheckArgs("system_info.apt_get_wrapper.command", wcmd); err != nil {
		return nil, err
	}
	if len(wcmd) > 0 && wcmd[0] != "" {
		if _, found := e.Tool(wcmd[0]); IsTrue(enabled) || strings.EqualFold(ScalarString(enabled), "auto") && found {
			m.wrapper = wcmd
		}
	}
	return m, nil
}

// CheckArgs refuses an empty command and arguments with control
// characters.
func CheckArgs(key string, args []string) error {
	if len(args) == 0 || args[0] == "" {
		return fmt.Errorf("%s: empty", key)
	}
	for _, a := range args {
		if strings.ContainsAny(a, "\x00\n\r") {
			return fmt.Errorf("%s: %q has a control character", key, a)
		}
	}
	return nil
}

// cmd is the package manager's command for op (update, upgrade,
// install) with the package arguments pkgs, as cloud-init's
// package_command builds it.
func (m *pkgManager) cmd(op string, pkgs []string) Cmd {
	var argv, env []string
	switch m.Kind {
	case "apt":
		env = []string{"DEBIAN_FRONTEND=noninteractive"}
		argv = append(append([]string{}, m.wrapper...), m.aptCommand...)
		switch op {
		case "upgrade":
			argv = append(argv, m.aptUpgrade)
		default:
			argv = append(argv, op)
		}
	case "dnf", "yum":
		argv = []string{"dnf", "-y"}
		if m.Kind == "yum" {
			argv = []string{"yum", "-t", "-y"}
		}
		switch op {
		case "update":
			argv = append(argv, "makecache")
		default:
			argv = append(argv, op)
		}
	case "zypper":
		argv = []string{"zypper", "--non-interactive"}
		switch op {
		case "update":
			argv = append(argv, "refresh")
		case "upgrade":
			argv = append(argv, "update")
		case "install":
			argv = append(argv, "install", "--auto-agree-with-licenses")
		}
	case "apk":
		argv = []string{"apk", "--quiet"}
		switch op {
		case "upgrade":
			argv = append(argv, "upgrade", "--update-cache", "--available")
		case "install":
			argv = append(argv, "add")
		default:
			argv = append(argv, op)
		}
	}
	argv = append(argv, pkgs...)
	return Cmd{Name: argv[0], Args: argv[1:], Env: env}
}

// versionSep joins a package's name and version: apt name=version, rpm
// tools name-version (cloud-init's expand_package_list formats), apk
// name=version (cloud-init's "%s-%s" names no package for apk).
func (m *pkgManager) versionSep() string {
	switch m.Kind {
	case "apt", "apk":
		return "="
	}
	return "-"
}

var (
	pkgNameRE    = LazyRE{Expr: `^[A-Za-z0-9@][A-Za-z0-9._+:~=/*^@<>-]*$`}
	pkgVersionRE = LazyRE{Expr: `^[A-Za-z0-9][A-Za-z0-9._+:~*^-]*$`}
)

// checkPackageName refuses what a package manager would take for an
// option (a leading "-"), a file or a URL (a leading "/" or ".", "://"),
// or several words: a name starts with a letter or a digit (or "@", an rpm
// group) and has only letters, digits and ._+:~=/*^@<>- (apt's name=version,
// name/release and name:arch, rpm's and apk's comparisons).
func checkPackageName(key, name string) error {
	if !pkgNameRE.Get().MatchString(name) || strings.Contains(name, "://") || strings.Contains(name, "..") {
		return fmt.Errorf("%s: %q is not a package name (a name starts with a letter or a digit and has only letters, digits and ._+:~=/*^@<>-)", key, name)
	}
	return nil
}

// PackageSpecs turns the packages list into the package manager's
// arguments: a name as it is, a [name, version] pair joined with
// versionSep (a [name] or [name, null] pair is the name), every name and
// version checked before anything runs.
func (m *pkgManager) PackageSpecs(key string, v any) ([]string, error) {
	var list []any
	switch t := v.(type) {
	case nil:
		return nil, nil
	case string:
		list = []any{t}
	case []any:
		list = t
	case map[string]any:
		return nil, fmt.Errorf("%s: want a list of names or [name, version] pairs, got a map (the per-manager form came after cloud-init 22.4)", key)
	default:
		return nil, fmt.Errorf("%s: want a list, got %s", key, Kind(v))
	}
	var out []string
	for i, it := range list {
		k := fmt.Sprintf("%s.%d", key, i)
		switch t := it.(type) {
		case []any:
			if len(t) < 1 || len(t) > 2 {
				return nil, fmt.Errorf("%s: want [name, version], got %d items", k, len(t))
			}
			name, err := pkgScalar(k+".0", t[0])
			if err != nil {
				return nil, err
			}
			if err := checkPackageName(k, name); err != nil {
				return nil, err
			}
			if len(t) == 2 && t[1] != nil && ScalarString(t[1]) != "" {
				ver, err := pkgScalar(k+".1", t[1])
				if err != nil {
					return nil, err
				}
				if !pkgVersionRE.Get().MatchString(ver) {
					return nil, fmt.Errorf("%s: %q is not a version (letters, digits and ._+:~*^-, starting with a letter or a digit)", k, ver)
				}
				name += m.versionSep() + ver
			}
			out = append(out, name)
		default:
			name, err := pkgScalar(k, it)
			if err != nil {
				return nil, err
			}
			if err := checkPackageName(k, name); err != nil {
				return nil, err
			}
			out = append(out, name)
		}
	}
	return out, nil
}

func pkgScalar(key string, v any) (string, error) {
	switch v.(type) {
	case nil, map[string]any, []any:
		return "", fmt.Errorf("%s: want a string, got %s", key, Kind(v))
	}
	return ScalarString(v), nil
}

// UpdateSourcesSem is cloud-init's "update-sources" semaphore: the
// package lists are refreshed once per instance, whichever module does it
// first (apt_configure after adding sources, or
// package_update_upgrade_install). It is written only when the refresh
// worked, so a module after a failed one tries again.
func (e *Env) UpdateSourcesSem() string { return e.InstanceDir() + "/sem/update_sources" }

// UpdateSources refreshes the package lists unless done for this
// instance.
func (e *Env) UpdateSources(ctx context.Context, m *pkgManager) error {
	sem := e.UpdateSourcesSem()
	if e.Root.Exists(sem) {
		e.Logf("package lists already refreshed for this instance (%s)", sem)
		return nil
	}
	if err := e.RunPkg(ctx, m, "update", nil); err != nil {
		return err
	}
	if err := e.Root.MkdirAll(e.InstanceDir()+"/sem", 0o755, 0, 0); err != nil {
		return err
	}
	return e.Root.WriteFile(sem, []byte("update-sources\n"), 0o644, 0, 0)
}

// RunPkg runs the package manager's op, its output going to the output
// log. A failure names the command, its exit status and the tool's last
// error line. apt-get update exits 0 when an index could not be fetched
// (no mirror reachable): its "W: Failed to fetch" lines make it a failure
// here, as the packages it was to provide would not be there.
func (e *Env) RunPkg(ctx context.Context, m *pkgManager, op string, pkgs []string) error {
	c := m.cmd(op, pkgs)
	tail := &tailBuffer{max: 16 << 10}
	c.Output = io.MultiWriter(e.Out(), tail)
	e.Logf("%s: %s", m.Kind, c.String())
	_, err := e.Run(ctx, c)
	out := tail.String()
	if err != nil {
		if p := lastProblem(out); p != "" {
			return fmt.Errorf("%w: %s", err, p)
		}
		return err
	}
	if m.Kind == "apt" && op == "update" {
		if p := aptFetchFailure(out); p != "" {
			return fmt.Errorf("run %s: %s", c.String(), p)
		}
	}
	return nil
}

// aptFetchFailure is the first "Failed to fetch" warning of apt-get
// update's output, "" when every index came.
func aptFetchFailure(out string) string {
	for _, line := range strings.Split(out, "\n") {
		line = strings.TrimSpace(line)
		if strings.HasPrefix(line, "W: Failed to fetch") || strings.HasPrefix(line, "E: Failed to fetch") ||
			strings.HasPrefix(line, "W: Some index files failed to download") {
			return line
		}
	}
	return ""
}

// lastProblem is the last error line of a package tool's output (apt's
// "E:", dnf's "Error:", apk's "ERROR:"), else its last line.
func lastProblem(out string) string {
	lines := strings.Split(strings.TrimSpace(out), "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		l := strings.TrimSpace(lines[i])
		for _, p := range []string{"E:", "Error:", "ERROR:", "error:"} {
			if strings.HasPrefix(l, p) {
				return l
			}
		}
	}
	if l := strings.TrimSpace(lines[len(lines)-1]); len(l) <= 300 {
		return l
	}
	return ""
}

// tailBuffer keeps the last max bytes written to it.
type tailBuffer struct {
	max int
	b   []byte
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.b = append(t.b, p...)
	if len(t.b) > t.max {
		t.b = append(t.b[:0], t.b[len(t.b)-t.max:]...)
	}
	return len(p), nil
}

func (t *tailBuffer) String() string { return string(t.b) }

// rebootFiles say a package asked for a reboot: Debian's
// /var/run/reboot-required (cloud-init's REBOOT_FILE), and libzypp's
// /run/reboot-needed.
var rebootFiles = []string{"/var/run/reboot-required", "/run/reboot-required", "/run/reboot-needed"}

// RebootRequired tells whether the packages installed or upgraded want a
// reboot: one of rebootFiles exists, or on dnf/yum the root's
// needs-restarting -r exits 1.
func (e *Env) RebootRequired(ctx context.Context, m *pkgManager) (bool, string) {
	for _, f := range rebootFiles {
		if fi, err := e.Root.Stat(f); err == nil && fi.Mode().IsRegular() {
			return true, f
		}
	}
	if m.Kind != "dnf" && m.Kind != "yum" {
		return false, ""
	}
	if _, ok := e.Tool("needs-restarting"); !ok {
		return false, ""
	}
	_, err := e.Run(ctx, Cmd{Name: "needs-restarting", Args: []string{"-r"}})
	if err == nil {
		return false, ""
	}
	if c, ok := ExitCode(err); ok && c == 1 {
		return true, "needs-restarting -r"
	}
	e.Logf("package_update_upgrade_install: %v: reboot need unknown", err)
	return false, ""
}
