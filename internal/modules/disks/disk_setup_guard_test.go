package disks

import (
	"context"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"hash/crc32"
	"io"
	"io/fs"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/earlyinit/earlyinit/internal/blockdev"
	"github.com/earlyinit/earlyinit/internal/modules/core"
	"github.com/earlyinit/earlyinit/internal/modules/coretest"
)

// image is a disk in memory; a read touching one of the bad ranges
// ([start, end) in bytes) fails with EIO, as a failing disk's does.
type image struct {
	mu  sync.Mutex
	b   []byte
	bad [][2]int64
}

const imageSize = 8 << 20 // 16384 sectors

func newImage() *image { return &image{b: make([]byte, imageSize)} }

func (im *image) ReadAt(p []byte, off int64) (int, error) {
	im.mu.Lock()
	defer im.mu.Unlock()
	for _, r := range im.bad {
		if off < r[1] && off+int64(len(p)) > r[0] {
			return 0, syscall.EIO
		}
	}
	if off >= int64(len(im.b)) {
		return 0, io.EOF
	}
	n := copy(p, im.b[off:])
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

func (im *image) write(off int64, data []byte) {
	im.mu.Lock()
	defer im.mu.Unlock()
	copy(im.b[off:], data)
}

// table is the image's partition table as blockdev reads it.
func (im *image) table(t testing.TB) blockdev.PartTable {
	t.Helper()
	pt, err := blockdev.ReadPartTable(im, int64(len(im.b)))
	if err != nil {
		t.Fatalf("test image: %v", err)
	}
	return pt
}

// zeros is a readable blank device of any size.
type zeros struct{}

func (zeros) ReadAt(p []byte, off int64) (int, error) { clear(p); return len(p), nil }

type nopCloser struct{}

func (nopCloser) Close() error { return nil }

// devExec is a fakeExec that also opens devices (deviceOpener): disks
// from images (and their partitions, by the image's table at the time of
// the open) and fixed devices; any other path does not exist.
type devExec struct {
	*coretest.FakeExec
	mu     sync.Mutex
	images map[string]*image
	fixed  map[string]int64 // path -> size of a blank device
	opened []string
}

func withDevices(te *coretest.Env) *devExec {
	de := &devExec{FakeExec: te.Fake, images: map[string]*image{}, fixed: map[string]int64{}}
	te.Env.Exec = de
	return de
}

func (de *devExec) OpenDevice(path string) (io.ReaderAt, int64, io.Closer, error) {
	de.mu.Lock()
	defer de.mu.Unlock()
	de.opened = append(de.opened, path)
	if size, ok := de.fixed[path]; ok {
		return zeros{}, size, nopCloser{}, nil
	}
	for disk, im := range de.images {
		if path == disk {
			return im, int64(len(im.b)), nopCloser{}, nil
		}
		if pt, err := blockdev.ReadPartTable(im, int64(len(im.b))); err == nil {
			for _, p := range pt.Parts {
				if partitionPath(disk, strconv.Itoa(p.Num)) == path {
					return io.NewSectionReader(im, p.Start, p.Size), p.Size, nopCloser{}, nil
				}
			}
		}
	}
	return nil, 0, nil, &fs.PathError{Op: "open", Path: path, Err: syscall.ENOENT}
}

var le = binary.LittleEndian

// guidBytes is a GUID as GPT stores it (the first three fields
// little-endian).
func guidBytes(s string) []byte {
	b, err := hex.DecodeString(strings.ReplaceAll(s, "-", ""))
	if err != nil || len(b) != 16 {
		panic("bad GUID " + s)
	}
	b[0], b[1], b[2], b[3] = b[3], b[2], b[1], b[0]
	b[4], b[5] = b[5], b[4]
	b[6], b[7] = b[7], b[6]
	return b
}

type gptPart struct {
	typ         string // type GUID
	first, last int64  // LBAs
}

// Partitions of the test images: 1 MiB, 2 MiB and the rest.
var (
	gptLayout = [][2]int64{{2048, 4095}, {4096, 8191}, {8192, 16350}}
	mbrLayout = [][2]int64{{2048, 2048}, {4096, 4096}, {8192, 8159}}
)

// writeGPT writes a protective MBR, both GPT headers and entry arrays
// (512-byte sectors).
func (im *image) writeGPT(parts ...gptPart) {
	n := int64(len(im.b)) / 512
	mbr := make([]byte, 512)
	mbr[446+4] = 0xee
	le.PutUint32(mbr[446+8:], 1)
	le.PutUint32(mbr[446+12:], uint32(n-1))
	mbr[510], mbr[511] = 0x55, 0xaa
	ents := make([]byte, 128*128)
	for i, p := range parts {
		e := ents[i*128:]
		copy(e[0:16], guidBytes(p.typ))
		copy(e[16:32], guidBytes(fmt.Sprintf("%08x-0000-4000-8000-000000000001", i+1)))
		le.PutUint64(e[32:], uint64(p.first))
		le.PutUint64(e[40:], uint64(p.last))
	}
	hdr := func(my, alt, entLBA int64) []byte {
		h := make([]byte, 92)
		copy(h, "EFI PART")
		le.PutUint32(h[8:], 0x00010000)
		le.PutUint32(h[12:], 92)
		le.PutUint64(h[24:], uint64(my))
		le.PutUint64(h[32:], uint64(alt))
		le.PutUint64(h[40:], 34)
		le.PutUint64(h[48:], uint64(n-34))
		copy(h[56:72], guidBytes("12345678-0000-4000-8000-0000000000aa"))
		le.PutUint64(h[72:], uint64(entLBA))
		le.PutUint32(h[80:], 128)
		le.PutUint32(h[84:], 128)
		le.PutUint32(h[88:], crc32.ChecksumIEEE(ents))
		le.PutUint32(h[16:], crc32.ChecksumIEEE(h))
		return h
	}
	im.write(0, mbr)
	im.write(512, hdr(1, n-1, 2))
	im.write(2*512, ents)
	im.write((n-33)*512, ents)
	im.write((n-1)*512, hdr(n-1, 1, n-33))
}

type mbrPart struct {
	typ         byte
	start, size int64 // sectors
}

func (im *image) writeMBR(parts ...mbrPart) {
	mbr := make([]byte, 512)
	le.PutUint32(mbr[440:], 0x12345678)
	for i, p := range parts {
		e := mbr[446+16*i:]
		e[4] = p.typ
		le.PutUint32(e[8:], uint32(p.start))
		le.PutUint32(e[12:], uint32(p.size))
	}
	mbr[510], mbr[511] = 0x55, 0xaa
	im.write(0, mbr)
}

// gptImage is a GPT disk whose partitions have the types given, in
// gptLayout's places.
func gptImage(types ...string) *image {
	im := newImage()
	var parts []gptPart
	for i, typ := range types {
		parts = append(parts, gptPart{typ, gptLayout[i][0], gptLayout[i][1]})
	}
	im.writeGPT(parts...)
	return im
}

func mbrImage(types ...byte) *image {
	im := newImage()
	var parts []mbrPart
	for i, typ := range types {
		parts = append(parts, mbrPart{typ, mbrLayout[i][0], mbrLayout[i][1]})
	}
	im.writeMBR(parts...)
	return im
}

// partStart is the byte offset of partition n (from 1) of the image.
func (im *image) partStart(t testing.TB, n int) int64 {
	t.Helper()
	for _, p := range im.table(t).Parts {
		if p.Num == n {
			return p.Start
		}
	}
	t.Fatalf("no partition %d", n)
	return 0
}

// lsblkOf is lsblk --pairs for disk (its image), the partitions with the
// FSTYPE given (by number) and, with udev, PARTTYPE; lsblk without a
// udev database shows neither.
func lsblkOf(t testing.TB, disk string, im *image, fstype map[int]string, udev bool) string {
	t.Helper()
	name := strings.TrimPrefix(disk, "/dev/")
	out := fmt.Sprintf("NAME=%q TYPE=\"disk\" FSTYPE=\"\" LABEL=\"\" PARTTYPE=\"\"\n", name)
	pt, err := blockdev.ReadPartTable(im, int64(len(im.b)))
	if err != nil {
		return out
	}
	for _, p := range pt.Parts {
		typ, fs := "", ""
		if udev {
			fs = fstype[p.Num]
			typ = p.Type
			if pt.Type == "dos" {
				n, _ := strconv.ParseUint(p.Type, 16, 8)
				typ = fmt.Sprintf("0x%x", n) // as blkid's PART_ENTRY_TYPE: "0x83", "0x5"
			}
		}
		out += fmt.Sprintf("NAME=%q TYPE=\"part\" FSTYPE=%q LABEL=\"\" PARTTYPE=%q\n",
			strings.TrimPrefix(partitionPath(disk, strconv.Itoa(p.Num)), "/dev/"), fs, typ)
	}
	return out
}

// ext4Super is an ext4 superblock (at 1024) as far as blkid and
// internal/blockdev look: the magic, a journal, extents, the label.
func ext4Super(label string) []byte {
	sb := make([]byte, 1024)
	le.PutUint16(sb[56:], 0xef53)
	le.PutUint32(sb[92:], 0x0004)
	le.PutUint32(sb[96:], 0x0040)
	copy(sb[120:136], label)
	return sb
}

// lvmLabel is an LVM2 physical volume's label sector.
func lvmLabel() []byte {
	b := make([]byte, 512)
	copy(b, "LABELONE")
	copy(b[24:], "LVM2 001")
	return b
}

// swapSig is the last bytes of a swap area's first 4 KiB page.
func swapSig() (int64, []byte) { return 4096 - 10, []byte("SWAPSPACE2") }

// The system partition types, as util-linux names them.
var systemTypes = []struct {
	gpt  string
	mbr  byte // 0: none
	what string
}{
	{"21686148-6449-6e6f-744e-656564454649", 0, "a BIOS boot partition"},
	{"c12a7328-f81f-11d2-ba4b-00a0c93ec93b", 0xef, "an EFI system partition"},
	{"e3c9e316-0b5c-4db8-817d-f92df00215ae", 0, "a Microsoft reserved partition"},
	{"9e1a2d38-c612-4316-aa26-8b49521e5a8b", 0x41, "a PReP boot partition"},
	{"0657fd6d-a4ab-43c4-84e5-0933c84b4f4f", 0x82, "a Linux swap partition"},
	{"e6d6d379-f507-44c2-a23c-238f2a3df928", 0x8e, "a Linux LVM partition"},
	{"a19d880f-05fc-4d3b-a006-743f0f84911e", 0xfd, "a Linux RAID partition"},
	{"", 0x05, "an extended partition"},
	{"", 0x0f, "an extended partition"},
	{"", 0x85, "an extended partition"},
}

const linuxGUID = "0fc63daf-8483-4772-8e79-3d69d8477de4"

// guardEnv is an env for fs_setup cfg with /dev/vdb (its image im), the
// fake lsblk showing fstype (by partition number) and, with udev,
// PARTTYPE; the fake blkid finds probe's (device -> export output).
func guardEnv(t *testing.T, cfg string, im *image, fstype map[int]string, udev bool, probe map[string]string) (*coretest.Env, *devExec) {
	t.Helper()
	te := coretest.DistroEnv(t, "debian", cfg, "/dev/vdb", "/dev/vdb1", "/dev/vdb2", "/dev/vdb3", "/usr/sbin/mkfs.ext4", "/usr/sbin/mkfs.vfat", "/sbin/mkswap")
	fakeDisks{lsblk: map[string]string{"/dev/vdb": lsblkOf(t, "/dev/vdb", im, fstype, udev)}, probe: probe}.install(te)
	de := withDevices(te)
	de.images["/dev/vdb"] = im
	return te, de
}

// ranMkfs is the mkfs or mkswap commands te ran.
func ranMkfs(te *coretest.Env) []string {
	var out []string
	for _, c := range te.Calls() {
		if strings.HasPrefix(c, "mkfs") || strings.HasPrefix(c, "mkswap") || strings.HasPrefix(c, "sh ") ||
			strings.HasPrefix(c, "sfdisk") || strings.HasPrefix(c, "sgdisk") || strings.HasPrefix(c, "wipefs") {
			out = append(out, c)
		}
	}
	return out
}

func wantErr(t *testing.T, err error, want ...string) {
	t.Helper()
	if err == nil {
		t.Fatalf("no error, want %q", want)
	}
	for _, w := range want {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("error %q\nlacks %q", err, w)
		}
	}
	if strings.Contains(err.Error(), "\n") {
		t.Errorf("error is more than one line: %q", err)
	}
}

