package cfgmgmt

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/earlyinit/earlyinit/internal/ccfg"
	"github.com/earlyinit/earlyinit/internal/modules/core"
)

// rhSubscriptionKeys are SubscriptionManager.valid_rh_keys.
var rhSubscriptionKeys = []string{
	"org", "activation-key", "username", "password", "disable-repo", "enable-repo",
	"add-pool", "rhsm-baseurl", "server-hostname", "auto-attach", "service-level",
}

// RHSubscription is cc_rh_subscription (cloud-init 22.4.2), once per
// instance in the final stage (cloud_config_modules on RHEL, after
// set_passwords and before yum_add_repo: it needs the network), driving
// subscription-manager:
//
//   - nothing unless username and password, or activation-key, are set;
//     nothing either when `subscription-manager identity` says the system
//     is registered;
//   - the keys are checked first: only valid_rh_keys, auto-attach a
//     boolean, service-level only with auto-attach true;
//   - `register --activationkey=KEY --org=ORG`, else `register
//     --username=USER --password=PASSWORD`, each with --baseurl=
//     (rhsm-baseurl) and --serverurl= (server-hostname) when given;
//   - auto-attach: `attach --auto [--servicelevel=LEVEL]`;
//   - add-pool: the pools listed by `list --available --pool-only` and not
//     by `list --consumed --pool-only` are attached with `attach
//     --pool=ID...`;
//   - enable-repo and disable-repo: the repositories that `repos
//     --list-enabled` and `--list-disabled` say need it, with `repos
//     --disable=ID... --enable=ID...`.
//
// Secrets: subscription-manager takes the activation key only as
// --activationkey, and since 1.29.32 (RHEL 9.2) refuses to read the
// password from its standard input when that is not a terminal
// ("--password is a required parameter in non-interactive mode"): both
// go in its argv, where other local users can read them in
// /proc/PID/cmdline while it runs. They never reach a log, an error or a
// file: commands are logged and reported with their values replaced.
//
// Differences from cloud-init 22.4, which only logs warnings: a failed
// step is the module's error; auto-attach is read as a boolean (22.4
// attaches for the string "false"); pools already attached are not a
// failure; `repos` is not run with nothing to change; a registration's
// output without "ID: " is logged, not a crash.
func RHSubscription(ctx context.Context, e *core.Env) error {
	rc, ok, err := ccfg.Decode[ccfg.RHSubscription](e.Cfg, "rh_subscription")
	if !ok || err != nil {
		return err
	}
	if !(rc.Username.Truthy && rc.Password.Truthy || rc.ActivationKey.Truthy) {
		e.Logf("rh_subscription: neither username and password nor activation-key: nothing to do")
		return nil
	}
	if _, err := subman(ctx, e, []string{"identity"}, ""); err == nil {
		e.Logf("rh_subscription: the system is already registered")
		return nil
	}

	// _verify_keys
	if len(rc.Unknown) > 0 {
		return fmt.Errorf("rh_subscription.%s: not a valid key (valid: %s)", rc.Unknown[0], strings.Join(rhSubscriptionKeys, ", "))
	}
	auto := rc.AutoAttach
	if auto.Set && !auto.True && !auto.False {
		return fmt.Errorf("rh_subscription.auto-attach: want a boolean, got %s", auto.Kind)
	}
	if rc.ServiceLevel.Set && !auto.True {
		return errors.New("rh_subscription.service-level: needs auto-attach: true")
	}

	if err := rhRegister(ctx, e, &rc); err != nil {
		return err
	}

	if auto.True {
		a := []string{"attach", "--auto"}
		if rc.ServiceLevel.Set {
			l, err := rhString("service-level", rc.ServiceLevel)
			if err != nil {
				return err
			}
			a = append(a, "--servicelevel="+l)
		}
		if _, err := subman(ctx, e, a, ""); err != nil {
			return fmt.Errorf("rh_subscription: auto-attach failed: %w", err)
		}
	}

	if rc.AddPool.Set {
		pools, err := rc.AddPool.Get() // not a list: an error
		if err != nil {
			return err
		}
		if err := rhAddPools(ctx, e, pools); err != nil {
			return err
		}
	}
	if err := rhUpdateRepos(ctx, e, rc.EnableRepo, rc.DisableRepo); err != nil {
		return err
	}
	e.Logf("rh_subscription: done")
	return nil
}

// rhString is the value of key k of rh_subscription as a string for
// subscription-manager's argv.
func rhString(k string, v ccfg.Later[string]) (string, error) {
	s, err := v.Get()
	if err != nil {
		return "", err
	}
	if !core.IniSafe(s) {
		return "", fmt.Errorf("rh_subscription.%s: has a control character", k)
	}
	return s, nil
}

// rhRegister is rhn_register: `subscription-manager register` with the
// activation key and org, else the user name and password.
func rhRegister(ctx context.Context, e *core.Env, rc *ccfg.RHSubscription) error {
	args, shown, err := rhRegisterArgs(rc)
	if err != nil {
		return err
	}
	out, err := subman(ctx, e, args, shown)
	if err != nil {
		return fmt.Errorf("rh_subscription: registration failed: %w", err)
	}
	if _, id, ok := strings.Cut(string(out), "ID: "); ok {
		id, _, _ = strings.Cut(id, "\n")
		e.Logf("rh_subscription: registered with ID %s", strings.TrimSpace(id))
	} else {
		e.Logf("rh_subscription: registered (no ID in subscription-manager's output)")
	}
	return nil
}

