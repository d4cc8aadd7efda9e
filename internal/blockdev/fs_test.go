package blockdev

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// isoDir makes a small tree to put on a disc.
func isoDir(t testing.TB) string {
	d := t.TempDir()
	for p, s := range map[string]string{
		"openstack/latest/meta_data.json": `{"uuid": "x"}`,
		"user-data":                       "#cloud-config\n",
	} {
		if err := os.MkdirAll(filepath.Join(d, filepath.Dir(p)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(d, p), []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return d
}

func mkiso(t testing.TB, out string, args ...string) string {
	t.Helper()
	run(t, "xorriso", append(append([]string{"-as", "mkisofs", "-quiet", "-o", out}, args...), isoDir(t))...)
	return out
}

func TestProbeISO9660(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		name      string
		args      []string
		wantLabel string
	}{
		{"config-drive", []string{"-V", "config-2", "-J", "-r"}, "config-2"},
		{"cidata", []string{"-V", "cidata", "-J", "-r"}, "cidata"},
		{"no-joliet", []string{"-V", "CONFIG-2", "-r"}, "CONFIG-2"},
		{"no-joliet-lower", []string{"-V", "config-2"}, "config-2"},
		{"joliet-lower", []string{"-V", "Mixed Case", "-J"}, "Mixed Case"},
		{"default-label", []string{"-J", "-r"}, "ISOIMAGE"},
		{"long-joliet", []string{"-V", "a-long-volume-label-over-16", "-J"}, "a-long-volume-label-over-16"},
		{"long-mixed", []string{"-V", "Long Label, Mixed Case!", "-J", "-r"}, "Long Label, Mixed Case!"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			img := mkiso(t, filepath.Join(dir, tc.name+".iso"), tc.args...)
			got := checkBlkid(t, img)
			if got.Type != "iso9660" || got.Label != tc.wantLabel || len(got.UUID) != len("2024-01-02-03-04-05-00") {
				t.Errorf("got %+v, want iso9660 with label %q and a date UUID", got, tc.wantLabel)
			}
		})
	}
}

func TestProbeISO9660Fixed(t *testing.T) {
	// A fixed date, so the UUID is known without the oracle.
	img := mkiso(t, filepath.Join(t.TempDir(), "d.iso"), "-V", "config-2", "-J", "--modification-date=2024010203040500")
	got := checkBlkid(t, img)
	if got.UUID != "2024-01-02-03-04-05-00" {
		t.Errorf("UUID = %q, want 2024-01-02-03-04-05-00", got.UUID)
	}
}

func TestProbeISO9660Corrupt(t *testing.T) {
	img := mkiso(t, filepath.Join(t.TempDir(), "c.iso"), "-V", "config-2", "-J")
	b, err := os.ReadFile(img)
	if err != nil {
		t.Fatal(err)
	}
	// Cut after the primary descriptor: the set has no terminator.
	cut := b[:17*isoSector]
	if fs, err := Probe(bytesReader(cut), int64(len(cut))); err == nil || !strings.Contains(err.Error(), "iso9660") {
		t.Errorf("truncated descriptor set: %+v, %v", fs, err)
	}
	// A supplementary descriptor without CD001 breaks the set.
	bad := append([]byte(nil), b...)
	copy(bad[17*isoSector+1:], "XXXXX")
	if fs, err := Probe(bytesReader(bad), int64(len(bad))); err == nil {
		t.Errorf("broken descriptor: %+v, want an error", fs)
	}
	// Only a terminator: no primary descriptor.
	noPVD := append([]byte(nil), b...)
	noPVD[16*isoSector] = isoVDEnd
	if fs, err := Probe(bytesReader(noPVD), int64(len(noPVD))); err == nil || !strings.Contains(err.Error(), "primary") {
		t.Errorf("no PVD: %+v, %v", fs, err)
	}
}

func TestProbeFAT(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		name  string
		size  int64
		args  []string
		label string
	}{
		{"fat12", 1 << 20, []string{"-F", "12", "-n", "cidata"}, "cidata"},
		{"fat16", 16 << 20, []string{"-F", "16", "-n", "CIDATA"}, "CIDATA"},
		{"fat32", 40 << 20, []string{"-F", "32", "-n", "EFI SYSTEM"}, "EFI SYSTEM"},
		{"fat32-nolabel", 40 << 20, []string{"-F", "32"}, ""},
		{"fat16-nolabel", 20 << 20, []string{"-F", "16"}, ""},
		{"fat12-4k", 4 << 20, []string{"-F", "12", "-S", "4096", "-n", "BIG"}, "BIG"},
		{"fat32-spc8", 64 << 20, []string{"-F", "32", "-s", "8", "-n", "s8"}, "s8"},
		{"default", 2 << 20, []string{"-n", "config-2"}, "config-2"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			img := sparse(t, dir, tc.name+".img", tc.size)
			run(t, "mkfs.vfat", append(tc.args, img)...)
			got := checkBlkid(t, img)
			if got.Type != "vfat" || got.Label != tc.label || len(got.UUID) != 9 || got.UUID[4] != '-' {
				t.Errorf("got %+v, want vfat label %q", got, tc.label)
			}
		})
	}
}

