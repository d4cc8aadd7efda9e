package growpart

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// fakeSys is a sysfs, /dev and mount table in a temporary directory.
type fakeSys struct {
	t    *testing.T
	root string
	sys  System
}

func newFakeSys(t *testing.T, mountinfo string) *fakeSys {
	root := t.TempDir()
	f := &fakeSys{t: t, root: root, sys: System{
		Sys: filepath.Join(root, "sys"), Dev: filepath.Join(root, "dev"), MountInfo: filepath.Join(root, "mountinfo"),
	}}
	f.write("mountinfo", mountinfo)
	return f
}

func (f *fakeSys) write(name, content string) {
	f.t.Helper()
	p := filepath.Join(f.root, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		f.t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		f.t.Fatal(err)
	}
}

func (f *fakeSys) link(target, name string) {
	f.t.Helper()
	p := filepath.Join(f.root, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		f.t.Fatal(err)
	}
	if err := os.Symlink(target, p); err != nil {
		f.t.Fatal(err)
	}
}

// blockDev adds a block device at dir (under sys/devices) with its
// /sys/dev/block and /sys/class/block links and files.
func (f *fakeSys) blockDev(dir, devno, name string, files map[string]string) {
	f.t.Helper()
	f.write("sys/devices/"+dir+"/dev", devno+"\n")
	f.write("sys/devices/"+dir+"/uevent", "MAJOR=x\nDEVNAME="+name+"\n")
	for k, v := range files {
		f.write("sys/devices/"+dir+"/"+k, v+"\n")
	}
	f.link("../../devices/"+dir, "sys/dev/block/"+devno)
	f.link("../../devices/"+dir, "sys/class/block/"+filepath.Base(dir))
	f.write("dev/"+name, "")
}

func TestMountDevice(t *testing.T) {
	f := newFakeSys(t, strings.Join([]string{
		"21 26 0:20 / /proc rw,relatime - proc proc rw",
		"36 1 254:1 / /mnt/root rw,relatime shared:1 - ext4 /dev/vda1 rw",
		"37 1 254:2 / /mnt/root rw,relatime - xfs /dev/vda2 rw", // mounted over: the last wins
		"38 1 253:0 / /mnt/lvm rw - xfs /dev/mapper/vg-root rw",
		"39 1 0:45 / /mnt/btr rw - btrfs /dev/vda3 rw,subvolid=5,subvol=/",
		"40 1 0:30 / /mnt/tmp rw - tmpfs tmpfs rw",
		`41 1 254:16 / /mnt/with\040space rw - ext4 /dev/vdb rw`,
		"42 1 9:0 / /mnt/md rw - ext4 /dev/md0 rw",
		"43 1 7:0 / /mnt/loop rw - ext4 /dev/loop0 rw",
		"44 1 0:46 / /mnt/btrlink rw - btrfs /dev/disk/by-label/x rw",
		"45 1 0:47 / /mnt/overlay rw - overlay overlay rw,lowerdir=/a",
		"",
	}, "\n"))
	f.blockDev("pci0/virtio1/block/vda", "254:0", "vda", map[string]string{"size": "262144", "queue/logical_block_size": "512"})
	f.blockDev("pci0/virtio1/block/vda/vda1", "254:1", "vda1", map[string]string{"size": "65536", "partition": "1", "start": "2048"})
	f.blockDev("pci0/virtio1/block/vda/vda2", "254:2", "vda2", map[string]string{"size": "65536", "partition": "2", "start": "67584"})
	f.blockDev("pci0/virtio1/block/vda/vda3", "254:3", "vda3", map[string]string{"size": "1000", "partition": "3", "start": "133120"})
	f.blockDev("pci0/virtio2/block/vdb", "254:16", "vdb", map[string]string{"size": "2048", "queue/logical_block_size": "4096"})
	f.blockDev("virtual/block/dm-0", "253:0", "dm-0", map[string]string{"size": "4096", "dm/name": "vg-root"})
	f.blockDev("virtual/block/md0", "9:0", "md0", map[string]string{"size": "4096", "md/level": "raid1"})
	f.blockDev("virtual/block/loop0", "7:0", "loop0", map[string]string{"size": "4096", "loop/backing_file": "/x"})
	f.link("../../vda3", "dev/disk/by-label/x")

	for _, tt := range []struct {
		path     string
		wantName string
		wantSize int64
		wantPart int
		notPart  string // part of the ErrNotPartition message
		wantErr  string
	}{
		{path: "/mnt/root", wantName: "vda2", wantSize: 65536 * 512, wantPart: 2},
		{path: "/mnt/root/", wantName: "vda2", wantSize: 65536 * 512, wantPart: 2},
		{path: "/mnt/btr", wantName: "vda3", wantSize: 1000 * 512, wantPart: 3},
		{path: "/mnt/btrlink", wantName: "vda3", wantSize: 1000 * 512, wantPart: 3},
		{path: "/mnt/with space", wantName: "vdb", wantSize: 2048 * 512, notPart: "is a whole disk"},
		{path: "/mnt/lvm", wantName: "dm-0", notPart: "is a device-mapper device (LVM, LUKS or multipath)"},
		{path: "/mnt/md", wantName: "md0", notPart: "is an md RAID device"},
		{path: "/mnt/loop", wantName: "loop0", notPart: "is a loop device without partitions"},
		{path: "/mnt/tmp", wantErr: `/mnt/tmp (tmpfs from "tmpfs") is not on a block device: the source is not in /dev`},
		{path: "/mnt/overlay", wantErr: "is not on a block device"},
		{path: "/mnt/none", wantErr: "/mnt/none: not a mount point"},
	} {
		t.Run(tt.path, func(t *testing.T) {
			d, err := f.sys.MountDevice(tt.path)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("MountDevice = %+v, %v; want error %q", d, err, tt.wantErr)
				}
				if errors.Is(err, ErrNotMountPoint) != (tt.path == "/mnt/none") {
					t.Errorf("errors.Is(%v, ErrNotMountPoint) = %v", err, !(tt.path == "/mnt/none"))
				}
				return
			}
			if err != nil {
				t.Fatalf("MountDevice: %v", err)
			}
			if d.Name != tt.wantName || d.Path != filepath.Join(f.sys.Dev, tt.wantName) || (tt.wantSize > 0 && d.Size != tt.wantSize) {
				t.Fatalf("MountDevice = %+v, want %s of %d bytes", d, tt.wantName, tt.wantSize)
			}
			p, err := f.sys.Partition(d)
			if tt.notPart != "" {
				if !errors.Is(err, ErrNotPartition) || !strings.Contains(err.Error(), tt.notPart) {
					t.Fatalf("Partition = %+v, %v; want ErrNotPartition %q", p, err, tt.notPart)
				}
				return
			}
			if err != nil {
				t.Fatalf("Partition: %v", err)
			}
			if p.Num != tt.wantPart || p.Disk.Name != "vda" || p.Disk.Path != filepath.Join(f.sys.Dev, "vda") ||
				p.Disk.Major != 254 || p.Disk.Minor != 0 || p.SectorSize != 512 || p.Disk.Size != 262144*512 {
				t.Fatalf("Partition = %+v", p)
			}
		})
	}
	d, _ := f.sys.MountDevice("/mnt/root")
	if p, _ := f.sys.Partition(d); p.Start != 67584*512 {
		t.Errorf("vda2 starts at byte %d, want %d", p.Start, 67584*512)
	}
}

