package setup

// Tests of the shell files in packaging/kernel, packaging/initramfs-tools
// and packaging/dracut: run with /bin/sh (dash on Debian, as the hooks
// run) or bash (dracut's module-setup.sh), against a fake earlyinit and
// fake generator functions that record what they are asked.

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

var packaging = filepath.Join("..", "..", "packaging")

// fakeBin writes a fake earlyinit to dir that appends its arguments, one
// line per call, to dir/calls, and exits with $FAKE_EXIT (default 0). It
// prints to stdout, so a test can see where the hook sends output.
func fakeBin(t *testing.T, dir string) (bin, calls string) {
	t.Helper()
	bin = filepath.Join(dir, "earlyinit")
	calls = filepath.Join(dir, "calls")
	script := "#!/bin/sh\necho \"$*\" >>" + shellQuote(calls) + "\necho fake-earlyinit-output\nexit \"${FAKE_EXIT:-0}\"\n"
	if err := os.WriteFile(bin, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return bin, calls
}

func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

func readCalls(t *testing.T, calls string) []string {
	t.Helper()
	b, err := os.ReadFile(calls)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	return strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
}

// writeMode records mode under root ("" leaves no state file).
func writeMode(t *testing.T, root, mode string) {
	t.Helper()
	if mode == "" {
		return
	}
	p := filepath.Join(root, StateFile)
	os.MkdirAll(filepath.Dir(p), 0o755)
	if err := os.WriteFile(p, []byte(mode+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
}

// runScript runs the script at path with shell and args, in an
// environment of env only (plus PATH), and returns its exit code, stdout
// and stderr.
func runScript(t *testing.T, shell, path string, env []string, args ...string) (int, string, string) {
	t.Helper()
	cmd := exec.Command(shell, append([]string{path}, args...)...)
	cmd.Env = append([]string{"PATH=/usr/sbin:/usr/bin:/sbin:/bin"}, env...)
	var out, errw bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errw
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return code, out.String(), errw.String()
}

func TestKernelPostinstHook(t *testing.T) {
	script := filepath.Join(packaging, "kernel", "zz-earlyinit-postinst")
	const k = "6.1.0-9-amd64"
	for _, tc := range []struct {
		name  string
		mode  string
		args  []string
		env   []string
		noBin bool
		code  int
		calls []string
	}{
		{name: "own", mode: "own", args: []string{k, "/boot/vmlinuz-" + k}, calls: []string{"initramfs --kver " + k + " --root ROOT"}},
		{name: "own, version only", mode: "own", args: []string{k}, calls: []string{"initramfs --kver " + k + " --root ROOT"}},
		{name: "own, on configure", mode: "own", args: []string{k}, env: []string{"DEB_MAINT_PARAMS='configure' '6.1.76-1'"}, calls: []string{"initramfs --kver " + k + " --root ROOT"}},
		{name: "own, not on abort-remove", mode: "own", args: []string{k}, env: []string{"DEB_MAINT_PARAMS='abort-remove'"}},
		{name: "own, no initramfs wanted", mode: "own", args: []string{k}, env: []string{"INITRD=No"}},
		{name: "own, the verb fails", mode: "own", args: []string{k}, env: []string{"FAKE_EXIT=3"}, code: 3, calls: []string{"initramfs --kver " + k + " --root ROOT"}},
		{name: "own, package removed", mode: "own", args: []string{k}, noBin: true},
		{name: "own, no version", mode: "own"},
		{name: "own, a version with a slash", mode: "own", args: []string{"../x"}},
		{name: "own, a version like an option", mode: "own", args: []string{"--help"}},
		{name: "distro", mode: "distro", args: []string{k}},
		{name: "off", mode: "off", args: []string{k}},
		{name: "not set up", args: []string{k}},
		{name: "a bad state file", mode: "own distro", args: []string{k}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			writeMode(t, root, tc.mode)
			bin, calls := fakeBin(t, t.TempDir())
			if tc.noBin {
				os.Remove(bin)
			}
			env := append([]string{"EARLYINIT_ROOT=" + root, "EARLYINIT_BIN=" + bin}, tc.env...)
			code, stdout, stderr := runScript(t, "sh", script, env, tc.args...)
			if code != tc.code {
				t.Errorf("exit %d, want %d; stderr %q", code, tc.code, stderr)
			}
			if stdout != "" {
				t.Errorf("stdout %q: kernel hooks may run under debconf and must write to stderr only", stdout)
			}
			got := readCalls(t, calls)
			for i := range got {
				got[i] = strings.ReplaceAll(got[i], root, "ROOT")
			}
			if !reflect.DeepEqual(got, tc.calls) {
				t.Errorf("earlyinit called with %q, want %q", got, tc.calls)
			}
			if len(tc.calls) > 0 && !strings.Contains(stderr, "fake-earlyinit-output") {
				t.Errorf("stderr %q lacks the verb's output", stderr)
			}
		})
	}
}

func TestKernelPostrmHook(t *testing.T) {
	script := filepath.Join(packaging, "kernel", "zz-earlyinit-postrm")
	const k = "6.1.0-9-amd64"
	images := []string{"initrd.img-" + k, "initramfs-" + k + ".img", "initrd-" + k}
	other := "initrd.img-6.1.0-10-amd64"
	for _, tc := range []struct {
		name    string
		mode    string
		args    []string
		env     []string
		removed bool
	}{
		{name: "own", mode: "own", args: []string{k, "/boot/vmlinuz-" + k}, removed: true},
		{name: "own, on remove", mode: "own", args: []string{k}, env: []string{"DEB_MAINT_PARAMS='remove'"}, removed: true},
		{name: "own, not on upgrade", mode: "own", args: []string{k}, env: []string{"DEB_MAINT_PARAMS='upgrade' '6.1.76-1'"}},
		{name: "own, no version", mode: "own"},
		{name: "own, a version with a slash", mode: "own", args: []string{"../boot"}},
		{name: "distro", mode: "distro", args: []string{k}},
		{name: "off", mode: "off", args: []string{k}},
		{name: "not set up", args: []string{k}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			writeMode(t, root, tc.mode)
			os.MkdirAll(filepath.Join(root, "boot"), 0o755)
			for _, f := range append([]string{other}, images...) {
				os.WriteFile(filepath.Join(root, "boot", f), []byte("x"), 0o644)
			}
			code, stdout, stderr := runScript(t, "sh", script, append([]string{"EARLYINIT_ROOT=" + root}, tc.env...), tc.args...)
			if code != 0 {
				t.Errorf("exit %d, want 0; stderr %q", code, stderr)
			}
			if stdout != "" {
				t.Errorf("stdout %q: kernel hooks must write to stderr only", stdout)
			}
			for _, f := range images {
				_, err := os.Stat(filepath.Join(root, "boot", f))
				if gone := os.IsNotExist(err); gone != tc.removed {
					t.Errorf("/boot/%s removed: %v, want %v", f, gone, tc.removed)
				}
			}
			if _, err := os.Stat(filepath.Join(root, "boot", other)); err != nil {
				t.Errorf("another kernel's image: %v", err)
			}
		})
	}
}

func TestInitramfsPostUpdateHook(t *testing.T) {
	script := filepath.Join(packaging, "initramfs-tools", "post-update")
	const k = "6.1.0-9-amd64"
	image := "/boot/initrd.img-" + k
	for _, tc := range []struct {
		name  string
		mode  string
		args  []string
		noBin bool
		env   []string
		code  int
		calls []string
	}{
		{name: "own", mode: "own", args: []string{k, image}, calls: []string{"initramfs --kver " + k + " -o " + image + " --root ROOT"}},
		{name: "own, the verb fails", mode: "own", args: []string{k, image}, env: []string{"FAKE_EXIT=4"}, code: 4, calls: []string{"initramfs --kver " + k + " -o " + image + " --root ROOT"}},
		{name: "own, package removed", mode: "own", args: []string{k, image}, noBin: true},
		{name: "own, no image", mode: "own", args: []string{k}},
		{name: "own, relative image", mode: "own", args: []string{k, "initrd.img"}},
		{name: "own, a version with a slash", mode: "own", args: []string{"a/b", image}},
		{name: "distro", mode: "distro", args: []string{k, image}},
		{name: "off", mode: "off", args: []string{k, image}},
		{name: "not set up", args: []string{k, image}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			writeMode(t, root, tc.mode)
			bin, calls := fakeBin(t, t.TempDir())
			if tc.noBin {
				os.Remove(bin)
			}
			env := append([]string{"EARLYINIT_ROOT=" + root, "EARLYINIT_BIN=" + bin}, tc.env...)
			code, stdout, stderr := runScript(t, "sh", script, env, tc.args...)
			if code != tc.code {
				t.Errorf("exit %d, want %d; stderr %q", code, tc.code, stderr)
			}
			if stdout != "" {
				t.Errorf("stdout %q, want all output on stderr", stdout)
			}
			got := readCalls(t, calls)
			for i := range got {
				got[i] = strings.ReplaceAll(got[i], root, "ROOT")
			}
			if !reflect.DeepEqual(got, tc.calls) {
				t.Errorf("earlyinit called with %q, want %q", got, tc.calls)
			}
		})
	}
}

