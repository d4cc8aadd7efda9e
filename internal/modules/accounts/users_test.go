package accounts

import (
	"reflect"
	"strings"
	"testing"

	"github.com/earlyinit/earlyinit/internal/modules/core"
	"github.com/earlyinit/earlyinit/internal/modules/coretest"

	"github.com/earlyinit/earlyinit/internal/modules/sshd"
)

func TestUsersGroups(t *testing.T) {
	te := coretest.NewEnv(t, `groups:
  - admins: [root]
  - devs
users:
  - default
  - name: alice
    gecos: Alice A
    groups: [devs, wheel]
    shell: /bin/zsh
    sudo: ALL=(ALL) ALL
    lock_passwd: false
    hashed_passwd: $6$salt$hash
    ssh_authorized_keys: [ssh-ed25519 AAAAalice alice@x]
    uid: 1500
  - name: svc
    system: true
    no_create_home: true
`)
	te.Write("/usr/sbin/visudo", "", 0o755)
	var chpasswdIn string
	te.Fake.Handlers["chpasswd"] = func(c core.Cmd) ([]byte, error) { chpasswdIn = string(c.Stdin); return nil, nil }
	if err := te.RunFunc(UsersGroups); err != nil {
		t.Fatal(err)
	}
	// The default user is created last, as cloud-init creates it
	// (TestNormalizeUsersAsCloudInit).
	te.WantCalls(
		"groupadd -- admins",
		"usermod -a -G admins -- root",
		"groupadd -- devs",
		"groupadd -- wheel",
		"useradd alice --comment Alice A --groups devs,wheel --shell /bin/zsh --uid 1500 -m",
		"chpasswd -e",
		"useradd svc --system -M",
		"passwd -l -- svc",
		"groupadd -- audio", "groupadd -- cdrom", "groupadd -- dialout", "groupadd -- dip", "groupadd -- floppy", "groupadd -- netdev", "groupadd -- plugdev", "groupadd -- video",
		"useradd debian --comment Debian --groups adm,audio,cdrom,dialout,dip,floppy,netdev,plugdev,sudo,video --shell /bin/bash -m",
		"passwd -l -- debian",
		"visudo -cf /etc/sudoers.d/90-earlyinit-users.check",
	)
	if chpasswdIn != "alice:$6$salt$hash\n" {
		t.Errorf("chpasswd stdin %q", chpasswdIn)
	}
	if strings.Contains(te.LogBuf.String(), "$6$salt") {
		t.Error("password hash in the log")
	}
	te.WantFile(sudoersFile, "# Created by earlyinit from cloud-config users entries.\n\nalice ALL=(ALL) ALL\ndebian ALL=(ALL) NOPASSWD:ALL\n", 0o440, 0, 0)
	if te.Root.Exists(sudoersFile + ".check") {
		t.Error("candidate sudoers file left")
	}
	if !strings.Contains(te.Read("/etc/sudoers"), "#includedir /etc/sudoers.d") {
		t.Error("/etc/sudoers lacks the includedir")
	}
	te.WantFile("/home/alice/.ssh/authorized_keys", "ssh-ed25519 AAAAalice alice@x\n", 0o600, 1500, 1500)
	te.WantMode("/home/alice/.ssh", 0o700, 1500, 1500)

	// Again: users exist, nothing is created; keys are not duplicated.
	te.Fake.Calls = nil
	if err := te.RunFunc(UsersGroups); err != nil {
		t.Fatal(err)
	}
	for _, c := range te.Calls() {
		if strings.HasPrefix(c, "useradd") || strings.HasPrefix(c, "groupadd") {
			t.Errorf("second run: %s", c)
		}
	}
	te.WantFile("/home/alice/.ssh/authorized_keys", "ssh-ed25519 AAAAalice alice@x\n", 0o600, 1500, 1500)
}

func TestUsersVisudoRefuses(t *testing.T) {
	te := coretest.NewEnv(t, "users: [{name: bob, sudo: 'nonsense rule'}]")
	te.Write("/usr/sbin/visudo", "", 0o755)
	te.Fake.Handlers["visudo"] = func(core.Cmd) ([]byte, error) { return []byte("syntax error"), coretest.ExitErr(1) }
	err := te.RunFunc(UsersGroups)
	if err == nil || !strings.Contains(err.Error(), "refused by visudo") {
		t.Fatalf("err %v", err)
	}
	if te.Root.Exists(sudoersFile) || te.Root.Exists(sudoersFile+".check") {
		t.Error("refused sudoers written")
	}
}