func TestUnescape(t *testing.T) {
	for in, want := range map[string]string{
		`/a\040b`:    "/a b",
		`/a\011\134`: "/a\t\\",
		`/a\04`:      `/a\04`,
		`/a\`:        `/a\`,
		`/a\999`:     `/a\999`,
		"/plain":     "/plain",
	} {
		if got := unescape(in); got != want {
			t.Errorf("unescape(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestGrowTellsKernel: grow writes, syncs, then tells the kernel; a
// table already grown only tells the kernel; a table whose partition
// starts elsewhere than the kernel's is not touched.
func TestGrowTellsKernel(t *testing.T) {
	type told struct {
		num           int
		start, length int64
	}
	for _, tt := range []struct {
		name       string
		grown      bool  // the table was grown by an earlier run
		kernelSize int64 // the kernel's size of the partition, bytes
		start      int64 // the kernel's start, bytes
		wantTold   *told
		wantErr    string
	}{
		{name: "grows", kernelSize: 65536 * 512, start: 2048 * 512,
			wantTold: &told{1, 2048 * 512, (262110 - 2048 + 1) * 512}},
		{name: "table grown, kernel not told", grown: true, kernelSize: 65536 * 512, start: 2048 * 512,
			wantTold: &told{1, 2048 * 512, (262110 - 2048 + 1) * 512}},
		{name: "nothing to do", grown: true, kernelSize: (262110 - 2048 + 1) * 512, start: 2048 * 512},
		{name: "other start", kernelSize: 65536 * 512, start: 4096 * 512,
			wantErr: "/dev/test: its table puts partition 1 at byte 1048576, the kernel at byte 2097152: not touched"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			d := newMemDisk(128 * mib)
			writeGPT(t, d, 512, 64*mib, gptPart{first: 2048, last: 67583})
			if tt.grown {
				if _, err := Grow(d.disk(512), 1); err != nil {
					t.Fatal(err)
				}
			}
			writes := d.writes
			var got *told
			synced := false
			p := Partition{Device: Device{Size: tt.kernelSize}, Num: 1, Start: tt.start}
			c, err := grow(d.disk(512), p, nil, func() error { synced = true; return nil }, func(num int, start, length int64) error {
				if !synced && !tt.grown {
					t.Errorf("the kernel was told before the disk was synced")
				}
				got = &told{num, start, length}
				return nil
			})
			if tt.wantErr != "" {
				if err == nil || err.Error() != tt.wantErr || d.writes != writes || got != nil {
					t.Fatalf("grow = %v, %v, %d writes, told %v; want error %q and nothing done", c, err, d.writes-writes, got, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("grow: %v", err)
			}
			if (got == nil) != (tt.wantTold == nil) || (got != nil && *got != *tt.wantTold) || c.KernelResized != (got != nil) {
				t.Fatalf("told the kernel %+v (KernelResized %v), want %+v", got, c.KernelResized, tt.wantTold)
			}
			if tt.grown && d.writes != writes {
				t.Errorf("the grown table was written again")
			}
		})
	}
}

// TestGrowChecksKernelPartitions: before anything is written, the new
// range is checked against every partition the kernel lists for the
// disk (a logical partition, a BSD slice, a slot the table reader does
// not see); an overlap writes nothing and tells the kernel nothing. The
// kernel's own entry for the partition does not count.
func TestGrowChecksKernelPartitions(t *testing.T) {
	for _, tt := range []struct {
		name    string
		others  []KernelPartition
		wantErr string
	}{
		{name: "only itself", others: []KernelPartition{{Name: "test1", Num: 1, Start: 2048 * 512, Size: 65536 * 512}}},
		{name: "one before", others: []KernelPartition{{Name: "test2", Num: 2, Start: 34 * 512, Size: 2000 * 512}}},
		{name: "empty entry", others: []KernelPartition{{Name: "test5", Num: 5, Start: 100000 * 512}}},
		{name: "a slice after the partition", others: []KernelPartition{{Name: "test5", Num: 5, Start: 100000 * 512, Size: 512}},
			wantErr: "/dev/test: partition 1's range (sectors 2048..262110 of 512 bytes) would overlap test5 (partition 5, sectors 100000..100000), which the kernel lists: nothing written"},
		{name: "at the disk's end", others: []KernelPartition{{Name: "test3", Num: 3, Start: 262100 * 512, Size: 10 * 512}},
			wantErr: "would overlap test3"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			d := newMemDisk(128 * mib)
			writeGPT(t, d, 512, 64*mib, gptPart{first: 2048, last: 67583})
			before, writes := d.snapshot(), d.writes
			told := false
			p := Partition{Device: Device{Size: 65536 * 512}, Num: 1, Start: 2048 * 512}
			c, err := grow(d.disk(512), p, tt.others, func() error { return nil }, func(int, int64, int64) error { told = true; return nil })
			if tt.wantErr == "" {
				if err != nil || !c.Grown() || !told {
					t.Fatalf("grow = %v, %v, told %v; want grown", c, err, told)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("grow: error %v, want %q", err, tt.wantErr)
			}
			if told || d.writes != writes || !reflect.DeepEqual(d.snapshot(), before) {
				t.Fatalf("refused, but %d writes, told %v", d.writes-writes, told)
			}
		})
	}
}

// TestGrowRestoresOnRefusal: when the kernel refuses the new size
// (BLKPG fails: EBUSY when it sees an overlap), the old table is written
// back byte for byte and verified before the error is returned, so the
// next boot reads the table the kernel still has. GPT (backup header
// moved) and MBR.
func TestGrowRestoresOnRefusal(t *testing.T) {
	for _, tt := range []struct {
		name  string
		make  func(testing.TB, *memDisk)
		start int64
	}{
		{"gpt", gpt(512, 64*mib, gptPart{first: 2048, last: 67583}), 2048},
		{"mbr", mbr(mbrPart{typ: 0x83, start: 2048, size: 65536}), 2048},
	} {
		t.Run(tt.name, func(t *testing.T) {
			d := newMemDisk(128 * mib)
			tt.make(t, d)
			before := d.snapshot()
			syncs := 0
			p := Partition{Device: Device{Size: 65536 * 512}, Num: 1, Start: tt.start * 512}
			c, err := grow(d.disk(512), p, nil, func() error { syncs++; return nil }, func(int, int64, int64) error { return unix.EBUSY })
			if err == nil || !strings.Contains(err.Error(), "BLKPG_RESIZE_PARTITION): device or resource busy; the old table was restored and verifies") {
				t.Fatalf("grow: error %v", err)
			}
			if d.writes == 0 || syncs < 2 {
				t.Fatalf("%d writes, %d syncs: the table was not written and restored", d.writes, syncs)
			}
			// Compare the bytes, not the chunks: restoring may touch a
			// chunk that was never written (it reads as zeros).
			for k, v := range d.snapshot() {
				if b, ok := before[k]; ok && b != v || !ok && strings.Trim(v, "\x00") != "" {
					t.Fatalf("chunk %d differs after the restore", k)
				}
			}
			if c == nil || c.Grown() || c.KernelResized {
				t.Fatalf("Change after the restore = %+v", c)
			}
			again, err := Plan(d.disk(512), 1)
			if err != nil || again.OldSize != 65536 {
				t.Fatalf("the restored table plans %+v, %v", again, err)
			}
		})
	}
}
