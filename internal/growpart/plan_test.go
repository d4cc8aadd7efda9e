package growpart

import (
	"hash/crc32"
	"reflect"
	"strings"
	"testing"
)

// planCase is one disk: how it is made, which partition grows, and what
// comes of it.
type planCase struct {
	name     string
	ss, size int64 // sector size, disk size in bytes
	make     func(t testing.TB, d *memDisk)
	num      int

	wantSize   int64  // the partition's size after, in sectors; 0: no change
	wantMoved  bool   // the GPT backup header moved
	wantReason string // for no change: part of the Reason
	wantErr    string // part of the error; nothing is written
}

// gpt makes a GPT on an image of imageSize bytes.
func gpt(ss, imageSize int64, parts ...gptPart) func(testing.TB, *memDisk) {
	return func(t testing.TB, d *memDisk) { writeGPT(t, d, ss, imageSize, parts...) }
}

// mbr makes an MBR.
func mbr(parts ...mbrPart) func(testing.TB, *memDisk) {
	return func(t testing.TB, d *memDisk) { writeMBR(t, d, parts...) }
}

// then runs f after make, to damage the table.
func then(make func(testing.TB, *memDisk), f func(testing.TB, *memDisk)) func(testing.TB, *memDisk) {
	return func(t testing.TB, d *memDisk) { make(t, d); f(t, d) }
}