func TestKernelInstallPlugin(t *testing.T) {
	script := filepath.Join(packaging, "kernel", "60-earlyinit.install")
	const k = "6.8.5-301.fc40.x86_64"
	for _, tc := range []struct {
		name     string
		mode     string
		command  string
		layout   string // KERNEL_INSTALL_LAYOUT; "-" for unset
		entry    bool   // ENTRY-DIR exists
		staging  bool   // KERNEL_INSTALL_STAGING_AREA set and exists
		calls    []string
		removed  bool // /boot's images removed
		leftOver bool
	}{
		{name: "add, BLS with a staging area", mode: "own", command: "add", layout: "bls", entry: true, staging: true,
			calls: []string{"initramfs --kver " + k + " --root ROOT -o STAGING/initrd"}},
		{name: "add, BLS without a staging area", mode: "own", command: "add", layout: "bls", entry: true,
			calls: []string{"initramfs --kver " + k + " --root ROOT -o ENTRY/initrd"}},
		{name: "add, old systemd: no layout, ENTRY-DIR there", mode: "own", command: "add", layout: "-", entry: true,
			calls: []string{"initramfs --kver " + k + " --root ROOT -o ENTRY/initrd"}},
		{name: "add, old systemd: no layout, no ENTRY-DIR", mode: "own", command: "add", layout: "-",
			calls: []string{"initramfs --kver " + k + " --root ROOT"}},
		{name: "add, other layout", mode: "own", command: "add", layout: "other", entry: true, staging: true,
			calls: []string{"initramfs --kver " + k + " --root ROOT"}},
		{name: "add, distro", mode: "distro", command: "add", layout: "bls", entry: true, staging: true},
		{name: "add, off", mode: "off", command: "add", layout: "other"},
		{name: "add, not set up", command: "add", layout: "other"},
		{name: "remove, other layout", mode: "own", command: "remove", layout: "other", removed: true},
		{name: "remove, BLS: kernel-install removes ENTRY-DIR", mode: "own", command: "remove", layout: "bls", entry: true},
		{name: "remove, distro", mode: "distro", command: "remove", layout: "other"},
		{name: "inspect", mode: "own", command: "inspect", layout: "other"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root, tmp := t.TempDir(), t.TempDir()
			writeMode(t, root, tc.mode)
			bin, calls := fakeBin(t, t.TempDir())
			boot := filepath.Join(root, "boot")
			os.MkdirAll(boot, 0o755)
			for _, f := range []string{"initramfs-" + k + ".img", "initrd.img-" + k} {
				os.WriteFile(filepath.Join(boot, f), []byte("x"), 0o644)
			}
			entry := filepath.Join(tmp, "efi", "0123456789abcdef", k)
			if tc.entry {
				os.MkdirAll(entry, 0o755)
			}
			staging := filepath.Join(tmp, "staging")
			env := []string{"EARLYINIT_ROOT=" + root, "EARLYINIT_BIN=" + bin, "KERNEL_INSTALL_VERBOSE=0"}
			if tc.staging {
				os.MkdirAll(staging, 0o755)
				env = append(env, "KERNEL_INSTALL_STAGING_AREA="+staging)
			}
			if tc.layout != "-" {
				env = append(env, "KERNEL_INSTALL_LAYOUT="+tc.layout)
			}
			args := []string{tc.command, k, entry}
			if tc.command == "add" {
				args = append(args, filepath.Join(tmp, "vmlinuz"))
			}
			code, _, stderr := runScript(t, "sh", script, env, args...)
			if code != 0 {
				t.Errorf("exit %d, want 0 (77 would stop the plugins after it); stderr %q", code, stderr)
			}
			got := readCalls(t, calls)
			for i := range got {
				got[i] = strings.NewReplacer(staging, "STAGING", entry, "ENTRY", root, "ROOT").Replace(got[i])
			}
			if !reflect.DeepEqual(got, tc.calls) {
				t.Errorf("earlyinit called with %q, want %q", got, tc.calls)
			}
			for _, f := range []string{"initramfs-" + k + ".img", "initrd.img-" + k} {
				_, err := os.Stat(filepath.Join(boot, f))
				if gone := os.IsNotExist(err); gone != tc.removed {
					t.Errorf("/boot/%s removed: %v, want %v", f, gone, tc.removed)
				}
			}
		})
	}
}

