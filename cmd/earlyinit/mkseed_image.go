//go:build !initrd

package main

import (
	"archive/tar"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/earlyinit/earlyinit/internal/proc"
	"github.com/earlyinit/earlyinit/internal/seed"
)

// mkseedWrite writes the image to a temporary file next to OUTPUT and
// renames it over OUTPUT, so that OUTPUT is never half written. OUTPUT, if
// it exists, must be a regular file: writing to a disk is dd's job. "-" is
// stdout, as for cloud-localds. A disk format other than raw and the tars
// is qemu-img's conversion of the raw image, as cloud-localds does it.
func mkseedWrite(o mkseedOpts, files []seed.File) error {
	dir, base, err := mkseedTempPlace(o)
	if err != nil {
		return err
	}
	when, err := mkseedTime()
	if err != nil {
		return err
	}
	var temps []string
	defer func() {
		for _, t := range temps {
			os.Remove(t)
		}
	}()
	newTemp := func() (*os.File, error) {
		f, err := os.CreateTemp(dir, "."+base+".*")
		if err != nil {
			return nil, fmt.Errorf("%s: %w", o.output, err)
		}
		temps = append(temps, f.Name())
		return f, nil
	}
	tmp, err := newTemp()
	if err != nil {
		return err
	}
	defer tmp.Close()
	err = mkseedImage(tmp, o, when, files)
	if err == nil {
		err = tmp.Close()
	}
	if err != nil {
		return fmt.Errorf("%s: %w", o.output, err)
	}
	img := tmp.Name()
	if o.diskFormat != "raw" && !strings.HasPrefix(o.diskFormat, "tar") {
		conv, err := newTemp()
		if err != nil {
			return err
		}
		conv.Close()
		if err := qemuImgConvert(img, conv.Name(), o.diskFormat); err != nil {
			return fmt.Errorf("%s: %w", o.output, err)
		}
		img = conv.Name()
	}
	return mkseedPublish(o, img)
}

// mkseedTempPlace is where mkseedWrite's temporary files go and the base
// of their names: next to OUTPUT, which if it exists must be a regular
// file; the current directory for stdout.
func mkseedTempPlace(o mkseedOpts) (string, string, error) {
	dir, base := filepath.Dir(o.output), filepath.Base(o.output)
	if o.output == "-" {
		dir, base = "", "mkseed"
	} else if fi, err := os.Lstat(o.output); err == nil && !fi.Mode().IsRegular() {
		return "", "", fmt.Errorf("%s: exists and is not a regular file (%v): write the image to a file, then copy it", o.output, fi.Mode().Type())
	} else if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return "", "", err
	}
	return dir, base, nil
}

// mkseedTime is the time the image's files bear: now, or
// SOURCE_DATE_EPOCH's.
func mkseedTime() (time.Time, error) {
	when := time.Now()
	if s := os.Getenv("SOURCE_DATE_EPOCH"); s != "" {
		// Reproducible images, as mkisofs and mkfs.fat do.
		sec, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return time.Time{}, fmt.Errorf("SOURCE_DATE_EPOCH %q: not a number of seconds", s)
		}
		when = time.Unix(sec, 0)
	}
	return when, nil
}

// mkseedImage writes files to tmp as o's filesystem, labelled cidata or
// config-2.
func mkseedImage(tmp *os.File, o mkseedOpts, when time.Time, files []seed.File) error {
	label, fatLabel := "cidata", "CIDATA"
	if o.config2 {
		label, fatLabel = "config-2", "CONFIG-2"
	}
	switch o.filesystem {
	case "iso9660":
		return seed.ISO(tmp, label, when, files)
	case "vfat":
		size := int64(mkseedConfig2FATSize)
		if !o.config2 {
			var err error
			if size, err = seed.FATSize(files); err != nil {
				return err
			}
		}
		if err := tmp.Truncate(size); err != nil {
			return err
		}
		return seed.FAT(tmp, size, fatLabel, when, files)
	default:
		return mkseedTar(tmp, o.filesystem, when, files)
	}
}

// mkseedPublish copies the image img to stdout, or makes it OUTPUT:
// mode 0644, synced, renamed.
func mkseedPublish(o mkseedOpts, img string) error {
	if o.output == "-" {
		f, err := os.Open(img)
		if err != nil {
			return err
		}
		defer f.Close()
		if _, err := io.Copy(os.Stdout, f); err != nil {
			return fmt.Errorf("writing the image to stdout: %w", err)
		}
		return nil
	}
	if err := os.Chmod(img, 0o644); err != nil {
		return fmt.Errorf("%s: %w", o.output, err)
	}
	if f, err := os.Open(img); err == nil {
		err = f.Sync()
		f.Close()
		if err != nil {
			return fmt.Errorf("%s: %w", o.output, err)
		}
	}
	if err := os.Rename(img, o.output); err != nil {
		return fmt.Errorf("%s: %w", o.output, err)
	}
	return nil
}

// mkseedTar writes the seed's files as cloud-localds's tar formats: the
// files at the top ("tar"), or under var/lib/cloud/seed/nocloud
// ("tar-seed-local") or nocloud-net ("tar-seed-net"), owned by root.
func mkseedTar(w io.Writer, format string, when time.Time, files []seed.File) error {
	tw := tar.NewWriter(w)
	prefix := ""
	switch format {
	case "tar-seed-local":
		prefix = "var/lib/cloud/seed/nocloud"
	case "tar-seed-net":
		prefix = "var/lib/cloud/seed/nocloud-net"
	}
	hdr := func(name string, mode int64, size int64, typ byte) *tar.Header {
		return &tar.Header{Name: name, Mode: mode, Size: size, Typeflag: typ, ModTime: when, Uname: "root", Gname: "root", Format: tar.FormatGNU}
	}
	if prefix != "" {
		for i := range strings.Count(prefix, "/") + 1 {
			d := strings.Join(strings.Split(prefix, "/")[:i+1], "/") + "/"
			if err := tw.WriteHeader(hdr(d, 0o755, 0, tar.TypeDir)); err != nil {
				return err
			}
		}
		prefix += "/"
	}
	for _, f := range files {
		if err := tw.WriteHeader(hdr(prefix+f.Name, int64(f.Mode.Perm()), int64(len(f.Data)), tar.TypeReg)); err != nil {
			return err
		}
		if _, err := tw.Write(f.Data); err != nil {
			return err
		}
	}
	return tw.Close()
}

// qemuImgBound bounds qemu-img's conversion of a seed of a few MB.
const qemuImgBound = 2 * time.Minute

// qemuImgConvert is cloud-localds's `qemu-img convert -f raw -O FORMAT`.
func qemuImgConvert(raw, out, format string) error {
	if _, err := exec.LookPath("qemu-img"); err != nil {
		return fmt.Errorf("-d %s needs qemu-img (Debian: qemu-utils), which is not installed", format)
	}
	ctx, cancel := context.WithTimeout(context.Background(), qemuImgBound)
	defer cancel()
	var msg bytes.Buffer
	cmd := exec.CommandContext(ctx, "qemu-img", "convert", "-f", "raw", "-O", format, "--", raw, out)
	cmd.Stdout, cmd.Stderr = &msg, &msg
	if err := proc.Run(cmd); err != nil {
		return fmt.Errorf("qemu-img convert -O %s: %v: %s", format, err, strings.TrimSpace(msg.String()))
	}
	return nil
}
