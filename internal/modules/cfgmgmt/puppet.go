package cfgmgmt

import (
	"context"
	"fmt"
	"io/fs"
	"net/url"
	"strings"
	"syscall"
	"time"

	"github.com/earlyinit/earlyinit/internal/ccfg"
	"github.com/earlyinit/earlyinit/internal/httpget"
	"github.com/earlyinit/earlyinit/internal/modules/core"
	"github.com/earlyinit/earlyinit/internal/pyyaml"
)

// Puppet's defaults, as cc_puppet.py (cloud-init 22.4.2) has them.
const (
	puppetAIOURL  = "https://raw.githubusercontent.com/puppetlabs/install-puppet/main/install.sh"
	puppetAIOBin  = "/opt/puppetlabs/bin/puppet"
	puppetDefault = "/etc/default/puppet"
)

// Puppet is cc_puppet (cloud-init 22.4.2), once per instance in the final
// stage (cloud_final_modules, after write_files_deferred):
//
//   - install (default true) installs puppet: install_type packages (the
//     default) the package package_name (default puppet, with version when
//     given) through the root's package manager; aio the puppetlabs
//     install script from aio_install_url, run with -v version, -c
//     collection and --cleanup (cleanup, default true); another type
//     installs nothing and the agent is not run;
//   - `puppet config print` gives the defaults of conf_file, ssl_dir and
//     csr_attributes_path (as cloud-init, asked for all three whether set
//     or not);
//   - conf: each section's keys are set in puppet.conf, read and written as
//     Python's configparser does (keys lower-cased, comments dropped); the
//     old file is kept as puppet.conf.old; certname's %f is the fqdn and %i
//     the instance id, lower-cased; ca_cert goes to <ssl_dir>/certs/ca.pem,
//     owned by the puppet user (root for aio);
//   - csr_attributes is written as YAML (PyYAML's layout) to
//     csr_attributes_path, 0600 root: it holds the challengePassword and
//     pre-shared keys, and no log line or error shows its values;
//   - start_service (default true) enables the service (/etc/default/puppet's
//     START=yes, else systemctl enable puppet.service, else chkconfig) and
//     starts it after the agent run; exec (default false) runs `puppet
//     agent` with exec_args (default --test).
//
// Differences: YAML booleans in conf are written true/false (puppet's
// boolean settings refuse Python's True/False); with --test or
// --detailed-exitcodes, the agent's exit 2 (changes applied) is success;
// puppet.conf.old is the file as it was (cloud-init renames once per
// section); an existing ssl_dir keeps its mode and owner.
func Puppet(ctx context.Context, e *core.Env) error {
	pc, ok, err := ccfg.Decode[ccfg.Puppet](e.Cfg, "puppet")
	if !ok || err != nil {
		return err
	}
	install, version, collection := pc.Install, pc.Version, pc.Collection
	installType := orString(pc.InstallType, "packages")
	run, start := pc.Exec, pc.StartService

	puppetUser, puppetBin, pkg := "puppet", "puppet", "puppet"
	if installType == "aio" {
		puppetUser, puppetBin, pkg = "root", e.Root.Path(puppetAIOBin), "puppet-agent"
	}
	pkg = orString(pc.PackageName, pkg)

	switch {
	case !install && version != "":
		e.Logf("puppet: install is false but a version is given: nothing installed")
	case install:
		switch installType {
		case "packages":
			e.Logf("puppet: installing %s from packages", pkg)
			if err := installPackages(ctx, e, "puppet.package_name", []any{[]any{pkg, version}}); err != nil {
				return fmt.Errorf("puppet: install: %w", err)
			}
		case "aio":
			if err := puppetAIO(ctx, e, orString(pc.AIOInstallURL, puppetAIOURL), version, collection, pc.Cleanup); err != nil {
				return err
			}
		default:
			e.Logf("puppet: unknown install_type %q: nothing installed, and the agent is not run", installType)
			run = false
		}
	}

	paths, err := puppetPaths(ctx, e, &pc, puppetBin)
	if err != nil {
		return err
	}

	if pc.Conf != nil {
		if err := puppetConf(e, pc.Conf, paths["conf_file"], paths["ssl_dir"], puppetUser); err != nil {
			return err
		}
	}

	if pc.CSRAttributes != nil {
		if err := puppetCSRAttributes(e, pc.CSRAttributes.All, paths["csr_attributes_path"]); err != nil {
			return err
		}
	}

	if start {
		if err := puppetAutostart(ctx, e); err != nil {
			return err
		}
	}

	if run {
		if err := puppetAgent(ctx, e, pc.ExecArgs, puppetBin); err != nil {
			return err
		}
	}

	if start {
		if err := startService(ctx, e, "puppet"); err != nil {
			return fmt.Errorf("puppet: start the service: %w", err)
		}
	}
	return nil
}

