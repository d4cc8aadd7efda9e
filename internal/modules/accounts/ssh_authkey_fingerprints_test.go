package accounts

import (
	"strings"
	"testing"

	"github.com/earlyinit/earlyinit/internal/modules/coretest"
)

// authkeyOracle is cloud-init 22.4.2's _pprint_key_entries of
// ssh_util.parse_authorized_keys([path]) for each case: the console text.
const authkeyOracle = `
from cloudinit import ssh_util, util
from cloudinit.config import cc_ssh_authkey_fingerprints as m
res = []
for c in json.load(sys.stdin):
    out = []
    m.util.multi_log = lambda text, **kw: out.append(text)
    m._pprint_key_entries(c["user"], c["shown"], ssh_util.parse_authorized_keys([c["path"]]), c["hash"])
    res.append("".join(out))
json.dump(res, sys.stdout)
`

func TestAuthkeyTableMatchesCloudInit(t *testing.T) {
	k := hostKeys(t)
	ed := strings.Fields(k["ed25519"])[1]
	rsa := strings.Fields(k["rsa"])[1]
	files := []string{
		k["ed25519"] + k["rsa"] + k["ecdsa384"],
		"# comment\n\n" +
			`no-port-forwarding,command="echo 'a b'; exit 142" ssh-ed25519 ` + ed + " user@laptop\n" +
			`from="10.0.0.0/8",no-pty ssh-rsa ` + rsa + "\r\n" +
			"rsa " + rsa + " short type name\n" +
			"ssh-ed25519 " + ed + " café ünïcode\n" +
			"ssh-ed25519 " + ed[:10] + "!!" + ed[10:] + " junk in base64\n" +
			"ssh-ed25519 AAAAB wrong length\n" +
			"ssh-ed25519 AAAA==AAAA after padding\n" +
			"ssh-rsa\n" +
			"not a key at all\n" +
			"   ssh-ed25519   " + ed + "   spaced   comment   \n",
		"ssh-ed25519 " + ed + " a\n",
		"ssh-ed25519 " + ed + " ab\n",
		"",
		"# nothing but comments\n\n",
	}
	var cases []map[string]string
	var envs []*coretest.Env
	for _, h := range []string{"sha256", "md5", "sha1", "sha512", "sha224", "sha384", "sha512_256", "sha3_256", "nosuch"} {
		for i, f := range files {
			te := coretest.NewEnv(t, "")
			te.Write("/home/u/.ssh/authorized_keys", f, 0o600)
			path := te.Root.Path("/home/u/.ssh/authorized_keys")
			if i == len(files)-1 {
				path += ".missing"
			}
			envs = append(envs, te)
			cases = append(cases, map[string]string{"user": "u", "shown": "/home/u/.ssh/authorized_keys", "path": path, "hash": h, "content": f})
		}
	}
	var want []string
	coretest.CiOracle(t, authkeyOracle, cases, &want)
	if len(want) != len(cases) {
		t.Fatalf("oracle gave %d answers for %d cases", len(want), len(cases))
	}
	for i, c := range cases {
		file := "/home/u/.ssh/authorized_keys"
		if strings.HasSuffix(c["path"], ".missing") {
			file += ".missing"
		}
		entries, err := readAuthorizedKeys(envs[i].Env, file)
		if err != nil {
			t.Fatal(err)
		}
		got := authkeyTable("u", "/home/u/.ssh/authorized_keys", entries, c["hash"], "ci-info: ")
		if got != want[i] {
			t.Errorf("%s of %q:\n got %s\nwant %s", c["hash"], c["content"], got, want[i])
		}
	}
}

func TestPyB64Decode(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want string
		ok   bool
	}{
		{"YWJj", "abc", true},
		{"YWI=", "ab", true},
		{"YQ==", "a", true},
		{"Y W\nJ!j", "abc", true},
		{"YWI=junk", "ab", true},
		{"YQ", "", false},
		{"Y", "", false},
		{"YWJjé", "", false},
		{"", "", true},
	} {
		got, ok := pyB64Decode(tc.in)
		if ok != tc.ok || ok && string(got) != tc.want {
			t.Errorf("%q: %q %v, want %q %v", tc.in, got, ok, tc.want, tc.ok)
		}
	}
}

