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

	"github.com/earlyinit/earlyinit/internal/modules/sshd"
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
	c, ok, err := sshd.Load(e)
	if err != nil {
		e.Logf("ssh: %v: making cloud-init's host key types", err)
		return defaultKeyTypes
	}
	var types []string
	if ok {
		for _, r := range c.Order {
			if r.Key != "hostkey" || r.Match != 0 {
				continue
			}
			v := strings.Trim(c.Lines[r.File][r.Line].Value, `"`)
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
	keyErrs, err := makeHostKeys(ctx, e)
	if err != nil {
		return err
	}
	errs = append(errs, keyErrs...)

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

// makeHostKeys writes ssh_keys when it is given (null too: an error, as
// cloud-init fails on it), else makes the missing keys of
// ssh_genkeytypes; it returns each step's error, and fatal, an error that
// stops the module.
func makeHostKeys(ctx context.Context, e *core.Env) (errs []error, fatal error) {
	hostKeys, given, err := ccfg.Decode[ccfg.HostKeys](e.Cfg, "ssh_keys")
	switch {
	case given && err != nil:
		return []error{err}, nil
	case given:
		return []error{writeHostKeys(ctx, e, hostKeys.Keys)}, nil
	case err != nil:
		return nil, err
	}
	types, given, err := ccfg.Decode[[]string](e.Cfg, "ssh_genkeytypes")
	if err != nil {
		return nil, err
	}
	if !given && !ccfg.GivenNull(e.Cfg, "ssh_genkeytypes") {
		types = hostKeyTypes(e) // null is none, as get_cfg_option_list's
	}
	todo, err := missingHostKeys(e, types)
	errs = append(errs, err)
	if len(todo) > 0 {
		if err := e.Root.MkdirAll("/etc/ssh", 0o755, 0, 0); err != nil {
			return nil, err
		}
	}
	return append(errs, genHostKeys(ctx, e, todo)), nil
}

// keyTypes are the host key types ssh_genkeytypes and ssh_keys name.
var keyTypes = []string{"rsa", "ecdsa", "ed25519", "dsa"}

func validKeyType(t string) bool { return slices.Contains(keyTypes, t) }

// writeHostKeys writes ssh_keys (m).
func writeHostKeys(ctx context.Context, e *core.Env, m map[string]string) error {
	names := make([]string, 0, len(m))
	for k := range m {
		names = append(names, k)
	}
	sort.Strings(names)
	var errs []error
	var certs []sshd.Option
	for _, k := range names {
		t, part, _ := strings.Cut(k, "_")
		if !validKeyType(t) {
			e.Logf("ssh_keys: skipping unrecognized entry %q", k)
			continue
		}
		val := m[k]
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
			certs = append(certs, sshd.Option{Key: "HostCertificate", Value: f, Multi: true})
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
		errs = append(errs, sshd.Update(ctx, e, "ssh_keys", certs))
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
