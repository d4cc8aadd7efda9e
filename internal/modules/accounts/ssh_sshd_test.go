package accounts

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/earlyinit/earlyinit/internal/modules/coretest"

	"github.com/earlyinit/earlyinit/internal/modules/sshd"
)

// sshd_config shapes as images ship them.
const (
	// debianSshdConfig is Debian 12's, cut down: the Include first.
	debianSshdConfig = `
# This is the sshd server system-wide configuration file.  See
# sshd_config(5) for more information.

Include /etc/ssh/sshd_config.d/*.conf

#Port 22
#PermitRootLogin prohibit-password
#PasswordAuthentication yes
KbdInteractiveAuthentication no
UsePAM yes
X11Forwarding yes
PrintMotd no
AcceptEnv LANG LC_*
Subsystem	sftp	/usr/lib/openssh/sftp-server

# Example of overriding settings on a per-user basis
#Match User anoncvs
#	X11Forwarding no
`
	// el9SshdConfig is Rocky/Alma/RHEL 9's, cut down; its drop-ins are
	// el9DropIns.
	el9SshdConfig = `#	$OpenBSD: sshd_config,v 1.104 2021/07/02 05:11:21 dtucker Exp $

# To modify the system-wide sshd configuration, create a  *.conf  file under
#  /etc/ssh/sshd_config.d/  which will be automatically included below
Include /etc/ssh/sshd_config.d/*.conf

#PermitRootLogin prohibit-password
#PasswordAuthentication yes
AuthorizedKeysFile	.ssh/authorized_keys
Subsystem	sftp	/usr/libexec/openssh/sftp-server
`
	// centos7SshdConfig is CentOS 7's (EL8's is alike): no Include; the
	// image's cloud-init said no to passwords; a Match block at the end.
	centos7SshdConfig = `#	$OpenBSD: sshd_config,v 1.100 2016/08/15 12:32:04 naddy Exp $
HostKey /etc/ssh/ssh_host_rsa_key
HostKey /etc/ssh/ssh_host_ed25519_key
SyslogFacility AUTHPRIV
#PermitRootLogin yes
AuthorizedKeysFile	.ssh/authorized_keys
#PasswordAuthentication yes
#PermitEmptyPasswords no
PasswordAuthentication no
ChallengeResponseAuthentication no
UsePAM yes
X11Forwarding yes
Subsystem	sftp	/usr/libexec/openssh/sftp-server

# Example of overriding settings on a per-user basis
Match User anoncvs
	X11Forwarding no
	PasswordAuthentication no
`
)

// el9DropIns are an EL9 cloud image's drop-ins: cloud-init's from the
// image build saying no, anaconda's root login one.
var el9DropIns = map[string]string{
	"/etc/ssh/sshd_config.d/50-cloud-init.conf":        "PasswordAuthentication no\n",
	"/etc/ssh/sshd_config.d/01-permitrootlogin.conf":   "PermitRootLogin yes\n",
	"/etc/ssh/sshd_config.d/50-redhat.conf":            "SyslogFacility AUTHPRIV\nUsePAM yes\nX11Forwarding yes\nPrintMotd no\n",
	"/etc/ssh/sshd_config.d/60-cloudimg-settings.conf": "PasswordAuthentication no\n",
}

// sshdShapes are the configurations the tests run on: sshd_config and
// other files.
var sshdShapes = []struct {
	name   string
	config string
	files  map[string]string
}{
	{"debian", debianSshdConfig, nil},
	{"el9 with 50-cloud-init.conf saying no", el9SshdConfig, el9DropIns},
	{"centos7 no Include, Match block", centos7SshdConfig, nil},
	{"no Include, no line, Match block", "UsePAM yes\n\n# users of the backup host\nMatch User backup\n\tPasswordAuthentication no\n", nil},
	{"a line above the Include", "PasswordAuthentication no\nInclude sshd_config.d/*.conf\n", map[string]string{"/etc/ssh/sshd_config.d/50-cloud-init.conf": "PasswordAuthentication no\n"}},
	{"a drop-in sorting first", debianSshdConfig, map[string]string{"/etc/ssh/sshd_config.d/00-aaa.conf": "PasswordAuthentication=no\n"}},
	{"Match all", "Include /etc/ssh/sshd_config.d/*.conf\nMatch User backup\n\tX11Forwarding no\nMatch all\nPasswordAuthentication no\n", nil},
	{"Include in a Match block", "UsePAM yes\nMatch User x\nInclude /etc/ssh/sshd_config.d/*.conf\n", nil},
}

