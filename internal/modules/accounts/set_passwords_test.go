package accounts

import (
	"context"
	"reflect"
	"strings"
	"testing"

	"github.com/earlyinit/earlyinit/internal/ccfg"
	"github.com/earlyinit/earlyinit/internal/modules/core"
	"github.com/earlyinit/earlyinit/internal/modules/coretest"

	"github.com/earlyinit/earlyinit/internal/modules/sshd"
)

// setPasswordsOracle runs cloud-init 22.4's cc_set_passwords.handle on
// each case's YAML with a Debian distro whose default user is "debian",
// subp.subp recording every command and its stdin (failing the commands
// named in "fail"), util.multi_log recording the console text,
// rand_user_password giving "RANDOMPW", update_ssh_config recording its
// updates, and sshd running under systemd. Output per case: the commands,
// the console text, the sshd updates and whether handle raised.
const setPasswordsOracle = `
import types
from cloudinit import subp, util, safeyaml
from cloudinit.config import cc_set_passwords as sp
from cloudinit.distros import debian
out = []
for c in json.load(sys.stdin):
    calls, console, sshd = [], [], []
    def fake_subp(args, data=None, **kw):
        calls.append({"argv": list(args), "stdin": data or ""})
        if args[0] in c["fail"]:
            raise subp.ProcessExecutionError(cmd=args, exit_code=1)
        return ("", "")
    subp.subp = fake_subp
    util.multi_log = lambda text, **kw: console.append(text)
    sp.rand_user_password = lambda pwlen=20: "RANDOMPW"
    sp.update_ssh_config = lambda updates: (sshd.append(updates), True)[1]
    d = debian.Distro("debian", {"default_user": {"name": "debian", "lock_passwd": True}}, None)
    d.uses_systemd = lambda: True
    cfg = safeyaml.load(c["yaml"]) or {}
    raised = False
    try:
        sp.handle("set_passwords", cfg, types.SimpleNamespace(distro=d), logging.getLogger(), [])
    except Exception:
        raised = True
    out.append({"calls": calls, "console": "".join(console), "sshd": sshd, "raised": raised})
json.dump(out, sys.stdout)
`

// Hashes of the oracle table (openssl passwd -5 -salt Pr0xm0xS
// pve-s3cret, openssl passwd -6 -salt saltsalt other-s3cret): Proxmox VE
// sends a $5$ one.
const (
	pveHash   = "$5$Pr0xm0xS$P7QbVMpK/EBXDLHmSSOMQMulCc838Pw6e4QJc6MyCs7"
	otherHash = "$6$saltsalt$NguJJ.vv4vk1XFLkxl5JqcvHK4xmO9MUA4DLLu07Jrk1yeivM8aMX3N.SlT3KUBdoiCQk5Bi5/2sZZEd0wSFe/"
)

// proxmoxUserData is the cloud-config Proxmox VE generates for a Linux
// guest with a user and a password (PVE::QemuServer::Cloudinit): the
// password hashed, expire off, the default user renamed.
const proxmoxUserData = `hostname: pve-guest
manage_etc_hosts: true
fqdn: pve-guest.example
user: pveuser
password: ` + pveHash + `
ssh_authorized_keys:
  - ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIPveKey pve@host
chpasswd:
  expire: False
users:
  - default
package_upgrade: true
`

type spCall struct {
	Argv  []string `json:"argv"`
	Stdin string   `json:"stdin"`
}

type spResult struct {
	Calls   []spCall            `json:"calls"`
	Console string              `json:"console"`
	Sshd    []map[string]string `json:"sshd"`
	Raised  bool                `json:"raised"`
}

