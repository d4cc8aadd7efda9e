package accounts

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"math/big"
	"strings"

	"github.com/earlyinit/earlyinit/internal/ccfg"
	"github.com/earlyinit/earlyinit/internal/modules/core"

	"github.com/earlyinit/earlyinit/internal/modules/sshd"
)

// hashedRE tells a crypt hash in `password` and chpasswd.list, as
// cc_set_passwords does (anchored at the start only, as Python's
// re.match); compiled on first use.
var hashedRE = core.LazyRE{Expr: `^\$(1|2a|2y|5|6)(\$.+){2}`}

// isCryptHash is cloud-init's test for a hashed password in `password`
// and chpasswd.list lines: hashedRE matches and there is no ":".
func isCryptHash(p string) bool {
	return hashedRE.Get().MatchString(p) && !strings.Contains(p, ":")
}

// SetPasswords is cc_set_passwords (cloud-init 22.4):
//
//   - chpasswd.users: {name, password, type: hash (the default), text or
//     RANDOM}; chpasswd.list (deprecated): "name:password" lines, a list
//     or a multi-line string, a password that isCryptHash being a hash, R
//     or RANDOM a random one, any other a clear-text one; password: the
//     default user's, taken as a chpasswd.list line (a hash is a hash, R a
//     random one) and only when chpasswd has neither users nor list;
//   - the clear-text passwords go to chpasswd in cloud-init's order
//     (users' text entries, users' RANDOM entries, then list's text and
//     random lines), the hashes to chpasswd -e (users' hash entries, then
//     list's), each on stdin;
//   - random passwords are kept in randomPasswordsFile (0600 root) and
//     nowhere else: cloud-init prints them on /dev/console ("Set the
//     following 'random' passwords"), which earlyinit does not, since no
//     secret reaches a console (docs/security.md); the runner's log says
//     whose they are and where;
//   - chpasswd.expire (cloud-init's translate_bool, default true): passwd
//     --expire for every user set, the clear-text ones then the hashed
//     ones (EXPIRE_APPLIES_TO_HASHED_USERS is true in 22.4), also after a
//     chpasswd failed, as cloud-init does;
//   - ssh_pwauth true/false: PasswordAuthentication yes/no where sshd
//     reads it first (setSshdOptions), sshd reloaded if it runs;
//     "unchanged" or missing leaves sshd alone; it is applied even when
//     a password could not be set;
//   - with earlyinit.inject_user_password, the platform's password for
//     the default user, and the default user's password kept for
//     post_password (see platform_password.go).
//
// A password holding a line break or a NUL is refused (it would be a
// second chpasswd line), and so is a hash holding a ":"; such an entry,
// or a bad name, refuses the whole configuration before any tool runs.
// Passwords and hashes never reach the log or an error message.
func SetPasswords(ctx context.Context, e *core.Env) error {
	var pw passwords
	ch, _, err := ccfg.Decode[*ccfg.Chpasswd](e.Cfg, "chpasswd")
	if err != nil {
		return err
	}
	expire := true
	var users []ccfg.ChpasswdUser
	var list []string
	if ch != nil {
		expire, users, list = ch.Expire, ch.Users, ch.List
		switch {
		case len(list) == 0:
		case ch.ListText:
			e.Logf("chpasswd.list is deprecated, and so is its multi-line string form: use chpasswd.users")
		default:
			e.Logf("chpasswd.list is deprecated: use chpasswd.users")
		}
	}
	// listKey(i) starts the errors about line i, and about its password.
	listKey := func(i int) (string, string) {
		k := fmt.Sprintf("chpasswd.list.%d: ", i)
		return k, k + "password "
	}
	if len(users) == 0 && len(list) == 0 {
		p, _, err := ccfg.Decode[string](e.Cfg, "password")
		if err != nil {
			return err
		}
		if p != "" {
			if u := defaultUserName(e); u != "" {
				list = []string{u + ":" + p}
				listKey = func(int) (string, string) { return "password: ", "password: " }
			} else {
				e.Logf("password: no default or defined user to change the password of")
			}
		}
	}
	if err := pw.addUsers(users); err != nil {
		return err
	}
	if err := pw.addList(list, listKey); err != nil {
		return err
	}
	var errs []error
	inject, du := injectUserPassword(e), ""
	if inject {
		du = defaultUserName(e)
		errs = append(errs, addPlatformPassword(e, &pw, du))
	}
	textErr, setErrs := pw.set(ctx, e, expire)
	errs = append(errs, setErrs...)
	if inject && textErr == nil {
		errs = append(errs, keepForPost(e, &pw, du))
	}
	errs = append(errs, sshPwauth(ctx, e))
	return errors.Join(errs...)
}

