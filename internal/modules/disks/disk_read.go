package disks

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/earlyinit/earlyinit/internal/blockdev"
	"github.com/earlyinit/earlyinit/internal/modules/core"
)

// diskPart is one partition of a disk as lsblk and earlyinit's own read
// see it.
type diskPart struct {
	Path          string     // /dev/ and the kernel's name
	Type          string     // from the disk's own table: GPT type GUID, MBR type ("83")
	LsType        string     // lsblk's PARTTYPE
	FSType, Label string     // lsblk's FSTYPE and LABEL
	Found         bytesFound // earlyinit's own probe of its bytes
	ReadErr       error      // its first or last MiB could not be read
}

// diskView is a disk any and auto choose on.
type diskView struct {
	tableErr error      // the disk's table is there but not readable
	parts    []diskPart // the table's partitions, then those only lsblk lists
	holders  []blkEntry // lsblk's other entries: LVM volumes, crypt, RAID built on it
}

// readDisk reads dev's partition table and each partition's bytes, and
// puts them with lsblk's entries (ents[0] being dev). The error is dev's
// own read failing; the view then has lsblk's entries only.
func readDisk(ctx context.Context, e *core.Env, dev string, ents []blkEntry) (diskView, error) {
	type region struct {
		num   int
		typ   string
		found bytesFound
		err   error
	}
	type result struct {
		tableErr error
		parts    []region
	}
	res, err := readDevice(ctx, e, dev, func(r io.ReaderAt, size int64) (result, error) {
		var res result
		if err := readEnds(r, size); err != nil {
			return res, err
		}
		t, err := blockdev.ReadPartTable(r, size)
		if err != nil {
			if !errors.Is(err, blockdev.ErrNoPartTable) {
				res.tableErr = err
			}
			return res, nil
		}
		for _, p := range t.Parts {
			rg := region{num: p.Num, typ: p.Type}
			sr := io.NewSectionReader(r, p.Start, p.Size)
			if rg.err = readEnds(sr, p.Size); rg.err == nil {
				rg.found = bytesUse(sr, p.Size)
			}
			res.parts = append(res.parts, rg)
		}
		return res, nil
	})
	var v diskView
	base := "/dev/" + ents[0].Name
	if ents[0].Type == "part" { // dev is itself a partition
		v.parts = append(v.parts, diskPart{Path: base, LsType: ents[0].PartType, FSType: ents[0].FSType, Label: ents[0].Label})
	}
	if err == nil {
		v.tableErr = res.tableErr
		for _, rg := range res.parts {
			v.parts = append(v.parts, diskPart{Path: partitionPath(base, strconv.Itoa(rg.num)), Type: rg.typ, Found: rg.found, ReadErr: rg.err})
		}
	}
	for _, d := range ents[1:] {
		if d.Type != "part" {
			v.holders = append(v.holders, d)
			continue
		}
		p := v.part("/dev/" + d.Name)
		if p == nil {
			v.parts = append(v.parts, diskPart{Path: "/dev/" + d.Name})
			p = &v.parts[len(v.parts)-1]
		}
		p.LsType, p.FSType, p.Label = d.PartType, d.FSType, d.Label
	}
	return v, err
}

func (v *diskView) part(path string) *diskPart {
	for i := range v.parts {
		if v.parts[i].Path == path {
			return &v.parts[i]
		}
	}
	return nil
}

// systemType is the system partition path is, by the disk's own table
// or by lsblk.
func (v *diskView) systemType(path string) (what, shown string) {
	p := v.part(path)
	if p == nil {
		return "", ""
	}
	if what, shown = systemPart(p.Type); what == "" {
		what, shown = systemPart(p.LsType)
	}
	return what, shown
}

// used is why partition p counts as used ("" when it looks blank).
func (v *diskView) used(p diskPart) string {
	switch {
	case p.ReadErr != nil:
		return "could not be read"
	case p.FSType != "":
		return p.FSType
	case p.Found.What != "":
		return p.Found.What
	}
	what, _ := v.systemType(p.Path)
	return what
}

// enrich is ents with the file system earlyinit's probe found where lsblk
// has none (lsblk knows only what the udev database holds).
func (v *diskView) enrich(ents []blkEntry) []blkEntry {
	out := append([]blkEntry(nil), ents...)
	for i, d := range out {
		if p := v.part("/dev/" + d.Name); d.Type == "part" && d.FSType == "" && p != nil && p.Found.Type != "" {
			out[i].FSType, out[i].Label = p.Found.Type, p.Found.Label
		}
	}
	return out
}

