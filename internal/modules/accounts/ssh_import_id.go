package accounts

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"strings"
	"time"

	"github.com/earlyinit/earlyinit/internal/ccfg"
	"github.com/earlyinit/earlyinit/internal/httpget"
	"github.com/earlyinit/earlyinit/internal/modules/core"
)

// The key servers ssh-import-id asks, by protocol; tests point them at a
// local server. Launchpad's can be replaced by the root's
// sshImportConfFile, as ssh-import-id's.
var (
	sshImportLaunchpad = "https://launchpad.net"
	sshImportGitHub    = "https://api.github.com"
	sshImportGitLab    = "https://gitlab.com"
)

// Bounds of ssh_import_id.
const (
	// sshImportTimeout bounds one request (ssh-import-id's
	// DEFAULT_TIMEOUT); sshImportBudget all of the module's.
	sshImportTimeout = 15 * time.Second
	sshImportBudget  = 2 * time.Minute
	// sshImportMaxBody caps an answer, sshImportMaxKeys the keys taken
	// from one ID, sshImportMaxIDs the IDs of one user, sshImportMaxLine
	// one key line.
	sshImportMaxBody = 256 << 10
	sshImportMaxKeys = 100
	sshImportMaxIDs  = 32
	sshImportMaxLine = 16 << 10
	// sshImportConfFile is ssh-import-id's configuration: JSON with the
	// Launchpad URL template {"URL": "https://host/~{}/keys"} ("%s" in
	// the old form).
	sshImportConfFile = "/etc/ssh/ssh_import_id"
)