func TestKernelInstallPluginFailure(t *testing.T) {
	script := filepath.Join(packaging, "kernel", "60-earlyinit.install")
	root := t.TempDir()
	writeMode(t, root, "own")
	bin, _ := fakeBin(t, t.TempDir())
	code, _, _ := runScript(t, "sh", script, []string{"EARLYINIT_ROOT=" + root, "EARLYINIT_BIN=" + bin, "FAKE_EXIT=1", "KERNEL_INSTALL_LAYOUT=other"}, "add", "6.8.5", "/nonexistent", "/nonexistent/vmlinuz")
	if code != 1 {
		t.Errorf("exit %d when earlyinit initramfs fails, want 1", code)
	}
}

// fakeHookFunctions writes a hook-functions that records the calls the
// hook makes instead of building anything.
func fakeHookFunctions(t *testing.T, dir string) (path, calls string) {
	t.Helper()
	path = filepath.Join(dir, "hook-functions")
	calls = filepath.Join(dir, "hook-calls")
	f := "copy_exec() { echo \"copy_exec $*\" >>" + shellQuote(calls) + "; }\n" +
		"manual_add_modules() { echo \"manual_add_modules $*\" >>" + shellQuote(calls) + "; }\n"
	if err := os.WriteFile(path, []byte(f), 0o644); err != nil {
		t.Fatal(err)
	}
	return path, calls
}