// passwords are the {name, password} pairs set_passwords sets: clear-text
// ones for chpasswd and hashes for chpasswd -e, each in the order chpasswd
// gets them, and the random ones (also in text) as "name:password" lines
// for the console and randomPasswordsFile.
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

// checkHash refuses a hash chpasswd -e could not store: checkPassword's
// line break or NUL, or a ":" (a field separator of /etc/shadow).
func checkHash(p string) error {
	if err := checkPassword(p); err != nil {
		return err
	}
	if strings.Contains(p, ":") {
		return errors.New(`contains a ":", which no hash holds`)
	}
	return nil
}

// addUsers reads chpasswd.users: {name, password, type: hash|text|RANDOM}.
// As cloud-init's get_users_by_type: the text entries, then the RANDOM
// ones, go to chpasswd; the hash entries to chpasswd -e. Every entry is
// checked before any is added. cloud-init sets the literal password
// "RANDOM" for a text or hash entry without a password, and skips an
// entry of another type: both are refused here (the schema refuses them).
func (pw *passwords) addUsers(list []ccfg.ChpasswdUser) error {
	type entry struct{ name, typ, password string }
	var ents []entry
	for i, u := range list {
		name := u.Name.Str()
		if name == "" {
			return fmt.Errorf("chpasswd.users.%d: name is missing", i)
		}
		if err := core.CheckName(name); err != nil {
			return fmt.Errorf("chpasswd.users.%d: name: %w", i, err)
		}
		typ, p := u.Type.Str(), u.Password.Str()
		if !u.Type.Set() {
			typ = "hash"
		}
		switch {
		case typ == "RANDOM":
			p = ""
		case typ != "text" && typ != "hash":
			return fmt.Errorf("chpasswd.users.%d: type: want text, hash or RANDOM", i) // never the value: it may be a misplaced password
		case p == "":
			return fmt.Errorf("chpasswd.users.%d: password is missing", i)
		case typ == "hash":
			if err := checkHash(p); err != nil {
				return fmt.Errorf("chpasswd.users.%d: password %w: not set", i, err)
			}
		default:
			if err := checkPassword(p); err != nil {
				return fmt.Errorf("chpasswd.users.%d: password %w: not set", i, err)
			}
		}
		ents = append(ents, entry{name, typ, p})
	}
	for _, en := range ents {
		switch en.typ {
		case "text":
			pw.text = append(pw.text, [2]string{en.name, en.password})
		case "hash":
			pw.hashed = append(pw.hashed, [2]string{en.name, en.password})
		}
	}
	for _, en := range ents {
		if en.typ == "RANDOM" {
			if err := pw.addRandom(en.name); err != nil {
				return err
			}
		}
	}
	return nil
}

// addList reads "name:password" lines (chpasswd.list, or the default
// user's `password`), key(i) starting the errors about line i and about
// its password: a password that
// isCryptHash is a hash, R or RANDOM a random one, any other clear text.
// Blank lines are skipped (cloud-init fails on them). Every line is
// checked before any is added.
func (pw *passwords) addList(lines []string, key func(int) (line, password string)) error {
	type entry struct{ name, password string }
	var ents []entry
	for i, line := range lines {
		if strings.TrimSpace(line) == "" {
			continue
		}
		u, p, ok := strings.Cut(line, ":")
		if !ok || u == "" {
			k, _ := key(i)
			return fmt.Errorf("%swant name:password", k)
		}
		if err := core.CheckName(u); err != nil {
			k, _ := key(i)
			return fmt.Errorf("%sname: %w", k, err)
		}
		if err := checkPassword(p); err != nil {
			_, k := key(i)
			return fmt.Errorf("%s%w: not set", k, err)
		}
		ents = append(ents, entry{u, p})
	}
	for _, en := range ents {
		switch {
		case isCryptHash(en.password):
			pw.hashed = append(pw.hashed, [2]string{en.name, en.password})
		case en.password == "R" || en.password == "RANDOM":
			if err := pw.addRandom(en.name); err != nil {
				return err
			}
		default:
			pw.text = append(pw.text, [2]string{en.name, en.password})
		}
	}
	return nil
}

