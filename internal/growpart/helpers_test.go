package growpart

import (
	"bytes"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math"
	"testing"
	"unicode/utf16"
)

const (
	kib = int64(1) << 10
	mib = int64(1) << 20
	gib = int64(1) << 30
	tib = int64(1) << 40
)

// memDisk is a sparse in-memory disk: unwritten bytes read as zero, so a
// 3 TiB disk costs only the sectors written. It counts the writes.
type memDisk struct {
	size   int64
	chunks map[int64][]byte
	writes int
}

const chunk = 64 * kib

func newMemDisk(size int64) *memDisk { return &memDisk{size: size, chunks: map[int64][]byte{}} }

func (m *memDisk) ReadAt(b []byte, off int64) (int, error) {
	if off < 0 {
		return 0, errors.New("negative offset")
	}
	n := 0
	for n < len(b) && off+int64(n) < m.size {
		p := off + int64(n)
		c, in := p/chunk, p%chunk
		k := int(min(chunk-in, int64(len(b)-n), m.size-p))
		if buf, ok := m.chunks[c]; ok {
			copy(b[n:n+k], buf[in:])
		} else {
			clear(b[n : n+k])
		}
		n += k
	}
	if n < len(b) {
		return n, io.EOF
	}
	return n, nil
}

func (m *memDisk) WriteAt(b []byte, off int64) (int, error) {
	if off < 0 || off+int64(len(b)) > m.size {
		return 0, fmt.Errorf("write of %d bytes at %d past the disk's %d bytes", len(b), off, m.size)
	}
	m.writes++
	for n := 0; n < len(b); {
		p := off + int64(n)
		c, in := p/chunk, p%chunk
		buf, ok := m.chunks[c]
		if !ok {
			buf = make([]byte, chunk)
			m.chunks[c] = buf
		}
		n += copy(buf[in:], b[n:])
	}
	return len(b), nil
}

// snapshot is every byte written so far, for "nothing changed" checks.
func (m *memDisk) snapshot() map[int64]string {
	s := map[int64]string{}
	for k, v := range m.chunks {
		s[k] = string(v)
	}
	return s
}

func (m *memDisk) disk(ss int64) Disk {
	return Disk{Name: "/dev/test", RW: m, SectorSize: ss, Size: m.size}
}

// linuxFS is the GPT type GUID of a Linux filesystem partition, as stored.
var linuxFS = guid(0x0FC63DAF, 0x8483, 0x4772, 0x8E79, 0x3D69D8477DE4)

func guid(a uint32, b, c, d uint16, e uint64) []byte {
	g := make([]byte, 16)
	le.PutUint32(g[0:], a)
	le.PutUint16(g[4:], b)
	le.PutUint16(g[6:], c)
	g[8], g[9] = byte(d>>8), byte(d)
	for i := range 6 {
		g[10+i] = byte(e >> (8 * (5 - i)))
	}
	return g
}

// gptPart is a partition for writeGPT: its entry index (0 for the next
// one) and LBAs.
type gptPart struct {
	idx         int
	first, last int64
}

