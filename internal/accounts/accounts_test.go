package accounts

import (
	"bufio"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/earlyinit/earlyinit/internal/rootfs"
)

// A root's accounts before the tests' changes: Debian 12's login.defs
// and default/useradd (as shipped, trimmed to their settings), a skeleton
// with a subdirectory and a private file.
var baseTree = map[string]string{
	"/etc/os-release":      "PRETTY_NAME=\"Debian GNU/Linux 12 (bookworm)\"\nID=debian\n",
	"/etc/passwd":          "root:x:0:0:root:/root:/bin/bash\ndaemon:x:1:1:daemon:/usr/sbin:/usr/sbin/nologin\nsshd:x:100:65534::/run/sshd:/usr/sbin/nologin\n",
	"/etc/shadow":          "root:*:19000:0:99999:7:::\ndaemon:*:19000:0:99999:7:::\nsshd:!:19000::::::\n",
	"/etc/group":           "root:x:0:\nadm:x:4:\nsudo:x:27:\nusers:x:100:\nsystemd-journal:x:999:\nold:x:1200:bob\n",
	"/etc/gshadow":         "root:*::\nadm:*::\nsudo:*::\nusers:*::\nsystemd-journal:!*::\nold:!::bob\n",
	"/etc/subuid":          "",
	"/etc/subgid":          "",
	"/etc/login.defs":      "MAIL_DIR /var/mail\nUMASK 022\nPASS_MAX_DAYS 99999\nPASS_MIN_DAYS 0\nPASS_WARN_AGE 7\nUID_MIN 1000\nUID_MAX 60000\nGID_MIN 1000\nGID_MAX 60000\nSUB_UID_MIN 100000\nSUB_UID_MAX 600100000\nSUB_UID_COUNT 65536\nSUB_GID_MIN 100000\nSUB_GID_MAX 600100000\nSUB_GID_COUNT 65536\nUSERGROUPS_ENAB yes\nENCRYPT_METHOD SHA512\n",
	"/etc/default/useradd": "# useradd defaults\nSHELL=/bin/sh\n",
	"/etc/skel/.bashrc":    "# bashrc\n",
	"/etc/skel/.config/x":  "x\n",
}

// step is one change: the tool's command line (run with --prefix) and the
// same change here.
type step struct {
	tool []string
	do   func(tx *Tx) (*Made, error)
}

func useradd(u User, args ...string) step {
	return step{append([]string{"useradd"}, args...), func(tx *Tx) (*Made, error) {
		m, err := tx.UserAdd(u)
		return &m, err
	}}
}

func groupadd(name string, system bool) step {
	args := []string{"groupadd", name}
	if system {
		args = []string{"groupadd", "-r", name}
	}
	return step{args, func(tx *Tx) (*Made, error) { _, err := tx.GroupAdd(name, system); return nil, err }}
}

func member(group, user string) step {
	return step{[]string{"usermod", "-a", "-G", group, user}, func(tx *Tx) (*Made, error) { return nil, tx.AddMember(group, user) }}
}

func lock(user string) step {
	return step{[]string{"usermod", "-L", user}, func(tx *Tx) (*Made, error) { return nil, tx.Lock(user) }}
}