// rhRegisterArgs is the register command's argv, and as shown: its
// secrets replaced, its URLs redacted.
func rhRegisterArgs(rc *ccfg.RHSubscription) (args []string, shown string, err error) {
	switch {
	case rc.ActivationKey.Set && rc.Org.Set:
		key, err := rhString("activation-key", rc.ActivationKey)
		if err != nil {
			return nil, "", err
		}
		org, err := rhString("org", rc.Org)
		if err != nil {
			return nil, "", err
		}
		args = []string{"register", "--activationkey=" + key, "--org=" + org}
		shown = "register --activationkey=(not shown) --org=" + org
	case rc.Username.Set && rc.Password.Set:
		user, err := rhString("username", rc.Username)
		if err != nil {
			return nil, "", err
		}
		pw, err := rhString("password", rc.Password)
		if err != nil {
			return nil, "", err
		}
		args = []string{"register", "--username=" + user, "--password=" + pw}
		shown = "register --username=" + user + " --password=(not shown)"
	default:
		return nil, "", errors.New("rh_subscription: cannot register: give activation-key and org, or username and password")
	}
	for _, o := range []struct {
		key, opt string
		v        ccfg.Later[string]
	}{{"rhsm-baseurl", "--baseurl=", rc.RHSMBaseURL}, {"server-hostname", "--serverurl=", rc.ServerHostname}} {
		if !o.v.Set {
			continue
		}
		v, err := rhString(o.key, o.v)
		if err != nil {
			return nil, "", err
		}
		args = append(args, o.opt+v)
		shown += " " + o.opt + core.RedactURL(v)
	}
	return args, shown, nil
}

// subman runs subscription-manager with args, its output returned;
// shown, when set, stands for args in the log and in an error (it hides
// the secrets).
func subman(ctx context.Context, e *core.Env, args []string, shown string) ([]byte, error) {
	if shown == "" {
		shown = strings.Join(args, " ")
	}
	shown = "subscription-manager " + shown
	e.Logf("rh_subscription: %s", shown)
	return e.RunShown(ctx, core.Cmd{Name: "subscription-manager", Args: args}, shown)
}

// rhAddPools is addPool: each pool available and not consumed attached.
func rhAddPools(ctx context.Context, e *core.Env, ids []string) error {
	if len(ids) == 0 {
		return nil
	}
	list := func(which string) ([]string, error) {
		out, err := subman(ctx, e, []string{"list", which, "--pool-only"}, "")
		if err != nil {
			return nil, fmt.Errorf("rh_subscription: %w", err)
		}
		return strings.Split(strings.TrimRight(string(out), " \t\r\n"), "\n"), nil
	}
	avail, err := list("--available")
	if err != nil {
		return err
	}
	consumed, err := list("--consumed")
	if err != nil {
		return err
	}
	args := []string{"attach"}
	var missing []string
	for _, p := range ids {
		switch {
		case slices.Contains(consumed, p):
			e.Logf("rh_subscription: pool %s is already attached", p)
		case slices.Contains(avail, p):
			if !core.IniSafe(p) {
				return fmt.Errorf("rh_subscription.add-pool: %q has a control character", p)
			}
			args = append(args, "--pool="+p)
		default:
			missing = append(missing, p)
		}
	}
	if len(args) > 1 {
		if _, err := subman(ctx, e, args, ""); err != nil {
			return fmt.Errorf("rh_subscription: unable to attach pools: %w", err)
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("rh_subscription.add-pool: not available: %s", strings.Join(missing, ", "))
	}
	return nil
}

// rhUpdateRepos is update_repos: enable-repo en, disable-repo dis.
func rhUpdateRepos(ctx context.Context, e *core.Env, en, dis ccfg.Later[ccfg.Argv]) error {
	var lists [2][]string
	for i, v := range []ccfg.Later[ccfg.Argv]{en, dis} {
		if !v.Set {
			continue
		}
		s, err := v.Get() // not a list: an error
		if err != nil {
			return err
		}
		for _, r := range s {
			if !core.IniSafe(r) {
				return fmt.Errorf("rh_subscription: repo %q has a control character", r)
			}
		}
		lists[i] = s
	}
	if len(lists[0]) == 0 && len(lists[1]) == 0 {
		return nil
	}
	repos := func(which string) ([]string, error) {
		out, err := subman(ctx, e, []string{"repos", which}, "")
		if err != nil {
			return nil, fmt.Errorf("rh_subscription: %w", err)
		}
		var ids []string
		for _, l := range strings.Split(string(out), "\n") {
			if strings.Contains(l, "Repo ID:") {
				f := strings.Split(l, ":")
				ids = append(ids, strings.TrimSpace(f[1]))
			}
		}
		return ids, nil
	}
	active, err := repos("--list-enabled")
	if err != nil {
		return err
	}
	inactive, err := repos("--list-disabled")
	if err != nil {
		return err
	}
	var enable, disable, unknown []string
	for _, r := range lists[0] {
		switch {
		case slices.Contains(inactive, r):
			enable = append(enable, "--enable="+r)
		case slices.Contains(active, r):
			e.Logf("rh_subscription: repo %s is already enabled", r)
		default:
			unknown = append(unknown, r)
		}
	}
	for _, r := range lists[1] {
		if slices.Contains(active, r) {
			disable = append(disable, "--disable="+r)
		} else {
			e.Logf("rh_subscription: repo %s not disabled: it is not enabled", r)
		}
	}
	for _, r := range unknown {
		e.Logf("rh_subscription: repo %s does not appear to exist", r)
	}
	if len(enable)+len(disable) > 0 {
		if _, err := subman(ctx, e, append(append([]string{"repos"}, disable...), enable...), ""); err != nil {
			return fmt.Errorf("rh_subscription: unable to alter repos: %w", err)
		}
	}
	return nil
}
