package accounts

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"sort"
	"strconv"
	"strings"

	"github.com/earlyinit/earlyinit/internal/accounts"
	"github.com/earlyinit/earlyinit/internal/ccfg"
	"github.com/earlyinit/earlyinit/internal/modules/core"
)

// sudoersFile holds the sudo rules of users entries (cloud-init's
// /etc/sudoers.d/90-cloud-init-users).
const sudoersFile = "/etc/sudoers.d/90-earlyinit-users"

// UsersGroups is cc_users_groups: groups first (groupadd, members added
// with usermod -a -G), then each user: useradd when it does not exist yet
// (options as cloud-init's distro.add_user, sorted by key), passwords
// through chpasswd (stdin, never logged), passwd -l unless lock_passwd is
// false, sudo rules into sudoersFile (checked with visudo -cf when the root
// has visudo), and ssh_authorized_keys appended to ~/.ssh/authorized_keys.
//
// Roots without useradd but with busybox get busybox's adduser/addgroup.
// A failing user does not stop the others; the errors are joined.
func UsersGroups(ctx context.Context, e *core.Env) error {
	groups, err := normalizeGroups(e)
	if err != nil {
		return err
	}
	users, warns, err := normalizeUsers(e)
	for _, w := range warns {
		e.Logf("%s", w)
	}
	if err != nil {
		return err
	}
	var errs []error
	for _, g := range groups {
		if err := createGroup(ctx, e, g.Name, false); err != nil {
			errs = append(errs, err)
			continue
		}
		for _, m := range g.Members {
			errs = append(errs, addMember(ctx, e, g.Name, m))
		}
	}
	var sudo []string
	for _, u := range users {
		rules, err := createUser(ctx, e, u)
		if err != nil {
			errs = append(errs, fmt.Errorf("user %s: %w", u.Name, err))
		}
		sudo = append(sudo, rules...)
	}
	if len(sudo) > 0 {
		errs = append(errs, writeSudoers(ctx, e, sudo))
	}
	return errors.Join(errs...)
}

// busybox tells whether users are made with busybox's adduser: the root
// has no useradd but has busybox.
func busybox(e *core.Env) bool {
	if _, ok := e.Tool("useradd"); ok {
		return false
	}
	_, ok := e.Has("/bin/busybox", "/usr/bin/busybox", "/sbin/busybox")
	return ok
}

func createGroup(ctx context.Context, e *core.Env, name string, system bool) error {
	if err := core.CheckNamed("group name", name); err != nil {
		return err
	}
	a, err := core.ReadAccounts(e.Root)
	if err != nil {
		return err
	}
	if _, ok := a.Group(name); ok {
		e.Logf("group %s exists", name)
		return nil
	}
	if accountsInGo(e) {
		e.Logf("creating group %s", name)
		return inAccounts(e, func(tx *accounts.Tx) error {
			_, err := tx.GroupAdd(name, system)
			return err
		})
	}
	c := core.Cmd{Name: "groupadd", Args: []string{"--", name}}
	if busybox(e) {
		c = core.Cmd{Name: "addgroup", Args: []string{name}}
		if system {
			c.Args = []string{"-S", name}
		}
	}
	e.Logf("creating group %s", name)
	_, err = e.Run(ctx, c)
	return err
}

func addMember(ctx context.Context, e *core.Env, group, user string) error {
	if err := core.CheckNamed("group "+group+": member", user); err != nil {
		return err
	}
	a, err := core.ReadAccounts(e.Root)
	if err != nil {
		return err
	}
	if _, ok := a.User(user); !ok {
		e.Logf("group %s: member %s does not exist: not added", group, user)
		return nil
	}
	if accountsInGo(e) {
		return inAccounts(e, func(tx *accounts.Tx) error { return tx.AddMember(group, user) })
	}
	c := core.Cmd{Name: "usermod", Args: []string{"-a", "-G", group, "--", user}}
	if busybox(e) {
		c = core.Cmd{Name: "addgroup", Args: []string{user, group}}
	}
	_, err = e.Run(ctx, c)
	return err
}

