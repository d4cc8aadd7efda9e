package coretest

import (
	"bytes"
	"compress/gzip"
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

	"github.com/earlyinit/earlyinit/internal/modules/core"
	"github.com/earlyinit/earlyinit/internal/rootfs"
	"github.com/earlyinit/earlyinit/internal/userdata"
)

// ExitErr is a command's non-zero exit, as *exec.ExitError.
type ExitErr int

func (e ExitErr) Error() string { return fmt.Sprintf("exit status %d", int(e)) }
func (e ExitErr) ExitCode() int { return int(e) }

// FakeExec records commands; handlers keyed by command name (base name)
// act on them.
type FakeExec struct {
	mu       sync.Mutex
	Calls    []core.Cmd
	Handlers map[string]func(c core.Cmd) ([]byte, error)
}

func (f *FakeExec) Run(_ context.Context, c core.Cmd) ([]byte, error) {
	f.mu.Lock()
	f.Calls = append(f.Calls, c)
	h := f.Handlers[filepath.Base(c.Name)]
	f.mu.Unlock()
	if h != nil {
		return h(c)
	}
	return nil, nil
}

// argv is the recorded commands as "name arg arg" strings, paths under
// the test root shown as in the root.
func (f *FakeExec) argv(root string) []string {
	var out []string
	for _, c := range f.Calls {
		out = append(out, strings.ReplaceAll(c.String(), root, ""))
	}
	return out
}

type Env struct {
	*core.Env
	T      *testing.T
	Dir    string
	Fake   *FakeExec
	LogBuf bytes.Buffer
	OutBuf bytes.Buffer
}

const BasePasswd = "root:x:0:0:root:/root:/bin/bash\ndaemon:x:1:1:daemon:/usr/sbin:/usr/sbin/nologin\n"
const BaseGroup = "root:x:0:\nadm:x:4:\nsudo:x:27:\nusers:x:100:\n"

// NewEnv is a root with /etc/passwd, /etc/group and /usr/sbin/useradd,
// whose fake useradd/groupadd edit them, and cfg parsed from YAML.
func NewEnv(t *testing.T, cfgYAML string) *Env {
	t.Helper()
	dir := t.TempDir()
	r, err := rootfs.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	te := &Env{T: t, Dir: dir, Fake: &FakeExec{Handlers: map[string]func(core.Cmd) ([]byte, error){}}}
	for name, content := range map[string]string{"/etc/passwd": BasePasswd, "/etc/group": BaseGroup, "/usr/sbin/useradd": "", "/usr/bin/passwd": ""} {
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
	te.Env = &core.Env{
		Root: r, Cfg: cfg, InstanceID: "iid-1", Exec: te.Fake,
		Log:         func(format string, args ...any) { fmt.Fprintf(&te.LogBuf, format+"\n", args...) },
		Output:      &te.OutBuf,
		DefaultUser: core.DebianDefaultUser(),
	}
	te.Fake.Handlers["useradd"] = te.FakeUseradd
	te.Fake.Handlers["groupadd"] = te.fakeGroupadd
	return te
}

// FakeUseradd appends the user to /etc/passwd (uid 1000 + n) with
// --home or /home/NAME, and makes the home with -m.
func (te *Env) FakeUseradd(c core.Cmd) ([]byte, error) {
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

func (te *Env) fakeGroupadd(c core.Cmd) ([]byte, error) {
	b, _ := te.Root.ReadFile("/etc/group")
	gid := 2000 + strings.Count(string(b), "\n")
	return nil, te.Root.AppendFile("/etc/group", []byte(fmt.Sprintf("%s:x:%d:\n", c.Args[len(c.Args)-1], gid)), 0o644, 0, 0)
}

func (te *Env) Calls() []string { return te.Fake.argv(te.Dir) }

func (te *Env) WantCalls(want ...string) {
	te.T.Helper()
	if got := te.Calls(); !reflect.DeepEqual(got, want) {
		te.T.Errorf("commands:\n got %q\nwant %q", got, want)
	}
}

func (te *Env) Read(name string) string {
	te.T.Helper()
	b, err := te.Root.ReadFile(name)
	if err != nil {
		te.T.Fatal(err)
	}
	return string(b)
}

func (te *Env) Write(name, content string, mode fs.FileMode) {
	te.T.Helper()
	if err := te.Root.WriteFile(name, []byte(content), mode, 0, 0); err != nil {
		te.T.Fatal(err)
	}
}

// WantFile checks content, permission bits and owner of name.
func (te *Env) WantFile(name, content string, mode fs.FileMode, uid, gid int) {
	te.T.Helper()
	if got := te.Read(name); got != content {
		te.T.Errorf("%s:\n got %q\nwant %q", name, got, content)
	}
	te.WantMode(name, mode, uid, gid)
}

func (te *Env) WantMode(name string, mode fs.FileMode, uid, gid int) {
	te.T.Helper()
	fi, err := os.Lstat(te.Root.Path(name))
	if err != nil {
		te.T.Fatal(err)
	}
	st := fi.Sys().(*syscall.Stat_t)
	if fi.Mode()&(fs.ModePerm|fs.ModeSetuid|fs.ModeSetgid|fs.ModeSticky) != mode || int(st.Uid) != uid || int(st.Gid) != gid {
		te.T.Errorf("%s: mode %v owner %d:%d, want %v %d:%d", name, fi.Mode(), st.Uid, st.Gid, mode, uid, gid)
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

// DistroEnv is newEnv with the os-release of distro and the given
// files (content "" for an empty executable or marker).
func DistroEnv(t *testing.T, distro, cfg string, files ...string) *Env {
	t.Helper()
	te := NewEnv(t, cfg)
	if distro != "" {
		te.Write("/etc/os-release", osReleases[distro], 0o644)
	}
	for _, f := range files {
		if strings.HasSuffix(f, "/") {
			if err := te.Root.MkdirAll(f, 0o755, 0, 0); err != nil {
				t.Fatal(err)
			}
			continue
		}
		te.Write(f, "", 0o755)
	}
	te.Fake.Calls = nil
	return te
}

// RunFunc runs a module's function (the tests do not depend on All()).
func (te *Env) RunFunc(f func(context.Context, *core.Env) error) error {
	te.T.Helper()
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

// CloudinitOracle runs script with cloud-init's python, input as JSON on
// stdin, and decodes its JSON output into out.
func CloudinitOracle(t *testing.T, script string, input, out any) {
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

// CiOracle runs script with the JSON of in on stdin and decodes its JSON
// output.
func CiOracle(t *testing.T, script string, in, out any) {
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

func Gzipped(s string) []byte {
	var b bytes.Buffer
	w := gzip.NewWriter(&b)
	w.Write([]byte(s))
	w.Close()
	return b.Bytes()
}
