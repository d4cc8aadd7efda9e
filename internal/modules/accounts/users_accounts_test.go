package accounts

import (
	"strings"
	"testing"
	"time"

	"github.com/earlyinit/earlyinit/internal/modules/coretest"
)

// debianAccounts makes te's root a Debian one whose accounts users_groups
// changes in-process (accounts.Supported).
func debianAccounts(te *coretest.Env) {
	te.Write("/etc/os-release", "ID=debian\n", 0o644)
	te.Write("/etc/shadow", "root:*:19000:0:99999:7:::\ndaemon:*:19000:0:99999:7:::\n", 0o640)
	var group, gshadow strings.Builder
	for _, g := range []string{"root:0", "adm:4", "dialout:20", "cdrom:24", "floppy:25", "sudo:27", "audio:29", "dip:30", "video:44", "plugdev:46", "users:100"} {
		name, gid, _ := strings.Cut(g, ":")
		group.WriteString(name + ":x:" + gid + ":\n")
		gshadow.WriteString(name + ":*::\n")
	}
	te.Write("/etc/group", group.String(), 0o644)
	te.Write("/etc/gshadow", gshadow.String(), 0o640)
	te.Write("/etc/login.defs", "UMASK 022\nPASS_MAX_DAYS 99999\nPASS_MIN_DAYS 0\nPASS_WARN_AGE 7\nUID_MIN 1000\nUID_MAX 60000\nGID_MIN 1000\nGID_MAX 60000\nUSERGROUPS_ENAB yes\n", 0o644)
	te.Write("/etc/default/useradd", "SHELL=/bin/sh\n", 0o644)
	te.Write("/etc/skel/.profile", "# profile\n", 0o644)
	te.Now = func() time.Time { return time.Unix(20000*86400, 0) }
}

// TestUsersInProcess: on a Debian root the bench's users (the default
// user with a group to make, a sudo user with a key) are made without
// useradd, groupadd, usermod or passwd: the lines internal/accounts writes (as
// Debian's useradd, TestAsUseradd), the passwords locked, the homes from
// the skeleton, the key and the sudo rule.
func TestUsersInProcess(t *testing.T) {
	te := coretest.NewEnv(t, `users:
  - default
  - name: alice
    gecos: Alice
    groups: [sudo]
    shell: /bin/bash
    sudo: "ALL=(ALL) NOPASSWD:ALL"
    ssh_authorized_keys: [ssh-ed25519 AAAAalice alice@k]
`)
	debianAccounts(te)
	if err := te.RunFunc(UsersGroups); err != nil {
		t.Fatal(err)
	}
	te.WantCalls()
	passwd := te.Read("/etc/passwd")
	for _, l := range []string{"alice:x:1000:1000:Alice:/home/alice:/bin/bash\n", "debian:x:1001:1002:Debian:/home/debian:/bin/bash\n"} {
		if !strings.Contains(passwd, l) {
			t.Errorf("/etc/passwd lacks %q:\n%s", l, passwd)
		}
	}
	shadow := te.Read("/etc/shadow")
	for _, l := range []string{"debian:!:20000:0:99999:7:::\n", "alice:!:20000:0:99999:7:::\n"} {
		if !strings.Contains(shadow, l) {
			t.Errorf("/etc/shadow lacks %q:\n%s", l, shadow)
		}
	}
	group := te.Read("/etc/group")
	for _, l := range []string{"sudo:x:27:alice,debian\n", "alice:x:1000:\n", "netdev:x:1001:debian\n", "debian:x:1002:\n"} {
		if !strings.Contains(group, l) {
			t.Errorf("/etc/group lacks %q:\n%s", l, group)
		}
	}
	te.WantMode("/etc/shadow", 0o640, 0, 0)
	te.WantFile("/home/alice/.profile", "# profile\n", 0o644, 1000, 1000)
	te.WantMode("/home/alice", 0o755, 1000, 1000)
	te.WantFile("/home/alice/.ssh/authorized_keys", "ssh-ed25519 AAAAalice alice@k\n", 0o600, 1000, 1000)
	if !strings.Contains(te.Read(sudoersFile), "alice ALL=(ALL) NOPASSWD:ALL") {
		t.Error("no sudo rule for alice")
	}
	if te.Root.Exists("/etc/passwd.lock") || te.Root.Exists("/etc/shadow.lock") {
		t.Error("a lock file is left")
	}
}

// TestUsersInProcessFallback: an option internal/accounts does not do
// (expiredate) is useradd's, and nothing was written before it ran.
func TestUsersInProcessFallback(t *testing.T) {
	te := coretest.NewEnv(t, "users: [{name: bob, expiredate: '2030-01-01', lock_passwd: false}]\n")
	debianAccounts(te)
	if err := te.RunFunc(UsersGroups); err != nil {
		t.Fatal(err)
	}
	te.WantCalls("useradd bob --expiredate 2030-01-01 -m")
	if n := strings.Count(te.Read("/etc/passwd"), "\nbob:"); n != 1 {
		t.Errorf("bob in /etc/passwd %d times", n)
	}
	if !strings.Contains(te.LogBuf.String(), "user bob: expiredate: not done by earlyinit: useradd's: running the root's tools") {
		t.Errorf("log: %s", te.LogBuf.String())
	}
}
