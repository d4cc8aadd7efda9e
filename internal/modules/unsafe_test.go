package modules

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/earlyinit/earlyinit/internal/modules/coretest"
	"github.com/earlyinit/earlyinit/internal/rootfs"
	"github.com/earlyinit/earlyinit/internal/roottest"
	"golang.org/x/sys/unix"
)

const shadowContent = "root:$6$rootsecret:19000:0:99999:7:::\n"

type targetState struct {
	data     string
	mode     fs.FileMode
	uid, gid uint32
}

func state(te *coretest.Env, name string) targetState {
	te.T.Helper()
	p := te.Root.Path(name)
	b, err := os.ReadFile(p)
	if err != nil {
		te.T.Fatal(err)
	}
	fi, err := os.Lstat(p)
	if err != nil {
		te.T.Fatal(err)
	}
	st := fi.Sys().(*syscall.Stat_t)
	return targetState{string(b), fi.Mode(), st.Uid, st.Gid}
}

// alice adds alice (uid 1000) to /etc/passwd with a home she owns, and a
// root-only /etc/shadow.
func alice(te *coretest.Env) {
	te.T.Helper()
	if err := te.Root.AppendFile("/etc/passwd", []byte("alice:x:1000:1000::/home/alice:/bin/sh\n"), 0o644, 0, 0); err != nil {
		te.T.Fatal(err)
	}
	if err := te.Root.AppendFile("/etc/group", []byte("alice:x:1000:\n"), 0o644, 0, 0); err != nil {
		te.T.Fatal(err)
	}
	te.Write("/etc/shadow", shadowContent, 0o640)
	if err := te.Root.MkdirAll("/home/alice", 0o755, 1000, 1000); err != nil {
		te.T.Fatal(err)
	}
}

// plant makes what alice planted, from her shell: a symlink or a hard
// link (link "hard:/etc/shadow") or a directory (target "").
func plant(te *coretest.Env, name, target string) {
	te.T.Helper()
	p := te.Root.Path(name)
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		te.T.Fatal(err)
	}
	var err error
	switch {
	case strings.HasPrefix(target, "hard:"):
		err = os.Link(te.Root.Path(strings.TrimPrefix(target, "hard:")), p)
	default:
		err = os.Symlink(target, p)
	}
	if err != nil {
		te.T.Fatal(err)
	}
	for d := filepath.Dir(p); d != te.Root.Path("/home/alice"); d = filepath.Dir(d) {
		if err := os.Lchown(d, 1000, 1000); err != nil {
			te.T.Fatal(err)
		}
	}
	os.Lchown(p, 1000, 1000)
}

