package modules

import (
	"strings"
	"testing"

	"github.com/earlyinit/earlyinit/internal/modules/core"
	"github.com/earlyinit/earlyinit/internal/modules/coretest"
)

// TestBadNamesNeverReachTools: a user, group or chpasswd name that is not
// a valid name is refused with the key and index, before any tool runs
// (a leading "-" would be read as an option), and no password is in the
// error or the log.
func TestBadNamesNeverReachTools(t *testing.T) {
	for _, tt := range []struct {
		module, cfg string
		inErr       []string
	}{
		{"users_groups", "users: [{name: '-o'}]", []string{`user name "-o"`}},
		{"users_groups", "users: [{name: '$(reboot)'}]", []string{`user name "$(reboot)"`}},
		{"users_groups", "users: [{name: '4242'}]", []string{`user name "4242"`}},
		{"users_groups", "users: [{name: alice, groups: ['-p']}]", []string{`group name "-p"`}},
		{"users_groups", "groups: ['--system']", []string{`group name "--system"`}},
		{"users_groups", "groups: [{admins: ['-x']}]", []string{`member "-x"`}},
		{"set_passwords", "chpasswd: {list: ['-e:s3cretpw']}", []string{"chpasswd.list.0: name"}},
		{"set_passwords", "chpasswd: {list: ['ok:pw1', 'al ice:s3cretpw']}", []string{"chpasswd.list.1: name"}},
		{"set_passwords", "chpasswd: {users: [{name: '--expire', password: s3cretpw, type: text}]}", []string{"chpasswd.users.0: name"}},
		{"set_passwords", "chpasswd: {users: [{name: \"s3cretpw\\nroot\", password: x, type: text}]}", []string{"chpasswd.users.0: name"}},
	} {
		t.Run(tt.cfg, func(t *testing.T) {
			te := coretest.NewEnv(t, tt.cfg)
			err := runModule(te, tt.module)
			if err == nil {
				t.Fatal("succeeded")
			}
			for _, s := range tt.inErr {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("error %q lacks %q", err, s)
				}
			}
			if strings.Contains(err.Error(), "s3cretpw") || strings.Contains(te.LogBuf.String(), "s3cretpw") {
				t.Errorf("password in the error or log: %v\n%s", err, te.LogBuf.String())
			}
			for _, c := range te.Fake.Calls {
				for _, a := range c.Args {
					if a == "-o" || a == "-p" || a == "-x" || a == "-e" && c.Name == "passwd" || a == "$(reboot)" || a == "4242" || strings.HasPrefix(a, "--system") {
						t.Errorf("%s reached %s", a, c)
					}
				}
				if c.Name == "chpasswd" || c.Name == "useradd" && len(c.Args) > 0 && c.Args[0] != "alice" {
					t.Errorf("ran %s", c)
				}
			}
		})
	}
}

// TestHostnameRefused: a host name hostname(1) would read as an option, or
// that is not a valid DNS name, is refused by every hostname module with
// the key in the error; nothing is written and hostname(1) does not run.
func TestHostnameRefused(t *testing.T) {
	for _, cfg := range []string{
		"hostname: '-F'",
		"hostname: '-b.example.com'",
		"fqdn: 'web.-x.example.com'",
		"fqdn: web-.example.com",
		"hostname: host_1",
		"hostname: " + strings.Repeat("a", 64),
		"fqdn: " + strings.Repeat("abcdefghi.", 26) + "com",
		"hostname: 'a;reboot'",
	} {
		for _, module := range []string{"set_hostname", "update_hostname", "update_etc_hosts"} {
			t.Run(module+" "+cfg, func(t *testing.T) {
				te := coretest.NewEnv(t, cfg+"\nmanage_etc_hosts: true\n")
				err := runModule(te, module)
				if err == nil {
					t.Fatal("succeeded")
				}
				if !strings.Contains(err.Error(), "hostname") && !strings.Contains(err.Error(), "fqdn") {
					t.Errorf("error %q names no key", err)
				}
				if len(te.Fake.Calls) > 0 {
					t.Errorf("ran %q", te.Calls())
				}
				for _, f := range []string{"/etc/hostname", "/etc/hosts", core.PreviousHostnameFile} {
					if te.Root.Exists(f) {
						t.Errorf("%s written", f)
					}
				}
			})
		}
	}
}

// TestAuthorizedKeysOneLineEach: a key with a line break in it would add
// a line nobody listed to authorized_keys; it is skipped with a log line,
// the other keys are written.
func TestAuthorizedKeysOneLineEach(t *testing.T) {
	te := coretest.NewEnv(t, "ssh_authorized_keys: [\"ssh-ed25519 AAAAgood g\", \"ssh-ed25519 AAAAbad b\\ncommand=\\\"sh\\\" ssh-rsa AAAAevil e\"]\nssh_genkeytypes: []\ndisable_root: false\n")
	if err := runModule(te, "ssh"); err != nil {
		t.Fatal(err)
	}
	if got := te.Read("/root/.ssh/authorized_keys"); got != "ssh-ed25519 AAAAgood g\n" {
		t.Errorf("authorized_keys = %q", got)
	}
	if !strings.Contains(te.LogBuf.String(), "key 1 has a line break: skipped") {
		t.Errorf("log: %s", te.LogBuf.String())
	}
	te2 := coretest.NewEnv(t, "ssh_authorized_keys: [\"ssh-ed25519 AAAAgood g\"]\nssh_genkeytypes: []\ndisable_root_opts: \"no-pty\\nssh-rsa AAAAevil\"\n")
	if err := runModule(te2, "ssh"); err == nil || !strings.Contains(err.Error(), "disable_root_opts") {
		t.Errorf("disable_root_opts with a line break: %v", err)
	}
	if te2.Root.Exists("/root/.ssh/authorized_keys") {
		t.Error("root's authorized_keys written with a two-line prefix")
	}
}
