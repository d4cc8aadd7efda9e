package disks

import (
	"encoding/binary"
	"io/fs"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/earlyinit/earlyinit/internal/modules/coretest"
	"github.com/earlyinit/earlyinit/internal/roottest"
	"golang.org/x/sys/unix"
)

// TestHuman2BytesMatchesCloudInit: sizes read as cloud-init's
// util.human2bytes reads them (its oracle), errors where it raises.
func TestHuman2BytesMatchesCloudInit(t *testing.T) {
	in := []string{"10M", ".5G", "512", "2GB", "1.5K", "3T", "7B", "0", "1KB", "M", "", "x", "-1M", "1Q", "1e3", "1e3M"}
	var want []*int64
	coretest.CloudinitOracle(t, `
from cloudinit import util
out = []
for s in json.load(sys.stdin):
    try:
        out.append(util.human2bytes(s))
    except Exception:
        out.append(None)
json.dump(out, sys.stdout)
`, in, &want)
	for i, s := range in {
		got, err := human2bytes(s)
		switch {
		case want[i] == nil && err == nil:
			t.Errorf("human2bytes(%q) = %d; cloud-init raises", s, got)
		case want[i] != nil && (err != nil || got != *want[i]):
			t.Errorf("human2bytes(%q) = %d, %v; cloud-init %d", s, got, err, *want[i])
		}
	}
}

// TestSuggestedSwapSizeMatchesCloudInit: size: auto gives what
// cc_mounts.suggested_swapsize gives for the same memory, maxsize and
// free space (its statvfs stood in for).
func TestSuggestedSwapSizeMatchesCloudInit(t *testing.T) {
	const mib, gib = int64(1) << 20, int64(1) << 30
	type tc struct {
		Mem   int64  `json:"mem"`
		Max   *int64 `json:"max"`
		Avail int64  `json:"avail"`
	}
	p := func(v int64) *int64 { return &v }
	cases := []tc{
		{512 * mib, nil, 10 * gib}, {512 * mib, nil, 1 * gib}, {3 * gib, nil, 100 * gib},
		{8 * gib, nil, 100 * gib}, {8 * gib, nil, 8 * gib}, {64 * gib, nil, 1000 * gib},
		{20 * gib, nil, 1000 * gib}, {2 * gib, p(1 * gib), 100 * gib}, {2 * gib, p(50 * gib), 10 * gib},
		{100 * gib, p(200 * gib), 1000 * gib}, {1 * gib, p(0), 10 * gib},
	}
	var want []int64
	coretest.CloudinitOracle(t, `
import os
from cloudinit.config import cc_mounts
class St: pass
out = []
for c in json.load(sys.stdin):
    st = St(); st.f_frsize = 4096; st.f_bfree = c["avail"] // 4096
    os.statvfs = lambda p, st=st: st
    out.append(cc_mounts.suggested_swapsize(memsize=c["mem"], maxsize=c["max"], fsys="/x"))
json.dump(out, sys.stdout)
`, cases, &want)
	for i, c := range cases {
		max := int64(-1)
		if c.Max != nil {
			max = *c.Max
		}
		if got := suggestedSwapSize(c.Mem, max, c.Avail/4096*4096); got != want[i] {
			t.Errorf("suggestedSwapSize(%+v) = %d, cloud-init %d", c, got, want[i])
		}
	}
}

// TestSwapFile: swap: {filename, size} makes the file as cc_mounts does
// (0600, the size in whole MiB, a swap signature blkid recognises), adds
// its fstab line and runs swapon -a.
func TestSwapFile(t *testing.T) {
	te := coretest.NewEnv(t, "swap: {filename: /var/swap/file, size: 16M}\n")
	te.Write("/proc/swaps", "Filename\tType\tSize\tUsed\tPriority\n", 0o444)
	te.Write("/etc/fstab", "LABEL=root\t/\text4\tdefaults\t0\t1\n", 0o644)
	if err := te.RunFunc(Mounts); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(te.Root.Path("/var/swap/file"))
	if err != nil || fi.Size() != 16<<20 || fi.Mode().Perm() != 0o600 {
		t.Fatalf("swap file: %v %v", fi, err)
	}
	page := os.Getpagesize()
	b, _, err := te.Root.ReadHead("/var/swap/file", page)
	if err != nil {
		t.Fatal(err)
	}
	if string(b[page-10:]) != "SWAPSPACE2" || binary.LittleEndian.Uint32(b[1024:]) != 1 || int(binary.LittleEndian.Uint32(b[1028:])) != 16<<20/page-1 {
		t.Errorf("swap header: signature %q, version %d, last page %d", b[page-10:], binary.LittleEndian.Uint32(b[1024:]), binary.LittleEndian.Uint32(b[1028:]))
	}
	if _, err := exec.LookPath("blkid"); err == nil {
		out, _ := exec.Command("blkid", "-p", "-o", "export", te.Root.Path("/var/swap/file")).Output()
		if !strings.Contains(string(out), "TYPE=swap") || !strings.Contains(string(out), "VERSION=1") {
			t.Errorf("blkid -p does not see a swap area:\n%s", out)
		}
	}
	te.WantFile("/etc/fstab", "LABEL=root\t/\text4\tdefaults\t0\t1\n/var/swap/file\tnone\tswap\tsw,comment=earlyinit\t0\t0\n", 0o644, 0, 0)
	te.WantCalls("swapon -a", "mount -a")
}

