package initramfs

import (
	"bytes"
	"compress/gzip"
	"debug/elf"
	"encoding/binary"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/u-root/mkuimage/cpio"
)

// fakeELF returns a minimal x86-64 ELF executable, dynamically linked
// against interp when interp is not "".
func fakeELF(t *testing.T, interp string) []byte {
	t.Helper()
	var b bytes.Buffer
	h := elf.Header64{
		Ident:     [16]byte{0x7f, 'E', 'L', 'F', byte(elf.ELFCLASS64), byte(elf.ELFDATA2LSB), byte(elf.EV_CURRENT)},
		Type:      uint16(elf.ET_EXEC),
		Machine:   uint16(elf.EM_X86_64),
		Version:   uint32(elf.EV_CURRENT),
		Phoff:     64,
		Ehsize:    64,
		Phentsize: 56,
		Shentsize: 64,
	}
	var progs []elf.Prog64
	if interp != "" {
		h.Phnum = 1
		progs = append(progs, elf.Prog64{Type: uint32(elf.PT_INTERP), Off: 64 + 56, Filesz: uint64(len(interp) + 1), Memsz: uint64(len(interp) + 1), Align: 1})
	}
	binary.Write(&b, binary.LittleEndian, h)
	binary.Write(&b, binary.LittleEndian, progs)
	if interp != "" {
		b.WriteString(interp + "\x00")
	}
	b.WriteString("earlyinit's code")
	return b.Bytes()
}

// fakeRoot returns a root with lib/modules/<kver> (fakeModules' tree) and
// a static earlyinit at bin/earlyinit.
func fakeRoot(t *testing.T, kver string) (root, bin string) {
	t.Helper()
	root = t.TempDir()
	dir := filepath.Join(root, "lib/modules", kver)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	fakeModulesIn(t, dir)
	bin = filepath.Join(root, "earlyinit")
	if err := os.WriteFile(bin, fakeELF(t, ""), 0o700); err != nil {
		t.Fatal(err)
	}
	return root, bin
}

