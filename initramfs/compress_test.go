package initramfs

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/klauspost/compress/zstd"
)

func TestCompressFile(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "in.cpio")
	data := bytes.Repeat([]byte("070701 earlyinit cpio bytes\n"), 4096)
	if err := os.WriteFile(src, data, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		method string
		magic  []byte
		unpack []string
	}{
		{"zstd", []byte{0x28, 0xb5, 0x2f, 0xfd}, []string{"zstd", "-dcq"}},
		{"xz", []byte{0xfd, '7', 'z', 'X', 'Z', 0}, []string{"xz", "-dc"}},
		{"gzip", []byte{0x1f, 0x8b}, []string{"gzip", "-dc"}},
		{"lz4", []byte{0x02, 0x21, 0x4c, 0x18}, []string{"lz4", "-dc"}}, // legacy frame, as the kernel wants
		{"none", []byte("070701"), []string{"cat"}},
	} {
		t.Run(tc.method, func(t *testing.T) {
			dst := filepath.Join(dir, "out."+tc.method)
			raw, size, err := compressFile(src, dst, tc.method)
			if err != nil {
				t.Fatal(err)
			}
			got, err := os.ReadFile(dst)
			if err != nil {
				t.Fatal(err)
			}
			if raw != int64(len(data)) || size != int64(len(got)) {
				t.Errorf("sizes %d, %d; want %d, %d", raw, size, len(data), len(got))
			}
			if !bytes.HasPrefix(got, tc.magic) {
				t.Errorf("%s output starts % x, want % x", tc.method, got[:8], tc.magic)
			}
			cmd := exec.Command(tc.unpack[0], append(tc.unpack[1:], dst)...)
			out, err := cmd.Output()
			if err != nil {
				t.Fatalf("%v: %v", tc.unpack, err)
			}
			if !bytes.Equal(out, data) {
				t.Errorf("%s round trip differs", tc.method)
			}
			// Reproducible: the same input gives the same bytes.
			dst2 := dst + ".again"
			if _, _, err := compressFile(src, dst2, tc.method); err != nil {
				t.Fatal(err)
			}
			again, _ := os.ReadFile(dst2)
			if !bytes.Equal(again, got) {
				t.Errorf("%s: two runs differ", tc.method)
			}
		})
	}
	if _, _, err := compressFile(src, filepath.Join(dir, "x"), "bzip3"); err == nil || !strings.Contains(err.Error(), "want one of") {
		t.Errorf("unknown method: %v", err)
	}
}

// TestCompressZstdWithoutTool: without the zstd tool, zstd is written by
// Go's encoder, which says so, and the reference decoder reads it back;
// the frame's window is zstd -19's (what the kernel allocates to unpack
// it), and the output is reproducible.
func TestCompressZstdWithoutTool(t *testing.T) {
	ref, err := exec.LookPath("zstd")
	if err != nil {
		t.Fatal("no zstd tool to check the Go encoder's output with: run make deps")
	}
	dir := t.TempDir()
	src := filepath.Join(dir, "in.cpio")
	var data []byte
	for i := range 20000 {
		data = fmt.Appendf(data, "070701%08x earlyinit cpio bytes, entry %d\n", i*7919, i)
	}
	if err := os.WriteFile(src, data, 0o644); err != nil {
		t.Fatal(err)
	}
	withTool := filepath.Join(dir, "tool.zst")
	if _, _, by, err := compressFileBy(src, withTool, "zstd"); err != nil || by != "zstd -19 -T0 -q -c" {
		t.Fatalf("with the tool: %q, %v", by, err)
	}
	t.Setenv("PATH", t.TempDir())
	if err := checkCompression(dir, "6.1.0-none", "zstd"); err != nil {
		t.Errorf("checkCompression without the tool: %v", err)
	}
	var outs [][]byte
	for i := range 2 {
		dst := filepath.Join(dir, fmt.Sprintf("go%d.zst", i))
		raw, size, by, err := compressFileBy(src, dst, "zstd")
		if err != nil {
			t.Fatal(err)
		}
		if by != "Go's zstd encoder (klauspost/compress, best level), no zstd tool" {
			t.Errorf("compressed by %q", by)
		}
		got, _ := os.ReadFile(dst)
		if raw != int64(len(data)) || size != int64(len(got)) || !bytes.HasPrefix(got, []byte{0x28, 0xb5, 0x2f, 0xfd}) {
			t.Errorf("sizes %d, %d of %d; starts % x", raw, size, len(got), got[:4])
		}
		outs = append(outs, got)
	}
	if !bytes.Equal(outs[0], outs[1]) {
		t.Error("two runs differ")
	}
	out, err := exec.Command(ref, "-dcq", filepath.Join(dir, "go0.zst")).Output()
	if err != nil || !bytes.Equal(out, data) {
		t.Fatalf("zstd -d of the Go encoder's output: %v, equal %v", err, bytes.Equal(out, data))
	}
	var h zstd.Header
	if err := h.Decode(outs[0]); err != nil || h.WindowSize > goZstdWindow {
		t.Errorf("frame header %+v, %v: window over %d", h, err, goZstdWindow)
	}
	toolOut, _ := os.ReadFile(withTool)
	t.Logf("%d bytes: zstd -19 %d, Go's encoder %d", len(data), len(toolOut), len(outs[0]))
}