// useraddOpts are cloud-init's add_user options, in the sorted key order
// it applies them. passwd is not one: cloud-init passes the hash as
// useradd --password, where any local user can read it in
// /proc/<pid>/cmdline while useradd runs; here it goes to chpasswd -e on
// stdin after useradd.
var useraddOpts = []struct {
	key, opt string
	flag     bool // a flag without a value, given when the key is true
	get      func(u *ccfg.User) ccfg.PyValue
}{
	{"expiredate", "--expiredate", false, func(u *ccfg.User) ccfg.PyValue { return u.ExpireDate.PyValue }},
	{"gecos", "--comment", false, func(u *ccfg.User) ccfg.PyValue { return u.Gecos.PyValue }},
	{"groups", "--groups", false, func(u *ccfg.User) ccfg.PyValue { return u.Groups }},
	{"homedir", "--home", false, func(u *ccfg.User) ccfg.PyValue { return u.HomeDir.PyValue }},
	{"inactive", "--inactive", false, func(u *ccfg.User) ccfg.PyValue { return u.Inactive.PyValue }},
	{"no_log_init", "--no-log-init", true, func(u *ccfg.User) ccfg.PyValue { return u.NoLogInit.PyValue }},
	{"no_user_group", "--no-user-group", true, func(u *ccfg.User) ccfg.PyValue { return u.NoUserGroup.PyValue }},
	{"primary_group", "--gid", false, func(u *ccfg.User) ccfg.PyValue { return u.PrimaryGroup.PyValue }},
	{"selinux_user", "--selinux-user", false, func(u *ccfg.User) ccfg.PyValue { return u.SELinuxUser.PyValue }},
	{"shell", "--shell", false, func(u *ccfg.User) ccfg.PyValue { return u.Shell.PyValue }},
	{"system", "--system", true, func(u *ccfg.User) ccfg.PyValue { return u.System.PyValue }},
	{"uid", "--uid", false, func(u *ccfg.User) ccfg.PyValue { return u.UID }},
}

// createUser makes one user and returns its sudo rules.
func createUser(ctx context.Context, e *core.Env, u userSpec) ([]string, error) {
	cfg := &u.Cfg
	for _, k := range []struct {
		key string
		v   ccfg.PyValue
	}{{"snapuser", cfg.SnapUser.PyValue}, {"ssh_redirect_user", cfg.SSHRedirectUser.PyValue}} {
		if k.v.Given() {
			e.Logf("user %s: %s is not supported by earlyinit: ignored", u.Name, k.key)
		}
	}
	if err := core.CheckNamed("user name", u.Name); err != nil {
		return nil, err
	}
	if err := checkUserPasswords(cfg); err != nil {
		return nil, err
	}
	groups, err := cfg.Groups.Strings("groups", true)
	if err != nil {
		return nil, err
	}
	if len(groups) > 0 {
		cfg.Groups = ccfg.PyValueOf(strings.Join(groups, ","))
	}
	if err := ensureUser(ctx, e, u.Name, cfg, groups); err != nil {
		return nil, err
	}
	if err := userPasswords(ctx, e, u.Name, cfg); err != nil {
		return nil, err
	}
	rules, err := sudoRules(e, u.Name, cfg)
	if err != nil {
		return nil, err
	}
	if err := userAuthorizedKeys(e, u.Name, cfg); err != nil {
		return rules, err
	}
	return rules, nil
}

// ensureUser adds user name, and its groups unless create_groups is false,
// when the root does not have it yet.
func ensureUser(ctx context.Context, e *core.Env, name string, cfg *ccfg.User, groups []string) error {
	a, err := core.ReadAccounts(e.Root)
	if err != nil {
		return err
	}
	if _, exists := a.User(name); exists {
		e.Logf("user %s exists: not created", name)
		return nil
	}
	if !cfg.CreateGroups.Set() || cfg.CreateGroups.True() {
		want := groups
		if pg := cfg.PrimaryGroup.Str(); pg != "" {
			want = append(append([]string{}, groups...), pg)
		}
		for _, g := range want {
			if err := createGroup(ctx, e, g, false); err != nil {
				return err
			}
		}
	}
	return addUser(ctx, e, name, cfg, groups)
}

