//go:build initrd

package accounts

import (
	"testing"

	"github.com/earlyinit/earlyinit/internal/modules/coretest"
)

// TestHostKeysInitrdBuild: the initramfs build makes every host key with
// ssh-keygen (it links no key crypto), with cc_ssh's ssh_keys group.
func TestHostKeysInitrdBuild(t *testing.T) {
	te := coretest.NewEnv(t, "users: []\nssh_genkeytypes: [rsa, ecdsa, ed25519]\n")
	te.Write("/etc/group", coretest.BaseGroup+"ssh_keys:x:996:\n", 0o644)
	te.Fake.Handlers["ssh-keygen"] = fakeKeygen()
	if err := te.RunFunc(SSH); err != nil {
		t.Fatal(err)
	}
	te.WantCalls(
		"ssh-keygen -t rsa -N  -f /etc/ssh/ssh_host_rsa_key",
		"ssh-keygen -t ecdsa -N  -f /etc/ssh/ssh_host_ecdsa_key",
		"ssh-keygen -t ed25519 -N  -f /etc/ssh/ssh_host_ed25519_key",
	)
	for _, typ := range []string{"rsa", "ecdsa", "ed25519"} {
		te.WantFile("/etc/ssh/ssh_host_"+typ+"_key", "PRIVATE "+typ, 0o640, 0, 996)
	}
	if got := te.OutBuf.String(); got != "generated rsa\ngenerated ecdsa\ngenerated ed25519\n" {
		t.Errorf("output log %q, want each type's output in ssh_genkeytypes' order", got)
	}
}
