package modules

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"math/big"
	"strings"
)

// hashedRE tells a crypt hash in chpasswd.list; compiled on first use.
var hashedRE = lazyRE{expr: `^\$(1|2a|2y|5|6)(\$.+){2}`}

// setPasswords is cc_set_passwords:
//
//   - chpasswd.users: {name, password, type: text|hash|RANDOM};
//     chpasswd.list (deprecated): "name:password" lines, a password that
//     looks like a crypt hash being a hash, R or RANDOM a random one;
//     password: the default user's password when neither is given;
//   - text passwords go to chpasswd, hashes to chpasswd -e, both on stdin;
//   - chpasswd.expire (default true): passwd --expire for each user set;
//   - random passwords are kept in RandomPasswordsFile, 0600 (cloud-init prints
//     them to the console), never to the runner's log;
//   - ssh_pwauth true/false: PasswordAuthentication yes/no where sshd
//     reads it first (setSshdOptions), sshd reloaded if it runs;
//     "unchanged" or missing leaves sshd alone;
//   - with earlyinit.inject_user_password, the platform's password for
//     the default user, and the default user's password kept for
//     post_password (see platform_password.go).
//
// A password holding a line break or a NUL is refused (it would be a
// second chpasswd line). Passwords never reach the log or an error
// message.
func setPasswords(ctx context.Context, e *Env) error {
	var pw passwords
	expire := true
	if c, ok := e.Cfg["chpasswd"]; ok && c != nil {
		ch, ok := c.(map[string]any)
		if !ok {
			return fmt.Errorf("chpasswd: want a map, got %s", kind(c))
		}
		expire = cfgBool(ch, "expire", true)
		if err := pw.addUsers(ch["users"]); err != nil {
			return err
		}
		if err := pw.addList(e, ch["list"]); err != nil {
			return err
		}
	}
	var errs []error
	if len(pw.text) == 0 && len(pw.hashed) == 0 {
		if p := cfgString(e.Cfg, "password", ""); p != "" {
			u := e.defaultUserName()
			switch {
			case checkPassword(p) != nil:
				errs = append(errs, fmt.Errorf("password: %w: not set", checkPassword(p)))
			case u != "":
				pw.text = append(pw.text, [2]string{u, p})
			default:
				e.logf("password: no default user to set it for")
			}
		}
	}
	inject, du := injectUserPassword(e), ""
	if inject {
		du = e.defaultUserName()
		errs = append(errs, e.addPlatformPassword(&pw, du))
	}
	textErr, setErrs := pw.set(ctx, e, expire)
	errs = append(errs, setErrs...)
	if inject && textErr == nil {
		errs = append(errs, e.keepForPost(&pw, du))
	}
	errs = append(errs, e.sshPwauth(ctx))
	return errors.Join(errs...)
}

// passwords are the {name, password} pairs set_passwords sets: text ones
// for chpasswd, hashes for chpasswd -e, and the random ones (also in text)
// as "name:password" lines to keep.
type passwords struct {
	text, hashed [][2]string
	random       []string
}

// has tells whether name has a password in pw.
func (pw *passwords) has(name string) bool {
	_, ok := pw.textOf(name)
	for _, p := range pw.hashed {
		ok = ok || p[0] == name
	}
	return ok
}

// textOf is name's clear-text password in pw (the last, as chpasswd
// applies them in order).
func (pw *passwords) textOf(name string) (p string, ok bool) {
	for _, t := range pw.text {
		if t[0] == name {
			p, ok = t[1], true
		}
	}
	return p, ok
}

// addRandom gives name a new random password.
func (pw *passwords) addRandom(name string) error {
	p, err := randomPassword()
	if err != nil {
		return err
	}
	pw.text = append(pw.text, [2]string{name, p})
	pw.random = append(pw.random, name+":"+p)
	return nil
}

// addUsers reads chpasswd.users: {name, password, type: text|hash|RANDOM}.
func (pw *passwords) addUsers(u any) error {
	if u == nil {
		return nil
	}
	list, ok := u.([]any)
	if !ok {
		return fmt.Errorf("chpasswd.users: want a list, got %s", kind(u))
	}
	for i, it := range list {
		m, ok := it.(map[string]any)
		if !ok {
			return fmt.Errorf("chpasswd.users.%d: want a map, got %s", i, kind(it))
		}
		name := cfgString(m, "name", "")
		if name == "" {
			return fmt.Errorf("chpasswd.users.%d: name is missing", i)
		}
		if err := checkName(name); err != nil {
			return fmt.Errorf("chpasswd.users.%d: name: %w", i, err)
		}
		typ := cfgString(m, "type", "hash")
		p := cfgString(m, "password", "")
		switch {
		case typ == "RANDOM" || (typ != "text" && typ != "hash"):
			if typ != "RANDOM" {
				return fmt.Errorf("chpasswd.users.%d: type: want text, hash or RANDOM", i) // never the value: it may be a misplaced password
			}
			if err := pw.addRandom(name); err != nil {
				return err
			}
		case p == "":
			return fmt.Errorf("chpasswd.users.%d: password is missing", i)
		case checkPassword(p) != nil:
			return fmt.Errorf("chpasswd.users.%d: password %w: not set", i, checkPassword(p))
		case typ == "text":
			pw.text = append(pw.text, [2]string{name, p})
		default:
			pw.hashed = append(pw.hashed, [2]string{name, p})
		}
	}
	return nil
}

