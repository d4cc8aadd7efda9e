// Package packaging holds earlyinit's package definition (nfpm.yaml) and the
// tests of its maintainer scripts (here, with plain go test) and of the
// packages `make package` builds (package_test.go, build tag package).
package packaging

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// fake is the earlyinit a script runs: it records its arguments, prints
// mode for a bare `earlyinit setup`, and exits with rc (only `setup off`
// and `setup --install`: printing and recording the mode succeed).
type fake struct {
	rc      int
	mode    string
	missing bool // no earlyinit on PATH at all
	setup   func(root string)
}

// runScript runs the maintainer script name (packaging/scripts/) with args
// under /bin/sh, as dpkg and rpm do, with a PATH that holds only the fake
// earlyinit, rm and rmdir. Every "/etc/earlyinit" in the script is moved
// under a temporary root, returned with the fake's calls, the script's exit
// status and its stderr.
func runScript(t *testing.T, name string, f fake, args ...string) (calls []string, code int, stderr, root string) {
	t.Helper()
	src, err := os.ReadFile(filepath.Join("scripts", name))
	if err != nil {
		t.Fatal(err)
	}
	tmp := t.TempDir()
	root = filepath.Join(tmp, "root")
	bin := filepath.Join(tmp, "bin")
	log := filepath.Join(tmp, "calls")
	for _, d := range []string{root, bin} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, tool := range []string{"rm", "rmdir"} {
		p, err := exec.LookPath(tool)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(p, filepath.Join(bin, tool)); err != nil {
			t.Fatal(err)
		}
	}
	if !f.missing {
		sh := fmt.Sprintf("#!/bin/sh\nprintf '%%s\\n' \"$*\" >> '%s'\ncase \"$*\" in\nsetup) echo %s ;;\n\"setup off\" | \"setup --install\") exit %d ;;\nesac\nexit 0\n", log, f.mode, f.rc)
		if err := os.WriteFile(filepath.Join(bin, "earlyinit"), []byte(sh), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if f.setup != nil {
		f.setup(root)
	}
	script := filepath.Join(tmp, name)
	if err := os.WriteFile(script, bytes.ReplaceAll(src, []byte("/etc/earlyinit"), []byte(root+"/etc/earlyinit")), 0o755); err != nil {
		t.Fatal(err)
	}
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(sh, append([]string{script}, args...)...)
	cmd.Env = []string{"PATH=" + bin}
	var errb bytes.Buffer
	cmd.Stderr = &errb
	err = cmd.Run()
	code = cmd.ProcessState.ExitCode()
	if err != nil && code < 0 {
		t.Fatalf("%s %v: %v", name, args, err)
	}
	if b, err := os.ReadFile(log); err == nil {
		calls = strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
	}
	return calls, code, errb.String(), root
}

// TestScriptsShape: POSIX sh scripts with set -e that the shell parses, and
// each touches /etc/earlyinit only where runScript can move it.
func TestScriptsShape(t *testing.T) {
	for _, name := range []string{"postinstall.sh", "preremove.sh", "postremove.sh"} {
		b, err := os.ReadFile(filepath.Join("scripts", name))
		if err != nil {
			t.Fatal(err)
		}
		s := string(b)
		if !strings.HasPrefix(s, "#!/bin/sh\n") || !strings.Contains(s, "\nset -e\n") {
			t.Errorf("%s: want #!/bin/sh and set -e", name)
		}
		if out, err := exec.Command("sh", "-n", filepath.Join("scripts", name)).CombinedOutput(); err != nil {
			t.Errorf("%s: sh -n: %v: %s", name, err, out)
		}
		if fi, err := os.Stat(filepath.Join("scripts", name)); err != nil || fi.Mode().Perm() != 0o755 {
			t.Errorf("%s: want mode 0755 (%v)", name, err)
		}
	}
}

func TestPostinstall(t *testing.T) {
	for _, args := range [][]string{
		{"configure", ""}, {"configure", "0.0.0~git20250101.0123456789ab"}, // deb install, upgrade
		{"abort-upgrade", "1.0"}, {"abort-remove"}, {"abort-deconfigure", "in-favour", "x", "1.0"},
		{"1"}, {"2"}, // rpm install, upgrade
	} {
		calls, code, stderr, _ := runScript(t, "postinstall.sh", fake{}, args...)
		if code != 0 || strings.Join(calls, ";") != "setup --install" {
			t.Errorf("postinstall %q: exit %d, earlyinit called %q, want 0 and [setup --install]; stderr %s", args, code, calls, stderr)
		}
	}
	// A failed regeneration fails the install, loudly.
	calls, code, stderr, _ := runScript(t, "postinstall.sh", fake{rc: 1}, "configure", "")
	if code == 0 || len(calls) != 1 || !strings.Contains(stderr, "earlyinit setup --install' failed") {
		t.Errorf("postinstall with a failing setup: exit %d, calls %q, stderr %q; want non-zero and the failure named", code, calls, stderr)
	}
}

func TestPreremove(t *testing.T) {
	for _, tt := range []struct {
		args  []string
		mode  string
		calls string
	}{
		// Removal: setup off regenerates; the mode before is put back for
		// a reinstall, without regenerating.
		{[]string{"remove"}, "distro", "setup;setup off;setup --no-regenerate distro"},
		{[]string{"0"}, "own", "setup;setup off;setup --no-regenerate own"}, // rpm erase
		{[]string{"remove"}, "off", "setup;setup off"},
		{[]string{"remove"}, "", "setup;setup off"}, // nothing printed: nothing to put back
		{[]string{"upgrade", "1.0"}, "distro", ""},
		{[]string{"1"}, "distro", ""}, // rpm upgrade: the old package's %preun
		{[]string{"deconfigure", "in-favour", "x", "1.0"}, "distro", ""},
		{[]string{"failed-upgrade", "1.0"}, "distro", ""},
	} {
		calls, code, stderr, _ := runScript(t, "preremove.sh", fake{mode: tt.mode}, tt.args...)
		if code != 0 || strings.Join(calls, ";") != tt.calls {
			t.Errorf("preremove %q, mode %q: exit %d, earlyinit called %q, want 0 and %q; stderr %s", tt.args, tt.mode, code, calls, tt.calls, stderr)
		}
	}
	// A failing setup off, or no earlyinit at all, must not make the
	// package unremovable: warned, and exit 0.
	for _, tt := range []struct {
		name  string
		f     fake
		calls string
		want  string
	}{
		{"setup off fails", fake{rc: 1, mode: "distro"}, "setup;setup off;setup --no-regenerate distro", "'earlyinit setup off' failed"},
		{"no earlyinit", fake{missing: true}, "", "not on PATH"},
	} {
		calls, code, stderr, _ := runScript(t, "preremove.sh", tt.f, "remove")
		if code != 0 || strings.Join(calls, ";") != tt.calls || !strings.Contains(stderr, "WARNING") || !strings.Contains(stderr, tt.want) {
			t.Errorf("preremove remove, %s: exit %d, calls %q, stderr %q; want 0, %q and a warning with %q", tt.name, code, calls, stderr, tt.calls, tt.want)
		}
	}
}

func TestPostremove(t *testing.T) {
	withState := func(extra bool) func(string) {
		return func(root string) {
			d := filepath.Join(root, "etc/earlyinit")
			if err := os.MkdirAll(d, 0o755); err != nil {
				t.Fatal(err)
			}
			os.WriteFile(filepath.Join(d, "setup"), []byte("distro\n"), 0o644)
			if extra {
				os.WriteFile(filepath.Join(d, "initramfs.conf.dpkg-old"), nil, 0o644)
			}
		}
	}
	for _, tt := range []struct {
		args               []string
		extra              bool
		setupGone, dirGone bool
	}{
		{[]string{"purge"}, false, true, true},
		{[]string{"0"}, false, true, true},     // rpm erase
		{[]string{"purge"}, true, true, false}, // a file the admin left stays, and its directory
		{[]string{"remove"}, false, false, false},
		{[]string{"upgrade", "1.0"}, false, false, false},
		{[]string{"1"}, false, false, false}, // rpm upgrade
		{[]string{"abort-install"}, false, false, false},
	} {
		calls, code, stderr, root := runScript(t, "postremove.sh", fake{setup: withState(tt.extra)}, tt.args...)
		_, errSetup := os.Stat(filepath.Join(root, "etc/earlyinit/setup"))
		_, errDir := os.Stat(filepath.Join(root, "etc/earlyinit"))
		if code != 0 || len(calls) != 0 || os.IsNotExist(errSetup) != tt.setupGone || os.IsNotExist(errDir) != tt.dirGone {
			t.Errorf("postremove %q (extra file %v): exit %d, earlyinit called %q, setup gone %v, dir gone %v; want 0, none, %v, %v; stderr %s",
				tt.args, tt.extra, code, calls, os.IsNotExist(errSetup), os.IsNotExist(errDir), tt.setupGone, tt.dirGone, stderr)
		}
	}
	// Purging with no state file left is no error.
	if _, code, stderr, _ := runScript(t, "postremove.sh", fake{}, "purge"); code != 0 {
		t.Errorf("postremove purge without /etc/earlyinit: exit %d: %s", code, stderr)
	}
}
