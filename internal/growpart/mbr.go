package growpart

import (
	"cmp"
	"fmt"
	"slices"
)

// mbrMax is the end (exclusive) no MBR partition may pass: its start and
// size are 32-bit sector counts. growpart caps at the same 2^32 sectors
// for 512-byte sectors (it scales the cap with the sector size, past
// what the 32-bit fields can hold; this package does not).
const mbrMax = 1 << 32

// gptSecondSize is growpart's gpt_second_size: the sectors it leaves free
// at the end of an MBR disk, so that it can be converted to GPT later
// without shrinking the last partition.
const gptSecondSize = 33

// isExtended tells whether an MBR partition type is an extended one (DOS,
// LBA, Linux), which holds the logical partitions: the kernel's
// is_extended_partition.
func isExtended(typ byte) bool { return typ == 0x05 || typ == 0x0f || typ == 0x85 }

// mbrEntry is a used entry: its slot (0-3 for a primary; 4 and up, the
// kernel's number minus one, for a logical partition), type and sectors.
type mbrEntry struct {
	slot        int
	typ         byte
	start, size int64
}

func (e mbrEntry) end() int64 { return e.start + e.size }

// name is how messages call e: "partition 2", "logical partition 5".
func (e mbrEntry) name() string {
	if e.slot >= 4 {
		return fmt.Sprintf("logical partition %d", e.slot+1)
	}
	return fmt.Sprintf("partition %d", e.slot+1)
}

// The kernel's bounds on an extended partition's chain of EBRs
// (block/partitions/msdos.c, parse_extended): it stops after 100 EBRs
// in a row that hold no data partition, and when the disk's partition
// numbers (DISK_MAX_PARTS, 256) are used up.
const (
	ebrMaxEmpty = 100
	maxParts    = 256
)

// planMBR plans growing primary partition num of an MBR disk whose sector
// 0 is mbr. Extended and logical partitions are not grown.
//
// Every slot the kernel registers counts as used: any with a non-zero
// size, whatever its type (a type-0x00 slot with a size is a partition
// to the kernel). The logical partitions are read as the kernel reads
// them, EBR after EBR: the first two entries of an EBR are not bounds
// checked, so a logical partition can lie after the grown partition,
// outside the extended one, and it stops the growth as a primary does.
func planMBR(d Disk, mbr []byte, num int) (*Change, error) {
	n := d.Size / d.SectorSize
	var used []mbrEntry
	for i := range 4 {
		e := mbr[446+16*i : 446+16*i+16]
		if e[0] != 0 && e[0] != 0x80 {
			return nil, fmt.Errorf("MBR entry %d: boot indicator %#x (not a partition table?)", i+1, e[0])
		}
		p := mbrEntry{slot: i, typ: e[4], start: int64(le.Uint32(e[8:])), size: int64(le.Uint32(e[12:]))}
		if p.size == 0 {
			continue
		}
		if p.start < 1 || p.end() > n {
			return nil, fmt.Errorf("MBR partition %d (type %02x, sectors %d..%d) lies outside the disk's sectors 1..%d", i+1, p.typ, p.start, p.end()-1, n-1)
		}
		used = append(used, p)
	}
	slices.SortFunc(used, func(a, b mbrEntry) int { return cmp.Compare(a.start, b.start) })
	for i := 1; i < len(used); i++ {
		if used[i].start < used[i-1].end() {
			return nil, fmt.Errorf("MBR partitions %d and %d overlap", used[i-1].slot+1, used[i].slot+1)
		}
	}
	if num > 4 {
		return &Change{Table: "dos", Part: num, Reason: "it is a logical partition (inside the extended one): logical partitions are not grown"}, nil
	}
	ti := slices.IndexFunc(used, func(e mbrEntry) bool { return e.slot == num-1 })
	if ti < 0 {
		return nil, fmt.Errorf("partition %d is not in the MBR (its entry is unused)", num)
	}
	t := used[ti]
	c := &Change{Table: "dos", Part: num, Start: t.start, OldSize: t.size, NewSize: t.size}
	if isExtended(t.typ) {
		c.Reason = fmt.Sprintf("it is an extended partition (type %02x): not grown", t.typ)
		return c, nil
	}
	logical, err := logicalPartitions(d, used)
	if err != nil {
		return nil, err
	}
	end := t.end()
	maxEnd, next := min(n-gptSecondSize, mbrMax), ""
	for _, o := range append(slices.Delete(slices.Clone(used), ti, ti+1), logical...) {
		if o.end() <= t.start || o.start >= maxEnd {
			continue
		}
		if o.start < end {
			// Only a logical partition can get here (the primaries
			// were checked above): the kernel would see both.
			return nil, fmt.Errorf("MBR partition %d (sectors %d..%d) and %s (sectors %d..%d) overlap", num, t.start, end-1, o.name(), o.start, o.end()-1)
		}
		maxEnd, next = o.start, o.name()
	}
	if c.Reason = noGrowth(end, maxEnd, d.SectorSize, next); c.Reason != "" {
		return c, nil
	}
	c.NewSize = maxEnd - t.start
	e := slices.Clone(mbr[446+16*t.slot : 446+16*t.slot+16])
	le.PutUint32(e[12:], uint32(c.NewSize))
	copy(e[5:8], chs(maxEnd-1))
	c.writes = []write{{int64(446 + 16*t.slot), e}}
	c.Rewrote = []string{fmt.Sprintf("MBR entry %d", num)}
	return c, nil
}

