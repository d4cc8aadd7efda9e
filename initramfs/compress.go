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

	"github.com/klauspost/compress/zstd"

	"github.com/earlyinit/earlyinit/internal/proc"
)

// DefaultCompression is zstd: on the generic image (the package's
// initramfs build of earlyinit and 72 modules) zstd -19 gives 5.59 MB and
// unpacks in a quarter of xz's time; xz -9 gives 5.00 MB, gzip -9 7.13 MB,
// lz4 -9 8.65 MB (bench/initramfs.sh prints the figures for the current
// tree).
const DefaultCompression = "zstd"

// compressor is how one method is written: by an external command reading
// the archive on stdin (the reference tools compress 10-15% smaller than
// the Go libraries), or in Go (inGo): gzip always; zstd when its tool is
// missing, which still beats gzip by far (goZstdLevel's figures).
type compressor struct {
	argv   []string
	config string // the kernel option that must be y
	inGo   func(w io.Writer, r io.Reader) error
	goName string // what inGo is, for the log
}

// goZstdLevel is the Go zstd encoder's level: its best. On the generic
// image (the package's initramfs build and 72 modules, a 24.97 MB cpio)
// it gives 6.42 MB in 3 s, where zstd -19 gives 5.68 MB in 21 s and
// gzip -9 7.26 MB (Go's xz, ulikunitz/xz, 6.59 MB): 12% over the tool,
// 12% under gzip. bench/initramfs.sh prints them for the current tree.
const goZstdLevel = zstd.SpeedBestCompression

// goZstdWindow is the Go encoder's window, zstd -19's: the kernel's
// decompressor allocates as much to unpack it. The best level's default,
// 32 MiB, saves 3 KB of the 6.42 MB.
const goZstdWindow = 8 << 20

// compressorFor returns method's compressor, false for an unknown method.
// A switch, not a map: nothing to build at package initialisation.
func compressorFor(method string) (compressor, bool) {
	switch method {
	case "zstd":
		// -T0 output does not depend on the thread count (zstd(1)).
		return compressor{argv: []string{"zstd", "-19", "-T0", "-q", "-c"}, config: "CONFIG_RD_ZSTD",
			inGo: zstdTo, goName: "Go's zstd encoder (klauspost/compress, best level)"}, true
	case "xz":
		// The kernel's XZ decoder wants CRC32 checks.
		return compressor{argv: []string{"xz", "--check=crc32", "-9", "-T1", "-c"}, config: "CONFIG_RD_XZ"}, true
	case "lz4":
		return compressor{argv: []string{"lz4", "-l", "-9", "-q", "-c"}, config: "CONFIG_RD_LZ4"}, true
	case "gzip":
		return compressor{config: "CONFIG_RD_GZIP", inGo: gzipTo, goName: "Go's gzip -9"}, true
	case "none":
		return compressor{}, true
	}
	return compressor{}, false
}

// Compressions lists the methods Build knows.
func Compressions() []string { return []string{"zstd", "xz", "gzip", "lz4", "none"} }

// checkCompression fails early when method is unknown, its tool is
// missing and it has no Go encoder, or the kernel's config
// (boot/config-<kver> under root, when there is one) cannot unpack it.
func checkCompression(root, kver, method string) error {
	if method == "" {
		method = DefaultCompression
	}
	c, ok := compressorFor(method)
	if !ok {
		return fmt.Errorf("compression %q: want one of %s", method, strings.Join(Compressions(), ", "))
	}
	if len(c.argv) > 0 && c.inGo == nil {
		if _, err := exec.LookPath(c.argv[0]); err != nil {
			return fmt.Errorf("compression %s: %w (install %s, or choose -compress gzip)", method, err, c.argv[0])
		}
	}
	if c.config == "" {
		return nil
	}
	cfg := kernelConfig(root, kver)
	if cfg == "" {
		return nil // nothing to check against
	}
	ok, err := kernelHas(cfg, c.config)
	if err != nil {
		return fmt.Errorf("compression %s: %w", method, err)
	}
	if !ok {
		return fmt.Errorf("compression %s: %s has no %s=y: the kernel could not unpack the initramfs", method, cfg, c.config)
	}
	return nil
}

