package growpart

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/earlyinit/earlyinit/internal/looptest"
	"golang.org/x/sys/unix"
)

// TestGrowPartitionLoop grows a mounted partition on a loop device: GPT
// with 512- and 4096-byte sectors and MBR, each image grown after it was
// made. sysfs shows the new size at once (BLKPG), and a second run
// changes nothing.
func TestGrowPartitionLoop(t *testing.T) {
	looptest.Require(t)
	for _, tt := range []struct {
		name     string
		ss       int64
		write    func(t testing.TB, f *os.File)
		wantSize int64 // sectors
		moved    bool
	}{
		{"gpt 512", 512, func(t testing.TB, f *os.File) {
			writeGPT(t, f, 512, 64*mib, gptPart{first: 2048, last: 67583})
		}, 262110 - 2048 + 1, true},
		{"gpt 4096", 4096, func(t testing.TB, f *os.File) {
			writeGPT(t, f, 4096, 64*mib, gptPart{first: 256, last: 8447})
		}, 32762 - 256 + 1, true},
		{"mbr 512", 512, func(t testing.TB, f *os.File) {
			writeMBR(t, f, mbrPart{typ: 0x83, start: 2048, size: 65536})
		}, 262144 - 33 - 2048, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			file := looptest.Image(t, 64*mib)
			f, err := os.OpenFile(file, os.O_RDWR, 0)
			if err != nil {
				t.Fatal(err)
			}
			tt.write(t, f)
			f.Close()
			looptest.Resize(t, file, 128*mib)
			loop := looptest.Attach(t, file, int(tt.ss))
			part := loop + "p1"
			looptest.WaitBlock(t, part)
			looptest.Mkfs(t, "ext4", part)
			dir := looptest.Mount(t, part, "ext4")

			var s System
			d, err := s.MountDevice(dir)
			if err != nil {
				t.Fatal(err)
			}
			p, err := s.Partition(d)
			if err != nil {
				t.Fatal(err)
			}
			if p.Disk.Path != loop || p.Num != 1 || p.SectorSize != tt.ss || d.Path != part {
				t.Fatalf("Partition = %+v", p)
			}
			c, err := s.GrowPartition(p)
			if err != nil {
				t.Fatalf("GrowPartition: %v", err)
			}
			if !c.Grown() || c.NewSize != tt.wantSize || !c.KernelResized || c.BackupMoved != tt.moved {
				t.Fatalf("GrowPartition = %+v, want %d sectors", c, tt.wantSize)
			}
			if got := looptest.SysSize(t, part); got != tt.wantSize*tt.ss {
				t.Fatalf("sysfs size of %s: %d bytes, want %d", part, got, tt.wantSize*tt.ss)
			}

			// Again: nothing to grow, nothing written, nothing told.
			d, _ = s.MountDevice(dir)
			p, err = s.Partition(d)
			if err != nil {
				t.Fatal(err)
			}
			before, _ := os.ReadFile(file)
			c, err = s.GrowPartition(p)
			if err != nil || c.Grown() || c.KernelResized {
				t.Fatalf("second GrowPartition = %+v, %v", c, err)
			}
			if after, _ := os.ReadFile(file); string(after) != string(before) {
				t.Fatalf("second GrowPartition changed the image")
			}
			if tt.ss == 512 && tt.moved {
				if _, err := exec.LookPath("sgdisk"); err == nil {
					out, _ := exec.Command("sgdisk", "-v", file).CombinedOutput()
					if !strings.Contains(string(out), "No problems found") {
						t.Errorf("sgdisk -v:\n%s", out)
					}
				}
			}
		})
	}
}

// TestGrowPartitionRefusesOtherNode: a disk node that is not the device
// sysfs names is not opened for writing.
func TestGrowPartitionRefusesOtherNode(t *testing.T) {
	file := looptest.Image(t, 1*mib)
	_, err := System{}.GrowPartition(Partition{Num: 1, SectorSize: 512, Disk: Device{Path: file, Major: 254, Minor: 0}})
	if err == nil || !strings.Contains(err.Error(), "is not the block device 254:0") {
		t.Fatalf("GrowPartition on a regular file: %v", err)
	}
}