// TestSetPasswordsMatchesCloudInit runs a table of cloud-configs through
// cloud-init 22.4's cc_set_passwords and earlyinit's set_passwords and
// compares what each would run: the chpasswd commands (-e or not) and
// their stdin, the passwd --expire calls and their order, the console's
// random passwords, the PasswordAuthentication value and the sshd
// restart (reload here). Random passwords are compared by their owners.
func TestSetPasswordsMatchesCloudInit(t *testing.T) {
	type tc struct {
		YAML string   `json:"yaml"`
		Fail []string `json:"fail"`
		name string
	}
	cases := []tc{
		{name: "Proxmox VE", YAML: proxmoxUserData},
		{name: "password hash, expire default", YAML: "password: " + otherHash + "\n"},
		{name: "password text", YAML: "password: pl41n-s3cret\n"},
		{name: "password text, expire false", YAML: "password: pl41n-s3cret\nchpasswd: {expire: false}\n"},
		{name: "password R", YAML: "password: R\n"},
		{name: "password RANDOM, expire off as a word", YAML: "password: RANDOM\nchpasswd: {expire: 'off'}\n"},
		{name: "password: a hash with a colon is text", YAML: "password: '$6$ab$cd:ef'\n"},
		{name: "password: $1$ with one field is text", YAML: "password: '$1$onlysalt'\n"},
		{name: "password: $2y$ hash", YAML: "password: '$2y$10$abcdefghijklmnopqrstuv'\n"},
		{name: "password: yescrypt is text in 22.4", YAML: "password: '$y$j9T$salt$hash'\n"},
		{name: "password: $7$ is text", YAML: "password: '$7$a$b'\n"},
		{name: "password with no default user", YAML: "users: []\npassword: pl41n-s3cret\n"},
		{name: "password, renamed default user", YAML: "user: {name: admin}\npassword: pl41n-s3cret\n"},
		{name: "password and a non-empty list: list wins", YAML: "password: ignored-s3cret\nchpasswd: {list: ['alice:a1-s3cret']}\n"},
		{name: "password and an empty list: password", YAML: "password: pl41n-s3cret\nchpasswd: {list: []}\n"},
		{name: "password and users: users win", YAML: "password: ignored-s3cret\nchpasswd: {users: [{name: bob, password: " + otherHash + "}]}\n"},
		{name: "list forms", YAML: "chpasswd:\n  list:\n    - alice:a1-s3cret\n    - bob:" + otherHash + "\n    - carol:R\n    - dave:RANDOM\n    - erin:" + pveHash + "\n    - frank:pa:ss-s3cret\n"},
		{name: "list as a multi-line string", YAML: "chpasswd:\n  expire: false\n  list: |\n    alice:a1-s3cret\n    bob:" + otherHash + "\n    carol:R\n"},
		{name: "users types and list together", YAML: "chpasswd:\n  users:\n    - {name: u1, type: RANDOM}\n    - {name: u2, password: t2-s3cret, type: text}\n    - {name: u3, password: '" + otherHash + "'}\n    - {name: u4, password: '" + pveHash + "', type: hash}\n    - {name: u5, password: t5-s3cret, type: text}\n  list: ['l1:R', 'l2:l2-s3cret', 'l3:" + pveHash + "']\n"},
		{name: "same user random then text: text first, random wins", YAML: "chpasswd:\n  users:\n    - {name: alice, type: RANDOM}\n    - {name: alice, password: a1-s3cret, type: text}\n"},
		{name: "hashes only, expire true", YAML: "chpasswd: {users: [{name: alice, password: '" + pveHash + "'}]}\n"},
		{name: "expire null is false", YAML: "password: pl41n-s3cret\nchpasswd: {expire: null}\n"},
		{name: "ssh_pwauth true", YAML: "ssh_pwauth: true\n"},
		{name: "ssh_pwauth false", YAML: "ssh_pwauth: false\n"},
		{name: "ssh_pwauth yes (a string)", YAML: "ssh_pwauth: 'yes'\n"},
		{name: "ssh_pwauth unchanged", YAML: "ssh_pwauth: unchanged\n"},
		{name: "ssh_pwauth null", YAML: "ssh_pwauth: null\n"},
		{name: "chpasswd fails: expire still runs, an error", YAML: "chpasswd: {users: [{name: alice, password: a1-s3cret, type: text}]}\nssh_pwauth: true\n", Fail: []string{"chpasswd"}},
	}
	for i := range cases {
		if cases[i].Fail == nil {
			cases[i].Fail = []string{}
		}
	}
	var want []spResult
	coretest.CloudinitOracle(t, setPasswordsOracle, cases, &want)
	if len(want) != len(cases) {
		t.Fatalf("oracle gave %d results for %d cases", len(want), len(cases))
	}
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			te := coretest.NewEnv(t, c.YAML)
			te.Write(sshd.ConfigFile, "Include /etc/ssh/sshd_config.d/*.conf\n", 0o644)
			if err := te.Root.MkdirAll("/run/systemd/system", 0o755, 0, 0); err != nil {
				t.Fatal(err)
			}
			fail := map[string]bool{}
			for _, f := range c.Fail {
				fail[f] = true
			}
			var got []spCall
			record := func(c core.Cmd) ([]byte, error) {
				got = append(got, spCall{Argv: append([]string{c.Name}, c.Args...), Stdin: string(c.Stdin)})
				if fail[c.Name] {
					return []byte(string(c.Stdin) + " failed"), coretest.ExitErr(1)
				}
				return nil, nil
			}
			te.Fake.Handlers["chpasswd"] = record
			te.Fake.Handlers["passwd"] = record
			te.Fake.Handlers["systemctl"] = record
			err := SetPasswords(context.Background(), te.Env)
			if (err != nil) != want[i].Raised {
				t.Errorf("error %v, cloud-init raised %v", err, want[i].Raised)
			}

			// Random passwords: each owner's, as the oracle's RANDOMPW.
			kept := ""
			if te.Root.Exists(te.InstanceDir() + "/" + randomPasswordsFile) {
				kept = te.Read(te.InstanceDir() + "/" + randomPasswordsFile)
			}
			norm := func(s string) string {
				for _, l := range strings.Split(strings.TrimSpace(kept), "\n") {
					if u, p, ok := strings.Cut(l, ":"); ok {
						s = strings.ReplaceAll(s, u+":"+p+"\n", u+":RANDOMPW\n")
					}
				}
				return s
			}
			var gotPw, wantPw []spCall
			for _, g := range got {
				if g.Argv[0] == "chpasswd" || g.Argv[0] == "passwd" {
					g.Argv = slicesDelete(g.Argv, "--")
					gotPw = append(gotPw, spCall{g.Argv, norm(g.Stdin)})
				}
			}
			restarted := false
			for _, w := range want[i].Calls {
				switch w.Argv[0] {
				case "chpasswd", "passwd":
					wantPw = append(wantPw, w)
				case "systemctl":
					restarted = restarted || w.Argv[1] == "restart" && w.Argv[2] == "ssh"
				}
			}
			if !reflect.DeepEqual(gotPw, wantPw) {
				t.Errorf("commands:\n got %q\nwant %q (cloud-init)", gotPw, wantPw)
			}
			// cloud-init prints the random passwords on the console;
			// earlyinit keeps the same lines in the 0600 file only.
			wantKept, _ := strings.CutPrefix(want[i].Console, "Set the following 'random' passwords\n\n")
			if got := norm(kept); got != wantKept {
				t.Errorf("random-passwords %q, cloud-init's console %q", got, want[i].Console)
			}

			// sshd: the value cloud-init writes, and a reload where it
			// restarts.
			wantPwauth := ""
			for _, u := range want[i].Sshd {
				wantPwauth = u["PasswordAuthentication"]
			}
			gotPwauth := ""
			if te.Root.Exists(sshd.DropIn) {
				gotPwauth = sshdConfigMap(te.Read(sshd.DropIn))["passwordauthentication"]
			}
			if gotPwauth != wantPwauth {
				t.Errorf("PasswordAuthentication %q, cloud-init %q", gotPwauth, wantPwauth)
			}
			reloaded := false
			for _, g := range got {
				reloaded = reloaded || strings.Join(g.Argv, " ") == "systemctl --no-block reload-or-try-restart ssh"
			}
			if reloaded != restarted {
				t.Errorf("sshd reloaded %v, cloud-init restarted %v: %q", reloaded, restarted, got)
			}

			// No secret in the log or the error.
			for _, s := range []string{"s3cret", pveHash, otherHash, "$cd:ef", "onlysalt", "abcdefghijklmnopqrstuv", "$j9T$", "$7$a$b"} {
				if strings.Contains(te.LogBuf.String(), s) || err != nil && strings.Contains(err.Error(), s) {
					t.Errorf("secret %q in the log or error: %v\n%s", s, err, te.LogBuf.String())
				}
			}
			if kept != "" {
				for _, l := range strings.Split(strings.TrimSpace(kept), "\n") {
					_, p, _ := strings.Cut(l, ":")
					if strings.Contains(te.LogBuf.String(), p) || strings.Contains(te.OutBuf.String(), p) {
						t.Errorf("a random password in the log or output log")
					}
				}
			}
		})
	}
}

