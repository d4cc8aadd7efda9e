package growpart

import (
	"cmp"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"math"
	"slices"
)

// Limits on a GPT entry array, well above what any tool writes (128
// entries of 128 bytes), so that a hostile header cannot make Plan read
// or allocate much.
const (
	gptMaxArray     = 1 << 20
	gptMaxEntrySize = 4096
)

var le = binary.LittleEndian

// gptHeader is a GPT header, its fields at their UEFI offsets in raw.
type gptHeader struct {
	raw                      []byte // the header's HeaderSize bytes
	my, alt, first, last     int64
	entLBA, count, entrySize int64
}

// entSectors is the number of sectors the entry array fills.
func (h gptHeader) entSectors(ss int64) int64 {
	return (h.count*h.entrySize + ss - 1) / ss
}

// gptEntry is a used entry: its index in the array and its LBAs.
type gptEntry struct {
	idx         int64
	first, last int64
}

// parseGPTHeader checks and reads the header in sector b, read from LBA
// lba of a disk of n sectors of ss bytes.
func parseGPTHeader(b []byte, lba, n, ss int64) (gptHeader, error) {
	if string(b[:8]) != "EFI PART" {
		return gptHeader{}, fmt.Errorf("no \"EFI PART\" signature at LBA %d", lba)
	}
	hs := int64(le.Uint32(b[12:]))
	if hs < 92 || hs > ss {
		return gptHeader{}, fmt.Errorf("header at LBA %d: header size %d (want 92 to %d)", lba, hs, ss)
	}
	raw := slices.Clone(b[:hs])
	if got, want := headerCRC(raw), le.Uint32(raw[16:]); got != want {
		return gptHeader{}, fmt.Errorf("header at LBA %d: CRC %08x, stored %08x", lba, got, want)
	}
	u := func(off int) int64 {
		v := le.Uint64(raw[off:])
		if v > math.MaxInt64 {
			return -1
		}
		return int64(v)
	}
	h := gptHeader{raw: raw, my: u(24), alt: u(32), first: u(40), last: u(48), entLBA: u(72),
		count: int64(le.Uint32(raw[80:])), entrySize: int64(le.Uint32(raw[84:]))}
	switch {
	case h.my != lba:
		return gptHeader{}, fmt.Errorf("header at LBA %d says it is at LBA %d", lba, h.my)
	case h.entrySize < 128 || h.entrySize > gptMaxEntrySize || h.entrySize%8 != 0:
		return gptHeader{}, fmt.Errorf("header at LBA %d: entry size %d (want 128 to %d, a multiple of 8)", lba, h.entrySize, gptMaxEntrySize)
	case h.count < 1 || h.count*h.entrySize > gptMaxArray:
		return gptHeader{}, fmt.Errorf("header at LBA %d: %d entries of %d bytes (at most %d bytes)", lba, h.count, h.entrySize, gptMaxArray)
	case h.first < 2 || h.last < h.first || h.last >= n:
		return gptHeader{}, fmt.Errorf("header at LBA %d: usable LBAs %d..%d outside the disk's 2..%d", lba, h.first, h.last, n-1)
	case h.entLBA < 2 || h.entLBA > n-h.entSectors(ss):
		return gptHeader{}, fmt.Errorf("header at LBA %d: entry array at LBA %d outside the disk", lba, h.entLBA)
	}
	return h, nil
}

// headerCRC is the CRC32 of a header with its CRC field taken as zero.
func headerCRC(raw []byte) uint32 {
	b := slices.Clone(raw)
	clear(b[16:20])
	return crc32.ChecksumIEEE(b)
}

// readEntries reads h's entry array and checks its CRC, and returns it
// with its used entries sorted by first LBA: each inside the usable LBAs
// and none overlapping another.
func readEntries(d Disk, h gptHeader, which string) ([]byte, []gptEntry, error) {
	arr, err := readAt(d, h.entLBA*d.SectorSize, int(h.count*h.entrySize))
	if err != nil {
		return nil, nil, fmt.Errorf("%s entry array: %w", which, err)
	}
	if got, want := crc32.ChecksumIEEE(arr), le.Uint32(h.raw[88:]); got != want {
		return nil, nil, fmt.Errorf("%s entry array: CRC %08x, stored %08x", which, got, want)
	}
	var used []gptEntry
	for i := range h.count {
		e := arr[i*h.entrySize : (i+1)*h.entrySize]
		if isZero(e[:16]) {
			continue
		}
		first, last := le.Uint64(e[32:]), le.Uint64(e[40:])
		if first < uint64(h.first) || last > uint64(h.last) || last < first {
			return nil, nil, fmt.Errorf("partition %d: LBAs %d..%d outside the usable LBAs %d..%d", i+1, first, last, h.first, h.last)
		}
		used = append(used, gptEntry{idx: i, first: int64(first), last: int64(last)})
	}
	slices.SortFunc(used, func(a, b gptEntry) int { return cmp.Compare(a.first, b.first) })
	for i := 1; i < len(used); i++ {
		if used[i].first <= used[i-1].last {
			return nil, nil, fmt.Errorf("partitions %d and %d overlap", used[i-1].idx+1, used[i].idx+1)
		}
	}
	return arr, used, nil
}

