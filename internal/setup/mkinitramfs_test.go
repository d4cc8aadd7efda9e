package setup

import (
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestMkinitramfs builds real initramfs-tools images of an installed
// kernel with the hook and the boot script: in mode distro the image has
// earlyinit, the config drive and NIC modules, and the boot script in
// init-bottom's ORDER before udev's; in mode off it has the same files as
// an image built without earlyinit installed at all.
//
// The hook and the script go in a private CONFDIR (mkinitramfs -d), whose
// hooks/ mkinitramfs runs after /usr/share/initramfs-tools/hooks and whose
// scripts/ it copies and orders as /usr/share/initramfs-tools/scripts: the
// machine's own initramfs-tools configuration is left alone.
func TestMkinitramfs(t *testing.T) {
	mk, err := exec.LookPath("mkinitramfs")
	if err != nil {
		mk = "/usr/sbin/mkinitramfs"
	}
	if _, err := os.Stat(mk); err != nil {
		t.Fatalf("mkinitramfs not found: `make deps` installs initramfs-tools (through linux-image-amd64): %v", err)
	}
	kvers, err := Kernels("/")
	if err != nil {
		t.Fatal(err)
	}
	kver := ""
	for _, k := range kvers {
		if _, err := os.Stat(filepath.Join("/lib/modules", k, "modules.dep")); err == nil {
			kver = k
		}
	}
	if kver == "" {
		t.Fatal("no installed kernel with modules.dep (/lib/modules/KVER, /boot/vmlinuz-KVER): `make deps` installs linux-image-amd64")
	}

	build := func(t *testing.T, mode string, withEarlyinit bool) string {
		t.Helper()
		tmp := t.TempDir()
		conf := filepath.Join(tmp, "conf")
		for _, d := range []string{"conf.d", "hooks", "scripts/init-bottom"} {
			os.MkdirAll(filepath.Join(conf, d), 0o755)
		}
		// MODULES=list keeps the image small: only what hooks add.
		os.WriteFile(filepath.Join(conf, "initramfs.conf"), []byte("MODULES=list\nBUSYBOX=auto\nCOMPRESS=gzip\n"), 0o644)
		os.WriteFile(filepath.Join(conf, "modules"), nil, 0o644)
		root := filepath.Join(tmp, "root")
		os.MkdirAll(root, 0o755)
		writeMode(t, root, mode)
		bin, _ := fakeBin(t, tmp)
		if withEarlyinit {
			copyFile(t, filepath.Join(packaging, "initramfs-tools", "hook"), filepath.Join(conf, "hooks", "earlyinit"))
			copyFile(t, filepath.Join(packaging, "initramfs-tools", "script"), filepath.Join(conf, "scripts", "init-bottom", "earlyinit"))
		}
		work := filepath.Join(tmp, "work")
		os.MkdirAll(work, 0o755)
		cmd := exec.Command(mk, "-d", conf, "-k", "-o", filepath.Join(tmp, "initrd.img"), kver)
		cmd.Env = append(os.Environ(), "TMPDIR="+work, "EARLYINIT_ROOT="+root, "EARLYINIT_BIN="+bin, "PATH=/usr/sbin:/usr/bin:/sbin:/bin")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("mkinitramfs (mode %q): %v\n%s", mode, err, out)
		}
		dirs, _ := filepath.Glob(filepath.Join(work, "mkinitramfs_*"))
		if len(dirs) != 1 {
			t.Fatalf("mkinitramfs -k left %q, want one image tree", dirs)
		}
		return dirs[0]
	}

	distro := build(t, "distro", true)
	order := readFile(t, filepath.Join(distro, "scripts/init-bottom/ORDER"))
	ei, udev := strings.Index(order, "/scripts/init-bottom/earlyinit "), strings.Index(order, "/scripts/init-bottom/udev ")
	if ei < 0 || (udev >= 0 && ei > udev) {
		t.Errorf("mode distro: init-bottom ORDER does not run earlyinit before udev:\n%s", order)
	}
	if fi, err := os.Stat(filepath.Join(distro, "bin/earlyinit")); err != nil || fi.Mode()&0o111 == 0 {
		t.Errorf("mode distro: /bin/earlyinit in the image: %v", err)
	}
	files := tree(t, distro)
	for _, mod := range []string{"isofs.ko", "vfat.ko", "nls_utf8.ko", "nls_cp437.ko", "nls_iso8859-1.ko", "virtio_net.ko"} {
		if !slices.ContainsFunc(files, func(f string) bool { return strings.HasSuffix(strings.Fields(f)[0], "/"+mod) }) {
			t.Errorf("mode distro: %s not in the image", mod)
		}
	}

	off := build(t, "off", true)
	none := build(t, "", false)
	if o := readFile(t, filepath.Join(off, "scripts/init-bottom/ORDER")); strings.Contains(o, "earlyinit") {
		t.Errorf("mode off: init-bottom ORDER runs earlyinit:\n%s", o)
	}
	offFiles, noneFiles := tree(t, off), tree(t, none)
	if !slices.Equal(offFiles, noneFiles) {
		t.Errorf("mode off's image differs from the one without earlyinit:\n only in off: %q\n only without: %q", minus(offFiles, noneFiles), minus(noneFiles, offFiles))
	}
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, b, 0o755); err != nil {
		t.Fatal(err)
	}
}

func readFile(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// tree lists the files under dir as "path mode size" (a symlink with its
// target), sorted.
func tree(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		fi, err := d.Info()
		if err != nil {
			return err
		}
		line := fmt.Sprintf("%s %v", rel, fi.Mode())
		switch {
		case fi.Mode()&fs.ModeSymlink != 0:
			target, _ := os.Readlink(p)
			line += " -> " + target
		case fi.Mode().IsRegular():
			line += fmt.Sprintf(" %d", fi.Size())
		}
		out = append(out, line)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(out)
	return out
}

func minus(a, b []string) []string {
	var d []string
	for _, x := range a {
		if !slices.Contains(b, x) {
			d = append(d, x)
		}
	}
	return d
}
