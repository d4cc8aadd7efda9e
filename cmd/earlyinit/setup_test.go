//go:build !initrd

package main

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/earlyinit/earlyinit/internal/setup"
)

type recordExec struct {
	ran  [][]string
	fail bool
	// modes is the state file's content when each command ran.
	modes []string
	root  string
}

func (r *recordExec) Run(argv []string) error {
	r.ran = append(r.ran, argv)
	b, _ := os.ReadFile(filepath.Join(r.root, setup.StateFile))
	r.modes = append(r.modes, string(b))
	if r.fail {
		return errors.New("exit status 1")
	}
	return nil
}

// setupRoot makes an image root with one kernel and the given files.
func setupRoot(t *testing.T, files ...string) string {
	t.Helper()
	root := t.TempDir()
	for _, f := range append([]string{"lib/modules/6.1.0-9-amd64/", "boot/vmlinuz-6.1.0-9-amd64"}, files...) {
		p := filepath.Join(root, f)
		if strings.HasSuffix(f, "/") {
			os.MkdirAll(p, 0o755)
			continue
		}
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, nil, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

var initramfsTools = []string{"usr/sbin/update-initramfs", "usr/share/initramfs-tools/hook-functions"}

func runSetup(t *testing.T, ex *recordExec, args ...string) (int, string, string) {
	t.Helper()
	var out, errw bytes.Buffer
	code := setupRun(args, setupEnv{exec: ex, self: "/usr/bin/earlyinit", stdout: &out, stderr: &errw})
	return code, out.String(), errw.String()
}

func TestSetupVerb(t *testing.T) {
	for _, tc := range []struct {
		name     string
		files    []string
		state    string // "" for none
		args     []string
		fail     bool
		code     int
		wantMode string // state file after; "" for none
		ran      [][]string
		stdout   string
		stderr   string
	}{
		{name: "print, not set up", args: nil, code: 0, stdout: "off\n", stderr: "does not exist"},
		{name: "print", state: "distro\n", code: 0, wantMode: "distro\n", stdout: "distro\n"},
		{name: "print a bad state file", state: "maybe\n", code: 1, wantMode: "maybe\n", stderr: `setup: mode "maybe": not one of own, distro, off`},
		{name: "own", files: initramfsTools, args: []string{"own"}, code: 0, wantMode: "own\n",
			ran: [][]string{{"/usr/bin/earlyinit", "initramfs", "--kver", "6.1.0-9-amd64", "--root", "ROOT"}}},
		{name: "distro with initramfs-tools", files: initramfsTools, state: "own\n", args: []string{"distro"}, code: 0, wantMode: "distro\n",
			ran: [][]string{{"chroot", "ROOT", "update-initramfs", "-c", "-k", "6.1.0-9-amd64"}}},
		{name: "off with dracut", files: []string{"usr/bin/dracut"}, state: "distro\n", args: []string{"off"}, code: 0, wantMode: "off\n",
			ran: [][]string{{"chroot", "ROOT", "dracut", "--force", "--kver", "6.1.0-9-amd64"}}},
		{name: "no-regenerate", files: initramfsTools, args: []string{"--no-regenerate", "distro"}, code: 0, wantMode: "distro\n"},
		{name: "a bad state file is replaced", files: initramfsTools, state: "junk\n", args: []string{"off", "--no-regenerate"}, code: 0, wantMode: "off\n"},
		{name: "unknown mode", args: []string{"on"}, code: 2, stderr: `mode "on": not one of own, distro, off`},
		{name: "two modes", args: []string{"own", "off"}, code: 2, stderr: "usage:"},
		{name: "unknown flag", args: []string{"--bogus"}, code: 2},
		{name: "no generator", args: []string{"distro"}, code: 1, wantMode: "distro\n", stderr: "no initramfs generator"},
		{name: "generator fails", files: initramfsTools, args: []string{"distro"}, fail: true, code: 1, wantMode: "distro\n",
			ran:    [][]string{{"chroot", "ROOT", "update-initramfs", "-c", "-k", "6.1.0-9-amd64"}},
			stderr: "mode distro is recorded, but regenerating the initramfs failed: chroot ROOT update-initramfs -c -k 6.1.0-9-amd64: exit status 1"},
		{name: "install: distro by default", files: initramfsTools, args: []string{"--install"}, code: 0, wantMode: "distro\n",
			ran: [][]string{{"chroot", "ROOT", "update-initramfs", "-c", "-k", "6.1.0-9-amd64"}}},
		{name: "install keeps the recorded mode", files: initramfsTools, state: "own\n", args: []string{"--install"}, code: 0, wantMode: "own\n",
			ran: [][]string{{"/usr/bin/earlyinit", "initramfs", "--kver", "6.1.0-9-amd64", "--root", "ROOT"}}},
		{name: "install keeps off", files: []string{"usr/bin/dracut"}, state: "off\n", args: []string{"--install"}, code: 0, wantMode: "off\n",
			ran: [][]string{{"chroot", "ROOT", "dracut", "--force", "--kver", "6.1.0-9-amd64"}}},
		{name: "install without a generator warns", args: []string{"--install"}, code: 0, wantMode: "distro\n", stderr: "warning: mode distro under ROOT: no initramfs generator"},
		{name: "install refuses a bad state file", files: initramfsTools, state: "junk\n", args: []string{"--install"}, code: 1, wantMode: "junk\n", stderr: "not one of own, distro, off"},
		{name: "install with a mode", args: []string{"--install", "own"}, code: 2},
		{name: "install fails when the generator does", files: initramfsTools, args: []string{"--install"}, fail: true, code: 1, wantMode: "distro\n",
			ran: [][]string{{"chroot", "ROOT", "update-initramfs", "-c", "-k", "6.1.0-9-amd64"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := setupRoot(t, tc.files...)
			if tc.state != "" {
				os.MkdirAll(filepath.Join(root, "etc/earlyinit"), 0o755)
				os.WriteFile(filepath.Join(root, setup.StateFile), []byte(tc.state), 0o644)
			}
			ex := &recordExec{fail: tc.fail, root: root}
			code, stdout, stderr := runSetup(t, ex, append([]string{"--root", root}, tc.args...)...)
			stderr = strings.ReplaceAll(stderr, root, "ROOT")
			if code != tc.code {
				t.Errorf("exit %d, want %d; stdout %q, stderr %q", code, tc.code, stdout, stderr)
			}
			for _, c := range ex.ran {
				for i := range c {
					if c[i] == root {
						c[i] = "ROOT"
					}
				}
			}
			if !reflect.DeepEqual(ex.ran, tc.ran) {
				t.Errorf("ran %q, want %q", ex.ran, tc.ran)
			}
			for _, m := range ex.modes {
				if m != tc.wantMode {
					t.Errorf("a command ran with the state file %q, want %q written first", m, tc.wantMode)
				}
			}
			b, err := os.ReadFile(filepath.Join(root, setup.StateFile))
			if tc.wantMode == "" && err == nil {
				t.Errorf("state file %q written, want none", b)
			}
			if tc.wantMode != "" && string(b) != tc.wantMode {
				t.Errorf("state file %q, want %q", b, tc.wantMode)
			}
			if tc.stdout != "" && stdout != tc.stdout {
				t.Errorf("stdout %q, want %q", stdout, tc.stdout)
			}
			if !strings.Contains(stderr, tc.stderr) {
				t.Errorf("stderr %q, want it to contain %q", stderr, tc.stderr)
			}
		})
	}
}

func TestSetupVerbRootNotADirectory(t *testing.T) {
	code, _, stderr := runSetup(t, &recordExec{}, "--root", filepath.Join(t.TempDir(), "missing"), "own")
	if code != 2 || !strings.Contains(stderr, "not a directory") {
		t.Errorf("exit %d, stderr %q; want 2 and the reason", code, stderr)
	}
}

func TestSetupRegistered(t *testing.T) {
	if _, ok := verbs["setup"]; !ok {
		t.Fatal("verb setup not registered")
	}
}