// planGPT plans growing partition num of a GPT disk whose sector 0 is mbr.
// With check, the backup header at the disk's end is verified too (the
// read back of a grown table).
func planGPT(d Disk, mbr []byte, num int, check bool) (*Change, error) {
	ss := d.SectorSize
	n := d.Size / ss
	if err := checkProtectiveMBR(mbr); err != nil {
		return nil, err
	}
	h, err := readPrimaryHeader(d, n)
	if err != nil {
		return nil, err
	}
	arr, used, err := readEntries(d, h, "primary")
	if err != nil {
		return nil, err
	}
	if check {
		if err := checkBackup(d, h, arr); err != nil {
			return nil, err
		}
	}
	if int64(num) > h.count {
		return nil, fmt.Errorf("partition %d is not in the GPT (%d entries)", num, h.count)
	}
	ti := slices.IndexFunc(used, func(e gptEntry) bool { return e.idx == int64(num-1) })
	if ti < 0 {
		return nil, fmt.Errorf("partition %d is not in the GPT (its entry is unused)", num)
	}
	t := used[ti]
	c := &Change{Table: "gpt", Part: num, Start: t.first, OldSize: t.last - t.first + 1}
	c.NewSize = c.OldSize

	// Where the backup goes: the header in the last LBA, its entry
	// array just before it, the usable space up to the array.
	l := gptLayout{alt: n - 1}
	l.entLBA = l.alt - h.entSectors(ss)
	l.last = l.entLBA - 1
	if l.last < h.last {
		return nil, fmt.Errorf("the last usable LBA %d leaves no room for the backup entry array at LBA %d", h.last, l.entLBA)
	}
	maxLast, next := l.last, ""
	if ti+1 < len(used) && used[ti+1].first-1 < maxLast {
		maxLast, next = used[ti+1].first-1, fmt.Sprintf("partition %d", used[ti+1].idx+1)
	}
	if c.Reason = noGrowth(t.last+1, maxLast+1, ss, next); c.Reason != "" {
		return c, nil
	}
	c.NewSize = maxLast - t.first + 1
	planGPTWrites(c, h, arr, t, maxLast, l, ss)
	if w, ok := protectiveSize(mbr, n); ok {
		c.writes = append(c.writes, w)
		c.Rewrote = append(c.Rewrote, "protective MBR size")
	}
	return c, nil
}

// checkProtectiveMBR checks a protective MBR's boot indicators and that
// its (first) 0xEE entry starts at LBA 1.
func checkProtectiveMBR(mbr []byte) error {
	ee := -1
	for i := range 4 {
		e := mbr[446+16*i:]
		if e[4] == 0xEE && ee < 0 {
			ee = i
		}
		if e[0] != 0 && e[0] != 0x80 {
			return fmt.Errorf("protective MBR: entry %d has boot indicator %#x", i+1, e[0])
		}
	}
	if start := le.Uint32(mbr[446+16*ee+8:]); start != 1 {
		return fmt.Errorf("protective MBR: the 0xEE entry starts at LBA %d, not 1", start)
	}
	return nil
}

// readPrimaryHeader reads and checks the primary GPT header of a disk of
// n sectors: its backup must lie on the disk after the usable LBAs, its
// entry array before them.
func readPrimaryHeader(d Disk, n int64) (gptHeader, error) {
	ss := d.SectorSize
	hb, err := readAt(d, ss, int(ss))
	if err != nil {
		return gptHeader{}, fmt.Errorf("primary GPT header: %w", err)
	}
	h, err := parseGPTHeader(hb, 1, n, ss)
	if err != nil {
		return gptHeader{}, fmt.Errorf("primary GPT header: %w (not touched)", err)
	}
	entS := h.entSectors(ss)
	switch {
	case h.alt >= n:
		return gptHeader{}, fmt.Errorf("the backup GPT header is at LBA %d, past the disk's last LBA %d: the disk is smaller than its table", h.alt, n-1)
	case h.alt <= h.last:
		return gptHeader{}, fmt.Errorf("the backup GPT header at LBA %d is not after the last usable LBA %d", h.alt, h.last)
	case h.entLBA+entS > h.first:
		return gptHeader{}, fmt.Errorf("the primary entry array (LBA %d, %d sectors) overlaps the usable LBAs from %d", h.entLBA, entS, h.first)
	}
	return h, nil
}