func TestUsersBusybox(t *testing.T) {
	te := coretest.NewEnv(t, "users: [{name: bob, groups: wheel, shell: /bin/ash, lock_passwd: false}]")
	te.Root.Remove("/usr/sbin/useradd")
	te.Write("/bin/busybox", "", 0o755)
	te.Fake.Handlers["adduser"] = func(c core.Cmd) ([]byte, error) {
		return nil, te.Root.AppendFile("/etc/passwd", []byte("bob:x:1000:1000::/home/bob:/bin/ash\n"), 0o644, 0, 0)
	}
	if err := te.RunFunc(UsersGroups); err != nil {
		t.Fatal(err)
	}
	te.WantCalls("addgroup wheel", "adduser -D -s /bin/ash bob", "addgroup bob wheel")
}

func TestUsersDefaultRenamedAndErrors(t *testing.T) {
	te := coretest.NewEnv(t, "user: {name: admin, sudo: null}\n")
	if err := te.RunFunc(UsersGroups); err != nil {
		t.Fatal(err)
	}
	if c := te.Calls(); len(c) < 2 || !strings.HasPrefix(c[len(c)-2], "useradd admin --comment Debian") {
		t.Errorf("calls %q", c)
	}
	if te.Root.Exists(sudoersFile) {
		t.Error("sudo: null wrote rules")
	}
	for _, cfg := range []string{"users: [{name: '-rf'}]", "users: [{name: x, uid: abc}]", "users: {x: [a]}"} {
		te := coretest.NewEnv(t, cfg)
		if err := te.RunFunc(UsersGroups); err == nil {
			t.Errorf("%s: no error", cfg)
		}
	}
	// As cloud-init: a users entry without a name is the default user's
	// (whose own config, the image's, wins over it: gecos stays Debian),
	// and users that are not a list, map or string are ignored with a
	// warning.
	te = coretest.NewEnv(t, "users: [{gecos: x}]")
	if err := te.RunFunc(UsersGroups); err != nil {
		t.Fatal(err)
	}
	if c := te.Calls(); len(c) < 2 || !strings.HasPrefix(c[len(c)-2], "useradd debian --comment Debian ") {
		t.Errorf("users: [{gecos: x}]: calls %q", c)
	}
	te = coretest.NewEnv(t, "users: 42")
	if err := te.RunFunc(UsersGroups); err != nil || len(te.Calls()) != 0 || !strings.Contains(te.LogBuf.String(), "users: want a list, a map or a string, got a number: ignored") {
		t.Errorf("users: 42: %v, calls %q, log %q", err, te.Calls(), te.LogBuf.String())
	}
}

func TestSSH(t *testing.T) {
	te := coretest.NewEnv(t, `users: [default]
ssh_authorized_keys: [ssh-rsa AAAAcfg cfg@key]
ssh_genkeytypes: [ed25519, rsa]
`)
	te.Data = nil
	te.Write("/etc/ssh/ssh_host_rsa_key", "old", 0o600)
	te.Write("/etc/ssh/ssh_host_rsa_key.pub", "old", 0o644)
	te.Write("/etc/ssh/sshd_config", "keep", 0o644)
	te.Write("/etc/passwd", coretest.BasePasswd+"debian:x:1000:1000::/home/debian:/bin/bash\n", 0o644)
	te.Write("/root/.ssh/authorized_keys", "# mine\nssh-rsa AAAAcfg old-comment\n", 0o600)
	if err := te.RunFunc(SSH); err != nil {
		t.Fatal(err)
	}
	te.WantCalls()
	if te.Read("/etc/ssh/ssh_host_rsa_key") == "old" || !te.Root.Exists("/etc/ssh/ssh_host_ed25519_key") || !te.Root.Exists("/etc/ssh/sshd_config") {
		t.Error("old host key kept, new one not made or sshd_config removed")
	}
	te.WantFile("/home/debian/.ssh/authorized_keys", "ssh-rsa AAAAcfg cfg@key\n", 0o600, 1000, 1000)
	prefix := strings.ReplaceAll(strings.ReplaceAll(disableRootOpts, "$USER", "debian"), "$DISABLE_USER", "root")
	te.WantFile("/root/.ssh/authorized_keys", "# mine\n"+prefix+" ssh-rsa AAAAcfg cfg@key\n", 0o600, 0, 0)
}

