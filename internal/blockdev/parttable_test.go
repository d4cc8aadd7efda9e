package blockdev

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"hash/crc32"
	"os"
	"strconv"
	"strings"
	"testing"
	"unicode/utf16"
)

// sfdiskTable is `sfdisk --json`'s answer.
type sfdiskTable struct {
	PartitionTable struct {
		Label      string
		ID         string
		SectorSize int64
		Partitions []struct {
			Node        string
			Start, Size int64
			Type        string
			UUID        string
			Name        string
		}
	}
}

func sfdiskJSON(t testing.TB, img string) sfdiskTable {
	t.Helper()
	var st sfdiskTable
	if err := json.Unmarshal([]byte(run(t, "sfdisk", "--json", img)), &st); err != nil {
		t.Fatalf("sfdisk --json %s: %v", img, err)
	}
	return st
}

// mkdisk partitions a new disk image of size bytes with an sfdisk script.
func mkdisk(t testing.TB, dir, name string, size int64, script string) string {
	t.Helper()
	img := sparse(t, dir, name, size)
	runIn(t, script, "sfdisk", "-q", "--no-reread", "--no-tell-kernel", img)
	return img
}

const (
	gptScript = `label: gpt
label-id: 01234567-89AB-CDEF-0123-456789ABCDEF
size=4MiB, type=linux, name=root
size=1MiB, type=uefi, uuid=8C5E9F0A-6B1D-4F2E-8A3C-1D2E3F4A5B6C, name="EFI System"
type=linux
`
	mbrScript = `label: dos
label-id: 0x1c7b5e1d
size=4MiB, type=83, bootable
type=5
size=2MiB, type=c
size=2MiB, type=83
`
)

func readTableFile(t testing.TB, img string) (PartTable, error) {
	t.Helper()
	f, err := os.Open(img)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		t.Fatal(err)
	}
	return ReadPartTable(f, st.Size())
}

func TestReadPartTableGPT(t *testing.T) {
	img := mkdisk(t, t.TempDir(), "gpt.img", 16<<20, gptScript)
	got, err := readTableFile(t, img)
	if err != nil {
		t.Fatal(err)
	}
	want := sfdiskJSON(t, img).PartitionTable
	bl := blkid(t, img)
	if got.Type != "gpt" || got.Type != bl["PTTYPE"] || got.UUID != bl["PTUUID"] || got.UUID != strings.ToLower(want.ID) {
		t.Errorf("table %s %s; blkid says %v, sfdisk %s", got.Type, got.UUID, bl, want.ID)
	}
	if len(got.Parts) != len(want.Partitions) {
		t.Fatalf("%d partitions, sfdisk says %d", len(got.Parts), len(want.Partitions))
	}
	for i, w := range want.Partitions {
		g := got.Parts[i]
		num, _ := strconv.Atoi(strings.TrimPrefix(w.Node, img))
		if g.Num != num || g.Start != w.Start*512 || g.Size != w.Size*512 || g.UUID != strings.ToLower(w.UUID) ||
			g.Type != strings.ToLower(w.Type) || g.Name != w.Name {
			t.Errorf("partition %d = %+v, sfdisk says %+v", i+1, g, w)
		}
		if pu := strings.TrimSpace(run(t, "sfdisk", "--part-uuid", img, strconv.Itoa(num))); got.PartUUID(num) != strings.ToLower(pu) {
			t.Errorf("PartUUID(%d) = %s, sfdisk --part-uuid says %s", num, got.PartUUID(num), pu)
		}
	}
	if got.PartUUID(2) != "8c5e9f0a-6b1d-4f2e-8a3c-1d2e3f4a5b6c" || got.PartUUID(4) != "" || got.PartUUID(0) != "" {
		t.Errorf("PartUUID(2) = %q, (4) = %q", got.PartUUID(2), got.PartUUID(4))
	}
	// A disk with a GPT has no filesystem; Probe says what it found.
	if fs, err := probeFile(t, img); err == nil || !strings.Contains(err.Error(), "gpt partition table") {
		t.Errorf("Probe(gpt disk) = %+v, %v", fs, err)
	}
}

