package blockdev

import (
	"encoding/binary"
	"errors"
	"strings"
	"testing"
)

// xfsSize is what mkfs.xfs accepts at least (300 MB); the images are
// sparse.
const xfsSize = 300 << 20

func mkxfs(t testing.TB, dir, name string, args ...string) string {
	t.Helper()
	img := sparse(t, dir, name, xfsSize)
	run(t, "mkfs.xfs", append(append([]string{"-q", "-f"}, args...), img)...)
	return img
}

// Probe agrees with blkid on XFS images: v5 and v4 superblocks, labels up
// to the 12 bytes sb_fname holds, fixed and all-zero UUIDs, 4 KiB sectors
// (the CRC covers the whole sector) and a UUID changed after mkfs (v5
// keeps the first one as sb_meta_uuid: sb_uuid is the one reported).
func TestProbeXFS(t *testing.T) {
	need(t, "mkfs.xfs")
	dir := t.TempDir()
	for _, tc := range []struct {
		name  string
		args  []string
		label string
		uuid  string // "" when only blkid knows it
	}{
		{"label", []string{"-L", "root"}, "root", ""},
		{"no label", nil, "", ""},
		{"twelve bytes", []string{"-L", "abcdefghijkl"}, "abcdefghijkl", ""},
		{"trailing space", []string{"-L", "ab "}, "ab", ""},
		{"fixed uuid", []string{"-L", "r", "-m", "uuid=01234567-89AB-cdef-0123-456789abcdef"}, "r", "01234567-89ab-cdef-0123-456789abcdef"},
		{"zero uuid", []string{"-m", "uuid=00000000-0000-0000-0000-000000000000"}, "", ""},
		{"v4", []string{"-m", "crc=0", "-L", "old"}, "old", ""},
		{"4k sectors", []string{"-s", "size=4096", "-L", "s4k"}, "s4k", ""},
		{"1k blocks", []string{"-b", "size=1024", "-L", "b1k"}, "b1k", ""},
		{"64k blocks", []string{"-b", "size=65536", "-L", "b64k"}, "b64k", ""},
		{"2k inodes", []string{"-i", "size=2048", "-L", "i2k"}, "i2k", ""},
	} {
		t.Run(strings.ReplaceAll(tc.name, " ", "-"), func(t *testing.T) {
			t.Parallel()
			img := mkxfs(t, dir, strings.ReplaceAll(tc.name, " ", "-")+".img", tc.args...)
			got := checkBlkid(t, img)
			if got.Type != "xfs" || got.Label != tc.label || (tc.uuid != "" && got.UUID != tc.uuid) {
				t.Errorf("got %+v, want xfs label %q uuid %q", got, tc.label, tc.uuid)
			}
			if strings.HasPrefix(tc.name, "zero") && got.UUID != "" {
				t.Errorf("all-zero UUID reported as %q", got.UUID)
			}
		})
	}
	t.Run("xfs_admin-U", func(t *testing.T) {
		t.Parallel()
		img := mkxfs(t, dir, "admin.img", "-L", "moved")
		before := checkBlkid(t, img)
		run(t, "xfs_admin", "-U", "generate", img)
		after := checkBlkid(t, img)
		if after.UUID == before.UUID || after.Label != "moved" {
			t.Errorf("after xfs_admin -U: %+v, before %+v", after, before)
		}
	})
}

