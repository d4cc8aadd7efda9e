package modules

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"sort"
	"strings"
	"syscall"
)

// DisableRootOpts is cloud-init's ssh_util.DISABLE_USER_OPTS, the default
// disable_root_opts: root's keys get it as a prefix, so logging in as
// root prints where to log in instead.
const DisableRootOpts = `no-port-forwarding,no-agent-forwarding,no-X11-forwarding,command="echo 'Please login as the user \"$USER\" rather than the user \"$DISABLE_USER\".';echo;sleep 10;exit 142"`

// defaultKeyTypes is cloud-init's GENERATE_KEY_NAMES on Debian.
var defaultKeyTypes = []string{"rsa", "ecdsa", "ed25519"}

// hostKeyFile is the host key of type t, as cloud-init's KEY_FILE_TPL.
func hostKeyFile(t string) string { return "/etc/ssh/ssh_host_" + t + "_key" }

// sshdDropIn writes a drop-in under /etc/ssh/sshd_config.d (Debian's
// sshd_config includes it).
func (e *Env) sshdDropIn(name, content string) error {
	return e.Root.WriteFile("/etc/ssh/sshd_config.d/"+name, []byte(content), 0o644, 0, 0)
}

// ssh is cc_ssh, per instance:
//
//   - ssh_deletekeys (default true): /etc/ssh/ssh_host_*key* removed;
//   - ssh_keys given: {rsa,ecdsa,ed25519,dsa}_{private,public,certificate}
//     written (0600 private, 0644 the others; a public key missing for a
//     private one is derived with ssh-keygen -yf); a certificate is named
//     by a HostCertificate drop-in;
//   - otherwise ssh_genkeytypes (default rsa, ecdsa, ed25519): each missing
//     key made with ssh-keygen -t T -N "" -f /etc/ssh/ssh_host_T_key, the
//     types side by side (genHostKeys);
//   - the datasource's public keys (unless allow_public_ssh_keys is
//     false) and ssh_authorized_keys go to the default user, and to root:
//     with disable_root (default true) behind disable_root_opts, $USER
//     being the default user ("NONE" without one) and $DISABLE_USER root.
func ssh(ctx context.Context, e *Env) error {
	var errs []error
	if cfgBool(e.Cfg, "ssh_deletekeys", true) {
		ents, _ := os.ReadDir(e.Root.Path("/etc/ssh"))
		for _, ent := range ents {
			n := ent.Name()
			if strings.HasPrefix(n, "ssh_host_") && strings.Contains(n[len("ssh_host_"):], "key") {
				e.logf("ssh: removing host key %s", n)
				if err := e.Root.Remove("/etc/ssh/" + n); err != nil {
					errs = append(errs, err)
				}
			}
		}
	}
	if raw, ok := e.Cfg["ssh_keys"]; ok {
		errs = append(errs, e.writeHostKeys(ctx, raw))
	} else {
		types, err := cfgStrings(e.Cfg, "ssh_genkeytypes", false)
		if err != nil {
			return err
		}
		if _, ok := e.Cfg["ssh_genkeytypes"]; !ok {
			types = defaultKeyTypes
		}
		todo, err := e.missingHostKeys(types)
		errs = append(errs, err)
		if len(todo) > 0 {
			if err := e.Root.MkdirAll("/etc/ssh", 0o755, 0, 0); err != nil {
				return err
			}
		}
		errs = append(errs, e.genHostKeys(ctx, todo))
	}

	var keys []string
	if cfgBool(e.Cfg, "allow_public_ssh_keys", true) && e.Data != nil {
		keys = append(keys, e.Data.PublicKeys...)
	}
	cfgKeys, err := cfgStrings(e.Cfg, "ssh_authorized_keys", false)
	if err != nil {
		errs = append(errs, err)
	}
	keys = append(keys, cfgKeys...)
	user := e.defaultUserName()
	if user != "" {
		errs = append(errs, e.addAuthorizedKeys(user, keys, ""))
	}
	prefix := ""
	if cfgBool(e.Cfg, "disable_root", true) {
		u := user
		if u == "" {
			u = "NONE"
		}
		prefix = cfgString(e.Cfg, "disable_root_opts", DisableRootOpts)
		prefix = strings.ReplaceAll(prefix, "$USER", u)
		prefix = strings.ReplaceAll(prefix, "$DISABLE_USER", "root")
	}
	errs = append(errs, e.addAuthorizedKeys("root", keys, prefix))
	return errors.Join(errs...)
}