// TestSwapExisting: a file in /proc/swaps is kept; one with a swap
// signature is used; any other file at the path is not earlyinit's and
// is left alone byte for byte (cloud-init would write over it).
func TestSwapExisting(t *testing.T) {
	page := os.Getpagesize()
	sw := make([]byte, 64*page)
	copy(sw[page-10:], "SWAPSPACE2")
	for _, tc := range []struct {
		name, swaps, content string
		wantErr              string
		wantLine             bool
	}{
		{name: "active", swaps: "/swap.img file 1 0 -2\n", content: "anything", wantLine: true},
		{name: "signature", content: string(sw), wantLine: true},
		{name: "someone's file", content: "database pages", wantErr: "exists, is not active swap and has no swap signature: not earlyinit's, left alone"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			te := coretest.NewEnv(t, "swap: {size: 1G}\n")
			te.Write("/proc/swaps", "Filename\tType\tSize\tUsed\tPriority\n"+tc.swaps, 0o444)
			te.Write("/swap.img", tc.content, 0o600)
			err := te.RunFunc(Mounts)
			if tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)) || tc.wantErr == "" && err != nil {
				t.Fatalf("mounts: %v, want %q", err, tc.wantErr)
			}
			if got := te.Read("/swap.img"); got != tc.content {
				t.Errorf("the file changed")
			}
			fstab, _ := te.Root.ReadFile("/etc/fstab")
			if has := strings.Contains(string(fstab), "/swap.img\tnone\tswap\tsw,comment=earlyinit"); has != tc.wantLine {
				t.Errorf("fstab:\n%s", fstab)
			}
		})
	}
}

// TestSwapAuto: size: auto sizes the file from /proc/meminfo and the free
// space, as suggested_swapsize: 48 MiB of memory, ample disk: 48 MiB.
func TestSwapAuto(t *testing.T) {
	te := coretest.NewEnv(t, "swap: {filename: /swapfile, size: auto, maxsize: 1G}\n")
	te.Write("/proc/swaps", "Filename\tType\tSize\tUsed\tPriority\n", 0o444)
	te.Write("/proc/meminfo", "MemTotal:          49152 kB\nMemFree:        1000 kB\n", 0o444)
	var st unix.Statfs_t
	if err := unix.Statfs(te.Dir, &st); err != nil {
		t.Fatal(err)
	}
	// 48 MiB with room to spare; less when the test's filesystem is
	// nearly full (90% of what is free).
	want := suggestedSwapSize(48<<20, 1<<30, int64(st.Frsize)*int64(st.Bfree)) >> 20 << 20
	if err := te.RunFunc(Mounts); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(te.Root.Path("/swapfile")); err != nil || fi.Size() != want {
		t.Fatalf("swap file: %v %v; want %d bytes", fi, err, want)
	}
}

// TestSwapNothing: no size, size 0, or a bad value: nothing made, and a
// bad value is an error naming the key.
func TestSwapNothing(t *testing.T) {
	for cfg, wantErr := range map[string]string{
		"swap: {filename: /swapfile}\n":             "",
		"swap: {filename: /swapfile, size: 0}\n":    "",
		"swap: {filename: /swapfile, size: lots}\n": `swap.size: "lots" is not valid input`,
		"swap: {filename: 'a b', size: 1M}\n":       `swap.filename "a b": want an absolute, clean path without blanks`,
		"swap: {filename: /swapfile, size: -1M}\n":  `swap.size: "-1M": cannot be negative`,
		"swap: [1]\n": "swap: want a map, got a list",
		"swap: {filename: /x, size: 1M, maxsize: []}\n": "swap.maxsize: want a size",
	} {
		te := coretest.NewEnv(t, cfg)
		err := te.RunFunc(Mounts)
		if wantErr == "" && err != nil || wantErr != "" && (err == nil || !strings.Contains(err.Error(), wantErr)) {
			t.Errorf("%s: mounts: %v, want %q", cfg, err, wantErr)
		}
		if te.Root.Exists("/swapfile") || len(te.Calls()) != 0 {
			t.Errorf("%s: made a swap file or ran %q", cfg, te.Calls())
		}
	}
}

// fakeLabeler labels by exact path, as a policy's literal entries do.
type fakeLabeler map[string]string

func (f fakeLabeler) Lookup(path string, _ fs.FileMode) (string, bool) {
	c, ok := f[path]
	if !ok {
		c, ok = f["*"]
	}
	return c, ok
}

// TestSwapFileLabel: on an SELinux root the swap file gets the label the
// policy gives its own swap file (swapfile_t), whatever its path: swapon
// may only use such a file in enforcing mode. Without that type, the
// file's label is its path's.
func TestSwapFileLabel(t *testing.T) {
	roottest.Require(t)
	for _, tc := range []struct {
		name string
		l    fakeLabeler
		want string
	}{
		{"refpolicy", fakeLabeler{"/var/swap": "system_u:object_r:swapfile_t:s0", "*": "system_u:object_r:default_t:s0"}, "system_u:object_r:swapfile_t:s0"},
		{"no swapfile_t", fakeLabeler{"*": "system_u:object_r:default_t:s0"}, "system_u:object_r:default_t:s0"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			te := coretest.NewEnv(t, "swap: {filename: /swapfile, size: 16M}\n")
			te.Write("/proc/swaps", "Filename\tType\tSize\tUsed\tPriority\n", 0o444)
			te.Root.SetLabeler(tc.l)
			if err := te.RunFunc(Mounts); err != nil {
				t.Fatal(err)
			}
			buf := make([]byte, 256)
			n, err := unix.Getxattr(te.Root.Path("/swapfile"), "security.selinux", buf)
			if err != nil || string(buf[:n]) != tc.want+"\x00" {
				t.Errorf("/swapfile's label %q (%v), want %q", buf[:max(n, 0)], err, tc.want)
			}
		})
	}
}
