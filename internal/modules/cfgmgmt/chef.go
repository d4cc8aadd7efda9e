package cfgmgmt

import (
	"context"
	"fmt"
	"path"
	"sort"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/earlyinit/earlyinit/internal/ccfg"
	"github.com/earlyinit/earlyinit/internal/modules/core"
	"github.com/earlyinit/earlyinit/internal/pyjson"
)

// Chef's defaults, as cc_chef.py (cloud-init 22.4.2) has them.
const (
	chefValidationPEM = "/etc/chef/validation.pem"
	chefFirstboot     = "/etc/chef/firstboot.json"
	chefClientRB      = "/etc/chef/client.rb"
	chefExec          = "/usr/bin/chef-client"
	chefOmnibusURL    = "https://www.chef.io/chef/install.sh"
	chefRubyDefault   = "1.8"
)

var (
	chefDirs        = []string{"/etc/chef", "/var/log/chef", "/var/lib/chef", "/var/cache/chef", "/var/backups/chef", "/var/run/chef"}
	chefExecDefArgs = []string{"-d", "-i", "1800", "-s", "20"}
)

// chefRBLine is one line of cloud-init's chef_client.rb template, in its
// order: the parameter, the line's text before the value, and how the
// value is written (quoted as a Ruby string, a Ruby symbol, or a fixed
// line when the parameter is true).
type chefRBLine struct {
	param, prefix string
	kind          int
}

const (
	chefQuoted = iota
	chefSymbol
	chefFlag
)

var chefRBLines = []chefRBLine{
	{"chef_license", "chef_license           ", chefQuoted},
	{"log_level", "log_level              ", chefSymbol},
	{"ssl_verify_mode", "ssl_verify_mode        ", chefSymbol},
	{"log_location", "log_location           ", chefQuoted},
	{"validation_name", "validation_client_name ", chefQuoted},
	{"validation_key", "validation_key         ", chefQuoted}, // only with validation_cert
	{"client_key", "client_key             ", chefQuoted},
	{"server_url", "chef_server_url        ", chefQuoted},
	{"environment", "environment            ", chefQuoted},
	{"node_name", "node_name              ", chefQuoted},
	{"json_attribs", "json_attribs           ", chefQuoted},
	{"file_cache_path", "file_cache_path        ", chefQuoted},
	{"file_backup_path", "file_backup_path       ", chefQuoted},
	{"pid_file", "pid_file               ", chefQuoted},
	{"show_time", "Chef::Log::Formatter.show_time = true", chefFlag},
	{"encrypted_data_bag_secret", "encrypted_data_bag_secret ", chefQuoted},
}

// chefRBDefaults is CHEF_RB_TPL_DEFAULTS ("" for None).
var chefRBDefaults = map[string]string{
	"ssl_verify_mode":           ":verify_none",
	"log_level":                 ":info",
	"log_location":              "/var/log/chef/client.log",
	"validation_key":            chefValidationPEM,
	"validation_cert":           "",
	"client_key":                "/etc/chef/client.pem",
	"json_attribs":              chefFirstboot,
	"file_cache_path":           "/var/cache/chef",
	"file_backup_path":          "/var/backups/chef",
	"pid_file":                  "/var/run/chef/client.pid",
	"show_time":                 "true",
	"encrypted_data_bag_secret": "",
}

// chefRBPathKeys are CHEF_RB_TPL_PATH_KEYS: their directories are made.
var chefRBPathKeys = []string{"log_location", "validation_key", "client_key", "file_cache_path", "json_attribs", "pid_file", "encrypted_data_bag_secret"}

