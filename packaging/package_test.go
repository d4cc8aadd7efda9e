//go:build package

// The packages `make package` leaves in build/: their files and modes (the
// contract's installed layout), metadata, conffiles, maintainer scripts,
// lintian, and that they hold this tree's files. Run by `make package-test`
// (go test -tags package ./packaging/), after make package.

package packaging

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"debug/buildinfo"
	"encoding/hex"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// installed is the packages' layout: every file, its mode, and whether it
// is a conffile (deb) / %config(noreplace) (rpm). debOnly files are in the
// .deb alone.
var installed = []struct {
	path    string
	mode    fs.FileMode
	conf    bool
	debOnly bool
}{
	{path: "/usr/bin/earlyinit", mode: 0o755},
	{path: "/usr/lib/earlyinit/earlyinit-initrd", mode: 0o755},
	{path: "/etc/earlyinit/initramfs.conf", mode: 0o644, conf: true},
	{path: "/etc/kernel/postinst.d/zz-earlyinit", mode: 0o755, conf: true},
	{path: "/etc/kernel/postrm.d/zz-earlyinit", mode: 0o755, conf: true},
	{path: "/usr/lib/kernel/install.d/60-earlyinit.install", mode: 0o755},
	{path: "/usr/share/initramfs-tools/hooks/earlyinit", mode: 0o755},
	{path: "/usr/share/initramfs-tools/scripts/init-bottom/earlyinit", mode: 0o755},
	{path: "/etc/initramfs/post-update.d/earlyinit", mode: 0o755, conf: true, debOnly: true},
	{path: "/usr/lib/dracut/modules.d/90earlyinit/module-setup.sh", mode: 0o755},
	{path: "/usr/lib/dracut/modules.d/90earlyinit/earlyinit-provision.sh", mode: 0o755},
	{path: "/usr/share/man/man8/earlyinit.8.gz", mode: 0o644},
	{path: "/usr/share/bash-completion/completions/earlyinit", mode: 0o644},
	{path: "/usr/share/doc/earlyinit/README.md", mode: 0o644},
	{path: "/usr/share/doc/earlyinit/copyright", mode: 0o644},
	{path: "/usr/share/doc/earlyinit/changelog.gz", mode: 0o644},
	{path: "/usr/share/lintian/overrides/earlyinit", mode: 0o644, debOnly: true},
}

// ownedDirs are the directories only earlyinit puts files in: the rpm owns
// them, so erasing it removes them.
var ownedDirs = []string{"/etc/earlyinit", "/usr/lib/earlyinit", "/usr/lib/dracut/modules.d/90earlyinit", "/usr/share/doc/earlyinit"}

// top is the repository's top directory (this package is packaging/).
const top = ".."

// need fails the test unless tool is on PATH.
func need(t *testing.T, tool, debPkg string) {
	t.Helper()
	if _, err := exec.LookPath(tool); err != nil {
		t.Fatalf("%s is not installed: `make deps` installs it (Debian package %s)", tool, debPkg)
	}
}

// built returns the one file build/ has matching pattern.
func built(t *testing.T, pattern string) string {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(top, "build", pattern))
	if err != nil {
		t.Fatal(err)
	}
	if len(m) != 1 {
		t.Fatalf("want one build/%s, found %q: run make package", pattern, m)
	}
	return m[0]
}

func output(t *testing.T, name string, args ...string) string {
	t.Helper()
	cmd := exec.Command(name, args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s%s", name, strings.Join(args, " "), err, out, stderr.Bytes())
	}
	return string(out)
}

// debFiles lists the .deb's files with dpkg -c: path -> "perms owner".
func debFiles(t *testing.T, deb string) map[string]string {
	t.Helper()
	files := map[string]string{}
	for _, l := range strings.Split(strings.TrimSpace(output(t, "dpkg", "-c", deb)), "\n") {
		f := strings.Fields(l)
		if len(f) < 6 {
			t.Fatalf("dpkg -c %s: unexpected line %q", deb, l)
		}
		files[strings.TrimSuffix(strings.TrimPrefix(f[5], "."), "/")] = f[0] + " " + f[1]
	}
	return files
}

