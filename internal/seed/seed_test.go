package seed

import (
	"bytes"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/earlyinit/earlyinit/internal/blockdev"
)

var when = time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)

const symlink = fs.ModeSymlink | 0o777

// need fails t when a tool the test reads images with is missing.
func need(t *testing.T, tools ...string) {
	t.Helper()
	for _, tool := range tools {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("%s is not installed: `make deps` installs it (scripts/deps.sh)", tool)
		}
	}
}

func run(t *testing.T, name string, args ...string) string {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Env = append(os.Environ(), "MTOOLS_SKIP_CHECK=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
	return string(out)
}

// manyFiles is a directory whose records take several ISO sectors and
// several FAT clusters, each name needing a long name and a ~N short one.
func manyFiles(dir string, n int) []File {
	var fs []File
	for i := range n {
		fs = append(fs, File{Name: fmt.Sprintf("%s/a long file name number %03d.yaml", dir, i), Data: []byte(fmt.Sprint(i))})
	}
	return fs
}

func seedTrees() map[string][]File {
	big := bytes.Repeat([]byte("0123456789abcdef"), 40000) // 640000 bytes, many sectors and clusters
	return map[string][]File{
		"nocloud": {
			{Name: "user-data", Data: []byte("#cloud-config\nhostname: h\n")},
			{Name: "meta-data", Data: []byte("instance-id: iid-1\n")},
			{Name: "network-config", Data: []byte("version: 2\n")},
			{Name: "vendor-data", Data: nil},
		},
		"config-2": {
			{Name: "openstack/latest/meta_data.json", Data: []byte(`{"uuid": "u"}`)},
			{Name: "openstack/latest/user_data", Data: []byte("#!/bin/sh\n")},
			{Name: "openstack/2012-08-10/meta_data.json", Data: []byte(`{"uuid": "old"}`)},
			{Name: "openstack/2013-04-04/meta_data.json", Data: []byte(`{"uuid": "older"}`)},
			{Name: "openstack/content/0000", Data: big},
			{Name: "ec2/latest/meta-data.json", Data: []byte(`{}`)},
			{Name: "openstack", Mode: fs.ModeDir | 0o700}, // listed after its children
		},
		"many": append(manyFiles("d", 120), File{Name: "README", Data: []byte("UPPER CASE 8.3 NAME\n")}, File{Name: "x.tar.gz", Data: []byte("x")}),
	}
}

// readBack reads the tree under dir as Files, for comparison: contents,
// link targets, and whether a file is executable.
func readBack(t *testing.T, dir string) map[string]string {
	t.Helper()
	files, err := ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	return describe(files)
}

func describe(files []File) map[string]string {
	m := map[string]string{}
	for _, f := range files {
		switch {
		case f.Mode.IsDir():
			m[f.Name] = "dir"
		case f.Mode&fs.ModeSymlink != 0:
			m[f.Name] = "-> " + f.Link
		default:
			m[f.Name] = fmt.Sprintf("x=%v %q", f.Mode&0o111 != 0, f.Data)
		}
	}
	return m
}

// want is what files should read back as: parents included, and (noExec)
// without the executable bits FAT cannot keep.
func want(files []File, noExec bool) map[string]string {
	m := describe(files)
	for name := range m {
		for d := filepath.Dir(name); d != "."; d = filepath.Dir(d) {
			m[d] = "dir"
		}
	}
	if noExec {
		for _, f := range files {
			if f.Mode.Type() == 0 {
				m[f.Name] = fmt.Sprintf("x=false %q", f.Data)
			}
		}
	}
	return m
}

func diff(t *testing.T, what string, got, want map[string]string) {
	t.Helper()
	for k, w := range want {
		if g, ok := got[k]; !ok {
			t.Errorf("%s: %s missing", what, k)
		} else if g != w {
			t.Errorf("%s: %s = %.80s, want %.80s", what, k, g, w)
		}
	}
	for k := range got {
		if _, ok := want[k]; !ok {
			t.Errorf("%s: unexpected %s", what, k)
		}
	}
}

// writable makes an extracted tree removable again (osirrox keeps the
// image's read-only modes).
func writable(t *testing.T, dir string) {
	t.Cleanup(func() {
		filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			if err == nil && d.IsDir() {
				os.Chmod(p, 0o755)
			}
			return nil
		})
	})
}

