package blockdev

import (
	"errors"
	"os"
	"testing"
)

func TestProbeExt(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		mkfs  string
		args  []string
		label string
		want  string
	}{
		{"mkfs.ext4", nil, "root", "ext4"},
		{"mkfs.ext3", nil, "old-root", "ext3"},
		{"mkfs.ext2", nil, "boot", "ext2"},
		{"mkfs.ext4", nil, "sixteen-chars-xy", "ext4"},
		{"mkfs.ext4", nil, "", "ext4"},
		{"mkfs.ext2", []string{"-O", "extents"}, "e2x", "ext4"},
		{"mkfs.ext4", []string{"-O", "^has_journal"}, "nojournal", "ext4"},
	} {
		t.Run(tc.want+"/"+tc.label, func(t *testing.T) {
			t.Parallel()
			img := sparse(t, dir, tc.mkfs+tc.label+".img", 8<<20)
			args := append([]string{"-q", "-F"}, tc.args...)
			if tc.label != "" {
				args = append(args, "-L", tc.label)
			}
			run(t, tc.mkfs, append(args, img)...)
			got := checkBlkid(t, img)
			if got.Type != tc.want || got.Label != tc.label {
				t.Errorf("got %+v, want type %s label %q", got, tc.want, tc.label)
			}
		})
	}
}

func TestProbeExtCorrupt(t *testing.T) {
	img := sparse(t, t.TempDir(), "e.img", 8<<20)
	run(t, "mkfs.ext4", "-q", "-F", "-L", "x", img)
	b, err := os.ReadFile(img)
	if err != nil {
		t.Fatal(err)
	}
	b = b[:4096]
	if _, err := Probe(bytesReader(b), int64(len(b))); err != nil {
		t.Fatalf("first 4 KiB of an ext4 image: %v", err)
	}
	bad := append([]byte(nil), b...)
	bad[1024+24] = 40 // s_log_block_size
	if fs, err := Probe(bytesReader(bad), int64(len(bad))); err == nil {
		t.Errorf("bad block size: got %+v, want an error", fs)
	}
	// Cut inside the superblock: nothing recognisable, not a panic.
	if fs, err := Probe(bytesReader(b[:1500]), 1500); !errors.Is(err, ErrUnknown) {
		t.Errorf("truncated superblock: got %+v, %v, want ErrUnknown", fs, err)
	}
	// A size larger than what can be read is an I/O error, not a result.
	if fs, err := Probe(bytesReader(b[:1500]), 1<<20); err == nil {
		t.Errorf("short reader: got %+v, want an error", fs)
	}
}