// TestAsUseradd: each case's changes, made by Debian's own useradd,
// groupadd and usermod (shadow 4.13, --prefix on a copy of the same tree)
// and by this package, leave the same databases, backups and homes (the
// mode, owner, content and modification time of every file and
// directory). usermod -L stands for passwd -l: both put a "!" before the
// hash unless there is one.
func TestAsUseradd(t *testing.T) {
	for _, tool := range []string{"useradd", "groupadd", "usermod"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("no %s to check against (Debian's passwd package)", tool)
		}
	}
	cases := []struct {
		name  string
		extra map[string]string
		steps []step
	}{
		{"sudo user", nil, []step{
			useradd(User{Name: "alice", Gecos: "Alice", Shell: "/bin/bash", Groups: []string{"sudo"}, UID: -1, CreateHome: true}, "--comment", "Alice", "--groups", "sudo", "--shell", "/bin/bash", "-m", "alice"),
		}},
		{"default user and a new group", nil, []step{
			groupadd("netdev", false),
			useradd(User{Name: "debian", Gecos: "Debian", Groups: []string{"adm", "netdev", "sudo"}, UID: -1, CreateHome: true}, "--comment", "Debian", "--groups", "adm,netdev,sudo", "-m", "debian"),
			lock("debian"),
			useradd(User{Name: "bob", UID: -1, CreateHome: true, Groups: []string{"old"}}, "--groups", "old", "-m", "bob"),
		}},
		{"system", nil, []step{
			groupadd("svc", true),
			useradd(User{Name: "daemon2", System: true, UID: -1}, "--system", "-M", "daemon2"),
			useradd(User{Name: "daemon3", System: true, UID: -1, Shell: "/usr/sbin/nologin"}, "--system", "--shell", "/usr/sbin/nologin", "-M", "daemon3"),
		}},
		{"uid and primary group", nil, []step{
			useradd(User{Name: "carol", UID: 1500, CreateHome: true}, "--uid", "1500", "-m", "carol"),
			useradd(User{Name: "dave", UID: -1, PrimaryGroup: "users", CreateHome: false}, "--gid", "users", "-M", "dave"),
			useradd(User{Name: "erin", UID: -1, PrimaryGroup: "1200"}, "--gid", "1200", "-M", "erin"),
		}},
		{"sub ids taken, home elsewhere, HOME_MODE", map[string]string{
			"/etc/subuid":     "x:100000:65536\ny:300000:1000\n",
			"/etc/subgid":     "x:165536:65536\n",
			"/etc/login.defs": baseTree["/etc/login.defs"] + "HOME_MODE 0700\n",
		}, []step{
			useradd(User{Name: "frank", UID: -1, Home: "/srv/people/frank", CreateHome: true}, "--home", "/srv/people/frank", "-m", "frank"),
			useradd(User{Name: "gina", UID: -1, CreateHome: true}, "-m", "gina"),
		}},
		{"locks", map[string]string{
			"/etc/passwd": baseTree["/etc/passwd"] + "hank:x:1000:1000::/home/hank:/bin/sh\nivy:x:1001:1001::/home/ivy:/bin/sh\n",
			"/etc/shadow": baseTree["/etc/shadow"] + "hank:$6$salt$hash:19000:0:99999:7:::\nivy:!$6$salt$hash:19000:0:99999:7:::\n",
		}, []step{lock("hank"), lock("ivy"), member("sudo", "hank"), member("sudo", "ivy"), member("sudo", "hank")}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ref, mine := t.TempDir(), t.TempDir()
			for _, dir := range []string{ref, mine} {
				writeTree(t, dir, baseTree)
				writeTree(t, dir, c.extra)
			}
			r, err := rootfs.Open(mine)
			if err != nil {
				t.Fatal(err)
			}
			now := time.Now()
			for _, s := range c.steps {
				args := append([]string{"--prefix", ref}, s.tool[1:]...)
				if s.tool[0] == "useradd" && strings.Contains(strings.Join(s.tool, " "), " -m ") {
					args = append([]string{"-k", filepath.Join(ref, "etc/skel")}, args...)
				}
				if out, err := exec.Command(s.tool[0], args...).CombinedOutput(); err != nil {
					t.Fatalf("%s %q: %v\n%s", s.tool[0], args, err, out)
				}
				tx, err := Begin(r, now)
				if err != nil {
					t.Fatal(err)
				}
				m, err := s.do(tx)
				if err != nil {
					tx.Close()
					t.Fatalf("%q: %v", s.tool, err)
				}
				if err := tx.Commit(); err != nil {
					t.Fatal(err)
				}
				if m != nil && s.tool[0] == "useradd" && strings.Contains(strings.Join(s.tool, " "), " -m ") {
					if _, err := MakeHome(r, *m); err != nil {
						t.Fatal(err)
					}
				}
			}
			for _, f := range []string{Passwd, Shadow, Group, Gshadow, Subuid, Subgid} {
				for _, g := range []string{f, f + "-"} {
					want, _ := os.ReadFile(filepath.Join(ref, g))
					got, _ := os.ReadFile(filepath.Join(mine, g))
					if string(got) != string(want) {
						t.Errorf("%s:\nuseradd's:\n%s\nearlyinit's:\n%s", g, want, got)
					}
					if w, g2 := describe(t, filepath.Join(ref, g)), describe(t, filepath.Join(mine, g)); w != g2 {
						t.Errorf("%s: useradd's %s, earlyinit's %s", g, w, g2)
					}
				}
			}
			for _, dir := range []string{"home", "srv"} {
				want, got := listTree(t, filepath.Join(ref, dir)), listTree(t, filepath.Join(mine, dir))
				if !reflect.DeepEqual(got, want) {
					t.Errorf("/%s:\nuseradd's   %q\nearlyinit's %q", dir, want, got)
				}
			}
			for _, lk := range []string{Passwd, Shadow, Group, Gshadow, Subuid, Subgid} {
				if _, err := os.Lstat(filepath.Join(mine, lk+".lock")); err == nil {
					t.Errorf("%s.lock left", lk)
				}
			}
		})
	}
}