// The label in the root directory wins over the boot sector's, as in
// blkid; without a root entry the boot sector's is used.
func TestProbeFATLabelPlaces(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		fat   string
		size  int64
		lbl   int // boot sector label offset
		label string
	}{
		{"16", 20 << 20, 43, "ROOTDIR"},
		{"32", 40 << 20, 71, "ROOTDIR"},
	} {
		t.Run("fat"+tc.fat, func(t *testing.T) {
			t.Parallel()
			img := sparse(t, dir, "l"+tc.fat+".img", tc.size)
			run(t, "mkfs.vfat", "-F", tc.fat, "-n", "BOOTSECT", img)
			run(t, "mlabel", "-i", img, "::rootdir")
			b, err := os.ReadFile(img)
			if err != nil {
				t.Fatal(err)
			}
			// mlabel writes both places: put the old label back in the boot sector.
			copy(b[tc.lbl:tc.lbl+11], "BOOTSECT   ")
			if err := os.WriteFile(img, b, 0o644); err != nil {
				t.Fatal(err)
			}
			if got := checkBlkid(t, img); got.Label != tc.label {
				t.Errorf("label %q, want %q", got.Label, tc.label)
			}
			run(t, "mlabel", "-i", img, "-c") // clears the label
			copy(b, mustRead(t, img))
			copy(b[tc.lbl:tc.lbl+11], "BOOTSECT   ")
			if err := os.WriteFile(img, b, 0o644); err != nil {
				t.Fatal(err)
			}
			// blkid reports no LABEL now, only LABEL_FATBOOT: we fall
			// back on the boot sector's label.
			want := blkid(t, img)
			got, err := probeFile(t, img)
			if err != nil || got.Label != want["LABEL_FATBOOT"] || got.Label != "BOOTSECT" || got.UUID != want["UUID"] {
				t.Errorf("after clearing the root entry: %+v, %v; blkid says %v", got, err, want)
			}
		})
	}
}

