package blockdev

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// fakeSys is a sysfs tree and a /dev directory under a temporary dir.
type fakeSys struct {
	t        testing.TB
	sys, dev string
}

func newFakeSys(t testing.TB) *fakeSys {
	d := t.TempDir()
	f := &fakeSys{t: t, sys: filepath.Join(d, "sys"), dev: filepath.Join(d, "dev")}
	for _, p := range []string{filepath.Join(f.sys, "class", "block"), f.dev} {
		if err := os.MkdirAll(p, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return f
}

func (f *fakeSys) write(p, s string) {
	f.t.Helper()
	if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
		f.t.Fatal(err)
	}
}

// add creates the sysfs entry for name (a partition numbered partNum of
// parent when parent != ""), with the device node a link to image (or no
// node when image is "").
func (f *fakeSys) add(name, parent string, partNum int, size int64, removable bool, image string) {
	f.t.Helper()
	rel := filepath.Join("devices", "pci0000:00", "0000:00:04.0", "virtio1", "block", name)
	if parent != "" {
		rel = filepath.Join("devices", "pci0000:00", "0000:00:04.0", "virtio1", "block", parent, name)
	}
	dir := filepath.Join(f.sys, rel)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		f.t.Fatal(err)
	}
	f.write(filepath.Join(dir, "size"), fmt.Sprintf("%d\n", size/512))
	if parent == "" {
		r := "0\n"
		if removable {
			r = "1\n"
		}
		f.write(filepath.Join(dir, "removable"), r)
	} else {
		f.write(filepath.Join(dir, "partition"), fmt.Sprintf("%d\n", partNum))
	}
	if image != "" {
		if err := os.Symlink(image, filepath.Join(f.dev, name)); err != nil {
			f.t.Fatal(err)
		}
	}
	// Link last: a reader seeing the class entry sees a complete device.
	if err := os.Symlink(filepath.Join("..", "..", rel), filepath.Join(f.sys, "class", "block", name)); err != nil {
		f.t.Fatal(err)
	}
}

func mkext4(t testing.TB, dir, name, label string) string {
	img := sparse(t, dir, name, 4<<20)
	run(t, "mkfs.ext4", "-q", "-F", "-L", label, img)
	return img
}

func TestList(t *testing.T) {
	f := newFakeSys(t)
	imgs := t.TempDir()
	root := mkext4(t, imgs, "root.img", "root")
	junk := sparse(t, imgs, "junk.img", 1<<20)
	f.add("vda", "", 0, 8<<20, false, junk)
	f.add("vda1", "vda", 1, 4<<20, false, root)
	f.add("vdb", "", 0, 1<<20, false, junk)
	f.add("sr0", "", 0, 0, true, "")         // no medium: kept, not opened
	f.add("sr1", "", 0, 1<<20, true, junk)   // unknown medium
	f.add("vdc", "", 0, 0, false, "")        // zero size: skipped
	f.add("ram0", "", 0, 4<<20, false, junk) // skipped
	f.add("loop0", "", 0, 4<<20, false, "")  // skipped
	f.add("vdd", "", 0, 1<<20, false, "")    // no node: error kept

	devs, err := List(f.sys, f.dev)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, d := range devs {
		names = append(names, d.Name)
	}
	if got, want := strings.Join(names, " "), "sr0 sr1 vda vda1 vdb vdd"; got != want {
		t.Fatalf("List names = %s, want %s", got, want)
	}
	byName := map[string]Device{}
	for _, d := range devs {
		byName[d.Name] = d
	}
	want := blkid(t, root)
	v := byName["vda1"]
	if v.Path != f.dev+"/vda1" || !v.Partition || v.Parent != "vda" || v.PartNum != 1 || v.Size != 4<<20 || v.Removable {
		t.Errorf("vda1 = %#v", v)
	}
	if v.FS.Type != "ext4" || v.FS.Label != "root" || v.FS.UUID != want["UUID"] || v.ProbeErr != nil {
		t.Errorf("vda1 FS = %+v (%v), blkid says %v", v.FS, v.ProbeErr, want)
	}
	if got := v.String(); got != fmt.Sprintf(`vda1 ext4 LABEL="root" UUID=%q`, want["UUID"]) {
		t.Errorf("vda1.String() = %s", got)
	}
	if d := byName["sr0"]; d.String() != "sr0 no medium" || !d.Removable || d.ProbeErr != nil {
		t.Errorf("sr0 = %#v, %s", d, d)
	}
	if d := byName["sr1"]; !errors.Is(d.ProbeErr, ErrUnknown) || !d.Removable || d.FS != (FS{}) {
		t.Errorf("sr1 = %#v", d)
	}
	if d := byName["vdb"]; !strings.HasPrefix(d.String(), "vdb unknown (") || d.Partition {
		t.Errorf("vdb = %s", d)
	}
	if d := byName["vdd"]; !errors.Is(d.ProbeErr, os.ErrNotExist) {
		t.Errorf("vdd with no node: ProbeErr = %v, want not-exist", d.ProbeErr)
	}
}