func TestPlanGPT(t *testing.T) {
	// A 32 MiB partition at 1 MiB: LBAs 2048..67583 (512) or 256..8447 (4096).
	p512 := gptPart{first: 2048, last: 67583}
	p4k := gptPart{first: 256, last: 8447}
	runPlanCases(t, []planCase{
		// The grown volume: the image was 64 MiB, the disk is 128 MiB.
		{name: "512 grown disk", ss: 512, size: 128 * mib, make: gpt(512, 64*mib, p512), num: 1,
			wantSize: 262110 - 2048 + 1, wantMoved: true},
		{name: "4096 grown disk", ss: 4096, size: 128 * mib, make: gpt(4096, 64*mib, p4k), num: 1,
			wantSize: 32762 - 256 + 1, wantMoved: true},
		// Odd sizes: the tail short of a sector is not used.
		{name: "512 odd disk size", ss: 512, size: 100*mib + 12345, make: gpt(512, 64*mib, p512), num: 1,
			wantSize: 204790 - 2048 + 1, wantMoved: true},
		{name: "4096 odd disk size", ss: 4096, size: 100*mib + 12345, make: gpt(4096, 64*mib, p4k), num: 1,
			wantSize: 25597 - 256 + 1, wantMoved: true},
		{name: "512 odd image and disk", ss: 512, size: 100*mib + 12345, make: gpt(512, 64*mib+7*512, p512), num: 1,
			wantSize: 204790 - 2048 + 1, wantMoved: true},
		// The backup is already at the end; the partition was made small.
		{name: "free space, backup in place", ss: 512, size: 64 * mib, make: gpt(512, 64*mib, p512), num: 1,
			wantSize: 131038 - 2048 + 1},
		{name: "4096 free space, backup in place", ss: 4096, size: 64 * mib, make: gpt(4096, 64*mib, p4k), num: 1,
			wantSize: 16378 - 256 + 1},
		// The entry is not the first one in the array; sorted by LBA it is last.
		{name: "entry 3 of 3, last on disk", ss: 512, size: 128 * mib,
			make: gpt(512, 64*mib, gptPart{idx: 2, first: 40000, last: 67583}, gptPart{idx: 1, first: 2048, last: 39999}), num: 3,
			wantSize: 262110 - 40000 + 1, wantMoved: true},

		// Not last: the next partition starts right after.
		{name: "partition not last", ss: 512, size: 128 * mib,
			make: gpt(512, 64*mib, p512, gptPart{first: 67584, last: 100000}), num: 1,
			wantReason: "partition 2 follows with no free space"},
		{name: "the last one of two grows", ss: 512, size: 128 * mib,
			make: gpt(512, 64*mib, p512, gptPart{first: 67584, last: 100000}), num: 2,
			wantSize: 262110 - 67584 + 1, wantMoved: true},
		// Free space before the next partition: grown up to it, as growpart.
		{name: "gap before the next partition", ss: 512, size: 128 * mib,
			make: gpt(512, 64*mib, p512, gptPart{first: 100000, last: 120000}), num: 1,
			wantSize: 99999 - 2048 + 1, wantMoved: true},
		{name: "gap under 1 MiB before the next partition", ss: 512, size: 128 * mib,
			make: gpt(512, 64*mib, p512, gptPart{first: 67584 + 1000, last: 120000}), num: 1,
			wantReason: "could only be grown by 1000 sectors"},

		// No free space.
		{name: "no free space", ss: 512, size: 64 * mib, make: gpt(512, 64*mib, gptPart{first: 2048, last: 131038}), num: 1,
			wantReason: "already ends at the end of the usable space"},
		{name: "4096 no free space", ss: 4096, size: 64 * mib, make: gpt(4096, 64*mib, gptPart{first: 256, last: 16378}), num: 1,
			wantReason: "already ends"},
		// The disk grew by 512 KiB: under growpart's 1 MiB, and the
		// backup header is not moved either: nothing is written.
		{name: "grown by less than 1 MiB", ss: 512, size: 64*mib + 512*kib, make: gpt(512, 64*mib, gptPart{first: 2048, last: 131038}), num: 1,
			wantReason: "could only be grown by 1024 sectors (less than 2048, 1 MiB)"},
		{name: "4096 grown by less than 1 MiB", ss: 4096, size: 64*mib + 512*kib, make: gpt(4096, 64*mib, gptPart{first: 256, last: 16378}), num: 1,
			wantReason: "could only be grown by 128 sectors (less than 256, 1 MiB)"},
		{name: "grown by exactly 1 MiB", ss: 512, size: 65 * mib, make: gpt(512, 64*mib, gptPart{first: 2048, last: 131038}), num: 1,
			wantSize: 131038 + 2048 - 2048 + 1, wantMoved: true},

		// Tables that do not verify: refused, nothing written.
		{name: "corrupt primary header CRC", ss: 512, size: 128 * mib,
			make: then(gpt(512, 64*mib, p512), func(t testing.TB, d *memDisk) { corrupt(t, d, 512+40) }), num: 1,
			wantErr: "primary GPT header: header at LBA 1: CRC"},
		{name: "4096 corrupt primary header CRC", ss: 4096, size: 128 * mib,
			make: then(gpt(4096, 64*mib, p4k), func(t testing.TB, d *memDisk) { corrupt(t, d, 4096+16) }), num: 1,
			wantErr: "CRC"},
		{name: "corrupt entry array", ss: 512, size: 128 * mib,
			make: then(gpt(512, 64*mib, p512), func(t testing.TB, d *memDisk) { corrupt(t, d, 2*512+40) }), num: 1,
			wantErr: "primary entry array: CRC"},
		{name: "no primary header", ss: 512, size: 128 * mib,
			make: then(gpt(512, 64*mib, p512), func(t testing.TB, d *memDisk) { corrupt(t, d, 512) }), num: 1,
			wantErr: `no "EFI PART" signature at LBA 1`},
		{name: "no MBR signature", ss: 512, size: 128 * mib,
			make: then(gpt(512, 64*mib, p512), func(t testing.TB, d *memDisk) { corrupt(t, d, 510) }), num: 1,
			wantErr: "no partition table"},
		{name: "protective entry not at LBA 1", ss: 512, size: 128 * mib,
			make: then(gpt(512, 64*mib, p512), func(t testing.TB, d *memDisk) { corrupt(t, d, 446+8) }), num: 1,
			wantErr: "protective MBR: the 0xEE entry starts at LBA"},
		{name: "4096 table read with 512-byte sectors", ss: 512, size: 128 * mib, make: gpt(4096, 64*mib, p4k), num: 1,
			wantErr: `no "EFI PART" signature at LBA 1`},
		{name: "disk smaller than its table", ss: 512, size: 64 * mib,
			make: then(gpt(512, 64*mib, gptPart{first: 2048, last: 4096}), func(_ testing.TB, d *memDisk) { d.size = 32 * mib }), num: 1,
			wantErr: "usable LBAs 34..131038 outside the disk's 2..65535"},
		{name: "backup header past the disk's end", ss: 512, size: 64 * mib,
			make: then(gpt(512, 64*mib, gptPart{first: 2048, last: 4096}), func(_ testing.TB, d *memDisk) { d.size = 64*mib - 8*kib }), num: 1,
			wantErr: "the backup GPT header is at LBA 131071, past the disk's last LBA 131055"},
		{name: "overlapping partitions", ss: 512, size: 128 * mib,
			make: gpt(512, 64*mib, gptPart{first: 2048, last: 70000}, gptPart{first: 67584, last: 100000}), num: 2,
			wantErr: "partitions 1 and 2 overlap"},
		{name: "partition past the usable LBAs", ss: 512, size: 128 * mib,
			make: gpt(512, 64*mib, gptPart{first: 2048, last: 131050}), num: 1,
			wantErr: "partition 1: LBAs 2048..131050 outside the usable LBAs 34..131038"},
		{name: "unused entry", ss: 512, size: 128 * mib, make: gpt(512, 64*mib, p512), num: 2,
			wantErr: "partition 2 is not in the GPT (its entry is unused)"},
		{name: "past the entries", ss: 512, size: 128 * mib, make: gpt(512, 64*mib, p512), num: 129,
			wantErr: "partition 129 is not in the GPT (128 entries)"},
		{name: "sector size 520", ss: 520, size: 128 * mib, make: gpt(512, 64*mib, p512), num: 1,
			wantErr: "logical sector size 520"},
	})
}