// Chef is cc_chef (cloud-init 22.4.2), at every boot (its frequency is
// always) in the final stage (cloud_final_modules, after puppet):
//
//   - directories (default /etc/chef, /var/log/chef, /var/lib/chef,
//     /var/cache/chef, /var/backups/chef, /var/run/chef) and /etc/chef are
//     made;
//   - validation_cert, unless "system", is written to validation_key
//     (default /etc/chef/validation.pem), 0600 root: it is the validator's
//     private key, and no log line or error shows it;
//   - /etc/chef/client.rb is cloud-init's chef_client.rb template (built
//     in) with server_url and validation_name (both required), node_name
//     (default the instance id), environment (default _default) and the
//     other keys' values or defaults; the directories of its paths are made;
//   - firstboot_path (default /etc/chef/firstboot.json; "" for none) gets
//     {"run_list": run_list, ...initial_attributes} as JSON, 0600 root (the
//     attributes may hold secrets);
//   - without /usr/bin/chef-client, or with force_install, chef is
//     installed by install_type: packages (default: the package chef),
//     gems (ruby_version's packages, then gem install chef), omnibus (the
//     script at omnibus_url, default https://www.chef.io/chef/install.sh,
//     run with -v omnibus_version); then chef-client runs with
//     exec_arguments (default -d -i 1800 -s 20) when exec is true (default
//     false, true for gems); delete_validation_post_exec removes the
//     validation key after it.
//
// Differences: values in client.rb are escaped for Ruby's double-quoted
// strings (\, " and #) and symbols (log_level, ssl_verify_mode) must be
// Ruby symbols (":info"): cloud-init writes them as given; null node_name
// and environment take their defaults (cloud-init writes "None");
// firstboot.json's keys are sorted; delete_validation_post_exec removes
// validation_key's file (cloud-init always removes
// /etc/chef/validation.pem).
func Chef(ctx context.Context, e *core.Env) error {
	c, ok, err := ccfg.Decode[ccfg.Chef](e.Cfg, "chef")
	if !ok || err != nil {
		return err
	}
	cc := &c
	rb, err := newChefRB(e, cc)
	if err != nil {
		return err
	}
	if err := chefDirectories(e, cc); err != nil {
		return err
	}
	vkey, err := chefValidation(e, cc)
	if err != nil {
		return err
	}

	for _, d := range rb.dirs {
		if err := e.Root.MkdirAll(d, 0o755, 0, 0); err != nil {
			return fmt.Errorf("chef: %w", err)
		}
	}
	if err := e.Root.WriteFile(chefClientRB, []byte(rb.text(e)), 0o644, 0, 0); err != nil {
		return fmt.Errorf("chef: %w", err)
	}
	e.Logf("chef: %s written", chefClientRB)

	if err := chefFirstbootJSON(e, cc); err != nil {
		return err
	}

	installed := false
	if fi, err := e.Root.Stat(chefExec); err == nil && fi.Mode().IsRegular() && fi.Mode().Perm()&0o111 != 0 {
		installed = true
	}
	run := false
	if !installed || cc.ForceInstall {
		if run, err = installChef(ctx, e, cc); err != nil {
			return fmt.Errorf("chef: install: %w", err)
		}
	} else {
		run = cc.Exec
	}
	if !run {
		return nil
	}
	return chefClient(ctx, e, cc, vkey)
}

// chefDirectories makes directories (default chefDirs) and /etc/chef.
func chefDirectories(e *core.Env, cc *ccfg.Chef) error {
	dirs := cc.Directories
	if len(dirs) == 0 {
		dirs = chefDirs
	}
	for i, d := range append(append([]string{}, dirs...), "/etc/chef") {
		p, err := core.ConfPath(fmt.Sprintf("chef.directories.%d", i), strings.TrimSuffix(d, "/"))
		if err != nil {
			return err
		}
		if err := e.Root.MkdirAll(p, 0o755, 0, 0); err != nil {
			return fmt.Errorf("chef: %w", err)
		}
	}
	return nil
}

// chefValidation writes validation_cert to validation_key's path, which
// it returns; "system" means the key is already there.
func chefValidation(e *core.Env, cc *ccfg.Chef) (string, error) {
	vkey, err := core.ConfPath("chef.validation_key", orString(cc.ValidationKey, chefValidationPEM))
	if err != nil {
		return "", err
	}
	// A false validation_cert (cc_chef's `if vcert:`) is "".
	if pem := string(cc.ValidationCert); pem != "" {
		switch {
		case pem != "system":
			// The validator's private key: root only, never shown.
			if err := e.Root.WriteFile(vkey, []byte(pem), 0o600, 0, 0); err != nil {
				return "", fmt.Errorf("chef.validation_cert: %w", err)
			}
			e.Logf("chef: validation key written to %s (0600, not shown)", vkey)
		case !e.Root.Exists(vkey):
			e.Logf("chef: validation_cert is system, but validation_key's %s does not exist", vkey)
		}
	}
	return vkey, nil
}