func TestSSHAuthkeyFingerprints(t *testing.T) {
	k := hostKeys(t)
	const passwd = coretest.BasePasswd +
		"alice:x:1001:1001::/home/alice:/bin/sh\n" +
		"bob:x:1002:1002::/home/bob:/bin/sh\n" +
		"carol:x:1003:1003::/srv/carol:/bin/sh\n" +
		"svc:x:999:999::/var/lib/svc:/usr/sbin/nologin\n"
	te := coretest.NewEnv(t, "users:\n- name: alice\n- name: bob\n- name: carol\n- name: svc\n  system: true\n- name: nohome\n  no_create_home: true\nauthkey_hash: md5")
	te.Write("/etc/passwd", passwd, 0o644)
	te.Write("/home/alice/.ssh/authorized_keys", "# keys\n"+k["ed25519"], 0o600)
	te.Write("/srv/carol/.ssh/authorized_keys", k["rsa"], 0o600)
	te.Write("/etc/keys/carol", k["ecdsa"], 0o644)
	te.Write("/etc/ssh/sshd_config", "# test\nAuthorizedKeysFile /etc/keys/%u .ssh/authorized_keys\n", 0o644)
	if err := te.RunFunc(SSHAuthkeyFingerprints); err != nil {
		t.Fatal(err)
	}
	out := te.OutBuf.String()
	for _, want := range []string{
		// alice has no /etc/keys/alice: her home's file.
		"Authorized keys from /home/alice/.ssh/authorized_keys for user alice",
		"| ssh-ed25519 | " + authkeyFingerprint(strings.Fields(k["ed25519"])[1], "md5") + " |    -    |    -    |",
		"|   Keytype   |                Fingerprint (md5)                | Options | Comment |",
		"ci-info: no authorized SSH keys fingerprints found for user bob.\n",
		// carol's /etc/keys/carol is hers (%u) and there.
		"Authorized keys from /etc/keys/carol for user carol",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("%q not in:\n%s", want, out)
		}
	}
	for _, not := range []string{"svc", "nohome", "/srv/carol/.ssh"} {
		if strings.Contains(out, not) {
			t.Errorf("%q in:\n%s", not, out)
		}
	}
	for _, l := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
		if !strings.HasPrefix(l, "ci-info: ") {
			t.Errorf("line %q without ci-info: ", l)
		}
		if !strings.Contains(te.LogBuf.String(), l+"\n") {
			t.Errorf("line %q not in the runner's log", l)
		}
	}
	if got := authkeyFingerprint(strings.Fields(k["ed25519"])[1], "md5"); len(got) != 47 || strings.Count(got, ":") != 15 {
		t.Errorf("md5 fingerprint %q", got)
	}
}

func TestSSHAuthkeyFingerprintsOff(t *testing.T) {
	te := coretest.NewEnv(t, "users: [{name: root}]\nno_ssh_fingerprints: true")
	te.Write("/root/.ssh/authorized_keys", hostKeys(t)["ed25519"], 0o600)
	if err := te.RunFunc(SSHAuthkeyFingerprints); err != nil || te.OutBuf.Len() != 0 {
		t.Errorf("no_ssh_fingerprints: %v, printed %q", err, te.OutBuf.String())
	}
	te.Cfg["no_ssh_fingerprints"] = false
	if err := te.RunFunc(SSHAuthkeyFingerprints); err != nil || !strings.Contains(te.OutBuf.String(), "for user root") {
		t.Errorf("no_ssh_fingerprints false: %v, printed %q", err, te.OutBuf.String())
	}
}

func TestSSHAuthkeyFingerprintsErrors(t *testing.T) {
	te := coretest.NewEnv(t, "users: [{name: ghost}, {name: root}]")
	te.Write("/root/.ssh/authorized_keys", hostKeys(t)["ed25519"], 0o600)
	err := te.RunFunc(SSHAuthkeyFingerprints)
	if err == nil || !strings.Contains(err.Error(), "user ghost: not in /etc/passwd") {
		t.Errorf("error %v, want one naming ghost", err)
	}
	if !strings.Contains(te.OutBuf.String(), "for user root") {
		t.Errorf("root's keys not printed after ghost's error: %q", te.OutBuf.String())
	}
	te = coretest.NewEnv(t, "users: [{name: root}]\nauthkey_hash: \"sha256\\n\"")
	if err := te.RunFunc(SSHAuthkeyFingerprints); err == nil || !strings.HasPrefix(err.Error(), "authkey_hash:") {
		t.Errorf("authkey_hash with a newline: %v", err)
	}
}

// A comment cannot drive the console: control characters are written
// \ooo (tab too: it would break the table).
func TestAuthkeyTableEscapes(t *testing.T) {
	ed := strings.Fields(hostKeys(t)["ed25519"])[1]
	e := []authKeyLine{parseAuthKeyLine("ssh-ed25519 " + ed + " evil\x1b[2J\tx")}
	got := authkeyTable("u", "/f", e, "sha256", "ci-info: ")
	if strings.ContainsAny(got, "\x1b\t") || !strings.Contains(got, `| evil\033[2J\011x |`) {
		t.Errorf("table %q", got)
	}
}
