// Package growpart grows a partition to the end of the free space after it,
// as cloud-utils' growpart does for cloud-init's cc_growpart, without
// external tools: the arithmetic on a GPT or MBR partition table read
// through an io.ReaderAt (Plan, Grow), and a small device layer that finds
// the partition under a mounted path in sysfs and tells the kernel about the
// new size with BLKPG (System).
//
// A table is verified before anything is written (GPT: the protective MBR,
// the primary header's and entry array's CRCs, the entries inside the usable
// area and not overlapping; MBR: every primary entry with a size, whatever
// its type, inside the disk and not overlapping, and the logical partitions
// of the EBR chains as the kernel reads them), and the new table is verified
// again, in memory, before it is written. On a real disk (System) the new
// range is also checked against every partition the kernel lists for the
// disk, and a table the kernel then refuses (BLKPG) is written back as it
// was and verified. A GPT disk grown after the image was made has its
// backup header and entry array moved to the disk's new end, both headers'
// CRCs recomputed. Nothing is written when there is nothing to grow: the
// partition already reaches the end of the free space, or could gain less
// than growpart's 1 MiB threshold.
package growpart

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"
)

// fudge is growpart's threshold (its FUDGE): a partition that could grow
// by less than this many bytes is left as it is.
const fudge = 1 << 20

// readWriterAt is a whole disk: its partition table is read and written at
// byte offsets.
type readWriterAt interface {
	io.ReaderAt
	io.WriterAt
}

// Disk is a whole disk as Plan reads it.
type Disk struct {
	// Name names the disk in messages ("/dev/vda").
	Name string
	// RW reads and writes the disk.
	RW readWriterAt
	// SectorSize is the logical sector size in bytes: 512, 1024, 2048
	// or 4096. The partition table counts in these.
	SectorSize int64
	// Size is the disk's size in bytes. A tail shorter than a sector is
	// not used.
	Size int64
}

// Change is what growing one partition does, or would do.
type Change struct {
	// Disk is the disk's name, Table "gpt" or "dos" (blkid's PTTYPE),
	// Part the partition's number (the kernel's), SectorSize the
	// table's sector size in bytes.
	Disk       string
	Table      string
	Part       int
	SectorSize int64
	// Start is the partition's first sector; OldSize and NewSize its
	// size in sectors before and after (equal when nothing grows).
	Start, OldSize, NewSize int64
	// Reason says why the partition does not grow; "" when it does.
	Reason string
	// Rewrote lists what is written, in order ("GPT backup entries
	// and header moved to the disk's end", "GPT primary header and
	// entries"); empty when nothing is.
	Rewrote []string
	// BackupMoved is set when the GPT backup header moves to the
	// disk's last sector (the disk was grown after the image was made).
	BackupMoved bool
	// KernelResized is set by System.GrowPartition when it told the
	// kernel the partition's new size.
	KernelResized bool

	rw     readWriterAt
	writes []write
	// undo is what the writes overwrote, read just before each one,
	// for Restore.
	undo []write
}

// write is one pending write: b at byte offset off.
type write struct {
	off int64
	b   []byte
}

// Grown tells whether the partition grows.
func (c *Change) Grown() bool { return c.NewSize > c.OldSize }

// OldEnd and NewEnd are the partition's last sector before and after.
func (c *Change) OldEnd() int64 { return c.Start + c.OldSize - 1 }

// NewEnd is the partition's last sector after the change.
func (c *Change) NewEnd() int64 { return c.Start + c.NewSize - 1 }

// String describes the change for the log.
func (c *Change) String() string {
	if !c.Grown() {
		return fmt.Sprintf("%s partition %d: nothing to grow: %s", c.Disk, c.Part, c.Reason)
	}
	s := fmt.Sprintf("%s partition %d (%s): grown from %d to %d sectors (end %d to %d)",
		c.Disk, c.Part, c.Table, c.OldSize, c.NewSize, c.OldEnd(), c.NewEnd())
	if len(c.Rewrote) > 0 {
		s += "; rewrote " + strings.Join(c.Rewrote, ", ")
	}
	return s
}

// Write writes the change to the disk, in the order that keeps a valid
// table on the disk at every step: the backup copy first, the primary
// last. It writes nothing when nothing grows. What each write overwrites
// is read first and kept for Restore; a write that fails is undone at
// once (what was written before it restored), and the error says whether
// that worked. The caller syncs the disk and tells the kernel.
func (c *Change) Write() error {
	c.undo = nil
	for _, w := range c.writes {
		old := make([]byte, len(w.b))
		if n, err := c.rw.ReadAt(old, w.off); n != len(old) {
			if err == nil || err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			err = fmt.Errorf("%s: read %d bytes at offset %d before writing them: %w", c.Disk, len(w.b), w.off, err)
			return c.failed(err)
		}
		c.undo = append(c.undo, write{w.off, old})
		if _, err := c.rw.WriteAt(w.b, w.off); err != nil {
			return c.failed(fmt.Errorf("%s: write %d bytes at offset %d: %w", c.Disk, len(w.b), w.off, err))
		}
	}
	return nil
}

// failed is err after a failed Write, with what Restore did.
func (c *Change) failed(err error) error {
	if len(c.undo) == 0 {
		return fmt.Errorf("%w (nothing was written)", err)
	}
	if rerr := c.Restore(); rerr != nil {
		return fmt.Errorf("%w; restoring the old table failed: %v", err, rerr)
	}
	return fmt.Errorf("%w; the old table was restored", err)
}

