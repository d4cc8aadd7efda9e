package disks

import (
	"bufio"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/earlyinit/earlyinit/internal/ccfg"
	"github.com/earlyinit/earlyinit/internal/looptest"
	"github.com/earlyinit/earlyinit/internal/modules/core"
	"github.com/earlyinit/earlyinit/internal/modules/coretest"
	"github.com/earlyinit/earlyinit/internal/rootfs"
	"golang.org/x/sys/unix"
)

// recExec is SystemExec, recording what it runs.
type recExec struct {
	mu    sync.Mutex
	calls []string
}

func (r *recExec) Run(ctx context.Context, c core.Cmd) ([]byte, error) {
	r.mu.Lock()
	r.calls = append(r.calls, c.String())
	r.mu.Unlock()
	return core.SystemExec{}.Run(ctx, c)
}

// ran is the commands run whose name starts with one of prefixes.
func (r *recExec) ran(prefixes ...string) []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for _, c := range r.calls {
		for _, p := range prefixes {
			if strings.HasPrefix(c, p) {
				out = append(out, c)
			}
		}
	}
	return out
}

// realEnv is an Env on this machine: root "/", the real tools through
// SystemExec (recorded), cfg parsed as cloud-config.
func realEnv(t *testing.T, cfg string) (*coretest.Env, *recExec) {
	t.Helper()
	te := coretest.NewEnv(t, cfg)
	root, err := rootfs.Open("/")
	if err != nil {
		t.Fatal(err)
	}
	rec := &recExec{}
	te.Root, te.Exec = root, rec
	return te, rec
}

// fileHash is the SHA-256 of file's bytes.
func fileHash(t *testing.T, file string) string {
	t.Helper()
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("%x", h.Sum(nil))
}

