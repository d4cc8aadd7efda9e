package growpart

import (
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/earlyinit/earlyinit/internal/looptest"
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