// TestModulesRefuseUserLinks: whatever alice planted in her home, root's
// late stage does not write, append, chmod or chown through it: the module
// reports ErrUnsafe naming the path, /etc/shadow keeps its content, mode
// and owner, alice's link stays, and the rest of the module goes on.
func TestModulesRefuseUserLinks(t *testing.T) {
	roottest.Require(t)
	for _, tt := range []struct {
		name, module, cfg string
		plant, target     string
		inErr             string
		// after checks that the rest went on.
		after func(te *coretest.Env)
	}{
		{
			name: "ssh: authorized_keys -> /etc/shadow", module: "ssh",
			cfg:   "users: [default]\nuser: {name: alice}\nssh_authorized_keys: [ssh-ed25519 AAAAkey k]\nssh_genkeytypes: []\n",
			plant: "/home/alice/.ssh/authorized_keys", target: "/etc/shadow",
			inErr: "/home/alice/.ssh/authorized_keys is a symlink",
			after: func(te *coretest.Env) {
				if !strings.Contains(te.Read("/root/.ssh/authorized_keys"), "AAAAkey") {
					te.T.Error("root's keys not written")
				}
			},
		},
		{
			name: "ssh: .ssh -> /etc", module: "ssh",
			cfg:   "users: [default]\nuser: {name: alice}\nssh_authorized_keys: [ssh-ed25519 AAAAkey k]\nssh_genkeytypes: []\n",
			plant: "/home/alice/.ssh", target: "/etc",
			inErr: "/home/alice/.ssh is a symlink",
			after: func(te *coretest.Env) {
				if te.Root.Exists("/etc/authorized_keys") {
					te.T.Error("/etc/authorized_keys written through alice's link")
				}
			},
		},
		{
			name: "ssh: authorized_keys a hard link to /etc/shadow", module: "ssh",
			cfg:   "users: [default]\nuser: {name: alice}\nssh_authorized_keys: [ssh-ed25519 AAAAkey k]\nssh_genkeytypes: []\n",
			plant: "/home/alice/.ssh/authorized_keys", target: "hard:/etc/shadow",
			inErr: "/home/alice/.ssh/authorized_keys has 2 hard links",
		},
		{
			name: "users: ssh_authorized_keys of an existing user", module: "users_groups",
			cfg:   "users: [{name: alice, lock_passwd: false, ssh_authorized_keys: [ssh-ed25519 AAAAkey k]}]\n",
			plant: "/home/alice/.ssh/authorized_keys", target: "../../../etc/shadow",
			inErr: "/home/alice/.ssh/authorized_keys is a symlink",
		},
		{
			name: "write_files owner, append, permissions", module: "write_files",
			cfg: `write_files:
  - {path: /home/alice/.bashrc, content: "x\n", owner: "alice:alice", append: true, permissions: "0777"}
  - {path: /etc/motd, content: "hi\n"}
`,
			plant: "/home/alice/.bashrc", target: "/etc/shadow",
			inErr: "write_files.0: ",
			after: func(te *coretest.Env) { te.WantFile("/etc/motd", "hi\n", 0o644, 0, 0) },
		},
		{
			name: "write_files deferred", module: "write_files_deferred",
			cfg: `write_files:
  - {path: /home/alice/.config/x/y, content: "x\n", owner: "alice:alice", defer: true}
`,
			plant: "/home/alice/.config", target: "/etc",
			inErr: "/home/alice/.config is a symlink",
		},
		{
			name: "write_files hard link", module: "write_files",
			cfg: `write_files:
  - {path: /home/alice/.profile, content: "x\n", owner: alice, append: true}
`,
			plant: "/home/alice/.profile", target: "hard:/etc/shadow",
			inErr: "/home/alice/.profile has 2 hard links",
		},
	} {
		t.Run(tt.name, func(t *testing.T) {
			te := coretest.NewEnv(t, tt.cfg)
			alice(te)
			plant(te, tt.plant, tt.target)
			before := state(te, "/etc/shadow")
			err := runModule(te, tt.module)
			if err == nil {
				t.Fatal("module succeeded")
			}
			if !errors.Is(err, rootfs.ErrUnsafe) || !strings.Contains(err.Error(), tt.inErr) {
				t.Errorf("error %q: want ErrUnsafe with %q", err, tt.inErr)
			}
			if strings.Contains(err.Error(), "rootsecret") || strings.Contains(te.LogBuf.String(), "rootsecret") {
				t.Error("/etc/shadow's content in the error or the log")
			}
			if after := state(te, "/etc/shadow"); after != before {
				t.Errorf("/etc/shadow changed: %+v -> %+v", before, after)
			}
			fi, lerr := os.Lstat(te.Root.Path(tt.plant))
			if lerr != nil {
				t.Errorf("alice's %s removed: %v", tt.plant, lerr)
			} else if !strings.HasPrefix(tt.target, "hard:") && fi.Mode()&fs.ModeSymlink == 0 {
				t.Errorf("alice's %s replaced", tt.plant)
			}
			if tt.after != nil {
				tt.after(te)
			}
		})
	}
}

// TestImmutableEtcFile: with chattr +i /etc/hostname, set_hostname fails
// naming the file and leaves it; write_files goes on to its next entry.
func TestImmutableEtcFile(t *testing.T) {
	roottest.Require(t)
	te := coretest.NewEnv(t, `hostname: web-2
write_files:
  - {path: /etc/hostname, content: "evil\n"}
  - {path: /etc/motd, content: "hi\n"}
`)
	te.Write("/etc/hostname", "web-1\n", 0o644)
	p := te.Root.Path("/etc/hostname")
	roottest.Immutable(t, p)
	for _, m := range []string{"set_hostname", "write_files"} {
		err := runModule(te, m)
		if !errors.Is(err, unix.EPERM) || !strings.Contains(err.Error(), "/etc/hostname") {
			t.Errorf("%s = %v, want EPERM naming /etc/hostname", m, err)
		}
	}
	te.WantFile("/etc/hostname", "web-1\n", 0o644, 0, 0)
	te.WantFile("/etc/motd", "hi\n", 0o644, 0, 0)
	ents, _ := os.ReadDir(te.Root.Path("/etc"))
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	if strings.Join(names, " ") != "group hostname motd passwd" {
		t.Errorf("/etc holds %v: temporary file left?", names)
	}
}
