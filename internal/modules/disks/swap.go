package disks

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path"
	"strconv"
	"strings"

	"github.com/earlyinit/earlyinit/internal/ccfg"
	"github.com/earlyinit/earlyinit/internal/modules/core"
	"github.com/earlyinit/earlyinit/internal/rootfs"
	"golang.org/x/sys/unix"
)

// swapConfig is cloud-config's swap: {filename, size, maxsize}, as
// cc_mounts.handle_swapcfg reads it.
type swapConfig struct {
	filename string
	auto     bool
	size     int64 // bytes, when not auto
	maxsize  int64 // bytes; -1 when not given
}

// parseSwap reads swap; nil when there is nothing to set up (absent, or
// cloud-init's "no need": a size of 0 or no filename).
func parseSwap(m *ccfg.Swap) (*swapConfig, error) {
	if m == nil {
		return nil, nil
	}
	sc := &swapConfig{filename: "/swap.img", maxsize: -1}
	if m.Filename != nil {
		sc.filename = *m.Filename
	}
	size := m.Size
	if size == nil || size == 0 || size == "0" || sc.filename == "" {
		return nil, nil
	}
	if !strings.HasPrefix(sc.filename, "/") || path.Clean(sc.filename) != sc.filename || strings.ContainsAny(sc.filename, " \t\n\\#") || sc.filename == "/" {
		return nil, fmt.Errorf("swap.filename %q: want an absolute, clean path without blanks", sc.filename)
	}
	if s, ok := size.(string); ok && strings.ToLower(s) == "auto" {
		sc.auto = true
	} else {
		n, err := human2bytes(size)
		if err != nil {
			return nil, fmt.Errorf("swap.size: %w", err)
		}
		if n == 0 {
			return nil, nil
		}
		sc.size = n
	}
	if m.MaxSize != nil {
		n, err := human2bytes(m.MaxSize)
		if err != nil {
			return nil, fmt.Errorf("swap.maxsize: %w", err)
		}
		sc.maxsize = n
	}
	return sc, nil
}

// human2bytes is cloud-init's util.human2bytes for a YAML value: an
// integer is bytes; a string is a number (a decimal fraction allowed)
// with an optional B, K, M, G or T suffix (powers of 1024), an optional
// trailing B ("10MB").
func human2bytes(v any) (int64, error) {
	switch n := v.(type) {
	case int:
		if n < 0 {
			return 0, fmt.Errorf("%d: cannot be negative", n)
		}
		return int64(n), nil
	case float64:
		if n < 0 || n > math.MaxInt64/2 {
			return 0, fmt.Errorf("%v: not a size", n)
		}
		return int64(n), nil
	case string:
		s := strings.TrimSuffix(n, "B")
		mult := int64(1)
		if s != "" {
			if m := strings.Index("BKMGT", s[len(s)-1:]); m >= 0 {
				mult, s = int64(1)<<(10*m), s[:len(s)-1]
			}
		}
		f, err := strconv.ParseFloat(s, 64)
		if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
			return 0, fmt.Errorf("%q is not valid input", n)
		}
		if f < 0 {
			return 0, fmt.Errorf("%q: cannot be negative", n)
		}
		if f*float64(mult) > 1<<60 {
			return 0, fmt.Errorf("%q: too big", n)
		}
		return int64(f * float64(mult)), nil
	}
	return 0, fmt.Errorf("want a size (an integer, or a string like 512M), got %s", core.Kind(v))
}

// suggestedSwapSize is cc_mounts.suggested_swapsize for a file in a
// filesystem with avail free bytes, memsize bytes of memory and maxsize
// (-1 when not given).
func suggestedSwapSize(memsize, maxsize, avail int64) int64 {
	const gb = 1 << 30
	suggMax := memsize * 2
	switch {
	case maxsize < 0:
		maxsize = min(avail/4, suggMax)
	case float64(maxsize) > float64(avail)*0.9:
		maxsize = int64(float64(avail) * 0.9)
	}
	var minsize int64
	switch {
	case memsize < 4*gb:
		minsize = memsize
	case memsize < 16*gb:
		minsize = 4 * gb
	default:
		minsize = int64(math.RoundToEven(math.Sqrt(float64(memsize)/gb))) * gb
	}
	return min(minsize, maxsize)
}