// mayFormat is earlyinit's rule for t, which any or auto chose on disk,
// without overwrite: true. A system partition only when it is made for
// fsType on a disk of ours; a partition only on a disk of ours (whose
// table disk_setup wrote in this run), or when it holds replace_fs's
// file system. Anywhere else a partition without a signature may be raw
// data (a database's, GRUB's core.img), so a table not ours is refused
// even when all of it looks blank.
func (v *diskView) mayFormat(t, disk, fsType, replace string, auto, ours bool) error {
	if what, shown := v.systemType(t); what != "" && !(ours && typeFits(what, fsType)) {
		return notFormatted(t, what, shown)
	}
	if t == disk {
		return nil // nothing on it is used; its own bytes are checked next
	}
	if v.tableErr != nil {
		return fmt.Errorf("%s has a partition table earlyinit cannot read (%v): not chosen without overwrite: true", disk, v.tableErr)
	}
	if ours {
		return nil
	}
	if p := v.part(t); replace != "" && !auto && p != nil && (p.FSType == replace || p.Found.Type == replace) {
		return nil
	}
	var used []string
	for _, p := range v.parts {
		if why := v.used(p); why != "" {
			used = append(used, p.Path+": "+why)
		}
	}
	for _, h := range v.holders {
		used = append(used, h.Name+": "+h.Type)
	}
	if len(used) > 0 {
		return fmt.Errorf("%s has a partition table with used partitions (%s): not chosen without overwrite: true", disk, strings.Join(used, ", "))
	}
	return fmt.Errorf("%s has a partition table disk_setup did not write in this run: its partitions show no signature, but a raw partition holds data without one: not chosen without overwrite: true", disk)
}

// probeSpan is how much of each end of a device must read back for it to
// count as readable.
const probeSpan = 1 << 20

// readEnds reads the first and last MiB of r (size bytes): the
// places signatures and partition tables live.
func readEnds(r io.ReaderAt, size int64) error {
	if size <= 0 {
		return errors.New("empty device")
	}
	n := min(size, probeSpan)
	buf := make([]byte, n)
	for _, off := range []int64{0, size - n} {
		m, err := r.ReadAt(buf, off)
		if int64(m) == n {
			continue
		}
		if err == nil || err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return fmt.Errorf("read %d bytes at offset %d: %w", n, off, err)
	}
	return nil
}

// bytesFound is what earlyinit's own probes found on a device.
type bytesFound struct {
	Type, Label string // a file system or other signature, named as blkid's TYPE
	What        string // what makes the device used, for a message; "" for nothing found
}

// bytesUse probes r (size bytes, its ends readable): a file system
// (internal/blockdev), a signature blockdev does not know (otherSignature), a
// partition table. A damaged or ambivalent signature counts as used.
func bytesUse(r io.ReaderAt, size int64) bytesFound {
	fs, err := blockdev.Probe(r, size)
	switch {
	case err == nil:
		return bytesFound{Type: fs.Type, Label: fs.Label, What: fs.Type}
	case errors.Is(err, blockdev.ErrAmbivalent):
		return bytesFound{What: "more than one file system signature"}
	case !errors.Is(err, blockdev.ErrUnknown):
		return bytesFound{What: fmt.Sprintf("a damaged file system signature (%v)", err)}
	}
	if typ := otherSignature(r, size); typ != "" {
		return bytesFound{Type: typ, What: typ}
	}
	t, err := blockdev.ReadPartTable(r, size)
	switch {
	case err == nil:
		return bytesFound{What: "a " + t.Type + " partition table"}
	case !errors.Is(err, blockdev.ErrNoPartTable):
		return bytesFound{What: fmt.Sprintf("a damaged partition table (%v)", err)}
	}
	return bytesFound{}
}

