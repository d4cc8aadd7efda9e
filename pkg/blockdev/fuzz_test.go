package blockdev

import (
	"bytes"
	"encoding/binary"
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
	f.Fuzz(func(t *testing.T, b []byte) {
		fs, err := Probe(bytesReader(b), int64(len(b)))
		if err != nil && fs != (FS{}) {
			t.Errorf("error %v with a result %+v", err, fs)
		}
		if err == nil && fs.Type == "" {
			t.Errorf("no error and no type")
		}
	})
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