// permString is fs.FileMode's ls form of a regular file's mode.
func permString(m fs.FileMode) string { return "-" + m.Perm().String()[1:] }

func TestDebContents(t *testing.T) {
	need(t, "dpkg", "dpkg")
	deb := built(t, "earlyinit_*_amd64.deb")
	files := debFiles(t, deb)
	want := map[string]bool{}
	for _, f := range installed {
		want[f.path] = true
		got, ok := files[f.path]
		if !ok {
			t.Errorf("%s: no %s", deb, f.path)
			continue
		}
		if w := permString(f.mode) + " root/root"; got != w {
			t.Errorf("%s: %s is %q, want %q", deb, f.path, got, w)
		}
	}
	for p, perms := range files {
		if !strings.HasPrefix(perms, "d") && !want[p] {
			t.Errorf("%s: unexpected file %s (%s)", deb, p, perms)
		}
	}
	if _, ok := files["/etc/earlyinit/setup"]; ok {
		t.Errorf("%s: ships /etc/earlyinit/setup, which earlyinit setup writes", deb)
	}
}

func TestDebControl(t *testing.T) {
	need(t, "dpkg-deb", "dpkg")
	deb := built(t, "earlyinit_*_amd64.deb")
	field := func(name string) string {
		return strings.TrimSpace(output(t, "dpkg-deb", "-f", deb, name))
	}
	version := field("Version")
	if got, want := filepath.Base(deb), "earlyinit_"+version+"_amd64.deb"; got != want {
		t.Errorf("file %s, but Version %q: want %s", got, version, want)
	}
	for name, want := range map[string]string{"Package": "earlyinit", "Architecture": "amd64", "Section": "admin", "Priority": "optional"} {
		if got := field(name); got != want {
			t.Errorf("%s: %s is %q, want %q", deb, name, got, want)
		}
	}
	for _, name := range []string{"Maintainer", "Description", "Homepage", "Installed-Size"} {
		if field(name) == "" {
			t.Errorf("%s: no %s", deb, name)
		}
	}
	info := output(t, "dpkg-deb", "-I", deb)
	for _, want := range []string{"conffiles", "postinst", "prerm", "postrm", "md5sums"} {
		if !strings.Contains(info, " "+want+" ") {
			t.Errorf("%s: dpkg-deb -I lists no %s:\n%s", deb, want, info)
		}
	}
	var conf []string
	for _, f := range installed {
		if f.conf {
			conf = append(conf, f.path)
		}
	}
	slices.Sort(conf)
	got := strings.Fields(output(t, "dpkg-deb", "-I", deb, "conffiles"))
	slices.Sort(got)
	if !slices.Equal(got, conf) {
		t.Errorf("%s: conffiles %q, want %q", deb, got, conf)
	}
	// The maintainer scripts are packaging/scripts', byte for byte.
	for ctrl, src := range map[string]string{"postinst": "postinstall.sh", "prerm": "preremove.sh", "postrm": "postremove.sh"} {
		want, err := os.ReadFile(filepath.Join("scripts", src))
		if err != nil {
			t.Fatal(err)
		}
		if got := output(t, "dpkg-deb", "-I", deb, ctrl); got != string(want) {
			t.Errorf("%s: %s is not packaging/scripts/%s:\n%s", deb, ctrl, src, got)
		}
	}
}

// debTree reads the .deb's data archive: path -> content.
func debTree(t *testing.T, deb string) map[string][]byte {
	t.Helper()
	out := output(t, "dpkg-deb", "--fsys-tarfile", deb)
	tr := tar.NewReader(strings.NewReader(out))
	files := map[string][]byte{}
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("%s: data archive: %v", deb, err)
		}
		if h.Typeflag == tar.TypeReg {
			b, err := io.ReadAll(tr)
			if err != nil {
				t.Fatal(err)
			}
			files[strings.TrimPrefix(h.Name, ".")] = b
		}
	}
	return files
}

// content is one entry of nfpm.yaml's contents.
type content struct {
	Src, Dst, Type, Packager string
}

