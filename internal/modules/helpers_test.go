package modules

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/earlyinit/earlyinit/internal/rootfs"
	"github.com/earlyinit/earlyinit/internal/userdata"
)

// exitErr is a command's non-zero exit, as *exec.ExitError.
type exitErr int

func (e exitErr) Error() string { return fmt.Sprintf("exit status %d", int(e)) }
func (e exitErr) ExitCode() int { return int(e) }

// fakeExec records commands; handlers keyed by command name (base name)
// act on them.
type fakeExec struct {
	mu       sync.Mutex
	calls    []Cmd
	handlers map[string]func(c Cmd) ([]byte, error)
}

func (f *fakeExec) Run(_ context.Context, c Cmd) ([]byte, error) {
	f.mu.Lock()
	f.calls = append(f.calls, c)
	h := f.handlers[filepath.Base(c.Name)]
	f.mu.Unlock()
	if h != nil {
		return h(c)
	}
	return nil, nil
}

// argv is the recorded commands as "name arg arg" strings, paths under
// the test root shown as in the root.
func (f *fakeExec) argv(root string) []string {
	var out []string
	for _, c := range f.calls {
		out = append(out, strings.ReplaceAll(c.String(), root, ""))
	}
	return out
}

type testEnv struct {
	*Env
	t    *testing.T
	dir  string
	exec *fakeExec
	log  bytes.Buffer
	out  bytes.Buffer
}

const basePasswd = "root:x:0:0:root:/root:/bin/bash\ndaemon:x:1:1:daemon:/usr/sbin:/usr/sbin/nologin\n"
const baseGroup = "root:x:0:\nadm:x:4:\nsudo:x:27:\nusers:x:100:\n"

// newEnv is a root with /etc/passwd, /etc/group and /usr/sbin/useradd,
// whose fake useradd/groupadd edit them, and cfg parsed from YAML.
func newEnv(t *testing.T, cfgYAML string) *testEnv {
	t.Helper()
	dir := t.TempDir()
	r, err := rootfs.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	te := &testEnv{t: t, dir: dir, exec: &fakeExec{handlers: map[string]func(Cmd) ([]byte, error){}}}
	for name, content := range map[string]string{"/etc/passwd": basePasswd, "/etc/group": baseGroup, "/usr/sbin/useradd": "", "/usr/bin/passwd": ""} {
		if err := r.WriteFile(name, []byte(content), 0o644, 0, 0); err != nil {
			t.Fatal(err)
		}
	}
	cfg := map[string]any{}
	if cfgYAML != "" {
		parts, _, err := userdata.Decode([]byte("#cloud-config\n" + cfgYAML))
		if err != nil {
			t.Fatal(err)
		}
		var warns []userdata.Warning
		cfg, warns = userdata.Merge(parts, nil)
		if len(warns) > 0 {
			t.Fatalf("config: %v", warns)
		}
	}
	te.Env = &Env{
		Root: r, Cfg: cfg, InstanceID: "iid-1", Exec: te.exec,
		Log:         func(format string, args ...any) { fmt.Fprintf(&te.log, format+"\n", args...) },
		Output:      &te.out,
		DefaultUser: DebianDefaultUser(),
	}
	te.exec.handlers["useradd"] = te.fakeUseradd
	te.exec.handlers["groupadd"] = te.fakeGroupadd
	return te
}

// fakeUseradd appends the user to /etc/passwd (uid 1000 + n) with
// --home or /home/NAME, and makes the home with -m.
func (te *testEnv) fakeUseradd(c Cmd) ([]byte, error) {
	name, home, uid := c.Args[0], "/home/"+c.Args[0], -1
	mk := false
	for i := 1; i < len(c.Args); i++ {
		switch c.Args[i] {
		case "--home":
			home = c.Args[i+1]
		case "--uid":
			fmt.Sscan(c.Args[i+1], &uid)
		case "-m":
			mk = true
		}
	}
	b, _ := te.Root.ReadFile("/etc/passwd")
	if uid < 0 {
		uid = 1000 + strings.Count(string(b), "\n") - 2
	}
	line := fmt.Sprintf("%s:x:%d:%d::%s:/bin/sh\n", name, uid, uid, home)
	if err := te.Root.AppendFile("/etc/passwd", []byte(line), 0o644, 0, 0); err != nil {
		return nil, err
	}
	if mk {
		return nil, te.Root.MkdirAll(home, 0o755, uid, uid)
	}
	return nil, nil
}

func (te *testEnv) fakeGroupadd(c Cmd) ([]byte, error) {
	b, _ := te.Root.ReadFile("/etc/group")
	gid := 2000 + strings.Count(string(b), "\n")
	return nil, te.Root.AppendFile("/etc/group", []byte(fmt.Sprintf("%s:x:%d:\n", c.Args[len(c.Args)-1], gid)), 0o644, 0, 0)
}

func (te *testEnv) calls() []string { return te.exec.argv(te.dir) }

func (te *testEnv) wantCalls(want ...string) {
	te.t.Helper()
	if got := te.calls(); !reflect.DeepEqual(got, want) {
		te.t.Errorf("commands:\n got %q\nwant %q", got, want)
	}
}

func (te *testEnv) read(name string) string {
	te.t.Helper()
	b, err := te.Root.ReadFile(name)
	if err != nil {
		te.t.Fatal(err)
	}
	return string(b)
}