func slicesDelete(s []string, x string) []string {
	var out []string
	for _, v := range s {
		if v != x {
			out = append(out, v)
		}
	}
	return out
}

// TestSetPasswordsProxmox: Proxmox VE's user-data through users_groups
// then set_passwords, as the boot stage runs them: pveuser is created and
// locked (lock_passwd's default), then its hash goes to chpasswd -e, which
// replaces the locked field: the password works, not expired.
func TestSetPasswordsProxmox(t *testing.T) {
	te := coretest.NewEnv(t, proxmoxUserData)
	var stdins []string
	te.Fake.Handlers["chpasswd"] = func(c core.Cmd) ([]byte, error) {
		stdins = append(stdins, strings.Join(append([]string{c.Name}, c.Args...), " ")+"|"+string(c.Stdin))
		return nil, nil
	}
	for _, m := range []struct {
		name string
		run  func(context.Context, *core.Env) error
	}{{"users_groups", UsersGroups}, {"set_passwords", SetPasswords}} {
		if err := te.RunFunc(m.run); err != nil {
			t.Fatalf("%s: %v", m.name, err)
		}
	}
	var order []string
	for _, c := range te.Calls() {
		if strings.HasPrefix(c, "useradd pveuser") || strings.HasPrefix(c, "passwd") || strings.HasPrefix(c, "chpasswd") {
			order = append(order, strings.Fields(c)[0]+" "+strings.Fields(c)[1])
		}
	}
	if want := []string{"useradd pveuser", "passwd -l", "chpasswd -e"}; !reflect.DeepEqual(order, want) {
		t.Errorf("order %q, want %q", order, want)
	}
	if want := []string{"chpasswd -e|pveuser:" + pveHash + "\n"}; !reflect.DeepEqual(stdins, want) {
		t.Errorf("chpasswd %q, want %q", stdins, want)
	}
	if strings.Contains(te.LogBuf.String(), pveHash) || strings.Contains(te.LogBuf.String(), "P7QbVMpK") {
		t.Errorf("the hash is in the log:\n%s", te.LogBuf.String())
	}
}

