package blockdev

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
)

const (
	extSuperOff  = 1024
	extSuperSize = 1024
	extMagic     = 0xEF53

	extCompatHasJournal   = 0x0004
	extIncompatJournalDev = 0x0008

	// What ext2 and ext3 support, as libblkid defines it: anything else
	// makes the filesystem ext4.
	ext2IncompatSupp  = 0x0002 | 0x0010          // filetype, meta_bg
	ext3IncompatSupp  = 0x0002 | 0x0004 | 0x0010 // filetype, recover, meta_bg
	ext23RoCompatSupp = 0x0001 | 0x0002 | 0x0004 // sparse_super, large_file, btree_dir
)

// probeExt recognises ext2/3/4 by the superblock at 1024.
func probeExt(r io.ReaderAt, size int64) (FS, bool, error) {
	if !has(size, extSuperOff, extSuperSize) {
		return FS{}, false, nil
	}
	sb, err := readAt(r, size, extSuperOff, extSuperSize)
	if err != nil {
		return FS{}, false, err
	}
	le := binary.LittleEndian
	if le.Uint16(sb[56:]) != extMagic {
		return FS{}, false, nil
	}
	if lb := le.Uint32(sb[24:]); lb > 6 { // block size 1 KiB << 6 = 64 KiB at most
		return FS{}, false, fmt.Errorf("superblock: block size 1024<<%d is invalid", lb)
	}
	compat := le.Uint32(sb[92:])
	incompat := le.Uint32(sb[96:])
	roCompat := le.Uint32(sb[100:])
	if incompat&extIncompatJournalDev != 0 {
		return FS{}, false, fmt.Errorf("external journal device, not a filesystem")
	}
	fs := FS{
		Label: cstring(sb[120:136]),
		UUID:  formatUUID(sb[104:120]),
	}
	journal := compat&extCompatHasJournal != 0
	switch {
	case roCompat&^ext23RoCompatSupp != 0:
		fs.Type = "ext4"
	case journal && incompat&^ext3IncompatSupp == 0:
		fs.Type = "ext3"
	case !journal && incompat&^ext2IncompatSupp == 0:
		fs.Type = "ext2"
	default:
		fs.Type = "ext4"
	}
	return fs, true, nil
}

// cstring returns b up to its first NUL.
func cstring(b []byte) string {
	if i := bytes.IndexByte(b, 0); i >= 0 {
		b = b[:i]
	}
	return string(b)
}

// formatUUID prints 16 bytes as 8-4-4-4-12 lower-case hex.
func formatUUID(b []byte) string {
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}