func TestSSHKeysGiven(t *testing.T) {
	te := coretest.NewEnv(t, `users: []
disable_root: false
ssh_deletekeys: false
ssh_keys:
  rsa_private: PRIV
  rsa_public: PUB
  ed25519_private: EDPRIV
  ed25519_certificate: CERT
`)
	te.Fake.Handlers["ssh-keygen"] = func(core.Cmd) ([]byte, error) { return []byte("ssh-ed25519 AAAAderived\n"), nil }
	if err := te.RunFunc(SSH); err != nil {
		t.Fatal(err)
	}
	te.WantCalls("ssh-keygen -yf /etc/ssh/ssh_host_ed25519_key")
	te.WantFile("/etc/ssh/ssh_host_rsa_key", "PRIV", 0o600, 0, 0)
	// Public keys and certificates 0644 as cloud-init 23.1 on writes
	// them (canonical/cloud-init#1971, "fix: permissions for SSH host
	// keys": "the public key is also 0600 which should be instead
	// 0644"); 22.4, the oracle installed here, still wrote them 0600.
	te.WantFile("/etc/ssh/ssh_host_rsa_key.pub", "PUB", 0o644, 0, 0)
	te.WantFile("/etc/ssh/ssh_host_ed25519_key.pub", "ssh-ed25519 AAAAderived root@localhost\n", 0o644, 0, 0)
	te.WantFile("/etc/ssh/ssh_host_ed25519_key-cert.pub", "CERT", 0o644, 0, 0)
	te.WantFile(sshd.DropIn, sshd.DropInHeader+"\nHostCertificate /etc/ssh/ssh_host_ed25519_key-cert.pub\n", 0o644, 0, 0)
	if te.Root.Exists("/root/.ssh/authorized_keys") {
		t.Error("root keys written with no keys")
	}
}

func TestSetPasswords(t *testing.T) {
	te := coretest.NewEnv(t, `chpasswd:
  users:
    - {name: alice, password: s3cret, type: text}
    - {name: bob, password: $6$x$y}
    - {name: carol, type: RANDOM}
  list: ["dave:plainpw", "erin:$5$a$b"]
ssh_pwauth: true
`)
	var stdins []string
	te.Fake.Handlers["chpasswd"] = func(c core.Cmd) ([]byte, error) {
		stdins = append(stdins, strings.Join(c.Args, " ")+"|"+string(c.Stdin))
		return nil, nil
	}
	if err := te.RunFunc(SetPasswords); err != nil {
		t.Fatal(err)
	}
	if len(stdins) != 2 || !strings.HasPrefix(stdins[0], "|alice:s3cret\ncarol:") || !strings.HasSuffix(stdins[0], "\ndave:plainpw\n") || stdins[1] != "-e|bob:$6$x$y\nerin:$5$a$b\n" {
		t.Errorf("chpasswd %q", stdins)
	}
	c := te.Calls()
	want := []string{"chpasswd", "chpasswd -e", "passwd --expire -- alice", "passwd --expire -- carol", "passwd --expire -- dave", "passwd --expire -- bob", "passwd --expire -- erin"}
	if strings.Join(c, ";") != strings.Join(want, ";") {
		t.Errorf("calls %q", c)
	}
	for _, secret := range []string{"s3cret", "plainpw", "$6$x$y", "$5$a$b"} {
		if strings.Contains(te.LogBuf.String(), secret) {
			t.Errorf("log has %q:\n%s", secret, te.LogBuf.String())
		}
	}
	// carol's random password: only in the 0600 file, its owner named in
	// the log.
	kept := te.Read("/var/lib/earlyinit/instances/" + te.InstanceID + "/random-passwords")
	pw, ok := strings.CutPrefix(strings.TrimSpace(kept), "carol:")
	if !ok || len(pw) < 8 || !strings.Contains(stdins[0], "carol:"+pw+"\n") {
		t.Errorf("random-passwords %q does not hold the password chpasswd got", kept)
	}
	te.WantMode("/var/lib/earlyinit/instances/"+te.InstanceID+"/random-passwords", 0o600, 0, 0)
	if strings.Contains(te.OutBuf.String(), pw) || strings.Contains(te.LogBuf.String(), pw) {
		t.Error("a random password reached the output log or the log")
	}
	if !strings.Contains(te.LogBuf.String(), "random passwords for carol are in") {
		t.Errorf("log does not say where the random passwords are:\n%s", te.LogBuf.String())
	}
	te.WantFile(sshd.DropIn, sshd.DropInHeader+"\nPasswordAuthentication yes\n", 0o644, 0, 0)

	te2 := coretest.NewEnv(t, "users: [default]\npassword: pw\nchpasswd: {expire: false}\nssh_pwauth: false\n")
	stdins = nil
	te2.Fake.Handlers["chpasswd"] = te.Fake.Handlers["chpasswd"]
	if err := te2.RunFunc(SetPasswords); err != nil {
		t.Fatal(err)
	}
	if len(stdins) != 1 || stdins[0] != "|debian:pw\n" {
		t.Errorf("password: %q", stdins)
	}
	te2.WantCalls("chpasswd")
	if !strings.Contains(te2.Read(sshd.DropIn), "PasswordAuthentication no") {
		t.Error("ssh_pwauth false")
	}

	te3 := coretest.NewEnv(t, "chpasswd: {users: [{name: a, password: p, type: text}]}\n")
	te3.Fake.Handlers["chpasswd"] = func(core.Cmd) ([]byte, error) { return []byte("a:p failed"), coretest.ExitErr(1) }
	err := te3.RunFunc(SetPasswords)
	if err == nil || strings.Contains(err.Error(), "a:p") {
		t.Errorf("failure error %v", err)
	}
}