func TestPlanMBR(t *testing.T) {
	p1 := mbrPart{slot: 0, typ: 0x83, start: 2048, size: 65536}
	runPlanCases(t, []planCase{
		// growpart leaves 33 sectors at the end (for a later GPT).
		{name: "512 primary grown", ss: 512, size: 128 * mib, make: mbr(p1), num: 1,
			wantSize: 262144 - 33 - 2048},
		{name: "4096 primary grown", ss: 4096, size: 128 * mib, make: mbr(mbrPart{typ: 0x83, start: 256, size: 8192}), num: 1,
			wantSize: 32768 - 33 - 256},
		{name: "odd disk size", ss: 512, size: 100*mib + 12345, make: mbr(p1), num: 1,
			wantSize: 204824 - 33 - 2048},
		{name: "slot 3, last on disk", ss: 512, size: 128 * mib,
			make: mbr(mbrPart{slot: 2, typ: 0x83, start: 70000, size: 1000}, mbrPart{slot: 0, typ: 0x0c, start: 2048, size: 60000}), num: 3,
			wantSize: 262144 - 33 - 70000},
		{name: "gap before an extended partition", ss: 512, size: 128 * mib,
			make: mbr(p1, mbrPart{slot: 1, typ: 0x05, start: 100000, size: 100000}), num: 1,
			wantSize: 100000 - 2048},

		// The 32-bit limit: the end stays at 2^32 sectors.
		{name: "3 TiB disk, 2^32 limit", ss: 512, size: 3 * tib, make: mbr(p1), num: 1,
			wantSize: 1<<32 - 2048},
		{name: "4096 20 TiB disk, 2^32 limit", ss: 4096, size: 20 * tib, make: mbr(mbrPart{typ: 0x83, start: 256, size: 8192}), num: 1,
			wantSize: 1<<32 - 256},
		{name: "at the 2^32 limit", ss: 512, size: 3 * tib, make: mbr(mbrPart{typ: 0x83, start: 2048, size: 1<<32 - 2048}), num: 1,
			wantReason: "already ends"},

		// Extended and logical partitions are left alone.
		{name: "extended partition", ss: 512, size: 128 * mib,
			make: mbr(p1, mbrPart{slot: 1, typ: 0x05, start: 67584, size: 100000}), num: 2,
			wantReason: "it is an extended partition (type 05)"},
		{name: "LBA extended partition", ss: 512, size: 128 * mib,
			make: mbr(p1, mbrPart{slot: 1, typ: 0x0f, start: 67584, size: 100000}), num: 2,
			wantReason: "extended partition (type 0f)"},
		{name: "logical partition", ss: 512, size: 128 * mib,
			make: mbr(p1, mbrPart{slot: 1, typ: 0x05, start: 67584, size: 100000}), num: 5,
			wantReason: "logical partition"},
		{name: "primary followed by the extended one", ss: 512, size: 128 * mib,
			make: mbr(p1, mbrPart{slot: 1, typ: 0x85, start: 67584, size: 100000}), num: 1,
			wantReason: "partition 2 follows"},

		// A slot of type 0x00 with a size is a partition to the kernel
		// (/dev/vda2): it stops the growth, and overlaps are refused.
		{name: "type 00 slot after the partition", ss: 512, size: 128 * mib,
			make: mbr(p1, mbrPart{slot: 1, typ: 0x00, start: 100000, size: 50000}), num: 1,
			wantSize: 100000 - 2048},
		{name: "type 00 slot right after the partition", ss: 512, size: 128 * mib,
			make: mbr(p1, mbrPart{slot: 3, typ: 0x00, start: 67584, size: 50000}), num: 1,
			wantReason: "partition 4 follows"},
		{name: "type 00 slot overlapping", ss: 512, size: 128 * mib,
			make: mbr(p1, mbrPart{slot: 1, typ: 0x00, start: 60000, size: 50000}), num: 1,
			wantErr: "MBR partitions 1 and 2 overlap"},
		{name: "type 00 slot past the disk", ss: 512, size: 128 * mib,
			make: mbr(p1, mbrPart{slot: 1, typ: 0x00, start: 300000, size: 50000}), num: 1,
			wantErr: "MBR partition 2 (type 00, sectors 300000..349999) lies outside"},

		// Logical partitions, read EBR by EBR as the kernel reads them.
		// The kernel does not bounds-check an EBR's first two entries:
		// a logical partition can lie after the primary, outside the
		// extended partition.
		{name: "logical partition outside the extended one", ss: 512, size: 128 * mib,
			make: then(mbr(p1, mbrPart{slot: 1, typ: 0x05, start: 2, size: 2046}), func(t testing.TB, d *memDisk) {
				writeEBR(t, d, 512, 2, mbrPart{slot: 0, typ: 0x83, start: 150000 - 2, size: 20000})
			}), num: 1, wantSize: 150000 - 2048},
		{name: "second logical partition outside, through the link", ss: 512, size: 128 * mib,
			make: then(mbr(p1, mbrPart{slot: 1, typ: 0x0f, start: 2, size: 2046}), func(t testing.TB, d *memDisk) {
				writeEBR(t, d, 512, 2, mbrPart{slot: 0, typ: 0x83, start: 1, size: 100},
					mbrPart{slot: 1, typ: 0x05, start: 200, size: 500})
				writeEBR(t, d, 512, 202, mbrPart{slot: 1, typ: 0x82, start: 120000 - 202, size: 1000})
			}), num: 1, wantSize: 120000 - 2048},
		{name: "logical partition right after the primary", ss: 512, size: 128 * mib,
			make: then(mbr(p1, mbrPart{slot: 1, typ: 0x85, start: 2, size: 2046}), func(t testing.TB, d *memDisk) {
				writeEBR(t, d, 512, 2, mbrPart{slot: 1, typ: 0x83, start: 67584 - 2, size: 20000})
			}), num: 1, wantReason: "logical partition 5 follows"},
		{name: "logical partition overlapping the primary", ss: 512, size: 128 * mib,
			make: then(mbr(p1, mbrPart{slot: 1, typ: 0x05, start: 2, size: 2046}), func(t testing.TB, d *memDisk) {
				writeEBR(t, d, 512, 2, mbrPart{slot: 0, typ: 0x83, start: 60000, size: 20000})
			}), num: 1, wantErr: "MBR partition 1 (sectors 2048..67583) and logical partition 5 (sectors 60002..80001) overlap"},
		{name: "EBR entries 3 and 4 outside the EBR's range are garbage", ss: 512, size: 128 * mib,
			make: then(mbr(p1, mbrPart{slot: 1, typ: 0x05, start: 2, size: 2046}), func(t testing.TB, d *memDisk) {
				writeEBR(t, d, 512, 2, mbrPart{slot: 2, typ: 0x83, start: 150000, size: 20000},
					mbrPart{slot: 3, typ: 0x83, start: 100, size: 20000})
			}), num: 1, wantSize: 262144 - 33 - 2048},
		{name: "EBR chain looping on itself", ss: 512, size: 128 * mib,
			make: then(mbr(p1, mbrPart{slot: 1, typ: 0x05, start: 2, size: 2046}), func(t testing.TB, d *memDisk) {
				writeEBR(t, d, 512, 2, mbrPart{slot: 1, typ: 0x05, start: 0, size: 2046})
			}), num: 1, wantSize: 262144 - 33 - 2048},
		{name: "EBR chain looping with a partition outside", ss: 512, size: 128 * mib,
			make: then(mbr(p1, mbrPart{slot: 1, typ: 0x05, start: 2, size: 2046}), func(t testing.TB, d *memDisk) {
				writeEBR(t, d, 512, 2, mbrPart{slot: 0, typ: 0x83, start: 200000, size: 100},
					mbrPart{slot: 1, typ: 0x05, start: 0, size: 2046})
			}), num: 1, wantSize: 200002 - 2048},
		{name: "EBR past the disk", ss: 512, size: 128 * mib,
			make: mbr(p1, mbrPart{slot: 1, typ: 0x05, start: 262000, size: 100}, mbrPart{slot: 2, typ: 0x05, start: 2, size: 100}),
			num:  1, wantSize: 262000 - 2048},
		{name: "4096-byte sectors, logical partition outside", ss: 4096, size: 128 * mib,
			make: then(mbr(mbrPart{typ: 0x83, start: 256, size: 8192}, mbrPart{slot: 1, typ: 0x05, start: 2, size: 200}), func(t testing.TB, d *memDisk) {
				writeEBR(t, d, 4096, 2, mbrPart{slot: 0, typ: 0x83, start: 20000 - 2, size: 100})
			}), num: 1, wantSize: 20000 - 256},

		// No free space.
		{name: "no free space", ss: 512, size: 128 * mib, make: mbr(mbrPart{typ: 0x83, start: 2048, size: 262144 - 33 - 2048}), num: 1,
			wantReason: "already ends"},
		{name: "ends in growpart's 33 spare sectors", ss: 512, size: 128 * mib, make: mbr(mbrPart{typ: 0x83, start: 2048, size: 262144 - 2048}), num: 1,
			wantReason: "already ends"},
		{name: "under 1 MiB free", ss: 512, size: 128 * mib, make: mbr(mbrPart{typ: 0x83, start: 2048, size: 262144 - 33 - 2048 - 100}), num: 1,
			wantReason: "could only be grown by 100 sectors"},

		// Tables that do not verify.
		{name: "bad boot indicator", ss: 512, size: 128 * mib,
			make: then(mbr(p1), func(t testing.TB, d *memDisk) { corrupt(t, d, 446+16) }), num: 1,
			wantErr: "MBR entry 2: boot indicator 0xff"},
		{name: "partition past the disk", ss: 512, size: 16 * mib, make: mbr(p1), num: 1,
			wantErr: "MBR partition 1 (type 83, sectors 2048..67583) lies outside the disk's sectors 1..32767"},
		{name: "overlap", ss: 512, size: 128 * mib, make: mbr(p1, mbrPart{slot: 1, typ: 0x83, start: 4096, size: 100}), num: 1,
			wantErr: "MBR partitions 1 and 2 overlap"},
		{name: "unused slot", ss: 512, size: 128 * mib, make: mbr(p1), num: 2,
			wantErr: "partition 2 is not in the MBR"},
		{name: "no table", ss: 512, size: 128 * mib, make: func(testing.TB, *memDisk) {}, num: 1,
			wantErr: "no partition table"},
		{name: "partition 0", ss: 512, size: 128 * mib, make: mbr(p1), num: 0,
			wantErr: "partition number 0"},
	})
}