func nfpmContents(t *testing.T) []content {
	t.Helper()
	b, err := os.ReadFile("nfpm.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var c struct{ Contents []content }
	if err := yaml.Unmarshal(b, &c); err != nil {
		t.Fatalf("packaging/nfpm.yaml: %v", err)
	}
	return c.Contents
}

func gunzip(t *testing.T, name string, b []byte) []byte {
	t.Helper()
	r, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	if r.Name != "" || !r.ModTime.IsZero() {
		t.Errorf("%s: gzip header has name %q, time %v: want gzip -n", name, r.Name, r.ModTime)
	}
	out, err := io.ReadAll(r)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return out
}

// TestDebFiles: the .deb holds this tree's files (not stale ones), its man
// page is what its binary's `man` verb prints, its changelog is for its
// version, and its copyright names every Go module linked into the binary.
func TestDebFiles(t *testing.T) {
	need(t, "dpkg-deb", "dpkg")
	deb := built(t, "earlyinit_*_amd64.deb")
	files := debTree(t, deb)
	for _, c := range nfpmContents(t) {
		if c.Src == "" {
			continue
		}
		want, err := os.ReadFile(filepath.Join(top, c.Src))
		if err != nil {
			t.Errorf("nfpm.yaml: %s: %v", c.Src, err)
			continue
		}
		if got, ok := files[c.Dst]; !ok || !bytes.Equal(got, want) {
			t.Errorf("%s: %s is not %s (in the package %v): run make package", deb, c.Dst, c.Src, ok)
		}
	}

	bin := filepath.Join(t.TempDir(), "earlyinit")
	if err := os.WriteFile(bin, files["/usr/bin/earlyinit"], 0o755); err != nil {
		t.Fatal(err)
	}
	version := strings.TrimSpace(output(t, "dpkg-deb", "-f", deb, "Version"))
	if got := strings.TrimSpace(output(t, bin, "version")); got != version {
		t.Errorf("%s: earlyinit version prints %q, the package is %q", deb, got, version)
	}
	if got, want := string(gunzip(t, "earlyinit.8.gz", files["/usr/share/man/man8/earlyinit.8.gz"])), output(t, bin, "man"); got != want {
		t.Errorf("%s: earlyinit.8.gz is not what earlyinit man prints", deb)
	}
	if got, want := string(files["/usr/share/bash-completion/completions/earlyinit"]), output(t, bin, "completion", "bash"); got != want {
		t.Errorf("%s: the bash completion is not what earlyinit completion bash prints", deb)
	}
	changelog := string(gunzip(t, "changelog.gz", files["/usr/share/doc/earlyinit/changelog.gz"]))
	if want := "earlyinit (" + version + ") unstable; urgency=medium\n"; !strings.HasPrefix(changelog, want) {
		t.Errorf("%s: changelog starts %q, want %q", deb, changelog, want)
	}

	info, err := buildinfo.ReadFile(bin)
	if err != nil {
		t.Fatalf("%s: usr/bin/earlyinit: %v", deb, err)
	}
	// The initramfs build: the same version, built with tags initrd and
	// nolate (and /usr/bin/earlyinit without them).
	initrd := filepath.Join(t.TempDir(), "earlyinit-initrd")
	if err := os.WriteFile(initrd, files["/usr/lib/earlyinit/earlyinit-initrd"], 0o755); err != nil {
		t.Fatal(err)
	}
	if got := strings.TrimSpace(output(t, initrd, "version")); got != version {
		t.Errorf("%s: earlyinit-initrd version prints %q, the package is %q", deb, got, version)
	}
	iinfo, err := buildinfo.ReadFile(initrd)
	if err != nil {
		t.Fatalf("%s: usr/lib/earlyinit/earlyinit-initrd: %v", deb, err)
	}
	if got, want := buildTags(iinfo), "initrd,nolate"; got != want {
		t.Errorf("%s: usr/lib/earlyinit/earlyinit-initrd built with tags %q, want %q", deb, got, want)
	}
	if got := buildTags(info); got != "" {
		t.Errorf("%s: usr/bin/earlyinit built with tags %q, want none", deb, got)
	}

	copyright := string(files["/usr/share/doc/earlyinit/copyright"])
	for _, m := range info.Deps {
		if !strings.Contains(copyright, " "+m.Path+"/*\n") {
			t.Errorf("packaging/copyright: no Files: paragraph for %s, linked into earlyinit: add it with its copyright and license", m.Path)
		}
	}
}

// buildTags is the -tags a Go binary was built with.
func buildTags(info *buildinfo.BuildInfo) string {
	for _, s := range info.Settings {
		if s.Key == "-tags" {
			return s.Value
		}
	}
	return ""
}

func TestLintian(t *testing.T) {
	need(t, "lintian", "lintian")
	deb := built(t, "earlyinit_*_amd64.deb")
	// Errors fail; warnings and infos are in the log (go test -v). The
	// .deb's statically linked binary is an error unless lintian reads
	// the overrides the package ships.
	out, err := exec.Command("lintian", "--fail-on", "error", "--display-info", deb).CombinedOutput()
	if err != nil {
		t.Fatalf("lintian --fail-on error %s: %v\n%s", deb, err, out)
	}
	t.Logf("lintian %s:\n%s", deb, out)
}

// rpmFile is one file of the .rpm, from rpm -qp --dump.
type rpmFile struct {
	mode   fs.FileMode // permission bits
	dir    bool
	conf   bool
	sha256 string
}

func rpmFiles(t *testing.T, rpm string) map[string]rpmFile {
	t.Helper()
	files := map[string]rpmFile{}
	// path size mtime digest mode owner group isconfig isdoc rdev symlink
	for _, l := range strings.Split(strings.TrimSpace(output(t, "rpm", "-qp", "--dump", rpm)), "\n") {
		f := strings.Fields(l)
		if len(f) < 11 {
			t.Fatalf("rpm -qp --dump %s: unexpected line %q", rpm, l)
		}
		mode, err := strconv.ParseUint(f[4], 8, 32)
		if err != nil {
			t.Fatalf("rpm -qp --dump %s: mode in %q: %v", rpm, l, err)
		}
		if f[5] != "root" || f[6] != "root" {
			t.Errorf("%s: %s is owned by %s:%s, want root:root", rpm, f[0], f[5], f[6])
		}
		files[f[0]] = rpmFile{mode: fs.FileMode(mode & 0o7777), dir: mode&0o170000 == 0o040000, conf: f[7] == "1", sha256: f[3]}
	}
	return files
}

func TestRPMContents(t *testing.T) {
	need(t, "rpm", "rpm")
	rpm := built(t, "earlyinit-*.x86_64.rpm")
	files := rpmFiles(t, rpm)
	var wantList []string
	for _, f := range installed {
		if f.debOnly {
			continue
		}
		wantList = append(wantList, f.path)
		got, ok := files[f.path]
		if !ok {
			t.Errorf("%s: no %s", rpm, f.path)
			continue
		}
		if got.mode != f.mode || got.dir || got.conf != f.conf {
			t.Errorf("%s: %s is mode %o dir %v config %v, want %o, false, %v", rpm, f.path, got.mode, got.dir, got.conf, f.mode, f.conf)
		}
	}
	for _, d := range ownedDirs {
		wantList = append(wantList, d)
		if got, ok := files[d]; !ok || !got.dir || got.mode != 0o755 {
			t.Errorf("%s: does not own directory %s mode 0755 (%+v)", rpm, d, got)
		}
	}
	slices.Sort(wantList)
	list := strings.Fields(output(t, "rpm", "-qpl", rpm))
	if !slices.Equal(list, wantList) {
		t.Errorf("%s: rpm -qpl lists\n%s\nwant\n%s", rpm, strings.Join(list, "\n"), strings.Join(wantList, "\n"))
	}
	// Same bytes as the tree's files.
	for _, c := range nfpmContents(t) {
		if c.Src == "" || c.Packager == "deb" {
			continue
		}
		b, err := os.ReadFile(filepath.Join(top, c.Src))
		if err != nil {
			t.Errorf("nfpm.yaml: %s: %v", c.Src, err)
			continue
		}
		sum := sha256.Sum256(b)
		if got := files[c.Dst].sha256; got != hex.EncodeToString(sum[:]) {
			t.Errorf("%s: %s is not %s: run make package", rpm, c.Dst, c.Src)
		}
	}

	var conf []string
	for _, f := range installed {
		if f.conf && !f.debOnly {
			conf = append(conf, f.path)
		}
	}
	slices.Sort(conf)
	if got := strings.Fields(output(t, "rpm", "-qp", "--configfiles", rpm)); !slices.Equal(got, conf) {
		t.Errorf("%s: rpm -qp --configfiles lists %q, want %q", rpm, got, conf)
	}
	// %config(noreplace): fflags c and n.
	for _, l := range strings.Split(strings.TrimSpace(output(t, "rpm", "-qp", "--qf", "[%{FILEFLAGS:fflags} %{FILENAMES}\n]", rpm)), "\n") {
		flags, path, _ := strings.Cut(l, " ")
		if slices.Contains(conf, path) && (!strings.Contains(flags, "c") || !strings.Contains(flags, "n")) {
			t.Errorf("%s: %s has flags %q, want %%config(noreplace) (c, n)", rpm, path, flags)
		}
	}
}

func TestRPMHeader(t *testing.T) {
	need(t, "rpm", "rpm")
	rpm := built(t, "earlyinit-*.x86_64.rpm")
	got := output(t, "rpm", "-qp", "--qf", "%{NAME}|%{VERSION}|%{RELEASE}|%{ARCH}|%{LICENSE}|%{URL}", rpm)
	f := strings.Split(got, "|")
	if len(f) != 6 || f[0] != "earlyinit" || f[2] != "1" || f[3] != "x86_64" || f[4] == "" || f[5] == "" {
		t.Fatalf("%s: header %q, want earlyinit|VERSION|1|x86_64|LICENSE|URL", rpm, got)
	}
	if want := fmt.Sprintf("earlyinit-%s-%s.%s.rpm", f[1], f[2], f[3]); filepath.Base(rpm) != want {
		t.Errorf("file %s, but the header says %s", filepath.Base(rpm), want)
	}
	// The same version as the .deb beside it.
	if _, err := exec.LookPath("dpkg-deb"); err == nil {
		deb := built(t, "earlyinit_*_amd64.deb")
		if v := strings.TrimSpace(output(t, "dpkg-deb", "-f", deb, "Version")); v != f[1] {
			t.Errorf("rpm version %q, deb version %q", f[1], v)
		}
	}
}

// TestRPMScripts: rpm -qp --scripts shows %post, %preun and %postun, each
// packaging/scripts' file with its setup call.
func TestRPMScripts(t *testing.T) {
	need(t, "rpm", "rpm")
	rpm := built(t, "earlyinit-*.x86_64.rpm")
	out := output(t, "rpm", "-qp", "--scripts", rpm)
	sections := map[string]string{}
	var cur string
	for _, l := range strings.SplitAfter(out, "\n") {
		if name, _, ok := strings.Cut(l, " scriptlet (using /bin/sh):"); ok && !strings.HasPrefix(l, "#") && !strings.HasPrefix(l, " ") {
			cur = name
			continue
		}
		sections[cur] += l
	}
	for _, tt := range []struct{ section, src, call string }{
		{"postinstall", "postinstall.sh", "earlyinit setup --install"},
		{"preuninstall", "preremove.sh", "earlyinit setup off"},
		{"postuninstall", "postremove.sh", "rm -f /etc/earlyinit/setup"},
	} {
		want, err := os.ReadFile(filepath.Join("scripts", tt.src))
		if err != nil {
			t.Fatal(err)
		}
		got := sections[tt.section]
		if !strings.Contains(got, tt.call) || strings.TrimSpace(got) != strings.TrimSpace(string(want)) {
			t.Errorf("%s: %s scriptlet is not packaging/scripts/%s with %q:\n%s", rpm, tt.section, tt.src, tt.call, got)
		}
	}
	delete(sections, "") // anything before the first scriptlet
	if len(sections) != 3 {
		t.Errorf("%s: scriptlets %v, want postinstall, preuninstall and postuninstall only", rpm, slices.Sorted(maps.Keys(sections)))
	}
}