// writeRandom fills n bytes of file at off with random bytes: GRUB's
// core.img, a database's raw partition, anything without a signature.
func writeRandom(t *testing.T, file string, off, n int64) {
	t.Helper()
	f, err := os.OpenFile(file, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	b := make([]byte, n)
	rand.Read(b)
	if _, err := f.WriteAt(b, off); err != nil {
		t.Fatal(err)
	}
}

const loopMiB = int64(1) << 20

// TestFSSetupLoopRefuses builds real GPT disks with sgdisk on loop
// devices and runs fs_setup through the real lsblk, blkid and mkfs: each
// is refused with one error naming the partition, and not a byte of the
// disk changes. Here (as in a container) there is no udev database, so
// lsblk shows no FSTYPE nor PARTTYPE: cloud-init's find_device_node would
// format the first partition every time.
func TestFSSetupLoopRefuses(t *testing.T) {
	looptest.Require(t)
	for _, tt := range []struct {
		name   string
		size   int64
		sgdisk []string
		random []int          // partitions filled with random bytes
		mkfs   map[int]string // partition -> file system made
		fs     string         // the fs_setup entry's keys after device
		want   string         // "%s" is the loop device
	}{
		{
			name:   "BIOS boot, xfs, blank",
			size:   400 * loopMiB,
			sgdisk: []string{"-n", "1:2048:+1M", "-t", "1:ef02", "-n", "2:0:+320M", "-t", "2:8300", "-n", "3:0:0", "-t", "3:8300"},
			random: []int{1},
			mkfs:   map[int]string{2: "xfs"},
			fs:     "filesystem: ext4, label: data",
			want:   "fs_setup.0: %[1]s: partition: any: %[1]sp1 is a BIOS boot partition (GPT type 21686148-6449-6e6f-744e-656564454649): not formatted without overwrite: true",
		},
		{
			name:   "ESP, ext4, auto",
			size:   64 * loopMiB,
			sgdisk: []string{"-n", "1:2048:+8M", "-t", "1:ef00", "-n", "2:0:0", "-t", "2:8300"},
			mkfs:   map[int]string{2: "ext4"},
			fs:     "filesystem: ext4, label: data, partition: auto",
			want:   "fs_setup.0: %[1]s: partition: auto: %[1]sp1 is an EFI system partition (GPT type c12a7328-f81f-11d2-ba4b-00a0c93ec93b): not formatted without overwrite: true",
		},
		{
			name:   "a raw partition before an ext4 one",
			size:   64 * loopMiB,
			sgdisk: []string{"-n", "1:2048:+16M", "-t", "1:8300", "-n", "2:0:0", "-t", "2:8300"},
			random: []int{1},
			mkfs:   map[int]string{2: "ext4"},
			fs:     "filesystem: ext4, label: data",
			want:   "fs_setup.0: %[1]s: partition: any: %[1]s has a partition table with used partitions (%[1]sp2: ext4): not chosen without overwrite: true",
		},
		{
			name:   "only a raw partition",
			size:   64 * loopMiB,
			sgdisk: []string{"-n", "1:2048:0", "-t", "1:8300"},
			random: []int{1},
			fs:     "filesystem: ext4, label: data",
			want:   "fs_setup.0: %[1]s: partition: any: %[1]s has a partition table disk_setup did not write in this run",
		},
		{
			name:   "BIOS boot by number",
			size:   64 * loopMiB,
			sgdisk: []string{"-n", "1:2048:+1M", "-t", "1:ef02", "-n", "2:0:0", "-t", "2:8300"},
			random: []int{1},
			fs:     "filesystem: ext4, label: data, partition: 1",
			want:   "fs_setup.0: %[1]sp1 is a BIOS boot partition (GPT type 21686148-6449-6e6f-744e-656564454649): not formatted without overwrite: true",
		},
	} {
		t.Run(tt.name, func(t *testing.T) {
			file := looptest.Image(t, tt.size)
			looptest.Run(t, "sgdisk", append(tt.sgdisk, file)...)
			starts := partStarts(t, file)
			for _, n := range tt.random {
				writeRandom(t, file, starts[n], loopMiB)
			}
			loop := looptest.Attach(t, file, 512)
			for n, fs := range tt.mkfs {
				p := fmt.Sprintf("%sp%d", loop, n)
				looptest.WaitBlock(t, p)
				looptest.Mkfs(t, fs, p)
			}
			before := fileHash(t, file)

			te, rec := realEnv(t, fmt.Sprintf("fs_setup:\n  - {device: %s, %s}\n", loop, tt.fs))
			wantErr(t, te.RunFunc(DiskSetup), fmt.Sprintf(tt.want, loop))
			if m := rec.ran("mkfs", "mkswap", "wipefs", "sgdisk", "sfdisk"); m != nil {
				t.Errorf("ran %q", m)
			}
			if after := fileHash(t, file); after != before {
				t.Errorf("the disk changed")
			}
		})
	}
}

// partStarts is the byte offset of each partition of the GPT in file,
// by sgdisk --info.
func partStarts(t *testing.T, file string) map[int]int64 {
	t.Helper()
	starts := map[int]int64{}
	for n := 1; n <= 4; n++ {
		out, err := execOut("sgdisk", "--info="+strconv.Itoa(n), file)
		if err != nil {
			continue
		}
		for _, line := range strings.Split(out, "\n") {
			if v, ok := strings.CutPrefix(line, "First sector: "); ok {
				s, _ := strconv.ParseInt(strings.Fields(v)[0], 10, 64)
				if s > 0 {
					starts[n] = s * 512
				}
			}
		}
	}
	return starts
}

func execOut(name string, args ...string) (string, error) {
	out, err := core.SystemExec{}.Run(context.Background(), core.Cmd{Name: name, Args: args})
	return string(out), err
}

// blkidValue is blkid's tag for dev ("" when it finds none).
func blkidValue(t *testing.T, dev, tag string) string {
	t.Helper()
	out, _ := execOut("blkid", "-c", "/dev/null", "-p", "-o", "value", "-s", tag, dev)
	return strings.TrimSpace(out)
}

// TestFSSetupLoopFormats: what is not in use is still formatted with the
// real tools: a named blank partition beside a BIOS boot one (whose bytes
// stay as they were), a blank device without a table (cloud-init's "the
// disk itself"), and, on a disk partitioned in this run, auto filling its
// partitions one label after another, the second entry finding the first
// one's file system by earlyinit's own probe where lsblk (no udev) shows
// none.
func TestFSSetupLoopFormats(t *testing.T) {
	looptest.Require(t)
	t.Run("partition 2 beside BIOS boot", func(t *testing.T) {
		file := looptest.Image(t, 64*loopMiB)
		looptest.Run(t, "sgdisk", "-n", "1:2048:+1M", "-t", "1:ef02", "-n", "2:0:0", "-t", "2:8300", file)
		writeRandom(t, file, 2048*512, loopMiB)
		core := regionHash(t, file, 0, 2*loopMiB)
		loop := looptest.Attach(t, file, 512)
		looptest.WaitBlock(t, loop+"p2")
		te, _ := realEnv(t, fmt.Sprintf("fs_setup:\n  - {device: %s, partition: 2, filesystem: ext4, label: data}\n", loop))
		if err := te.RunFunc(DiskSetup); err != nil {
			t.Fatal(err)
		}
		if got := blkidValue(t, loop+"p2", "LABEL"); got != "data" {
			t.Errorf("%sp2: label %q", loop, got)
		}
		if regionHash(t, file, 0, 2*loopMiB) != core {
			t.Errorf("the table or the BIOS boot partition changed")
		}
	})
	t.Run("a blank device", func(t *testing.T) {
		file := looptest.Image(t, 64*loopMiB)
		loop := looptest.Attach(t, file, 512)
		te, _ := realEnv(t, fmt.Sprintf("fs_setup:\n  - {device: %s, filesystem: ext4, label: whole}\n", loop))
		if err := te.RunFunc(DiskSetup); err != nil {
			t.Fatal(err)
		}
		if got := blkidValue(t, loop, "LABEL"); got != "whole" {
			t.Errorf("%s: label %q", loop, got)
		}
	})
	t.Run("auto on a disk partitioned in this run", func(t *testing.T) {
		file := looptest.Image(t, 64*loopMiB)
		looptest.Run(t, "sgdisk", "-n", "1:2048:+16M", "-n", "2:0:0", file)
		loop := looptest.Attach(t, file, 512)
		looptest.WaitBlock(t, loop+"p2")
		te, _ := realEnv(t, "")
		// disk_setup refuses loop devices (lsblk's TYPE is loop, not
		// disk), so the test partitioned it and says it is ours.
		ours := map[string]bool{strings.TrimPrefix(loop, "/dev/"): true}
		for _, label := range []string{"one", "two"} {
			def := ccfg.FSSetup{Device: loop, Partition: "auto", Filesystem: "ext4", Label: label}
			if err := makeFS(t.Context(), te.Env, nil, def, ours); err != nil {
				t.Fatalf("%s: %v", label, err)
			}
		}
		for n, want := range []string{"one", "two"} {
			if got := blkidValue(t, fmt.Sprintf("%sp%d", loop, n+1), "LABEL"); got != want {
				t.Errorf("%sp%d: label %q, want %q\n%s", loop, n+1, got, want, te.LogBuf.String())
			}
		}
	})
}

// regionHash is the SHA-256 of n bytes of file at off.
func regionHash(t *testing.T, file string, off, n int64) string {
	t.Helper()
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, io.NewSectionReader(f, off, n)); err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("%x", h.Sum(nil))
}

