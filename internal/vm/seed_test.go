package vm

import (
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/earlyinit/earlyinit/internal/blockdev"
)

// The drive builders, read back: the partitioned one by earlyinit's own
// readers and sfdisk/mtools, the others by the tools internal/seed's tests use.
func TestSeedDrives(t *testing.T) {
	for _, tool := range []string{"sfdisk", "mtype", "xorriso", "fsck.vfat"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("%s is not installed: `make deps` installs it", tool)
		}
	}
	dir := filepath.Join(t.TempDir(), "seed")
	if err := WriteTree(dir, map[string]string{"meta-data": "instance-id: i-1\n", "openstack/latest/user_data": "#cloud-config\n"}); err != nil {
		t.Fatal(err)
	}
	out := func(name string, args ...string) string {
		t.Helper()
		cmd := exec.Command(name, args...)
		cmd.Env = append(os.Environ(), "MTOOLS_SKIP_CHECK=1")
		b, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, b)
		}
		return string(b)
	}

	part := filepath.Join(t.TempDir(), "part.img")
	if err := VFATPartition(part, dir, "CIDATA", 10); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(part)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	pt, err := blockdev.ReadPartTable(f, 10<<20)
	if err != nil {
		t.Fatal(err)
	}
	if len(pt.Parts) != 1 || pt.Type != "dos" || pt.Parts[0].Start != 1<<20 || pt.Parts[0].Size != 9<<20 || pt.Parts[0].Type != "0c" {
		t.Fatalf("partition table = %+v, want one 0c partition from 1 MiB to the end", pt)
	}
	fs, err := blockdev.Probe(io.NewSectionReader(f, 1<<20, 9<<20), 9<<20)
	if err != nil || fs.Type != "vfat" || fs.Label != "CIDATA" {
		t.Errorf("partition 1: Probe = %+v, %v; want vfat CIDATA", fs, err)
	}
	if got := out("sfdisk", "-d", part); !strings.Contains(got, "start=        2048, size=       18432, type=c") {
		t.Errorf("sfdisk -d:\n%s", got)
	}
	if got := out("mtype", "-i", part+"@@1M", "::/meta-data"); got != "instance-id: i-1\n" {
		t.Errorf("mtype meta-data = %q", got)
	}

	fat := filepath.Join(t.TempDir(), "fat.img")
	if err := VFAT(fat, dir, "CONFIG-2", 64); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(fat); err != nil || fi.Size() != 64<<20 {
		t.Fatalf("VFAT image: %v, %v; want 64 MiB", fi, err)
	}
	out("fsck.vfat", "-n", fat)
	if got := out("mtype", "-i", fat, "::/openstack/latest/user_data"); got != "#cloud-config\n" {
		t.Errorf("mtype user_data = %q", got)
	}

	iso := filepath.Join(t.TempDir(), "seed.iso")
	if err := ISO(iso, dir, "config-2"); err != nil {
		t.Fatal(err)
	}
	if got := out("xorriso", "-indev", iso, "-find", "/", "-type", "f"); !strings.Contains(got, "'/openstack/latest/user_data'") || !strings.Contains(got, "'/meta-data'") {
		t.Errorf("xorriso -find:\n%s", got)
	}
}