func TestReadPartTableGPTDamaged(t *testing.T) {
	img := mkdisk(t, t.TempDir(), "gpt.img", 8<<20, gptScript)
	good := mustRead(t, img)
	ok, err := ReadPartTable(bytesReader(good), int64(len(good)))
	if err != nil {
		t.Fatal(err)
	}
	last := int64(len(good)) - 512
	for _, tc := range []struct {
		name   string
		edit   func(b []byte)
		wantOK bool
	}{
		// Primary header broken: the backup at the last LBA answers.
		{"primary header crc", func(b []byte) { b[512+100-8] ^= 1; b[512+40] ^= 1 }, true},
		{"primary entries", func(b []byte) { b[1024+16] ^= 0xff }, true},
		{"both headers", func(b []byte) { b[512] = 'X'; b[last] = 'X' }, false},
		{"entry count", func(b []byte) {
			for _, h := range []int64{512, last} {
				binary.LittleEndian.PutUint32(b[h+80:], 1<<30)
				refreshGPTCRC(b[h : h+512])
			}
		}, false},
		{"entries past the end", func(b []byte) {
			for _, h := range []int64{512, last} {
				binary.LittleEndian.PutUint64(b[h+72:], 1<<40)
				refreshGPTCRC(b[h : h+512])
			}
		}, false},
		{"protective MBR only", func(b []byte) { clear(b[512:]) }, false},
	} {
		b := append([]byte(nil), good...)
		tc.edit(b)
		got, err := ReadPartTable(bytesReader(b), int64(len(b)))
		if tc.wantOK {
			if err != nil || fmt.Sprint(got) != fmt.Sprint(ok) {
				t.Errorf("%s: %+v, %v; want the undamaged table", tc.name, got, err)
			}
		} else if err == nil {
			t.Errorf("%s: %+v, want an error", tc.name, got)
		}
	}
	// Truncated disk: the primary header is there, the entries are not.
	if got, err := ReadPartTable(bytesReader(good[:1024]), 1024); err == nil {
		t.Errorf("truncated: %+v, want an error", got)
	}
}

// refreshGPTCRC recomputes a header's CRC after an edit.
func refreshGPTCRC(h []byte) {
	n := binary.LittleEndian.Uint32(h[12:])
	clear(h[16:20])
	binary.LittleEndian.PutUint32(h[16:], crc32.ChecksumIEEE(h[:n]))
}

func TestReadPartTableMBR(t *testing.T) {
	img := mkdisk(t, t.TempDir(), "mbr.img", 16<<20, mbrScript)
	got, err := readTableFile(t, img)
	if err != nil {
		t.Fatal(err)
	}
	want := sfdiskJSON(t, img).PartitionTable
	bl := blkid(t, img)
	if got.Type != "dos" || got.Type != bl["PTTYPE"] || got.UUID != bl["PTUUID"] || "0x"+got.UUID != want.ID {
		t.Errorf("table %s %s; blkid says %v, sfdisk %s", got.Type, got.UUID, bl, want.ID)
	}
	primary := 0
	for _, w := range want.Partitions {
		num, _ := strconv.Atoi(strings.TrimPrefix(w.Node, img))
		if pu := got.PartUUID(num); pu != fmt.Sprintf("%s-%02x", bl["PTUUID"], num) {
			t.Errorf("PartUUID(%d) = %s", num, pu)
		}
		if num > 4 {
			continue
		}
		g := got.Parts[primary]
		primary++
		if g.Num != num || g.Start != w.Start*512 || g.Size != w.Size*512 || !sameHex(g.Type, w.Type) {
			t.Errorf("partition %d = %+v, sfdisk says %+v", num, g, w)
		}
	}
	if primary != len(got.Parts) {
		t.Errorf("%d primary partitions, sfdisk says %d", len(got.Parts), primary)
	}
	if fs, err := probeFile(t, img); err == nil || !strings.Contains(err.Error(), "dos partition table") {
		t.Errorf("Probe(mbr disk) = %+v, %v", fs, err)
	}

	// No signature: no PARTUUIDs, as blkid.
	b := mustRead(t, img)
	clear(b[440:444])
	z, err := ReadPartTable(bytesReader(b), int64(len(b)))
	if err != nil || z.UUID != "" || z.PartUUID(1) != "" || len(z.Parts) != 2 {
		t.Errorf("zero signature: %+v, %v", z, err)
	}
	b[446] = 0x12 // boot flag
	if z, err := ReadPartTable(bytesReader(b), int64(len(b))); err == nil {
		t.Errorf("bad boot flag: %+v, want an error", z)
	}
	clear(b[510:512])
	if _, err := ReadPartTable(bytesReader(b), int64(len(b))); err != ErrNoPartTable {
		t.Errorf("no 55AA: %v, want ErrNoPartTable", err)
	}
}

