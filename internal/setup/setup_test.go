package setup

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// mkroot makes a root under t.TempDir() holding files (name -> content;
// a name ending in "/" is a directory).
func mkroot(t *testing.T, files ...string) string {
	t.Helper()
	root := t.TempDir()
	for _, f := range files {
		p := filepath.Join(root, f)
		if strings.HasSuffix(f, "/") {
			if err := os.MkdirAll(p, 0o755); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, nil, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

func TestParseMode(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want Mode
		err  bool
	}{
		{"own", Own, false},
		{"distro", Distro, false},
		{"off", Off, false},
		{"", "", true},
		{"Own", "", true},
		{"own ", "", true},
		{"on", "", true},
	} {
		got, err := ParseMode(tc.in)
		if got != tc.want || (err != nil) != tc.err {
			t.Errorf("ParseMode(%q) = %q, %v; want %q, error %v", tc.in, got, err, tc.want, tc.err)
		}
	}
}

func TestReadWriteMode(t *testing.T) {
	root := t.TempDir()
	if m, rec, err := ReadMode(root); m != "" || rec || err != nil {
		t.Fatalf("ReadMode of a root without %s = %q, %v, %v; want not recorded", StateFile, m, rec, err)
	}
	for _, m := range Modes {
		if err := WriteMode(root, m); err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(filepath.Join(root, StateFile))
		if err != nil {
			t.Fatal(err)
		}
		if string(b) != string(m)+"\n" {
			t.Errorf("state file after WriteMode(%s) = %q", m, b)
		}
		got, rec, err := ReadMode(root)
		if got != m || !rec || err != nil {
			t.Errorf("ReadMode after WriteMode(%s) = %q, %v, %v", m, got, rec, err)
		}
	}
	if err := WriteMode(root, "sideways"); err == nil {
		t.Error("WriteMode(sideways) succeeded")
	}
	if b, _ := os.ReadFile(filepath.Join(root, StateFile)); string(b) != "off\n" {
		t.Errorf("a refused WriteMode changed the state file to %q", b)
	}
	ents, _ := os.ReadDir(filepath.Join(root, "etc/earlyinit"))
	if len(ents) != 1 {
		t.Errorf("/etc/earlyinit holds %d entries, want the state file alone (no temporary files)", len(ents))
	}
}

func TestReadModeContent(t *testing.T) {
	for _, tc := range []struct {
		content string
		want    Mode
		err     string
	}{
		{"own\n", Own, ""},
		{"  distro  \n\n", Distro, ""},
		{"off", Off, ""},
		{"own distro\n", "", `mode "own distro": not one of own, distro, off`},
		{"\n", "", `mode "": not one of own, distro, off`},
		{"yes\n", "", StateFile},
	} {
		root := t.TempDir()
		p := filepath.Join(root, StateFile)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(tc.content), 0o644); err != nil {
			t.Fatal(err)
		}
		m, rec, err := ReadMode(root)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) || rec {
				t.Errorf("ReadMode(%q) = %q, %v, %v; want an error containing %q", tc.content, m, rec, err, tc.err)
			}
			continue
		}
		if m != tc.want || !rec || err != nil {
			t.Errorf("ReadMode(%q) = %q, %v, %v; want %q", tc.content, m, rec, err, tc.want)
		}
	}
}

