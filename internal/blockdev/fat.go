package blockdev

import (
	"encoding/binary"
	"fmt"
	"io"
	"strings"
)

const (
	fatDirEntry        = 32
	fatAttrVolume      = 0x08
	fatAttrDir         = 0x10
	fatAttrLFN         = 0x0F
	fatNoName          = "NO NAME    "
	fatMaxClusters     = 0x0FFFFFF6 // FAT32's limit
	fat16Max           = 0xFFF4
	fatMaxRootScan     = 1 << 20 // bytes of root directory read at most
	fatMaxRootClusters = 16      // FAT32 root directory clusters searched at most
)

// probeFAT recognises FAT12/16/32 by the BIOS parameter block in sector 0.
func probeFAT(r io.ReaderAt, size int64) (FS, bool, error) {
	if !has(size, 0, 512) {
		return FS{}, false, nil
	}
	bs, err := readAt(r, size, 0, 512)
	if err != nil {
		return FS{}, false, err
	}
	if !fatSignature(bs) {
		return FS{}, false, nil
	}
	b, ok, err := parseFATBPB(bs)
	if !ok {
		return FS{}, false, err
	}

	fs := FS{Type: "vfat"}
	var serial, bootLabel, label []byte
	if b.fat32 {
		serial, bootLabel, label, err = fat32Labels(r, size, bs, b)
	} else {
		serial, bootLabel, label, err = fat16Labels(r, size, bs, b)
	}
	if err != nil {
		return FS{}, false, err
	}
	if serial != nil {
		fs.UUID = fmt.Sprintf("%02X%02X-%02X%02X", serial[3], serial[2], serial[1], serial[0])
	}
	// The root directory's label entry is what blkid reports; when there
	// is none we fall back on the boot sector's (blkid's LABEL_FATBOOT).
	if label == nil && string(bootLabel) != fatNoName {
		label = bootLabel
	}
	fs.Label = strings.TrimRight(string(label), " ")
	return fs, true, nil
}

// fatSignature reports whether boot sector bs may be a FAT one.
func fatSignature(bs []byte) bool {
	// As blkid: a FAT type name in the boot sector, or else the 0x55AA
	// signature and a valid BPB (an MBR's boot code fails the BPB checks).
	typeName := string(bs[54:62]) == "FAT12   " || string(bs[54:62]) == "FAT16   " ||
		string(bs[54:62]) == "FAT     " || string(bs[54:59]) == "MSDOS" ||
		string(bs[82:90]) == "FAT32   " || string(bs[82:87]) == "MSWIN"
	if !typeName {
		if bs[510] != 0x55 || bs[511] != 0xAA {
			return false
		}
		if m := string(bs[54:62]); m == "JFS     " || m == "HPFS    " {
			return false // OS/2 puts a FAT-like header on these
		}
	}
	return true
}

// fatBPB is what probeFAT uses of a BIOS parameter block, and the
// layout it gives: meta sectors before the data area, and clusters.
type fatBPB struct {
	bps, spc, reserved, fats int64
	rootEntries, fatLen      int64
	fat32                    bool
	meta, clusters           int64
}

// parseFATBPB reads and checks boot sector bs's BPB; ok is false when it
// is not a FAT one, err set too when it is a broken one.
func parseFATBPB(bs []byte) (b fatBPB, ok bool, err error) {
	le := binary.LittleEndian
	bps := int64(le.Uint16(bs[11:]))
	spc := int64(bs[13])
	reserved := int64(le.Uint16(bs[14:]))
	fats := int64(bs[16])
	rootEntries := int64(le.Uint16(bs[17:]))
	media := bs[21]
	fat16Len := int64(le.Uint16(bs[22:]))
	fat32Len := int64(le.Uint32(bs[36:]))
	sectors := int64(le.Uint16(bs[19:]))
	if sectors == 0 {
		sectors = int64(le.Uint32(bs[32:]))
	}
	if bps < 512 || bps > 4096 || !pow2(bps) || spc == 0 || !pow2(spc) ||
		reserved == 0 || fats == 0 || (media != 0xF0 && media < 0xF8) {
		return fatBPB{}, false, nil
	}
	fatLen := fat16Len
	fat32 := fat16Len == 0
	if fat32 {
		fatLen = fat32Len
	}
	if fatLen == 0 {
		return fatBPB{}, false, nil
	}
	rootSectors := (rootEntries*fatDirEntry + bps - 1) / bps
	meta := reserved + fats*fatLen + rootSectors
	if sectors <= meta {
		return fatBPB{}, false, fmt.Errorf("boot sector: %d sectors cannot hold %d of metadata", sectors, meta)
	}
	clusters := (sectors - meta) / spc
	if !fat32 && clusters > fat16Max {
		return fatBPB{}, false, fmt.Errorf("boot sector: %d clusters is too many for FAT12/16", clusters)
	}
	if clusters > fatMaxClusters {
		return fatBPB{}, false, fmt.Errorf("boot sector: %d clusters is too many for FAT32", clusters)
	}
	return fatBPB{bps: bps, spc: spc, reserved: reserved, fats: fats, rootEntries: rootEntries,
		fatLen: fatLen, fat32: fat32, meta: meta, clusters: clusters}, true, nil
}