func writeTree(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for p, c := range files {
		f := filepath.Join(dir, p)
		if err := os.MkdirAll(filepath.Dir(f), 0o755); err != nil {
			t.Fatal(err)
		}
		mode := fs.FileMode(0o644)
		if strings.HasSuffix(p, "shadow") {
			mode = 0o640
		}
		if err := os.WriteFile(f, []byte(c), mode); err != nil {
			t.Fatal(err)
		}
		mt := time.Date(2025, 4, 18, 12, 0, 0, 0, time.UTC)
		if err := os.Chtimes(f, mt, mt); err != nil {
			t.Fatal(err)
		}
	}
}

// describe is a file's mode and owner.
func describe(t *testing.T, f string) string {
	fi, err := os.Lstat(f)
	if err != nil {
		return "missing"
	}
	st := fi.Sys().(*syscall.Stat_t)
	return fmt.Sprintf("%v %d:%d", fi.Mode(), st.Uid, st.Gid)
}

// listTree is every entry under dir: path, mode, owner, and for files the
// content and modification time.
func listTree(t *testing.T, dir string) []string {
	var out []string
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		rel, _ := filepath.Rel(dir, p)
		s := rel + " " + describe(t, p)
		if d.Type().IsRegular() {
			b, _ := os.ReadFile(p)
			fi, _ := d.Info()
			s += fmt.Sprintf(" %q %s", b, fi.ModTime().UTC().Format(time.RFC3339Nano))
		}
		out = append(out, s)
		return nil
	})
	sort.Strings(out)
	return out
}