// puppetAIO runs the puppetlabs install script from aioURL, with -v
// version, -c collection and --cleanup.
func puppetAIO(ctx context.Context, e *core.Env, aioURL, version, collection string, cleanup bool) error {
	var args []string
	for _, a := range []struct{ flag, key, v string }{{"-v", "version", version}, {"-c", "collection", collection}} {
		if a.v == "" {
			continue
		}
		if err := checkWord("puppet."+a.key, a.v); err != nil {
			return err
		}
		args = append(args, a.flag, a.v)
	}
	if cleanup {
		args = append(args, "--cleanup")
	}
	if err := runInstaller(ctx, e, "puppet.aio_install_url", aioURL, 5, "puppet-install", args); err != nil {
		return fmt.Errorf("puppet: install: %w", err)
	}
	return nil
}

// puppetPaths are conf_file, ssl_dir and csr_attributes_path, by their
// keys: as given, else `puppet config print`'s.
func puppetPaths(ctx context.Context, e *core.Env, pc *ccfg.Puppet, puppetBin string) (map[string]string, error) {
	// cloud-init asks puppet for all three defaults, given or not.
	paths := map[string]string{}
	for _, p := range []struct {
		key, setting string
		v            *string
	}{
		{"conf_file", "config", pc.ConfFile}, {"ssl_dir", "ssldir", pc.SSLDir}, {"csr_attributes_path", "csr_attributes", pc.CSRAttributesPath},
	} {
		def, err := puppetSetting(ctx, e, puppetBin, p.setting)
		if err != nil {
			return nil, err
		}
		v, key := def, "`puppet config print "+p.setting+"`"
		if p.v != nil {
			v, key = *p.v, "puppet."+p.key
		}
		if paths[p.key], err = core.ConfPath(key, v); err != nil {
			return nil, fmt.Errorf("puppet: %w", err)
		}
	}
	return paths, nil
}

// puppetCSRAttributes writes csr_attributes c to path as YAML.
func puppetCSRAttributes(e *core.Env, c map[string]any, path string) error {
	// Secrets (challengePassword, pre-shared keys): root only.
	if err := e.Root.WriteFile(path, []byte(pyyaml.Dump(c, 2, false)), 0o600, 0, 0); err != nil {
		return fmt.Errorf("puppet.csr_attributes: %w", err)
	}
	e.Logf("puppet: %s written (0600; its values are not shown)", path)
	return nil
}

