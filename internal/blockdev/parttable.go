package blockdev

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"strings"
	"unicode/utf16"
)

// PartTable is a disk's partition table, as far as naming partitions goes.
type PartTable struct {
	Type  string // "gpt" or "dos" (blkid's PTTYPE)
	UUID  string // GPT disk GUID, or the MBR disk signature as %08x (blkid's PTUUID)
	Parts []Part // in table order; GPT: the used entries; MBR: the four primary slots in use
}

// Part is one partition-table entry.
type Part struct {
	Num   int    // the kernel's partition number
	Start int64  // byte offset on the disk
	Size  int64  // bytes
	Type  string // GPT type GUID, or MBR type as two hex digits ("83", "0c")
	UUID  string // GPT unique GUID; MBR "<signature>-<num>" (empty when the signature is 0)
	Name  string // GPT partition name
}

// PartUUID gives partition num's PARTUUID as blkid reports it, or "".
// For MBR logical partitions (5 and up) it is derived from the disk
// signature alone, like the kernel does.
func (t PartTable) PartUUID(num int) string {
	for _, p := range t.Parts {
		if p.Num == num {
			return p.UUID
		}
	}
	if t.Type == "dos" && num > 4 && num < 256 && t.UUID != "" {
		return fmt.Sprintf("%s-%02x", t.UUID, num)
	}
	return ""
}

// PartLabel gives GPT partition num's name as blkid's PART_ENTRY_NAME
// (what root=PARTLABEL= and /dev/disk/by-partlabel name): UTF-8,
// trailing white space trimmed. MBR partitions have none: "".
func (t PartTable) PartLabel(num int) string {
	if t.Type != "gpt" {
		return ""
	}
	for _, p := range t.Parts {
		if p.Num == num {
			return strings.TrimRight(p.Name, " \t\n\v\f\r")
		}
	}
	return ""
}

// ErrNoPartTable is returned by ReadPartTable when there is no table.
var ErrNoPartTable = errors.New("no partition table")

const (
	gptMaxEntries   = 4096
	gptMaxEntrySize = 4096
)

// ReadPartTable reads the GPT or, failing that, the MBR partition table
// of a disk of size bytes. Only 512-byte logical sectors are looked at
// for the MBR; GPT is tried with 512 and 4096.
func ReadPartTable(r io.ReaderAt, size int64) (PartTable, error) {
	if !has(size, 0, 512) {
		return PartTable{}, ErrNoPartTable
	}
	mbr, err := readAt(r, size, 0, 512)
	if err != nil {
		return PartTable{}, err
	}
	if mbr[510] != 0x55 || mbr[511] != 0xAA {
		return PartTable{}, ErrNoPartTable
	}
	protective := false
	for i := 0; i < 4; i++ {
		if mbr[446+16*i+4] == 0xEE {
			protective = true
		}
	}
	if protective {
		var errs []error
		for _, ss := range []int64{512, 4096} {
			t, err := readGPT(r, size, ss)
			if err == nil {
				return t, nil
			}
			errs = append(errs, fmt.Errorf("%d-byte sectors: %w", ss, err))
		}
		return PartTable{}, fmt.Errorf("protective MBR but no valid GPT: %w", joinErrs(errs))
	}
	return readMBR(mbr)
}

// readMBR parses the four primary entries of an MBR.
func readMBR(mbr []byte) (PartTable, error) {
	le := binary.LittleEndian
	sig := le.Uint32(mbr[440:])
	t := PartTable{Type: "dos"}
	if sig != 0 {
		t.UUID = fmt.Sprintf("%08x", sig)
	}
	for i := 0; i < 4; i++ {
		e := mbr[446+16*i : 446+16*(i+1)]
		if e[0] != 0 && e[0] != 0x80 {
			return PartTable{}, fmt.Errorf("mbr entry %d: bad boot indicator %#x", i+1, e[0])
		}
		typ := e[4]
		start, n := int64(le.Uint32(e[8:])), int64(le.Uint32(e[12:]))
		if typ == 0 || n == 0 {
			continue
		}
		p := Part{Num: i + 1, Start: start * 512, Size: n * 512, Type: fmt.Sprintf("%02x", typ)}
		if t.UUID != "" {
			p.UUID = fmt.Sprintf("%s-%02x", t.UUID, p.Num)
		}
		t.Parts = append(t.Parts, p)
	}
	return t, nil
}