// TestGrowPartitionLoopOthers: on a real loop device, with the kernel's
// own partition parser, a partition after the root that a type-only
// reading of the MBR would miss stops the growth, and its bytes are left
// as they were: a slot of type 0x00 with a size (the kernel's p2), and a
// logical partition that an EBR's first entry puts after the root,
// outside its extended partition (the kernel does not bounds-check the
// first two entries of an EBR; p5). KernelPartitions lists both as
// sysfs has them.
func TestGrowPartitionLoopOthers(t *testing.T) {
	looptest.Require(t)
	for _, tt := range []struct {
		name      string
		write     func(t testing.TB, f *os.File)
		other     string // the kernel's name suffix of the other partition
		otherAt   int64  // its first sector
		wantSize  int64
		wantSlots int // partitions the kernel lists
	}{
		{"type 00 slot", func(t testing.TB, f *os.File) {
			writeMBR(t, f, mbrPart{typ: 0x83, start: 2048, size: 65536}, mbrPart{slot: 1, typ: 0x00, start: 200000, size: 8192})
		}, "p2", 200000, 200000 - 2048, 2},
		{"logical partition outside its extended one", func(t testing.TB, f *os.File) {
			writeMBR(t, f, mbrPart{typ: 0x83, start: 2048, size: 65536}, mbrPart{slot: 1, typ: 0x05, start: 200, size: 1000})
			writeEBR(t, f, 512, 200, mbrPart{slot: 0, typ: 0x83, start: 180000 - 200, size: 8192})
		}, "p5", 180000, 180000 - 2048, 3},
	} {
		t.Run(tt.name, func(t *testing.T) {
			file := looptest.Image(t, 64*mib)
			f, err := os.OpenFile(file, os.O_RDWR, 0)
			if err != nil {
				t.Fatal(err)
			}
			tt.write(t, f)
			f.Close()
			looptest.Resize(t, file, 128*mib)
			loop := looptest.Attach(t, file, 512)
			part, other := loop+"p1", loop+tt.other
			looptest.WaitBlock(t, part)
			looptest.WaitBlock(t, other)
			// The other partition's data, to compare after.
			data := bytes.Repeat([]byte("not ours "), 8192*512/9)
			o, err := os.OpenFile(other, os.O_RDWR, 0)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := o.WriteAt(data, 0); err != nil {
				t.Fatal(err)
			}
			o.Close()
			looptest.Mkfs(t, "ext4", part)
			dir := looptest.Mount(t, part, "ext4")

			var s System
			d, err := s.MountDevice(dir)
			if err != nil {
				t.Fatal(err)
			}
			p, err := s.Partition(d)
			if err != nil {
				t.Fatal(err)
			}
			kp, err := s.KernelPartitions(p.Disk)
			if err != nil {
				t.Fatal(err)
			}
			found := false
			for _, k := range kp {
				found = found || k.Name == filepath.Base(other) && k.Start == tt.otherAt*512 && k.Size == 8192*512
			}
			if !found || len(kp) != tt.wantSlots {
				t.Fatalf("KernelPartitions = %+v, want %d with %s at sector %d", kp, tt.wantSlots, filepath.Base(other), tt.otherAt)
			}
			c, err := s.GrowPartition(p)
			if err != nil {
				t.Fatalf("GrowPartition: %v", err)
			}
			if c.NewSize != tt.wantSize || !c.KernelResized {
				t.Fatalf("GrowPartition = %v, want %d sectors", c, tt.wantSize)
			}
			if err := s.CheckOverlap(Partition{Device: p.Device, Num: 1, Start: p.Start, Disk: p.Disk, SectorSize: 512}); err != nil {
				t.Errorf("CheckOverlap before the resize: %v", err)
			}
			got := make([]byte, len(data))
			raw, _ := os.Open(file)
			defer raw.Close()
			if _, err := raw.ReadAt(got, tt.otherAt*512); err != nil || !bytes.Equal(got, data) {
				t.Fatalf("the other partition's bytes changed (%v)", err)
			}
		})
	}
}