// otherSignature finds signatures blkid reports and internal/blockdev does not
// know, by blkid's TYPE name: LVM2 physical volumes, swap and hibernation
// images, Linux RAID members (metadata 0.90 and 1.x), LUKS.
func otherSignature(r io.ReaderAt, size int64) string {
	at := func(off int64, n int) []byte {
		if off < 0 || off+int64(n) > size {
			return nil
		}
		b := make([]byte, n)
		if m, _ := r.ReadAt(b, off); m != n {
			return nil
		}
		return b
	}
	if b := at(0, 6); string(b) == "LUKS\xba\xbe" {
		return "crypto_LUKS"
	}
	for s := int64(0); s < 4; s++ { // the LVM2 label is in one of the first four sectors
		if b := at(s*512, 32); b != nil && string(b[:8]) == "LABELONE" && string(b[24:32]) == "LVM2 001" {
			return "LVM2_member"
		}
	}
	for _, page := range []int64{4096, 8192, 16384, 32768, 65536} {
		if b := at(page-10, 10); b != nil {
			switch string(b) {
			case "SWAPSPACE2", "SWAP-SPACE":
				return "swap"
			case "S1SUSPEND\x00", "S2SUSPEND\x00", "ULSUSPEND\x00", "LINHIB0001":
				return "swsuspend"
			}
		}
	}
	sectors := size / 512
	for _, off := range []int64{0, 4096, ((sectors - 16) &^ 7) * 512, (sectors&^127 - 128) * 512} {
		if b := at(off, 4); b != nil && (string(b) == "\xfc\x4e\x2b\xa9" || string(b) == "\xa9\x2b\x4e\xfc") {
			return "linux_raid_member"
		}
	}
	return ""
}

// deviceReadTimeout bounds earlyinit's own read of one device: a healthy
// one answers in milliseconds; one that hangs is treated as in use.
const deviceReadTimeout = 30 * time.Second

// deviceUse is what earlyinit's own probes find on dev; an error when
// its ends cannot be read.
func deviceUse(ctx context.Context, e *core.Env, dev string) (bytesFound, error) {
	return readDevice(ctx, e, dev, func(r io.ReaderAt, size int64) (bytesFound, error) {
		if err := readEnds(r, size); err != nil {
			return bytesFound{}, err
		}
		return bytesUse(r, size), nil
	})
}

// deviceOpener is implemented by an Exec that also reads devices (tests
// give disk images, some with unreadable sectors); any other Exec means
// the device nodes under e.Root.
type deviceOpener interface {
	OpenDevice(path string) (r io.ReaderAt, size int64, c io.Closer, err error)
}

// openDevice opens dev read-only: through the Exec when it is a
// deviceOpener, else the node in the root, which must be a block device
// (or, for images, a regular file), its size from seeking to its end.
func openDevice(e *core.Env, dev string) (io.ReaderAt, int64, io.Closer, error) {
	if o, ok := e.Exec.(deviceOpener); ok {
		return o.OpenDevice(dev)
	}
	// O_NONBLOCK: a FIFO planted at the path must not block the open.
	f, err := os.OpenFile(e.Root.Path(dev), os.O_RDONLY|syscall.O_NONBLOCK|syscall.O_NOCTTY|syscall.O_CLOEXEC, 0)
	if err != nil {
		return nil, 0, nil, err
	}
	fi, err := f.Stat()
	if err == nil && fi.Mode().Type() != os.ModeDevice && !fi.Mode().IsRegular() {
		err = fmt.Errorf("not a block device (%v)", fi.Mode().Type())
	}
	if err == nil {
		// Reads block, as on any disk (O_NONBLOCK was for the open).
		err = syscall.SetNonblock(int(f.Fd()), false)
	}
	var size int64
	if err == nil {
		size, err = f.Seek(0, io.SeekEnd)
	}
	if err != nil {
		f.Close()
		return nil, 0, nil, err
	}
	return f, size, f, nil
}

// readDevice opens dev and runs fn on it in a goroutine, bounded by ctx
// and deviceReadTimeout: a read of a stuck device cannot be interrupted,
// so it is abandoned and the device counts as unreadable. A panic in fn
// (bytes of the device are hostile input) is an error.
func readDevice[T any](ctx context.Context, e *core.Env, dev string, fn func(r io.ReaderAt, size int64) (T, error)) (T, error) {
	type result struct {
		v   T
		err error
	}
	done := make(chan result, 1)
	go func() {
		var res result
		defer func() {
			if p := recover(); p != nil {
				res = result{err: fmt.Errorf("probe panicked: %v", p)}
			}
			done <- res
		}()
		r, size, c, err := openDevice(e, dev)
		if err != nil {
			res.err = err
			return
		}
		defer c.Close()
		res.v, res.err = fn(r, size)
	}()
	ctx, cancel := context.WithTimeout(ctx, deviceReadTimeout)
	defer cancel()
	select {
	case res := <-done:
		return res.v, res.err
	case <-ctx.Done():
		var zero T
		return zero, fmt.Errorf("no answer: %w", ctx.Err())
	}
}