func runPlanCases(t *testing.T, cases []planCase) {
	t.Helper()
	for _, tt := range cases {
		t.Run(tt.name, func(t *testing.T) {
			d := newMemDisk(tt.size)
			tt.make(t, d)
			before, writes := d.snapshot(), d.writes

			c, err := Grow(d.disk(tt.ss), tt.num)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) || !strings.HasPrefix(err.Error(), "/dev/test: ") {
					t.Fatalf("Grow: error %v, want one starting with the disk and containing %q", err, tt.wantErr)
				}
				if d.writes != writes {
					t.Fatalf("Grow failed but wrote %d times", d.writes-writes)
				}
				return
			}
			if err != nil {
				t.Fatalf("Grow: %v", err)
			}
			if tt.wantSize == 0 {
				if c.Grown() || !strings.Contains(c.Reason, tt.wantReason) {
					t.Fatalf("Grow = %v, want no change because %q", c, tt.wantReason)
				}
				if d.writes != writes || !reflect.DeepEqual(d.snapshot(), before) {
					t.Fatalf("nothing to grow, but %d writes", d.writes-writes)
				}
				if !strings.Contains(c.String(), "nothing to grow") {
					t.Errorf("String() = %q", c)
				}
				return
			}
			if !c.Grown() || c.NewSize != tt.wantSize || c.BackupMoved != tt.wantMoved || c.Reason != "" {
				t.Fatalf("Grow = %+v, want new size %d, backup moved %v", c, tt.wantSize, tt.wantMoved)
			}
			if !strings.Contains(c.String(), "grown from") || c.NewEnd() != c.Start+tt.wantSize-1 {
				t.Errorf("String() = %q, NewEnd %d", c, c.NewEnd())
			}
			// Read back: the table verifies (both GPT headers), the
			// partition has its new size and nothing is left to grow.
			again, err := plan(d.disk(tt.ss), tt.num, true)
			if err != nil {
				t.Fatalf("the grown table: %v", err)
			}
			if again.Grown() || again.OldSize != tt.wantSize || again.Start != c.Start {
				t.Fatalf("the grown table plans %+v", again)
			}
			writes = d.writes
			if c2, err := Grow(d.disk(tt.ss), tt.num); err != nil || c2.Grown() || d.writes != writes {
				t.Fatalf("second Grow = %v, %v, %d writes; want nothing", c2, err, d.writes-writes)
			}
		})
	}
}

