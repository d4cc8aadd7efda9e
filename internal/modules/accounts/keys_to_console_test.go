package accounts

import (
	"bytes"
	"encoding/base64"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/earlyinit/earlyinit/internal/modules/core"
	"github.com/earlyinit/earlyinit/internal/modules/coretest"
)

// sshKeygen is the ssh-keygen the fingerprints are checked against; the
// test fails without it (make deps installs openssh-client).
func sshKeygen(t *testing.T) string {
	t.Helper()
	p, err := exec.LookPath("ssh-keygen")
	if err != nil {
		t.Fatal("no ssh-keygen to check fingerprints against: make deps installs openssh-client")
	}
	return p
}

// testHostKeys are public key files made by ssh-keygen, by name (the
// type and size): made once, they are slow.
var testHostKeys = sync.OnceValues(func() (map[string]string, error) {
	dir, err := os.MkdirTemp("", "earlyinit-hostkeys")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	keys := map[string]string{}
	for _, k := range []struct{ name, t, bits, comment string }{
		{"rsa", "rsa", "1024", "root@host"},
		{"ecdsa", "ecdsa", "256", "root@host"},
		{"ecdsa384", "ecdsa", "384", "two  words  "},
		{"ecdsa521", "ecdsa", "521", "x"},
		{"ed25519", "ed25519", "", ""},
		{"dsa", "dsa", "", "root@old"},
	} {
		f := filepath.Join(dir, k.name)
		args := []string{"-q", "-t", k.t, "-N", "", "-C", k.comment, "-f", f}
		if k.bits != "" {
			args = append(args, "-b", k.bits)
		}
		if out, err := exec.Command("ssh-keygen", args...).CombinedOutput(); err != nil {
			if k.t == "dsa" {
				continue // an OpenSSH without DSA
			}
			return nil, &exec.Error{Name: "ssh-keygen " + strings.Join(args, " ") + ": " + string(out), Err: err}
		}
		b, err := os.ReadFile(f + ".pub")
		if err != nil {
			return nil, err
		}
		keys[k.name] = string(b)
	}
	return keys, nil
})

