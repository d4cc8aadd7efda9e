package accounts

import (
	"context"
	"crypto/md5"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/sha3"
	"crypto/sha512"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io/fs"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/earlyinit/earlyinit/internal/ccfg"
	"github.com/earlyinit/earlyinit/internal/modules/core"
	"github.com/earlyinit/earlyinit/internal/pystr"
)

// SSHAuthkeyFingerprints is cc_ssh_authkey_fingerprints, per instance:
// unless no_ssh_fingerprints is true, for each user of the users key
// (but those with no_create_home or system) the keys of their
// authorized_keys file as cloud-init's table, each line behind
// "ci-info: ", to the console as keys_to_console's text goes: a title
// ("Authorized keys from FILE for user NAME" centred in "+"), then a
// table of Keytype, Fingerprint (HASH), Options and Comment, "-" for an
// empty cell. Control characters in a cell are written \ooo (cloud-init
// writes them as they are). The fingerprint is authkey_hash (default sha256; md5, sha1, sha224,
// sha384, sha512, sha512_224, sha512_256 and sha3_* too) of the decoded
// key, in hex pairs joined by ":", "?" for a hash or a key that is not
// known. The file is the first of sshd_config's AuthorizedKeysFile that
// is the user's (%h, %u or under the home) and a regular file, else
// ~/.ssh/authorized_keys. Unlike cloud-init, earlyinit creates none of
// them and does not check their modes (sshd's StrictModes).
func SSHAuthkeyFingerprints(_ context.Context, e *core.Env) error {
	if no, _, err := ccfg.Decode[bool](e.Cfg, "no_ssh_fingerprints"); no || err != nil {
		if err == nil {
			e.Logf("ssh_authkey_fingerprints: no_ssh_fingerprints is set: nothing printed")
		}
		return err
	}
	hashName, _, err := ccfg.Decode[string](e.Cfg, "authkey_hash")
	if err != nil {
		return err
	}
	if strings.ContainsFunc(hashName, unicode.IsControl) {
		return fmt.Errorf("authkey_hash: %q is no hash name", hashName)
	}
	if newAuthkeyHash(hashName) == nil {
		e.Logf("ssh_authkey_fingerprints: authkey_hash %q is not a hash earlyinit knows: fingerprints are \"?\"", hashName)
	}
	users, warns, err := normalizeUsers(e)
	for _, w := range warns {
		e.Logf("ssh_authkey_fingerprints: %s", w)
	}
	if err != nil {
		return err
	}
	a, err := core.ReadAccounts(e.Root)
	if err != nil {
		return fmt.Errorf("ssh_authkey_fingerprints: %w", err)
	}
	var errs []error
	for _, u := range users {
		if u.Cfg.NoCreateHome.Truthy() || u.Cfg.System.Truthy() {
			e.Logf("ssh_authkey_fingerprints: user %s has no home directory made: skipped", u.Name)
			continue
		}
		pw, ok := a.User(u.Name)
		if !ok {
			errs = append(errs, fmt.Errorf("ssh_authkey_fingerprints: user %s: not in /etc/passwd", u.Name))
			continue
		}
		if pw.Home == "" || pw.Home[0] != '/' {
			errs = append(errs, fmt.Errorf("ssh_authkey_fingerprints: user %s: home %q is not an absolute path", u.Name, pw.Home))
			continue
		}
		file := authorizedKeysFile(e, pw)
		entries, err := readAuthorizedKeys(e, file)
		if err != nil {
			errs = append(errs, fmt.Errorf("ssh_authkey_fingerprints: user %s: %w", u.Name, err))
			continue
		}
		toConsole(e, authkeyTable(u.Name, file, entries, hashName, "ci-info: "))
	}
	return errors.Join(errs...)
}

// authorizedKeysFile is ssh_util.extract_authorized_keys' choice: of
// sshd_config's AuthorizedKeysFile (default %h/.ssh/authorized_keys), the
// first path that is the user's (it has %h or %u, or is under the home)
// and a regular file; else the home's .ssh/authorized_keys.
func authorizedKeysFile(e *core.Env, pw core.PasswdEntry) string {
	home := strings.TrimSuffix(pw.Home, "/")
	def := home + "/.ssh/authorized_keys"
	value := "%h/.ssh/authorized_keys"
	if b, err := e.Root.ReadFile("/etc/ssh/sshd_config"); err == nil {
		if v, ok := sshdConfigMap(string(b))["authorizedkeysfile"]; ok {
			value = v
		}
	}
	for _, p := range strings.Fields(value) {
		r := strings.NewReplacer("%h", pw.Home, "%u", pw.Name, "%%", "%").Replace(p)
		if !strings.HasPrefix(r, "/") {
			r = home + "/" + r
		}
		if !strings.Contains(p, "%u") && !strings.Contains(p, "%h") && !strings.HasPrefix(r, pw.Home+"/") {
			continue
		}
		if fi, err := e.Root.Stat(r); err == nil && fi.Mode().IsRegular() {
			return r
		}
	}
	return def
}

