package initramfs

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestReadConfig(t *testing.T) {
	got, err := ReadConfig(strings.NewReader("# comment\nvirtio_blk\n\n  drivers/virtio/*  # trailing\n#ext4\n"))
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"virtio_blk", "drivers/virtio/*"}; !reflect.DeepEqual(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
}

// fakeModules writes a module tree with deps, aliases and softdeps.
func fakeModules(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	fakeModulesIn(t, dir)
	return dir
}

// fakeModulesIn writes the index files of fakeModules into dir and each
// module file, holding its own path.
func fakeModulesIn(t *testing.T, dir string) {
	t.Helper()
	files := map[string]string{
		"modules.dep": "kernel/fs/ext4/ext4.ko: kernel/fs/jbd2/jbd2.ko kernel/lib/crc16.ko\n" +
			"kernel/fs/jbd2/jbd2.ko:\nkernel/lib/crc16.ko:\nkernel/crypto/crc32c_generic.ko:\n" +
			"kernel/drivers/virtio/virtio_pci.ko: kernel/drivers/virtio/virtio.ko\nkernel/drivers/virtio/virtio.ko:\n" +
			"kernel/fs/nls/nls_iso8859-1.ko:\nkernel/sound/snd.ko:\n",
		"modules.alias":   "alias fs-ext4 ext4\nalias crypto-crc32c crc32c_generic\nalias pci:v00001AF4d* virtio_pci\nalias snd-card snd\n",
		"modules.softdep": "softdep ext4 pre: crypto-crc32c\nsoftdep snd pre: ext4\n",
		"modules.builtin": "kernel/drivers/block/loop.ko\n",
	}
	for name, c := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, l := range strings.Split(files["modules.dep"], "\n") {
		mod, _, ok := strings.Cut(l, ":")
		if !ok {
			continue
		}
		p := filepath.Join(dir, mod)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(mod), 0o600); err != nil {
			t.Fatal(err)
		}
	}
}

func TestResolveModules(t *testing.T) {
	dir := fakeModules(t)
	ms, err := ResolveModules(dir, []string{"ext4", "drivers/virtio/*", "nls_iso8859_1", "not_a_module"})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"kernel/crypto/crc32c_generic.ko", // ext4's softdep, through its alias
		"kernel/drivers/virtio/virtio.ko",
		"kernel/drivers/virtio/virtio_pci.ko",
		"kernel/fs/ext4/ext4.ko",
		"kernel/fs/jbd2/jbd2.ko",
		"kernel/fs/nls/nls_iso8859-1.ko", // "-" and "_" alike
		"kernel/lib/crc16.ko",
	}
	if !reflect.DeepEqual(ms.Paths, want) {
		t.Fatalf("paths\n%q\nwant\n%q", ms.Paths, want)
	}
	if !reflect.DeepEqual(ms.Missing, []string{"not_a_module"}) {
		t.Errorf("Missing = %q, want not_a_module", ms.Missing)
	}
	idx, err := ms.IndexFiles()
	if err != nil {
		t.Fatal(err)
	}
	dep := string(idx["modules.dep"])
	if !strings.Contains(dep, "kernel/fs/ext4/ext4.ko: kernel/fs/jbd2/jbd2.ko kernel/lib/crc16.ko\n") || strings.Contains(dep, "snd") {
		t.Errorf("modules.dep:\n%s", dep)
	}
	alias := string(idx["modules.alias"])
	if !strings.Contains(alias, "alias fs-ext4 ext4") || strings.Contains(alias, "snd") {
		t.Errorf("modules.alias keeps only the set's aliases:\n%s", alias)
	}
	if soft := string(idx["modules.softdep"]); soft != "softdep ext4 pre: crypto-crc32c\n" {
		t.Errorf("modules.softdep:\n%s", soft)
	}
	if string(idx["modules.builtin"]) != "kernel/drivers/block/loop.ko\n" {
		t.Errorf("modules.builtin not copied")
	}
}

func TestNewestKernel(t *testing.T) {
	dir := t.TempDir()
	for _, v := range []string{"6.1.0-9-amd64", "6.1.0-56-amd64", "5.10.0-30-amd64", "6.1.0-56-amd64.old"} {
		os.WriteFile(filepath.Join(dir, "vmlinuz-"+v), nil, 0o644)
	}
	got, err := NewestKernel(dir)
	if err != nil || got != "6.1.0-56-amd64.old" {
		t.Errorf("NewestKernel = %q, %v", got, err)
	}
	os.Remove(filepath.Join(dir, "vmlinuz-6.1.0-56-amd64.old"))
	if got, _ := NewestKernel(dir); got != "6.1.0-56-amd64" {
		t.Errorf("NewestKernel = %q, want 6.1.0-56-amd64 (not 6.1.0-9 by string order)", got)
	}
	if _, err := NewestKernel(t.TempDir()); err == nil {
		t.Errorf("no kernel: no error")
	}
}