// set runs chpasswd for the clear-text and the hashed passwords, shows
// and keeps the random ones and, with expire, expires every password set
// (text ones first, as cloud-init); it returns each step's error (nil
// for success), in that order, and textErr, the clear-text chpasswd's
// alone (nil when there was none to run).
func (pw *passwords) set(ctx context.Context, e *core.Env, expire bool) (textErr error, errs []error) {
	if len(pw.text) > 0 {
		textErr = chpasswd(ctx, e, chpasswdLines(pw.text), false)
		errs = append(errs, textErr)
	}
	if len(pw.hashed) > 0 {
		errs = append(errs, chpasswd(ctx, e, chpasswdLines(pw.hashed), true))
	}
	if len(pw.random) > 0 {
		errs = append(errs, keepRandom(e, pw.random))
	}
	if expire {
		var expired []string
		for _, p := range append(append([][2]string{}, pw.text...), pw.hashed...) {
			_, err := e.Run(ctx, core.Cmd{Name: "passwd", Args: []string{"--expire", "--", p[0]}})
			if err != nil {
				err = fmt.Errorf("expire the password of %s: %w", p[0], err)
			} else {
				expired = append(expired, p[0])
			}
			errs = append(errs, err)
		}
		if len(expired) > 0 {
			e.Logf("expired passwords of %s", strings.Join(expired, ", "))
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

// sshPwauth is handle_ssh_pwauth: ssh_pwauth true or false (or a word
// cloud-init's is_true/is_false takes) sets PasswordAuthentication yes or
// no; null, "unchanged" or another word leaves sshd alone. sshd is
// reloaded only when the setting changed and sshd runs.
func sshPwauth(ctx context.Context, e *core.Env) error {
	v, _, err := ccfg.Decode[*ccfg.PyValue](e.Cfg, "ssh_pwauth")
	if err != nil || v == nil {
		return err
	}
	val := ""
	switch {
	case v.True():
		val = "yes"
	case v.False():
		val = "no"
	default:
		if !v.IsString() || !strings.EqualFold(v.Text(), "unchanged") {
			e.Logf("ssh_pwauth: unrecognized value %s: PasswordAuthentication left unchanged", v.Str())
		}
		return nil
	}
	if v.IsString() {
		e.Logf("ssh_pwauth as a string is deprecated: use true or false")
	}
	return sshd.Update(ctx, e, "ssh_pwauth", []sshd.Option{{Key: "PasswordAuthentication", Value: val}})
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

// randomPasswordsFile, in the instance's directory, keeps the random
// passwords chpasswd set, 0600 root, for root to read once the console
// has scrolled past them.
const randomPasswordsFile = "random-passwords"

// keepRandom keeps random ("name:password" lines) in randomPasswordsFile,
// the only place they are written. The runner's log says only whose they
// are and where.
func keepRandom(e *core.Env, random []string) error {
	users := make([]string, len(random))
	for i, r := range random {
		users[i], _, _ = strings.Cut(r, ":")
	}
	name := e.InstanceDir() + "/" + randomPasswordsFile
	if err := e.Root.AppendFile(name, []byte(strings.Join(random, "\n")+"\n"), 0o600, 0, 0); err != nil {
		return fmt.Errorf("chpasswd: keep the random passwords: %w", err)
	}
	e.Logf("chpasswd: random passwords for %s are in %s (root only; not printed on the console, unlike cloud-init)", strings.Join(users, ", "), name)
	return nil
}