// chefFirstbootJSON writes run_list and initial_attributes to
// firstboot_path as JSON; an empty firstboot_path writes nothing.
func chefFirstbootJSON(e *core.Env, cc *ccfg.Chef) error {
	fb := orString(cc.FirstbootPath, chefFirstboot)
	if fb == "" {
		e.Logf("chef: firstboot_path is empty: no first boot JSON")
		return nil
	}
	p, err := core.ConfPath("chef.firstboot_path", fb)
	if err != nil {
		return err
	}
	js := map[string]any{}
	if cc.Given.Has("run_list") {
		js["run_list"] = cc.RunList // as given, null included
	}
	for k, x := range cc.InitialAttributes {
		js[k] = x
	}
	// json.dumps as cloud-init writes it (keys sorted here: a Go map
	// keeps no order). Attributes may hold secrets: root only.
	b, err := pyjson.Dumps(js, -1)
	if err != nil {
		return fmt.Errorf("chef.initial_attributes: %w", err)
	}
	if err := e.Root.WriteFile(p, b, 0o600, 0, 0); err != nil {
		return fmt.Errorf("chef: %w", err)
	}
	return nil
}

// chefClient runs chef-client with exec_arguments, then, with
// delete_validation_post_exec, removes the validation key vkey.
func chefClient(ctx context.Context, e *core.Env, cc *ccfg.Chef, vkey string) error {
	args := chefExecDefArgs
	switch a := cc.ExecArguments; {
	case a.Other != "":
		e.Logf("chef.exec_arguments: want a list or a string, got %s: using the defaults", a.Other)
	case a.Set:
		args = a.List // a string is one argument
	}
	if err := core.CheckArgs("chef.exec_arguments", append([]string{chefExec}, args...)); err != nil {
		return err
	}
	c := core.Cmd{Name: e.Root.Path(chefExec), Args: args, Output: e.Out()}
	e.Logf("chef: running chef-client %s", strings.Join(args, " "))
	if _, err := e.Run(ctx, c); err != nil {
		return fmt.Errorf("chef: %w", err)
	}
	if cc.DeleteValidationPostExec {
		if fi, err := e.Root.Stat(vkey); err == nil && fi.Mode().IsRegular() {
			if err := e.Root.Remove(vkey); err != nil {
				return fmt.Errorf("chef: delete_validation_post_exec: %w", err)
			}
			e.Logf("chef: %s removed after the run", vkey)
		}
	}
	return nil
}

// chefRB is client.rb's parameters, checked.
type chefRB struct {
	params map[string]string // "" is None
	dirs   []string
}

var rubySymbol = core.LazyRE{Expr: `^:[A-Za-z_][A-Za-z0-9_]*[?!]?$`}

// chefRBGiven are the values of the chef keys the template knows, for
// the keys given ("" for null, which cloud-init's None leaves out).
func chefRBGiven(cc *ccfg.Chef) map[string]string {
	showTime := ""
	if cc.ShowTime {
		showTime = "true"
	}
	all := map[string]string{
		"chef_license": cc.ChefLicense, "log_level": cc.LogLevel, "ssl_verify_mode": cc.SSLVerifyMode,
		"log_location": cc.LogLocation, "validation_name": cc.ValidationName,
		"validation_key": orString(cc.ValidationKey, ""), "client_key": cc.ClientKey, "server_url": cc.ServerURL,
		"json_attribs": cc.JSONAttribs, "file_cache_path": cc.FileCachePath, "file_backup_path": cc.FileBackupPath,
		"pid_file": cc.PIDFile, "show_time": showTime, "encrypted_data_bag_secret": cc.EncryptedDataBagSecret,
	}
	out := map[string]string{}
	for k, v := range all {
		if cc.Given.Has(k) {
			out[k] = v
		}
	}
	return out
}

// newChefRB is get_template_params: the defaults, the chef keys the
// template knows (null clears one), node_name, environment, server_url and
// validation_name; every value checked for where it goes.
func newChefRB(e *core.Env, cc *ccfg.Chef) (*chefRB, error) {
	p := map[string]string{}
	for k, v := range chefRBDefaults {
		p[k] = v
	}
	for k, v := range chefRBGiven(cc) {
		p[k] = v
	}
	if cc.ValidationCert != "" {
		p["validation_cert"] = "set" // only tested for truth: never written here
	}
	p["node_name"] = orString(cc.NodeName, e.InstanceID)
	p["environment"] = orString(cc.Environment, "_default")
	for _, k := range []string{"server_url", "validation_name"} {
		if !cc.Given.Has(k) {
			return nil, fmt.Errorf("chef.%s: missing (cloud-init requires it)", k)
		}
	}
	rb := &chefRB{params: p}
	for _, l := range chefRBLines {
		v := p[l.param]
		if v == "" || l.kind == chefFlag {
			continue
		}
		switch {
		case l.kind == chefSymbol && !rubySymbol.Get().MatchString(v):
			return nil, fmt.Errorf("chef.%s %q: want a Ruby symbol such as :info", l.param, v)
		case !utf8.ValidString(v) || !core.IniSafe(v) || strings.Contains(v, "\t"):
			return nil, fmt.Errorf("chef.%s: has a control character", l.param)
		}
	}
	seen := map[string]bool{}
	for _, k := range chefRBPathKeys {
		if v := p[k]; v != "" {
			if strings.HasPrefix(v, "/") {
				d := path.Dir(v)
				if !seen[d] {
					seen[d] = true
					rb.dirs = append(rb.dirs, d)
				}
			} else {
				e.Logf("chef.%s %q: not an absolute path: its directory is not made", k, v)
			}
		}
	}
	sort.Strings(rb.dirs)
	return rb, nil
}