// sshdConfigMap is ssh_util.parse_ssh_config_map: keyword (lower case) to
// its argument, the last line winning; no Include nor Match.
func sshdConfigMap(text string) map[string]string {
	m := map[string]string{}
	for _, line := range pystr.Splitlines(text) {
		line = strings.TrimFunc(line, pyIsSpace)
		if line == "" || line[0] == '#' {
			continue
		}
		k, v, ok := pySplit1(line)
		if !ok {
			if k, v, ok = strings.Cut(line, "="); !ok {
				continue
			}
		}
		m[strings.ToLower(k)] = v
	}
	return m
}

// maxAuthorizedKeys bounds an authorized_keys file read.
const maxAuthorizedKeys = 4 << 20

// readAuthorizedKeys is ssh_util.parse_authorized_keys of one file: none
// when it is missing.
func readAuthorizedKeys(e *core.Env, file string) ([]authKeyLine, error) {
	fi, err := e.Root.Stat(file)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, nil
	}
	if fi.Size() > maxAuthorizedKeys {
		return nil, fmt.Errorf("%s: larger than %d bytes", file, maxAuthorizedKeys)
	}
	b, err := e.Root.ReadFile(file)
	if err != nil {
		return nil, err
	}
	var out []authKeyLine
	for _, l := range pystr.Splitlines(string(b)) {
		out = append(out, parseAuthKeyLine(l))
	}
	return out, nil
}

// authkeyTable is _pprint_key_entries: a line for no keys, else the
// centred title and a SimpleTable of the keys of a known type, each line
// behind prefix, ending in a newline.
func authkeyTable(user, file string, entries []authKeyLine, hashName, prefix string) string {
	if len(entries) == 0 {
		return fmt.Sprintf("%sno authorized SSH keys fingerprints found for user %s.\n", prefix, user)
	}
	t := simpleTable{fields: []string{"Keytype", "Fingerprint (" + hashName + ")", "Options", "Comment"}}
	for _, k := range entries {
		if k.keytype == "" || !sshValidKeyType(strings.ToLower(strings.TrimFunc(k.keytype, pyIsSpace))) {
			continue
		}
		t.rows = append(t.rows, []string{
			authkeyCell(k.keytype), authkeyCell(authkeyFingerprint(k.base64, hashName)), authkeyCell(k.options), authkeyCell(k.comment),
		})
	}
	lines := t.lines()
	width := 0
	for _, l := range lines {
		width = max(width, utf8.RuneCountInString(l))
	}
	title := fmt.Sprintf("Authorized keys from %s for user %s", file, user)
	var b strings.Builder
	b.WriteString(prefix + formatCenter(title, '+', width) + "\n")
	for _, l := range lines {
		b.WriteString(prefix + l + "\n")
	}
	return b.String()
}

// authkeyCell is a table cell: "-" for none, control characters (tab too) as
// \ooo so that a key's comment cannot drive the console nor break the
// table.
func authkeyCell(s string) string {
	if s == "" {
		return "-"
	}
	return strings.ReplaceAll(visControls(s), "\t", `\011`)
}

// newAuthkeyHash is hashlib.new(name) for the hashes Go has; nil for
// others.
func newAuthkeyHash(name string) hash.Hash {
	switch strings.ToLower(name) {
	case "md5":
		return md5.New()
	case "sha1":
		return sha1.New()
	case "sha224":
		return sha256.New224()
	case "sha256":
		return sha256.New()
	case "sha384":
		return sha512.New384()
	case "sha512":
		return sha512.New()
	case "sha512_224":
		return sha512.New512_224()
	case "sha512_256":
		return sha512.New512_256()
	case "sha3_224":
		return sha3.New224()
	case "sha3_256":
		return sha3.New256()
	case "sha3_384":
		return sha3.New384()
	case "sha3_512":
		return sha3.New512()
	}
	return nil
}

