package initramfs

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// compressModule replaces dir/p with p+ext compressed by tool (argv).
func compressModule(t *testing.T, dir, p, ext string, argv ...string) {
	t.Helper()
	if _, err := exec.LookPath(argv[0]); err != nil {
		t.Fatalf("%s: %v (make deps installs it)", argv[0], err)
	}
	src := filepath.Join(dir, p)
	out, err := exec.Command(argv[0], append(argv[1:], src)...).Output()
	if err != nil {
		t.Fatalf("%s %s: %v", strings.Join(argv, " "), src, err)
	}
	if err := os.WriteFile(src+ext, out, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(src); err != nil {
		t.Fatal(err)
	}
}

// TestBuildCompressedModules: a compressed module goes into the image as
// it is when the kernel unpacks its format itself, else unpacked to a
// plain .ko, with modules.dep naming what the image holds.
func TestBuildCompressedModules(t *testing.T) {
	const kver = "6.1.0-test"
	for _, tc := range []struct {
		name, config string // "" for no config file
		want         map[string]bool
	}{
		{"no kernel config: unpacked", "", map[string]bool{"ext4.ko": true, "jbd2.ko": true, "crc16.ko": true}},
		{"kernel unpacks xz", "CONFIG_MODULES=y\nCONFIG_MODULE_COMPRESS_XZ=y\nCONFIG_MODULE_DECOMPRESS=y\n",
			map[string]bool{"ext4.ko.xz": true, "jbd2.ko": true, "crc16.ko.xz": true}},
		{"kernel unpacks zstd", "CONFIG_MODULE_COMPRESS_ZSTD=y\nCONFIG_MODULE_DECOMPRESS=y\n",
			map[string]bool{"ext4.ko": true, "jbd2.ko.zst": true, "crc16.ko": true}},
		{"kernel compresses, cannot unpack", "CONFIG_MODULE_COMPRESS_XZ=y\n# CONFIG_MODULE_DECOMPRESS is not set\n",
			map[string]bool{"ext4.ko": true, "jbd2.ko": true, "crc16.ko": true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root, bin := fakeRoot(t, kver)
			dir := filepath.Join(root, "lib/modules", kver)
			compressModule(t, dir, "kernel/fs/ext4/ext4.ko", ".xz", "xz", "-c", "--check=crc32")
			compressModule(t, dir, "kernel/fs/jbd2/jbd2.ko", ".zst", "zstd", "-q", "-c")
			compressModule(t, dir, "kernel/lib/crc16.ko", ".xz", "xz", "-c")
			dep := "kernel/fs/ext4/ext4.ko.xz: kernel/fs/jbd2/jbd2.ko.zst kernel/lib/crc16.ko.xz\n" +
				"kernel/fs/jbd2/jbd2.ko.zst:\nkernel/lib/crc16.ko.xz:\n"
			writeFile(t, filepath.Join(dir, "modules.dep"), dep)
			if tc.config != "" {
				writeFile(t, filepath.Join(root, "boot", "config-"+kver), tc.config)
			}
			conf := writeFile(t, filepath.Join(root, "modules.conf"), "ext4\n")
			o := Options{KVer: kver, ModulesRoot: root, Config: conf, Binary: bin, Output: filepath.Join(t.TempDir(), "img"), Compression: "none"}
			if _, err := Build(o); err != nil {
				t.Fatal(err)
			}
			_, files := readArchive(t, o.Output)
			mdir := "lib/modules/" + kver + "/"
			full := map[string]string{"ext4": "kernel/fs/ext4/", "jbd2": "kernel/fs/jbd2/", "crc16": "kernel/lib/"}
			var inDep []string
			for f := range tc.want {
				p := full[strings.Split(f, ".")[0]] + f
				inDep = append(inDep, p)
				e, ok := files[mdir+p]
				if !ok {
					t.Errorf("%s not in the image", p)
					continue
				}
				// fakeModulesIn's content is the module's plain path.
				plain := strings.TrimSuffix(strings.TrimSuffix(p, ".xz"), ".zst")
				if unpacked := e.data == plain; unpacked != strings.HasSuffix(f, ".ko") {
					t.Errorf("%s holds %q: unpacked %v, want %v", p, e.data, unpacked, !unpacked)
				}
			}
			for name := range files {
				if strings.Contains(name, ".ko") && !strings.Contains(strings.Join(inDep, " "), strings.TrimPrefix(name, mdir)) {
					t.Errorf("%s in the image, want only %v", name, inDep)
				}
			}
			gotDep := files[mdir+"modules.dep"].data
			for _, p := range inDep {
				if !strings.Contains(gotDep, p+":") {
					t.Errorf("modules.dep lacks %s:\n%s", p, gotDep)
				}
			}
			ext4 := full["ext4"] + "ext4.ko"
			if tc.want["ext4.ko.xz"] {
				ext4 += ".xz"
			}
			line := ext4 + ":"
			for _, d := range []string{"jbd2", "crc16"} {
				for f := range tc.want {
					if strings.HasPrefix(f, d+".") {
						line += " " + full[d] + f
					}
				}
			}
			if !strings.Contains(gotDep, line+"\n") {
				t.Errorf("modules.dep lacks %q:\n%s", line, gotDep)
			}
		})
	}
}

func TestBuildCompressedModuleNoTool(t *testing.T) {
	const kver = "6.1.0-test"
	root, bin := fakeRoot(t, kver)
	dir := filepath.Join(root, "lib/modules", kver)
	compressModule(t, dir, "kernel/lib/crc16.ko", ".xz", "xz", "-c")
	writeFile(t, filepath.Join(dir, "modules.dep"), "kernel/lib/crc16.ko.xz:\n")
	conf := writeFile(t, filepath.Join(root, "modules.conf"), "crc16\n")
	t.Setenv("PATH", t.TempDir())
	_, err := Build(Options{KVer: kver, ModulesRoot: root, Config: conf, Binary: bin, Output: filepath.Join(t.TempDir(), "img"), Compression: "none"})
	if err == nil || !strings.Contains(err.Error(), "crc16.ko.xz") || !strings.Contains(err.Error(), "install xz") {
		t.Errorf("Build without xz = %v, want an error naming the module and xz", err)
	}
}
