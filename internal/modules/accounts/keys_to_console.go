package accounts

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"math/big"
	"os"
	"path"
	"sort"
	"strings"
	"time"

	"github.com/earlyinit/earlyinit/internal/ccfg"
	"github.com/earlyinit/earlyinit/internal/modules/core"
)

// KeysToConsole is cc_keys_to_console, per instance, in the final stage
// (after ssh made the host keys): what cloud-init's helper
// write-ssh-key-fingerprints prints, done here without it. For each
// /etc/ssh/ssh_host_*key.pub (in name order) whose key type (the first
// word of its first line) is not in ssh_fp_console_blacklist, the
// fingerprints as ssh-keygen -l prints them, between "BEGIN SSH HOST KEY
// FINGERPRINTS" lines, each key file's lines as one message of logger -s
// -t cloud-init ("<14>Mmm dd hh:mm:ss cloud-init: "); then the files
// whose type is not in ssh_key_console_blacklist (default ssh-dss),
// between "BEGIN SSH HOST KEY KEYS" lines. ssh.emit_keys_to_console false
// prints nothing. The helper compares both lists with key types, not
// fingerprints, and so does earlyinit.
//
// The text goes where final_message's does: the output log and, line by
// line, the runner's log, which the console gets.
func KeysToConsole(_ context.Context, e *core.Env) error {
	ssh, _, err := ccfg.Decode[*ccfg.SSHConsole](e.Cfg, "ssh")
	if err != nil {
		return err
	}
	if ssh != nil && ssh.EmitKeysToConsole != nil && !*ssh.EmitKeysToConsole {
		e.Logf("keys_to_console: ssh.emit_keys_to_console is false: host keys not printed")
		return nil
	}
	fpBL, _, err := ccfg.Decode[[]string](e.Cfg, "ssh_fp_console_blacklist")
	if err != nil {
		return err
	}
	keyBL, given, err := ccfg.Decode[[]string](e.Cfg, "ssh_key_console_blacklist")
	if err != nil {
		return err
	}
	if !given && !ccfg.GivenNull(e.Cfg, "ssh_key_console_blacklist") {
		keyBL = []string{"ssh-dss"}
	}
	now := time.Now
	if e.Now != nil {
		now = e.Now
	}
	out, err := hostKeysText(e, strings.Join(fpBL, ","), strings.Join(keyBL, ","), now())
	if err != nil {
		return err
	}
	if out = strings.TrimSpace(out); out != "" {
		toConsole(e, out+"\n")
	}
	return nil
}

// toConsole writes text where cloud-init's util.multi_log(console=True)
// would: as final_message does, to the output log and, a line at a time,
// to the runner's log (which its console gets).
func toConsole(e *core.Env, text string) {
	fmt.Fprint(e.Out(), text)
	for _, l := range strings.Split(strings.TrimSuffix(text, "\n"), "\n") {
		e.Logf("%s", l)
	}
}

// maxHostKeyFile bounds a host public key file read for the console.
const maxHostKeyFile = 64 << 10

// hostKeysText is the helper's output for the blacklists as it gets them
// (comma-joined), at now.
func hostKeysText(e *core.Env, fpBL, keyBL string, now time.Time) (string, error) {
	ents, err := os.ReadDir(e.Root.Path("/etc/ssh"))
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return "", fmt.Errorf("keys_to_console: %w", err)
	}
	type keyFile struct {
		name, ktype string
		data        []byte
	}
	var files []keyFile
	for _, ent := range ents {
		if ok, _ := path.Match("ssh_host_*key.pub", ent.Name()); !ok {
			continue
		}
		name := "/etc/ssh/" + ent.Name()
		fi, err := e.Root.Stat(name)
		if err != nil || !fi.Mode().IsRegular() {
			continue
		}
		if fi.Size() > maxHostKeyFile {
			e.Logf("keys_to_console: %s: larger than %d bytes: skipped", name, maxHostKeyFile)
			continue
		}
		b, err := e.Root.ReadFile(name)
		if err != nil {
			return "", fmt.Errorf("keys_to_console: %w", err)
		}
		files = append(files, keyFile{name, shReadFirstWord(string(b)), b})
	}
	sort.Slice(files, func(i, j int) bool { return files[i].name < files[j].name })
	prefix := "<14>" + now.Format("Jan _2 15:04:05") + " cloud-init: "
	var b strings.Builder
	shown := false
	for _, f := range files {
		if keyTypeListed(fpBL, f.ktype) {
			continue
		}
		if !shown {
			b.WriteString(prefix + "#############################################################\n")
			b.WriteString(prefix + "-----BEGIN SSH HOST KEY FINGERPRINTS-----\n")
			shown = true
		}
		fp, err := sshKeygenList(string(f.data))
		if err != nil {
			// ssh-keygen's complaint, on its stderr (the helper's
			// stdout) and ending in CR LF as OpenSSH's log lines do,
			// then logger with an empty message: nothing.
			b.WriteString(f.name + " is not a public key file.\r\n")
			e.Logf("keys_to_console: %s: %v", f.name, err)
			continue
		}
		b.WriteString(prefix + fp + "\n")
	}
	if shown {
		b.WriteString(prefix + "-----END SSH HOST KEY FINGERPRINTS-----\n")
		b.WriteString(prefix + "#############################################################\n")
	}
	shown = false
	for _, f := range files {
		if keyTypeListed(keyBL, f.ktype) {
			continue
		}
		if !shown {
			b.WriteString("-----BEGIN SSH HOST KEY KEYS-----\n")
			shown = true
		}
		b.WriteString(visControls(string(f.data)))
	}
	if shown {
		b.WriteString("-----END SSH HOST KEY KEYS-----\n")
	}
	return b.String(), nil
}

