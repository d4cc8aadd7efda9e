package accounts

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"slices"
	"sort"
	"strings"
	"syscall"

	"github.com/earlyinit/earlyinit/internal/ccfg"
	"github.com/earlyinit/earlyinit/internal/modules/core"
)

// disableRootOpts is cloud-init's ssh_util.DISABLE_USER_OPTS, the default
// disable_root_opts: root's keys get it as a prefix, so logging in as
// root prints where to log in instead.
const disableRootOpts = `no-port-forwarding,no-agent-forwarding,no-X11-forwarding,command="echo 'Please login as the user \"$USER\" rather than the user \"$DISABLE_USER\".';echo;sleep 10;exit 142"`

// defaultKeyTypes is cloud-init's GENERATE_KEY_NAMES without dsa (which
// OpenSSH deprecated; TestDefaultKeyTypesAsCloudInit), what
// ssh_genkeytypes means when it is not set and sshd_config cannot be read.
var defaultKeyTypes = []string{"rsa", "ecdsa", "ed25519"}

// unaskedKeyTypes are the types made when ssh_genkeytypes is not set and
// the image's sshd names no host key of its own.
var unaskedKeyTypes = []string{"ecdsa", "ed25519"}

// hostKeyTypes is what ssh_genkeytypes means when it is not set. cloud-init
// makes every type of GENERATE_KEY_NAMES; earlyinit makes the types the
// image asks for: the /etc/ssh/ssh_host_T_key files sshd_config's HostKey
// lines name (the RHEL family lists rsa, ecdsa and ed25519 there), else,
// where sshd falls back to its own defaults (Debian's sshd_config has its
// HostKey lines commented out), ECDSA and ed25519 only. sshd skips a
// default key that is not there without a word (a missing key that a
// HostKey line names is an error it logs at every start), and an RSA key
// is the one whose making costs seconds under TCG (a prime search; the
// others cost microseconds). An sshd_config that cannot be read means
// cloud-init's list.
func hostKeyTypes(e *core.Env) []string {
	c, ok, err := loadSshdConf(e)
	if err != nil {
		e.Logf("ssh: %v: making cloud-init's host key types", err)
		return defaultKeyTypes
	}
	var types []string
	if ok {
		for _, r := range c.order {
			if r.key != "hostkey" || r.match != 0 {
				continue
			}
			v := strings.Trim(c.lines[r.file][r.line].value, `"`)
			for _, t := range keyTypes {
				if path.Clean(v) == core.HostKeyFile(t) && !slices.Contains(types, t) {
					types = append(types, t)
				}
			}
		}
	}
	if len(types) == 0 {
		return unaskedKeyTypes
	}
	return types
}