// userPasswords is the password part of cloud-init's create_user, for a
// new or an existing user: plain_text_passwd through chpasswd, then
// hashed_passwd through chpasswd -e (each when Python would call it true:
// not null, "", 0 or false), then passwd -l unless lock_passwd (or the
// later lock-passwd) is there and not true in Python's sense: null, false,
// 0 and "" keep the password unlocked, "false" (a string) locks it, as
// kwargs.get("lock_passwd", True) does. A locked password that chpasswd
// sets later (set_passwords) is unlocked: chpasswd replaces the field.
func userPasswords(ctx context.Context, e *core.Env, name string, cfg *ccfg.User) error {
	if v := cfg.PlainTextPasswd; v.Truthy() {
		if err := chpasswd(ctx, e, []string{name + ":" + v.Str()}, false); err != nil {
			return err
		}
	}
	if v := cfg.HashedPasswd; v.Truthy() {
		if err := chpasswd(ctx, e, []string{name + ":" + v.Str()}, true); err != nil {
			return err
		}
	}
	lock := true
	if cfg.LockPasswd.Given() {
		lock = cfg.LockPasswd.Truthy()
	} else if cfg.OldLockPasswd.Given() {
		lock = cfg.OldLockPasswd.Truthy()
	}
	if lock {
		return lockPasswd(ctx, e, name)
	}
	return nil
}

// sudoRules is the user's sudo key as "name rule" lines for sudoersFile.
func sudoRules(e *core.Env, name string, cfg *ccfg.User) ([]string, error) {
	var rules []string
	b, isBool := cfg.Sudo.Bool()
	switch {
	case !cfg.Sudo.Set():
	case isBool:
		if b {
			return nil, errors.New(`sudo: true is not a rule; write "ALL=(ALL) NOPASSWD:ALL"`)
		}
		e.Logf("user %s: sudo: false is deprecated, use null", name)
	default:
		rs, err := cfg.Sudo.Strings("sudo", false)
		if err != nil {
			return nil, err
		}
		for _, r := range rs {
			if strings.ContainsAny(r, "\n\r") {
				return nil, fmt.Errorf("sudo rule %q: has a newline", r)
			}
			rules = append(rules, name+" "+r)
		}
	}
	return rules, nil
}

// userAuthorizedKeys appends ssh_authorized_keys (a list, a string or a map
// whose values are keys) to the user's ~/.ssh/authorized_keys.
func userAuthorizedKeys(e *core.Env, name string, cfg *ccfg.User) error {
	k := cfg.SSHAuthorizedKeys
	if !k.Set() {
		return nil
	}
	keys, isMap := k.MapValues()
	if isMap {
		sort.Strings(keys)
	} else {
		var err error
		if keys, err = k.Strings("ssh_authorized_keys", false); err != nil {
			return err
		}
	}
	return addAuthorizedKeys(e, name, keys, "")
}