// readGPT reads the primary GPT header at LBA 1, or the backup at the
// last LBA when the primary is damaged, with ss-byte sectors.
func readGPT(r io.ReaderAt, size, ss int64) (PartTable, error) {
	t, err := readGPTAt(r, size, ss, 1)
	if err == nil {
		return t, nil
	}
	last := size/ss - 1
	if last <= 1 {
		return PartTable{}, err
	}
	t, err2 := readGPTAt(r, size, ss, last)
	if err2 != nil {
		return PartTable{}, fmt.Errorf("primary header: %w; backup header: %v", err, err2)
	}
	return t, nil
}

// readGPTAt reads the GPT header at lba and its entry array.
func readGPTAt(r io.ReaderAt, size, ss, lba int64) (PartTable, error) {
	le := binary.LittleEndian
	h, err := readAt(r, size, lba*ss, int(ss))
	if err != nil {
		return PartTable{}, err
	}
	if string(h[:8]) != "EFI PART" {
		return PartTable{}, fmt.Errorf("no EFI PART signature at LBA %d", lba)
	}
	hsize := int64(le.Uint32(h[12:]))
	if hsize < 92 || hsize > ss {
		return PartTable{}, fmt.Errorf("header size %d", hsize)
	}
	hdr := append([]byte(nil), h[:hsize]...)
	want := le.Uint32(hdr[16:])
	clear(hdr[16:20])
	if got := crc32.ChecksumIEEE(hdr); got != want {
		return PartTable{}, fmt.Errorf("header CRC %08x, stored %08x", got, want)
	}
	if my := int64(le.Uint64(h[24:])); my != lba {
		return PartTable{}, fmt.Errorf("header at LBA %d says it is at %d", lba, my)
	}
	entLBA := le.Uint64(h[72:])
	n := int64(le.Uint32(h[80:]))
	esize := int64(le.Uint32(h[84:]))
	if n > gptMaxEntries || esize < 128 || esize > gptMaxEntrySize || esize%8 != 0 {
		return PartTable{}, fmt.Errorf("%d entries of %d bytes", n, esize)
	}
	if entLBA > uint64(size/ss) {
		return PartTable{}, fmt.Errorf("entry array at LBA %d beyond the disk", entLBA)
	}
	arr, err := readAt(r, size, int64(entLBA)*ss, int(n*esize))
	if err != nil {
		return PartTable{}, fmt.Errorf("entry array: %w", err)
	}
	if got, want := crc32.ChecksumIEEE(arr), le.Uint32(h[88:]); got != want {
		return PartTable{}, fmt.Errorf("entry array CRC %08x, stored %08x", got, want)
	}
	t := PartTable{Type: "gpt", UUID: formatGUID(h[56:72])}
	for i := int64(0); i < n; i++ {
		e := arr[i*esize : (i+1)*esize]
		if isZero(e[:16]) {
			continue
		}
		first, last := int64(le.Uint64(e[32:])), int64(le.Uint64(e[40:]))
		if first < 0 || last < first || last >= size/ss {
			return PartTable{}, fmt.Errorf("entry %d: LBAs %d..%d outside the disk", i+1, first, last)
		}
		t.Parts = append(t.Parts, Part{
			Num:   int(i + 1),
			Start: first * ss,
			Size:  (last - first + 1) * ss,
			Type:  formatGUID(e[0:16]),
			UUID:  formatGUID(e[16:32]),
			Name:  utf16le(e[56:128]),
		})
	}
	return t, nil
}

// formatGUID prints a GUID stored mixed-endian (the first three fields
// little-endian) as lower-case 8-4-4-4-12.
func formatGUID(b []byte) string {
	le := binary.LittleEndian
	return fmt.Sprintf("%08x-%04x-%04x-%x-%x", le.Uint32(b[0:]), le.Uint16(b[4:]), le.Uint16(b[6:]), b[8:10], b[10:16])
}

func isZero(b []byte) bool {
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}

// utf16le decodes a NUL-terminated little-endian UTF-16 field.
func utf16le(b []byte) string {
	u := make([]uint16, 0, len(b)/2)
	for i := 0; i+1 < len(b); i += 2 {
		c := binary.LittleEndian.Uint16(b[i:])
		if c == 0 {
			break
		}
		u = append(u, c)
	}
	return strings.ToValidUTF8(string(utf16.Decode(u)), "\uFFFD")
}