func probe(t *testing.T, img string) blockdev.FS {
	t.Helper()
	f, err := os.Open(img)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		t.Fatal(err)
	}
	got, err := blockdev.Probe(f, fi.Size())
	if err != nil {
		t.Fatalf("blockdev.Probe %s: %v", img, err)
	}
	return got
}

func blkid(t *testing.T, img string) string {
	t.Helper()
	return run(t, "blkid", "-p", "-o", "export", img)
}

func writeISO(t *testing.T, label string, files []File) string {
	t.Helper()
	img := filepath.Join(t.TempDir(), "seed.iso")
	f, err := os.Create(img)
	if err != nil {
		t.Fatal(err)
	}
	if err := ISO(f, label, when, files); err != nil {
		t.Fatalf("ISO: %v", err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	return img
}

func TestISO(t *testing.T) {
	need(t, "xorriso", "osirrox", "blkid")
	trees := seedTrees()
	trees["root"] = []File{
		{Name: "bin/busybox", Data: []byte("\x7fELF"), Mode: 0o755},
		{Name: "bin/sh", Mode: symlink, Link: "busybox"},
		{Name: "bin/abs", Mode: symlink, Link: "/usr/../bin/./busybox"},
		{Name: "etc/hostname", Data: []byte("h\n"), Mode: 0o600},
		{Name: "tmp", Mode: fs.ModeDir | 0o1777},
		{Name: "sbin/init", Data: []byte("#!/bin/sh\n"), Mode: 0o700},
	}
	for name, files := range trees {
		t.Run(name, func(t *testing.T) {
			label := map[string]string{"nocloud": "cidata", "config-2": "config-2"}[name]
			if label == "" {
				label = "A LONGER LABEL THAN JOLIET KEEPS"
			}
			img := writeISO(t, label, files)

			// Rock Ridge, as xorriso reads it.
			dir := filepath.Join(t.TempDir(), "x")
			writable(t, dir)
			run(t, "osirrox", "-indev", img, "-extract", "/", dir)
			diff(t, "Rock Ridge", readBack(t, dir), want(files, false))
			ls := run(t, "xorriso", "-indev", img, "-find", "/", "-exec", "lsdl")
			for _, line := range strings.Split(ls, "\n") {
				if strings.HasPrefix(line, "-") && (!strings.HasPrefix(line, "-r-") || !strings.Contains(line, " 0        0 ")) {
					t.Errorf("Rock Ridge file not read-only root's (as mkisofs -r): %s", line)
				}
			}
			if name == "root" && !strings.Contains(ls, "dr-xr-xr-x    1 0        0               0 Mar  4  2026 '/tmp'") {
				t.Errorf("Rock Ridge: /tmp not a 0555 directory:\n%s", ls)
			}

			// Joliet alone (symlinks are not in it; executable bits
			// neither).
			jdir := filepath.Join(t.TempDir(), "j")
			writable(t, jdir)
			run(t, "osirrox", "-read_fs", "norock", "-indev", img, "-extract", "/", jdir)
			wj := want(files, true)
			for _, f := range files {
				if f.Mode&fs.ModeSymlink != 0 {
					delete(wj, f.Name)
				}
			}
			gj := readBack(t, jdir)
			for k, v := range gj { // xorriso gives Joliet files r-x
				gj[k] = strings.Replace(v, "x=true", "x=false", 1)
			}
			diff(t, "Joliet", gj, wj)

			// Labels and type, as blkid and earlyinit's probe see them.
			b := blkid(t, img)
			if !strings.Contains(b, "TYPE=iso9660\n") || !strings.Contains(b, "LABEL="+strings.ReplaceAll(label, " ", `\ `)+"\n") {
				t.Errorf("blkid: want TYPE=iso9660 LABEL=%s:\n%s", label, b)
			}
			if !strings.Contains(b, "UUID=2026-03-04-05-06-07-00\n") {
				t.Errorf("blkid: want the date as UUID:\n%s", b)
			}
			if got := probe(t, img); got != (blockdev.FS{Type: "iso9660", Label: label, UUID: "2026-03-04-05-06-07-00"}) {
				t.Errorf("blockdev.Probe = %+v", got)
			}
			// xorriso's own check of every block.
			if out := run(t, "xorriso", "-indev", img, "-check_media", "--"); !strings.Contains(out, "+ good") {
				t.Errorf("xorriso -check_media:\n%s", out)
			}
		})
	}
}

// TestISOReproducible: the same input and date give the same image.
func TestISOReproducible(t *testing.T) {
	files := seedTrees()["config-2"]
	a, err := os.ReadFile(writeISO(t, "config-2", files))
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(writeISO(t, "config-2", files))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a, b) {
		t.Error("two images of the same tree differ")
	}
}

func writeFAT(t *testing.T, size int64, label string, files []File) string {
	t.Helper()
	img := filepath.Join(t.TempDir(), "seed.img")
	f, err := os.Create(img)
	if err != nil {
		t.Fatal(err)
	}
	// Garbage where FAT writes nothing: it must not matter.
	if _, err := f.Write(bytes.Repeat([]byte{0xA5}, 1<<20)); err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(size); err != nil {
		t.Fatal(err)
	}
	if err := FAT(f, size, label, when, files); err != nil {
		t.Fatalf("FAT: %v", err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	return img
}

func TestFAT(t *testing.T) {
	need(t, "mcopy", "mdir", "fsck.vfat", "blkid")
	for name, files := range seedTrees() {
		auto, err := FATSize(files)
		if err != nil {
			t.Fatal(err)
		}
		for _, size := range []int64{auto, 9 << 20, 64 << 20, 300 << 20} {
			t.Run(fmt.Sprintf("%s/%d", name, size), func(t *testing.T) {
				img := writeFAT(t, size, "CIDATA", files)
				run(t, "fsck.vfat", "-n", "-V", img) // exit 0: no errors
				dir := t.TempDir()
				run(t, "mcopy", "-s", "-n", "-i", img, "::/", dir)
				diff(t, "mtools", readBack(t, dir), want(files, true))
				b := blkid(t, img)
				if !strings.Contains(b, "TYPE=vfat\n") || !strings.Contains(b, "LABEL=CIDATA\n") || !strings.Contains(b, "SEC_TYPE=msdos\n") {
					t.Errorf("blkid: want TYPE=vfat LABEL=CIDATA (FAT16):\n%s", b)
				}
				if got := probe(t, img); got.Type != "vfat" || got.Label != "CIDATA" {
					t.Errorf("blockdev.Probe = %+v", got)
				}
			})
		}
	}
}

// TestFATShortNames: names that are upper case 8.3 stay alone; others get
// a long name and a unique ~N short one (as mdir lists them).
func TestFATShortNames(t *testing.T) {
	need(t, "mdir")
	files := []File{
		{Name: "README", Data: []byte("a")},
		{Name: "readme.txt", Data: []byte("b")},
		{Name: "user-data", Data: []byte("c")},
		{Name: "user-data2", Data: []byte("d")},
		{Name: "meta_data.json", Data: []byte("e")},
	}
	img := writeFAT(t, fatMinSize, "CONFIG-2", files)
	out := run(t, "mdir", "-i", img, "::/")
	for _, line := range []string{
		"README               1 2026-03-04   5:06 \n",
		"README   TXT         1 2026-03-04   5:06  readme.txt\n",
		"USER-D~1             1 2026-03-04   5:06  user-data\n",
		"USER-D~2             1 2026-03-04   5:06  user-data2\n",
		"META_D~1 JSO         1 2026-03-04   5:06  meta_data.json\n",
	} {
		if !strings.Contains(out, line) {
			t.Errorf("mdir: want %q in:\n%s", line, out)
		}
	}
}

func TestFATSize(t *testing.T) {
	for _, tc := range []struct {
		name  string
		files []File
		want  int64
	}{
		{"empty", nil, fatMinSize},
		{"small", seedTrees()["nocloud"], fatMinSize},
		{"5 MiB", []File{{Name: "f", Data: make([]byte, 5<<20)}}, 6 << 20},
		{"40 MiB", []File{{Name: "f", Data: make([]byte, 40<<20)}}, 41 << 20},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := FATSize(tc.files)
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.want {
				t.Errorf("FATSize = %d, want %d", got, tc.want)
			}
			// It fits, and a MiB less does not (unless at the minimum).
			if err := FAT(discard{}, got, "X", when, tc.files); err != nil {
				t.Errorf("FAT at FATSize: %v", err)
			}
			if got > fatMinSize {
				if err := FAT(discard{}, got-1<<20, "X", when, tc.files); err == nil {
					t.Errorf("FAT at FATSize - 1 MiB fits: FATSize is not the smallest")
				}
			}
		})
	}
}

type discard struct{}

func (discard) WriteAt(b []byte, _ int64) (int, error) { return len(b), nil }

func TestErrors(t *testing.T) {
	many := make([]File, 0, 600)
	for i := range 600 {
		many = append(many, File{Name: fmt.Sprintf("F%d", i)})
	}
	for _, tc := range []struct {
		name    string
		iso     bool // else FAT
		label   string
		size    int64
		files   []File
		wantErr string
	}{
		{"iso empty label", true, "", 0, nil, `ISO volume label "": want 1 to 32 characters`},
		{"iso long label", true, strings.Repeat("x", 33), 0, nil, "want 1 to 32 characters"},
		{"iso label control", true, "a\nb", 0, nil, "only printable ASCII"},
		{"fat lower label", false, "cidata", 8 << 20, nil, `FAT volume label "cidata": only upper case`},
		{"fat long label", false, "TWELVE CHARS", 8 << 20, nil, "want 1 to 11 characters"},
		{"absolute path", true, "x", 0, []File{{Name: "/etc/passwd"}}, `"/etc/passwd": not a valid path`},
		{"dotdot", true, "x", 0, []File{{Name: "a/../b"}}, "not a valid path"},
		{"twice", true, "x", 0, []File{{Name: "a"}, {Name: "a"}}, "a: listed twice"},
		{"file as dir", true, "x", 0, []File{{Name: "a"}, {Name: "a/b"}}, "a: not a directory"},
		{"device", true, "x", 0, []File{{Name: "dev/null", Mode: fs.ModeDevice}}, "dev/null: file type"},
		{"empty link", true, "x", 0, []File{{Name: "l", Mode: symlink}}, "l: symlink with an empty"},
		{"joliet long", true, "x", 0, []File{{Name: strings.Repeat("n", 65)}}, "Joliet's limit"},
		{"record long", true, "x", 0, []File{{Name: "l", Mode: symlink, Link: strings.Repeat("t/", 100)}}, "too long for one ISO 9660 directory record"},
		{"fat symlink", false, "X", 8 << 20, []File{{Name: "bin/sh", Mode: symlink, Link: "busybox"}}, "bin/sh: symlinks cannot go into a FAT image"},
		{"fat too small", false, "X", 1 << 20, nil, "FAT16 image size 1048576: want"},
		{"fat too big", false, "X", 3 << 30, nil, "FAT16 image size"},
		{"fat full", false, "X", 4 << 20, []File{{Name: "f", Data: make([]byte, 5<<20)}}, "f: does not fit"},
		{"fat root full", false, "X", 4 << 20, many, "FAT16's has room for 512"},
		{"fat bad char", false, "X", 4 << 20, []File{{Name: "a:b"}}, `a:b: character ':'`},
		{"fat trailing dot", false, "X", 4 << 20, []File{{Name: "a."}}, "cannot end in a dot"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var err error
			if tc.iso {
				err = ISO(&bytes.Buffer{}, tc.label, when, tc.files)
			} else {
				err = FAT(discard{}, tc.size, tc.label, when, tc.files)
			}
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("err = %v, want it to contain %q", err, tc.wantErr)
			}
		})
	}
}