func TestInitramfsToolsHook(t *testing.T) {
	hook := filepath.Join(packaging, "initramfs-tools", "hook")
	for _, tc := range []struct {
		name      string
		mode      string
		noScript  bool
		noBin     bool
		calls     []string
		keeps     bool // the boot script stays in the image
		stderrHas string
	}{
		{name: "distro", mode: "distro", keeps: true, calls: []string{
			"copy_exec BIN /bin/earlyinit",
			"manual_add_modules isofs vfat nls_utf8 nls_cp437 nls_iso8859-1 virtio_net e1000 e1000e vmxnet3 hv_netvsc ena gve",
		}},
		{name: "off", mode: "off"},
		{name: "own", mode: "own"},
		{name: "not set up"},
		{name: "distro, binary gone", mode: "distro", noBin: true},
		{name: "distro, boot script gone", mode: "distro", noScript: true, stderrHas: "W: earlyinit: mode distro, but its boot script"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root, dest := t.TempDir(), t.TempDir()
			writeMode(t, root, tc.mode)
			bin, _ := fakeBin(t, t.TempDir())
			if tc.noBin {
				os.Remove(bin)
			}
			funcs, calls := fakeHookFunctions(t, t.TempDir())
			// mkinitramfs has copied the scripts into the image before
			// the hooks run.
			script := filepath.Join(dest, "scripts", "init-bottom", "earlyinit")
			os.MkdirAll(filepath.Dir(script), 0o755)
			if !tc.noScript {
				os.WriteFile(script, []byte("#!/bin/sh\n"), 0o755)
			}
			env := []string{"DESTDIR=" + dest, "EARLYINIT_ROOT=" + root, "EARLYINIT_BIN=" + bin, "EARLYINIT_HOOK_FUNCTIONS=" + funcs}
			code, stdout, stderr := runScript(t, "sh", hook, env)
			if code != 0 {
				t.Errorf("exit %d, want 0 (a failing hook aborts the image); stderr %q", code, stderr)
			}
			if stdout != "" {
				t.Errorf("stdout %q", stdout)
			}
			got := readCalls(t, calls)
			for i := range got {
				got[i] = strings.ReplaceAll(got[i], bin, "BIN")
			}
			if !reflect.DeepEqual(got, tc.calls) {
				t.Errorf("hook functions called: %q, want %q", got, tc.calls)
			}
			_, err := os.Stat(script)
			if kept := err == nil; kept != tc.keeps {
				t.Errorf("boot script in the image: %v, want %v", kept, tc.keeps)
			}
			if !strings.Contains(stderr, tc.stderrHas) {
				t.Errorf("stderr %q, want %q", stderr, tc.stderrHas)
			}
		})
	}
}