// TestRandomPasswordsKept: random passwords go to the 0600 file alone:
// not to the console (cloud-init prints them there; no secret reaches a
// console here), nor to the log, which names the user and the file.
func TestRandomPasswordsKept(t *testing.T) {
	te := coretest.NewEnv(t, "chpasswd: {users: [{name: carol, type: RANDOM}], expire: false}\n")
	te.Write("/dev/console", "", 0o600)
	if err := te.RunFunc(SetPasswords); err != nil {
		t.Fatal(err)
	}
	kept := te.Read(te.InstanceDir() + "/" + randomPasswordsFile)
	pw, ok := strings.CutPrefix(kept, "carol:")
	pw, nl := strings.CutSuffix(pw, "\n")
	if !ok || !nl || len(pw) != 20 || strings.Trim(pw, pwChars) != "" {
		t.Errorf("kept %q", kept)
	}
	te.WantMode(te.InstanceDir()+"/"+randomPasswordsFile, 0o600, 0, 0)
	if con := te.Read("/dev/console"); con != "" {
		t.Errorf("the console got %q", con)
	}
	if log := te.LogBuf.String(); strings.Contains(log, pw) || !strings.Contains(log, "random passwords for carol are in "+te.InstanceDir()+"/"+randomPasswordsFile) {
		t.Errorf("log:\n%s", log)
	}
}

// TestSetPasswordsRefusals: what would corrupt chpasswd's input or
// /etc/shadow is refused, naming the key, before any tool runs; the value
// is never in the error.
func TestSetPasswordsRefusals(t *testing.T) {
	for _, tt := range []struct{ cfg, err string }{
		{"chpasswd: {users: [{name: alice, password: 'ab:cd-s3cret'}]}", `chpasswd.users.0: password contains a ":"`},
		{"chpasswd: {users: [{name: alice, password: x-s3cret, type: Random}]}", "chpasswd.users.0: type: want text, hash or RANDOM"},
		{"chpasswd: {users: [{name: alice, type: text}]}", "chpasswd.users.0: password is missing"},
		{"chpasswd: {users: [{name: alice, password: ok-s3cret, type: text}], list: ['bob']}", "chpasswd.list.0: want name:password"},
		{"users: [default]\npassword: \"a-s3cret\\nroot:x\"", "password: contains a line break"},
		{"chpasswd: {list: \"alice:a-s3cret\\r-e:x\"}", "chpasswd.list.1: name"},
	} {
		te := coretest.NewEnv(t, tt.cfg)
		err := te.RunFunc(SetPasswords)
		if err == nil || !strings.Contains(err.Error(), tt.err) {
			t.Errorf("%s: error %v, want %q", tt.cfg, err, tt.err)
		}
		if err != nil && strings.Contains(err.Error(), "s3cret") || strings.Contains(te.LogBuf.String(), "s3cret") {
			t.Errorf("%s: secret in error %v or log", tt.cfg, err)
		}
		for _, c := range te.Fake.Calls {
			if c.Name == "chpasswd" || c.Name == "passwd" {
				t.Errorf("%s: ran %s", tt.cfg, c)
			}
		}
	}
}

func TestTranslateBool(t *testing.T) {
	// chpasswd.expire's reading (ccfg.Chpasswd).
	translateBool := func(v any) bool {
		var c ccfg.Chpasswd
		if err := ccfg.DecodeValue(map[string]any{"expire": v}, "chpasswd", &c); err != nil {
			t.Fatal(err)
		}
		return c.Expire
	}
	for v, want := range map[any]bool{nil: false, true: true, false: false, "Yes": true, "on": true, "1": true, 1: true, 0: false, "y": false, "": false, "off": false} {
		if translateBool(v) != want {
			t.Errorf("translateBool(%#v) = %v", v, !want)
		}
	}
}