// logicalPartitions reads the logical partitions of every extended
// partition among the primaries as the kernel's parse_extended does, in
// the table's sectors: each EBR's data partitions (entries 2 and 3 only
// when inside the EBR's range and the extended partition), then the
// first extended entry as the next EBR, relative to the extended
// partition's start; every extended primary's chain, in slot order, as
// the kernel numbers them. An EBR that cannot be read is an error: a
// partition the kernel may list would go unchecked.
func logicalPartitions(d Disk, primaries []mbrEntry) ([]mbrEntry, error) {
	var out []mbrEntry
	next := 4 // the kernel's number 5, minus one
	bySlot := slices.SortedFunc(slices.Values(primaries), func(a, b mbrEntry) int { return cmp.Compare(a.slot, b.slot) })
	for _, ext := range bySlot {
		if !isExtended(ext.typ) {
			continue
		}
		this, thisSize, empty := ext.start, ext.size, 0
		for next < maxParts {
			if empty++; empty > ebrMaxEmpty {
				break
			}
			ebr, err := readAt(d, this*d.SectorSize, 512)
			if err != nil {
				return nil, fmt.Errorf("the EBR at sector %d (extended partition %d): %w", this, ext.slot+1, err)
			}
			if ebr[510] != 0x55 || ebr[511] != 0xAA {
				break
			}
			for i := range 4 {
				e := ebr[446+16*i:]
				typ, offs, size := e[4], int64(le.Uint32(e[8:])), int64(le.Uint32(e[12:]))
				if size == 0 || isExtended(typ) {
					continue
				}
				start := this + offs
				if i >= 2 && (offs+size > thisSize || start < ext.start || start+size > ext.end()) {
					continue
				}
				out = append(out, mbrEntry{slot: next, typ: typ, start: start, size: size})
				empty = 0
				if next++; next == maxParts {
					break
				}
			}
			link := slices.IndexFunc([]int{0, 1, 2, 3}, func(i int) bool {
				e := ebr[446+16*i:]
				return le.Uint32(e[12:]) != 0 && isExtended(e[4])
			})
			if link < 0 {
				break
			}
			e := ebr[446+16*link:]
			this, thisSize = ext.start+int64(le.Uint32(e[8:])), int64(le.Uint32(e[12:]))
		}
	}
	return out, nil
}

// chs encodes lba as an MBR CHS address with 255 heads and 63 sectors per
// track (what fdisk and sfdisk assume), or as the largest address,
// cylinder 1023 head 254 sector 63, when it does not fit.
func chs(lba int64) []byte {
	const heads, sectors = 255, 63
	c := lba / (heads * sectors)
	if c > 1023 {
		return []byte{0xfe, 0xff, 0xff}
	}
	h := (lba / sectors) % heads
	s := lba%sectors + 1
	return []byte{byte(h), byte(s) | byte(c>>2)&0xc0, byte(c)}
}