// shReadFirstWord is what sh's `read -r ktype line` puts in ktype: the first
// field of the first line.
func shReadFirstWord(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	s = strings.TrimLeft(s, " \t")
	if i := strings.IndexAny(s, " \t"); i >= 0 {
		s = s[:i]
	}
	return s
}

// keyTypeListed is the helper's test [ "${list#*,$ktype,}" = "$list" ] with
// list ",bl,": whether ",ktype," occurs in it (taken literally, where the
// shell would read ktype as a pattern).
func keyTypeListed(bl, ktype string) bool {
	return strings.Contains(","+bl+",", ","+ktype+",")
}

// sshKeygenList is `ssh-keygen -l -f` of a public key file's content: a
// line "BITS SHA256:FP COMMENT (TYPE)" for each key line (blank lines and
// "#" comments skipped, authorized_keys options and known_hosts host
// names allowed before the key, lines that are no key ignored), the lines
// joined by "\n"; an error when there is no key at all. The comment is
// sanitized as ssh-keygen's mprintf does in the C locale.
func sshKeygenList(content string) (string, error) {
	var out []string
	for i, line := range strings.Split(content, "\n") {
		cp := strings.TrimLeft(line, " \t")
		if cp == "" || cp[0] == '#' {
			continue
		}
		if i == 0 && strings.Contains(cp, "PRIVATE KEY") {
			return "", errors.New("a private key, not a public one")
		}
		k, rest, err := sshkeyRead(cp)
		comment := ""
		if err != nil {
			// Not a key: options or host names first, unless it starts
			// with a number and a blank (an SSH1 key).
			if ssh1Key(cp) {
				continue
			}
			end := skipQuoted(cp)
			if end >= len(cp) {
				continue
			}
			comment = cp[:end]
			if k, rest, err = sshkeyRead(cp[end+1:]); err != nil {
				continue
			}
		}
		rest = strings.TrimLeft(rest, " \t")
		if rest != "" && rest[0] != '#' {
			comment = rest
		}
		if comment == "" {
			comment = "no comment"
		}
		sum := sha256.Sum256(k.blob)
		out = append(out, fmt.Sprintf("%d SHA256:%s %s (%s)", k.bits, base64.RawStdEncoding.EncodeToString(sum[:]),
			visC(comment), k.name))
	}
	if len(out) == 0 {
		return "", errors.New("no public key in it")
	}
	return strings.Join(out, "\n"), nil
}

// ssh1Key tells whether s starts as ssh-keygen takes for an SSH1 key
// (strtol finds a number other than 0, then a blank), which it does not
// read past.
func ssh1Key(s string) bool {
	i := 0
	if i < len(s) && (s[i] == '-' || s[i] == '+') {
		i++
	}
	nonZero, digits := false, false
	for ; i < len(s) && s[i] >= '0' && s[i] <= '9'; i++ {
		digits = true
		nonZero = nonZero || s[i] != '0'
	}
	return digits && nonZero && i < len(s) && (s[i] == ' ' || s[i] == '\t')
}

// skipQuoted is the index of the first blank of s outside double quotes
// (a \" does not count), len(s) if none: the end of an authorized_keys
// options field or a known_hosts host list, as ssh-keygen finds it.
func skipQuoted(s string) int {
	quoted := false
	for i := 0; i < len(s); i++ {
		switch {
		case !quoted && (s[i] == ' ' || s[i] == '\t'):
			return i
		case s[i] == '\\' && i+1 < len(s) && s[i+1] == '"':
			i++
		case s[i] == '"':
			quoted = !quoted
		}
	}
	return len(s)
}

// sshKey is a parsed public key: its wire blob, size and ssh-keygen's
// type name.
type sshKey struct {
	blob []byte
	bits int
	name string
}