func TestDetectGenerator(t *testing.T) {
	for _, tc := range []struct {
		name  string
		files []string
		want  Generator
	}{
		{"empty root", nil, NoGenerator},
		{"initramfs-tools", []string{"usr/sbin/update-initramfs", "usr/share/initramfs-tools/hook-functions", "etc/kernel/postinst.d/initramfs-tools"}, InitramfsTools},
		{"update-initramfs without hook-functions", []string{"usr/sbin/update-initramfs"}, NoGenerator},
		{"Debian's dracut", []string{"usr/bin/dracut", "etc/kernel/postinst.d/dracut"}, Dracut},
		{"Fedora's dracut", []string{"usr/bin/dracut", "usr/lib/kernel/install.d/50-dracut.install"}, Dracut},
		{"dracut in sbin", []string{"usr/sbin/dracut"}, Dracut},
		{"dracut-core beside initramfs-tools", []string{"usr/bin/dracut", "usr/sbin/update-initramfs", "usr/share/initramfs-tools/hook-functions", "etc/kernel/postinst.d/initramfs-tools"}, InitramfsTools},
		{"Debian's dracut hook wins", []string{"etc/kernel/postinst.d/dracut", "usr/bin/dracut", "usr/sbin/update-initramfs", "usr/share/initramfs-tools/hook-functions"}, Dracut},
		{"a directory is not a binary", []string{"usr/bin/dracut/"}, NoGenerator},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := DetectGenerator(mkroot(t, tc.files...)); got != tc.want {
				t.Errorf("DetectGenerator = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestKernels(t *testing.T) {
	for _, tc := range []struct {
		name  string
		files []string
		want  []string
	}{
		{"none", nil, nil},
		{"modules without a kernel image", []string{"lib/modules/6.1.0-9-amd64/"}, nil},
		{"image without modules", []string{"boot/vmlinuz-6.1.0-9-amd64"}, nil},
		{"one", []string{"lib/modules/6.1.0-9-amd64/", "boot/vmlinuz-6.1.0-9-amd64"}, []string{"6.1.0-9-amd64"}},
		{"sorted by version", []string{
			"lib/modules/6.1.0-10-amd64/", "boot/vmlinuz-6.1.0-10-amd64",
			"lib/modules/6.1.0-9-amd64/", "boot/vmlinuz-6.1.0-9-amd64",
			"lib/modules/5.10.0-28-amd64/", "boot/vmlinuz-5.10.0-28-amd64",
			"lib/modules/6.1.0-8-amd64/", // removed: no image
		}, []string{"5.10.0-28-amd64", "6.1.0-9-amd64", "6.1.0-10-amd64"}},
		{"usr/lib/modules and vmlinux", []string{"usr/lib/modules/6.8.5-301.fc40.ppc64le/", "boot/vmlinux-6.8.5-301.fc40.ppc64le"}, []string{"6.8.5-301.fc40.ppc64le"}},
		{"a file in /lib/modules is no kernel", []string{"lib/modules/6.1.0", "boot/vmlinuz-6.1.0"}, nil},
		{"odd names are skipped", []string{"lib/modules/-rf/", "boot/vmlinuz--rf", "lib/modules/a b/", "boot/vmlinuz-a b"}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Kernels(mkroot(t, tc.files...))
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("Kernels = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestKernelsMergedUsr(t *testing.T) {
	root := mkroot(t, "usr/lib/modules/6.1.0-9-amd64/", "boot/vmlinuz-6.1.0-9-amd64")
	if err := os.Symlink("usr/lib", filepath.Join(root, "lib")); err != nil {
		t.Fatal(err)
	}
	got, err := Kernels(root)
	if err != nil || !reflect.DeepEqual(got, []string{"6.1.0-9-amd64"}) {
		t.Errorf("Kernels on a merged /usr = %q, %v; want the kernel once", got, err)
	}
}

func TestCompareVersions(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want int
	}{
		{"6.1.0-9-amd64", "6.1.0-10-amd64", -1},
		{"6.1.0-10-amd64", "6.1.0-9-amd64", 1},
		{"5.14.0-427.el9.x86_64", "5.14.0-70.el9.x86_64", 1},
		{"6.1.0", "6.1.0", 0},
		{"6.1", "6.1.0", -1},
		{"6.01", "6.1", 0},
		{"6.1.0-rc1", "6.1.0-rc2", -1},
		{"6.1.0-9-amd64", "6.1.0-9-arm64", -1},
	} {
		if got := CompareVersions(tc.a, tc.b); got != tc.want {
			t.Errorf("CompareVersions(%q, %q) = %d, want %d", tc.a, tc.b, got, tc.want)
		}
	}
}

func TestPlan(t *testing.T) {
	const self = "/usr/bin/earlyinit"
	two := []string{"6.1.0-9-amd64", "6.1.0-10-amd64"}
	// Only 6.1.0-10's Debian image exists in the roots below.
	for _, tc := range []struct {
		name    string
		mode    Mode
		gen     Generator
		kernels []string
		chroot  bool
		want    [][]string
		err     error
	}{
		{"own, initramfs-tools", Own, InitramfsTools, two, false, [][]string{
			{self, "initramfs", "--kver", "6.1.0-9-amd64"},
			{self, "initramfs", "--kver", "6.1.0-10-amd64"},
		}, nil},
		{"own, dracut", Own, Dracut, two[:1], false, [][]string{
			{self, "initramfs", "--kver", "6.1.0-9-amd64"},
		}, nil},
		{"own needs no generator", Own, NoGenerator, two[:1], false, [][]string{
			{self, "initramfs", "--kver", "6.1.0-9-amd64"},
		}, nil},
		{"own in an image root", Own, InitramfsTools, two[1:], true, [][]string{
			{self, "initramfs", "--kver", "6.1.0-10-amd64", "--root", "ROOT"},
		}, nil},
		{"distro, initramfs-tools: create or update", Distro, InitramfsTools, two, false, [][]string{
			{"update-initramfs", "-c", "-k", "6.1.0-9-amd64"},
			{"update-initramfs", "-u", "-k", "6.1.0-10-amd64"},
		}, nil},
		{"off, initramfs-tools", Off, InitramfsTools, two, false, [][]string{
			{"update-initramfs", "-c", "-k", "6.1.0-9-amd64"},
			{"update-initramfs", "-u", "-k", "6.1.0-10-amd64"},
		}, nil},
		{"distro, dracut", Distro, Dracut, two, false, [][]string{
			{"dracut", "--force", "--kver", "6.1.0-9-amd64"},
			{"dracut", "--force", "--kver", "6.1.0-10-amd64"},
		}, nil},
		{"off, dracut", Off, Dracut, two[1:], false, [][]string{
			{"dracut", "--force", "--kver", "6.1.0-10-amd64"},
		}, nil},
		{"distro, initramfs-tools in an image root", Distro, InitramfsTools, two, true, [][]string{
			{"chroot", "ROOT", "update-initramfs", "-c", "-k", "6.1.0-9-amd64"},
			{"chroot", "ROOT", "update-initramfs", "-u", "-k", "6.1.0-10-amd64"},
		}, nil},
		{"off, dracut in an image root", Off, Dracut, two[:1], true, [][]string{
			{"chroot", "ROOT", "dracut", "--force", "--kver", "6.1.0-9-amd64"},
		}, nil},
		{"distro without a generator", Distro, NoGenerator, two, false, nil, ErrNoGenerator},
		{"off without a generator", Off, NoGenerator, two, false, nil, ErrNoGenerator},
		{"no kernels, no generator: nothing to do", Distro, NoGenerator, nil, false, nil, nil},
		{"no kernels, own", Own, InitramfsTools, nil, false, nil, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := mkroot(t, "boot/initrd.img-6.1.0-10-amd64", "boot/initramfs-6.1.0-9-amd64.img")
			s := System{Root: root, Chroot: tc.chroot, Generator: tc.gen, Kernels: tc.kernels, Self: self}
			got, err := s.Plan(tc.mode)
			if !errors.Is(err, tc.err) || (err != nil) != (tc.err != nil) {
				t.Fatalf("Plan = %v, want error %v", err, tc.err)
			}
			for _, c := range got {
				for i := range c {
					if c[i] == root {
						c[i] = "ROOT"
					}
				}
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("Plan =\n%q\nwant\n%q", got, tc.want)
			}
		})
	}
}

func TestPlanRefusesBadInput(t *testing.T) {
	s := System{Root: "/", Generator: InitramfsTools, Kernels: []string{"6.1.0"}}
	if _, err := s.Plan("sideways"); err == nil {
		t.Error("Plan(sideways) succeeded")
	}
	if _, err := s.Plan(Own); err == nil {
		t.Error("Plan(own) without Self succeeded")
	}
}

// fakeExec records the commands it is given and fails those whose
// joined form is in fail.
type fakeExec struct {
	ran  [][]string
	fail map[string]bool
}

func (f *fakeExec) Run(argv []string) error {
	f.ran = append(f.ran, append([]string(nil), argv...))
	if f.fail[strings.Join(argv, " ")] {
		return errors.New("exit status 1")
	}
	return nil
}

func TestRegenerate(t *testing.T) {
	root := mkroot(t, "boot/initrd.img-6.1.0-9-amd64")
	s := System{Root: root, Generator: InitramfsTools, Kernels: []string{"6.1.0-9-amd64", "6.1.0-10-amd64"}, Self: "/usr/bin/earlyinit"}
	ex := &fakeExec{fail: map[string]bool{"update-initramfs -u -k 6.1.0-9-amd64": true}}
	var log bytes.Buffer
	err := s.Regenerate(ex, Distro, &log)
	want := [][]string{{"update-initramfs", "-u", "-k", "6.1.0-9-amd64"}, {"update-initramfs", "-c", "-k", "6.1.0-10-amd64"}}
	if !reflect.DeepEqual(ex.ran, want) {
		t.Errorf("ran %q, want %q (a failure must not stop the other kernels)", ex.ran, want)
	}
	if err == nil || !strings.Contains(err.Error(), "update-initramfs -u -k 6.1.0-9-amd64: exit status 1") {
		t.Errorf("Regenerate error = %v, want one naming the failed command", err)
	}
	if strings.Contains(fmtErr(err), "6.1.0-10") {
		t.Errorf("error %v names a command that succeeded", err)
	}
	if !strings.Contains(log.String(), "running update-initramfs -c -k 6.1.0-10-amd64") {
		t.Errorf("log %q does not show the commands", log.String())
	}

	ex = &fakeExec{}
	log.Reset()
	if err := (System{Root: root, Generator: NoGenerator}).Regenerate(ex, Off, &log); err != nil || len(ex.ran) != 0 {
		t.Errorf("Regenerate without kernels = %v, ran %q; want nothing", err, ex.ran)
	}
	if !strings.Contains(log.String(), "no installed kernel") {
		t.Errorf("log %q does not say there is no kernel", log.String())
	}
}

func fmtErr(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

func TestInspect(t *testing.T) {
	root := mkroot(t, "usr/bin/dracut", "lib/modules/5.14.0-427.el9.x86_64/", "boot/vmlinuz-5.14.0-427.el9.x86_64")
	s, err := Inspect(root, "/x/earlyinit")
	if err != nil {
		t.Fatal(err)
	}
	want := System{Root: root, Chroot: true, Generator: Dracut, Kernels: []string{"5.14.0-427.el9.x86_64"}, Self: "/x/earlyinit"}
	if !reflect.DeepEqual(s, want) {
		t.Errorf("Inspect = %+v, want %+v", s, want)
	}
}

func TestSystemExec(t *testing.T) {
	var out, errw bytes.Buffer
	ex := SystemExec{Stdout: &out, Stderr: &errw}
	if err := ex.Run([]string{"sh", "-c", "echo out; echo err >&2"}); err != nil {
		t.Fatal(err)
	}
	if out.String() != "out\n" || errw.String() != "err\n" {
		t.Errorf("stdout %q, stderr %q", out.String(), errw.String())
	}
	err := ex.Run([]string{"sh", "-c", "exit 3"})
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 3 {
		t.Errorf("Run(exit 3) = %v, want exit status 3", err)
	}
	if err := ex.Run(nil); err == nil {
		t.Error("Run(nil) succeeded")
	}
}

// A maintainer script may run with no PATH: the generators are found in
// the sbin directories all the same.
func TestSystemExecWithoutPath(t *testing.T) {
	t.Setenv("PATH", "")
	var out bytes.Buffer
	if err := (SystemExec{Stdout: &out, Stderr: &out}).Run([]string{"sh", "-c", `echo "$PATH"`}); err != nil {
		t.Fatal(err)
	}
	if strings.TrimSpace(out.String()) != defaultPath {
		t.Errorf("command's PATH = %q, want %q", out.String(), defaultPath)
	}
}
