package provision

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/earlyinit/earlyinit/internal/paths"
	"github.com/earlyinit/earlyinit/internal/rootfs"
	"github.com/earlyinit/earlyinit/internal/roottest"
	"golang.org/x/sys/unix"
)

// TestRunSELinux: on a root with SELinux enforcing, the instance and
// network steps label what they write from the root's file_contexts, and
// the policy is loaded and logged once for both.
func TestRunSELinux(t *testing.T) {
	roottest.Require(t) // security.* xattrs
	log := &testLog{}
	env := testEnv(t, log)
	for p, data := range map[string]string{
		"/etc/selinux/config": "SELINUX=enforcing\nSELINUXTYPE=targeted\n",
		"/etc/selinux/targeted/contexts/files/file_contexts": `/.*	system_u:object_r:default_t:s0
/etc/.*	system_u:object_r:etc_t:s0
/var/lib(/.*)?	system_u:object_r:var_lib_t:s0
/etc/hostname	--	system_u:object_r:net_conf_t:s0
/etc/systemd/network(/.*)?	system_u:object_r:net_conf_t:s0
`,
	} {
		full := filepath.Join(env.Root, p)
		os.MkdirAll(filepath.Dir(full), 0o755)
		if err := os.WriteFile(full, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if res := Run(env); !res.Instance {
		t.Fatalf("no instance:\n%s", log.String())
	}
	if n := strings.Count(log.String(), "selinux: labels from policy targeted (5 entries)"); n != 1 {
		t.Errorf("the policy logged %d times, want once:\n%s", n, log.String())
	}
	for p, want := range map[string]string{
		"/etc/hostname": "system_u:object_r:net_conf_t:s0",
		"/etc/systemd/network/10-cloud-init-ens3.network":                "system_u:object_r:net_conf_t:s0",
		"/etc/systemd/network/10-earlyinit-ens3.link":                    "system_u:object_r:net_conf_t:s0",
		paths.DataDir + "/instance-id":                                   "system_u:object_r:var_lib_t:s0",
		"/etc/cloud/cloud.cfg.d/99-earlyinit-disable-network-config.cfg": "system_u:object_r:etc_t:s0",
	} {
		buf := make([]byte, 256)
		n, err := unix.Lgetxattr(filepath.Join(env.Root, p), rootfs.XattrSELinux, buf)
		if errors.Is(err, unix.ENODATA) {
			n = 0
		} else if err != nil {
			t.Errorf("%s: %v", p, err)
			continue
		}
		if got := string(buf[:n]); got != want+"\x00" {
			t.Errorf("%s: label %q, want %q", p, got, want)
		}
	}
}