// SSHImportID is cc_ssh_import_id, per instance, in the final stage (it
// needs the network). It does ssh-import-id's job itself rather than run
// the tool: for each user created from users (the default user's IDs are
// the top-level ssh_import_id, another user's its entry's), each ID
// ("gh:NAME" GitHub, "lp:NAME" or "NAME" Launchpad, "gl:NAME" GitLab) is
// fetched over HTTPS as ssh-import-id fetches it, verified with the root's
// CA bundle, and its keys that are well-formed OpenSSH public keys
// (without options) are added to the user's authorized_keys, each with
// ssh-import-id's comment ("# ssh-import-id gh:NAME"). A key already in
// the file is left as it is, options and all. An ID that fails or yields
// no key is an error naming the user and the ID; the others are still
// imported. Nothing to do when no ssh_import_id is set: at the top, in
// the user key or in a users entry (importWanted).
func SSHImportID(ctx context.Context, e *core.Env) error {
	if !importWanted(e) {
		return nil
	}
	top, _, err := ccfg.Decode[*ccfg.PyValue](e.Cfg, "ssh_import_id")
	if err != nil {
		return err
	}
	if top == nil {
		top = &ccfg.PyValue{}
	}
	users, _, err := normalizeUsers(e)
	if err != nil {
		return fmt.Errorf("ssh_import_id: %w", err)
	}
	ctx, cancel := context.WithTimeout(ctx, sshImportBudget)
	defer cancel()
	var errs []error
	for _, u := range users {
		ids, err := sshImportIDsOf(*top, u)
		if err != nil {
			errs = append(errs, fmt.Errorf("ssh_import_id: user %s: %w", u.Name, err))
			continue
		}
		if len(ids) == 0 {
			continue
		}
		if err := importSSHIDs(ctx, e, u.Name, ids); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// importWanted is cloud-init's is_key_in_nested_dict(cfg,
// "ssh_import_id") where the key is read: ssh_import_id at the top (null
// too), in the user key or in a users entry. cloud-init also finds it
// under any other key, where it imports nothing, and so does earlyinit;
// only when users cannot be read (normalizeUsers' error, which
// users_groups reports) is a users entry's not seen.
func importWanted(e *core.Env) bool {
	if _, given, _ := ccfg.Decode[*ccfg.PyValue](e.Cfg, "ssh_import_id"); given || ccfg.GivenNull(e.Cfg, "ssh_import_id") {
		return true
	}
	if old, _, _ := ccfg.Decode[*ccfg.User](e.Cfg, "user"); old != nil && old.SSHImportID.Given() {
		return true
	}
	users, _, _ := normalizeUsers(e)
	for _, u := range users {
		if u.Cfg.SSHImportID.Given() {
			return true
		}
	}
	return false
}

// sshImportIDsOf is the IDs to import for u, without repeats: the
// default user's are the top-level ssh_import_id (a string is one ID),
// another user's its entry's (a string is split at commas), as in
// cloud-init.
func sshImportIDsOf(top ccfg.PyValue, u userSpec) ([]string, error) {
	key, v, split := "ssh_import_id", top, false
	if !u.Default {
		key, v, split = "users entry "+u.Name+": ssh_import_id", u.Cfg.SSHImportID.PyValue, true
	}
	ids, err := v.Strings(key, split)
	if err != nil {
		return nil, err
	}
	var out []string
	seen := map[string]bool{}
	for _, id := range ids {
		if id != "" && !seen[id] {
			seen[id] = true
			out = append(out, id)
		}
	}
	if len(out) > sshImportMaxIDs {
		return nil, fmt.Errorf("%s: %d IDs, more than the limit of %d", key, len(out), sshImportMaxIDs)
	}
	return out, nil
}

// importSSHIDs fetches ids' keys and adds the new ones to user's
// authorized_keys.
func importSSHIDs(ctx context.Context, e *core.Env, user string, ids []string) error {
	a, err := core.ReadAccounts(e.Root)
	if err != nil {
		return fmt.Errorf("ssh_import_id: user %s: %w", user, err)
	}
	pw, ok := a.User(user)
	if !ok {
		return fmt.Errorf("ssh_import_id: user %s: no such user in /etc/passwd", user)
	}
	// Keys already authorized stay as they are: addAuthorizedKeys would
	// replace their line, dropping any options it has.
	have := map[string]bool{}
	file := strings.TrimSuffix(pw.Home, "/") + "/.ssh/authorized_keys"
	if old, err := e.Root.ReadFile(file); err == nil {
		for _, l := range strings.Split(string(old), "\n") {
			if id := keyID(l); id != "" {
				have[id] = true
			}
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("ssh_import_id: user %s: %w", user, err)
	}
	g := sshImportGetter(e)
	var add []string
	var errs []error
	for _, id := range ids {
		lines, err := fetchImportID(ctx, e, g, id)
		if err != nil {
			errs = append(errs, fmt.Errorf("ssh_import_id: user %s: %s: %w", user, id, err))
			continue
		}
		already := 0
		for _, l := range lines {
			k := keyID(l)
			if have[k] {
				already++
				continue
			}
			have[k] = true
			add = append(add, l)
		}
		e.Logf("ssh_import_id: %s: %d key(s) for %s (%d already authorized)", id, len(lines), user, already)
	}
	if len(add) > 0 {
		if err := addAuthorizedKeys(e, user, add, ""); err != nil {
			errs = append(errs, fmt.Errorf("ssh_import_id: user %s: %w", user, err))
		}
	}
	return errors.Join(errs...)
}

// sshImportGetter is Env.HTTP, else the late stages' Getter
// (httpget.System: the root's CA bundle, the system's resolver, the
// environment's proxy, as ssh-import-id's requests takes it, and
// redirects followed).
func sshImportGetter(e *core.Env) *httpget.Getter {
	if e.HTTP != nil {
		return e.HTTP
	}
	g := httpget.System(e.Root.Dir())
	g.RequestTimeout, g.Logf = sshImportTimeout, e.Log
	return g
}

// fetchImportID fetches one ID's keys and returns them as authorized_keys
// lines, with ssh-import-id's comments; none is an error, as it is for
// ssh-import-id.
func fetchImportID(ctx context.Context, e *core.Env, g *httpget.Getter, id string) ([]string, error) {
	proto, name, err := parseImportID(id)
	if err != nil {
		return nil, err
	}
	var u string
	switch proto {
	case "lp":
		if u, err = launchpadURL(e, name); err != nil {
			return nil, err
		}
	case "gh":
		u = sshImportGitHub + "/users/" + url.QueryEscape(name) + "/keys"
	case "gl":
		u = sshImportGitLab + "/" + url.QueryEscape(name) + ".keys"
	}
	hdr := map[string]string{}
	if proto == "gh" {
		hdr["Accept"] = "application/vnd.github+json"
	}
	body, err := g.Get(ctx, httpget.Request{URL: u, Header: hdr, Limit: sshImportMaxBody})
	if err != nil {
		if httpget.NotFound(err) {
			return nil, fmt.Errorf("no such user at %s: %w", u, err)
		}
		return nil, err
	}
	// What the server says, as lines of "key comment".
	var raw []string
	switch proto {
	case "gh":
		var keys []struct {
			ID  json.Number `json:"id"`
			Key string      `json:"key"`
		}
		d := json.NewDecoder(bytes.NewReader(body))
		d.UseNumber()
		if err := d.Decode(&keys); err != nil {
			return nil, fmt.Errorf("%s: not GitHub's list of keys: %w", u, err)
		}
		for _, k := range keys {
			raw = append(raw, k.Key+" "+name+"@github/"+k.ID.String())
		}
	case "gl":
		for _, l := range strings.Split(string(body), "\n") {
			if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "#") {
				raw = append(raw, l+" "+name+"@gitlab")
			}
		}
	default:
		raw = strings.Split(string(body), "\n")
	}
	comment := "# ssh-import-id " + proto + ":" + name
	var out []string
	bad := 0
	for _, l := range raw {
		f := strings.Fields(l)
		if len(f) == 0 {
			continue
		}
		if err := checkPublicKey(f, len(l)); err != nil {
			bad++
			continue
		}
		if len(out) == sshImportMaxKeys {
			e.Logf("ssh_import_id: %s: more than %d keys: the rest are left out", id, sshImportMaxKeys)
			break
		}
		out = append(out, strings.Join(f, " ")+" "+comment)
	}
	if bad > 0 {
		e.Logf("ssh_import_id: %s: %d line(s) from %s are not OpenSSH public keys: skipped", id, bad, u)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no keys found at %s", u)
	}
	return out, nil
}

// parseImportID splits "proto:name" ("name" alone is Launchpad's, as
// ssh-import-id's DEFAULT_PROTO) and checks both: the name goes into a
// URL and into authorized_keys.
func parseImportID(id string) (proto, name string, err error) {
	p := strings.Split(id, ":")
	switch len(p) {
	case 1:
		proto, name = "lp", p[0]
	case 2:
		proto, name = p[0], p[1]
	default:
		return "", "", errors.New("not an ID: want PROTOCOL:NAME")
	}
	switch proto {
	case "lp", "gh", "gl":
	default:
		return "", "", fmt.Errorf("protocol %q: want gh (GitHub), lp (Launchpad) or gl (GitLab)", proto)
	}
	if !validImportName(name) {
		return "", "", fmt.Errorf("user name %q: want letters, digits and . _ + - (at most 100)", name)
	}
	return proto, name, nil
}

// validImportName accepts the user names of GitHub, Launchpad and GitLab:
// letters, digits, ".", "_", "+" and "-", starting with a letter or
// digit.
func validImportName(s string) bool {
	if s == "" || len(s) > 100 {
		return false
	}
	for i, c := range []byte(s) {
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		case i > 0 && (c == '.' || c == '_' || c == '+' || c == '-'):
		default:
			return false
		}
	}
	return true
}

// launchpadURL is where name's Launchpad keys are: the root's
// sshImportConfFile's URL template if it has one (exactly one "{}" or
// "%s"), else Launchpad's /~NAME/+sshkeys.
func launchpadURL(e *core.Env, name string) (string, error) {
	q := url.QueryEscape(name)
	b, err := e.Root.ReadFile(sshImportConfFile)
	if errors.Is(err, fs.ErrNotExist) {
		return sshImportLaunchpad + "/~" + q + "/+sshkeys", nil
	}
	if err != nil {
		return "", err
	}
	if len(b) > 64<<10 {
		return "", fmt.Errorf("%s: larger than 64 KiB", sshImportConfFile)
	}
	var conf struct {
		URL string `json:"URL"`
	}
	if err := json.Unmarshal(b, &conf); err != nil {
		return "", fmt.Errorf("%s: not JSON: %w", sshImportConfFile, err)
	}
	t := conf.URL
	switch {
	case strings.Count(t, "{}") == 1 && !strings.Contains(t, "%"):
		t = strings.Replace(t, "{}", q, 1)
	case strings.Count(t, "%s") == 1 && strings.Count(t, "%") == 1 && !strings.Contains(t, "{}"):
		t = strings.Replace(t, "%s", q, 1)
	default:
		return "", fmt.Errorf("%s: URL %q: want a template with one {} (or %%s) for the user name", sshImportConfFile, conf.URL)
	}
	if pu, err := url.Parse(t); err != nil || pu.Scheme != "https" && pu.Scheme != "http" || pu.Host == "" {
		return "", fmt.Errorf("%s: URL %q: not an http or https URL", sshImportConfFile, conf.URL)
	}
	return t, nil
}

// checkPublicKey checks an authorized_keys line split into fields (n
// bytes long) is an OpenSSH public key without options: a key type, the
// base64 key blob of that type (RFC 4253, 5656, 8709; OpenSSH's sk-
// types), and a comment without control characters. Certificates are not
// taken: they need the cert-authority option.
func checkPublicKey(f []string, n int) error {
	if n > sshImportMaxLine {
		return fmt.Errorf("longer than %d bytes", sshImportMaxLine)
	}
	if len(f) < 2 {
		return errors.New("no key")
	}
	// How many SSH strings follow the type in the blob.
	parts := map[string]int{
		"ssh-rsa": 2, "ssh-dss": 4, "ssh-ed25519": 1,
		"ecdsa-sha2-nistp256": 2, "ecdsa-sha2-nistp384": 2, "ecdsa-sha2-nistp521": 2,
		"sk-ecdsa-sha2-nistp256@openssh.com": 3, "sk-ssh-ed25519@openssh.com": 2,
	}[f[0]]
	if parts == 0 {
		return fmt.Errorf("key type %q", f[0])
	}
	blob, err := base64.StdEncoding.DecodeString(f[1])
	if err != nil {
		return fmt.Errorf("key: %w", err)
	}
	var fields [][]byte
	for len(blob) > 0 {
		if len(blob) < 4 {
			return errors.New("key: truncated")
		}
		l := binary.BigEndian.Uint32(blob)
		if uint64(l) > uint64(len(blob)-4) {
			return errors.New("key: truncated")
		}
		fields, blob = append(fields, blob[4:4+l]), blob[4+l:]
	}
	if len(fields) != parts+1 || string(fields[0]) != f[0] {
		return fmt.Errorf("key: not a %s key", f[0])
	}
	for _, p := range fields[1:] {
		if len(p) == 0 {
			return fmt.Errorf("key: not a %s key", f[0])
		}
	}
	if (f[0] == "ssh-ed25519" || f[0] == "sk-ssh-ed25519@openssh.com") && len(fields[1]) != 32 {
		return errors.New("key: an ed25519 key is 32 bytes")
	}
	if curve, ok := strings.CutPrefix(strings.TrimPrefix(f[0], "sk-"), "ecdsa-sha2-"); ok &&
		string(fields[1]) != strings.TrimSuffix(curve, "@openssh.com") {
		return fmt.Errorf("key: curve %q in a %s key", fields[1], f[0])
	}
	for _, c := range strings.Join(f[2:], " ") {
		if c < ' ' || c == 0x7f {
			return errors.New("comment: a control character")
		}
	}
	return nil
}