func sshdEnv(t *testing.T, cfg, config string, files map[string]string) *coretest.Env {
	t.Helper()
	te := coretest.NewEnv(t, cfg)
	te.Write(sshd.ConfigFile, config, 0o644)
	for n, c := range files {
		te.Write(n, c, 0o644)
	}
	return te
}

// TestSshPwauthShapes: ssh_pwauth on each shape: where the line lands and
// what else changes.
func TestSshPwauthShapes(t *testing.T) {
	dropIn := func(v string) string { return sshd.DropInHeader + "\nPasswordAuthentication " + v + "\n" }
	for _, tt := range []struct {
		shape int
		want  map[string]string // files after, "" for the same as before
	}{
		{0, map[string]string{sshd.DropIn: dropIn("yes"), sshd.ConfigFile: ""}},
		{1, map[string]string{sshd.DropIn: dropIn("yes"), sshd.ConfigFile: "", "/etc/ssh/sshd_config.d/50-cloud-init.conf": ""}},
		{2, map[string]string{sshd.ConfigFile: strings.Replace(centos7SshdConfig, "\nPasswordAuthentication no\nChallenge", "\nPasswordAuthentication yes\nChallenge", 1)}},
		{3, map[string]string{sshd.ConfigFile: "UsePAM yes\n\nPasswordAuthentication yes\n# users of the backup host\nMatch User backup\n\tPasswordAuthentication no\n"}},
		{4, map[string]string{sshd.ConfigFile: "PasswordAuthentication yes\nInclude sshd_config.d/*.conf\n", sshd.DropIn: dropIn("yes"), "/etc/ssh/sshd_config.d/50-cloud-init.conf": ""}},
		{5, map[string]string{sshd.DropIn: dropIn("yes"), "/etc/ssh/sshd_config.d/00-aaa.conf": "PasswordAuthentication yes\n"}},
		{6, map[string]string{sshd.DropIn: dropIn("yes"), sshd.ConfigFile: strings.Replace(sshdShapes[6].config, "Match all\nPasswordAuthentication no", "Match all\nPasswordAuthentication yes", 1)}},
		{7, map[string]string{sshd.ConfigFile: "UsePAM yes\nPasswordAuthentication yes\nMatch User x\nInclude /etc/ssh/sshd_config.d/*.conf\n"}},
	} {
		s := sshdShapes[tt.shape]
		t.Run(s.name, func(t *testing.T) {
			te := sshdEnv(t, "ssh_pwauth: true\n", s.config, s.files)
			if err := te.RunFunc(SetPasswords); err != nil {
				t.Fatal(err)
			}
			before := map[string]string{sshd.ConfigFile: s.config}
			for n, c := range s.files {
				before[n] = c
			}
			for n, c := range tt.want {
				if c == "" {
					c = before[n]
				}
				if got := te.Read(n); got != c {
					t.Errorf("%s:\n got %q\nwant %q", n, got, c)
				}
			}
			if _, ok := tt.want[sshd.DropIn]; !ok && te.Root.Exists(sshd.DropIn) {
				t.Errorf("%s written: sshd does not read it here", sshd.DropIn)
			}
			// Again: nothing changes.
			te.Fake.Calls = nil
			if err := te.RunFunc(SetPasswords); err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(te.LogBuf.String(), "sshd: ssh_pwauth: already set") {
				t.Errorf("second run changed something:\n%s", te.LogBuf.String())
			}
		})
	}
}

// TestSshdEditKeepsFile: an edited sshd_config keeps mode and owner, a
// symlinked one is edited at its target, and the legacy drop-in goes.
func TestSshdEditKeepsFile(t *testing.T) {
	te := coretest.NewEnv(t, "ssh_pwauth: false\n")
	te.Write("/usr/share/ssh/sshd_config", "PasswordAuthentication yes\nMatch User x\n", 0o640)
	if err := os.Chown(te.Root.Path("/usr/share/ssh/sshd_config"), 0, 4); err != nil {
		t.Fatal(err)
	}
	if err := te.Root.MkdirAll("/etc/ssh", 0o755, 0, 0); err != nil {
		t.Fatal(err)
	}
	if err := te.Root.Symlink("../../usr/share/ssh/sshd_config", sshd.ConfigFile); err != nil {
		t.Fatal(err)
	}
	te.Write("/etc/ssh/sshd_config.d/50-earlyinit-pwauth.conf", "PasswordAuthentication yes\n", 0o644)
	if err := te.RunFunc(SetPasswords); err != nil {
		t.Fatal(err)
	}
	te.WantFile("/usr/share/ssh/sshd_config", "PasswordAuthentication no\nMatch User x\n", 0o640, 0, 4)
	if fi, err := os.Lstat(te.Root.Path(sshd.ConfigFile)); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Errorf("%s is no longer a symlink: %v", sshd.ConfigFile, err)
	}
	if te.Root.Exists("/etc/ssh/sshd_config.d/50-earlyinit-pwauth.conf") {
		t.Error("legacy drop-in kept")
	}
}