// addList reads the deprecated chpasswd.list: "name:password" lines, a
// password that looks like a crypt hash being a hash, R or RANDOM a random
// one.
func (pw *passwords) addList(e *Env, list any) error {
	var lines []string
	switch l := list.(type) {
	case nil:
	case string:
		e.logf("chpasswd.list as a multi-line string is deprecated: use chpasswd.users")
		lines = strings.Split(l, "\n")
	case []any:
		e.logf("chpasswd.list is deprecated: use chpasswd.users")
		for _, x := range l {
			lines = append(lines, scalarString(x))
		}
	default:
		return fmt.Errorf("chpasswd.list: want a list, got %s", kind(l))
	}
	for i, line := range lines {
		if strings.TrimSpace(line) == "" {
			continue
		}
		u, p, ok := strings.Cut(line, ":")
		if !ok || u == "" {
			return fmt.Errorf("chpasswd.list.%d: want name:password", i)
		}
		if err := checkName(u); err != nil {
			return fmt.Errorf("chpasswd.list.%d: name: %w", i, err)
		}
		if err := checkPassword(p); err != nil {
			return fmt.Errorf("chpasswd.list.%d: password %w: not set", i, err)
		}
		switch {
		case hashedRE.get().MatchString(p) && !strings.Contains(p, ":"):
			pw.hashed = append(pw.hashed, [2]string{u, p})
		case p == "R" || p == "RANDOM":
			if err := pw.addRandom(u); err != nil {
				return err
			}
		default:
			pw.text = append(pw.text, [2]string{u, p})
		}
	}
	return nil
}

// set runs chpasswd for the text and the hashed passwords, keeps the random
// ones and, with expire, expires every password set; it returns each
// step's error (nil for success), in that order, and textErr, the text
// chpasswd's alone (nil when there was none to run).
func (pw *passwords) set(ctx context.Context, e *Env, expire bool) (textErr error, errs []error) {
	if len(pw.text) > 0 {
		textErr = e.chpasswd(ctx, chpasswdLines(pw.text), false)
		errs = append(errs, textErr)
	}
	if len(pw.hashed) > 0 {
		errs = append(errs, e.chpasswd(ctx, chpasswdLines(pw.hashed), true))
	}
	if len(pw.random) > 0 {
		errs = append(errs, e.keepRandom(pw.random))
	}
	if expire {
		for _, p := range append(pw.text, pw.hashed...) {
			_, err := e.run(ctx, Cmd{Name: "passwd", Args: []string{"--expire", "--", p[0]}})
			errs = append(errs, err)
		}
	}
	return textErr, errs
}

// chpasswdLines is pairs as chpasswd's "name:password" lines.
func chpasswdLines(pairs [][2]string) []string {
	out := make([]string, len(pairs))
	for i, p := range pairs {
		out[i] = p[0] + ":" + p[1]
	}
	return out
}

// sshPwauth is handle_ssh_pwauth: ssh_pwauth true or false sets
// PasswordAuthentication yes or no; null, "unchanged" or another word
// leaves sshd alone. sshd is reloaded only when the setting changed and
// sshd runs.
func (e *Env) sshPwauth(ctx context.Context) error {
	v, ok := e.Cfg["ssh_pwauth"]
	if !ok || v == nil {
		return nil
	}
	val := ""
	switch {
	case isTrue(v):
		val = "yes"
	case isFalse(v):
		val = "no"
	default:
		if s, ok := v.(string); !ok || !strings.EqualFold(s, "unchanged") {
			e.logf("ssh_pwauth: unrecognized value %v: PasswordAuthentication left unchanged", v)
		}
		return nil
	}
	return e.updateSshd(ctx, "ssh_pwauth", []sshdOption{{Key: "PasswordAuthentication", Value: val}})
}

// pwChars is cloud-init's PW_SET: letters and digits without l, I, O, 0, 1.
const pwChars = "abcdefghijkmnopqrstuvwxyzABCDEFGHJKLMNPQRSTUVWXYZ23456789"

func randomPassword() (string, error) {
	b := make([]byte, 20)
	for i := range b {
		n, err := rand.Int(rand.Reader, big.NewInt(int64(len(pwChars))))
		if err != nil {
			return "", fmt.Errorf("random password: %w", err)
		}
		b[i] = pwChars[n.Int64()]
	}
	return string(b), nil
}

// RandomPasswordsFile, in the instance's directory, keeps the random
// passwords chpasswd set, 0600 root. cloud-init prints them to the console
// and its output log; a password in a log is a secret in a log, so here the
// log says only whose they are and where.
const RandomPasswordsFile = "random-passwords"

func (e *Env) keepRandom(random []string) error {
	name := e.instanceDir() + "/" + RandomPasswordsFile
	if err := e.Root.AppendFile(name, []byte(strings.Join(random, "\n")+"\n"), 0o600, 0, 0); err != nil {
		return fmt.Errorf("chpasswd: keep the random passwords: %w", err)
	}
	users := make([]string, len(random))
	for i, r := range random {
		users[i], _, _ = strings.Cut(r, ":")
	}
	e.logf("chpasswd: random passwords for %s are in %s (root only)", strings.Join(users, ", "), name)
	return nil
}