// puppetAgent runs `puppet agent` with exec_args (default --test; a
// string split at blanks).
func puppetAgent(ctx context.Context, e *core.Env, execArgs ccfg.Args, puppetBin string) error {
	args := []string{"agent"}
	switch {
	case !execArgs.Set:
		args = append(args, "--test")
	case execArgs.Other != "":
		e.Logf("puppet.exec_args: want a list or a string, got %s: using --test", execArgs.Other)
		args = append(args, "--test")
	case execArgs.String:
		args = append(args, strings.Fields(execArgs.List[0])...)
	default:
		args = append(args, execArgs.List...)
	}
	if err := core.CheckArgs("puppet.exec_args", append([]string{puppetBin}, args...)); err != nil {
		return err
	}
	c := core.Cmd{Name: puppetBin, Args: args, Output: e.Out()}
	e.Logf("puppet: running %s", c.String())
	if _, err := e.Run(ctx, c); err != nil {
		// --test implies --detailed-exitcodes: 2 is "changes applied".
		code, ok := core.ExitCode(err)
		detailed := false
		for _, a := range args {
			detailed = detailed || a == "--test" || a == "-t" || a == "--detailed-exitcodes"
		}
		if !ok || code != 2 || !detailed {
			return fmt.Errorf("puppet: agent: %w", err)
		}
		e.Logf("puppet: the agent applied changes (exit 2 with --detailed-exitcodes)")
	}
	return nil
}

// puppetSetting is `puppet config print SETTING`: its last line, which
// must be an absolute path (warnings come before it).
func puppetSetting(ctx context.Context, e *core.Env, bin, setting string) (string, error) {
	out, err := e.Run(ctx, core.Cmd{Name: bin, Args: []string{"config", "print", setting}})
	if err != nil {
		return "", fmt.Errorf("puppet: %w", err)
	}
	lines := strings.Split(strings.TrimRight(string(out), " \t\r\n"), "\n")
	return strings.TrimSpace(lines[len(lines)-1]), nil
}

// puppetFQDN is what %f in certname stands for (cloud-init's
// socket.getfqdn()): the configured fqdn, else /etc/hostname's name.
func puppetFQDN(e *core.Env) string {
	if _, fqdn, ok, err := e.Hostnames(); err == nil && ok {
		return fqdn
	}
	if h := core.ReadTrim(e, "/etc/hostname"); h != "" {
		return h
	}
	return "localhost"
}

// puppetAutostart is _autostart_puppet: START=yes in /etc/default/puppet
// (done here as cloud-init's `sed -i -e s/^START=.*/START=yes/`), else
// systemctl enable puppet.service, else chkconfig puppet on.
func puppetAutostart(ctx context.Context, e *core.Env) error {
	if e.Root.Exists(puppetDefault) {
		b, fi, err := readSmall(e, puppetDefault, 1<<20)
		if err != nil {
			return fmt.Errorf("puppet: %w", err)
		}
		lines := strings.SplitAfter(string(b), "\n")
		for i, l := range lines {
			if strings.HasPrefix(l, "START=") {
				nl := ""
				if strings.HasSuffix(l, "\n") {
					nl = "\n"
				}
				lines[i] = "START=yes" + nl
			}
		}
		uid, gid := statIDs(fi)
		if err := e.Root.WriteFile(puppetDefault, []byte(strings.Join(lines, "")), fi.Mode().Perm(), uid, gid); err != nil {
			return fmt.Errorf("puppet: %w", err)
		}
		e.Logf("puppet: START=yes in %s", puppetDefault)
		return nil
	}
	var c core.Cmd
	if _, ok := e.Tool("systemctl"); ok {
		c = core.Cmd{Name: "systemctl", Args: []string{"enable", "puppet.service"}}
	} else if e.Root.Exists("/sbin/chkconfig") {
		c = core.Cmd{Name: e.Root.Path("/sbin/chkconfig"), Args: []string{"puppet", "on"}}
	} else {
		e.Logf("puppet: no /etc/default/puppet, systemctl or chkconfig: the service is not enabled")
		return nil
	}
	out, err := e.Run(ctx, c)
	e.Out().Write(out)
	if err != nil {
		return fmt.Errorf("puppet: enable the service: %w", err)
	}
	return nil
}

// statIDs is a file's owner and group.
func statIDs(fi fs.FileInfo) (uid, gid int) {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return int(st.Uid), int(st.Gid)
	}
	return 0, 0
}