func TestListErrors(t *testing.T) {
	if _, err := List(filepath.Join(t.TempDir(), "nosys"), "/dev"); err == nil {
		t.Error("List of a missing sysfs: no error")
	}
	f := newFakeSys(t)
	f.add("vda", "", 0, 1<<20, false, "")
	f.write(filepath.Join(f.sys, "class", "block", "vda", "size"), "lots\n")
	devs, err := List(f.sys, f.dev)
	if err != nil || len(devs) != 1 || devs[0].ProbeErr == nil || !strings.Contains(devs[0].ProbeErr.Error(), "size") {
		t.Errorf("bad size file: %v, %v", devs, err)
	}
}

func TestWait(t *testing.T) {
	f := newFakeSys(t)
	imgs := t.TempDir()
	root := mkext4(t, imgs, "root.img", "root")
	other := mkext4(t, imgs, "other.img", "other")
	f.add("vda", "", 0, 4<<20, false, other)

	spec, err := ParseSpec("LABEL=root")
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		time.Sleep(60 * time.Millisecond)
		f.add("vdb", "", 0, 4<<20, false, root)
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	d, seen, err := Wait(ctx, f.sys, f.dev, 10*time.Millisecond, spec.Match, nil)
	if err != nil {
		t.Fatalf("Wait: %v (seen %v)", err, seen)
	}
	if d.Name != "vdb" || d.FS.Label != "root" || len(seen) != 2 {
		t.Errorf("Wait = %s, seen %v", d, seen)
	}

	// Nothing matches: the last listing comes back with ctx's error.
	ctx, cancel = context.WithTimeout(context.Background(), 80*time.Millisecond)
	defer cancel()
	never, _ := ParseSpec("LABEL=nothere")
	t0 := time.Now()
	d, seen, err = Wait(ctx, f.sys, f.dev, 10*time.Millisecond, never.Match, nil)
	if !errors.Is(err, context.DeadlineExceeded) || d.Name != "" || len(seen) != 2 {
		t.Errorf("Wait for nothing = %s, %v, %v", d, seen, err)
	}
	if el := time.Since(t0); el < 70*time.Millisecond || el > 5*time.Second {
		t.Errorf("Wait for nothing took %s, want about 80ms", el)
	}

	// No interval is a short one, not a panic.
	ctx, cancel = context.WithTimeout(context.Background(), 30*time.Millisecond)
	defer cancel()
	if _, seen, err = Wait(ctx, f.sys, f.dev+"/", 0, never.Match, nil); !errors.Is(err, context.DeadlineExceeded) || len(seen) != 2 || seen[0].Path != f.dev+"/vda" {
		t.Errorf("Wait with interval 0 = %v, %v", seen, err)
	}

	// A listing that keeps failing says so next to ctx's error.
	ctx, cancel = context.WithTimeout(context.Background(), 30*time.Millisecond)
	defer cancel()
	_, seen, err = Wait(ctx, filepath.Join(t.TempDir(), "nosys"), f.dev, 10*time.Millisecond, never.Match, nil)
	if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "list block devices") || seen != nil {
		t.Errorf("Wait without sysfs = %v, %v", seen, err)
	}
}