// TestPlanWritesNothing: Plan alone leaves the disk as it was.
func TestPlanWritesNothing(t *testing.T) {
	d := newMemDisk(128 * mib)
	writeGPT(t, d, 512, 64*mib, gptPart{first: 2048, last: 67583})
	writes := d.writes
	c, err := Plan(d.disk(512), 1)
	if err != nil || !c.Grown() {
		t.Fatalf("Plan = %v, %v", c, err)
	}
	if d.writes != writes {
		t.Fatalf("Plan wrote")
	}
	if len(c.Rewrote) != 3 || !strings.Contains(c.Rewrote[0], "moved from LBA 131071 to the disk's end (LBA 262143)") {
		t.Errorf("Rewrote = %q", c.Rewrote)
	}
}

// TestProtectiveMBR: the protective entry grows with the disk up to
// 0xFFFFFFFF; a hybrid MBR is left alone.
func TestProtectiveMBR(t *testing.T) {
	for _, tt := range []struct {
		name     string
		size     int64
		hybrid   bool
		wantSize uint32
	}{
		{"grown", 128 * mib, false, 262143},
		{"past 2 TiB", 3 * tib, false, 0xFFFFFFFF},
		{"hybrid", 128 * mib, true, 131071},
	} {
		t.Run(tt.name, func(t *testing.T) {
			d := newMemDisk(tt.size)
			writeGPT(t, d, 512, 64*mib, gptPart{first: 2048, last: 67583})
			if tt.hybrid {
				e := make([]byte, 16)
				e[4] = 0x0c
				le.PutUint32(e[8:], 2048)
				le.PutUint32(e[12:], 65536)
				d.WriteAt(e, 446+16)
			}
			c, err := Grow(d.disk(512), 1)
			if err != nil || !c.Grown() {
				t.Fatalf("Grow = %v, %v", c, err)
			}
			m := make([]byte, 512)
			d.ReadAt(m, 0)
			if got := le.Uint32(m[446+12:]); got != tt.wantSize {
				t.Errorf("protective entry size %d, want %d", got, tt.wantSize)
			}
			if got := strings.Contains(strings.Join(c.Rewrote, ","), "protective MBR"); got == tt.hybrid {
				t.Errorf("Rewrote = %q", c.Rewrote)
			}
		})
	}
}

