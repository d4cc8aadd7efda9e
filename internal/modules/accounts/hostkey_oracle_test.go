package accounts

import (
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/earlyinit/earlyinit/internal/modules/coretest"
	"github.com/earlyinit/earlyinit/internal/oracle"
)

// hostKeyScript runs cloud-init 22.4's cc_ssh.handle on a temporary
// /etc/ssh (KEY_FILE_TPL), with the real ssh-keygen and the group
// ssh_keys' gid as the test says (util.get_group_id; -1 for none), the
// users part left out, and prints each key file's mode and group.
const hostKeyScript = `
import os
from unittest import mock
from cloudinit.config import cc_ssh
from cloudinit import util
inp = json.load(sys.stdin)
d = inp["dir"]
cfg = {"ssh_genkeytypes": inp["types"], "ssh_deletekeys": False, "ssh_quiet_keygen": True,
       "ssh_publish_hostkeys": {"enabled": False}}
with mock.patch.object(cc_ssh, "KEY_FILE_TPL", d + "/ssh_host_%s_key"), \
     mock.patch.object(util, "get_group_id", lambda g: inp["gid"] if g == "ssh_keys" else -1), \
     mock.patch.object(cc_ssh, "apply_credentials", lambda *a: None), \
     mock.patch.object(cc_ssh.ug_util, "normalize_users_groups", lambda *a: ({}, {})), \
     mock.patch.object(cc_ssh.ug_util, "extract_default", lambda *a: (None, None)):
    cc_ssh.handle("ssh", cfg, mock.MagicMock(), logging.getLogger(), [])
out = {}
for n in sorted(os.listdir(d)):
    st = os.stat(os.path.join(d, n))
    out[n] = "%o %d %d" % (st.st_mode & 0o7777, st.st_uid, st.st_gid)
print(json.dumps(out))
`

// TestHostKeyOwnershipAsCloudInit: the host keys' modes and groups, with
// and without a group ssh_keys, are cloud-init's (cc_ssh: "perform same
// 'sanitize permissions' as sshd-keygen": the private key root:ssh_keys
// 0640, the public one 0644).
func TestHostKeyOwnershipAsCloudInit(t *testing.T) {
	for _, gid := range []int{-1, 996} {
		t.Run(fmt.Sprint(gid), func(t *testing.T) {
			types := []string{"ecdsa", "ed25519"}
			var want map[string]string
			oracle.Run(t, hostKeyScript, map[string]any{"dir": t.TempDir(), "types": types, "gid": gid}, &want)
			te := coretest.NewEnv(t, "users: []\nssh_deletekeys: false\nssh_genkeytypes: [ecdsa, ed25519]\n")
			if gid >= 0 {
				te.Write("/etc/group", coretest.BaseGroup+fmt.Sprintf("ssh_keys:x:%d:\n", gid), 0o644)
			}
			if err := te.RunFunc(SSH); err != nil {
				t.Fatal(err)
			}
			got := map[string]string{}
			ents, err := os.ReadDir(te.Root.Path("/etc/ssh"))
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range ents {
				fi, err := os.Stat(filepath.Join(te.Root.Path("/etc/ssh"), e.Name()))
				if err != nil {
					t.Fatal(err)
				}
				st := fi.Sys().(*syscall.Stat_t)
				got[e.Name()] = fmt.Sprintf("%o %d %d", st.Mode&0o7777, st.Uid, st.Gid)
			}
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("key files:\nearlyinit  %v\ncloud-init %v", got, want)
			}
		})
	}
}

// TestDefaultKeyTypesAsCloudInit: defaultKeyTypes is cloud-init's
// GENERATE_KEY_NAMES (cc_ssh) without dsa, in its order.
func TestDefaultKeyTypesAsCloudInit(t *testing.T) {
	var names []string
	oracle.Run(t, "from cloudinit.config import cc_ssh\nprint(json.dumps(cc_ssh.GENERATE_KEY_NAMES))", nil, &names)
	var want []string
	for _, n := range names {
		if n != "dsa" {
			want = append(want, n)
		}
	}
	if fmt.Sprint(defaultKeyTypes) != fmt.Sprint(want) {
		t.Errorf("defaultKeyTypes %q, cloud-init's GENERATE_KEY_NAMES without dsa %q", defaultKeyTypes, want)
	}
}