// The prereqs call (how mkinitramfs orders hooks and scripts) prints the
// PREREQs and does nothing else: no hook-functions, no DESTDIR.
func TestInitramfsToolsPrereqs(t *testing.T) {
	for _, f := range []string{"hook", "script"} {
		code, stdout, stderr := runScript(t, "sh", filepath.Join(packaging, "initramfs-tools", f), []string{"EARLYINIT_HOOK_FUNCTIONS=/nonexistent"}, "prereqs")
		if code != 0 || stdout != "\n" || stderr != "" {
			t.Errorf("%s prereqs: exit %d, stdout %q, stderr %q; want 0 and an empty PREREQ", f, code, stdout, stderr)
		}
	}
}

// withBinary returns a copy of the boot script at path in dir, calling
// bin where it calls earlyinit at abs (a path that exists only in the
// initramfs).
func withBinary(t *testing.T, path, abs, bin, dir string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	if !strings.Contains(s, abs+" provision") {
		t.Fatalf("%s does not run %s provision", path, abs)
	}
	// Only the code's uses: [ -x ABS ] and ABS provision.
	s = strings.ReplaceAll(s, " "+abs+" ", " "+bin+" ")
	s = strings.ReplaceAll(s, "\t"+abs+" ", "\t"+bin+" ")
	s = strings.ReplaceAll(s, "    "+abs+" ", "    "+bin+" ")
	out := filepath.Join(dir, filepath.Base(path))
	if err := os.WriteFile(out, []byte(s), 0o755); err != nil {
		t.Fatal(err)
	}
	return out
}

func TestInitramfsToolsBootScript(t *testing.T) {
	for _, tc := range []struct {
		name  string
		env   []string
		noBin bool
		calls []string
		err   string
	}{
		{name: "provisions the mounted root", env: []string{"rootmnt=/root"}, calls: []string{"provision --root /root"}},
		{name: "rootmnt unset", calls: []string{"provision --root /root"}},
		{name: "provision fails, the boot goes on", env: []string{"rootmnt=/root", "FAKE_EXIT=1"}, calls: []string{"provision --root /root"}, err: "earlyinit: provision failed (exit 1); the boot goes on"},
		{name: "no earlyinit in the image", env: []string{"rootmnt=/root"}, noBin: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			bin, calls := fakeBin(t, dir)
			script := withBinary(t, filepath.Join(packaging, "initramfs-tools", "script"), "/bin/earlyinit", bin, dir)
			if tc.noBin {
				os.Remove(bin)
			}
			code, _, stderr := runScript(t, "sh", script, tc.env)
			if code != 0 {
				t.Errorf("exit %d, want 0: the boot script never fails the boot", code)
			}
			if got := readCalls(t, calls); !reflect.DeepEqual(got, tc.calls) {
				t.Errorf("earlyinit called with %q, want %q", got, tc.calls)
			}
			if !strings.Contains(stderr, tc.err) {
				t.Errorf("stderr %q, want %q", stderr, tc.err)
			}
		})
	}
}

func TestDracutModuleSetup(t *testing.T) {
	setup := filepath.Join(packaging, "dracut", "module-setup.sh")
	// The harness sources module-setup.sh as dracut does, with dracut's
	// functions faked, and prints what each function did.
	harness := `
inst_simple() { echo "inst_simple $*"; }
inst_hook() { echo "inst_hook $*"; }
instmods() { echo "instmods hostonly=[$hostonly] $*"; }
hostonly=-h
moddir=/usr/lib/dracut/modules.d/90earlyinit
. "$1"
check; echo "check=$?"
echo "depends=[$(depends)]"
installkernel
install
`
	for _, tc := range []struct {
		name  string
		mode  string
		noBin bool
		check string
	}{
		{name: "distro", mode: "distro", check: "check=0"},
		{name: "off", mode: "off", check: "check=255"},
		{name: "own", mode: "own", check: "check=255"},
		{name: "not set up", check: "check=255"},
		{name: "distro without the binary", mode: "distro", noBin: true, check: "check=1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			writeMode(t, root, tc.mode)
			bin, _ := fakeBin(t, t.TempDir())
			if tc.noBin {
				os.Remove(bin)
			}
			cmd := exec.Command("bash", "-c", harness, "harness", setup)
			cmd.Env = []string{"PATH=/usr/bin:/bin", "EARLYINIT_ROOT=" + root, "EARLYINIT_BIN=" + bin}
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("%v: %s", err, out)
			}
			got := strings.ReplaceAll(string(out), bin, "BIN")
			want := tc.check + "\n" +
				"depends=[]\n" +
				"instmods hostonly=[] isofs vfat nls_utf8 nls_cp437 nls_iso8859-1 virtio_net e1000 e1000e vmxnet3 hv_netvsc ena gve\n" +
				"inst_simple BIN /usr/bin/earlyinit\n" +
				"inst_hook pre-pivot 90 /usr/lib/dracut/modules.d/90earlyinit/earlyinit-provision.sh\n"
			if got != want {
				t.Errorf("module-setup.sh did\n%s\nwant\n%s", got, want)
			}
		})
	}
}