// gptLayout is where the backup goes: its header's LBA, its entry
// array's, and the last usable LBA.
type gptLayout struct {
	alt, entLBA, last int64
}

// planGPTWrites sets c's writes and Rewrote for growing entry t of h's
// array arr to end at maxLast, with the backup at l: backup array and
// header first, then the primary's.
func planGPTWrites(c *Change, h gptHeader, arr []byte, t gptEntry, maxLast int64, l gptLayout, ss int64) {
	newArr := slices.Clone(arr)
	le.PutUint64(newArr[t.idx*h.entrySize+40:], uint64(maxLast))
	prim := slices.Clone(h.raw)
	le.PutUint64(prim[32:], uint64(l.alt))
	le.PutUint64(prim[48:], uint64(l.last))
	le.PutUint32(prim[88:], crc32.ChecksumIEEE(newArr))
	le.PutUint32(prim[16:], headerCRC(prim))
	backup := make([]byte, ss)
	copy(backup, prim)
	le.PutUint64(backup[24:], uint64(l.alt))
	le.PutUint64(backup[32:], 1)
	le.PutUint64(backup[72:], uint64(l.entLBA))
	le.PutUint32(backup[16:], headerCRC(backup[:len(prim)]))
	backupArr := make([]byte, h.entSectors(ss)*ss)
	copy(backupArr, newArr)

	c.BackupMoved = h.alt != l.alt
	if c.BackupMoved {
		c.Rewrote = append(c.Rewrote, fmt.Sprintf("GPT backup header and entries moved from LBA %d to the disk's end (LBA %d)", h.alt, l.alt))
	} else {
		c.Rewrote = append(c.Rewrote, "GPT backup header and entries")
	}
	c.Rewrote = append(c.Rewrote, "GPT primary header and entries")
	c.writes = []write{
		{l.entLBA * ss, backupArr},
		{l.alt * ss, backup},
		{h.entLBA * ss, newArr},
		{ss, prim},
	}
}

// checkBackup verifies the backup header in the disk's last LBA and its
// entry array against the primary header p and its array.
func checkBackup(d Disk, p gptHeader, arr []byte) error {
	ss := d.SectorSize
	n := d.Size / ss
	hb, err := readAt(d, (n-1)*ss, int(ss))
	if err != nil {
		return fmt.Errorf("backup GPT header: %w", err)
	}
	b, err := parseGPTHeader(hb, n-1, n, ss)
	if err != nil {
		return fmt.Errorf("backup GPT header: %w", err)
	}
	if b.alt != 1 || p.alt != n-1 || b.first != p.first || b.last != p.last || b.count != p.count ||
		b.entrySize != p.entrySize || string(b.raw[56:72]) != string(p.raw[56:72]) || b.entLBA <= b.last {
		return fmt.Errorf("backup GPT header at LBA %d does not match the primary", n-1)
	}
	barr, _, err := readEntries(d, b, "backup")
	if err != nil {
		return err
	}
	if string(barr) != string(arr) {
		return fmt.Errorf("backup GPT entry array differs from the primary")
	}
	return nil
}

// protectiveSize is the write that makes a protective MBR's one 0xEE
// entry cover a disk of n sectors, as the UEFI spec asks (the size is n-1,
// or 0xFFFFFFFF when that does not fit); ok is false when the entry is
// already right or the MBR is a hybrid one (other entries besides 0xEE),
// which is left alone.
func protectiveSize(mbr []byte, n int64) (write, bool) {
	idx := -1
	for i := range 4 {
		e := mbr[446+16*i : 446+16*i+16]
		switch {
		case e[4] == 0xEE && idx < 0:
			idx = i
		case e[4] != 0 || !isZero(e[8:16]):
			return write{}, false
		}
	}
	want := uint32(min(n-1, math.MaxUint32))
	e := slices.Clone(mbr[446+16*idx : 446+16*idx+16])
	if le.Uint32(e[12:]) == want {
		return write{}, false
	}
	le.PutUint32(e[12:], want)
	copy(e[5:8], chs(int64(le.Uint32(e[8:]))+int64(want)-1))
	return write{int64(446 + 16*idx), e}, true
}

func isZero(b []byte) bool {
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}
