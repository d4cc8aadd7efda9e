package blockdev

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"strings"
	"unicode/utf16"
)

const (
	isoSector    = 2048
	isoFirstVD   = 16 // descriptors start at sector 16
	isoMaxVDs    = 64 // more than any real disc has
	isoVDPrimary = 1
	isoVDSupp    = 2
	isoVDEnd     = 255
)

// probeISO9660 recognises an ISO 9660 volume by its descriptor set.
func probeISO9660(r io.ReaderAt, size int64) (FS, bool, error) {
	first := int64(isoFirstVD * isoSector)
	if !has(size, first, isoSector) {
		return FS{}, false, nil
	}
	var pvd, joliet []byte
	for i := int64(0); i < isoMaxVDs; i++ {
		off := first + i*isoSector
		if i > 0 && !has(size, off, isoSector) {
			return FS{}, false, fmt.Errorf("descriptor %d at %d: %w", isoFirstVD+i, off, errShort)
		}
		vd, err := readAt(r, size, off, isoSector)
		if err != nil {
			return FS{}, false, err
		}
		if string(vd[1:6]) != "CD001" {
			if i == 0 {
				return FS{}, false, nil
			}
			return FS{}, false, fmt.Errorf("descriptor %d at %d: no CD001 before the set terminator", isoFirstVD+i, off)
		}
		switch vd[0] {
		case isoVDPrimary:
			if pvd == nil {
				pvd = vd
			}
		case isoVDSupp:
			esc := vd[88:120]
			if joliet == nil && (bytes.HasPrefix(esc, []byte("%/@")) || bytes.HasPrefix(esc, []byte("%/C")) || bytes.HasPrefix(esc, []byte("%/E"))) {
				joliet = vd
			}
		}
		if vd[0] == isoVDEnd {
			break
		}
	}
	if pvd == nil {
		return FS{}, false, fmt.Errorf("no primary volume descriptor")
	}
	fs := FS{Type: "iso9660", Label: strings.TrimRight(string(pvd[40:72]), " \x00")}
	// Joliet keeps the case the PVD may have lost; but when it is the
	// PVD's label in UCS-2 (perhaps cut to 16 characters), the PVD's is
	// the longer, as blkid has it.
	if joliet != nil && !asciiEqUCS2(pvd[40:72], joliet[40:72]) {
		fs.Label = ucs2be(joliet[40:72])
	}
	// blkid takes the modification date, else the creation date; mkisofs
	// and xorriso write both the same.
	if u, ok := isoDate(pvd[830:847]); ok {
		fs.UUID = u
	} else if u, ok := isoDate(pvd[813:830]); ok {
		fs.UUID = u
	}
	return fs, true, nil
}

// isoDate formats a 17-byte descriptor date ("YYYYMMDDHHMMSScc" and a
// zone byte) as blkid's UUID "YYYY-MM-DD-HH-MM-SS-cc". An all-zero date
// is unset.
func isoDate(d []byte) (string, bool) {
	digits := d[:16]
	for _, c := range digits {
		if c < '0' || c > '9' {
			return "", false
		}
	}
	if bytes.Count(digits, []byte("0")) == 16 && d[16] == 0 {
		return "", false
	}
	s := string(digits)
	return s[0:4] + "-" + s[4:6] + "-" + s[6:8] + "-" + s[8:10] + "-" + s[10:12] + "-" + s[12:14] + "-" + s[14:16], true
}

// ucs2be decodes a big-endian UTF-16 field, trailing spaces and NULs
// trimmed.
func ucs2be(b []byte) string {
	u := make([]uint16, len(b)/2)
	for i := range u {
		u[i] = binary.BigEndian.Uint16(b[2*i:])
	}
	return strings.TrimRight(string(utf16.Decode(u)), " \x00")
}

// asciiEqUCS2 reports whether the UCS-2 field u spells the start of the
// ASCII field a.
func asciiEqUCS2(a, u []byte) bool {
	for i := 0; i+1 < len(u); i += 2 {
		if u[i] != 0 || i/2 >= len(a) || a[i/2] != u[i+1] {
			return false
		}
	}
	return true
}