// sshkeyRead is OpenSSH's sshkey_read: a key type, blanks, the base64 key
// blob (whose type must be the same), returning what follows it.
func sshkeyRead(cp string) (sshKey, string, error) {
	cp = strings.TrimLeft(cp, " \t")
	sp := strings.IndexAny(cp, " \t")
	if sp < 0 {
		return sshKey{}, "", errors.New("no key after the key type")
	}
	ktype := cp[:sp]
	cp = strings.TrimLeft(cp[sp:], " \t")
	if cp == "" {
		return sshKey{}, "", errors.New("no key after the key type")
	}
	end := strings.IndexAny(cp, " \t")
	if end < 0 {
		end = len(cp)
	}
	blob, err := base64.StdEncoding.DecodeString(cp[:end])
	if err != nil {
		return sshKey{}, "", fmt.Errorf("key: %w", err)
	}
	k, err := parseKeyBlob(blob)
	if err != nil {
		return sshKey{}, "", err
	}
	if t, _, _ := sshWireString(blob); string(t) != ktype {
		return sshKey{}, "", fmt.Errorf("key type %q does not match the key's %q", ktype, t)
	}
	return k, cp[end:], nil
}

// sshWireString reads an SSH wire string (uint32 length, bytes).
func sshWireString(b []byte) (s, rest []byte, ok bool) {
	if len(b) < 4 {
		return nil, nil, false
	}
	n := binary.BigEndian.Uint32(b)
	if uint64(n) > uint64(len(b)-4) {
		return nil, nil, false
	}
	return b[4 : 4+n], b[4+n:], true
}

// parseKeyBlob checks a public key blob of a plain key type (RSA, DSA,
// ECDSA, Ed25519 and their security-key forms; not certificates) and
// returns its size and name as ssh-keygen -l shows them.
func parseKeyBlob(blob []byte) (sshKey, error) {
	t, b, ok := sshWireString(blob)
	if !ok {
		return sshKey{}, errors.New("key blob: no key type")
	}
	var fields [][]byte
	read := func(n int) bool {
		for range n {
			var f []byte
			if f, b, ok = sshWireString(b); !ok {
				return false
			}
			fields = append(fields, f)
		}
		return true
	}
	k := sshKey{blob: blob}
	bad := fmt.Errorf("key blob: a malformed %s key", t)
	switch ts := string(t); ts {
	case "ssh-rsa":
		if !read(2) {
			return k, bad
		}
		k.bits, k.name = new(big.Int).SetBytes(fields[1]).BitLen(), "RSA"
		if k.bits < 1024 {
			return k, fmt.Errorf("key blob: RSA modulus of %d bits, under 1024", k.bits)
		}
	case "ssh-dss":
		if !read(4) {
			return k, bad
		}
		k.bits, k.name = new(big.Int).SetBytes(fields[0]).BitLen(), "DSA"
	case "ecdsa-sha2-nistp256", "ecdsa-sha2-nistp384", "ecdsa-sha2-nistp521", "sk-ecdsa-sha2-nistp256@openssh.com":
		n := 2
		k.name = "ECDSA"
		if strings.HasPrefix(ts, "sk-") {
			n, k.name = 3, "ECDSA-SK"
		}
		if !read(n) {
			return k, bad
		}
		curve := strings.TrimSuffix(strings.TrimPrefix(strings.TrimPrefix(ts, "sk-"), "ecdsa-sha2-"), "@openssh.com")
		if string(fields[0]) != curve {
			return k, fmt.Errorf("key blob: curve %q in a %s key", fields[0], ts)
		}
		bits, err := checkPoint(curve, fields[1])
		if err != nil {
			return k, fmt.Errorf("key blob: %s point: %w", curve, err)
		}
		k.bits = bits
	case "ssh-ed25519", "sk-ssh-ed25519@openssh.com":
		n := 1
		k.name = "ED25519"
		if strings.HasPrefix(ts, "sk-") {
			n, k.name = 2, "ED25519-SK"
		}
		if !read(n) || len(fields[0]) != 32 {
			return k, bad
		}
		k.bits = 256
	default:
		return k, fmt.Errorf("key blob: key type %q not supported", t)
	}
	if len(b) != 0 {
		return k, fmt.Errorf("key blob: %d bytes after the %s key", len(b), t)
	}
	return k, nil
}

// visC is ssh-keygen's mprintf in the C locale: printable ASCII, tab,
// CR and LF as they are, every other byte as \ooo.
func visC(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= ' ' && c <= '~' || c == '\t' || c == '\r' || c == '\n' {
			b.WriteByte(c)
		} else {
			fmt.Fprintf(&b, "\\%03o", c)
		}
	}
	return b.String()
}

// visControls writes control characters (but tab and LF) and DEL as \ooo,
// so that a file's content cannot drive the console; the rest as is.
func visControls(s string) string {
	if !strings.ContainsFunc(s, isControl) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if c := s[i]; isControl(rune(c)) {
			fmt.Fprintf(&b, "\\%03o", c)
		} else {
			b.WriteByte(c)
		}
	}
	return b.String()
}

func isControl(r rune) bool { return r < ' ' && r != '\t' && r != '\n' || r == 0x7f }