// TestFSSetupLoopUnopenable: a block device node that cannot be opened
// (no driver for its major: ENXIO) makes the real blkid exit 2, "nothing
// found"; it is not formatted.
func TestFSSetupLoopUnopenable(t *testing.T) {
	looptest.Require(t)
	major := unusedBlockMajor(t)
	node := fmt.Sprintf("/dev/earlyinit-test-%d", os.Getpid())
	if err := unix.Mknod(node, unix.S_IFBLK|0o600, int(unix.Mkdev(major, 0))); err != nil {
		t.Fatalf("mknod %s: %v", node, err)
	}
	t.Cleanup(func() { os.Remove(node) })
	if _, err := execOut("blkid", "-c", "/dev/null", "-p", "-o", "export", node); err == nil {
		t.Fatalf("blkid read %s", node)
	} else if code, _ := core.ExitCode(err); code != 2 {
		t.Fatalf("blkid %s: %v, want exit status 2", node, err)
	}
	te, rec := realEnv(t, fmt.Sprintf("fs_setup:\n  - {device: %s, partition: none, filesystem: ext4, label: data}\n", node))
	wantErr(t, te.RunFunc(DiskSetup), "fs_setup.0: "+node+" could not be read (open "+node+": no such device or address): treated as in use, not formatted without overwrite: true")
	if m := rec.ran("mkfs"); m != nil {
		t.Errorf("ran %q", m)
	}
}

// unusedBlockMajor is a block major number in the local/experimental
// range (240-254) no driver has.
func unusedBlockMajor(t *testing.T) uint32 {
	t.Helper()
	f, err := os.Open("/proc/devices")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	used := map[uint32]bool{}
	block := false
	for s := bufio.NewScanner(f); s.Scan(); {
		line := strings.TrimSpace(s.Text())
		if line == "Block devices:" {
			block = true
			continue
		}
		if n, err := strconv.ParseUint(strings.Fields(line + " x")[0], 10, 32); block && err == nil {
			used[uint32(n)] = true
		}
	}
	for m := uint32(240); m <= 254; m++ {
		if !used[m] {
			return m
		}
	}
	t.Skip("no unused block major in 240-254")
	return 0
}