func addUser(ctx context.Context, e *core.Env, name string, cfg *ccfg.User, groups []string) error {
	noHome := cfg.NoCreateHome.True() || cfg.System.True()
	if busybox(e) {
		return busyboxAddUser(ctx, e, name, cfg, groups, noHome)
	}
	if accountsInGo(e) {
		err := goUseradd(ctx, e, name, cfg, groups, noHome)
		if !errors.Is(err, accounts.ErrUnsupported) {
			return err
		}
		e.Logf("user %s: %v: running the root's tools", name, err)
	}
	args := []string{name}
	for _, o := range useraddOpts {
		v := o.get(cfg)
		if !v.Set() {
			continue
		}
		if o.flag {
			if v.True() {
				args = append(args, o.opt)
			}
			continue
		}
		s := v.Str()
		if o.key == "uid" {
			if _, err := strconv.Atoi(s); err != nil {
				return fmt.Errorf("uid %q: not a number", s)
			}
		}
		if (v.IsString() || o.key == "uid") && s != "" {
			args = append(args, o.opt, s)
		}
	}
	if noHome {
		args = append(args, "-M")
	} else {
		args = append(args, "-m")
	}
	e.Logf("creating user %s", name)
	_, err := e.Exec.Run(ctx, core.Cmd{Name: "useradd", Args: args})
	if err != nil {
		return fmt.Errorf("useradd %s failed: %w", name, redactErr(err))
	}
	return newUserPasswd(ctx, e, name, cfg)
}

// newUserPasswd sets a new user's passwd, the hash cloud-init gives
// useradd --password when it is a non-empty string (anything else is not
// passed), with chpasswd -e on stdin: the same field in /etc/shadow, set
// verbatim, but not on a command line any local user can read.
func newUserPasswd(ctx context.Context, e *core.Env, name string, cfg *ccfg.User) error {
	pw := cfg.Passwd.Text()
	if pw == "" {
		return nil
	}
	return chpasswd(ctx, e, []string{name + ":" + pw}, true)
}

// checkUserPasswords refuses, before any tool runs for the user, a
// password that would be a second chpasswd line (a line break or a NUL)
// and a hash holding a ":". The value is never in the error.
func checkUserPasswords(cfg *ccfg.User) error {
	for _, p := range []struct {
		key string
		v   ccfg.PyValue
	}{{"passwd", cfg.Passwd.PyValue}, {"plain_text_passwd", cfg.PlainTextPasswd.PyValue}, {"hashed_passwd", cfg.HashedPasswd.PyValue}} {
		if !p.v.Truthy() {
			continue
		}
		check := checkHash
		if p.key == "plain_text_passwd" {
			check = checkPassword
		}
		if err := check(p.v.Str()); err != nil {
			return fmt.Errorf("%s %w: not set", p.key, err)
		}
	}
	return nil
}

// redactErr keeps an error's exit status but not its text, which might
// echo a password.
func redactErr(err error) error {
	if c, ok := core.ExitCode(err); ok {
		return fmt.Errorf("exit status %d", c)
	}
	return errors.New("failed")
}

func busyboxAddUser(ctx context.Context, e *core.Env, name string, cfg *ccfg.User, groups []string, noHome bool) error {
	args := []string{"-D"}
	if s := cfg.Gecos.Str(); s != "" {
		args = append(args, "-g", s)
	}
	if s := cfg.HomeDir.Str(); s != "" {
		args = append(args, "-h", s)
	}
	if s := cfg.Shell.Str(); s != "" {
		args = append(args, "-s", s)
	}
	if s := cfg.PrimaryGroup.Str(); s != "" {
		args = append(args, "-G", s)
	}
	if cfg.System.True() {
		args = append(args, "-S")
	}
	if noHome {
		args = append(args, "-H")
	}
	if s := cfg.UID.Str(); s != "" {
		if _, err := strconv.Atoi(s); err != nil {
			return fmt.Errorf("uid %q: not a number", s)
		}
		args = append(args, "-u", s)
	}
	args = append(args, name)
	e.Logf("creating user %s (busybox adduser)", name)
	if _, err := e.Run(ctx, core.Cmd{Name: "adduser", Args: args}); err != nil {
		return err
	}
	if err := newUserPasswd(ctx, e, name, cfg); err != nil {
		return err
	}
	for _, g := range groups {
		if _, err := e.Run(ctx, core.Cmd{Name: "addgroup", Args: []string{name, g}}); err != nil {
			return err
		}
	}
	return nil
}