// SSH is cc_ssh, per instance:
//
//   - ssh_deletekeys (default true): /etc/ssh/ssh_host_*key* removed;
//   - ssh_keys given: {rsa,ecdsa,ed25519,dsa}_{private,public,certificate}
//     written (0600 private, 0644 the others; a public key missing for a
//     private one is derived with ssh-keygen -yf); each certificate gets a
//     HostCertificate line where sshd reads it (setSshdOptions: many are
//     kept, where cloud-init's update_ssh_config keeps only the last);
//   - otherwise ssh_genkeytypes (when not set, the types the image's
//     sshd_config names, else ecdsa and ed25519: hostKeyTypes): each
//     missing key made as ssh-keygen -t T -N "" -f /etc/ssh/ssh_host_T_key
//     makes it (genHostKeys: in-process but for dsa);
//   - the datasource's public keys (unless allow_public_ssh_keys is
//     false) and ssh_authorized_keys go to the default user, and to root:
//     with disable_root (default true) behind disable_root_opts, $USER
//     being the default user ("NONE" without one) and $DISABLE_USER root.
//     As in cloud-init, disable_root never touches sshd_config's
//     PermitRootLogin.
func SSH(ctx context.Context, e *core.Env) error {
	var errs []error
	deleteKeys, _, err := ccfg.Decode[bool](e.Cfg, "ssh_deletekeys")
	if err != nil {
		return err
	}
	if deleteKeys {
		ents, _ := os.ReadDir(e.Root.Path("/etc/ssh"))
		for _, ent := range ents {
			n := ent.Name()
			if strings.HasPrefix(n, "ssh_host_") && strings.Contains(n[len("ssh_host_"):], "key") {
				e.Logf("ssh: removing host key %s", n)
				if err := e.Root.Remove("/etc/ssh/" + n); err != nil {
					errs = append(errs, err)
				}
			}
		}
	}
	if raw, ok := e.Cfg["ssh_keys"]; ok {
		errs = append(errs, writeHostKeys(ctx, e, raw))
	} else {
		types, _, err := ccfg.Decode[[]string](e.Cfg, "ssh_genkeytypes")
		if err != nil {
			return err
		}
		if _, ok := e.Cfg["ssh_genkeytypes"]; !ok {
			types = hostKeyTypes(e) // null is none, as get_cfg_option_list's
		}
		todo, err := missingHostKeys(e, types)
		errs = append(errs, err)
		if len(todo) > 0 {
			if err := e.Root.MkdirAll("/etc/ssh", 0o755, 0, 0); err != nil {
				return err
			}
		}
		errs = append(errs, genHostKeys(ctx, e, todo))
	}

	var keys []string
	allowPublic, _, err := ccfg.Decode[bool](e.Cfg, "allow_public_ssh_keys")
	if err != nil {
		errs = append(errs, err)
	}
	if allowPublic && e.Data != nil {
		keys = append(keys, e.Data.PublicKeys...)
	}
	cfgKeys, _, err := ccfg.Decode[[]string](e.Cfg, "ssh_authorized_keys")
	if err != nil {
		errs = append(errs, err)
	}
	keys = append(keys, cfgKeys...)
	user := defaultUserName(e)
	if user != "" {
		errs = append(errs, addAuthorizedKeys(e, user, keys, ""))
	}
	prefix := ""
	disableRoot, _, err := ccfg.Decode[bool](e.Cfg, "disable_root")
	if err != nil {
		errs = append(errs, err)
	}
	if disableRoot {
		u := user
		if u == "" {
			u = "NONE"
		}
		opts, given, err := ccfg.Decode[string](e.Cfg, "disable_root_opts")
		if err != nil {
			errs = append(errs, err)
		}
		prefix = opts
		if !given {
			prefix = disableRootOpts
		}
		prefix = strings.ReplaceAll(prefix, "$USER", u)
		prefix = strings.ReplaceAll(prefix, "$DISABLE_USER", "root")
	}
	errs = append(errs, addAuthorizedKeys(e, "root", keys, prefix))
	return errors.Join(errs...)
}

// keyTypes are the host key types ssh_genkeytypes and ssh_keys name.
var keyTypes = []string{"rsa", "ecdsa", "ed25519", "dsa"}

func validKeyType(t string) bool { return slices.Contains(keyTypes, t) }

// writeHostKeys writes ssh_keys.
func writeHostKeys(ctx context.Context, e *core.Env, raw any) error {
	m, ok := raw.(map[string]any)
	if !ok {
		return fmt.Errorf("ssh_keys: want a map, got %s", core.Kind(raw))
	}
	names := make([]string, 0, len(m))
	for k := range m {
		names = append(names, k)
	}
	sort.Strings(names)
	var errs []error
	var certs []sshdOption
	for _, k := range names {
		t, part, _ := strings.Cut(k, "_")
		if !validKeyType(t) {
			e.Logf("ssh_keys: skipping unrecognized entry %q", k)
			continue
		}
		val := core.ScalarString(m[k])
		switch part {
		case "private":
			errs = append(errs, e.Root.WriteFile(core.HostKeyFile(t), []byte(val), 0o600, 0, 0))
		case "public":
			errs = append(errs, e.Root.WriteFile(core.HostKeyFile(t)+".pub", []byte(val), 0o644, 0, 0))
		case "certificate":
			f := core.HostKeyFile(t) + "-cert.pub"
			if err := e.Root.WriteFile(f, []byte(val), 0o644, 0, 0); err != nil {
				errs = append(errs, err)
				continue
			}
			certs = append(certs, sshdOption{Key: "HostCertificate", Value: f, Multi: true})
		default:
			e.Logf("ssh_keys: skipping unrecognized entry %q", k)
		}
	}
	for _, t := range []string{"dsa", "ecdsa", "ed25519", "rsa"} {
		_, priv := m[t+"_private"]
		_, pub := m[t+"_public"]
		if !priv || pub {
			continue
		}
		out, err := e.Run(ctx, core.Cmd{Name: "ssh-keygen", Args: []string{"-yf", e.Root.Path(core.HostKeyFile(t))}})
		if err != nil {
			errs = append(errs, fmt.Errorf("derive the public %s host key: %w", t, err))
			continue
		}
		line := strings.TrimSpace(string(out)) + " root@localhost\n"
		errs = append(errs, e.Root.WriteFile(core.HostKeyFile(t)+".pub", []byte(line), 0o644, 0, 0))
	}
	if len(certs) > 0 {
		errs = append(errs, updateSshd(ctx, e, "ssh_keys", certs))
	}
	return errors.Join(errs...)
}

