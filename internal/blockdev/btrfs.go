package blockdev

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"io"
	"math/bits"
)

const (
	btrfsSuperOff  = 64 << 10 // the primary superblock
	btrfsSuperSize = 4096     // BTRFS_SUPER_INFO_SIZE, all of it checksummed
	btrfsMagicOff  = 0x40
	btrfsMagic     = "_BHRfS_M"
	btrfsCsumSize  = 32
	btrfsMinSize   = 1 << 20 // libblkid does not look for btrfs on less

	btrfsCsumCRC32C = 0
	btrfsCsumXXHash = 1
	btrfsCsumSHA256 = 2
)

// probeBTRFS recognises btrfs by its primary superblock at 64 KiB and
// checks it as libblkid does: the checksum (CRC-32C, xxHash64 or SHA-256;
// other kinds, like BLAKE2b, are not verified) and a sector size.
// The backup superblocks (64 MiB, 256 GiB) are not looked at, as by
// libblkid.
func probeBTRFS(r io.ReaderAt, size int64) (FS, bool, error) {
	if !has(size, btrfsSuperOff+btrfsMagicOff, len(btrfsMagic)) {
		return FS{}, false, nil
	}
	magic, err := readAt(r, size, btrfsSuperOff+btrfsMagicOff, len(btrfsMagic))
	if err != nil {
		return FS{}, false, err
	}
	if string(magic) != btrfsMagic {
		return FS{}, false, nil
	}
	if !has(size, btrfsSuperOff, btrfsSuperSize) {
		return FS{}, false, fmt.Errorf("superblock at %d: %w", btrfsSuperOff, errShort)
	}
	if size < btrfsMinSize {
		return FS{}, false, fmt.Errorf("device of %d bytes is below btrfs's 1 MiB minimum", size)
	}
	sb, err := readAt(r, size, btrfsSuperOff, btrfsSuperSize)
	if err != nil {
		return FS{}, false, err
	}
	if err := btrfsCheckCsum(sb); err != nil {
		return FS{}, false, fmt.Errorf("superblock: %w", err)
	}
	le := binary.LittleEndian
	if le.Uint32(sb[0x90:]) == 0 {
		return FS{}, false, fmt.Errorf("superblock: sector size 0")
	}
	return FS{Type: "btrfs", Label: blkidLabel(sb[0x12b : 0x12b+256]), UUID: blkidUUID(sb[0x20:0x30])}, true, nil
}

// btrfsCheckCsum verifies the superblock's checksum of the kind its
// csum_type names, over everything after the checksum field.
func btrfsCheckCsum(sb []byte) error {
	le := binary.LittleEndian
	data := sb[btrfsCsumSize:]
	var got, want []byte
	switch typ := le.Uint16(sb[0xc4:]); typ {
	case btrfsCsumCRC32C:
		got = le.AppendUint32(nil, crc32.Checksum(data, castagnoli()))
		want = sb[:4]
	case btrfsCsumXXHash:
		got = le.AppendUint64(nil, xxh64(data))
		want = sb[:8]
	case btrfsCsumSHA256:
		sum := sha256.Sum256(data)
		got = sum[:]
		want = sb[:btrfsCsumSize]
	default:
		return nil // libblkid skips what it cannot compute
	}
	if !bytes.Equal(got, want) {
		return fmt.Errorf("checksum %x, stored %x", got, want)
	}
	return nil
}

// xxHash64's primes.
const (
	xxPrime1 uint64 = 11400714785074694791
	xxPrime2 uint64 = 14029467366897019727
	xxPrime3 uint64 = 1609587929392839161
	xxPrime4 uint64 = 9650029242287828579
	xxPrime5 uint64 = 2870177450012600261
)

// xxh64 is xxHash64 with seed 0, btrfs's "xxhash" checksum.
func xxh64(b []byte) uint64 {
	le := binary.LittleEndian
	n := uint64(len(b))
	var h uint64
	if len(b) >= 32 {
		p1, p2 := xxPrime1, xxPrime2 // variables: the sums wrap
		v1 := p1 + p2
		v2 := p2
		v3 := uint64(0)
		v4 := -p1
		for ; len(b) >= 32; b = b[32:] {
			v1 = xxRound(v1, le.Uint64(b[0:]))
			v2 = xxRound(v2, le.Uint64(b[8:]))
			v3 = xxRound(v3, le.Uint64(b[16:]))
			v4 = xxRound(v4, le.Uint64(b[24:]))
		}
		h = bits.RotateLeft64(v1, 1) + bits.RotateLeft64(v2, 7) + bits.RotateLeft64(v3, 12) + bits.RotateLeft64(v4, 18)
		for _, v := range []uint64{v1, v2, v3, v4} {
			h = (h^xxRound(0, v))*xxPrime1 + xxPrime4
		}
	} else {
		h = xxPrime5
	}
	h += n
	for ; len(b) >= 8; b = b[8:] {
		h ^= xxRound(0, le.Uint64(b))
		h = bits.RotateLeft64(h, 27)*xxPrime1 + xxPrime4
	}
	if len(b) >= 4 {
		h ^= uint64(le.Uint32(b)) * xxPrime1
		h = bits.RotateLeft64(h, 23)*xxPrime2 + xxPrime3
		b = b[4:]
	}
	for _, c := range b {
		h ^= uint64(c) * xxPrime5
		h = bits.RotateLeft64(h, 11) * xxPrime1
	}
	h ^= h >> 33
	h *= xxPrime2
	h ^= h >> 29
	h *= xxPrime3
	h ^= h >> 32
	return h
}

func xxRound(acc, in uint64) uint64 {
	acc += in * xxPrime2
	return bits.RotateLeft64(acc, 31) * xxPrime1
}
