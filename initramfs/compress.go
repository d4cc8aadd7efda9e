package initramfs

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// DefaultCompression is zstd: on the generic image (earlyinit and 75
// modules, 24.6 MB of cpio) zstd -19 gives 5.57 MB and unpacks in about a
// fifth of xz's time; xz -9 gives 4.99 MB, gzip -9 7.13 MB, lz4 -9 8.64 MB
// (bench/initramfs.sh prints the figures for the current tree).
const DefaultCompression = "zstd"

// compressor is how one method is written: by an external command reading
// the archive on stdin (the reference tools compress 10-15% smaller than
// the Go libraries), or, for gzip, in Go.
type compressor struct {
	argv   []string
	config string // the kernel option that must be y
}

var compressors = map[string]compressor{
	// -T0 output does not depend on the thread count (zstd(1)).
	"zstd": {[]string{"zstd", "-19", "-T0", "-q", "-c"}, "CONFIG_RD_ZSTD"},
	// The kernel's XZ decoder wants CRC32 checks.
	"xz":   {[]string{"xz", "--check=crc32", "-9", "-T1", "-c"}, "CONFIG_RD_XZ"},
	"lz4":  {[]string{"lz4", "-l", "-9", "-q", "-c"}, "CONFIG_RD_LZ4"},
	"gzip": {nil, "CONFIG_RD_GZIP"},
	"none": {nil, ""},
}

// Compressions lists the methods Build knows.
func Compressions() []string { return []string{"zstd", "xz", "gzip", "lz4", "none"} }

// checkCompression fails early when method is unknown, its tool is
// missing, or the kernel's config (boot/config-<kver> under root, when
// there is one) cannot unpack it.
func checkCompression(root, kver, method string) error {
	if method == "" {
		method = DefaultCompression
	}
	c, ok := compressors[method]
	if !ok {
		return fmt.Errorf("compression %q: want one of %s", method, strings.Join(Compressions(), ", "))
	}
	if len(c.argv) > 0 {
		if _, err := exec.LookPath(c.argv[0]); err != nil {
			return fmt.Errorf("compression %s: %w (install %s, or choose -compress gzip)", method, err, c.argv[0])
		}
	}
	if c.config == "" {
		return nil
	}
	cfg := filepath.Join(root, "boot", "config-"+kver)
	ok, err := kernelHas(cfg, c.config)
	if err != nil {
		if os.IsNotExist(err) {
			return nil // nothing to check against
		}
		return fmt.Errorf("compression %s: %w", method, err)
	}
	if !ok {
		return fmt.Errorf("compression %s: %s has no %s=y: the kernel could not unpack the initramfs", method, cfg, c.config)
	}
	return nil
}

// kernelHas tells whether the kernel config file sets option=y.
func kernelHas(file, option string) (bool, error) {
	f, err := os.Open(file)
	if err != nil {
		return false, err
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		if s.Text() == option+"=y" {
			return true, nil
		}
	}
	return false, s.Err()
}

// compressFile compresses src into dst with method, reproducibly (no name
// or time in any header) and atomically; it returns the sizes of src and
// dst.
func compressFile(src, dst, method string) (int64, int64, error) {
	if method == "" {
		method = DefaultCompression
	}
	c, ok := compressors[method]
	if !ok {
		return 0, 0, fmt.Errorf("compression %q: want one of %s", method, strings.Join(Compressions(), ", "))
	}
	in, err := os.Open(src)
	if err != nil {
		return 0, 0, err
	}
	defer in.Close()
	fi, err := in.Stat()
	if err != nil {
		return 0, 0, err
	}
	tmp := dst + ".tmp"
	out, err := os.Create(tmp)
	if err != nil {
		return 0, 0, err
	}
	defer os.Remove(tmp)
	switch {
	case method == "none":
		_, err = io.Copy(out, in)
	case method == "gzip":
		err = gzipTo(out, in)
	default:
		cmd := exec.Command(c.argv[0], c.argv[1:]...)
		var stderr bytes.Buffer
		cmd.Stdin, cmd.Stdout, cmd.Stderr = in, out, &stderr
		if err = cmd.Run(); err != nil {
			err = fmt.Errorf("%s: %w: %s", strings.Join(c.argv, " "), err, strings.TrimSpace(stderr.String()))
		}
	}
	if err == nil {
		err = out.Sync()
	}
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return 0, 0, fmt.Errorf("write %s: %w", dst, err)
	}
	ofi, err := os.Stat(tmp)
	if err != nil {
		return 0, 0, err
	}
	return fi.Size(), ofi.Size(), os.Rename(tmp, dst)
}

func gzipTo(w io.Writer, r io.Reader) error {
	zw, err := gzip.NewWriterLevel(w, gzip.BestCompression)
	if err != nil {
		return err
	}
	if _, err := io.Copy(zw, r); err != nil {
		return err
	}
	return zw.Close()
}