// keyID is the identity of an authorized_keys line: key type and base64
// blob, after any options; "" for blank and comment lines.
func keyID(line string) string {
	f := strings.Fields(line)
	for i := 0; i+1 < len(f); i++ {
		if isKeyType(f[i]) {
			return f[i] + " " + f[i+1]
		}
	}
	return ""
}

func isKeyType(s string) bool {
	return strings.HasPrefix(s, "ssh-") || strings.HasPrefix(s, "ecdsa-sha2-") ||
		strings.HasPrefix(s, "sk-") || strings.HasSuffix(s, "@openssh.com")
}

// addAuthorizedKeys is ssh_util.setup_user_keys: keys (prefix, when given,
// taking the place of their own options) merge into
// ~user/.ssh/authorized_keys as update_authorized_keys merges them
// (updateAuthorizedKeys). Keys that are not OpenSSH public keys are
// skipped with a log line, as cloud-init drops them. The file is 0600 and
// .ssh 0700, both owned by the user (TestAuthorizedKeysAsCloudInit).
func addAuthorizedKeys(e *core.Env, user string, keys []string, prefix string) error {
	a, err := core.ReadAccounts(e.Root)
	if err != nil {
		return err
	}
	pw, ok := a.User(user)
	if !ok {
		if user != "root" {
			return fmt.Errorf("ssh keys for %s: no such user in /etc/passwd", user)
		}
		pw = core.PasswdEntry{Name: "root", Home: "/root"}
	}
	if pw.Home == "" || pw.Home[0] != '/' {
		return fmt.Errorf("ssh keys for %s: home %q is not an absolute path", user, pw.Home)
	}
	sshDir := strings.TrimSuffix(pw.Home, "/") + "/.ssh"
	file := sshDir + "/authorized_keys"
	old, err := e.Root.ReadFile(file)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	var lines []string
	if len(old) > 0 {
		lines = strings.Split(strings.TrimSuffix(string(old), "\n"), "\n")
	}
	if strings.ContainsAny(prefix, "\n\r") {
		return fmt.Errorf("ssh keys for %s: disable_root_opts has a line break", user)
	}
	var opts *string
	if prefix != "" {
		opts = &prefix
	}
	var add []authKeyLine
	for i, k := range keys {
		if strings.ContainsAny(k, "\n\r\x00") {
			// One key is one line: a second line would be a key (or
			// options) nobody listed.
			e.Logf("ssh keys for %s: key %d has a line break: skipped", user, i)
			continue
		}
		a := parseAuthKeyLine(k)
		if opts != nil {
			a.options = *opts
		}
		if !a.valid() {
			if t := strings.TrimSpace(k); t != "" && !strings.HasPrefix(t, "#") {
				e.Logf("ssh keys for %s: key %d is not an OpenSSH public key: skipped", user, i)
			}
			continue
		}
		add = append(add, a)
	}
	lines = updateAuthorizedKeys(lines, add)
	if len(lines) == 0 && len(old) == 0 {
		return nil
	}
	if err := e.Root.MkdirAll(sshDir, 0o700, pw.UID, pw.GID); err != nil {
		return err
	}
	// An existing .ssh keeps its mode, but must be the user's.
	if fi, err := e.Root.Stat(sshDir); err == nil {
		if st, ok := fi.Sys().(*syscall.Stat_t); ok && (int(st.Uid) != pw.UID) {
			e.Logf("ssh keys for %s: %s is owned by uid %d", user, sshDir, st.Uid)
		}
	}
	e.Logf("ssh: %d key(s) in %s", len(add), file)
	return e.Root.WriteFile(file, []byte(strings.Join(lines, "\n")+"\n"), 0o600, pw.UID, pw.GID)
}

