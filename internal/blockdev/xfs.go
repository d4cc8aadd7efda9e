package blockdev

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"io"
	"strings"
	"sync"
)

const (
	xfsMagic     = "XFSB"
	xfsSuperSize = 512 // the superblock's first sector: every field read
	xfsCRCOff    = 224 // sb_crc, in v5 superblocks

	xfsVersionMask     = 0x000f
	xfsVersionMoreBits = 0x8000
	xfsFeatures2CRC    = 0x0100
	xfsMinAGBlocks     = 64
	xfsMinRTExtent     = 4 << 10
	xfsMaxRTExtent     = 1 << 30
)

// castagnoli is CRC-32C, the checksum of XFS v5 and btrfs superblocks;
// its table is made on first use.
var castagnoli = sync.OnceValue(func() *crc32.Table { return crc32.MakeTable(crc32.Castagnoli) })

// probeXFS recognises XFS by its superblock at byte 0 and checks it as
// libblkid does (sizes and their logarithms agree, the data blocks fit
// the allocation groups) and, for v5, its CRC-32C over one sector.
func probeXFS(r io.ReaderAt, size int64) (FS, bool, error) {
	if !has(size, 0, len(xfsMagic)) {
		return FS{}, false, nil
	}
	magic, err := readAt(r, size, 0, len(xfsMagic))
	if err != nil {
		return FS{}, false, err
	}
	if string(magic) != xfsMagic {
		return FS{}, false, nil
	}
	if !has(size, 0, xfsSuperSize) {
		return FS{}, false, fmt.Errorf("superblock: %d of its %d bytes: %w", size, xfsSuperSize, errShort)
	}
	sb, err := readAt(r, size, 0, xfsSuperSize)
	if err != nil {
		return FS{}, false, err
	}
	if err := xfsCheck(sb); err != nil {
		return FS{}, false, fmt.Errorf("superblock: %w", err)
	}
	be := binary.BigEndian
	sectSize := int(be.Uint16(sb[102:]))
	if be.Uint16(sb[100:])&xfsVersionMask == 5 {
		if be.Uint16(sb[100:])&xfsVersionMoreBits == 0 || be.Uint32(sb[200:])&xfsFeatures2CRC == 0 {
			return FS{}, false, fmt.Errorf("superblock: version 5 without the CRC feature")
		}
		sect := sb
		if sectSize > len(sb) {
			if !has(size, 0, sectSize) {
				return FS{}, false, fmt.Errorf("superblock sector of %d bytes: %w", sectSize, errShort)
			}
			if sect, err = readAt(r, size, 0, sectSize); err != nil {
				return FS{}, false, err
			}
		}
		if got, want := xfsCRC(sect[:sectSize]), binary.LittleEndian.Uint32(sect[xfsCRCOff:]); got != want {
			return FS{}, false, fmt.Errorf("superblock: CRC %08x, stored %08x", got, want)
		}
	}
	return FS{Type: "xfs", Label: blkidLabel(sb[108:120]), UUID: blkidUUID(sb[32:48])}, true, nil
}

// xfsCheck is libblkid's xfs_verify_sb without the CRC: the sizes and
// their logarithms must agree and lie in XFS's limits.
func xfsCheck(sb []byte) error {
	be := binary.BigEndian
	blockSize := uint64(be.Uint32(sb[4:]))
	dblocks := be.Uint64(sb[8:])
	rextSize := uint64(be.Uint32(sb[80:]))
	agBlocks := uint64(be.Uint32(sb[84:]))
	agCount := uint64(be.Uint32(sb[88:]))
	sectSize := uint64(be.Uint16(sb[102:]))
	inodeSize := uint64(be.Uint16(sb[104:]))
	blockLog, sectLog, inodeLog, inoPBLog := uint(sb[120]), uint(sb[121]), uint(sb[122]), uint(sb[123])
	imaxPct := sb[127]
	switch {
	case agCount == 0:
		return fmt.Errorf("no allocation groups")
	case sectLog < 9 || sectLog > 15 || sectSize != 1<<sectLog:
		return fmt.Errorf("sector size %d (log %d) is invalid", sectSize, sectLog)
	case blockLog < 9 || blockLog > 16 || blockSize != 1<<blockLog:
		return fmt.Errorf("block size %d (log %d) is invalid", blockSize, blockLog)
	case inodeLog < 8 || inodeLog > 11 || inodeSize != 1<<inodeLog:
		return fmt.Errorf("inode size %d (log %d) is invalid", inodeSize, inodeLog)
	case blockLog-inodeLog != inoPBLog:
		return fmt.Errorf("inodes per block log %d, want %d", inoPBLog, blockLog-inodeLog)
	case rextSize*blockSize < xfsMinRTExtent || rextSize*blockSize > xfsMaxRTExtent:
		return fmt.Errorf("realtime extent of %d blocks is invalid", rextSize)
	case imaxPct > 100:
		return fmt.Errorf("inode space %d%% is invalid", imaxPct)
	case dblocks == 0 || dblocks > agCount*agBlocks || dblocks < (agCount-1)*agBlocks+xfsMinAGBlocks:
		return fmt.Errorf("%d data blocks do not fit %d allocation groups of %d blocks", dblocks, agCount, agBlocks)
	}
	return nil
}

// xfsCRC is the CRC-32C of a superblock sector with its CRC field taken
// as zero, which XFS stores little-endian.
func xfsCRC(sect []byte) uint32 {
	crc := crc32.Update(0, castagnoli(), sect[:xfsCRCOff])
	crc = crc32.Update(crc, castagnoli(), make([]byte, 4))
	return crc32.Update(crc, castagnoli(), sect[xfsCRCOff+4:])
}

// blkidLabel is a label field as libblkid reports it: up to the first
// NUL, trailing white space trimmed.
func blkidLabel(b []byte) string {
	return strings.TrimRight(cstring(b), " \t\n\v\f\r")
}

// blkidUUID formats a 16-byte UUID field; all zeros is no UUID, as in
// libblkid.
func blkidUUID(b []byte) string {
	if isZero(b) {
		return ""
	}
	return formatUUID(b)
}
