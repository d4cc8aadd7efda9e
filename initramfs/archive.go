package initramfs

import (
	"bufio"
	"debug/elf"
	"fmt"
	"io"
	"os"
	"path"
	"sort"

	"github.com/u-root/mkuimage/cpio"
)

// The archive's layout, which internal/boot and the kernel rely on: earlyinit at
// /bin/earlyinit, /init a relative symlink to it (what mkuimage's
// WithInit("earlyinit") made), the modules and their index files under
// /lib/modules/<kver>, and the mount points and device nodes earlyinit
// needs before devtmpfs is up.
const (
	// BinaryPath is where earlyinit is in the archive.
	BinaryPath = "bin/earlyinit"
	// InitLink is the kernel's init, a symlink to BinaryPath.
	InitLink = "init"
)

// baseRecords are the directories and device nodes of every image.
func baseRecords() []cpio.Record {
	return []cpio.Record{
		cpio.Directory("dev", 0o755),
		cpio.Directory("proc", 0o755),
		cpio.Directory("sys", 0o755),
		cpio.Directory("run", 0o755),
		cpio.Directory("newroot", 0o755),
		cpio.Directory("tmp", 0o1777),
		cpio.CharDev("dev/console", 0o600, 5, 1),
		cpio.CharDev("dev/null", 0o666, 1, 3),
		cpio.CharDev("dev/kmsg", 0o644, 1, 11),
	}
}

// archive is an initramfs's contents: records by name in the archive, the
// regular ones backed by a file on the build host or by bytes.
type archive struct {
	recs map[string]cpio.Record
	srcs map[string]string // archive name -> host file, read when written
}

func newArchive() *archive {
	a := &archive{recs: map[string]cpio.Record{}, srcs: map[string]string{}}
	for _, r := range baseRecords() {
		a.recs[r.Name] = r
	}
	return a
}

// addFile puts the host file src at name with mode perm; its contents are
// read when the archive is written.
func (a *archive) addFile(name, src string, perm uint64) {
	a.recs[name] = cpio.Record{Info: cpio.Info{Name: name, Mode: cpio.S_IFREG | perm}}
	a.srcs[name] = src
}

func (a *archive) addRecord(r cpio.Record) { a.recs[r.Name] = r }

// writeTo writes the newc archive, reproducibly: names sorted, parents
// before children (each missing parent a 0755 directory), no times,
// owners or inode numbers.
func (a *archive) writeTo(w io.Writer) error {
	for name := range a.recs {
		for p := path.Dir(name); p != "."; p = path.Dir(p) {
			if _, ok := a.recs[p]; !ok {
				a.recs[p] = cpio.Directory(p, 0o755)
			}
		}
	}
	names := make([]string, 0, len(a.recs))
	for n := range a.recs {
		names = append(names, n)
	}
	sort.Strings(names)
	bw := bufio.NewWriterSize(w, 1<<20)
	cw := cpio.Newc.Writer(bw)
	for _, n := range names {
		if err := a.writeRecord(cw, n); err != nil {
			return err
		}
	}
	if err := cpio.WriteTrailer(cw); err != nil {
		return err
	}
	return bw.Flush()
}

func (a *archive) writeRecord(cw cpio.RecordWriter, name string) error {
	r := a.recs[name]
	src, ok := a.srcs[name]
	if !ok {
		return cw.WriteRecord(cpio.MakeReproducible(r))
	}
	f, err := os.Open(src)
	if err != nil {
		return err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	if !fi.Mode().IsRegular() {
		return fmt.Errorf("%s: not a regular file", src)
	}
	r.FileSize = uint64(fi.Size())
	// onlyReaderAt keeps the cpio writer from closing f: this function
	// does.
	r.ReaderAt = onlyReaderAt{f}
	if err := cw.WriteRecord(cpio.MakeReproducible(r)); err != nil {
		return fmt.Errorf("archive %s as %s: %w", src, name, err)
	}
	return nil
}

type onlyReaderAt struct{ r io.ReaderAt }

func (o onlyReaderAt) ReadAt(p []byte, off int64) (int, error) { return o.r.ReadAt(p, off) }

// checkStatic fails unless file is an ELF executable with no program
// interpreter: /init starts before any shared library is there.
func checkStatic(file string) error {
	f, err := elf.Open(file)
	if err != nil {
		return fmt.Errorf("%s: not an executable earlyinit: %w", file, err)
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			interp, _ := io.ReadAll(io.LimitReader(p.Open(), 4096))
			return fmt.Errorf("%s is dynamically linked (interpreter %s): the initramfs needs a static earlyinit (CGO_ENABLED=0)", file, trimNul(interp))
		}
	}
	return nil
}

func trimNul(b []byte) string {
	for i, c := range b {
		if c == 0 {
			return string(b[:i])
		}
	}
	return string(b)
}