// TestUsersPasswdNotInArgv: users[].passwd is a hash; on useradd's command
// line any local user could read it from /proc/<pid>/cmdline, so it goes to
// chpasswd -e on stdin after useradd.
func TestUsersPasswdNotInArgv(t *testing.T) {
	te := coretest.NewEnv(t, "users: [{name: carol, passwd: $6$salt$HASHMARKER, lock_passwd: false}]")
	var stdin string
	te.Fake.Handlers["chpasswd"] = func(c core.Cmd) ([]byte, error) {
		stdin = strings.Join(c.Args, " ") + "|" + string(c.Stdin)
		return nil, nil
	}
	if err := te.RunFunc(UsersGroups); err != nil {
		t.Fatal(err)
	}
	for _, c := range te.Calls() {
		if strings.Contains(c, "HASHMARKER") {
			t.Errorf("the hash is on a command line: %q", c)
		}
	}
	if stdin != "-e|carol:$6$salt$HASHMARKER\n" {
		t.Errorf("chpasswd got %q", stdin)
	}
	if strings.Contains(te.LogBuf.String(), "HASHMARKER") {
		t.Errorf("the hash is in the log:\n%s", te.LogBuf.String())
	}
}

// createUserOracle runs cloud-init 22.4's Distro.create_user for each
// case's users entry (YAML) on a Debian distro, subp.subp recording every
// command and its stdin, util.is_user true only for root, every group
// existing and every tool found.
const createUserOracle = `
from cloudinit import subp, util, safeyaml
from cloudinit.distros import debian
out = []
for c in json.load(sys.stdin):
    calls = []
    def fake_subp(args, data=None, **kw):
        calls.append({"argv": [str(a) for a in args], "stdin": data or ""})
        return ("", "")
    subp.subp = fake_subp
    subp.which = lambda p, **kw: "/usr/sbin/" + p
    util.is_user = lambda n: n == "root"
    util.is_group = lambda n: True
    util.system_is_snappy = lambda: False
    d = debian.Distro("debian", {}, None)
    kw = safeyaml.load(c)
    name = kw.pop("name")
    d.create_user(name, **kw)
    out.append(calls)
json.dump(out, sys.stdout)
`