func TestCHS(t *testing.T) {
	for _, tt := range []struct {
		lba  int64
		want []byte
	}{
		{0, []byte{0, 1, 0}},
		{1, []byte{0, 2, 0}},
		{2048, []byte{32, 33, 0}},
		{16450559, []byte{254, 63 | 0xc0, 255}}, // the last CHS-addressable sector
		{16450560, []byte{254, 255, 255}},
	} {
		if got := chs(tt.lba); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("chs(%d) = %v, want %v", tt.lba, got, tt.want)
		}
	}
}

// FuzzPlan: any bytes at the start and end of a disk, read as a table
// with 512- or 4096-byte sectors, give an error or a Change, never a
// panic, and a Change that grows stays inside the disk.
func FuzzPlan(f *testing.F) {
	seed := newMemDisk(4 * mib)
	writeGPT(f, seed, 512, 2*mib, gptPart{first: 2048, last: 3000})
	head, tail := make([]byte, 64*kib), make([]byte, 64*kib)
	seed.ReadAt(head, 0)
	seed.ReadAt(tail, 2*mib-64*kib)
	f.Add(head, tail, false, uint8(1))
	m := newMemDisk(4 * mib)
	writeMBR(f, m, mbrPart{typ: 0x83, start: 2048, size: 1000}, mbrPart{slot: 1, typ: 0x05, start: 4000, size: 1000})
	m.ReadAt(head, 0)
	f.Add(head, tail, false, uint8(1))
	f.Fuzz(func(t *testing.T, head, tail []byte, big bool, num uint8) {
		ss := int64(512)
		if big {
			ss = 4096
		}
		d := newMemDisk(4*mib + int64(len(tail)))
		d.WriteAt(head[:min(len(head), int(4*mib))], 0)
		d.WriteAt(tail, 4*mib)
		fixCRCs(d, ss)
		c, err := Plan(d.disk(ss), int(num))
		if err != nil || !c.Grown() {
			return
		}
		if c.Start < 1 || (c.Start+c.NewSize)*ss > d.size || c.NewSize <= c.OldSize {
			t.Fatalf("Plan = %+v on a disk of %d bytes", c, d.size)
		}
		if err := c.Write(); err != nil {
			t.Fatalf("Write: %v", err)
		}
	})
}