func (te *testEnv) write(name, content string, mode fs.FileMode) {
	te.t.Helper()
	if err := te.Root.WriteFile(name, []byte(content), mode, 0, 0); err != nil {
		te.t.Fatal(err)
	}
}

// wantFile checks content, permission bits and owner of name.
func (te *testEnv) wantFile(name, content string, mode fs.FileMode, uid, gid int) {
	te.t.Helper()
	if got := te.read(name); got != content {
		te.t.Errorf("%s:\n got %q\nwant %q", name, got, content)
	}
	te.wantMode(name, mode, uid, gid)
}

func (te *testEnv) wantMode(name string, mode fs.FileMode, uid, gid int) {
	te.t.Helper()
	fi, err := os.Lstat(te.Root.Path(name))
	if err != nil {
		te.t.Fatal(err)
	}
	st := fi.Sys().(*syscall.Stat_t)
	if fi.Mode()&(fs.ModePerm|fs.ModeSetuid|fs.ModeSetgid|fs.ModeSticky) != mode || int(st.Uid) != uid || int(st.Gid) != gid {
		te.t.Errorf("%s: mode %v owner %d:%d, want %v %d:%d", name, fi.Mode(), st.Uid, st.Gid, mode, uid, gid)
	}
}

// osReleases are os-release files of the four families' layouts.
var osReleases = map[string]string{
	"debian":   "ID=debian\nVERSION_ID=\"12\"\n",
	"ubuntu":   "ID=ubuntu\nID_LIKE=debian\nVERSION_ID=\"22.04\"\n",
	"rocky":    "ID=\"rocky\"\nID_LIKE=\"rhel centos fedora\"\nVERSION_ID=\"9.3\"\n",
	"rhel":     "ID=\"rhel\"\nVERSION_ID=\"9.3\"\n",
	"fedora":   "ID=fedora\nVERSION_ID=39\n",
	"opensuse": "ID=\"opensuse-leap\"\nID_LIKE=\"suse opensuse\"\nVERSION_ID=\"15.5\"\n",
	"alpine":   "ID=alpine\nVERSION_ID=3.19.0\n",
}

// distroEnv is newEnv with the os-release of distro and the given
// files (content "" for an empty executable or marker).
func distroEnv(t *testing.T, distro, cfg string, files ...string) *testEnv {
	t.Helper()
	te := newEnv(t, cfg)
	if distro != "" {
		te.write("/etc/os-release", osReleases[distro], 0o644)
	}
	for _, f := range files {
		if strings.HasSuffix(f, "/") {
			if err := te.Root.MkdirAll(f, 0o755, 0, 0); err != nil {
				t.Fatal(err)
			}
			continue
		}
		te.write(f, "", 0o755)
	}
	te.exec.calls = nil
	return te
}

// runFunc runs a module's function (the tests do not depend on All()).
func (te *testEnv) runFunc(f func(context.Context, *Env) error) error {
	te.t.Helper()
	return f(context.Background(), te.Env)
}

// cloudinitPython is a python3 that imports cloud-init (the oracle of
// these tests), or the test fails: make deps installs cloud-init.
func cloudinitPython(t *testing.T) string {
	t.Helper()
	for _, py := range []string{"/usr/bin/python3", "python3"} {
		if exec.Command(py, "-c", "import cloudinit.util").Run() == nil {
			return py
		}
	}
	t.Fatal("no python3 that imports cloudinit (cloud-init 22.4.2, the oracle of this test): make deps installs it")
	return ""
}

// cloudinitOracle runs script with cloud-init's python, input as JSON on
// stdin, and decodes its JSON output into out.
func cloudinitOracle(t *testing.T, script string, input, out any) {
	t.Helper()
	py := cloudinitPython(t)
	in, err := json.Marshal(input)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(py, "-c", "import json, logging, sys\nlogging.disable(logging.CRITICAL)\n"+script)
	cmd.Stdin = strings.NewReader(string(in))
	b, err := cmd.Output()
	if err != nil {
		if ee, ok := err.(*exec.ExitError); ok {
			t.Fatalf("oracle: %v: %s", err, ee.Stderr)
		}
		t.Fatalf("oracle: %v", err)
	}
	if err := json.Unmarshal(b, out); err != nil {
		t.Fatalf("oracle output %q: %v", b, err)
	}
}

// ciPython is a python3 that imports cloudinit; the test fails without
// one (make deps installs cloud-init).
func ciPython(t *testing.T) string {
	t.Helper()
	for _, py := range []string{"/usr/bin/python3", "python3"} {
		if exec.Command(py, "-c", "import cloudinit.util").Run() == nil {
			return py
		}
	}
	t.Fatal("no python3 with cloudinit to compare with cloud-init 22.4.2's output: make deps installs cloud-init")
	return ""
}

// ciOracle runs script with the JSON of in on stdin and decodes its JSON
// output.
func ciOracle(t *testing.T, script string, in, out any) {
	t.Helper()
	b, _ := json.Marshal(in)
	cmd := exec.Command(ciPython(t), "-c", "import logging, json, sys\nlogging.disable(logging.CRITICAL)\n"+script)
	cmd.Stdin = strings.NewReader(string(b))
	cmd.Stderr = os.Stderr
	o, err := cmd.Output()
	if err != nil {
		t.Fatalf("cloud-init oracle: %v", err)
	}
	if err := json.Unmarshal(o, out); err != nil {
		t.Fatalf("cloud-init oracle output %q: %v", o, err)
	}
}