// writeAt copies the file src into dst at byte offset off.
func writeAt(t testing.TB, dst, src string, off int64) {
	t.Helper()
	f, err := os.OpenFile(dst, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt(mustRead(t, src), off); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestListPartitions lists a GPT disk and an MBR disk whose partitions
// hold real filesystems, as the kernel shows them: vda1 in sysfs under
// vda, its node holding the partition's bytes.
func TestListPartitions(t *testing.T) {
	f := newFakeSys(t)
	dir := t.TempDir()

	gpt := mkdisk(t, dir, "gpt.img", 16<<20, gptScript)
	root := mkext4(t, dir, "root.img", "cloudimg-rootfs")
	writeAt(t, gpt, root, 1<<20)
	esp := sparse(t, dir, "esp.img", 1<<20)
	run(t, "mkfs.vfat", "-n", "UEFI", esp)
	writeAt(t, gpt, esp, 5<<20)
	f.add("vda", "", 0, 16<<20, false, gpt)
	f.add("vda1", "vda", 1, 4<<20, false, root)
	f.add("vda2", "vda", 2, 1<<20, false, esp)

	mbr := mkdisk(t, dir, "mbr.img", 16<<20, mbrScript)
	cidata := sparse(t, dir, "cidata.img", 4<<20)
	run(t, "mkfs.vfat", "-n", "cidata", cidata)
	writeAt(t, mbr, cidata, 1<<20)
	f.add("vdb", "", 0, 16<<20, false, mbr)
	f.add("vdb1", "vdb", 1, 4<<20, false, cidata)
	f.add("vdb5", "vdb", 5, 2<<20, false, sparse(t, dir, "empty.img", 2<<20))
	// A partition whose disk node is missing still lists, without PARTUUID.
	f.add("vdc", "", 0, 16<<20, false, "")
	f.add("vdc1", "vdc", 1, 4<<20, false, root)

	devs, err := List(f.sys, f.dev)
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]Device{}
	for _, d := range devs {
		byName[d.Name] = d
	}
	gptJSON := sfdiskJSON(t, gpt).PartitionTable
	mbrID := strings.TrimPrefix(sfdiskJSON(t, mbr).PartitionTable.ID, "0x")
	rootBlkid, espBlkid, ciBlkid := blkid(t, root), blkid(t, esp), blkid(t, cidata)
	for _, tc := range []struct {
		name, want string
	}{
		{"vda", `vda unknown (no known filesystem: gpt partition table)`},
		{"vda1", fmt.Sprintf(`vda1 ext4 LABEL="cloudimg-rootfs" UUID=%q PARTUUID=%q PARTLABEL="root"`, rootBlkid["UUID"], strings.ToLower(gptJSON.Partitions[0].UUID))},
		{"vda2", fmt.Sprintf(`vda2 vfat LABEL="UEFI" UUID=%q PARTUUID="8c5e9f0a-6b1d-4f2e-8a3c-1d2e3f4a5b6c" PARTLABEL="EFI System"`, espBlkid["UUID"])},
		{"vdb", `vdb unknown (no known filesystem: dos partition table)`},
		{"vdb1", fmt.Sprintf(`vdb1 vfat LABEL="cidata" UUID=%q PARTUUID="%s-01"`, ciBlkid["UUID"], mbrID)},
		{"vdb5", fmt.Sprintf(`vdb5 unknown (no known filesystem) PARTUUID="%s-05"`, mbrID)},
		{"vdc1", fmt.Sprintf(`vdc1 ext4 LABEL="cloudimg-rootfs" UUID=%q`, rootBlkid["UUID"])},
	} {
		if got := byName[tc.name].String(); got != tc.want {
			t.Errorf("%s:\n got %s\nwant %s", tc.name, got, tc.want)
		}
	}

	// The specs a kernel command line would use find the right devices.
	for spec, want := range map[string]string{
		"LABEL=cloudimg-rootfs":                                   "vda1", // vdc1 sorts after
		"PARTUUID=" + strings.ToUpper(gptJSON.Partitions[0].UUID): "vda1",
		"PARTUUID=" + mbrID + "-01":                               "vdb1",
		"PARTUUID=" + mbrID + "-05":                               "vdb5",
		"UUID=" + strings.ToLower(espBlkid["UUID"]):               "vda2",
		"/dev/vdb1":                            "vdb1",
		"LABEL=cidata":                         "vdb1",
		"PARTLABEL=root":                       "vda1",
		"PARTLABEL=EFI System":                 "vda2",
		`/dev/disk/by-partlabel/EFI\x20System`: "vda2",
	} {
		s, err := ParseSpec(spec)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, d := range devs {
			if s.Match(d) {
				got = append(got, d.Name)
			}
		}
		if len(got) == 0 || got[0] != want {
			t.Errorf("%s matches %v, want %s first", spec, got, want)
		}
	}
}

// TestWaitScanAndGrace: scan runs before every listing (a device its
// driver brings is found), and a wait whose deadline has all but passed
// still probes once, for ProbeGrace, instead of matching nothing.
func TestWaitScanAndGrace(t *testing.T) {
	f := newFakeSys(t)
	root := mkext4(t, t.TempDir(), "root.img", "root")
	spec, err := ParseSpec("LABEL=root")
	if err != nil {
		t.Fatal(err)
	}
	scans := 0
	scan := func() {
		scans++
		if scans == 3 {
			f.add("vda", "", 0, 4<<20, false, root)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	d, _, err := Wait(ctx, f.sys, f.dev, time.Millisecond, spec.Match, scan)
	if err != nil || d.Name != "vda" || scans != 3 {
		t.Errorf("Wait with scan = %s, %v after %d scans; want vda after 3", d, err, scans)
	}

	ctx, cancel = context.WithTimeout(context.Background(), time.Nanosecond)
	defer cancel()
	<-ctx.Done()
	d, seen, err := Wait(ctx, f.sys, f.dev, time.Millisecond, spec.Match, nil)
	if err != nil || d.FS.Label != "root" || len(seen) != 1 {
		t.Errorf("Wait past its deadline = %s, %v, %v; want the device probed within ProbeGrace", d, seen, err)
	}
}