func TestReadDir(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "a/b"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "a/b/f"), []byte("data"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/etc/shadow", filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	diff(t, "ReadDir", readBack(t, dir), map[string]string{
		"a": "dir", "a/b": "dir", "a/b/f": `x=true "data"`, "link": "-> /etc/shadow",
	})
	if err := exec.Command("mkfifo", filepath.Join(dir, "fifo")).Run(); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadDir(dir); err == nil || !strings.Contains(err.Error(), "fifo: file type") {
		t.Errorf("ReadDir with a FIFO: err = %v", err)
	}
}

// randomTree is a tree of n entries in nested directories (deeper than ISO
// 9660's 8 levels), with names that collide in 8.3, hold dots, spaces and
// non-ASCII, and (for ISO) symlinks.
func randomTree(r *rand.Rand, n int, links bool) []File {
	names := []string{"aaaaaaaaa1.txt", "aaaaaaaaa2.txt", "AAAAAAAAA1.TXT", "a.b.c.d", "Ünïcödé", "with space", "x", "1234567890123456789012345678901234567890", "latest", "meta_data.json", "_", "-"}
	var files []File
	dirs := []string{""}
	seen := map[string]bool{}
	for len(files) < n {
		parent := dirs[r.IntN(len(dirs))]
		if r.IntN(3) != 0 { // mostly the newest directory: deep trees
			parent = dirs[len(dirs)-1]
		}
		name := names[r.IntN(len(names))]
		if r.IntN(3) == 0 {
			name = fmt.Sprintf("%s%d", name, r.IntN(100))
		}
		p := strings.TrimPrefix(parent+"/"+name, "/")
		if seen[p] || seen[strings.ToLower(p)] {
			continue
		}
		seen[p], seen[strings.ToLower(p)] = true, true
		switch k := r.IntN(10); {
		case k < 3:
			dirs = append(dirs, p)
			files = append(files, File{Name: p, Mode: fs.ModeDir | 0o755})
		case k < 4 && links:
			files = append(files, File{Name: p, Mode: symlink, Link: "../" + name})
		default:
			data := make([]byte, r.IntN(5000))
			for i := range data {
				data[i] = byte(r.IntN(256))
			}
			files = append(files, File{Name: p, Data: data, Mode: fs.FileMode(0o644 | r.IntN(2)*0o111)})
		}
	}
	return files
}

