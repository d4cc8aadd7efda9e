package blockdev

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"testing"
)

func bytesReader(b []byte) io.ReaderAt { return bytes.NewReader(b) }

// extSeed builds a minimal ext superblock image.
func extSeed(compat, incompat, roCompat uint32, label string) []byte {
	b := make([]byte, 2048)
	sb := b[1024:]
	le := binary.LittleEndian
	le.PutUint16(sb[56:], extMagic)
	le.PutUint32(sb[92:], compat)
	le.PutUint32(sb[96:], incompat)
	le.PutUint32(sb[100:], roCompat)
	copy(sb[104:120], "0123456789abcdef")
	copy(sb[120:136], label)
	return b
}

func FuzzProbe(f *testing.F) {
	f.Add(extSeed(0, 0x2, 0x1, "boot"))
	f.Add(extSeed(4, 0x2, 0x1, "j"))
	f.Add(extSeed(4, 0x2c2, 0x46b, "root"))
	f.Add(make([]byte, 4096))
	// Real filesystems, cut to the part Probe reads.
	dir := f.TempDir()
	ext := sparse(f, dir, "e.img", 1<<20)
	run(f, "mkfs.ext4", "-q", "-F", "-L", "root", ext)
	f.Add(mustRead(f, ext)[:2048])
	fat := sparse(f, dir, "f.img", 256<<10)
	run(f, "mkfs.vfat", "-F", "12", "-r", "16", "-n", "cidata", fat)
	f.Add(mustRead(f, fat)[:4096])
	fat32 := sparse(f, dir, "f32.img", 34<<20)
	run(f, "mkfs.vfat", "-F", "32", "-n", "EFI", fat32)
	f.Add(shrinkFAT32(mustRead(f, fat32)))
	iso := mkiso(f, dir+"/i.iso", "-V", "config-2", "-J", "-r")
	f.Add(mustRead(f, iso)[:20*isoSector])
	// XFS: the superblock sector (v5 with 512-byte and 4 KiB sectors, v4).
	f.Add(readHead(f, mkxfs(f, dir, "x.img", "-L", "root"), 512))
	f.Add(readHead(f, mkxfs(f, dir, "x4k.img", "-s", "size=4096", "-L", "root"), 4096))
	f.Add(readHead(f, mkxfs(f, dir, "x4.img", "-m", "crc=0"), 512))
	// btrfs: the superblock alone, which the second probe below places at
	// 64 KiB of a 1 MiB device; one per checksum kind.
	for _, cs := range []string{"crc32c", "xxhash", "sha256", "blake2"} {
		_, sb := btrfsSuper(f, dir, cs+".img", "--csum", cs, "-L", "fedora")
		f.Add(append([]byte(nil), sb...))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		check := func(what string, fs FS, err error) {
			if err != nil && fs != (FS{}) {
				t.Errorf("%s: error %v with a result %+v", what, err, fs)
			}
			if err == nil && fs.Type == "" {
				t.Errorf("%s: no error and no type", what)
			}
		}
		fs, err := Probe(bytesReader(b), int64(len(b)))
		check("at 0", fs, err)
		at := placed{b: b, off: btrfsSuperOff, size: max(btrfsMinSize, btrfsSuperOff+int64(len(b)))}
		fs, err = Probe(at, at.size)
		check("at 64 KiB", fs, err)
	})
}

// placed is a device of size bytes holding b at off and zeros elsewhere.
type placed struct {
	b         []byte
	off, size int64
}

func (p placed) ReadAt(buf []byte, off int64) (int, error) {
	if off < 0 {
		return 0, errors.New("negative offset")
	}
	if off >= p.size {
		return 0, io.EOF
	}
	n := int(min(int64(len(buf)), p.size-off))
	clear(buf[:n])
	// The part of [off, off+n) that overlaps [p.off, p.off+len(p.b)).
	if lo, hi := max(off, p.off), min(off+int64(n), p.off+int64(len(p.b))); lo < hi {
		copy(buf[lo-off:hi-off], p.b[lo-p.off:hi-p.off])
	}
	if n < len(buf) {
		return n, io.EOF
	}
	return n, nil
}

// shrinkFAT32 cuts a FAT32 image down to its reserved sectors, one
// sector of each FAT and the root directory's first cluster, with the
// BPB's FAT length set to match: a small seed with the same structure.
func shrinkFAT32(b []byte) []byte {
	le := binary.LittleEndian
	bps := int(le.Uint16(b[11:]))
	res := int(le.Uint16(b[14:])) * bps
	fats := int(b[16])
	fatLen := int(le.Uint32(b[36:])) * bps
	root := res + fats*fatLen + (int(le.Uint32(b[44:]))-2)*int(b[13])*bps
	out := append([]byte(nil), b[:res]...)
	for i := 0; i < fats; i++ {
		out = append(out, b[res+i*fatLen:res+i*fatLen+bps]...)
	}
	out = append(out, b[root:root+int(b[13])*bps]...)
	le.PutUint32(out[36:], 1)
	return out
}

// The cut-down seeds still probe like the images they came from.
func TestShrunkSeeds(t *testing.T) {
	dir := t.TempDir()
	img := sparse(t, dir, "f32.img", 34<<20)
	run(t, "mkfs.vfat", "-F", "32", "-n", "EFI", img)
	want := checkBlkid(t, img)
	b := shrinkFAT32(mustRead(t, img))
	got, err := Probe(bytesReader(b), int64(len(b)))
	if err != nil || got != want || len(b) > 64<<10 {
		t.Errorf("shrunk FAT32 (%d bytes): %+v, %v; want %+v", len(b), got, err, want)
	}
}

// The XFS seeds (the superblock sector) and the btrfs seeds (the
// superblock, placed at 64 KiB of a 1 MiB device) probe like the images
// they came from.
func TestXFSBTRFSSeeds(t *testing.T) {
	dir := t.TempDir()
	x := mkxfs(t, dir, "x.img", "-s", "size=4096", "-L", "root")
	want := checkBlkid(t, x)
	b := readHead(t, x, 4096)
	if got, err := Probe(bytesReader(b), int64(len(b))); err != nil || got != want {
		t.Errorf("xfs seed: %+v, %v; want %+v", got, err, want)
	}
	bt := mkbtrfs(t, dir, "b.img", "--csum", "xxhash", "-L", "fedora")
	want = checkBlkid(t, bt)
	sb := readHead(t, bt, btrfsSuperOff+btrfsSuperSize)[btrfsSuperOff:]
	at := placed{b: sb, off: btrfsSuperOff, size: btrfsMinSize}
	if got, err := Probe(at, at.size); err != nil || got != want {
		t.Errorf("btrfs seed: %+v, %v; want %+v", got, err, want)
	}
}