func writeFile(t *testing.T, name, content string) string {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(name, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return name
}

type entry struct {
	info cpio.Info
	data string
}

// readArchive reads a (gzip-compressed or plain) newc archive back, in
// order.
func readArchive(t *testing.T, file string) ([]string, map[string]entry) {
	t.Helper()
	raw, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.HasPrefix(raw, []byte{0x1f, 0x8b}) {
		zr, err := gzip.NewReader(bytes.NewReader(raw))
		if err != nil {
			t.Fatal(err)
		}
		if raw, err = io.ReadAll(zr); err != nil {
			t.Fatal(err)
		}
	}
	recs, err := cpio.ReadAllRecords(cpio.Newc.Reader(bytes.NewReader(raw)))
	if err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	var names []string
	m := map[string]entry{}
	for _, r := range recs {
		b, err := io.ReadAll(io.NewSectionReader(r, 0, int64(r.FileSize)))
		if err != nil {
			t.Fatal(err)
		}
		if _, dup := m[r.Name]; dup {
			t.Errorf("%s twice in the archive", r.Name)
		}
		names = append(names, r.Name)
		m[r.Name] = entry{r.Info, string(b)}
	}
	return names, m
}

func TestBuildBinary(t *testing.T) {
	const kver = "6.1.0-test"
	root, bin := fakeRoot(t, kver)
	conf := writeFile(t, filepath.Join(root, "modules.conf"), "ext4\ndrivers/virtio/*\n")
	out := filepath.Join(root, "boot", "initrd.img-"+kver)
	writeFile(t, out, "the old image")
	o := Options{KVer: kver, ModulesRoot: root, Config: conf, Binary: bin, Output: out, Compression: "gzip"}
	res, err := Build(o)
	if err != nil {
		t.Fatal(err)
	}
	if res.Modules != 6 || res.Compression != "gzip" {
		t.Errorf("result %+v, want 6 modules, gzip", res)
	}
	fi, err := os.Stat(out)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o644 || fi.Size() != res.Size {
		t.Errorf("%s: mode %v size %d, want 0644 and %d", out, fi.Mode(), fi.Size(), res.Size)
	}
	if left, _ := filepath.Glob(filepath.Join(root, "boot", ".*")); len(left) > 0 {
		t.Errorf("temporary files left: %q", left)
	}
	names, files := readArchive(t, out)
	if !sort.StringsAreSorted(names) {
		t.Errorf("archive not in name order (parents first): %q", names)
	}
	binData, _ := os.ReadFile(bin)
	mdir := "lib/modules/" + kver + "/"
	for _, tc := range []struct {
		name   string
		mode   uint64
		data   string // checked when not ""
		rmajor uint64
		rminor uint64
	}{
		{"init", cpio.S_IFLNK | 0o777, "bin/earlyinit", 0, 0},
		{"bin", cpio.S_IFDIR | 0o755, "", 0, 0},
		{"bin/earlyinit", cpio.S_IFREG | 0o755, string(binData), 0, 0},
		{"dev/console", cpio.S_IFCHR | 0o600, "", 5, 1},
		{"dev/null", cpio.S_IFCHR | 0o666, "", 1, 3},
		{"dev/kmsg", cpio.S_IFCHR | 0o644, "", 1, 11},
		{"tmp", cpio.S_IFDIR | 0o1777, "", 0, 0},
		{"newroot", cpio.S_IFDIR | 0o755, "", 0, 0},
		{"proc", cpio.S_IFDIR | 0o755, "", 0, 0},
		{"sys", cpio.S_IFDIR | 0o755, "", 0, 0},
		{"run", cpio.S_IFDIR | 0o755, "", 0, 0},
		{"lib/modules", cpio.S_IFDIR | 0o755, "", 0, 0},
		{mdir + "kernel/fs/ext4", cpio.S_IFDIR | 0o755, "", 0, 0},
		{mdir + "kernel/fs/ext4/ext4.ko", cpio.S_IFREG | 0o644, "kernel/fs/ext4/ext4.ko", 0, 0},
		{mdir + "kernel/fs/jbd2/jbd2.ko", cpio.S_IFREG | 0o644, "kernel/fs/jbd2/jbd2.ko", 0, 0},
		{mdir + "kernel/crypto/crc32c_generic.ko", cpio.S_IFREG | 0o644, "", 0, 0},
		{mdir + "kernel/drivers/virtio/virtio_pci.ko", cpio.S_IFREG | 0o644, "", 0, 0},
		{mdir + "modules.dep", cpio.S_IFREG | 0o644, "", 0, 0},
		{mdir + "modules.alias", cpio.S_IFREG | 0o644, "", 0, 0},
		{mdir + "modules.softdep", cpio.S_IFREG | 0o644, "softdep ext4 pre: crypto-crc32c\n", 0, 0},
		{mdir + "modules.builtin", cpio.S_IFREG | 0o644, "kernel/drivers/block/loop.ko\n", 0, 0},
	} {
		e, ok := files[tc.name]
		if !ok {
			t.Errorf("%s: not in the archive", tc.name)
			continue
		}
		if e.info.Mode != tc.mode || e.info.Rmajor != tc.rmajor || e.info.Rminor != tc.rminor {
			t.Errorf("%s: mode %#o dev %d,%d; want %#o %d,%d", tc.name, e.info.Mode, e.info.Rmajor, e.info.Rminor, tc.mode, tc.rmajor, tc.rminor)
		}
		if tc.data != "" && e.data != tc.data {
			t.Errorf("%s: holds %q, want %q", tc.name, e.data, tc.data)
		}
		if e.info.MTime != 0 || e.info.UID != 0 || e.info.GID != 0 || e.info.Ino != 0 {
			t.Errorf("%s: not reproducible: %v", tc.name, e.info)
		}
	}
	if dep := files[mdir+"modules.dep"].data; !strings.Contains(dep, "kernel/fs/ext4/ext4.ko: kernel/fs/jbd2/jbd2.ko kernel/lib/crc16.ko\n") {
		t.Errorf("modules.dep:\n%s", dep)
	}
	for _, n := range names {
		if strings.Contains(n, "snd") || n == "." {
			t.Errorf("%s in the archive", n)
		}
	}

	// The same inputs give the same bytes.
	first, _ := os.ReadFile(out)
	if _, err := Build(o); err != nil {
		t.Fatal(err)
	}
	if again, _ := os.ReadFile(out); !bytes.Equal(first, again) {
		t.Errorf("two builds differ")
	}
}

func TestBuildModuleSets(t *testing.T) {
	const kver = "6.1.0-test"
	root, bin := fakeRoot(t, kver)
	for _, tc := range []struct {
		name string
		o    Options
		want []string // module names in the archive
	}{
		// modules.conf built in: ext4 (with its deps and softdep),
		// virtio_pci (and virtio, its dependency), nls_iso8859-1,
		// crc32c_generic; not snd.
		{"embedded set", Options{}, []string{"crc16", "crc32c_generic", "ext4", "jbd2", "nls_iso8859_1", "virtio", "virtio_pci"}},
		{"add", Options{ModulesAdd: []string{"snd"}}, []string{"crc16", "crc32c_generic", "ext4", "jbd2", "nls_iso8859_1", "snd", "virtio", "virtio_pci"}},
		// A dropped module a kept one needs stays (jbd2 for ext4); one
		// only a dropped module needed goes with it (virtio, for
		// virtio_pci).
		{"omit", Options{ModulesOmit: []string{"nls_iso8859_1", "drivers/virtio/virtio_pci.ko", "jbd2"}}, []string{"crc16", "crc32c_generic", "ext4", "jbd2"}},
		{"host-only, add survives", Options{HostOnly: &HostOnly{Loaded: []string{"virtio_pci"}, FSTypes: []string{"xfs"}}, ModulesAdd: []string{"ext4"}},
			[]string{"crc16", "crc32c_generic", "ext4", "jbd2", "nls_iso8859_1", "virtio", "virtio_pci"}},
		{"host-only", Options{HostOnly: &HostOnly{Loaded: []string{"virtio_pci"}}}, []string{"nls_iso8859_1", "virtio", "virtio_pci"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := tc.o
			o.KVer, o.ModulesRoot, o.Binary, o.Compression = kver, root, bin, "none"
			o.Output = filepath.Join(t.TempDir(), "img")
			res, err := Build(o)
			if err != nil {
				t.Fatal(err)
			}
			names, _ := readArchive(t, o.Output)
			var got []string
			for _, n := range names {
				if strings.HasSuffix(n, ".ko") {
					got = append(got, modName(n))
				}
			}
			sort.Strings(got)
			if !reflect.DeepEqual(got, tc.want) || res.Modules != len(tc.want) {
				t.Errorf("modules %q (%d), want %q", got, res.Modules, tc.want)
			}
		})
	}
}

func TestBuildErrors(t *testing.T) {
	const kver = "6.1.0-test"
	root, bin := fakeRoot(t, kver)
	dynamic := writeFile(t, filepath.Join(root, "dynamic"), string(fakeELF(t, "/lib64/ld-linux-x86-64.so.2")))
	script := writeFile(t, filepath.Join(root, "script"), "#!/bin/sh\n")
	noDep := filepath.Join(root, "lib/modules/6.2.0-nodep")
	if err := os.MkdirAll(noDep, 0o755); err != nil {
		t.Fatal(err)
	}
	out := writeFile(t, filepath.Join(root, "boot", "initrd.img-"+kver), "the old image")
	for _, tc := range []struct {
		name    string
		o       Options
		wantErr string
	}{
		{"no modules", Options{KVer: "9.9.9-missing"}, "kernel 9.9.9-missing: no modules directory " + filepath.Join(root, "lib/modules/9.9.9-missing")},
		{"no modules.dep", Options{KVer: "6.2.0-nodep"}, "run depmod 6.2.0-nodep"},
		{"bad kver", Options{KVer: "../x"}, `kernel release "../x"`},
		{"dynamic", Options{Binary: dynamic}, "dynamically linked (interpreter /lib64/ld-linux-x86-64.so.2)"},
		{"not ELF", Options{Binary: script}, "not an executable earlyinit"},
		{"no binary", Options{Binary: filepath.Join(root, "nothing")}, "not an executable earlyinit"},
		{"bad compression", Options{Compression: "brotli"}, "want one of"},
		{"missing set", Options{Config: filepath.Join(root, "nothing.conf")}, "module set"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := tc.o
			if o.KVer == "" {
				o.KVer = kver
			}
			if o.Binary == "" {
				o.Binary = bin
			}
			if o.Compression == "" {
				o.Compression = "none"
			}
			o.ModulesRoot, o.Output = root, out
			_, err := Build(o)
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("Build: %v, want %q", err, tc.wantErr)
			}
			if b, _ := os.ReadFile(out); string(b) != "the old image" {
				t.Errorf("%s changed by a failed build", out)
			}
		})
	}
}