// orString is *p, or def when p is nil: the key missing, or null (which
// cloud-init's util.get_cfg_option_str reads as the text "None").
func orString(p *string, def string) string {
	if p == nil {
		return def
	}
	return *p
}

// checkWord refuses an argument value that a tool could take for an
// option or that has a blank or control character.
func checkWord(key, v string) error {
	if v == "" || v[0] == '-' || core.HasCtlOrBlank(v) {
		return fmt.Errorf("%s %q: want a word not starting with '-'", key, v)
	}
	return nil
}

// startService is `service NAME start` as cloud-init runs it, through the
// running init: systemctl start NAME (waited for, as `service` does)
// under systemd, rc-service NAME start under OpenRC; with no init running
// yet, nothing (the init starts an enabled service).
func startService(ctx context.Context, e *core.Env, name string) error {
	if !core.ValidServiceName(name) {
		return fmt.Errorf("service %q: not a service name", name)
	}
	var c core.Cmd
	switch e.RunningInit() {
	case "systemd":
		c = core.Cmd{Name: "systemctl", Args: []string{"start", name}}
	case "openrc":
		c = core.Cmd{Name: "rc-service", Args: []string{"--nocolor", name, "start"}}
	default:
		e.Logf("%s: no init running yet: it starts when init starts it", name)
		return nil
	}
	out, err := e.Run(ctx, c)
	e.Out().Write(out)
	return err
}

// installerLimit caps an installer script's size.
const installerLimit = 8 << 20

// runInstaller is cloud-init's install_puppet_aio and
// install_chef_from_omnibus: the script at rawURL fetched (retries more
// tries after the first), written 0700 to a directory of its own (0700)
// under the instance's directory (root's only, where no user can swap it),
// run with args (output to the output log) and removed. The URL is logged
// without its credentials.
func runInstaller(ctx context.Context, e *core.Env, key, rawURL string, retries int, base string, args []string) error {
	u, err := url.Parse(rawURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("%s %s: want an http or https URL", key, core.RedactURL(rawURL))
	}
	if u.User != nil {
		return fmt.Errorf("%s %s: credentials in the URL are not supported", key, core.RedactURL(rawURL))
	}
	g := e.HTTP
	if g == nil {
		g = httpget.System(e.Root.Dir())
		g.RequestTimeout, g.Logf = 60*time.Second, e.Log
	}
	gg := *g
	gg.Retries = retries
	if retries <= 0 {
		gg.Retries = -1
	}
	e.Logf("%s: fetching %s", key, core.RedactURL(rawURL))
	body, err := gg.Get(ctx, httpget.Request{URL: rawURL, Limit: installerLimit})
	if err != nil {
		return fmt.Errorf("%s: %s", key, core.RedactURL(err.Error()))
	}
	dir := e.InstanceDir() + "/" + base + ".d"
	if err := e.Root.MkdirAll(dir, 0o700, 0, 0); err != nil {
		return err
	}
	script := dir + "/" + base
	defer func() {
		e.Root.Remove(script)
		e.Root.Remove(dir)
	}()
	if err := e.Root.WriteFile(script, body, 0o700, 0, 0); err != nil {
		return err
	}
	c := core.Cmd{Name: e.Root.Path(script), Args: args, Output: e.Out()}
	e.Logf("%s: running the installer %s", key, strings.Join(append([]string{base}, args...), " "))
	_, err = e.Run(ctx, c)
	return err
}

// readSmall reads a regular file of at most max bytes from the root.
func readSmall(e *core.Env, name string, max int64) ([]byte, fs.FileInfo, error) {
	fi, err := e.Root.Stat(name)
	if err != nil {
		return nil, nil, err
	}
	if !fi.Mode().IsRegular() || fi.Size() > max {
		return nil, nil, fmt.Errorf("%s: not a regular file of at most %d bytes", name, max)
	}
	b, err := e.Root.ReadFile(name)
	return b, fi, err
}