// TestUsersPasswordsMatchCloudInit compares the commands of cloud-init
// 22.4's create_user with users_groups' for passwd (useradd --password
// there, chpasswd -e on stdin right after useradd here: the same field),
// plain_text_passwd, hashed_passwd and lock_passwd (default true, Python's
// truth of the value).
func TestUsersPasswordsMatchCloudInit(t *testing.T) {
	entries := []string{
		"{name: alice, passwd: '" + otherHash + "'}",
		"{name: alice, passwd: '" + otherHash + "', lock_passwd: false}",
		"{name: bob, plain_text_passwd: pl41n-s3cret, lock_passwd: false}",
		"{name: bob, hashed_passwd: '" + pveHash + "'}",
		"{name: carol, passwd: '" + otherHash + "', plain_text_passwd: pl41n-s3cret, hashed_passwd: '" + pveHash + "', lock_passwd: false}",
		"{name: dave, lock_passwd: null}",
		"{name: dave, lock_passwd: 'false'}",
		"{name: dave, lock_passwd: 0}",
		"{name: erin, passwd: 12345}",
		"{name: erin, passwd: ''}",
		"{name: erin, plain_text_passwd: 12345, lock_passwd: false}",
		"{name: root, passwd: '" + otherHash + "', hashed_passwd: '" + pveHash + "'}",
		"{name: frank, gecos: Frank, shell: /bin/bash, passwd: '" + otherHash + "', uid: 1234}",
	}
	var want [][]spCall
	coretest.CloudinitOracle(t, createUserOracle, entries, &want)
	for i, ent := range entries {
		t.Run(ent, func(t *testing.T) {
			te := coretest.NewEnv(t, "users: ["+ent+"]\n")
			var got []spCall
			record := func(c core.Cmd) ([]byte, error) {
				got = append(got, spCall{Argv: append([]string{c.Name}, c.Args...), Stdin: string(c.Stdin)})
				if c.Name == "useradd" {
					return te.FakeUseradd(c)
				}
				return nil, nil
			}
			for _, n := range []string{"useradd", "chpasswd", "passwd"} {
				te.Fake.Handlers[n] = record
			}
			if err := te.RunFunc(UsersGroups); err != nil {
				t.Fatal(err)
			}
			// cloud-init's useradd --password H is useradd then
			// chpasswd -e "name:H"; its set_passwd sends no newline.
			var norm []spCall
			for _, w := range want[i] {
				if w.Argv[0] == "useradd" {
					var argv []string
					hash := ""
					for j := 0; j < len(w.Argv); j++ {
						if w.Argv[j] == "--password" {
							hash = w.Argv[j+1]
							j++
							continue
						}
						argv = append(argv, w.Argv[j])
					}
					norm = append(norm, spCall{Argv: argv})
					if hash != "" {
						norm = append(norm, spCall{Argv: []string{"chpasswd", "-e"}, Stdin: w.Argv[1] + ":" + hash + "\n"})
					}
					continue
				}
				if w.Argv[0] == "chpasswd" {
					w.Stdin += "\n"
				}
				if w.Argv[0] == "passwd" {
					w.Argv = []string{"passwd", "-l", "--", w.Argv[2]}
				}
				norm = append(norm, w)
			}
			if !reflect.DeepEqual(got, norm) {
				t.Errorf("commands:\n got %q\nwant %q (cloud-init's, normalized)", got, norm)
			}
			for _, s := range []string{"s3cret", otherHash, pveHash} {
				if strings.Contains(te.LogBuf.String(), s) {
					t.Errorf("secret in the log:\n%s", te.LogBuf.String())
				}
			}
		})
	}
}

// TestUsersPasswordRefused: a password that would add a chpasswd line,
// or a hash with a ":", is refused before useradd runs.
func TestUsersPasswordRefused(t *testing.T) {
	for _, ent := range []string{
		"{name: alice, passwd: \"$6$a$b\\nroot:x-s3cret\"}",
		"{name: alice, hashed_passwd: '$6$a$b:x-s3cret'}",
		"{name: alice, plain_text_passwd: \"a\\u0000x-s3cret\"}",
	} {
		te := coretest.NewEnv(t, "users: ["+ent+"]\n")
		err := te.RunFunc(UsersGroups)
		if err == nil || !strings.Contains(err.Error(), "not set") || strings.Contains(err.Error(), "s3cret") {
			t.Errorf("%s: error %v", ent, err)
		}
		if len(te.Fake.Calls) != 0 {
			t.Errorf("%s: ran %q", ent, te.Calls())
		}
	}
}

func TestUseraddFlags(t *testing.T) {
	te := coretest.NewEnv(t, `users:
  - name: svc
    no_log_init: true
    no_user_group: false
    system: true
    shell: /bin/false
`)
	if err := te.RunFunc(UsersGroups); err != nil {
		t.Fatal(err)
	}
	te.WantCalls("useradd svc --no-log-init --shell /bin/false --system -M", "passwd -l -- svc")
}