func TestDracutProvisionHook(t *testing.T) {
	// dracut sources the hook: after it, the sourcing shell goes on (no
	// exit), with no variable of the hook's left, even under set -e.
	for _, tc := range []struct {
		name   string
		env    []string
		warn   bool // dracut-lib's warn is defined
		noBin  bool
		calls  []string
		output string
	}{
		{name: "provisions NEWROOT", env: []string{"NEWROOT=/sysroot"}, calls: []string{"provision --root /sysroot"}},
		{name: "NEWROOT unset", calls: []string{"provision --root /sysroot"}},
		{name: "provision fails, warned", env: []string{"NEWROOT=/sysroot", "FAKE_EXIT=2"}, warn: true, calls: []string{"provision --root /sysroot"}, output: "WARN earlyinit: provision failed (exit 2); the boot goes on"},
		{name: "provision fails, no warn", env: []string{"NEWROOT=/sysroot", "FAKE_EXIT=2"}, calls: []string{"provision --root /sysroot"}, output: "earlyinit: provision failed (exit 2); the boot goes on"},
		{name: "no earlyinit in the image", env: []string{"NEWROOT=/sysroot"}, noBin: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			bin, calls := fakeBin(t, dir)
			hook := withBinary(t, filepath.Join(packaging, "dracut", "earlyinit-provision.sh"), "/usr/bin/earlyinit", bin, dir)
			if tc.noBin {
				os.Remove(bin)
			}
			warn := ""
			if tc.warn {
				warn = `warn() { echo "WARN $*" >&2; }; `
			}
			cmd := exec.Command("sh", "-c", "set -e; "+warn+`. "$1"; echo "after rc=$? vars=[$(set | grep -c '^_earlyinit')]"`, "sh", hook)
			cmd.Env = append([]string{"PATH=/usr/bin:/bin"}, tc.env...)
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("%v: %s", err, out)
			}
			if !strings.Contains(string(out), "after rc=0 vars=[0]") {
				t.Errorf("the sourcing shell did not go on cleanly: %q", out)
			}
			if !strings.Contains(string(out), tc.output) {
				t.Errorf("output %q, want %q", out, tc.output)
			}
			if got := readCalls(t, calls); !reflect.DeepEqual(got, tc.calls) {
				t.Errorf("earlyinit called with %q, want %q", got, tc.calls)
			}
		})
	}
}

// The shell files parse with dash (the hooks' and initramfs scripts'
// /bin/sh) and, for dracut's, bash; every one is executable in the tree.
func TestScriptsSyntax(t *testing.T) {
	for _, f := range []struct{ shell, path string }{
		{"dash", "kernel/zz-earlyinit-postinst"},
		{"dash", "kernel/zz-earlyinit-postrm"},
		{"dash", "kernel/60-earlyinit.install"},
		{"dash", "initramfs-tools/hook"},
		{"dash", "initramfs-tools/script"},
		{"dash", "initramfs-tools/post-update"},
		{"dash", "dracut/earlyinit-provision.sh"},
		{"bash", "dracut/module-setup.sh"},
	} {
		p := filepath.Join(packaging, f.path)
		if out, err := exec.Command(f.shell, "-n", p).CombinedOutput(); err != nil {
			t.Errorf("%s -n %s: %v: %s", f.shell, f.path, err, out)
		}
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode()&0o111 == 0 {
			t.Errorf("%s is not executable", f.path)
		}
	}
}