// memTotal is /proc/meminfo's MemTotal in bytes, as util.read_meminfo.
func memTotal(e *core.Env) (int64, error) {
	b, err := e.Root.ReadFile("/proc/meminfo")
	if err != nil {
		return 0, err
	}
	units := map[string]int64{"kB": 1 << 10, "mB": 1 << 20, "B": 1, "gB": 1 << 30}
	for line := range strings.Lines(string(b)) {
		f := strings.Fields(line)
		if len(f) < 2 || f[0] != "MemTotal:" {
			continue
		}
		n, err := strconv.ParseInt(f[1], 10, 64)
		mult := int64(1)
		if len(f) > 2 {
			mult = units[f[2]]
		}
		if err != nil || mult == 0 || n < 0 {
			break
		}
		return n * mult, nil
	}
	return 0, errors.New("/proc/meminfo: no MemTotal")
}

// swapActive tells whether name is in /proc/swaps; known is false when
// /proc/swaps cannot be read.
func swapActive(e *core.Env, name string) (active, known bool) {
	b, err := e.Root.ReadFile("/proc/swaps")
	if err != nil {
		return false, false
	}
	for line := range strings.Lines(string(b)) {
		if strings.HasPrefix(line, name+" ") {
			return true, true
		}
	}
	return false, true
}

// swapSignature is where mkswap's signature is in a swap area's first
// page, and what it says.
const swapSignature = "SWAPSPACE2"

// setupSwap is cc_mounts.handle_swapcfg: it makes the swap file sc asks
// for, unless it is already there, and returns its path for fstab ("" for
// none). As cloud-init, a file in /proc/swaps is kept, and so is one that
// exists when /proc/swaps cannot be read. Unlike cloud-init, which writes
// over an existing file that is not active swap, such a file is used only
// when it carries a swap signature; any other file is not ours and is
// left alone (an error). The file is made through the root's confined
// writes (a temporary file renamed into place, no link followed): mode
// 0600, its blocks allocated (fallocate; zeros written where swap files
// need them: btrfs, which also gets No_COW, and XFS before Linux 4.18, as
// cloud-init's dd), and mkswap's version-1 header written in its first
// page, so no tool ever opens the path.
func setupSwap(ctx context.Context, e *core.Env, sc *swapConfig) (string, error) {
	name := sc.filename
	if fi, err := e.Root.Stat(name); err == nil {
		if active, known := swapActive(e, name); active || !known {
			e.Logf("mounts: swap file %s already in use (or /proc/swaps unreadable): kept", name)
			return name, nil
		}
		if !fi.Mode().IsRegular() {
			return "", fmt.Errorf("swap.filename %s exists and is not a regular file: left alone", name)
		}
		head, _, err := e.Root.ReadHead(name, os.Getpagesize())
		if err != nil {
			return "", fmt.Errorf("swap.filename %s: %w", name, err)
		}
		if len(head) == os.Getpagesize() && string(head[len(head)-len(swapSignature):]) == swapSignature {
			e.Logf("mounts: swap file %s exists with a swap signature: used as it is", name)
			return name, nil
		}
		return "", fmt.Errorf("swap.filename %s exists, is not active swap and has no swap signature: not earlyinit's, left alone", name)
	} else if !errors.Is(err, fs.ErrNotExist) {
		return "", fmt.Errorf("swap.filename %s: %w", name, err)
	}
	dir := path.Dir(name)
	if err := e.Root.MkdirAll(dir, 0o755, 0, 0); err != nil {
		return "", err
	}
	var st unix.Statfs_t
	if err := unix.Statfs(e.Root.Path(dir), &st); err != nil {
		return "", fmt.Errorf("swap: statfs %s: %w", dir, err)
	}
	size := sc.size
	if sc.auto {
		mem, err := memTotal(e)
		if err != nil {
			e.Logf("mounts: not creating swap: %v", err)
			return "", nil
		}
		size = suggestedSwapSize(mem, sc.maxsize, int64(st.Frsize)*int64(st.Bfree))
	}
	// cloud-init creates str(int(size / 2**20)) MiB.
	mib := size >> 20
	page := int64(os.Getpagesize())
	if mib == 0 || mib<<20 < 10*page {
		e.Logf("mounts: not creating swap: the size comes to %d MiB", mib)
		return "", nil
	}
	zeros := st.Type == unix.BTRFS_SUPER_MAGIC || st.Type == unix.XFS_SUPER_MAGIC && core.KernelOlder(core.UnameRelease(), 4, 18)
	e.Logf("mounts: creating swap file %s of %d MiB", name, mib)
	label := swapLabel(e.Root.Labeler())
	err := e.Root.WriteFileFrom(name, func(f *os.File) error {
		if label != "" {
			if err := unix.Fsetxattr(int(f.Fd()), rootfs.XattrSELinux, append([]byte(label), 0), 0); err != nil {
				return fmt.Errorf("label %s: %w", label, err)
			}
		}
		return fillSwap(ctx, f, mib<<20, page, zeros, st.Type == unix.BTRFS_SUPER_MAGIC)
	}, 0o600, 0, 0)
	if err != nil {
		return "", fmt.Errorf("swap file %s: %w", name, err)
	}
	return name, nil
}