// text renders client.rb as cloud-init's template does, with earlyinit's
// header.
func (rb *chefRB) text(e *core.Env) string {
	now := time.Now
	if e.Now != nil {
		now = e.Now
	}
	ver := e.Version
	if ver == "" {
		ver = "unknown"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "# Created by earlyinit v. %s on %s\n", ver, now().UTC().Format("Mon, 02 Jan 2006 15:04:05 -0700"))
	for _, l := range rb.params2lines() {
		b.WriteString(l + "\n")
	}
	b.WriteString("\n")
	return b.String()
}

func (rb *chefRB) params2lines() []string {
	p := rb.params
	var out []string
	for _, l := range chefRBLines {
		v := p[l.param]
		if l.param == "validation_key" && p["validation_cert"] == "" {
			continue
		}
		if v == "" {
			continue
		}
		switch l.kind {
		case chefFlag:
			out = append(out, l.prefix)
		case chefSymbol:
			out = append(out, l.prefix+v)
		default:
			out = append(out, l.prefix+rubyQuote(v))
		}
	}
	return out
}

// rubyQuote writes s as a Ruby double-quoted string: \, " and # (which
// starts an interpolation) escaped.
func rubyQuote(s string) string {
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`, `#`, `\#`).Replace(s) + `"`
}

// installChef is install_chef: it returns whether chef-client is to run.
func installChef(ctx context.Context, e *core.Env, cc *ccfg.Chef) (bool, error) {
	run := cc.Exec
	switch t := orString(cc.InstallType, "packages"); t {
	case "gems":
		ruby := orString(cc.RubyVersion, chefRubyDefault)
		if err := checkWord("chef.ruby_version", ruby); err != nil {
			return false, err
		}
		pkgs := []any{"ruby" + ruby, "ruby" + ruby + "-dev"}
		if ruby == "1.8" {
			pkgs = append(pkgs, "libopenssl-ruby1.8", "rubygems1.8")
		}
		if err := installPackages(ctx, e, "chef.ruby_version", pkgs); err != nil {
			return false, err
		}
		for _, l := range []string{"gem", "ruby"} {
			if !e.Root.Exists("/usr/bin/" + l) {
				if err := e.Root.Symlink("/usr/bin/"+l+ruby, "/usr/bin/"+l); err != nil {
					return false, err
				}
			}
		}
		args := []string{"install", "chef"}
		if v := cc.Version; v != "" {
			if err := checkWord("chef.version", v); err != nil {
				return false, err
			}
			args = append(args, "-v "+v)
		}
		args = append(args, "--no-ri", "--no-rdoc", "--bindir", "/usr/bin", "-q")
		c := core.Cmd{Name: e.Root.Path("/usr/bin/gem"), Args: args, Output: e.Out()}
		e.Logf("chef: /usr/bin/gem %s", strings.Join(args, " "))
		if _, err := e.Run(ctx, c); err != nil {
			return false, err
		}
		// exec defaults to true here (null is false).
		return cc.Exec || !cc.Given.Has("exec"), nil
	case "packages":
		e.Logf("chef: installing chef from packages")
		return run, installPackages(ctx, e, "chef", []any{"chef"})
	case "omnibus":
		var args []string
		if v := cc.OmnibusVersion; v != "" {
			if err := checkWord("chef.omnibus_version", v); err != nil {
				return false, err
			}
			args = []string{"-v", v}
		}
		retries := 5
		if cc.OmnibusURLRetries != nil {
			retries = *cc.OmnibusURLRetries
		}
		u := orString(cc.OmnibusURL, chefOmnibusURL)
		return run, runInstaller(ctx, e, "chef.omnibus_url", u, retries, "chef-omnibus-install", args)
	default:
		e.Logf("chef: unknown install_type %q: nothing installed, and chef-client is not run", t)
		return false, nil
	}
}
