package blockdev

import (
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"strings"
	"testing"
)

// btrfsSize is room for mkfs.btrfs's default profiles; the images are
// sparse.
const btrfsSize = 256 << 20

func mkbtrfs(t testing.TB, dir, name string, args ...string) string {
	t.Helper()
	img := sparse(t, dir, name, btrfsSize)
	run(t, "mkfs.btrfs", append(append([]string{"-q", "-f"}, args...), img)...)
	return img
}

// Probe agrees with blkid on btrfs images: labels (long, non-ASCII,
// trailing space), fixed UUIDs, every checksum kind mkfs.btrfs offers.
func TestProbeBTRFS(t *testing.T) {
	need(t, "mkfs.btrfs")
	dir := t.TempDir()
	long := strings.Repeat("l", 255)
	for _, tc := range []struct {
		name  string
		args  []string
		label string
		uuid  string // "" when only blkid knows it
	}{
		{"label", []string{"-L", "fedora"}, "fedora", ""},
		{"no label", nil, "", ""},
		{"long", []string{"-L", long}, long, ""},
		{"non-ascii", []string{"-L", `räk smörgås "q" \x`}, `räk smörgås "q" \x`, ""},
		{"trailing space", []string{"-L", "t  "}, "t", ""},
		{"fixed uuid", []string{"-U", "01234567-89AB-cdef-0123-456789abcdef"}, "", "01234567-89ab-cdef-0123-456789abcdef"},
		{"xxhash", []string{"--csum", "xxhash", "-L", "xx"}, "xx", ""},
		{"sha256", []string{"--csum", "sha256", "-L", "sha"}, "sha", ""},
		{"blake2", []string{"--csum", "blake2", "-L", "b2"}, "b2", ""},
		{"16k sectors", []string{"-s", "16384", "-n", "16384", "-L", "s16k"}, "s16k", ""},
	} {
		t.Run(strings.ReplaceAll(tc.name, " ", "-"), func(t *testing.T) {
			t.Parallel()
			img := mkbtrfs(t, dir, strings.ReplaceAll(tc.name, " ", "-")+".img", tc.args...)
			got := checkBlkid(t, img)
			label := tc.label
			if tc.name == "long" && len(got.Label) >= 250 {
				label = got.Label // mkfs.btrfs may keep less than 255
			}
			if got.Type != "btrfs" || got.Label != label || (tc.uuid != "" && got.UUID != tc.uuid) {
				t.Errorf("got %+v, want btrfs label %q uuid %q", got, tc.label, tc.uuid)
			}
		})
	}
}

// btrfsSuper returns the first 1 MiB of a btrfs image (the least
// libblkid looks at) and, in it, the primary superblock.
func btrfsSuper(t testing.TB, dir, name string, args ...string) (img, sb []byte) {
	t.Helper()
	img = readHead(t, mkbtrfs(t, dir, name, args...), btrfsMinSize)
	return img, img[btrfsSuperOff : btrfsSuperOff+btrfsSuperSize]
}

// refreshBTRFSCsum recomputes a CRC-32C superblock checksum after an edit.
func refreshBTRFSCsum(sb []byte) {
	binary.LittleEndian.PutUint32(sb, crc32.Checksum(sb[btrfsCsumSize:], castagnoli()))
}