// TestLocksAsShadow: while a Tx holds the databases, Debian's useradd
// waits (it finds the FILE.lock a Tx made, with a live pid) and goes on
// once the Tx is closed;
// a lock file whose pid is gone is stale and taken over; one a live
// process holds stops Begin; and lckpwdf's lock held by another process
// makes Begin wait, then give up.
func TestLocksAsShadow(t *testing.T) {
	dir := t.TempDir()
	writeTree(t, dir, baseTree)
	r, err := rootfs.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	tx, err := Begin(r, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	// useradd retries a held lock once a second: it waits for the Tx.
	ua := exec.Command("useradd", "--prefix", dir, "-M", "zed")
	var uaOut strings.Builder
	ua.Stdout, ua.Stderr = &uaOut, &uaOut
	if err := ua.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- ua.Wait() }()
	select {
	case err := <-done:
		t.Fatalf("useradd ran while a Tx held the locks: %v %s", err, uaOut.String())
	case <-time.After(1500 * time.Millisecond):
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "etc/passwd")); strings.Contains(string(b), "zed") {
		t.Error("useradd wrote /etc/passwd under the Tx's lock")
	}
	tx.Close()
	if err := <-done; err != nil {
		t.Errorf("useradd after Close: %v %s", err, uaOut.String())
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "etc/passwd")); !strings.Contains(string(b), "zed:") {
		t.Error("useradd did not add zed once the Tx let go")
	}

	// A stale lock (a pid that has exited) is removed; a live one stops Begin.
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	stale := fmt.Sprint(cmd.Process.Pid)
	if err := os.WriteFile(filepath.Join(dir, "etc/group.lock"), []byte(stale), 0o600); err != nil {
		t.Fatal(err)
	}
	tx, err = Begin(r, time.Now())
	if err != nil {
		t.Fatalf("stale lock of pid %s: %v", stale, err)
	}
	tx.Close()
	live := exec.Command("sleep", "30")
	if err := live.Start(); err != nil {
		t.Fatal(err)
	}
	defer live.Process.Kill()
	if err := os.WriteFile(filepath.Join(dir, "etc/shadow.lock"), []byte(fmt.Sprint(live.Process.Pid)), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Begin(r, time.Now()); err == nil || !strings.Contains(err.Error(), "cannot lock /etc/shadow") {
		t.Errorf("a live process's lock: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "etc/passwd.lock")); err == nil {
		t.Error("Begin that failed left /etc/passwd.lock")
	}
	os.Remove(filepath.Join(dir, "etc/shadow.lock"))

	// lckpwdf: another process holds /etc/.pwd.lock's fcntl lock.
	holder := exec.Command("python3", "-c", "import fcntl,sys,time\nf=open(sys.argv[1],'w')\nfcntl.lockf(f,fcntl.LOCK_EX)\nprint('held',flush=True)\ntime.sleep(30)", filepath.Join(dir, "etc/.pwd.lock"))
	stdout, err := holder.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := holder.Start(); err != nil {
		t.Fatal(err)
	}
	defer holder.Process.Kill()
	if line, err := bufio.NewReader(stdout).ReadString('\n'); err != nil || line != "held\n" {
		t.Fatalf("lock holder: %q %v", line, err)
	}
	old := lockWait
	lockWait = 300 * time.Millisecond
	defer func() { lockWait = old }()
	start := time.Now()
	if _, err := Begin(r, time.Now()); err == nil || !strings.Contains(err.Error(), "/etc/.pwd.lock") {
		t.Errorf("lckpwdf's lock held elsewhere: %v", err)
	}
	if d := time.Since(start); d < 300*time.Millisecond {
		t.Errorf("gave up after %s, before the wait", d)
	}
}

// TestSupported: the Debian family only, regular databases, no name
// service cache.
func TestSupported(t *testing.T) {
	for _, c := range []struct {
		name  string
		files map[string]string
		want  bool
	}{
		{"debian", nil, true},
		{"ubuntu", map[string]string{"/etc/os-release": "ID=ubuntu\nID_LIKE=debian\n"}, true},
		{"rhel", map[string]string{"/etc/os-release": "ID=\"rhel\"\nID_LIKE=\"fedora\"\n"}, false},
		{"nscd", map[string]string{"/run/nscd/socket": ""}, false},
	} {
		dir := t.TempDir()
		writeTree(t, dir, baseTree)
		writeTree(t, dir, c.files)
		r, _ := rootfs.Open(dir)
		if ok, why := Supported(r); ok != c.want {
			t.Errorf("%s: supported %v (%s), want %v", c.name, ok, why, c.want)
		}
	}
}
