package accounts

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/earlyinit/earlyinit/internal/accounts"
	"github.com/earlyinit/earlyinit/internal/ccfg"
	"github.com/earlyinit/earlyinit/internal/modules/core"
)

// accountsInGo tells whether users_groups changes the accounts itself
// (internal/accounts: the lines, locks, ids and home useradd, groupadd,
// usermod -a -G and passwd -l would make, without a process each) rather
// than running those tools: on roots whose useradd it is checked against
// (accounts.Supported), not on busybox roots.
func accountsInGo(e *core.Env) bool {
	if busybox(e) {
		return false
	}
	ok, _ := accounts.Supported(e.Root)
	return ok
}

// inAccounts runs fn on the root's accounts under shadow-utils' locks and
// writes what it changed; an error writes nothing.
func inAccounts(e *core.Env, fn func(tx *accounts.Tx) error) error {
	now := time.Now
	if e.Now != nil {
		now = e.Now
	}
	tx, err := accounts.Begin(e.Root, now())
	if err != nil {
		return err
	}
	if err := fn(tx); err != nil {
		tx.Close()
		return err
	}
	return tx.Commit()
}

// inProcessOpts are the useraddOpts goUseradd does; any other (today
// expiredate, inactive, no_log_init, no_user_group, selinux_user) is
// useradd's.
var inProcessOpts = map[string]bool{"gecos": true, "groups": true, "homedir": true, "primary_group": true, "shell": true, "system": true, "uid": true}

// goUseradd is addUser in-process: useraddOpts taken as cloud-init gives
// them to useradd (string values only, the flags when true).
// accounts.ErrUnsupported (nothing written) means useradd's way: an
// option internal/accounts does not do (not in inProcessOpts) or a root setting (a mail spool, a
// skeleton with links).
func goUseradd(ctx context.Context, e *core.Env, name string, cfg *ccfg.User, groups []string, noHome bool) error {
	for _, o := range useraddOpts {
		if o.get(cfg).Set() && !inProcessOpts[o.key] {
			return fmt.Errorf("%s: %w", o.key, accounts.ErrUnsupported)
		}
	}
	u := accounts.User{Name: name, Gecos: cfg.Gecos.Text(), Home: cfg.HomeDir.Text(), Shell: cfg.Shell.Text(), UID: -1,
		Groups: groups, PrimaryGroup: cfg.PrimaryGroup.Text(), System: cfg.System.True(), CreateHome: !noHome}
	if cfg.UID.Set() {
		if s := cfg.UID.Str(); s != "" {
			n, err := strconv.Atoi(s)
			if err != nil || n < 0 {
				return fmt.Errorf("uid %q: not a number", s)
			}
			u.UID = n
		}
	}
	e.Logf("creating user %s", name)
	var m accounts.Made
	err := inAccounts(e, func(tx *accounts.Tx) (err error) {
		m, err = tx.UserAdd(u)
		return err
	})
	if err != nil {
		return err
	}
	if !noHome {
		exists, err := accounts.MakeHome(e.Root, m)
		if err != nil {
			return fmt.Errorf("useradd %s: home %s: %w", name, m.Home, err)
		}
		if exists {
			e.Logf("useradd: warning: the home directory %s already exists. Not copying any file from skel directory into it.", m.Home)
		}
	}
	return newUserPasswd(ctx, e, name, cfg)
}