// A damaged checksum of each kind libblkid verifies, a zero sector size,
// a superblock cut short and a device under 1 MiB are errors; kinds
// libblkid does not verify are taken as they are.
func TestProbeBTRFSCorrupt(t *testing.T) {
	need(t, "mkfs.btrfs")
	dir := t.TempDir()
	le := binary.LittleEndian
	type kind struct{ img, sb []byte }
	kinds := map[string]kind{}
	for _, cs := range []string{"crc32c", "xxhash", "sha256", "blake2"} {
		img, sb := btrfsSuper(t, dir, cs+".img", "--csum", cs, "-L", "x")
		kinds[cs] = kind{img, sb}
	}
	at := func(off int64) int64 { return btrfsSuperOff + off }
	for _, tc := range []struct {
		name string
		kind string
		edit func(b []byte) []byte
		want string // in the error; "" for a result labelled "y", "y256" for 256 of them
	}{
		{"crc32c", "crc32c", func(b []byte) []byte { b[at(0x12b)] = 'y'; return b }, "checksum"},
		{"xxhash", "xxhash", func(b []byte) []byte { b[at(0x12b)] = 'y'; return b }, "checksum"},
		{"sha256", "sha256", func(b []byte) []byte { b[at(0x12b)] = 'y'; return b }, "checksum"},
		{"stored checksum", "crc32c", func(b []byte) []byte { b[at(1)] ^= 1; return b }, "checksum"},
		{"end of superblock", "sha256", func(b []byte) []byte { b[at(btrfsSuperSize-1)] ^= 1; return b }, "checksum"},
		{"blake2 not verified", "blake2", func(b []byte) []byte { b[at(0x12b)] = 'y'; return b }, ""},
		{"unknown kind not verified", "crc32c", func(b []byte) []byte {
			le.PutUint16(b[at(0xc4):], 99)
			b[at(0x12b)] = 'y'
			return b
		}, ""},
		{"sector size", "crc32c", func(b []byte) []byte {
			le.PutUint32(b[at(0x90):], 0)
			refreshBTRFSCsum(b[at(0):at(btrfsSuperSize)])
			return b
		}, "sector size 0"},
		{"label fills its 256 bytes", "crc32c", func(b []byte) []byte {
			copy(b[at(0x12b):], strings.Repeat("y", 256))
			refreshBTRFSCsum(b[at(0):at(btrfsSuperSize)])
			return b
		}, "y256"},
		{"truncated superblock", "crc32c", func(b []byte) []byte { return b[:at(2048)] }, "beyond end"},
		{"under 1 MiB", "crc32c", func(b []byte) []byte { return b[:btrfsMinSize-512] }, "1 MiB"},
	} {
		t.Run(strings.ReplaceAll(tc.name, " ", "-"), func(t *testing.T) {
			b := tc.edit(append([]byte(nil), kinds[tc.kind].img...))
			fs, err := Probe(bytesReader(b), int64(len(b)))
			if tc.want == "" || tc.want == "y256" {
				want := "y"
				if tc.want == "y256" {
					want = strings.Repeat("y", 256)
				}
				if err != nil || fs.Type != "btrfs" || fs.Label != want {
					t.Errorf("got %+v, %v; want btrfs labelled %q", fs, err, want)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), "btrfs: ") || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("got %+v, %v; want a btrfs error containing %q", fs, err, tc.want)
			}
		})
	}
	for name, k := range kinds {
		if fs, err := Probe(bytesReader(k.img), int64(len(k.img))); err != nil || fs.Type != "btrfs" || fs.Label != "x" {
			t.Errorf("%s, first MiB: %+v, %v", name, fs, err)
		}
	}
	// The magic cut in half: not btrfs. A reader shorter than its size:
	// an I/O error, not a result.
	img := kinds["crc32c"].img
	if fs, err := Probe(bytesReader(img[:at(0x44)]), at(0x44)); !errors.Is(err, ErrUnknown) {
		t.Errorf("half a magic: %+v, %v; want ErrUnknown", fs, err)
	}
	if fs, err := Probe(bytesReader(img[:at(0x100)]), 1<<30); err == nil || fs != (FS{}) {
		t.Errorf("short reader: %+v, %v; want an error", fs, err)
	}
	// The checksum is over the whole 4 KiB, as mkfs.btrfs wrote it.
	sb := kinds["sha256"].sb
	if sum := sha256.Sum256(sb[btrfsCsumSize:]); string(sum[:]) != string(sb[:32]) {
		t.Errorf("sha256 superblock: checksum %x, stored %x", sum, sb[:32])
	}
}

// xxh64 against the reference implementation's published values.
func TestXXH64(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want uint64
	}{
		{"", 0xef46db3751d8e999},
		{"a", 0xd24ec4f1a98c6e5b},
		{"abc", 0x44bc2cf5ad770999},
		{"Nobody inspects the spammish repetition", 0xfbcea83c8a378bf1},
	} {
		if got := xxh64([]byte(tc.in)); got != tc.want {
			t.Errorf("xxh64(%q) = %016x, want %016x", tc.in, got, tc.want)
		}
	}
}