// sshd_config: where a setting must go for sshd to use it.
//
// sshd reads sshd_config from the top, Include directives in place (their
// globs sorted, relative patterns under /etc/ssh), and for most keywords
// keeps the FIRST value it reads. Debian's and EL9's sshd_config start
// with "Include /etc/ssh/sshd_config.d/*.conf"; CentOS 7's and EL8's have
// no Include at all. A Match block runs to the next Match or to the end of
// its file (an included file's Match ends with that file), and a Match
// block's value overrides the global one for the connections it matches;
// "Match all" matches them all.
//
// cloud-init 22.4 (ssh_util.update_ssh_config) writes 50-cloud-init.conf
// when sshd_config has that exact Include line, else edits sshd_config:
// every line of the keyword, Match blocks included, or a line appended at
// the end, after any Match block, where it binds only that block. Here,
// for each setting (setSshdOptions):
//
//   - when sshd_config's top level includes SshdDropIn (the glob covers
//     it), the setting goes into SshdDropIn, named to sort before every
//     drop-in images ship (50-cloud-init.conf, 50-redhat.conf,
//     60-cloudimg-settings.conf, 01-permitrootlogin.conf);
//   - a line of the keyword sshd reads before that point (a drop-in that
//     sorts first, or sshd_config above its Include), or anywhere when
//     nothing includes SshdDropIn, is edited in place to the value;
//   - with no such line and no drop-in read, the line goes into
//     sshd_config before its first Match block (and the comment lines
//     right above it);
//   - lines in a "Match all" block are edited too (they would override the
//     value for every connection); other Match blocks, per-user or per-host
//     exceptions, are left as they are;
//   - HostCertificate takes many values: a line is added unless one has
//     the value.
//
// Every file is read and written through e.Root, atomically, keeping its
// mode and owner; a file that is a symlink is edited at its target. With
// no sshd_config at all, only SshdDropIn is written (for an sshd
// installed later whose sshd_config includes it).

// SshdConfig is sshd's configuration file.
const SshdConfig = "/etc/ssh/sshd_config"

// PwauthDropIn is earlyinit's drop-in in sshd_config.d, for every sshd
// setting it makes (ssh_pwauth, ssh_keys' certificates): named to be read
// first.
const PwauthDropIn = "00-earlyinit.conf"

// SshdDropIn is PwauthDropIn's path.
const SshdDropIn = "/etc/ssh/sshd_config.d/" + PwauthDropIn

// sshdDropInHeader is SshdDropIn's first line.
const sshdDropInHeader = "# Written by earlyinit from cloud-config (ssh_pwauth, ssh_keys certificates); sshd reads it before the other drop-ins."

// legacyDropIns are the drop-ins earlier earlyinit versions wrote, by
// keyword: removed when the keyword is set (their lines now live in
// SshdDropIn).
var legacyDropIns = map[string][]string{
	"passwordauthentication": {"/etc/ssh/sshd_config.d/50-earlyinit-pwauth.conf"},
	"hostcertificate": {
		"/etc/ssh/sshd_config.d/50-earlyinit-hostcert-rsa.conf", "/etc/ssh/sshd_config.d/50-earlyinit-hostcert-ecdsa.conf",
		"/etc/ssh/sshd_config.d/50-earlyinit-hostcert-ed25519.conf", "/etc/ssh/sshd_config.d/50-earlyinit-hostcert-dsa.conf",
	},
}

// sshdOption is one sshd_config setting.
type sshdOption struct {
	Key, Value string
	// Multi: the keyword takes many lines (HostCertificate); the value is
	// added unless a line has it.
	Multi bool
}

// Bounds of the Include walk: sshd's own depth (SERVCONF_MAX_DEPTH), a
// number of files, and of files read (a file can include itself).
const (
	sshdMaxDepth  = 16
	sshdMaxFiles  = 256
	sshdMaxVisits = 4096
)