func hostKeys(t *testing.T) map[string]string {
	t.Helper()
	sshKeygen(t)
	k, err := testHostKeys()
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// keygenList is what `ssh-keygen -l -f` says of content in the C locale:
// its output, or ok false when it fails.
func keygenList(t *testing.T, content string) (string, bool) {
	t.Helper()
	f := filepath.Join(t.TempDir(), "k.pub")
	if err := os.WriteFile(f, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(sshKeygen(t), "-l", "-f", f)
	cmd.Env = []string{"LC_ALL=C", "PATH=" + core.DefaultPath}
	out, err := cmd.Output()
	if err != nil {
		return "", false
	}
	return strings.TrimRight(string(out), "\n"), true
}

func TestSSHKeygenListMatchesSSHKeygen(t *testing.T) {
	k := hostKeys(t)
	ed := strings.Fields(k["ed25519"])
	rsa := strings.Fields(k["rsa"])
	cases := []string{
		"ssh-ed25519 " + ed[1] + " a comment\twith a tab\n",
		"ssh-ed25519 " + ed[1] + " caf\xc3\xa9 \x1b[31mred\x07 \x7f\r\n",
		"\n# a comment\n  \t" + k["ed25519"] + k["rsa"],
		`no-pty,command="echo a b" ` + k["ed25519"],
		`command="x \"y\" z" ` + strings.Join(ed[:2], " ") + "\n",
		"host1,host2 " + strings.Join(ed[:2], " ") + "\n",
		"host1,host2 " + strings.Join(ed[:2], " ") + " # not a comment\n",
		"garbage\n" + k["rsa"],
		"ssh-ed25519 " + ed[1] + " #c\n",
		strings.Join(ed[:2], " ") + "\r\n",
		"ssh-rsa " + ed[1] + " type mismatch\n",
		"ssh-ed25519 " + rsa[1] + " type mismatch\n",
		"ssh-ed25519 " + ed[1][:20] + " truncated\n",
		"ssh-ed25519 !!!notbase64 x\n",
		"1024 35 1234567 ssh1\n",
		"0 " + k["ed25519"],
		"ssh-ed25519\n",
		"",
		"# only a comment\n",
		"ssh-ed25519 " + ed[1] + "AAAA trailing data\n",
	}
	// ECDSA points off the curve, and with a coordinate of p or more
	// (all ones).
	for name, n := range map[string]int{"ecdsa": 32, "ecdsa384": 48, "ecdsa521": 66} { // n: a coordinate's bytes
		f := strings.Fields(k[name])
		blob, err := base64.StdEncoding.DecodeString(f[1])
		if err != nil {
			t.Fatal(err)
		}
		off := bytes.Clone(blob)
		off[len(off)-1] ^= 1
		big := bytes.Clone(blob)
		for i := len(big) - n; i < len(big); i++ {
			big[i] = 0xff
		}
		cases = append(cases,
			f[0]+" "+base64.StdEncoding.EncodeToString(off)+" off the curve\n",
			f[0]+" "+base64.StdEncoding.EncodeToString(big)+" y too big\n")
	}
	for name, c := range k {
		cases = append(cases, c)
		if name != "ed25519" {
			cases = append(cases, "# "+name+"\n"+c+c)
		}
	}
	for _, c := range cases {
		want, ok := keygenList(t, c)
		got, err := sshKeygenList(c)
		switch {
		case !ok && err == nil:
			t.Errorf("%q: ssh-keygen fails, earlyinit says %q", c, got)
		case ok && err != nil:
			t.Errorf("%q: ssh-keygen says %q, earlyinit fails: %v", c, want, err)
		case ok && got != want:
			t.Errorf("%q:\n got %q\nwant %q", c, got, want)
		}
	}
}

// helperScript is cloud-init's write-ssh-key-fingerprints made to read
// root's /etc/ssh and log to sock rather than /dev/log.
func helperScript(t *testing.T, root, sock string) string {
	t.Helper()
	const helper = "/usr/lib/cloud-init/write-ssh-key-fingerprints"
	b, err := os.ReadFile(helper)
	if err != nil {
		t.Fatalf("cloud-init's %s, the oracle: %v: make deps installs cloud-init", helper, err)
	}
	if _, err := exec.LookPath("logger"); err != nil {
		t.Fatal("no logger for cloud-init's helper: make deps installs util-linux (bsdutils)")
	}
	s := strings.ReplaceAll(string(b), "/etc/ssh/", root+"/etc/ssh/")
	s = strings.Replace(s, `logger $logger_opts "$log_message"`, `logger -u "`+sock+`" $logger_opts "$log_message"`, 1)
	if !strings.Contains(s, sock) || !strings.Contains(s, root) {
		t.Fatalf("%s changed: cannot point it at the test root", helper)
	}
	p := filepath.Join(t.TempDir(), "helper")
	if err := os.WriteFile(p, []byte(s), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

// runHelper is the console text cloud-init prints: the helper's output,
// stripped, and a newline.
func runHelper(t *testing.T, root string, args ...string) string {
	t.Helper()
	sock := filepath.Join(t.TempDir(), "log")
	l, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: sock, Net: "unixgram"})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	go func() {
		buf := make([]byte, 8192)
		for {
			if _, _, err := l.ReadFrom(buf); err != nil {
				return
			}
		}
	}()
	cmd := exec.Command("/bin/sh", append([]string{helperScript(t, root, sock)}, args...)...)
	cmd.Env = []string{"LC_ALL=C", "PATH=" + core.DefaultPath}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("cloud-init's helper: %v: %s", err, stderr.String())
	}
	return strings.TrimSpace(string(out)) + "\n"
}

var syslogStamp = core.LazyRE{Expr: `<14>[A-Z][a-z][a-z] [ 0-9][0-9] [0-9][0-9]:[0-9][0-9]:[0-9][0-9] cloud-init: `}

func TestKeysToConsoleMatchesCloudInitHelper(t *testing.T) {
	k := hostKeys(t)
	files := map[string]string{
		"ssh_host_rsa_key.pub":      k["rsa"],
		"ssh_host_ecdsa_key.pub":    k["ecdsa"],
		"ssh_host_e384_key.pub":     k["ecdsa384"],
		"ssh_host_e521_key.pub":     k["ecdsa521"],
		"ssh_host_ed25519_key.pub":  k["ed25519"],
		"ssh_host_multi_key.pub":    "# two keys\n" + k["ecdsa"] + "no-pty " + k["ed25519"],
		"ssh_host_bad_key.pub":      "not a key\n",
		"ssh_host_key.pub":          strings.TrimSuffix(k["rsa"], "\n"),
		"ssh_host_rsa_key":          "-----BEGIN OPENSSH PRIVATE KEY-----\n",
		"ssh_host_rsa_key-cert.pub": "ssh-rsa-cert-v01@openssh.com AAAA\n",
		"ssh_known_hosts":           k["rsa"],
	}
	if d, ok := k["dsa"]; ok {
		files["ssh_host_dsa_key.pub"] = d
	}
	for _, tc := range []struct {
		cfg         string
		fpBL, keyBL string // the helper's arguments, as cloud-init joins the lists
	}{
		{"", "", "ssh-dss"},
		{"ssh_fp_console_blacklist: [ssh-ed25519, ssh-rsa]\nssh_key_console_blacklist: []", "ssh-ed25519,ssh-rsa", ""},
		{"ssh_fp_console_blacklist: 'ecdsa-sha2-nistp256,ssh-dss'\nssh_key_console_blacklist: [ecdsa-sha2-nistp384]", "ecdsa-sha2-nistp256,ssh-dss", "ecdsa-sha2-nistp384"},
		{"ssh_fp_console_blacklist: [E25451E0221B5773DEBFF178ECDACB160995AA89]\nssh:\n  emit_keys_to_console: true", "E25451E0221B5773DEBFF178ECDACB160995AA89", "ssh-dss"},
		{"ssh_key_console_blacklist: [ssh-rsa, ecdsa-sha2-nistp256, ecdsa-sha2-nistp384, ecdsa-sha2-nistp521, ssh-ed25519, ssh-dss, not, '#']", "", "ssh-rsa,ecdsa-sha2-nistp256,ecdsa-sha2-nistp384,ecdsa-sha2-nistp521,ssh-ed25519,ssh-dss,not,#"},
	} {
		te := coretest.NewEnv(t, tc.cfg)
		for name, c := range files {
			te.Write("/etc/ssh/"+name, c, 0o644)
		}
		want := runHelper(t, te.Dir, tc.fpBL, tc.keyBL)
		te.Now = func() time.Time { return time.Date(2024, 3, 5, 7, 8, 9, 0, time.Local) }
		if err := te.RunFunc(KeysToConsole); err != nil {
			t.Fatalf("%q: %v", tc.cfg, err)
		}
		got := te.OutBuf.String()
		if !strings.HasPrefix(got, "<14>Mar  5 07:08:09 cloud-init: ####") && tc.fpBL == "" {
			t.Errorf("%q: output starts %q", tc.cfg, got[:min(len(got), 60)])
		}
		want = strings.ReplaceAll(syslogStamp.Get().ReplaceAllString(want, "<14>STAMP cloud-init: "), te.Dir, "")
		got = syslogStamp.Get().ReplaceAllString(got, "<14>STAMP cloud-init: ")
		if got != want {
			t.Errorf("%q:\n got %q\nwant %q", tc.cfg, got, want)
		}
		// The console gets the same lines through the runner's log.
		if lines := strings.Count(te.OutBuf.String(), "\n"); strings.Count(te.LogBuf.String(), "\n") < lines {
			t.Errorf("%q: %d lines in the log, %d printed", tc.cfg, strings.Count(te.LogBuf.String(), "\n"), lines)
		}
	}
}

func TestKeysToConsoleQuiet(t *testing.T) {
	k := hostKeys(t)
	for _, cfg := range []string{
		"ssh:\n  emit_keys_to_console: false",
		"ssh_fp_console_blacklist: [ssh-ed25519]\nssh_key_console_blacklist: [ssh-ed25519]",
		"ssh:\n  emit_keys_to_console: false\nssh_fp_console_blacklist: [[nested]]",
	} {
		te := coretest.NewEnv(t, cfg)
		te.Write("/etc/ssh/ssh_host_ed25519_key.pub", k["ed25519"], 0o644)
		if err := te.RunFunc(KeysToConsole); err != nil {
			t.Errorf("%q: %v", cfg, err)
		}
		if te.OutBuf.Len() != 0 {
			t.Errorf("%q: printed %q", cfg, te.OutBuf.String())
		}
	}
	// No /etc/ssh at all: nothing to print, no error.
	te := coretest.NewEnv(t, "")
	if err := te.RunFunc(KeysToConsole); err != nil || te.OutBuf.Len() != 0 {
		t.Errorf("no /etc/ssh: %v, %q", err, te.OutBuf.String())
	}
}

func TestKeysToConsoleBadConfig(t *testing.T) {
	for _, tc := range []struct{ cfg, key string }{
		{"ssh: true", "ssh"},
		{"ssh_fp_console_blacklist: {a: b}", "ssh_fp_console_blacklist"},
		{"ssh_key_console_blacklist: [[x]]", "ssh_key_console_blacklist.0"},
	} {
		te := coretest.NewEnv(t, tc.cfg)
		err := te.RunFunc(KeysToConsole)
		if err == nil || !strings.HasPrefix(err.Error(), tc.key+":") {
			t.Errorf("%q: error %v, want one naming %s", tc.cfg, err, tc.key)
		}
	}
}

// A key file cannot drive the console: its control characters are
// written \ooo in both blocks (ssh-keygen's way for the fingerprint's
// comment, and earlyinit's for the key itself, which cloud-init cats).
func TestKeysToConsoleEscapes(t *testing.T) {
	k := hostKeys(t)
	key := strings.Join(strings.Fields(k["ed25519"])[:2], " ") + " evil\x1b]0;title\x07\n"
	te := coretest.NewEnv(t, "")
	te.Write("/etc/ssh/ssh_host_ed25519_key.pub", key, 0o644)
	if err := te.RunFunc(KeysToConsole); err != nil {
		t.Fatal(err)
	}
	want, ok := keygenList(t, key)
	if !ok {
		t.Fatal("ssh-keygen refuses the key")
	}
	got := te.OutBuf.String()
	if !strings.Contains(got, "cloud-init: "+want+"\n") {
		t.Errorf("fingerprint %q not in %q", want, got)
	}
	if strings.ContainsAny(got, "\x1b\x07") || !strings.Contains(got, `evil\033]0;title\007`+"\n-----END SSH HOST KEY KEYS-----") {
		t.Errorf("control characters printed: %q", got)
	}
}
