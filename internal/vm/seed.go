package vm

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
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
// label, as nova and cloud-localds do.
func ISO(img, dir, label string) error {
	return run("xorriso", "-as", "mkisofs", "-quiet", "-V", label, "-J", "-r", "-o", img, dir)
}

// VFAT makes a whole-disk vfat image of sizeMB from dir, labelled label.
func VFAT(img, dir, label string, sizeMB int) error {
	if err := os.WriteFile(img, nil, 0o644); err != nil {
		return err
	}
	if err := os.Truncate(img, int64(sizeMB)<<20); err != nil {
		return err
	}
	if err := run("mkfs.vfat", "-n", label, img); err != nil {
		return err
	}
	return mcopy(img, dir)
}

// VFATPartition makes a disk image with an MBR and one vfat partition
// (starting at 1 MiB) holding dir, labelled label.
func VFATPartition(img, dir, label string, sizeMB int) error {
	if err := os.WriteFile(img, nil, 0o644); err != nil {
		return err
	}
	if err := os.Truncate(img, int64(sizeMB)<<20); err != nil {
		return err
	}
	if err := runIn("label: dos\nstart=2048, type=c\n", "sfdisk", "-q", img); err != nil {
		return err
	}
	part := img + ".part"
	defer os.Remove(part)
	if err := VFAT(part, dir, label, sizeMB-1); err != nil {
		return err
	}
	return run("dd", "if="+part, "of="+img, "bs=1M", "seek=1", "conv=notrunc", "status=none")
}

func mcopy(img, dir string) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	for _, e := range entries {
		if err := run("mcopy", "-s", "-i", img, filepath.Join(dir, e.Name()), "::"); err != nil {
			return err
		}
	}
	return nil
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