// checkSshdOption refuses a keyword or value that is not one sshd_config
// token: a keyword is letters (not Include or Match, which would change
// what the lines around mean), a value printable ASCII without blanks,
// quotes, "#", "\" or "=" at its start.
func checkSshdOption(o sshdOption) error {
	if k := strings.ToLower(o.Key); k == "" || k == "include" || k == "match" || !core.AlnumOr(k, "") || strings.ContainsAny(k, "0123456789") {
		return fmt.Errorf("sshd_config keyword %q: not a keyword", o.Key)
	}
	if o.Value == "" || len(o.Value) > 1024 || o.Value[0] == '=' || o.Value[0] == '#' {
		return fmt.Errorf("sshd_config %s value %q: not one sshd_config word", o.Key, o.Value)
	}
	for i := 0; i < len(o.Value); i++ {
		if c := o.Value[i]; c <= ' ' || c >= 0x7f || c == '"' || c == '\'' || c == '\\' {
			return fmt.Errorf("sshd_config %s value %q: not one sshd_config word", o.Key, o.Value)
		}
	}
	return nil
}

// sshdLine is one line of an sshd_config file: its keyword (lower case,
// "" for blank and comment lines) and value.
type sshdLine struct {
	text, key, value string
}

// parseSshdLine splits a line as sshd does: leading blanks, the keyword up
// to a blank or "=", then the argument(s).
func parseSshdLine(text string) sshdLine {
	l := sshdLine{text: text}
	t := strings.TrimLeft(text, " \t\r\f\v")
	if t == "" || t[0] == '#' {
		return l
	}
	end := strings.IndexAny(t, " \t\r\f\v=")
	if end < 0 {
		l.key = strings.ToLower(t)
		return l
	}
	l.key = strings.ToLower(t[:end])
	rest := strings.TrimLeft(t[end:], " \t\r\f\v")
	rest = strings.TrimPrefix(rest, "=")
	l.value = strings.TrimSpace(rest)
	return l
}

// sshdRef is a keyword line where sshd reads it: file and line index.
type sshdRef struct {
	file string
	line int
	key  string
	// match is 0 at the top level, 1 in a Match block, 2 in "Match all".
	match int
}

// sshdConf is sshd's configuration as sshd reads it, from e.Root.
type sshdConf struct {
	e     *core.Env
	lines map[string][]sshdLine // by path as sshd opens it
	order []sshdRef             // keyword lines in reading order
	// dropInAt is the index in order where SshdDropIn's lines start (or
	// would), -1 when the top level does not include it.
	dropInAt int
	visits   int
}

// loadSshdConf reads SshdConfig and what it includes. ok is false when
// there is no SshdConfig.
func loadSshdConf(e *core.Env) (c *sshdConf, ok bool, err error) {
	c = &sshdConf{e: e, lines: map[string][]sshdLine{}, dropInAt: -1}
	if _, err := e.Root.Stat(SshdConfig); errors.Is(err, fs.ErrNotExist) {
		return c, false, nil
	}
	if err := c.read(SshdConfig, 0, 0); err != nil {
		return nil, true, err
	}
	return c, true, nil
}