func TestCheckCompression(t *testing.T) {
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, "boot"), 0o755); err != nil {
		t.Fatal(err)
	}
	cfg := "CONFIG_RD_GZIP=y\nCONFIG_RD_XZ=y\n# CONFIG_RD_ZSTD is not set\n"
	if err := os.WriteFile(filepath.Join(root, "boot", "config-6.1.0-test"), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		kver, method, wantErr string
	}{
		{"6.1.0-test", "xz", ""},
		{"6.1.0-test", "gzip", ""},
		{"6.1.0-test", "none", ""},
		{"6.1.0-test", "zstd", "has no CONFIG_RD_ZSTD=y"},
		{"6.1.0-test", "", "has no CONFIG_RD_ZSTD=y"}, // the default is zstd
		{"6.1.0-other", "zstd", ""},                   // no config file: nothing to check
		{"6.1.0-test", "brotli", "want one of"},
		{"6.1.0-other", "lz4", ""},
	} {
		err := checkCompression(root, tc.kver, tc.method)
		if tc.wantErr == "" && err != nil || tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)) {
			t.Errorf("checkCompression(%s, %q) = %v, want %q", tc.kver, tc.method, err, tc.wantErr)
		}
	}
}

func TestHostOnlyFilter(t *testing.T) {
	loaded, err := ReadLoaded(strings.NewReader("virtio_net 61440 0 - Live 0x0\nxfs 1994752 1 - Live 0x0\nvirtio_pci 24576 0 - Live 0x0\nkvm 1142784 0 - Live 0x0\n"))
	if err != nil {
		t.Fatal(err)
	}
	h := &HostOnly{Loaded: loaded, FSTypes: []string{"btrfs"}}
	entries := []string{"drivers/virtio/*", "virtio_blk", "virtio_net", "e1000", "ext4", "xfs", "btrfs", "isofs", "vfat", "nls_utf8"}
	all := []string{"kernel/drivers/virtio/virtio_pci.ko", "kernel/drivers/virtio/virtio_balloon.ko", "kernel/fs/xfs/xfs.ko"}
	got := strings.Join(h.Filter(entries, all), " ")
	want := "virtio_pci virtio_net xfs btrfs isofs vfat nls_utf8"
	if got != want {
		t.Errorf("Filter = %q, want %q", got, want)
	}
}

func TestMountFSType(t *testing.T) {
	mounts := "sysfs /sys sysfs rw 0 0\n" +
		"/dev/vda1 / ext4 rw,relatime 0 0\n" +
		"/dev/vda2 /boot xfs rw 0 0\n" +
		"/dev/vdb1 /mnt/my\\040root btrfs rw 0 0\n" +
		"/dev/vdc1 /mnt/image ext4 rw 0 0\n" +
		"overlay /mnt/image overlay rw 0 0\n" +
		"/dev/vdd /mnt/imagex vfat rw 0 0\n"
	for _, tc := range []struct{ dir, want string }{
		{"/", "ext4"},
		{"/boot", "xfs"},
		{"/boot/grub", "xfs"},
		{"/bootx", "ext4"},
		{"/mnt/my root", "btrfs"},
		{"/mnt/image", "overlay"},     // the last mount there
		{"/mnt/image/usr", "overlay"}, // not /mnt/imagex
		{"/mnt/imagex/a", "vfat"},
	} {
		got, err := MountFSType(strings.NewReader(mounts), tc.dir)
		if err != nil || got != tc.want {
			t.Errorf("MountFSType(%s) = %q, %v; want %s", tc.dir, got, err, tc.want)
		}
	}
	if _, err := MountFSType(strings.NewReader("sysfs /sys sysfs rw 0 0\n"), "/"); err == nil || !strings.Contains(err.Error(), "no mount holding /") {
		t.Errorf("no root mount: %v", err)
	}
}

func TestHost(t *testing.T) {
	dir := t.TempDir()
	loaded := filepath.Join(dir, "modules")
	mounts := filepath.Join(dir, "mounts")
	os.WriteFile(loaded, []byte("virtio_net 61440 0 - Live 0x0\nxfs 1994752 1 - Live 0x0\n"), 0o644)
	os.WriteFile(mounts, []byte("/dev/vda1 / xfs rw 0 0\n/dev/vdb /srv btrfs rw 0 0\n"), 0o644)
	for _, tc := range []struct {
		dir     string
		fstypes []string
		want    HostOnly
	}{
		{"/", nil, HostOnly{Loaded: []string{"virtio_net", "xfs"}, FSTypes: []string{"xfs"}}},
		{"/srv/root", nil, HostOnly{Loaded: []string{"virtio_net", "xfs"}, FSTypes: []string{"btrfs"}}},
		{"/", []string{"ext4", "vfat"}, HostOnly{Loaded: []string{"virtio_net", "xfs"}, FSTypes: []string{"ext4", "vfat"}}},
	} {
		h, err := Host(loaded, mounts, tc.dir, tc.fstypes)
		if err != nil || !reflect.DeepEqual(*h, tc.want) {
			t.Errorf("Host(%s, %q) = %+v, %v; want %+v", tc.dir, tc.fstypes, h, err, tc.want)
		}
	}
	if _, err := Host(filepath.Join(dir, "none"), mounts, "/", nil); err == nil || !strings.Contains(err.Error(), filepath.Join(dir, "none")) {
		t.Errorf("missing /proc/modules: %v", err)
	}
}