// authkeyFingerprint is _gen_fingerprint: "" for no key, "?" when the key
// is not base64 (as Python's lenient b64decode reads it) or the hash is
// not known, else the hex digest in pairs joined by ":".
func authkeyFingerprint(b64, hashName string) string {
	if b64 == "" {
		return ""
	}
	h := newAuthkeyHash(hashName)
	blob, ok := pyB64Decode(b64)
	if h == nil || !ok {
		return "?"
	}
	h.Write(blob)
	hx := hex.EncodeToString(h.Sum(nil))
	pairs := make([]string, 0, len(hx)/2)
	for i := 0; i < len(hx); i += 2 {
		pairs = append(pairs, hx[i:i+2])
	}
	return strings.Join(pairs, ":")
}

// pyB64Decode is Python's base64.b64decode(s) (validate=False): ASCII
// only; characters outside the alphabet skipped; input ends at complete
// padding; a partial last quantum is an error.
func pyB64Decode(s string) ([]byte, bool) {
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
	var out []byte
	quad, pads := 0, 0
	var left byte
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 0x80 {
			return nil, false
		}
		if c == '=' {
			if pads++; quad >= 2 && quad+pads >= 4 {
				return out, true
			}
			continue
		}
		v := strings.IndexByte(alphabet, c)
		if v < 0 {
			continue
		}
		pads = 0
		x := byte(v)
		switch quad {
		case 0:
			left, quad = x, 1
		case 1:
			out = append(out, left<<2|x>>4)
			left, quad = x&0x0f, 2
		case 2:
			out = append(out, left<<4|x>>2)
			left, quad = x&0x03, 3
		case 3:
			out = append(out, left<<6|x)
			left, quad = 0, 0
		}
	}
	return out, quad == 0
}

// simpleTable is cloud-init's SimpleTable: columns as wide as their
// widest cell plus a blank each side, cells centred as Python's
// str.center does.
type simpleTable struct {
	fields []string
	rows   [][]string
}

func (t simpleTable) lines() []string {
	widths := make([]int, len(t.fields))
	for _, r := range append([][]string{t.fields}, t.rows...) {
		for i, c := range r {
			widths[i] = max(widths[i], utf8.RuneCountInString(c))
		}
	}
	hdiv := "+"
	for _, w := range widths {
		hdiv += strings.Repeat("-", w+2) + "+"
	}
	row := func(r []string) string {
		s := "|"
		for i, c := range r {
			s += pyCenter(c, widths[i]+2) + "|"
		}
		return s
	}
	out := []string{hdiv, row(t.fields), hdiv}
	for _, r := range t.rows {
		out = append(out, row(r))
	}
	return append(out, hdiv)
}

// pyCenter is Python's str.center(width): the odd blank goes left when
// the width is odd, right otherwise.
func pyCenter(s string, width int) string {
	marg := width - utf8.RuneCountInString(s)
	if marg <= 0 {
		return s
	}
	left := marg/2 + (marg & width & 1)
	return strings.Repeat(" ", left) + s + strings.Repeat(" ", marg-left)
}

// formatCenter is Python's "{0:{fill}^{width}}".format(s): the odd fill
// character goes right.
func formatCenter(s string, fill rune, width int) string {
	marg := width - utf8.RuneCountInString(s)
	if marg <= 0 {
		return s
	}
	f := string(fill)
	return strings.Repeat(f, marg/2) + s + strings.Repeat(f, marg-marg/2)
}

// pyIsSpace is Python's str.isspace for one character.
func pyIsSpace(r rune) bool {
	return unicode.IsSpace(r) || r >= 0x1c && r <= 0x1f
}

// pySplitN is Python's s.split(None, n-1): at most n fields split at
// runs of whitespace, the last one the rest (its trailing whitespace
// kept).
func pySplitN(s string, n int) []string {
	var out []string
	for {
		s = strings.TrimLeftFunc(s, pyIsSpace)
		if s == "" {
			return out
		}
		if len(out) == n-1 {
			return append(out, s)
		}
		i := strings.IndexFunc(s, pyIsSpace)
		if i < 0 {
			return append(out, s)
		}
		out = append(out, s[:i])
		s = s[i:]
	}
}

// pySplit1 is Python's `key, val = line.split(None, 1)`.
func pySplit1(s string) (string, string, bool) {
	f := pySplitN(s, 2)
	if len(f) != 2 {
		return "", "", false
	}
	return f[0], f[1], true
}
