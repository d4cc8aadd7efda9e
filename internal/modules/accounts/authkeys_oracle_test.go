package accounts

import (
	"strings"
	"testing"

	"github.com/earlyinit/earlyinit/internal/modules/coretest"
	"github.com/earlyinit/earlyinit/internal/oracle"
)

// authKeysDriver is cloud-init 22.4's ssh_util.setup_user_keys without its
// file handling: the old file's lines parsed by AuthKeyLineParser, the keys
// parsed with the options given, merged by update_authorized_keys.
const authKeysDriver = `
from cloudinit import ssh_util
out = []
p = ssh_util.AuthKeyLineParser()
for c in json.load(sys.stdin):
    old = [p.parse(l) for l in c["old"].splitlines()] if c["old"] else []
    new = [p.parse(str(k), options=c["options"] or None) for k in c["keys"]]
    out.append(ssh_util.update_authorized_keys(old, new))
print(json.dumps(out))
`

// TestAuthorizedKeysAsCloudInit: the authorized_keys the ssh module
// writes (a user's keys, root's behind disable_root_opts) is what
// cloud-init's setup_user_keys writes from the same file and keys.
func TestAuthorizedKeysAsCloudInit(t *testing.T) {
	const (
		ed  = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIGq1"
		rsa = "ssh-rsa AAAAB3NzaC1yc2EAAAADAQABAAABAQC7"
		ec  = "ecdsa-sha2-nistp256 AAAAE2VjZHNhLXNoYTItbmlzdHAyNTYAAAAI"
		opt = `no-port-forwarding,command="echo 'Please login as the user \"debian\" rather than the user \"root\".';echo;sleep 10;exit 142"`
	)
	cases := []struct {
		old     string
		keys    []string
		options string
	}{
		{"", []string{ed + " me@x"}, ""},
		{"", []string{ed + " me@x", rsa + " you@y"}, opt},
		{"# mine\n" + rsa + " old@z\n", []string{rsa + " new@z", ed}, ""},
		{"no-pty " + ed + " kept\n", []string{ed + " again"}, ""},
		{"", []string{`no-pty,from="10.0.0.0/8" ` + ed + " restricted"}, ""},
		{"", []string{`no-pty ` + ed + " restricted"}, opt},
		{"", []string{ec + "   spaced   comment  "}, ""},
		{"", []string{"not a key", ed}, ""},
		{"", []string{"ssh-foo AAAAxyz unknown type"}, ""},
		{"", []string{ed, ed}, ""},
		{"garbage line\n\n" + ed + "\n", []string{rsa}, opt},
		{"", []string{"ssh-ed25519\tAAAAC3NzaC1lZDI1NTE5AAAAIGq1\ttab\tcomment"}, ""},
		{"", []string{`command="a b" ` + ed + " quoted"}, ""},
		{"", []string{`command="a \" b" ` + ed + " escaped"}, ""},
		{"", []string{"rsa AAAAB3Nza bare type"}, ""},
	}
	var in []map[string]any
	for _, c := range cases {
		in = append(in, map[string]any{"old": c.old, "keys": c.keys, "options": c.options})
	}
	var want []string
	oracle.Run(t, authKeysDriver, in, &want)
	if len(want) != len(cases) {
		t.Fatalf("%d answers for %d cases", len(want), len(cases))
	}
	for i, c := range cases {
		te := coretest.NewEnv(t, "")
		if c.old != "" {
			te.Write("/root/.ssh/authorized_keys", c.old, 0o600)
		}
		if err := addAuthorizedKeys(te.Env, "root", c.keys, c.options); err != nil {
			t.Fatalf("%d: %v", i, err)
		}
		got := ""
		if te.Root.Exists("/root/.ssh/authorized_keys") {
			got = te.Read("/root/.ssh/authorized_keys")
		}
		if i == 9 {
			// A key given twice: cloud-init writes it twice, earlyinit
			// once.
			if got == want[i] || got+strings.SplitAfter(got, "\n")[0] != want[i] {
				t.Errorf("case 9: the duplicate difference changed: earlyinit %q, cloud-init %q", got, want[i])
			}
			continue
		}
		if got != want[i] {
			t.Errorf("case %d: old %q, keys %q, options %q:\nearlyinit  %q\ncloud-init %q", i, c.old, c.keys, c.options, got, want[i])
		}
	}
}
