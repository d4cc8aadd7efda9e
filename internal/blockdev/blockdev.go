// Package blockdev finds block devices in sysfs and identifies the
// filesystems on them from their own bytes, without udev or blkid.
//
// Probe reads a few sectors of a device and recognises ext2/3/4, xfs,
// btrfs, vfat (FAT12/16/32), iso9660 and udf, reporting type, label and UUID
// the way blkid does. Wait polls /sys/class/block for a device
// matching a root=-style Spec.
package blockdev

import (
	"errors"
	"fmt"
	"io"
	"strings"
)

// FS is what a probe found on a device.
type FS struct {
	Type  string // "udf", "iso9660", "vfat", "ext2", "ext3", "ext4", "xfs", "btrfs", or "" when unknown
	Label string // volume label as stored, trailing spaces trimmed
	UUID  string // ext, xfs, btrfs: 8-4-4-4-12 lower-case; vfat: "XXXX-XXXX"; iso9660: "2024-01-02-03-04-05-00"
}

// ErrUnknown is wrapped by Probe's error when no known signature is found.
var ErrUnknown = errors.New("no known filesystem")

// ErrAmbivalent is wrapped by Probe's error when a device carries an xfs
// or btrfs signature and another valid one: blkid reports neither (an
// "ambivalent result"), so neither is matched by LABEL= or UUID=.
var ErrAmbivalent = errors.New("more than one filesystem signature")

// prober recognises one filesystem. ok is false when the signature is
// absent; err is set when the signature is there but the rest is corrupt.
type prober func(r io.ReaderAt, size int64) (fs FS, ok bool, err error)

// probers lists the probes in the order they are tried: signatures at
// fixed places that cannot collide (iso9660 at 32769, ext at 1080) before
// FAT's boot sector, which a partition table also ends in 0x55AA. Among
// iso9660, ext and vfat the first that matches wins; for xfs and btrfs
// blkid's ambivalence rule applies (see Probe).
func probers() []namedProber {
	return []namedProber{
		// A UDF bridge disc has ISO 9660 descriptors too: blkid says
		// udf, so udf is tried first.
		{"udf", probeUDF, 3, false},
		{"iso9660", probeISO9660, 3, false},
		{"ext", probeExt, 2, false},
		{"vfat", probeFAT, 0, false},
		{"xfs", probeXFS, 1, true},
		{"btrfs", probeBTRFS, 4, true},
	}
}

type namedProber struct {
	name       string
	probe      prober
	rank       int  // place in libblkid's probe order, for tiny devices
	ambivalent bool // blkid's ambivalence rule applies: another match makes the result ambivalent
}

// tinySize is libblkid's floppy size: on a device no larger, the first
// signature in its order wins and no ambivalence is reported.
const tinySize = 1440 << 10

// Probe identifies the filesystem on r (size bytes). An unknown or corrupt
// filesystem returns FS{} and an error saying why.
//
// When an xfs or btrfs signature and another valid one are both found,
// Probe decides as blkid does: on a device over 1440 KiB it returns an
// error wrapping ErrAmbivalent; on a smaller one the first in libblkid's
// order (vfat, xfs, ext, iso9660, btrfs) wins. A corrupt signature does
// not count, as in blkid: the other filesystem is reported.
func Probe(r io.ReaderAt, size int64) (FS, error) {
	if size < 0 {
		return FS{}, fmt.Errorf("negative size %d", size)
	}
	var errs []error
	type match struct {
		p  namedProber
		fs FS
	}
	var found []match
	first := false // one of the first-match probes has matched
	for _, p := range probers() {
		if first && !p.ambivalent {
			continue
		}
		fs, ok, err := p.probe(r, size)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", p.name, err))
			continue
		}
		if ok {
			found = append(found, match{p, fs})
			first = first || !p.ambivalent
		}
	}
	switch {
	case len(found) == 1:
		return found[0].fs, nil
	case len(found) > 1 && size <= tinySize:
		best := found[0]
		for _, m := range found[1:] {
			if m.p.rank < best.p.rank {
				best = m
			}
		}
		return best.fs, nil
	case len(found) > 1:
		names := make([]string, len(found))
		for i, m := range found {
			names[i] = m.fs.Type
		}
		return FS{}, fmt.Errorf("%w: %s (blkid reports none; wipefs can remove the stale one)", ErrAmbivalent, strings.Join(names, " and "))
	}
	if len(errs) > 0 {
		return FS{}, joinErrs(errs)
	}
	if t, err := ReadPartTable(r, size); err == nil {
		return FS{}, fmt.Errorf("%w: %s partition table", ErrUnknown, t.Type)
	}
	return FS{}, ErrUnknown
}

// errShort is returned for reads past the end of the device.
var errShort = errors.New("beyond end of device")

// readAt reads exactly n bytes at off, refusing to go beyond size.
func readAt(r io.ReaderAt, size, off int64, n int) ([]byte, error) {
	if off < 0 || n < 0 || off > size || int64(n) > size-off {
		return nil, fmt.Errorf("read %d bytes at offset %d of %d: %w", n, off, size, errShort)
	}
	b := make([]byte, n)
	m, err := r.ReadAt(b, off)
	if m == n {
		return b, nil
	}
	if err == nil || err == io.EOF {
		err = io.ErrUnexpectedEOF
	}
	return nil, fmt.Errorf("read %d bytes at offset %d: %w", n, off, err)
}

// has reports whether n bytes at off lie inside size.
func has(size, off int64, n int) bool {
	return off >= 0 && off <= size && int64(n) <= size-off
}

// joinErrs is errors.Join on one line, for log lines.
type joinErrs []error

func (e joinErrs) Error() string {
	var b strings.Builder
	for i, err := range e {
		if i > 0 {
			b.WriteString("; ")
		}
		b.WriteString(err.Error())
	}
	return b.String()
}

func (e joinErrs) Unwrap() []error { return e }