func validKeyType(t string) bool {
	switch t {
	case "rsa", "ecdsa", "ed25519", "dsa":
		return true
	}
	return false
}

// writeHostKeys writes ssh_keys.
func (e *Env) writeHostKeys(ctx context.Context, raw any) error {
	m, ok := raw.(map[string]any)
	if !ok {
		return fmt.Errorf("ssh_keys: want a map, got %s", kind(raw))
	}
	names := make([]string, 0, len(m))
	for k := range m {
		names = append(names, k)
	}
	sort.Strings(names)
	var errs []error
	for _, k := range names {
		t, part, _ := strings.Cut(k, "_")
		if !validKeyType(t) {
			e.logf("ssh_keys: skipping unrecognized entry %q", k)
			continue
		}
		val := scalarString(m[k])
		switch part {
		case "private":
			errs = append(errs, e.Root.WriteFile(hostKeyFile(t), []byte(val), 0o600, 0, 0))
		case "public":
			errs = append(errs, e.Root.WriteFile(hostKeyFile(t)+".pub", []byte(val), 0o644, 0, 0))
		case "certificate":
			f := hostKeyFile(t) + "-cert.pub"
			errs = append(errs, e.Root.WriteFile(f, []byte(val), 0o644, 0, 0))
			errs = append(errs, e.sshdDropIn("50-earlyinit-hostcert-"+t+".conf", "HostCertificate "+f+"\n"))
		default:
			e.logf("ssh_keys: skipping unrecognized entry %q", k)
		}
	}
	for _, t := range []string{"dsa", "ecdsa", "ed25519", "rsa"} {
		_, priv := m[t+"_private"]
		_, pub := m[t+"_public"]
		if !priv || pub {
			continue
		}
		out, err := e.run(ctx, Cmd{Name: "ssh-keygen", Args: []string{"-yf", e.Root.Path(hostKeyFile(t))}})
		if err != nil {
			errs = append(errs, fmt.Errorf("derive the public %s host key: %w", t, err))
			continue
		}
		line := strings.TrimSpace(string(out)) + " root@localhost\n"
		errs = append(errs, e.Root.WriteFile(hostKeyFile(t)+".pub", []byte(line), 0o644, 0, 0))
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

// addAuthorizedKeys is ssh_util.setup_user_keys: keys (each behind prefix
// when given) merge into ~user/.ssh/authorized_keys: a line for the same
// key is replaced in place, new keys are appended; other lines stay. The
// file is 0600 and .ssh 0700, both owned by the user.
func (e *Env) addAuthorizedKeys(user string, keys []string, prefix string) error {
	a, err := readAccounts(e.Root)
	if err != nil {
		return err
	}
	pw, ok := a.user(user)
	if !ok {
		if user != "root" {
			return fmt.Errorf("ssh keys for %s: no such user in /etc/passwd", user)
		}
		pw = PasswdEntry{Name: "root", Home: "/root"}
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
	seen := map[string]bool{}
	for i, k := range keys {
		k = strings.TrimSpace(k)
		if k == "" || strings.HasPrefix(k, "#") || seen[k] {
			continue
		}
		if strings.ContainsAny(k, "\n\r\x00") {
			// One key is one line: a second line would be a key (or
			// options) nobody listed.
			e.logf("ssh keys for %s: key %d has a line break: skipped", user, i)
			continue
		}
		seen[k] = true
		line := k
		if prefix != "" {
			line = prefix + " " + k
		}
		id := keyID(k)
		replaced := false
		for i, l := range lines {
			if id != "" && keyID(l) == id {
				lines[i], replaced = line, true
				break
			}
		}
		if !replaced {
			lines = append(lines, line)
		}
	}
	if len(lines) == 0 && len(old) == 0 {
		return nil
	}
	if err := e.Root.MkdirAll(sshDir, 0o700, pw.UID, pw.GID); err != nil {
		return err
	}
	// An existing .ssh keeps its mode, but must be the user's.
	if fi, err := e.Root.Stat(sshDir); err == nil {
		if st, ok := fi.Sys().(*syscall.Stat_t); ok && (int(st.Uid) != pw.UID) {
			e.logf("ssh keys for %s: %s is owned by uid %d", user, sshDir, st.Uid)
		}
	}
	e.logf("ssh: %d key(s) in %s", len(seen), file)
	return e.Root.WriteFile(file, []byte(strings.Join(lines, "\n")+"\n"), 0o600, pw.UID, pw.GID)
}