// swapLabel is the SELinux label of a swap file under the root's policy:
// the one the policy gives its own swap file, /var/swap (swapfile_t in the
// reference policy and Fedora's), "" without a policy or without that
// type. Whatever the path, swapon (fsadm_t) may only use a swapfile_t
// file: a swap file labelled by its path (default_t for /swapfile) is
// refused in enforcing mode, as it is with cloud-init, which leaves it so.
func swapLabel(l rootfs.Labeler) string {
	if l == nil {
		return ""
	}
	if ctx, ok := l.Lookup("/var/swap", 0); ok && strings.Contains(ctx, ":swapfile_t:") {
		return ctx
	}
	return ""
}

// fsNoCOW is linux/fs.h's FS_NOCOW_FL (chattr +C).
const fsNoCOW = 0x00800000

// fillSwap allocates size bytes of f (fallocate, or zeros written when
// zeros is set or fallocate is not supported), No_COW first on btrfs, and
// writes a swap header for pages of page bytes, as mkswap makes it.
func fillSwap(ctx context.Context, f *os.File, size, page int64, zeros, nocow bool) error {
	fd := int(f.Fd())
	if nocow {
		flags, err := unix.IoctlGetUint32(fd, unix.FS_IOC_GETFLAGS)
		if err == nil {
			err = unix.IoctlSetPointerInt(fd, unix.FS_IOC_SETFLAGS, int(flags|fsNoCOW))
		}
		if err != nil {
			return fmt.Errorf("set No_COW (btrfs swap files need it): %w", err)
		}
	}
	if !zeros {
		err := unix.Fallocate(fd, 0, 0, size)
		if errors.Is(err, unix.EOPNOTSUPP) || errors.Is(err, unix.ENOSYS) {
			zeros = true
		} else if err != nil {
			return fmt.Errorf("fallocate %d bytes: %w", size, err)
		}
	}
	if zeros {
		buf := make([]byte, 1<<20)
		for off := int64(0); off < size; off += int64(len(buf)) {
			if err := ctx.Err(); err != nil {
				return err
			}
			if _, err := f.WriteAt(buf[:min(int64(len(buf)), size-off)], off); err != nil {
				return fmt.Errorf("write zeros: %w", err)
			}
		}
	}
	hdr, err := swapHeader(size, page)
	if err != nil {
		return err
	}
	_, err = f.WriteAt(hdr, 0)
	return err
}

// swapHeader is the first page of a swap area of size bytes: mkswap's
// struct swap_header_v1_2 (version 1, last page, no bad pages, a random
// UUID, no label) and the SWAPSPACE2 signature at the page's end.
func swapHeader(size, page int64) ([]byte, error) {
	h := make([]byte, page)
	le := binary.LittleEndian
	le.PutUint32(h[1024:], 1)
	le.PutUint32(h[1028:], uint32(min(size/page-1, math.MaxUint32)))
	uuid := h[1036:1052]
	if _, err := rand.Read(uuid); err != nil {
		return nil, err
	}
	uuid[6] = uuid[6]&0x0f | 0x40
	uuid[8] = uuid[8]&0x3f | 0x80
	copy(h[page-int64(len(swapSignature)):], swapSignature)
	return h, nil
}