// writeGPT writes to w a GPT as sgdisk makes it on a disk of imageSize
// bytes with ss-byte sectors: a protective MBR, 128 entries of 128 bytes,
// the backup in the image's last LBA. The disk w stands for may be bigger
// (the volume grown after the image was made).
func writeGPT(t testing.TB, w io.WriterAt, ss, imageSize int64, parts ...gptPart) {
	t.Helper()
	n := imageSize / ss
	const count, esize = 128, 128
	entS := (count*esize + ss - 1) / ss
	arr := make([]byte, count*esize)
	for i, p := range parts {
		idx := p.idx
		if idx == 0 {
			idx = i
		}
		e := arr[idx*esize : (idx+1)*esize]
		copy(e[0:], linuxFS)
		copy(e[16:], guid(0x11111111+uint32(idx), 0x2222, 0x3333, 0x4444, 0x555555555555))
		le.PutUint64(e[32:], uint64(p.first))
		le.PutUint64(e[40:], uint64(p.last))
		for j, u := range utf16.Encode([]rune(fmt.Sprintf("part%d", idx+1))) {
			le.PutUint16(e[56+2*j:], u)
		}
	}
	hdr := func(my, alt, entLBA int64) []byte {
		h := make([]byte, ss)
		copy(h, "EFI PART")
		le.PutUint32(h[8:], 0x00010000)
		le.PutUint32(h[12:], 92)
		le.PutUint64(h[24:], uint64(my))
		le.PutUint64(h[32:], uint64(alt))
		le.PutUint64(h[40:], uint64(2+entS))
		le.PutUint64(h[48:], uint64(n-2-entS))
		copy(h[56:], guid(0xDEADBEEF, 0x1234, 0x5678, 0x9abc, 0xdef012345678))
		le.PutUint64(h[72:], uint64(entLBA))
		le.PutUint32(h[80:], count)
		le.PutUint32(h[84:], esize)
		le.PutUint32(h[88:], crc32.ChecksumIEEE(arr))
		le.PutUint32(h[16:], crc32.ChecksumIEEE(h[:92]))
		return h
	}
	mbr := make([]byte, 512)
	mbr[446+4] = 0xEE
	copy(mbr[446+1:], []byte{0, 2, 0})
	copy(mbr[446+5:], chs(min(n-1, math.MaxUint32)))
	le.PutUint32(mbr[446+8:], 1)
	le.PutUint32(mbr[446+12:], uint32(min(n-1, math.MaxUint32)))
	mbr[510], mbr[511] = 0x55, 0xAA
	for _, wr := range []struct {
		off int64
		b   []byte
	}{
		{0, mbr},
		{ss, hdr(1, n-1, 2)},
		{2 * ss, arr},
		{(n - 1 - entS) * ss, arr},
		{(n - 1) * ss, hdr(n-1, 1, n-1-entS)},
	} {
		if _, err := w.WriteAt(wr.b, wr.off); err != nil {
			t.Fatalf("writeGPT: %v", err)
		}
	}
}

// mbrPart is a primary MBR entry for writeMBR: its slot (0-3), type and
// sectors.
type mbrPart struct {
	slot        int
	typ         byte
	start, size int64
}

// writeMBR writes an MBR with the given primary entries.
func writeMBR(t testing.TB, w io.WriterAt, parts ...mbrPart) {
	t.Helper()
	mbr := make([]byte, 512)
	le.PutUint32(mbr[440:], 0x1234abcd)
	for _, p := range parts {
		e := mbr[446+16*p.slot:]
		e[4] = p.typ
		copy(e[1:4], chs(p.start))
		copy(e[5:8], chs(p.start+p.size-1))
		le.PutUint32(e[8:], uint32(p.start))
		le.PutUint32(e[12:], uint32(p.size))
	}
	mbr[510], mbr[511] = 0x55, 0xAA
	if _, err := w.WriteAt(mbr, 0); err != nil {
		t.Fatalf("writeMBR: %v", err)
	}
}

// corrupt flips one byte at off.
func corrupt(t testing.TB, d *memDisk, off int64) {
	t.Helper()
	b := make([]byte, 1)
	d.ReadAt(b, off)
	b[0] ^= 0xff
	if _, err := d.WriteAt(b, off); err != nil {
		t.Fatal(err)
	}
}

func TestMemDisk(t *testing.T) {
	d := newMemDisk(3*chunk + 10)
	want := bytes.Repeat([]byte{7}, int(chunk)+20)
	if _, err := d.WriteAt(want, chunk-10); err != nil {
		t.Fatal(err)
	}
	got := make([]byte, len(want)+20)
	if n, err := d.ReadAt(got, chunk-20); n != len(got) || err != nil {
		t.Fatalf("ReadAt = %d, %v", n, err)
	}
	if !bytes.Equal(got[10:len(want)+10], want) || got[0] != 0 || got[len(got)-1] != 0 {
		t.Errorf("read back differs")
	}
	if n, err := d.ReadAt(make([]byte, 20), 3*chunk); n != 10 || err != io.EOF {
		t.Errorf("ReadAt at the end = %d, %v; want 10, EOF", n, err)
	}
}

// writeEBR writes an extended boot record at sector lba (of ss bytes):
// its entries' starts are relative, as in an EBR (a data partition's to
// this EBR, a link's to the extended partition's start).
func writeEBR(t testing.TB, w io.WriterAt, ss, lba int64, parts ...mbrPart) {
	t.Helper()
	ebr := make([]byte, 512)
	for _, p := range parts {
		e := ebr[446+16*p.slot:]
		e[4] = p.typ
		le.PutUint32(e[8:], uint32(p.start))
		le.PutUint32(e[12:], uint32(p.size))
	}
	ebr[510], ebr[511] = 0x55, 0xAA
	if _, err := w.WriteAt(ebr, lba*ss); err != nil {
		t.Fatalf("writeEBR: %v", err)
	}
}