func FuzzReadPartTable(f *testing.F) {
	dir := f.TempDir()
	for _, s := range []string{gptScript, mbrScript} {
		img := mkdisk(f, dir, "d.img", 4<<20, strings.ReplaceAll(strings.ReplaceAll(s, "4MiB", "1MiB"), "2MiB", "512KiB"))
		b := mustRead(f, img)
		// The tables are in the first 34 sectors (the backup GPT is not needed).
		f.Add(b[:34*512])
		os.Remove(img)
	}
	f.Add(make([]byte, 512))
	f.Fuzz(func(t *testing.T, b []byte) {
		pt, err := ReadPartTable(bytesReader(b), int64(len(b)))
		if err != nil {
			return
		}
		for _, p := range pt.Parts {
			if p.Num < 1 || p.Start < 0 || p.Size <= 0 {
				t.Errorf("bad partition %+v", p)
			}
			if pt.Type == "gpt" && p.Start+p.Size > int64(len(b)) {
				t.Errorf("partition %+v beyond the disk (%d bytes)", p, len(b))
			}
		}
	})
}

func sameHex(a, b string) bool {
	x, err1 := strconv.ParseUint(a, 16, 8)
	y, err2 := strconv.ParseUint(b, 16, 8)
	return err1 == nil && err2 == nil && x == y && len(a) == 2
}

// partxNames returns libblkid's partition names (PART_ENTRY_NAME, what
// udev links as /dev/disk/by-partlabel) by number, from `partx -P`.
func partxNames(t testing.TB, img string) map[int]string {
	t.Helper()
	names := map[int]string{}
	for _, line := range strings.Split(strings.TrimSpace(run(t, "partx", "-g", "-P", "-o", "NR,NAME", img)), "\n") {
		nr, name, ok := strings.Cut(line, `" NAME="`)
		n, err := strconv.Atoi(strings.TrimPrefix(nr, `NR="`))
		if !ok || err != nil || !strings.HasSuffix(name, `"`) {
			t.Fatalf("partx line %q", line)
		}
		names[n] = unescapePartx(strings.TrimSuffix(name, `"`))
	}
	return names
}

// unescapePartx undoes partx -P's \xHH escapes.
func unescapePartx(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) && s[i+1] == 'x' {
			if n, err := strconv.ParseUint(s[i+2:i+4], 16, 8); err == nil {
				b.WriteByte(byte(n))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// PartLabel gives a GPT partition's name as libblkid does: UTF-16LE
// turned UTF-8 (surrogate pairs joined), trailing white space trimmed,
// all 36 characters when there is no NUL; MBR partitions have none.
func TestPartLabel(t *testing.T) {
	dir := t.TempDir()
	img := mkdisk(t, dir, "names.img", 16<<20, `label: gpt
size=1MiB, name="root"
size=1MiB, name="Räksmörgås ✓"
size=1MiB, name="trail  "
size=1MiB, name="a b=c"
size=1MiB, name="xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"
size=1MiB, name="set below"
type=linux
`)
	// sfdisk cannot write characters outside the BMP: write partition 6's
	// name by hand, with a surrogate pair, and fix both CRCs.
	b := mustRead(t, img)
	le := binary.LittleEndian
	name := b[1024+5*128+56 : 1024+6*128]
	clear(name)
	for i, u := range utf16.Encode([]rune("😀 ok")) {
		le.PutUint16(name[2*i:], u)
	}
	le.PutUint32(b[512+88:], crc32.ChecksumIEEE(b[1024:1024+128*128]))
	refreshGPTCRC(b[512:1024])
	if err := os.WriteFile(img, b, 0o644); err != nil {
		t.Fatal(err)
	}

	want := partxNames(t, img)
	got, err := readTableFile(t, img)
	if err != nil {
		t.Fatal(err)
	}
	for n, w := range map[int]string{1: "root", 2: "Räksmörgås ✓", 3: "trail", 4: "a b=c", 5: strings.Repeat("x", 36), 6: "😀 ok", 7: ""} {
		if want[n] != w {
			t.Errorf("partx says partition %d is %q, the test wants %q", n, want[n], w)
		}
		if g := got.PartLabel(n); g != want[n] {
			t.Errorf("PartLabel(%d) = %q, partx says %q", n, g, want[n])
		}
	}
	if got.PartLabel(8) != "" || got.PartLabel(0) != "" {
		t.Errorf("PartLabel of a missing partition: %q, %q", got.PartLabel(8), got.PartLabel(0))
	}
	mbr, err := readTableFile(t, mkdisk(t, dir, "mbr.img", 16<<20, mbrScript))
	if err != nil || mbr.PartLabel(1) != "" {
		t.Errorf("MBR PartLabel(1) = %q, %v", mbr.PartLabel(1), err)
	}
}