// fixCRCs makes the primary GPT header's CRCs right, whatever its fields
// say, so that the fuzzer gets past them to the arithmetic.
func fixCRCs(d *memDisk, ss int64) {
	h := make([]byte, ss)
	d.ReadAt(h, ss)
	if string(h[:8]) != "EFI PART" {
		return
	}
	hs := int64(le.Uint32(h[12:]))
	count, esize, ent := int64(le.Uint32(h[80:])), int64(le.Uint32(h[84:])), le.Uint64(h[72:])
	if hs < 92 || hs > ss || esize > gptMaxEntrySize || count*esize > gptMaxArray || ent > uint64(d.size/ss) {
		return
	}
	arr := make([]byte, count*esize)
	d.ReadAt(arr, int64(ent)*ss)
	le.PutUint32(h[88:], crc32.ChecksumIEEE(arr))
	le.PutUint32(h[16:], headerCRC(h[:hs]))
	d.WriteAt(h[:hs], ss)
}

// FuzzPlanMBR: any MBR and EBR chain in a disk's first 64 KiB gives an
// error or a Change, never a panic; a Change that grows a partition
// overlaps none of the partitions the kernel would register for that
// table (kernelMBR, the kernel's msdos.c transcribed on its own), and
// the grown table plans the same partitions again.
func FuzzPlanMBR(f *testing.F) {
	head := func(build func(testing.TB, *memDisk)) []byte {
		d := newMemDisk(64 * kib)
		build(f, d)
		b := make([]byte, 64*kib)
		d.ReadAt(b, 0)
		return b
	}
	p1 := mbrPart{typ: 0x83, start: 2048, size: 2000}
	f.Add(head(mbr(p1, mbrPart{slot: 1, typ: 0x00, start: 6000, size: 100})), uint8(1))
	f.Add(head(then(mbr(p1, mbrPart{slot: 1, typ: 0x05, start: 2, size: 100}), func(t testing.TB, d *memDisk) {
		writeEBR(t, d, 512, 2, mbrPart{slot: 0, typ: 0x83, start: 6000, size: 100}, mbrPart{slot: 1, typ: 0x05, start: 50, size: 40})
		writeEBR(t, d, 512, 52, mbrPart{slot: 0, typ: 0x83, start: 7000, size: 100}, mbrPart{slot: 1, typ: 0x05, start: 0, size: 40})
	})), uint8(1))
	f.Fuzz(func(t *testing.T, head []byte, num uint8) {
		const size = 8 * mib
		d := newMemDisk(size)
		d.WriteAt(head[:min(len(head), int(64*kib))], 0)
		c, err := Plan(d.disk(512), int(num%8))
		if err != nil || !c.Grown() || c.Table != "dos" {
			return
		}
		lo, hi := c.Start, c.Start+c.NewSize
		if lo < 1 || hi*512 > size {
			t.Fatalf("Plan = %+v on a disk of %d sectors", c, size/512)
		}
		for _, k := range kernelMBR(d, size/512) {
			if k.num != c.Part && k.start < hi && lo < k.start+k.size {
				t.Fatalf("Plan grows partition %d to sectors %d..%d over the kernel's partition %d (%d+%d)", c.Part, lo, hi-1, k.num, k.start, k.size)
			}
		}
	})
}