// read adds file's keyword lines to c.order, in match state match, as
// sshd reads them.
func (c *sshdConf) read(file string, depth, match int) error {
	if depth > sshdMaxDepth {
		return fmt.Errorf("%s: Include nested deeper than %d", file, sshdMaxDepth)
	}
	if c.visits++; len(c.lines) >= sshdMaxFiles || c.visits > sshdMaxVisits {
		return fmt.Errorf("%s: more than %d sshd_config files, or %d Includes", file, sshdMaxFiles, sshdMaxVisits)
	}
	lines, ok := c.lines[file]
	if !ok {
		b, err := c.e.Root.ReadFile(file)
		if errors.Is(err, fs.ErrNotExist) && file == SshdDropIn {
			b, err = nil, nil
		}
		if err != nil {
			return err
		}
		text := strings.TrimSuffix(string(b), "\n")
		if text != "" {
			for _, t := range strings.Split(text, "\n") {
				lines = append(lines, parseSshdLine(t))
			}
		}
		c.lines[file] = lines
	}
	for i, l := range lines {
		switch l.key {
		case "":
			continue
		case "match":
			match = 1
			if strings.EqualFold(l.value, "all") {
				match = 2
			}
			continue
		case "include":
			for _, pat := range strings.Fields(l.value) {
				pat = strings.Trim(pat, `"`)
				if pat == "" {
					continue
				}
				if !strings.HasPrefix(pat, "/") {
					pat = "/etc/ssh/" + pat
				}
				pat = path.Clean(pat)
				files, err := c.glob(pat)
				if err != nil {
					return fmt.Errorf("%s line %d: Include: %w", file, i+1, err)
				}
				if match == 0 && c.dropInAt < 0 && globMatch(pat, SshdDropIn) {
					if !slices.Contains(files, SshdDropIn) {
						files = append(files, SshdDropIn)
						sort.Strings(files)
					}
				}
				for _, f := range files {
					if f == SshdDropIn && match == 0 && c.dropInAt < 0 {
						c.dropInAt = len(c.order)
					}
					if err := c.read(f, depth+1, match); err != nil {
						return err
					}
				}
			}
			continue
		}
		c.order = append(c.order, sshdRef{file: file, line: i, key: l.key, match: match})
	}
	return nil
}

// globMatch tells whether name matches the glob pattern pat as glob(3)
// does: component by component, "*" not matching a leading ".".
func globMatch(pat, name string) bool {
	ps, ns := strings.Split(pat, "/"), strings.Split(name, "/")
	if len(ps) != len(ns) {
		return false
	}
	for i := range ps {
		if ok, _ := path.Match(ps[i], ns[i]); !ok || ns[i] != "" && ns[i][0] == '.' && (ps[i] == "" || ps[i][0] != '.') {
			return false
		}
	}
	return true
}

// glob is glob(3) on pat in the root: the sorted names of regular files
// and links that match; nothing for no match, as sshd's Include.
func (c *sshdConf) glob(pat string) ([]string, error) {
	if !strings.ContainsAny(pat, "*?[") {
		if fi, err := c.e.Root.Stat(pat); err == nil && !fi.IsDir() {
			return []string{path.Clean(pat)}, nil
		}
		return nil, nil
	}
	dirs := []string{"/"}
	comps := strings.Split(strings.Trim(path.Clean(pat), "/"), "/")
	for i, comp := range comps {
		var next []string
		for _, d := range dirs {
			if !strings.ContainsAny(comp, "*?[") {
				next = append(next, path.Join(d, comp))
				continue
			}
			if _, err := path.Match(comp, ""); err != nil {
				return nil, fmt.Errorf("pattern %q: %w", pat, err)
			}
			ents, err := os.ReadDir(c.e.Root.Path(d))
			if err != nil {
				continue
			}
			for _, ent := range ents {
				n := ent.Name()
				if ok, _ := path.Match(comp, n); ok && (n[0] != '.' || comp[0] == '.') {
					next = append(next, path.Join(d, n))
				}
			}
		}
		if i < len(comps)-1 {
			dirs = nil
			for _, n := range next {
				if fi, err := c.e.Root.Stat(n); err == nil && fi.IsDir() {
					dirs = append(dirs, n)
				}
			}
			continue
		}
		var files []string
		for _, n := range next {
			if fi, err := c.e.Root.Stat(n); err == nil && !fi.IsDir() {
				files = append(files, n)
			}
		}
		if len(files) > sshdMaxFiles {
			return nil, fmt.Errorf("pattern %q: more than %d files", pat, sshdMaxFiles)
		}
		sort.Strings(files)
		return files, nil
	}
	return nil, nil
}