// TestSshdReload: sshd is reloaded, only if it runs, by its service name,
// only when a file changed.
func TestSshdReload(t *testing.T) {
	for _, tt := range []struct {
		name, osRelease, cfg string
		systemd              bool
		want                 []string
	}{
		{"debian, systemd", "ID=debian\n", "", true, []string{"systemctl --no-block reload-or-try-restart ssh"}},
		{"rocky, systemd", "ID=rocky\nID_LIKE=\"rhel centos fedora\"\n", "", true, []string{"systemctl --no-block reload-or-try-restart sshd"}},
		{"ssh_svcname", "ID=debian\n", "system_info: {ssh_svcname: openssh}\n", true, []string{"systemctl --no-block reload-or-try-restart openssh"}},
		{"no init running yet", "ID=debian\n", "", false, nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			te := sshdEnv(t, tt.cfg+"ssh_pwauth: true\n", debianSshdConfig, nil)
			te.Write("/etc/os-release", tt.osRelease, 0o644)
			if tt.systemd {
				if err := te.Root.MkdirAll("/run/systemd/system", 0o755, 0, 0); err != nil {
					t.Fatal(err)
				}
			}
			if err := te.RunFunc(SetPasswords); err != nil {
				t.Fatal(err)
			}
			te.WantCalls(tt.want...)
			te.Fake.Calls = nil
			if err := te.RunFunc(SetPasswords); err != nil {
				t.Fatal(err)
			}
			te.WantCalls()
		})
	}
}

// TestSshdHostCertificate: certificates add HostCertificate lines (many
// allowed) where sshd reads them, in both shapes.
func TestSshdHostCertificate(t *testing.T) {
	cfg := "ssh_deletekeys: false\nssh_keys: {rsa_private: P, rsa_public: Q, rsa_certificate: C1, ed25519_private: E, ed25519_public: F, ed25519_certificate: C2}\nusers: []\n"
	te := sshdEnv(t, cfg, centos7SshdConfig, nil)
	if err := te.RunFunc(SSH); err != nil {
		t.Fatal(err)
	}
	want := strings.Replace(centos7SshdConfig, "\n# Example of overriding", "\nHostCertificate /etc/ssh/ssh_host_ed25519_key-cert.pub\nHostCertificate /etc/ssh/ssh_host_rsa_key-cert.pub\n# Example of overriding", 1)
	if got := te.Read(sshd.ConfigFile); got != want {
		t.Errorf("sshd_config:\n got %q\nwant %q", got, want)
	}
	if err := te.RunFunc(SSH); err != nil {
		t.Fatal(err)
	}
	if got := te.Read(sshd.ConfigFile); got != want {
		t.Errorf("second run: sshd_config %q", got)
	}

	te = sshdEnv(t, cfg, debianSshdConfig, nil)
	if err := te.RunFunc(SSH); err != nil {
		t.Fatal(err)
	}
	if got, want := te.Read(sshd.DropIn), sshd.DropInHeader+"\nHostCertificate /etc/ssh/ssh_host_ed25519_key-cert.pub\nHostCertificate /etc/ssh/ssh_host_rsa_key-cert.pub\n"; got != want {
		t.Errorf("drop-in %q, want %q", got, want)
	}
	if te.Read(sshd.ConfigFile) != debianSshdConfig {
		t.Error("sshd_config changed")
	}
}

func TestCheckSshdOption(t *testing.T) {
	for _, o := range []sshd.Option{
		{Key: "PasswordAuthentication", Value: "yes no"},
		{Key: "PasswordAuthentication", Value: "yes\nPermitRootLogin yes"},
		{Key: "PasswordAuthentication", Value: ""},
		{Key: "PasswordAuthentication", Value: `"yes"`},
		{Key: "PasswordAuthentication", Value: "#yes"},
		{Key: "Password Authentication", Value: "yes"},
		{Key: "Include", Value: "/x"},
		{Key: "Match", Value: "all"},
	} {
		if sshd.CheckOption(o) == nil {
			t.Errorf("%+v accepted", o)
		}
	}
	if err := sshd.CheckOption(sshd.Option{Key: "HostCertificate", Value: "/etc/ssh/ssh_host_rsa_key-cert.pub"}); err != nil {
		t.Error(err)
	}
}