// TestGrowPartitionLoopRefused: when the kernel refuses the new size,
// the disk's old table is back on the disk byte for byte, the kernel
// still has the old size, and a fresh read of the table (partx) finds
// the old partition.
func TestGrowPartitionLoopRefused(t *testing.T) {
	looptest.Require(t)
	file := looptest.Image(t, 64*mib)
	f, err := os.OpenFile(file, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	writeGPT(t, f, 512, 64*mib, gptPart{first: 2048, last: 67583})
	f.Close()
	looptest.Resize(t, file, 128*mib)
	before, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	loop := looptest.Attach(t, file, 512)
	part := loop + "p1"
	looptest.WaitBlock(t, part)
	dev, err := os.OpenFile(loop, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer dev.Close()
	p := Partition{Device: Device{Path: part, Size: 65536 * 512}, Num: 1, Start: 2048 * 512, SectorSize: 512}
	c, err := grow(Disk{Name: loop, RW: dev, SectorSize: 512, Size: 128 * mib}, p, nil, dev.Sync, func(int, int64, int64) error { return unix.EBUSY })
	if err == nil || !strings.Contains(err.Error(), "the old table was restored and verifies") {
		t.Fatalf("grow: %v (%+v)", err, c)
	}
	after, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(before, after) {
		t.Fatalf("the image differs after the restore")
	}
	if got := looptest.SysSize(t, part); got != 65536*512 {
		t.Fatalf("the kernel's size of %s: %d", part, got)
	}
	looptest.Run(t, "partx", "--update", loop)
	if got := looptest.SysSize(t, part); got != 65536*512 {
		t.Fatalf("after partx --update, the kernel's size of %s: %d", part, got)
	}
}

// TestGrowPartitionLoopKernelOnly: a partition the kernel lists but the
// table does not hold (added with BLKPG, as partx --add or addpart do;
// a slice of another partition table the kernel parses) is checked
// too: the grown range would overlap it, so nothing is written and the
// kernel is told nothing.
func TestGrowPartitionLoopKernelOnly(t *testing.T) {
	looptest.Require(t)
	file := looptest.Image(t, 64*mib)
	f, err := os.OpenFile(file, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	writeMBR(t, f, mbrPart{typ: 0x83, start: 2048, size: 65536})
	f.Close()
	looptest.Resize(t, file, 128*mib)
	loop := looptest.Attach(t, file, 512)
	part := loop + "p1"
	looptest.WaitBlock(t, part)
	looptest.Run(t, "addpart", loop, "3", "200000", "8192")
	looptest.WaitBlock(t, loop+"p3")
	looptest.Mkfs(t, "ext4", part)
	dir := looptest.Mount(t, part, "ext4")
	before, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var s System
	d, err := s.MountDevice(dir)
	if err != nil {
		t.Fatal(err)
	}
	p, err := s.Partition(d)
	if err != nil {
		t.Fatal(err)
	}
	c, err := s.GrowPartition(p)
	if err == nil || !strings.Contains(err.Error(), "would overlap "+filepath.Base(loop)+"p3 (partition 3, sectors 200000..208191), which the kernel lists: nothing written") {
		t.Fatalf("GrowPartition = %v, %v; want the overlap refused", c, err)
	}
	after, _ := os.ReadFile(file)
	if !bytes.Equal(before[:1<<20], after[:1<<20]) {
		t.Fatalf("the table changed")
	}
	if got := looptest.SysSize(t, part); got != 65536*512 {
		t.Fatalf("the kernel's size of %s: %d", part, got)
	}
}