// kernelConfig returns kver's config file under root: /boot/config-<kver>
// (Debian, RHEL), else /lib/modules/<kver>/config (Fedora, openEuler); ""
// when there is none.
func kernelConfig(root, kver string) string {
	for _, p := range []string{filepath.Join(root, "boot", "config-"+kver), filepath.Join(root, "lib/modules", kver, "config")} {
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	return ""
}

// autoCompression is COMPRESS=auto: zstd when the kernel can unpack it
// (by its tool, else Go's encoder), else gzip (written in Go, unpacked by
// every kernel built with CONFIG_RD_GZIP).
func autoCompression(root, kver string) string {
	if checkCompression(root, kver, "zstd") == nil {
		return "zstd"
	}
	return "gzip"
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
// or time in any header) and atomically: into a new file next to dst,
// synced, given mode 0644 (an initramfs holds no secret, and Debian's are
// 0644), then renamed over dst, and the directory synced. dst is never
// left half written. It returns the sizes of src and dst.
func compressFile(src, dst, method string) (int64, int64, error) {
	raw, size, _, err := compressFileBy(src, dst, method)
	return raw, size, err
}

// compressFileBy is compressFile, also saying what compressed: the
// tool's command line, the Go encoder (zstd without its tool, gzip), or
// "" for none.
func compressFileBy(src, dst, method string) (raw, size int64, by string, err error) {
	if method == "" {
		method = DefaultCompression
	}
	c, ok := compressorFor(method)
	if !ok {
		return 0, 0, "", fmt.Errorf("compression %q: want one of %s", method, strings.Join(Compressions(), ", "))
	}
	if len(c.argv) > 0 && c.inGo != nil {
		if _, err := exec.LookPath(c.argv[0]); err == nil {
			c.inGo = nil // the reference tool, when there is one
		}
	}
	in, err := os.Open(src)
	if err != nil {
		return 0, 0, "", err
	}
	defer in.Close()
	fi, err := in.Stat()
	if err != nil {
		return 0, 0, "", err
	}
	dir := filepath.Dir(dst)
	out, err := os.CreateTemp(dir, "."+filepath.Base(dst)+".tmp*")
	if err != nil {
		return 0, 0, "", fmt.Errorf("write %s: %w", dst, err)
	}
	tmp := out.Name()
	defer os.Remove(tmp) // a no-op once renamed
	switch {
	case method == "none":
		_, err = io.Copy(out, in)
	case c.inGo != nil:
		by = c.goName
		if len(c.argv) > 0 {
			by += ", no " + c.argv[0] + " tool"
		}
		err = c.inGo(out, in)
	default:
		by = strings.Join(c.argv, " ")
		// Through proc.Run, as every command: a group of its own,
		// WaitDelay, a Ctrl-C relayed to it. No context: Build has no
		// deadline.
		cmd := exec.Command(c.argv[0], c.argv[1:]...)
		var stderr bytes.Buffer
		cmd.Stdin, cmd.Stdout, cmd.Stderr = in, out, &stderr
		if err = proc.Run(cmd); err != nil {
			err = fmt.Errorf("%s: %w: %s", strings.Join(c.argv, " "), err, strings.TrimSpace(stderr.String()))
		}
	}
	if err == nil {
		err = out.Chmod(0o644)
	}
	if err == nil {
		err = out.Sync()
	}
	if err == nil {
		var ofi os.FileInfo
		if ofi, err = out.Stat(); err == nil {
			size = ofi.Size()
		}
	}
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, dst)
	}
	if err == nil {
		err = syncDir(dir)
	}
	if err != nil {
		return 0, 0, "", fmt.Errorf("write %s: %w", dst, err)
	}
	return fi.Size(), size, by, nil
}

// syncDir makes a rename in dir durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

// zstdTo writes r to w as one zstd frame, with Go's encoder at
// goZstdLevel and goZstdWindow, on one goroutine: the same input gives
// the same bytes.
func zstdTo(w io.Writer, r io.Reader) error {
	zw, err := zstd.NewWriter(w, zstd.WithEncoderLevel(goZstdLevel), zstd.WithWindowSize(goZstdWindow), zstd.WithEncoderConcurrency(1))
	if err != nil {
		return err
	}
	if _, err := zw.ReadFrom(r); err != nil {
		zw.Close()
		return err
	}
	return zw.Close()
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