// TestSshdEffective runs the real sshd -T (when /usr/sbin/sshd is here)
// on what set_passwords made of each shape, for ssh_pwauth true and
// false: passwordauthentication is what was asked, permitrootlogin what
// it was before (disable_root never touches sshd_config, in cloud-init
// neither), and a Match User block's own "no" is still the user's.
func TestSshdEffective(t *testing.T) {
	sshdBin := "/usr/sbin/sshd"
	if _, err := os.Stat(sshdBin); err != nil {
		t.Skip("no /usr/sbin/sshd (openssh-server)")
	}
	keygen, err := exec.LookPath("ssh-keygen")
	if err != nil {
		t.Skip("no ssh-keygen")
	}
	if os.Geteuid() != 0 {
		t.Skip("sshd -T needs root (and /run/sshd)")
	}
	// sshd -T wants its privilege separation directory.
	if _, err := os.Stat("/run/sshd"); os.IsNotExist(err) {
		if err := os.Mkdir("/run/sshd", 0o755); err != nil {
			t.Skip(err)
		}
		t.Cleanup(func() { os.Remove("/run/sshd") })
	}
	hostKey := filepath.Join(t.TempDir(), "hostkey")
	if out, err := exec.Command(keygen, "-q", "-t", "ed25519", "-N", "", "-f", hostKey).CombinedOutput(); err != nil {
		t.Fatalf("ssh-keygen: %v: %s", err, out)
	}
	effective := func(t *testing.T, te *coretest.Env, match string) map[string]string {
		t.Helper()
		// The config's absolute and relative Includes, pointed into the
		// test root.
		filepath.WalkDir(te.Root.Path("/etc/ssh"), func(p string, d os.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			b, _ := os.ReadFile(p)
			s := strings.ReplaceAll(string(b), "Include /etc/ssh/", "Include "+te.Dir+"/etc/ssh/")
			s = strings.ReplaceAll(s, "Include sshd_config.d/", "Include "+te.Dir+"/etc/ssh/sshd_config.d/")
			return os.WriteFile(p, []byte(s), 0o644)
		})
		args := []string{"-T", "-f", te.Root.Path(sshd.ConfigFile), "-h", hostKey}
		if match != "" {
			args = append(args, "-C", match)
		}
		out, err := exec.Command(sshdBin, args...).CombinedOutput()
		if err != nil {
			t.Fatalf("sshd %q: %v: %s", args, err, out)
		}
		m := map[string]string{}
		for _, l := range strings.Split(string(out), "\n") {
			if k, v, ok := strings.Cut(l, " "); ok {
				m[k] = v
			}
		}
		return m
	}
	for _, s := range sshdShapes {
		for _, v := range []string{"yes", "no"} {
			t.Run(s.name+"/"+v, func(t *testing.T) {
				orig := sshdEnv(t, "", s.config, s.files)
				before := effective(t, orig, "")
				te := sshdEnv(t, "ssh_pwauth: "+map[string]string{"yes": "true", "no": "false"}[v]+"\n", s.config, s.files)
				if err := te.RunFunc(SetPasswords); err != nil {
					t.Fatal(err)
				}
				after := effective(t, te, "")
				if after["passwordauthentication"] != v {
					t.Errorf("sshd -T: passwordauthentication %s, want %s", after["passwordauthentication"], v)
				}
				if after["permitrootlogin"] != before["permitrootlogin"] {
					t.Errorf("sshd -T: permitrootlogin %s, was %s", after["permitrootlogin"], before["permitrootlogin"])
				}
				if strings.Contains(s.config, "Match User backup\n\tPasswordAuthentication no") || strings.Contains(s.config, "\nMatch User anoncvs") {
					user := "backup"
					if strings.Contains(s.config, "anoncvs") {
						user = "anoncvs"
					}
					if got := effective(t, te, "user="+user+",host=h,addr=192.0.2.1")["passwordauthentication"]; got != "no" {
						t.Errorf("Match User %s: passwordauthentication %s, want its own no", user, got)
					}
				}
			})
		}
	}
}

// TestSshdNoConfig: with no sshd_config only the drop-in is written
// (read by an sshd installed later), and nothing is reloaded.
func TestSshdNoConfig(t *testing.T) {
	te := coretest.NewEnv(t, "ssh_pwauth: true\n")
	if err := te.Root.MkdirAll("/run/systemd/system", 0o755, 0, 0); err != nil {
		t.Fatal(err)
	}
	if err := te.RunFunc(SetPasswords); err != nil {
		t.Fatal(err)
	}
	te.WantFile(sshd.DropIn, sshd.DropInHeader+"\nPasswordAuthentication yes\n", 0o644, 0, 0)
	if te.Root.Exists(sshd.ConfigFile) {
		t.Error("sshd_config created")
	}
	te.WantCalls()
}