// TestRandomTrees writes trees of every shape and reads them back.
func TestRandomTrees(t *testing.T) {
	need(t, "osirrox", "mcopy", "fsck.vfat")
	for i := range 4 {
		r := rand.New(rand.NewPCG(uint64(i), 16))
		t.Run(fmt.Sprintf("iso%d", i), func(t *testing.T) {
			files := randomTree(r, 150, true)
			depth := 0
			for _, f := range files {
				depth = max(depth, strings.Count(f.Name, "/")+1)
			}
			if depth <= 8 {
				t.Fatalf("tree only %d deep", depth)
			}
			img := writeISO(t, "random", files)
			dir := filepath.Join(t.TempDir(), "x")
			writable(t, dir)
			run(t, "osirrox", "-indev", img, "-extract", "/", dir)
			diff(t, "Rock Ridge", readBack(t, dir), want(files, false))
		})
		t.Run(fmt.Sprintf("fat%d", i), func(t *testing.T) {
			files := randomTree(r, 150, false)
			size, err := FATSize(files)
			if err != nil {
				t.Fatal(err)
			}
			img := writeFAT(t, size, "RANDOM", files)
			run(t, "fsck.vfat", "-n", img)
			dir := t.TempDir()
			run(t, "mcopy", "-s", "-n", "-i", img, "::/", dir)
			diff(t, "mtools", readBack(t, dir), want(files, true))
		})
	}
}