func mustRead(t testing.TB, p string) []byte {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestProbeFATCorrupt(t *testing.T) {
	img := sparse(t, t.TempDir(), "f.img", 1<<20)
	run(t, "mkfs.vfat", "-F", "12", "-n", "X", img)
	b := mustRead(t, img)
	for _, tc := range []struct {
		name string
		edit func(b []byte) []byte
	}{
		{"sectors", func(b []byte) []byte { b[19], b[20] = 4, 0; return b }},
		{"too many clusters", func(b []byte) []byte { b[19], b[20], b[13] = 0, 0, 1; b[32], b[33], b[34] = 0, 0, 2; return b }},
		{"root dir beyond end", func(b []byte) []byte { return b[:8192] }},
	} {
		bad := tc.edit(append([]byte(nil), b...))
		if fs, err := Probe(bytesReader(bad), int64(len(bad))); err == nil {
			t.Errorf("%s: got %+v, want an error", tc.name, fs)
		}
	}
	// Not FAT at all when the BPB is invalid.
	for _, off := range []int{11, 13, 14, 16, 21} {
		bad := append([]byte(nil), b...)
		bad[off] = 0
		bad[off+1] = 0
		if off == 21 {
			bad[21] = 0x12
		}
		if fs, err := Probe(bytesReader(bad), int64(len(bad))); err == nil {
			t.Errorf("BPB byte %d zeroed: got %+v, want an error", off, fs)
		}
	}
}

// blkid's UUID is the modification date, or the creation date when the
// modification date is unset.
func TestProbeISO9660Dates(t *testing.T) {
	dir := t.TempDir()
	img := mkiso(t, filepath.Join(dir, "d.iso"), "-V", "config-2", "-J", "--modification-date=2024010203040500")
	b := mustRead(t, img)
	pvd := 16 * isoSector
	copy(b[pvd+813:], "2011111111111111") // creation date
	for _, tc := range []struct {
		name string
		edit func(b []byte)
		want string
	}{
		{"both", func(b []byte) {}, "2024-01-02-03-04-05-00"},
		{"no modification date", func(b []byte) { copy(b[pvd+830:], "0000000000000000\x00") }, "2011-11-11-11-11-11-11"},
		{"neither", func(b []byte) {
			copy(b[pvd+813:], "0000000000000000\x00")
			copy(b[pvd+830:], "0000000000000000\x00")
		}, ""},
	} {
		c := append([]byte(nil), b...)
		tc.edit(c)
		p := filepath.Join(dir, strings.ReplaceAll(tc.name, " ", "-")+".iso")
		if err := os.WriteFile(p, c, 0o644); err != nil {
			t.Fatal(err)
		}
		if got := checkBlkid(t, p); got.UUID != tc.want {
			t.Errorf("%s: UUID %q, want %q", tc.name, got.UUID, tc.want)
		}
	}
}

// The label entry is found behind deleted and long-name entries, and a
// subdirectory or a file is not taken for it.
func TestProbeFATRootEntries(t *testing.T) {
	dir := t.TempDir()
	img := sparse(t, dir, "r.img", 1<<20)
	run(t, "mkfs.vfat", "-F", "12", "-n", "BOOTLBL", img)
	b := mustRead(t, img)
	root := (int(b[14]) + int(b[16])*int(b[22])) * 512
	label := append([]byte(nil), b[root:root+32]...)
	entry := func(name string, attr byte) []byte {
		e := make([]byte, 32)
		copy(e, name)
		e[11] = attr
		return e
	}
	for _, tc := range []struct {
		name    string
		entries [][]byte
		want    string
	}{
		{"behind others", [][]byte{entry("\xe5OLD       ", 0x08), entry("Aa\x00b\x00c", 0x0F), entry("SUBDIR     ", 0x18), label}, "BOOTLBL"},
		{"root label differs", [][]byte{entry("ROOTLBL    ", 0x28)}, "ROOTLBL"},
		{"end before label", [][]byte{entry("", 0), label}, "BOOTLBL"},
	} {
		c := append([]byte(nil), b...)
		for i, e := range tc.entries {
			copy(c[root+32*i:], e)
		}
		p := filepath.Join(dir, strings.ReplaceAll(tc.name, " ", "-")+".img")
		if err := os.WriteFile(p, c, 0o644); err != nil {
			t.Fatal(err)
		}
		want := blkid(t, p)
		got, err := probeFile(t, p)
		if err != nil || got.Label != tc.want {
			t.Errorf("%s: %+v, %v; want label %q (blkid says %v)", tc.name, got, err, tc.want, want)
		}
		// blkid reports the boot sector's label apart, as LABEL_FATBOOT.
		if bl := want["LABEL"]; bl == "" {
			bl = want["LABEL_FATBOOT"]
			if bl != got.Label {
				t.Errorf("%s: label %q, blkid's LABEL_FATBOOT %q", tc.name, got.Label, bl)
			}
		} else if bl != got.Label {
			t.Errorf("%s: label %q, blkid's %q", tc.name, got.Label, bl)
		}
	}
}