// fat32Labels are a FAT32 volume's serial and boot sector label, after
// its FSInfo check, and the label entry of its root directory.
func fat32Labels(r io.ReaderAt, size int64, bs []byte, b fatBPB) (serial, bootLabel, label []byte, err error) {
	le := binary.LittleEndian
	serial = bs[67:71]
	if bs[66] == 0x29 {
		bootLabel = bs[71:82]
	}
	if err := fatCheckFSInfo(r, size, int64(le.Uint16(bs[48:]))*b.bps); err != nil {
		return nil, nil, nil, err
	}
	// Follow the root directory's cluster chain a little way: the
	// label entry is normally the first.
	next := int64(le.Uint32(bs[44:]))
	for i := 0; i < fatMaxRootClusters && next >= 2 && next-2 < b.clusters; i++ {
		off := (b.meta + (next-2)*b.spc) * b.bps
		l, end, err := fatRootLabel(r, size, off, min(b.spc*b.bps, fatMaxRootScan))
		if err != nil {
			return nil, nil, nil, fmt.Errorf("root directory cluster %d: %w", next, err)
		}
		if label = l; label != nil || end {
			break
		}
		e, err := readAt(r, size, b.reserved*b.bps+next*4, 4)
		if err != nil {
			return nil, nil, nil, fmt.Errorf("FAT entry %d: %w", next, err)
		}
		next = int64(le.Uint32(e) & 0x0FFFFFFF)
	}
	return serial, bootLabel, label, nil
}

// fat16Labels are a FAT12/16 volume's serial and boot sector label, from
// its extended boot signature, and the label entry of its root directory.
func fat16Labels(r io.ReaderAt, size int64, bs []byte, b fatBPB) (serial, bootLabel, label []byte, err error) {
	if bs[38] == 0x28 || bs[38] == 0x29 {
		serial = bs[39:43]
	}
	if bs[38] == 0x29 {
		bootLabel = bs[43:54]
	}
	label, _, err = fatRootLabel(r, size, (b.reserved+b.fats*b.fatLen)*b.bps, min(b.rootEntries*fatDirEntry, fatMaxRootScan))
	if err != nil {
		return nil, nil, nil, fmt.Errorf("root directory: %w", err)
	}
	return serial, bootLabel, label, nil
}

// fatCheckFSInfo checks the FAT32 FSInfo sector's signatures (or zeros,
// which some formatters leave), as blkid does.
func fatCheckFSInfo(r io.ReaderAt, size, off int64) error {
	if off == 0 {
		return nil
	}
	b, err := readAt(r, size, off, 512)
	if err != nil {
		return fmt.Errorf("fsinfo sector: %w", err)
	}
	s1, s2 := string(b[0:4]), string(b[484:488])
	if (s1 != "RRaA" && s1 != "RRdA" && s1 != "\x00\x00\x00\x00") || (s2 != "rrAa" && s2 != "\x00\x00\x00\x00") {
		return fmt.Errorf("fsinfo sector at %d: bad signature %q %q", off, s1, s2)
	}
	return nil
}

// fatRootLabel finds the volume-label entry in the n bytes of directory
// at off; end reports that the directory's end marker was seen.
func fatRootLabel(r io.ReaderAt, size, off, n int64) (label []byte, end bool, err error) {
	if n <= 0 {
		return nil, false, nil
	}
	dir, err := readAt(r, size, off, int(n))
	if err != nil {
		return nil, false, err
	}
	for i := 0; i+fatDirEntry <= len(dir); i += fatDirEntry {
		e := dir[i : i+fatDirEntry]
		switch {
		case e[0] == 0x00:
			return nil, true, nil
		case e[0] == 0xE5, e[11]&0x3F == fatAttrLFN:
			continue
		case e[20] != 0 || e[21] != 0 || e[26] != 0 || e[27] != 0:
			continue // a label has no cluster
		case e[11]&(fatAttrVolume|fatAttrDir) != fatAttrVolume:
			continue
		}
		name := append([]byte(nil), e[:11]...)
		if name[0] == 0x05 { // a leading 0xE5 is stored as 0x05
			name[0] = 0xE5
		}
		if string(name) == fatNoName {
			return nil, true, nil
		}
		return name, true, nil
	}
	return nil, false, nil
}

func pow2(n int64) bool { return n > 0 && n&(n-1) == 0 }