// Restore puts back, in reverse order, every byte Write overwrote, and
// reads each range back to check it. The caller syncs the disk.
func (c *Change) Restore() error {
	var errs []error
	for i := len(c.undo) - 1; i >= 0; i-- {
		u := c.undo[i]
		if _, err := c.rw.WriteAt(u.b, u.off); err != nil {
			errs = append(errs, fmt.Errorf("write %d bytes at offset %d: %w", len(u.b), u.off, err))
			continue
		}
		back := make([]byte, len(u.b))
		if n, err := c.rw.ReadAt(back, u.off); n != len(back) || !bytes.Equal(back, u.b) {
			errs = append(errs, fmt.Errorf("%d bytes at offset %d read back differently (%v)", len(u.b), u.off, err))
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("%s: %w", c.Disk, errors.Join(errs...))
	}
	c.undo = nil
	return nil
}

// errNoTable is returned by Plan for a disk with neither a GPT nor an MBR.
var errNoTable = errors.New("no partition table (no 55 AA signature in sector 0)")

// Plan reads and verifies d's partition table and works out how partition
// num (the kernel's number: a GPT entry's index + 1, an MBR slot 1-4, or
// 5 and up for logical partitions) grows to the end of the free space
// after it. It writes nothing. A table that does not verify, or a
// partition num that is not in it, is an error naming the disk; a
// partition that cannot or need not grow is a Change with a Reason.
func Plan(d Disk, num int) (*Change, error) {
	c, err := plan(d, num, false)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", d.Name, err)
	}
	c.Disk, c.SectorSize, c.rw = d.Name, d.SectorSize, d.RW
	if len(c.writes) > 0 {
		// Read the new table back through the pending writes: a
		// table that would not verify is never written.
		back, err := plan(Disk{RW: overlay{d.RW, c.writes}, SectorSize: d.SectorSize, Size: d.Size}, num, true)
		if err == nil && (back.Grown() || back.OldSize != c.NewSize) {
			err = fmt.Errorf("partition %d reads back as %d sectors, not %d", num, back.OldSize, c.NewSize)
		}
		if err != nil {
			return nil, fmt.Errorf("%s: the grown table does not verify (nothing written): %w", d.Name, err)
		}
	}
	return c, nil
}

// plan is Plan without the read back; check verifies the GPT backup too.
func plan(d Disk, num int, check bool) (*Change, error) {
	ss := d.SectorSize
	if ss != 512 && ss != 1024 && ss != 2048 && ss != 4096 {
		return nil, fmt.Errorf("logical sector size %d: want 512, 1024, 2048 or 4096", ss)
	}
	if d.Size < 2*ss {
		return nil, fmt.Errorf("disk of %d bytes is too small for a partition table", d.Size)
	}
	if num < 1 {
		return nil, fmt.Errorf("partition number %d", num)
	}
	mbr, err := readAt(d, 0, 512)
	if err != nil {
		return nil, fmt.Errorf("read the MBR: %w", err)
	}
	if mbr[510] != 0x55 || mbr[511] != 0xAA {
		return nil, errNoTable
	}
	for i := range 4 {
		if mbr[446+16*i+4] == 0xEE {
			return planGPT(d, mbr, num, check)
		}
	}
	return planMBR(d, mbr, num)
}

// readAt reads n bytes at off of d, all inside the disk.
func readAt(d Disk, off int64, n int) ([]byte, error) {
	if off < 0 || n < 0 || off > d.Size || int64(n) > d.Size-off {
		return nil, fmt.Errorf("%d bytes at offset %d lie outside the disk (%d bytes)", n, off, d.Size)
	}
	b := make([]byte, n)
	m, err := d.RW.ReadAt(b, off)
	if m == n {
		return b, nil
	}
	if err == nil || err == io.EOF {
		err = io.ErrUnexpectedEOF
	}
	return nil, fmt.Errorf("read %d bytes at offset %d: %w", n, off, err)
}

// overlay reads the disk as it will be once writes are written.
type overlay struct {
	r      io.ReaderAt
	writes []write
}

func (o overlay) ReadAt(b []byte, off int64) (int, error) {
	n, err := o.r.ReadAt(b, off)
	for _, w := range o.writes {
		lo, hi := max(off, w.off), min(off+int64(len(b)), w.off+int64(len(w.b)))
		if lo < hi {
			copy(b[lo-off:hi-off], w.b[lo-w.off:hi-w.off])
		}
	}
	return n, err
}

func (o overlay) WriteAt([]byte, int64) (int, error) {
	return 0, errors.New("overlay is read-only")
}

// fudgeSectors is fudge in sectors of ss bytes, as growpart's
// $((FUDGE/sector_size)).
func fudgeSectors(ss int64) int64 { return fudge / ss }

// noGrowth is the reason a partition ending (exclusive) at end does not
// grow to maxEnd (exclusive), growpart's two NOCHANGE messages, or "" when
// it grows.
func noGrowth(end, maxEnd, ss int64, next string) string {
	switch {
	case end >= maxEnd && next != "":
		return "it cannot be grown: " + next + " follows with no free space between"
	case end >= maxEnd:
		return "it cannot be grown: it already ends at the end of the usable space"
	case end+fudgeSectors(ss) > maxEnd:
		return fmt.Sprintf("it could only be grown by %d sectors (less than %d, 1 MiB)", maxEnd-end, fudgeSectors(ss))
	}
	return ""
}