// TestFSSetupAnyRefusesSystemPartitions: any and auto pick the first
// partition without a file system, as cloud-init does; without
// overwrite: true one of a system type is refused (whether lsblk knows
// the type or only the disk's own table does), with overwrite: true it
// is formatted as cloud-init would.
func TestFSSetupAnyRefusesSystemPartitions(t *testing.T) {
	for _, st := range systemTypes {
		for _, table := range []string{"gpt", "mbr"} {
			var im func() *image
			var shown string
			switch {
			case table == "gpt" && st.gpt != "":
				im = func() *image { return gptImage(st.gpt, linuxGUID) }
				shown = "GPT type " + st.gpt
			case table == "mbr" && st.mbr != 0:
				im = func() *image { return mbrImage(st.mbr, 0x83) }
				shown = fmt.Sprintf("MBR type 0x%02x", st.mbr)
			default:
				continue
			}
			for _, mode := range []string{"any", "auto"} {
				for _, udev := range []bool{false, true} {
					t.Run(fmt.Sprintf("%s %s %s udev=%v", table, shown, mode, udev), func(t *testing.T) {
						cfg := "fs_setup:\n  - {device: /dev/vdb, filesystem: ext4, label: data, partition: " + mode + "}\n"
						te, _ := guardEnv(t, cfg, im(), nil, udev, nil)
						err := te.RunFunc(DiskSetup)
						wantErr(t, err, "fs_setup.0: /dev/vdb: partition: "+mode+": /dev/vdb1 is "+st.what+" ("+shown+"): not formatted without overwrite: true")
						if m := ranMkfs(te); m != nil {
							t.Errorf("ran %q", m)
						}

						te, _ = guardEnv(t, strings.Replace(cfg, "}", ", overwrite: true}", 1), im(), nil, udev, nil)
						if err := te.RunFunc(DiskSetup); err != nil {
							t.Fatalf("overwrite: true: %v", err)
						}
						if m := ranMkfs(te); len(m) != 1 || m[0] != "mkfs.ext4 -L data -F /dev/vdb1" {
							t.Errorf("overwrite: true: ran %q", m)
						}
					})
				}
			}
		}
	}
}