// setSshdOptions makes each of opts the value sshd uses (see above) and
// tells whether any file changed.
func setSshdOptions(e *core.Env, opts []sshdOption) (changed bool, err error) {
	for _, o := range opts {
		if err := checkSshdOption(o); err != nil {
			return false, err
		}
	}
	c, ok, err := loadSshdConf(e)
	if err != nil {
		return false, err
	}
	dirty := map[string]bool{}
	if !ok {
		e.Logf("sshd: no %s: the settings go to %s only", SshdConfig, SshdDropIn)
		c.lines[SshdDropIn], err = readSshdLines(e, SshdDropIn)
		if err != nil {
			return false, err
		}
		c.dropInAt = 0
	}
	for _, o := range opts {
		c.set(o, dirty)
		for _, old := range legacyDropIns[strings.ToLower(o.Key)] {
			if e.Root.Exists(old) {
				e.Logf("sshd: removing %s (written by an earlier earlyinit; now in %s)", old, SshdDropIn)
				if err := e.Root.Remove(old); err != nil {
					return changed, err
				}
				changed = true
			}
		}
	}
	files := make([]string, 0, len(dirty))
	for f := range dirty {
		files = append(files, f)
	}
	sort.Strings(files)
	for _, f := range files {
		w, err := writeSshdLines(e, f, c.lines[f])
		if err != nil {
			return changed, err
		}
		changed = changed || w
	}
	return changed, nil
}

// set applies o to c's lines, marking the files it changes dirty.
func (c *sshdConf) set(o sshdOption, dirty map[string]bool) {
	key := strings.ToLower(o.Key)
	line := o.Key + " " + o.Value
	// SshdDropIn's own lines of the keyword: one, with the value.
	if c.dropInAt >= 0 {
		lines := c.lines[SshdDropIn]
		if len(lines) == 0 {
			lines = []sshdLine{parseSshdLine(sshdDropInHeader)}
		}
		found := false
		for i := 0; i < len(lines); i++ {
			l := lines[i]
			switch {
			case l.key != key:
			case o.Multi && l.value != o.Value:
			case !found:
				found = true
				lines[i] = parseSshdLine(line)
			default:
				lines = append(lines[:i], lines[i+1:]...)
				i--
			}
		}
		if !found {
			lines = append(lines, parseSshdLine(line))
		}
		c.lines[SshdDropIn] = lines
		dirty[SshdDropIn] = true
	}
	if o.Multi {
		if c.dropInAt < 0 && !c.has(key, o.Value) {
			c.insertTop(line)
			dirty[SshdConfig] = true
		}
		return
	}
	// The first global line sshd reads before SshdDropIn (anywhere when
	// it does not read SshdDropIn), and every "Match all" line.
	first := true
	for i, r := range c.order {
		if r.key != key || r.file == SshdDropIn {
			continue
		}
		before := c.dropInAt < 0 || i < c.dropInAt
		if (r.match == 0 && first && before) || r.match == 2 {
			if r.match == 0 {
				first = false
			}
			l := c.lines[r.file][r.line]
			if l.value != o.Value {
				c.e.Logf("sshd: %s line %d: %s set to %s (it said %s)", r.file, r.line+1, o.Key, o.Value, l.value)
				c.lines[r.file][r.line] = c.rewrite(l, o.Value)
				dirty[r.file] = true
			}
		}
	}
	if first && c.dropInAt < 0 {
		c.insertTop(line)
		dirty[SshdConfig] = true
	}
}

// has tells whether a global line sets key to value.
func (c *sshdConf) has(key, value string) bool {
	for _, r := range c.order {
		if r.key == key && r.match != 1 && c.lines[r.file][r.line].value == value {
			return true
		}
	}
	return false
}

// rewrite is l with value: its indent and keyword kept.
func (c *sshdConf) rewrite(l sshdLine, value string) sshdLine {
	t := strings.TrimLeft(l.text, " \t\r\f\v")
	indent := l.text[:len(l.text)-len(t)]
	kw := t
	if end := strings.IndexAny(t, " \t\r\f\v="); end >= 0 {
		kw = t[:end]
	}
	return parseSshdLine(indent + kw + " " + value)
}

// insertTop adds line to SshdConfig's top level: before its first Match
// line and the comment lines right above it, else at the end.
func (c *sshdConf) insertTop(line string) {
	lines := c.lines[SshdConfig]
	at := len(lines)
	for i, l := range lines {
		if l.key == "match" {
			at = i
			for at > 0 && strings.HasPrefix(strings.TrimSpace(lines[at-1].text), "#") {
				at--
			}
			break
		}
	}
	c.e.Logf("sshd: %s: %s added at line %d", SshdConfig, strings.Fields(line)[0], at+1)
	lines = append(lines[:at], append([]sshdLine{parseSshdLine(line)}, lines[at:]...)...)
	c.lines[SshdConfig] = lines
	// Later references into SshdConfig move down a line.
	for i, r := range c.order {
		if r.file == SshdConfig && r.line >= at {
			c.order[i].line++
		}
	}
}

