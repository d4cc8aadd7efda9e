//go:build !initrd

package main

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/u-root/mkuimage/cpio"
)

// staticELF is a minimal static x86-64 ELF executable, earlyinit's stand-in.
func staticELF() []byte {
	var b bytes.Buffer
	binary.Write(&b, binary.LittleEndian, elf.Header64{
		Ident:   [16]byte{0x7f, 'E', 'L', 'F', byte(elf.ELFCLASS64), byte(elf.ELFDATA2LSB), byte(elf.EV_CURRENT)},
		Type:    uint16(elf.ET_EXEC),
		Machine: uint16(elf.EM_X86_64),
		Version: uint32(elf.EV_CURRENT),
		Ehsize:  64,
	})
	b.WriteString("earlyinit")
	return b.Bytes()
}

// initramfsRoot makes a root with one kernel (vmlinuz, its modules: ext4,
// jbd2, isofs, xfs) and os-release, and returns it and a static "earlyinit".
func initramfsRoot(t *testing.T, kver, osRelease string) (string, string) {
	t.Helper()
	root := t.TempDir()
	mods := filepath.Join(root, "lib/modules", kver)
	files := map[string]string{
		"boot/vmlinuz-" + kver:    "kernel",
		"boot/vmlinuz-5.10.0-old": "old kernel",
		"etc/os-release":          osRelease,
		"earlyinit":               string(staticELF()),
	}
	for _, m := range []string{"kernel/fs/ext4/ext4.ko", "kernel/fs/jbd2/jbd2.ko", "kernel/fs/isofs/isofs.ko", "kernel/fs/xfs/xfs.ko"} {
		files[filepath.Join("lib/modules", kver, m)] = m
	}
	for name, c := range files {
		p := filepath.Join(root, name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(c), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	os.WriteFile(filepath.Join(mods, "modules.dep"), []byte("kernel/fs/ext4/ext4.ko: kernel/fs/jbd2/jbd2.ko\nkernel/fs/jbd2/jbd2.ko:\nkernel/fs/isofs/isofs.ko:\nkernel/fs/xfs/xfs.ko:\n"), 0o644)
	os.WriteFile(filepath.Join(mods, "modules.alias"), []byte("alias fs-ext4 ext4\n"), 0o644)
	os.WriteFile(filepath.Join(mods, "modules.softdep"), nil, 0o644)
	return root, filepath.Join(root, "earlyinit")
}

func archiveNames(t *testing.T, file string) map[string]cpio.Info {
	t.Helper()
	raw, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	recs, err := cpio.ReadAllRecords(cpio.Newc.Reader(bytes.NewReader(raw)))
	if err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	m := map[string]cpio.Info{}
	for _, r := range recs {
		m[r.Name] = r.Info
	}
	return m
}

func TestInitramfsVerb(t *testing.T) {
	const kver = "6.1.0-56-amd64"
	const mods = "lib/modules/" + kver + "/kernel/fs/"
	const rocky = "ID=\"rocky\"\nID_LIKE=\"rhel centos fedora\"\n"
	for _, tc := range []struct {
		name, osRelease, conf, fstab string
		args                         []string
		wantOut                      string   // relative to the root
		wantIn, wantNotIn            []string // archive names
		wantLog                      string
	}{
		{"debian, defaults", "ID=debian\n", "COMPRESS=none\n", "", nil, "boot/initrd.img-" + kver,
			[]string{"init", "bin/earlyinit", mods + "ext4/ext4.ko", mods + "isofs/isofs.ko", mods + "xfs/xfs.ko", "lib/modules/" + kver + "/modules.dep"}, nil,
			"root filesystem drivers: ext4, xfs, btrfs kept (/etc/fstab: open "},
		{"rocky, omit", "ID=\"rocky\"\nID_LIKE=\"rhel centos fedora\"\n", "COMPRESS=none\nMODULES_OMIT=isofs\n", "", nil, "boot/initramfs-" + kver + ".img",
			[]string{mods + "jbd2/jbd2.ko"}, []string{mods + "isofs/isofs.ko"}, ""},
		{"explicit kver and output", "ID=debian\n", "COMPRESS=none\n", "", []string{"--kver", kver, "-o", "OUT/my.img"}, "OUT/my.img", []string{"init"}, nil, ""},
		// ROOTFS=auto: the root's fstab says which driver it needs.
		{"an xfs root", rocky, "COMPRESS=none\n", "UUID=7b1d / xfs defaults 0 0\n", nil, "boot/initramfs-" + kver + ".img",
			[]string{mods + "xfs/xfs.ko", mods + "isofs/isofs.ko"}, []string{mods + "ext4/ext4.ko", mods + "jbd2/jbd2.ko"},
			"initramfs: root filesystem xfs (/etc/fstab): ext4, btrfs left out (ROOTFS=all in /etc/earlyinit/initramfs.conf keeps them)\n"},
		{"an ext4 root", "ID=debian\n", "COMPRESS=none\n", "LABEL=root / ext4 defaults 0 1\n", nil, "boot/initrd.img-" + kver,
			[]string{mods + "ext4/ext4.ko", mods + "jbd2/jbd2.ko"}, []string{mods + "xfs/xfs.ko"}, "root filesystem ext4 (/etc/fstab): xfs, btrfs left out"},
		{"ROOTFS=all", rocky, "COMPRESS=none\nROOTFS=all\n", "UUID=7b1d / xfs defaults 0 0\n", nil, "boot/initramfs-" + kver + ".img",
			[]string{mods + "xfs/xfs.ko", mods + "ext4/ext4.ko"}, nil, ""},
		{"MODULES_ADD keeps one", rocky, "COMPRESS=none\nMODULES_ADD=ext4\n", "UUID=7b1d / xfs defaults 0 0\n", nil, "boot/initramfs-" + kver + ".img",
			[]string{mods + "xfs/xfs.ko", mods + "ext4/ext4.ko"}, nil, "root filesystem xfs (/etc/fstab): btrfs left out"},
		{"fstab says auto", rocky, "COMPRESS=none\n", "UUID=7b1d / auto defaults 0 0\n", nil, "boot/initramfs-" + kver + ".img",
			[]string{mods + "xfs/xfs.ko", mods + "ext4/ext4.ko"}, nil, "root filesystem drivers: ext4, xfs, btrfs kept (/etc/fstab mounts / with none of them)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root, self := initramfsRoot(t, kver, tc.osRelease)
			if tc.fstab != "" {
				if err := os.WriteFile(filepath.Join(root, "etc/fstab"), []byte(tc.fstab), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			conf := filepath.Join(root, "etc/earlyinit/initramfs.conf")
			os.MkdirAll(filepath.Dir(conf), 0o755)
			os.WriteFile(conf, []byte(tc.conf), 0o644)
			os.MkdirAll(filepath.Join(root, "OUT"), 0o755)
			args := []string{"--root", root}
			for _, a := range tc.args {
				args = append(args, strings.ReplaceAll(a, "OUT", filepath.Join(root, "OUT")))
			}
			var stdout, stderr bytes.Buffer
			if code := runInitramfs(args, self, &stdout, &stderr); code != 0 {
				t.Fatalf("exit %d: %s", code, stderr.String())
			}
			out := filepath.Join(root, tc.wantOut)
			if want := out + ": kernel " + kver + ", init " + self + ", "; !strings.HasPrefix(stdout.String(), want) || strings.Count(stdout.String(), "\n") != 1 {
				t.Errorf("stdout %q, want one line starting %q", stdout.String(), want)
			}
			fi, err := os.Stat(out)
			if err != nil {
				t.Fatal(err)
			}
			if fi.Mode().Perm() != 0o644 {
				t.Errorf("%s: mode %v, want 0644", out, fi.Mode())
			}
			names := archiveNames(t, out)
			for _, n := range tc.wantIn {
				if _, ok := names[n]; !ok {
					t.Errorf("%s not in the archive", n)
				}
			}
			for _, n := range tc.wantNotIn {
				if _, ok := names[n]; ok {
					t.Errorf("%s in the archive", n)
				}
			}
			if !strings.Contains(stderr.String(), tc.wantLog) {
				t.Errorf("log:\n%s\nwant %q", stderr.String(), tc.wantLog)
			}
			if bin := names["bin/earlyinit"]; bin.FileSize != uint64(len(staticELF())) || bin.Mode != cpio.S_IFREG|0o755 {
				t.Errorf("bin/earlyinit: %v, want the binary, 0755", bin)
			}
		})
	}
}

func TestInitramfsVerbErrors(t *testing.T) {
	const kver = "6.1.0-56-amd64"
	for _, tc := range []struct {
		name     string
		args     []string
		conf     string
		setup    func(root string)
		wantCode int
		wantErr  string
	}{
		{"missing modules", []string{"--kver", "6.9.9-none"}, "", nil, 1, "kernel 6.9.9-none: no modules directory ROOT/lib/modules/6.9.9-none"},
		{"bad config", nil, "COMPRESS=none\nMODULES=most\n", nil, 1, "ROOT/etc/earlyinit/initramfs.conf:2: MODULES: unknown key"},
		{"missing explicit config", []string{"--config", "ROOT/nothing.conf"}, "", nil, 1, "ROOT/nothing.conf"},
		{"no kernel", nil, "", func(root string) {
			os.Remove(filepath.Join(root, "boot/vmlinuz-"+kver))
			os.Remove(filepath.Join(root, "boot/vmlinuz-5.10.0-old"))
		}, 1, "no ROOT/boot/vmlinuz-*"},
		{"arguments", []string{kver}, "", nil, 2, "unexpected arguments"},
		{"bad flag", []string{"--kernel", kver}, "", nil, 2, "unknown flag: --kernel"},
		{"output dir missing", []string{"-o", "ROOT/none/x.img"}, "COMPRESS=none\n", nil, 1, "write ROOT/none/x.img"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root, self := initramfsRoot(t, kver, "ID=debian\n")
			if tc.conf != "" {
				p := filepath.Join(root, "etc/earlyinit/initramfs.conf")
				os.MkdirAll(filepath.Dir(p), 0o755)
				os.WriteFile(p, []byte(tc.conf), 0o644)
			}
			if tc.setup != nil {
				tc.setup(root)
			}
			args := []string{"--root", root}
			for _, a := range tc.args {
				args = append(args, strings.ReplaceAll(a, "ROOT", root))
			}
			var stdout, stderr bytes.Buffer
			code := runInitramfs(args, self, &stdout, &stderr)
			want := strings.ReplaceAll(tc.wantErr, "ROOT", root)
			if code != tc.wantCode || !strings.Contains(stderr.String(), want) {
				t.Errorf("exit %d, stderr %q; want %d and %q", code, stderr.String(), tc.wantCode, want)
			}
			if stdout.Len() > 0 {
				t.Errorf("stdout %q on failure", stdout.String())
			}
			if ents, _ := os.ReadDir(filepath.Join(root, "boot")); len(ents) > 2 {
				t.Errorf("boot holds %d files after a failure", len(ents))
			}
		})
	}
}

// The installed binary packs itself: /proc/self/exe, refused when it is
// not static (a test binary may be dynamic) and read whole when it is.
func TestInitramfsVerbSelf(t *testing.T) {
	const kver = "6.1.0-56-amd64"
	root, _ := initramfsRoot(t, kver, "ID=debian\n")
	os.MkdirAll(filepath.Join(root, "etc/earlyinit"), 0o755)
	os.WriteFile(filepath.Join(root, "etc/earlyinit/initramfs.conf"), []byte("COMPRESS=none\n"), 0o644)
	var stdout, stderr bytes.Buffer
	code := runInitramfs([]string{"--root", root}, "/proc/self/exe", &stdout, &stderr)
	f, err := elf.Open("/proc/self/exe")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	dynamic := false
	for _, p := range f.Progs {
		dynamic = dynamic || p.Type == elf.PT_INTERP
	}
	if dynamic {
		if code != 1 || !strings.Contains(stderr.String(), "/proc/self/exe is dynamically linked") {
			t.Errorf("dynamic test binary: exit %d, %s", code, stderr.String())
		}
		return
	}
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	self, err := os.ReadFile("/proc/self/exe")
	if err != nil {
		t.Fatal(err)
	}
	if bin := archiveNames(t, filepath.Join(root, "boot/initrd.img-"+kver))["bin/earlyinit"]; bin.FileSize != uint64(len(self)) {
		t.Errorf("bin/earlyinit holds %d bytes, /proc/self/exe %d", bin.FileSize, len(self))
	}
}

// The package's initramfs build is packed when it is installed (a regular
// file); otherwise the running binary.
func TestInitrdBinary(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "earlyinit-initrd")
	os.WriteFile(file, staticELF(), 0o755)
	sub := filepath.Join(dir, "sub")
	os.Mkdir(sub, 0o755)
	link := filepath.Join(dir, "link")
	os.Symlink(file, link)
	for _, tc := range []struct{ initrd, want string }{
		{file, file},
		{link, link}, // a packaging system's alternative
		{filepath.Join(dir, "none"), "/proc/self/exe"},
		{sub, "/proc/self/exe"},
	} {
		if got := initrdBinary(tc.initrd, "/proc/self/exe"); got != tc.want {
			t.Errorf("initrdBinary(%s) = %s, want %s", tc.initrd, got, tc.want)
		}
	}
}