// Every field libblkid checks is checked; a damaged superblock is an
// error naming what is wrong, a truncated one too, and nothing panics.
func TestProbeXFSCorrupt(t *testing.T) {
	need(t, "mkfs.xfs")
	dir := t.TempDir()
	v5 := readHead(t, mkxfs(t, dir, "v5.img", "-L", "x"), 64<<10)
	v5s4k := readHead(t, mkxfs(t, dir, "s4k.img", "-s", "size=4096", "-L", "x"), 64<<10)
	v4 := readHead(t, mkxfs(t, dir, "v4.img", "-m", "crc=0", "-L", "x"), 64<<10)
	be := binary.BigEndian
	for _, tc := range []struct {
		name string
		img  []byte
		edit func(b []byte) []byte
		want string // in the error
	}{
		{"agcount", v5, func(b []byte) []byte { be.PutUint32(b[88:], 0); return b }, "no allocation groups"},
		{"sectsize", v5, func(b []byte) []byte { be.PutUint16(b[102:], 1024); return b }, "sector size"},
		{"sectlog", v5, func(b []byte) []byte { b[121] = 16; return b }, "sector size"},
		{"blocksize", v5, func(b []byte) []byte { be.PutUint32(b[4:], 3000); return b }, "block size"},
		{"blocklog", v5, func(b []byte) []byte { b[120] = 8; return b }, "block size"},
		{"inodesize", v5, func(b []byte) []byte { be.PutUint16(b[104:], 128); return b }, "inode size"},
		{"inodelog", v5, func(b []byte) []byte { b[122] = 12; return b }, "inode size"},
		{"inopblog", v5, func(b []byte) []byte { b[123]++; return b }, "inodes per block"},
		{"rextsize zero", v5, func(b []byte) []byte { be.PutUint32(b[80:], 0); return b }, "realtime extent"},
		{"rextsize huge", v5, func(b []byte) []byte { be.PutUint32(b[80:], 1<<20); return b }, "realtime extent"},
		{"imax_pct", v5, func(b []byte) []byte { b[127] = 101; return b }, "inode space"},
		{"dblocks zero", v5, func(b []byte) []byte { be.PutUint64(b[8:], 0); return b }, "data blocks"},
		{"dblocks too many", v5, func(b []byte) []byte { be.PutUint64(b[8:], be.Uint64(b[8:])+1<<40); return b }, "data blocks"},
		{"dblocks too few", v5, func(b []byte) []byte { be.PutUint64(b[8:], 1); return b }, "data blocks"},
		{"v5 without morebits", v5, func(b []byte) []byte { b[100] &^= 0x80; return b }, "without the CRC"},
		{"v5 without crc feature", v5, func(b []byte) []byte { be.PutUint32(b[200:], be.Uint32(b[200:])&^0x100); return b }, "without the CRC"},
		{"crc", v5, func(b []byte) []byte { b[108] = 'y'; return b }, "CRC"},
		{"crc beyond 512 bytes", v5s4k, func(b []byte) []byte { b[4000] ^= 1; return b }, "CRC"},
		{"truncated superblock", v5, func(b []byte) []byte { return b[:300] }, "beyond end"},
		{"truncated 4k sector", v5s4k, func(b []byte) []byte { return b[:2048] }, "beyond end"},
	} {
		t.Run(strings.ReplaceAll(tc.name, " ", "-"), func(t *testing.T) {
			b := tc.edit(append([]byte(nil), tc.img...))
			fs, err := Probe(bytesReader(b), int64(len(b)))
			if err == nil || !strings.Contains(err.Error(), "xfs: ") || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("got %+v, %v; want an xfs error containing %q", fs, err, tc.want)
			}
		})
	}
	// The undamaged cuts probe fine; a v4 superblock has no CRC, so a
	// changed label is read as it is.
	for name, b := range map[string][]byte{"v5": v5, "v5 4k": v5s4k, "v4": v4} {
		if fs, err := Probe(bytesReader(b), int64(len(b))); err != nil || fs.Type != "xfs" || fs.Label != "x" {
			t.Errorf("%s: %+v, %v", name, fs, err)
		}
	}
	b := append([]byte(nil), v4...)
	b[108] = 'y'
	if fs, err := Probe(bytesReader(b), int64(len(b))); err != nil || fs.Label != "y" {
		t.Errorf("v4 with a new label: %+v, %v", fs, err)
	}
	// Cut inside the magic: not XFS. A reader shorter than its size: an
	// I/O error, not a result.
	if fs, err := Probe(bytesReader(v5[:3]), 3); !errors.Is(err, ErrUnknown) {
		t.Errorf("3 bytes: %+v, %v; want ErrUnknown", fs, err)
	}
	if fs, err := Probe(bytesReader(v5[:300]), 1<<20); err == nil || fs != (FS{}) {
		t.Errorf("short reader: %+v, %v; want an error", fs, err)
	}
}
