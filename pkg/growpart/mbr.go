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
// LBA, Linux), which holds the logical partitions.
func isExtended(typ byte) bool { return typ == 0x05 || typ == 0x0f || typ == 0x85 }

// mbrEntry is a used primary entry: its slot (0-3), type and sectors.
type mbrEntry struct {
	slot        int
	typ         byte
	start, size int64
}

// planMBR plans growing primary partition num of an MBR disk whose sector
// 0 is mbr. Extended and logical partitions are left alone.
func planMBR(d Disk, mbr []byte, num int) (*Change, error) {
	n := d.Size / d.SectorSize
	var used []mbrEntry
	for i := range 4 {
		e := mbr[446+16*i : 446+16*i+16]
		if e[0] != 0 && e[0] != 0x80 {
			return nil, fmt.Errorf("MBR entry %d: boot indicator %#x (not a partition table?)", i+1, e[0])
		}
		p := mbrEntry{slot: i, typ: e[4], start: int64(le.Uint32(e[8:])), size: int64(le.Uint32(e[12:]))}
		if p.typ == 0 || p.size == 0 {
			continue
		}
		if p.start < 1 || p.start+p.size > n {
			return nil, fmt.Errorf("MBR partition %d (sectors %d..%d) lies outside the disk's sectors 1..%d", i+1, p.start, p.start+p.size-1, n-1)
		}
		used = append(used, p)
	}
	slices.SortFunc(used, func(a, b mbrEntry) int { return cmp.Compare(a.start, b.start) })
	for i := 1; i < len(used); i++ {
		if used[i].start < used[i-1].start+used[i-1].size {
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
	end := t.start + t.size
	maxEnd, next := min(n-gptSecondSize, mbrMax), ""
	if ti+1 < len(used) && used[ti+1].start <= maxEnd {
		maxEnd, next = used[ti+1].start, fmt.Sprintf("partition %d", used[ti+1].slot+1)
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