// readSshdLines reads name's lines (none if it does not exist).
func readSshdLines(e *core.Env, name string) ([]sshdLine, error) {
	b, err := e.Root.ReadFile(name)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var lines []sshdLine
	if text := strings.TrimSuffix(string(b), "\n"); text != "" {
		for _, t := range strings.Split(text, "\n") {
			lines = append(lines, parseSshdLine(t))
		}
	}
	return lines, nil
}

// writeSshdLines writes lines to name when they differ from its content,
// atomically, at the target of a symlink, keeping mode and owner (a new
// file is 0644 root); it tells whether it wrote.
func writeSshdLines(e *core.Env, name string, lines []sshdLine) (bool, error) {
	var b strings.Builder
	for _, l := range lines {
		b.WriteString(l.text)
		b.WriteByte('\n')
	}
	target, err := linkTarget(e, name)
	if err != nil {
		return false, err
	}
	mode, uid, gid := fs.FileMode(0o644), 0, 0
	if fi, err := e.Root.Stat(target); err == nil {
		if !fi.Mode().IsRegular() {
			return false, fmt.Errorf("%s: not a regular file", target)
		}
		old, err := e.Root.ReadFile(target)
		if err != nil {
			return false, err
		}
		if string(old) == b.String() {
			return false, nil
		}
		mode = fi.Mode().Perm()
		if st, ok := fi.Sys().(*syscall.Stat_t); ok {
			uid, gid = int(st.Uid), int(st.Gid)
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return false, err
	} else if err := e.Root.MkdirAll(path.Dir(target), 0o755, 0, 0); err != nil {
		return false, err
	}
	if err := e.Root.WriteFile(target, []byte(b.String()), mode, uid, gid); err != nil {
		return false, err
	}
	return true, nil
}

// linkTarget follows name's symlinks inside the root (at most 40).
func linkTarget(e *core.Env, name string) (string, error) {
	for i := 0; i < 40; i++ {
		fi, err := e.Root.Stat(name)
		if err != nil || fi.Mode()&fs.ModeSymlink == 0 {
			return name, nil
		}
		t, err := e.Root.Readlink(name)
		if err != nil {
			return "", err
		}
		if !strings.HasPrefix(t, "/") {
			t = path.Join(path.Dir(name), t)
		}
		name = path.Clean(t)
	}
	return "", fmt.Errorf("%s: too many levels of symbolic links", name)
}

// updateSshd sets opts (what is the cloud-config key, for errors) and
// reloads sshd when a file changed.
func updateSshd(ctx context.Context, e *core.Env, what string, opts []sshdOption) error {
	changed, err := setSshdOptions(e, opts)
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	if !changed {
		e.Logf("sshd: %s: already set", what)
		return nil
	}
	if !e.Root.Exists(SshdConfig) {
		return nil // no sshd to reload
	}
	return reloadSshd(ctx, e)
}

// sshService is the name of sshd's service: system_info.ssh_svcname,
// else "ssh" on Debian's family and "sshd" on the others (cloud-init's
// distros).
func sshService(e *core.Env) string {
	if si, ok := e.Cfg["system_info"].(map[string]any); ok {
		if s := core.CfgString(si, "ssh_svcname", ""); core.ValidServiceName(s) {
			return s
		}
	}
	if e.DistroInfo().Family == core.FamilyDebian {
		return "ssh"
	}
	return "sshd"
}

// reloadSshd is handle_ssh_pwauth's restart, only when sshd runs:
// systemctl --no-block reload-or-try-restart (a reload, sshd re-reading
// its configuration without dropping sessions; nothing if it is not
// running), rc-service --ifstarted under OpenRC; with no init running yet
// (the boot stage before sshd starts, always on a first boot), nothing:
// sshd starts with the new configuration.
func reloadSshd(ctx context.Context, e *core.Env) error {
	return e.ServiceAction(ctx, "try-reload", sshService(e))
}