type kpart struct {
	num         int
	start, size int64
}

// kernelMBR is what Linux's msdos_partition and parse_extended register
// for the MBR on d (512-byte sectors), written from the C for the fuzz
// test, apart from the planner's code: every primary with a size, and
// for each extended primary its EBR chain.
func kernelMBR(d *memDisk, sectors int64) []kpart {
	sec := func(lba int64) []byte {
		b := make([]byte, 512)
		if lba < 0 || lba >= sectors {
			return nil
		}
		d.ReadAt(b, lba*512)
		return b
	}
	ext := func(b []byte) bool { return b[4] == 0x05 || b[4] == 0x0f || b[4] == 0x85 }
	start := func(b []byte) int64 { return int64(le.Uint32(b[8:])) }
	nr := func(b []byte) int64 { return int64(le.Uint32(b[12:])) }
	var out []kpart
	mbr := sec(0)
	next := 5
	for slot := 1; slot <= 4; slot++ {
		p := mbr[446+16*(slot-1):]
		if nr(p) == 0 {
			continue
		}
		out = append(out, kpart{slot, start(p), nr(p)})
		if !ext(p) {
			continue
		}
		first, firstSize := start(p), nr(p)
		this, thisSize := first, firstSize
		loopct := 0
		for {
			loopct++
			if loopct > 100 || next == 256 {
				break
			}
			data := sec(this)
			if data == nil || data[510] != 0x55 || data[511] != 0xAA {
				break
			}
			for i := 0; i < 4; i++ {
				q := data[446+16*i:]
				if nr(q) == 0 || ext(q) {
					continue
				}
				offs, size := start(q), nr(q)
				n := this + offs
				if i >= 2 && (offs+size > thisSize || n < first || n+size > first+firstSize) {
					continue
				}
				out = append(out, kpart{next, n, size})
				loopct = 0
				next++
				if next == 256 {
					break
				}
			}
			i := 0
			for ; i < 4; i++ {
				q := data[446+16*i:]
				if nr(q) != 0 && ext(q) {
					break
				}
			}
			if i == 4 {
				break
			}
			q := data[446+16*i:]
			this, thisSize = first+start(q), nr(q)
		}
	}
	return out
}