// A compressor failing half way leaves the old image and no temporary
// file.
func TestBuildFailureKeepsOld(t *testing.T) {
	const kver = "6.1.0-test"
	root, bin := fakeRoot(t, kver)
	tools := t.TempDir()
	fake := "#!/bin/sh\nhead -c 100 >/dev/null\necho partial\necho lz4 broke >&2\nexit 1\n"
	if err := os.WriteFile(filepath.Join(tools, "lz4"), []byte(fake), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", tools+":/usr/bin:/bin")
	boot := filepath.Join(root, "boot")
	out := writeFile(t, filepath.Join(boot, "initrd.img-"+kver), "the old image")
	_, err := Build(Options{KVer: kver, ModulesRoot: root, Binary: bin, Output: out, Compression: "lz4"})
	if err == nil || !strings.Contains(err.Error(), "lz4 broke") || !strings.Contains(err.Error(), out) {
		t.Fatalf("Build: %v, want the tool's error naming %s", err, out)
	}
	if b, _ := os.ReadFile(out); string(b) != "the old image" {
		t.Errorf("%s changed by a failed build: %q", out, b)
	}
	if ents, _ := os.ReadDir(boot); len(ents) != 1 {
		t.Errorf("%s holds %d files, want the old image alone", boot, len(ents))
	}
}

func TestCheckStatic(t *testing.T) {
	dir := t.TempDir()
	static := writeFile(t, filepath.Join(dir, "static"), string(fakeELF(t, "")))
	if err := checkStatic(static); err != nil {
		t.Errorf("static: %v", err)
	}
	dyn := writeFile(t, filepath.Join(dir, "dyn"), string(fakeELF(t, "/lib/ld-musl-x86_64.so.1")))
	if err := checkStatic(dyn); err == nil || !strings.Contains(err.Error(), "/lib/ld-musl-x86_64.so.1") {
		t.Errorf("dynamic: %v", err)
	}
}

func TestAutoCompression(t *testing.T) {
	root := t.TempDir()
	writeFile(t, filepath.Join(root, "boot/config-nozstd"), "CONFIG_RD_GZIP=y\n# CONFIG_RD_ZSTD is not set\n")
	writeFile(t, filepath.Join(root, "lib/modules/fedora/config"), "CONFIG_RD_GZIP=y\n# CONFIG_RD_ZSTD is not set\n")
	writeFile(t, filepath.Join(root, "boot/config-zstd"), "CONFIG_RD_GZIP=y\nCONFIG_RD_ZSTD=y\n")
	for _, tc := range []struct{ kver, path, want string }{
		{"nozstd", os.Getenv("PATH"), "gzip"},
		{"fedora", os.Getenv("PATH"), "gzip"}, // lib/modules/<kver>/config read
		{"zstd", os.Getenv("PATH"), "zstd"},
		{"zstd", t.TempDir(), "zstd"}, // no zstd tool: Go's encoder
		{"unknown", os.Getenv("PATH"), "zstd"},
	} {
		t.Run(tc.kver, func(t *testing.T) {
			t.Setenv("PATH", tc.path)
			if got := autoCompression(root, tc.kver); got != tc.want {
				t.Errorf("autoCompression(%s) = %s, want %s (make deps installs zstd)", tc.kver, got, tc.want)
			}
		})
	}
}

func TestOmit(t *testing.T) {
	all := []string{"kernel/drivers/virtio/virtio.ko", "kernel/drivers/virtio/virtio_pci.ko", "kernel/fs/ext4/ext4.ko", "kernel/fs/nls/nls_iso8859-1.ko"}
	for _, tc := range []struct {
		entries, drop []string
		want          string
	}{
		{[]string{"ext4", "drivers/virtio/*"}, []string{"virtio_pci"}, "ext4 virtio"},
		{[]string{"ext4", "drivers/virtio/*"}, []string{"drivers/virtio/*"}, "ext4"},
		{[]string{"ext4", "nls_iso8859_1"}, []string{"fs/nls/*"}, "ext4"},
		{[]string{"ext4", "nls_iso8859-1"}, []string{"nls_iso8859_1"}, "ext4"},
		{[]string{"xfs", "ext4"}, []string{"xfs"}, "ext4"}, // not a module of this kernel
		{[]string{"xfs", "ext4"}, []string{"btrfs"}, "xfs ext4"},
	} {
		if got := strings.Join(omit(tc.entries, all, tc.drop), " "); got != tc.want {
			t.Errorf("omit(%q, %q) = %q, want %q", tc.entries, tc.drop, got, tc.want)
		}
	}
}