// TestFSSetupAnyRefusesUsedDisks: on a disk disk_setup did not partition
// in this run, any and auto choose nothing without overwrite: true; the
// error names the partition and why.
func TestFSSetupAnyRefusesUsedDisks(t *testing.T) {
	for _, tt := range []struct {
		name   string
		im     func(t *testing.T) *image
		fstype map[int]string
		udev   bool
		cfg    string
		want   string
	}{
		{
			name:   "RHEL-shaped root disk: BIOS boot, xfs /boot, LVM",
			im:     func(*testing.T) *image { return gptImage(systemTypes[0].gpt, linuxGUID, systemTypes[5].gpt) },
			fstype: map[int]string{2: "xfs", 3: "LVM2_member"},
			udev:   true,
			want:   "fs_setup.0: /dev/vdb: partition: any: /dev/vdb1 is a BIOS boot partition (GPT type 21686148-6449-6e6f-744e-656564454649): not formatted without overwrite: true",
		},
		{
			name:   "an xfs partition and a blank one",
			im:     func(*testing.T) *image { return gptImage(linuxGUID, linuxGUID) },
			fstype: map[int]string{1: "xfs"},
			udev:   true,
			want:   "fs_setup.0: /dev/vdb: partition: any: /dev/vdb has a partition table with used partitions (/dev/vdb1: xfs): not chosen without overwrite: true",
		},
		{
			name: "an LVM physical volume lsblk does not know (no udev)",
			im: func(t *testing.T) *image {
				im := mbrImage(0x83, 0x83)
				im.write(im.partStart(t, 1)+512, lvmLabel())
				return im
			},
			want: "/dev/vdb has a partition table with used partitions (/dev/vdb1: LVM2_member): not chosen without overwrite: true",
		},
		{
			name: "a swap area lsblk does not know, auto",
			im: func(t *testing.T) *image {
				im := gptImage(linuxGUID, linuxGUID)
				off, sig := swapSig()
				im.write(im.partStart(t, 1)+off, sig)
				return im
			},
			cfg:  "fs_setup:\n  - {device: /dev/vdb, filesystem: ext4, label: data, partition: auto}\n",
			want: "fs_setup.0: /dev/vdb: partition: auto: /dev/vdb has a partition table with used partitions (/dev/vdb1: swap): not chosen without overwrite: true",
		},
		{
			name: "a partition that cannot be read",
			im: func(t *testing.T) *image {
				im := gptImage(linuxGUID, linuxGUID)
				s := im.partStart(t, 2)
				im.bad = [][2]int64{{s + 4096, s + 8192}}
				return im
			},
			fstype: map[int]string{1: "xfs"},
			udev:   true,
			want:   "/dev/vdb has a partition table with used partitions (/dev/vdb1: xfs, /dev/vdb2: could not be read): not chosen",
		},
		{
			name: "blank partitions, but not made in this run",
			im:   func(*testing.T) *image { return gptImage(linuxGUID, linuxGUID) },
			udev: true,
			want: "fs_setup.0: /dev/vdb: partition: any: /dev/vdb has a partition table disk_setup did not write in this run: its partitions show no signature, but a raw partition holds data without one: not chosen without overwrite: true",
		},
		{
			name:   "replace_fs on an ESP",
			im:     func(*testing.T) *image { return gptImage(systemTypes[1].gpt, linuxGUID) },
			fstype: map[int]string{1: "vfat", 2: "ext4"},
			udev:   true,
			cfg:    "fs_setup:\n  - {device: /dev/vdb, filesystem: vfat, label: data, replace_fs: vfat}\n",
			want:   "/dev/vdb1 is an EFI system partition (GPT type c12a7328-f81f-11d2-ba4b-00a0c93ec93b): not formatted without overwrite: true",
		},
	} {
		t.Run(tt.name, func(t *testing.T) {
			cfg := tt.cfg
			if cfg == "" {
				cfg = "fs_setup:\n  - {device: /dev/vdb, filesystem: ext4, label: data}\n"
			}
			te, _ := guardEnv(t, cfg, tt.im(t), tt.fstype, tt.udev, nil)
			wantErr(t, te.RunFunc(DiskSetup), tt.want)
			if m := ranMkfs(te); m != nil {
				t.Errorf("ran %q", m)
			}
		})
	}
}

