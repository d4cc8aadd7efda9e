package vm

import (
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/earlyinit/earlyinit/internal/seed"
)

// WriteTree writes files (path relative to dir -> content) under dir.
func WriteTree(dir string, files map[string]string) error {
	for p, c := range files {
		full := filepath.Join(dir, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(full, []byte(c), 0o644); err != nil {
			return err
		}
	}
	return nil
}

// ISO makes an ISO9660 image with Joliet and Rock Ridge from dir, labelled
// label, as nova and cloud-localds do (internal/seed, the writer `earlyinit
// mkseed` uses).
func ISO(img, dir, label string) error {
	files, err := seed.ReadDir(dir)
	if err != nil {
		return err
	}
	f, err := os.Create(img)
	if err != nil {
		return err
	}
	if err := seed.ISO(f, label, time.Now(), files); err != nil {
		f.Close()
		return fmt.Errorf("%s: %w", img, err)
	}
	return f.Close()
}

// VFAT makes a whole-disk vfat (FAT16) image of sizeMB from dir, labelled
// label.
func VFAT(img, dir, label string, sizeMB int) error {
	f, err := os.Create(img)
	if err != nil {
		return err
	}
	size := int64(sizeMB) << 20
	if err := f.Truncate(size); err != nil {
		f.Close()
		return err
	}
	if err := writeFAT(f, dir, label, size); err != nil {
		f.Close()
		return fmt.Errorf("%s: %w", img, err)
	}
	return f.Close()
}

// VFATPartition makes a disk image with an MBR and one vfat partition
// (type 0x0c, starting at 1 MiB and filling the disk) holding dir,
// labelled label.
func VFATPartition(img, dir, label string, sizeMB int) error {
	f, err := os.Create(img)
	if err != nil {
		return err
	}
	if err := vfatPartition(f, dir, label, sizeMB); err != nil {
		f.Close()
		return fmt.Errorf("%s: %w", img, err)
	}
	return f.Close()
}

func vfatPartition(f *os.File, dir, label string, sizeMB int) error {
	const start = 2048 // sectors: 1 MiB
	total := uint32(int64(sizeMB) << 20 / 512)
	if sizeMB < 2 || total <= start {
		return fmt.Errorf("disk of %d MiB: too small for a partition at 1 MiB", sizeMB)
	}
	if err := f.Truncate(int64(total) * 512); err != nil {
		return err
	}
	mbr := make([]byte, 512)
	binary.LittleEndian.PutUint32(mbr[440:], 0x5eed5eed) // disk signature
	p := mbr[446:462]
	copy(p[1:4], []byte{0xfe, 0xff, 0xff}) // CHS unused: LBA only
	p[4] = 0x0c                            // FAT32 LBA, as sfdisk's type=c
	copy(p[5:8], []byte{0xfe, 0xff, 0xff})
	binary.LittleEndian.PutUint32(p[8:], start)
	binary.LittleEndian.PutUint32(p[12:], total-start)
	mbr[510], mbr[511] = 0x55, 0xaa
	if _, err := f.WriteAt(mbr, 0); err != nil {
		return err
	}
	return writeFAT(io.NewOffsetWriter(f, start*512), dir, label, int64(total-start)*512)
}

// writeFAT writes a FAT filesystem of size bytes holding dir at w's start
// (the file is already long enough).
func writeFAT(w io.WriterAt, dir, label string, size int64) error {
	files, err := seed.ReadDir(dir)
	if err != nil {
		return err
	}
	return seed.FAT(w, size, label, time.Now(), files)
}

func runIn(stdin, name string, args ...string) error {
	cmd := execCommand(name, args...)
	cmd.Stdin = strings.NewReader(stdin)
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("%s %s: %w\n%s", name, strings.Join(args, " "), err, out)
	}
	return nil
}