// chpasswd feeds name:password lines to the root's chpasswd (-e for
// hashes). The lines are the command's stdin only: no log, no error text.
func chpasswd(ctx context.Context, e *core.Env, lines []string, hashed bool) error {
	if e.Exec == nil {
		return core.ErrNoExec
	}
	c := core.Cmd{Name: "chpasswd", Stdin: []byte(strings.Join(lines, "\n") + "\n")}
	if hashed {
		c.Args = []string{"-e"}
	}
	names := make([]string, len(lines))
	for i, l := range lines {
		names[i], _, _ = strings.Cut(l, ":")
	}
	e.Logf("setting password (%s) for %s", map[bool]string{true: "hashed", false: "text"}[hashed], strings.Join(names, ", "))
	if _, err := e.Exec.Run(ctx, c); err != nil {
		return fmt.Errorf("chpasswd for %s failed: %w", strings.Join(names, ", "), redactErr(err))
	}
	return nil
}

// lockPasswd is distro.lock_passwd: passwd -l, or usermod --lock without
// passwd.
func lockPasswd(ctx context.Context, e *core.Env, name string) error {
	if accountsInGo(e) {
		return inAccounts(e, func(tx *accounts.Tx) error { return tx.Lock(name) })
	}
	c := core.Cmd{Name: "passwd", Args: []string{"-l", "--", name}}
	if _, ok := e.Tool("passwd"); !ok {
		if _, ok := e.Tool("usermod"); ok {
			c = core.Cmd{Name: "usermod", Args: []string{"--lock", "--", name}}
		}
	}
	_, err := e.Run(ctx, c)
	return err
}

// writeSudoers writes sudoersFile with rules ("user rule" lines), after
// checking a candidate copy with visudo -cf when the root has visudo (a
// broken file in /etc/sudoers.d breaks sudo for everyone), and makes sure
// /etc/sudoers includes /etc/sudoers.d.
func writeSudoers(ctx context.Context, e *core.Env, rules []string) error {
	content := "# Created by earlyinit from cloud-config users entries.\n\n" + strings.Join(rules, "\n") + "\n"
	if _, ok := e.Has("/usr/sbin/visudo", "/sbin/visudo"); ok {
		// sudo ignores files with a "." in /etc/sudoers.d.
		cand := sudoersFile + ".check"
		if err := e.Root.WriteFile(cand, []byte(content), 0o440, 0, 0); err != nil {
			return err
		}
		_, err := e.Run(ctx, core.Cmd{Name: "visudo", Args: []string{"-cf", e.Root.Path(cand)}})
		e.Root.Remove(cand)
		if err != nil {
			return fmt.Errorf("sudo rules refused by visudo, %s not written: %w", sudoersFile, err)
		}
	}
	if err := ensureSudoInclude(e); err != nil {
		return err
	}
	if err := e.Root.MkdirAll("/etc/sudoers.d", 0o750, 0, 0); err != nil {
		return err
	}
	return e.Root.WriteFile(sudoersFile, []byte(content), 0o440, 0, 0)
}

// ensureSudoInclude is distro.ensure_sudo_dir: /etc/sudoers gets an
// "#includedir /etc/sudoers.d" unless it has one (or @includedir).
func ensureSudoInclude(e *core.Env) error {
	old, err := e.Root.ReadFile("/etc/sudoers")
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	for _, l := range strings.Split(string(old), "\n") {
		f := strings.Fields(l)
		if len(f) == 2 && (f[0] == "#includedir" || f[0] == "@includedir") && strings.TrimSuffix(f[1], "/") == "/etc/sudoers.d" {
			return nil
		}
	}
	add := "\n# Added by earlyinit\n#includedir /etc/sudoers.d\n"
	if len(old) == 0 {
		return e.Root.WriteFile("/etc/sudoers", []byte("# See sudoers(5) for more information on \"#include\" directives:\n"+add), 0o440, 0, 0)
	}
	return e.Root.AppendFile("/etc/sudoers", []byte(add), 0o440, 0, 0)
}