// TestFSSetupReplaceFSOnUsedDisk: replace_fs still replaces the file
// system it names on a disk with other used partitions (cloud-init's
// behaviour), as it names what may go.
func TestFSSetupReplaceFSOnUsedDisk(t *testing.T) {
	cfg := "fs_setup:\n  - {device: /dev/vdb, filesystem: ext4, label: data, replace_fs: ext3}\n"
	te, _ := guardEnv(t, cfg, gptImage(linuxGUID, linuxGUID), map[int]string{1: "ext3", 2: "xfs"}, true,
		map[string]string{"/dev/vdb1": "TYPE=ext3\n"})
	if err := te.RunFunc(DiskSetup); err != nil {
		t.Fatal(err)
	}
	if m := ranMkfs(te); len(m) != 1 || m[0] != "mkfs.ext4 -L data /dev/vdb1" {
		t.Errorf("ran %q", m)
	}
}

// TestFSSetupExplicitPartitionType: partition N and "dev.N" of a system
// type are refused unless the type is for the file system asked
// (cloud-init's own example makes swap on a [100, 82] partition); the
// type comes from the disk's table, or lsblk for partition none.
func TestFSSetupExplicitPartitionType(t *testing.T) {
	for _, tt := range []struct {
		name, cfg string
		im        *image
		lsblk     map[string]string // extra lsblk answers
		want      string            // error; "" for success
		mkfs      string
	}{
		{
			name: "BIOS boot by number",
			cfg:  "fs_setup:\n  - {device: /dev/vdb, partition: 1, filesystem: ext4, label: data}\n",
			im:   gptImage(systemTypes[0].gpt, linuxGUID),
			want: "fs_setup.0: /dev/vdb1 is a BIOS boot partition (GPT type 21686148-6449-6e6f-744e-656564454649): not formatted without overwrite: true",
		},
		{
			name: "PReP by dotted name",
			cfg:  "fs_setup:\n  - {device: /dev/vdb.1, filesystem: ext4, label: data}\n",
			im:   mbrImage(0x41, 0x83),
			want: "fs_setup.0: /dev/vdb1 is a PReP boot partition (MBR type 0x41): not formatted without overwrite: true",
		},
		{
			name: "swap on a swap partition",
			cfg:  "fs_setup:\n  - {device: /dev/vdb.1, filesystem: swap, label: swap}\n",
			im:   mbrImage(0x82, 0x83),
			mkfs: "mkswap -L swap /dev/vdb1",
		},
		{
			name: "vfat on an ESP",
			cfg:  "fs_setup:\n  - {device: /dev/vdb, partition: 1, filesystem: vfat, label: ESP}\n",
			im:   gptImage(systemTypes[1].gpt),
			mkfs: "mkfs.vfat -L ESP /dev/vdb1",
		},
		{
			name: "ext4 on a Linux partition",
			cfg:  "fs_setup:\n  - {device: /dev/vdb, partition: 2, filesystem: ext4, label: data}\n",
			im:   gptImage(systemTypes[0].gpt, linuxGUID),
			mkfs: "mkfs.ext4 -L data /dev/vdb2",
		},
		{
			name:  "a partition named as the device, partition none",
			cfg:   "fs_setup:\n  - {device: /dev/vdb1, partition: none, filesystem: ext4, label: data}\n",
			im:    gptImage(systemTypes[1].gpt),
			lsblk: map[string]string{"/dev/vdb1": `NAME="vdb1" TYPE="part" FSTYPE="" LABEL="" PARTTYPE="c12a7328-f81f-11d2-ba4b-00a0c93ec93b"` + "\n"},
			want:  "fs_setup.0: /dev/vdb1 is an EFI system partition (GPT type c12a7328-f81f-11d2-ba4b-00a0c93ec93b): not formatted without overwrite: true",
		},
		{
			name: "overwrite: true",
			cfg:  "fs_setup:\n  - {device: /dev/vdb, partition: 1, filesystem: ext4, label: data, overwrite: true}\n",
			im:   gptImage(systemTypes[0].gpt, linuxGUID),
			mkfs: "mkfs.ext4 -L data -F /dev/vdb1",
		},
	} {
		t.Run(tt.name, func(t *testing.T) {
			te, _ := guardEnv(t, tt.cfg, tt.im, nil, true, nil)
			for dev, out := range tt.lsblk {
				prev := te.Fake.Handlers["lsblk"]
				te.Fake.Handlers["lsblk"] = func(c core.Cmd) ([]byte, error) {
					if c.Args[3] == dev {
						return []byte(out), nil
					}
					return prev(c)
				}
			}
			err := te.RunFunc(DiskSetup)
			if tt.want != "" {
				wantErr(t, err, tt.want)
				if m := ranMkfs(te); m != nil {
					t.Errorf("ran %q", m)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if m := ranMkfs(te); len(m) != 1 || m[0] != tt.mkfs {
				t.Errorf("ran %q, want %q", m, tt.mkfs)
			}
		})
	}
}

// TestFSSetupUnreadableDevice: blkid's exit status 2 is also "could not
// open or read": a device earlyinit's own read fails on is in use, on
// every path, with one error; a readable blank one is still formatted.
func TestFSSetupUnreadableDevice(t *testing.T) {
	badStart := [][2]int64{{0, 512}}
	badEnd := [][2]int64{{imageSize - 512, imageSize}}
	for _, tt := range []struct {
		name, cfg string
		im        func(t *testing.T) *image // nil: /dev/vdb cannot be opened
		want      string                    // error; "" for success
		ran       []string
	}{
		{
			name: "any, disk's first sector",
			cfg:  "fs_setup:\n  - {device: /dev/vdb, filesystem: ext4, label: data}\n",
			im:   func(*testing.T) *image { im := newImage(); im.bad = badStart; return im },
			want: "fs_setup.0: /dev/vdb: partition: any: /dev/vdb could not be read (read 1048576 bytes at offset 0: input/output error): treated as in use, no partition of it chosen without overwrite: true",
		},
		{
			name: "none, disk's last sector",
			cfg:  "fs_setup:\n  - {device: /dev/vdb, partition: none, filesystem: ext4, label: data}\n",
			im:   func(*testing.T) *image { im := newImage(); im.bad = badEnd; return im },
			want: "fs_setup.0: /dev/vdb could not be read (read 1048576 bytes at offset 7340032: input/output error): treated as in use, not formatted without overwrite: true",
		},
		{
			name: "none, no such device",
			cfg:  "fs_setup:\n  - {device: /dev/vdb, partition: none, filesystem: ext4, label: data}\n",
			want: "fs_setup.0: /dev/vdb could not be read (open /dev/vdb: no such file or directory): treated as in use",
		},
		{
			name: "partition 2, its first MiB",
			cfg:  "fs_setup:\n  - {device: /dev/vdb, partition: 2, filesystem: ext4, label: data}\n",
			im: func(t *testing.T) *image {
				im := gptImage(linuxGUID, linuxGUID)
				im.bad = [][2]int64{{im.partStart(t, 2) + 1024, im.partStart(t, 2) + 2048}}
				return im
			},
			want: "fs_setup.0: /dev/vdb2 could not be read (read 1048576 bytes at offset 0: input/output error): treated as in use, not formatted without overwrite: true",
		},
		{
			name: "partition 1, the disk's table",
			cfg:  "fs_setup:\n  - {device: /dev/vdb, partition: 1, filesystem: ext4, label: data}\n",
			im:   func(*testing.T) *image { im := gptImage(linuxGUID); im.bad = badEnd; return im },
			want: "fs_setup.0: /dev/vdb could not be read (read 1048576 bytes at offset 7340032: input/output error): treated as in use, /dev/vdb1 not formatted without overwrite: true",
		},
		{
			name: "disk_setup of a disk blkid sees nothing on",
			cfg:  "disk_setup:\n  /dev/vdb: {layout: true}\n",
			im:   func(*testing.T) *image { im := newImage(); im.bad = badStart; return im },
			want: "disk_setup./dev/vdb: /dev/vdb could not be read (read 1048576 bytes at offset 0: input/output error): treated as in use, not partitioned without overwrite: true",
		},
		{
			name: "none, readable and blank: formatted",
			cfg:  "fs_setup:\n  - {device: /dev/vdb, partition: none, filesystem: ext4, label: data}\n",
			im:   func(*testing.T) *image { return newImage() },
			ran:  []string{"mkfs.ext4 -L data -F /dev/vdb"},
		},
		{
			name: "any, readable and blank: the disk formatted",
			cfg:  "fs_setup:\n  - {device: /dev/vdb, filesystem: ext4, label: data}\n",
			im:   func(*testing.T) *image { return newImage() },
			ran:  []string{"mkfs.ext4 -L data -F /dev/vdb"},
		},
		{
			name: "disk_setup, readable and blank: partitioned",
			cfg:  "disk_setup:\n  /dev/vdb: {layout: true}\n",
			im:   func(*testing.T) *image { return newImage() },
			ran:  []string{"sfdisk --Linux --unit=S --force /dev/vdb"},
		},
	} {
		t.Run(tt.name, func(t *testing.T) {
			im := newImage()
			if tt.im != nil {
				im = tt.im(t)
			}
			te, de := guardEnv(t, tt.cfg, im, nil, true, nil) // blkid: exit 2 everywhere
			if tt.im == nil {
				delete(de.images, "/dev/vdb")
			}
			err := te.RunFunc(DiskSetup)
			if tt.want != "" {
				wantErr(t, err, tt.want)
			} else if err != nil {
				t.Fatal(err)
			}
			if m := ranMkfs(te); strings.Join(m, "\n") != strings.Join(tt.ran, "\n") {
				t.Errorf("ran %q, want %q", m, tt.ran)
			}
		})
	}
}

// TestFSSetupProbesDisagree: blkid finds nothing but earlyinit's probe
// finds a signature: in use, an error.
func TestFSSetupProbesDisagree(t *testing.T) {
	im := newImage()
	im.write(512, lvmLabel())
	te, _ := guardEnv(t, "fs_setup:\n  - {device: /dev/vdb, partition: none, filesystem: ext4, label: data}\n", im, nil, true, nil)
	wantErr(t, te.RunFunc(DiskSetup), "fs_setup.0: /dev/vdb: blkid found nothing, but it holds LVM2_member: treated as in use, not formatted without overwrite: true")
	if m := ranMkfs(te); m != nil {
		t.Errorf("ran %q", m)
	}
	te, _ = guardEnv(t, "disk_setup:\n  /dev/vdb: {layout: true}\n", im, nil, true, nil)
	wantErr(t, te.RunFunc(DiskSetup), "disk_setup./dev/vdb: /dev/vdb: blkid found nothing, but it holds LVM2_member")
	if m := ranMkfs(te); m != nil {
		t.Errorf("ran %q", m)
	}
}

// ownDiskEnv is a blank /dev/vdb (image) whose fake sfdisk writes the
// MBR its script asks for, whose lsblk shows the image's partitions with
// the file systems the fake mkfs and mkswap made (a udev database kept
// up to date, when udev).
func ownDiskEnv(t *testing.T, cfg string, udev bool) (*coretest.Env, *image) {
	t.Helper()
	im := newImage()
	te, _ := guardEnv(t, cfg, im, nil, udev, nil)
	fstype := map[int]string{}
	te.Fake.Handlers["lsblk"] = func(c core.Cmd) ([]byte, error) {
		if c.Args[3] != "/dev/vdb" {
			return nil, nil
		}
		return []byte(lsblkOf(t, "/dev/vdb", im, fstype, udev)), nil
	}
	te.Fake.Handlers["blockdev"] = func(c core.Cmd) ([]byte, error) {
		switch c.Args[0] {
		case "--getsize64":
			return []byte(strconv.Itoa(imageSize) + "\n"), nil
		case "--getss":
			return []byte("512\n"), nil
		}
		return nil, nil
	}
	te.Fake.Handlers["sfdisk"] = func(c core.Cmd) ([]byte, error) {
		var parts []mbrPart
		start := int64(2048)
		for _, line := range strings.Split(strings.TrimSpace(string(c.Stdin)), "\n") {
			f := strings.Split(line, ",")
			typ, _ := strconv.ParseUint(f[2], 16, 8)
			size := int64(imageSize/512) - start
			if f[1] != "" {
				size, _ = strconv.ParseInt(f[1], 10, 64)
			}
			parts = append(parts, mbrPart{byte(typ), start, size})
			start += size
		}
		im.writeMBR(parts...)
		return nil, nil
	}
	// The fake mkfs and mkswap write the signature too, so that
	// earlyinit's own probe sees it where lsblk (no udev) does not.
	mkfs := func(typ string) func(c core.Cmd) ([]byte, error) {
		return func(c core.Cmd) ([]byte, error) {
			dev := c.Args[len(c.Args)-1]
			n, _ := strconv.Atoi(strings.TrimPrefix(dev, "/dev/vdb"))
			fstype[n] = typ
			start := im.partStart(t, n)
			if typ == "swap" {
				off, sig := swapSig()
				im.write(start+off, sig)
			} else {
				im.write(start+1024, ext4Super(c.Args[1]))
			}
			return nil, nil
		}
	}
	te.Fake.Handlers["mkfs.ext4"] = mkfs("ext4")
	te.Fake.Handlers["mkswap"] = mkfs("swap")
	return te, im
}

// TestFSSetupAutoOnOwnDisk: cloud-init's pattern, disk_setup partitioning
// a blank disk and fs_setup's auto filling its partitions one label after
// another, still works; on a disk of ours a system partition is passed
// over unless it is made for the file system (swap).
func TestFSSetupAutoOnOwnDisk(t *testing.T) {
	for _, tt := range []struct {
		name, cfg string
		mkfs      []string
	}{
		{
			name: "two ext4",
			cfg: "disk_setup:\n  /dev/vdb: {table_type: mbr, layout: [50, 50]}\n" +
				"fs_setup:\n  - {device: /dev/vdb, partition: auto, filesystem: ext4, label: one}\n  - {device: /dev/vdb, partition: auto, filesystem: ext4, label: two}\n",
			mkfs: []string{"sfdisk --Linux --unit=S --force /dev/vdb", "mkfs.ext4 -L one /dev/vdb1", "mkfs.ext4 -L two /dev/vdb2"},
		},
		{
			name: "swap first, through an alias and any",
			cfg: "device_aliases: {d: /dev/vdb}\ndisk_setup:\n  d: {table_type: mbr, layout: [[50, 82], 50]}\n" +
				"fs_setup:\n  - {device: d, filesystem: ext4, label: data}\n  - {device: d, partition: auto, filesystem: swap, label: swap}\n",
			mkfs: []string{"sfdisk --Linux --unit=S --force /dev/vdb", "mkfs.ext4 -L data /dev/vdb2", "mkswap -L swap /dev/vdb1"},
		},
		{
			name: "an LVM partition passed over, then nothing free",
			cfg: "disk_setup:\n  /dev/vdb: {table_type: mbr, layout: [[50, 8e], 50]}\n" +
				"fs_setup:\n  - {device: /dev/vdb, partition: auto, filesystem: ext4, label: one}\n  - {device: /dev/vdb, partition: auto, filesystem: ext4, label: two}\n",
			mkfs: []string{"sfdisk --Linux --unit=S --force /dev/vdb", "mkfs.ext4 -L one /dev/vdb2"},
		},
	} {
		for _, udev := range []bool{true, false} {
			t.Run(fmt.Sprintf("%s udev=%v", tt.name, udev), func(t *testing.T) {
				te, _ := ownDiskEnv(t, tt.cfg, udev)
				if err := te.RunFunc(DiskSetup); err != nil {
					t.Fatal(err)
				}
				if m := ranMkfs(te); strings.Join(m, "\n") != strings.Join(tt.mkfs, "\n") {
					t.Errorf("ran %q\nwant %q", m, tt.mkfs)
				}
			})
		}
	}
}

// TestFSSetupAutoNotOwnAfterLayoutMatched: a disk whose layout was
// already there (disk_setup wrote nothing in this run) is not ours.
func TestFSSetupAutoNotOwnAfterLayoutMatched(t *testing.T) {
	cfg := "disk_setup:\n  /dev/vdb: {table_type: mbr, layout: [50, 50]}\n" +
		"fs_setup:\n  - {device: /dev/vdb, partition: auto, filesystem: ext4, label: one}\n"
	te, im := ownDiskEnv(t, cfg, true)
	im.writeMBR(mbrPart{0x83, 2048, 4096}, mbrPart{0x83, 6144, 4096})
	wantErr(t, te.RunFunc(DiskSetup), "fs_setup.0: /dev/vdb: partition: auto: /dev/vdb has a partition table disk_setup did not write in this run")
	if !strings.Contains(te.LogBuf.String(), "already partitioned") {
		t.Errorf("log: %s", te.LogBuf.String())
	}
	if m := ranMkfs(te); m != nil {
		t.Errorf("ran %q", m)
	}
}

// findOracle is cc_disk_setup.find_device_node over the entries given
// (its lsblk), for [device, entries, fs_type, label, label_match,
// replace_fs].
const findOracle = `
from cloudinit.config import cc_disk_setup
out = []
for dev, ents, fs, label, match, replace in json.load(sys.stdin):
    cc_disk_setup.enumerate_disk = lambda device, nodeps=False, ents=ents: iter(ents)
    out.append(list(cc_disk_setup.find_device_node(dev, fs_type=fs, label=label, label_match=match, replace_fs=replace or False)))
json.dump(out, sys.stdout)
`

// TestDiskSetupFindDeviceNodeMatchesCloudInit: without earlyinit's skip, the
// search is cloud-init's (label matching, replace_fs, the disk itself).
func TestDiskSetupFindDeviceNodeMatchesCloudInit(t *testing.T) {
	disk := blkEntry{Name: "vdb", Type: "disk"}
	part := func(n, fs, label string) blkEntry {
		return blkEntry{Name: "vdb" + n, Type: "part", FSType: fs, Label: label}
	}
	cases := []struct {
		ents               []blkEntry
		fs, label, replace string
		auto               bool
	}{
		{[]blkEntry{disk}, "ext4", "data", "", false},
		{[]blkEntry{{Name: "vdb", Type: "disk", FSType: "xfs"}}, "ext4", "data", "", false},
		{[]blkEntry{disk, part("1", "", "")}, "ext4", "data", "", true},
		{[]blkEntry{disk, part("1", "ext4", "old"), part("2", "", "")}, "ext4", "data", "", true},
		{[]blkEntry{disk, part("1", "ext4", "old"), part("2", "", "")}, "ext4", "data", "", false},
		{[]blkEntry{disk, part("1", "ext4", "data"), part("2", "", "")}, "ext4", "data", "", true},
		{[]blkEntry{disk, part("1", "xfs", ""), part("2", "ext3", "")}, "ext4", "data", "ext3", false},
		{[]blkEntry{disk, part("1", "xfs", ""), part("2", "ext3", "")}, "ext4", "data", "ext3", true},
		{[]blkEntry{disk, part("1", "xfs", ""), part("2", "swap", "")}, "ext4", "", "", false},
		{[]blkEntry{disk, part("1", "xfs", ""), {Name: "vg-lv", Type: "lvm", FSType: "ext4", Label: "data"}}, "ext4", "data", "", true},
	}
	var in [][]any
	for _, c := range cases {
		var ents []map[string]string
		for _, e := range c.ents {
			ents = append(ents, map[string]string{"name": e.Name, "type": e.Type, "fstype": e.FSType, "label": e.Label})
		}
		in = append(in, []any{"/dev/vdb", ents, c.fs, c.label, c.auto, c.replace})
	}
	var want [][2]any
	coretest.CloudinitOracle(t, findOracle, in, &want)
	for i, c := range cases {
		dev, reuse := findDeviceNode("/dev/vdb", c.ents, c.fs, c.label, c.auto, c.replace, nil)
		wdev, _ := want[i][0].(string)
		if dev != wdev || reuse != want[i][1].(bool) {
			t.Errorf("case %d: got %q %v, cloud-init %q %v", i, dev, reuse, wdev, want[i][1])
		}
	}
}

// stuckDisk is a device whose reads never return.
type stuckDisk struct{ release chan struct{} }

func (s stuckDisk) ReadAt(p []byte, off int64) (int, error) {
	<-s.release
	return 0, syscall.EIO
}

type stuckExec struct {
	*coretest.FakeExec
	disk stuckDisk
}

func (s stuckExec) OpenDevice(string) (io.ReaderAt, int64, io.Closer, error) {
	return s.disk, imageSize, nopCloser{}, nil
}

// TestFSSetupStuckDevice: a device whose read hangs is given up on at the
// module's deadline, as unreadable; nothing is formatted.
func TestFSSetupStuckDevice(t *testing.T) {
	te, _ := guardEnv(t, "fs_setup:\n  - {device: /dev/vdb, partition: none, filesystem: ext4, label: data}\n", newImage(), nil, true, nil)
	s := stuckExec{te.Fake, stuckDisk{make(chan struct{})}}
	defer close(s.disk.release)
	te.Env.Exec = s
	ctx, cancel := context.WithTimeout(t.Context(), 200*time.Millisecond)
	defer cancel()
	wantErr(t, DiskSetup(ctx, te.Env), "fs_setup.0: /dev/vdb could not be read (no answer: context deadline exceeded): treated as in use")
	if m := ranMkfs(te); m != nil {
		t.Errorf("ran %q", m)
	}
}
