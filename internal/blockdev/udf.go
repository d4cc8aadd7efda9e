package blockdev

import (
	"encoding/binary"
	"fmt"
	"io"
	"strings"
	"unicode/utf16"
)

const (
	udfVRSStart  = 32768 // the volume recognition sequence, as ISO 9660's descriptors
	udfVRSStride = 2048
	udfMaxVRS    = 64
	udfAnchor    = 256 // the anchor volume descriptor pointer's block
	udfMaxVDS    = 64  // descriptors read from the main volume descriptor sequence

	udfTagPVD  = 1
	udfTagAVDP = 2
	udfTagLVD  = 6
	udfTagTerm = 8
)

// probeUDF recognises a UDF volume (Azure's provisioning media, DVDs) by
// its volume recognition sequence: BEA01, then NSR02 or NSR03 before
// TEA01, after any ISO 9660 descriptors of a bridge disc. The label is the
// logical volume identifier, else the primary volume's, as blkid has it.
func probeUDF(r io.ReaderAt, size int64) (FS, bool, error) {
	// The sequence's descriptors are 2048 bytes apart, or a block apart
	// when blocks are larger (4096).
	for _, stride := range []int64{udfVRSStride, 4096} {
		nsr, err := udfVRS(r, size, stride)
		if err != nil {
			return FS{}, false, err
		}
		if nsr {
			return udfVolume(r, size)
		}
	}
	return FS{}, false, nil
}

// udfVRS tells whether the recognition sequence, its descriptors stride
// bytes apart, names a UDF volume (NSR02 or NSR03 after BEA01).
func udfVRS(r io.ReaderAt, size, stride int64) (bool, error) {
	nsr, bea := false, false
	for i := int64(0); i < udfMaxVRS && !nsr; i++ {
		off := udfVRSStart + i*stride
		if !has(size, off, 7) {
			break
		}
		d, err := readAt(r, size, off, 7)
		if err != nil {
			return false, err
		}
		switch id := string(d[1:6]); {
		case id == "BEA01":
			bea = true
		case bea && (id == "NSR02" || id == "NSR03"):
			nsr = true
		case id == "CD001" || id == "BOOT2" || id == "CDW02":
		default: // TEA01 or the end of the sequence
			i = udfMaxVRS
		}
	}
	return nsr, nil
}

// udfVolume reads the label of a volume the recognition sequence said is
// UDF, trying the block sizes mkudffs and the platforms use.
func udfVolume(r io.ReaderAt, size int64) (FS, bool, error) {
	for _, bs := range []int64{2048, 512, 4096} {
		if label, ok := udfLabel(r, size, bs); ok {
			return FS{Type: "udf", Label: label}, true, nil
		}
	}
	return FS{}, false, fmt.Errorf("NSR descriptor but no anchor volume descriptor pointer at block %d", udfAnchor)
}

// udfLabel reads the label through the anchor at block 256 of size bs.
func udfLabel(r io.ReaderAt, size, bs int64) (string, bool) {
	avdp, err := readAt(r, size, udfAnchor*bs, 32)
	if err != nil || binary.LittleEndian.Uint16(avdp) != udfTagAVDP || binary.LittleEndian.Uint32(avdp[12:]) != udfAnchor {
		return "", false
	}
	length, loc := int64(binary.LittleEndian.Uint32(avdp[16:])), int64(binary.LittleEndian.Uint32(avdp[20:]))
	var pvdLabel string
	for i := int64(0); i < min(length/bs, udfMaxVDS); i++ {
		d, err := readAt(r, size, (loc+i)*bs, 512)
		if err != nil {
			break
		}
		switch binary.LittleEndian.Uint16(d) {
		case udfTagLVD:
			if l := dstring(d[84 : 84+128]); l != "" {
				return l, true
			}
		case udfTagPVD:
			pvdLabel = dstring(d[24 : 24+32])
		case udfTagTerm:
			return pvdLabel, true
		}
	}
	return pvdLabel, true
}

// dstring decodes an OSTA compressed dstring: a compression id (8: one
// byte a character, 16: UCS-2 big-endian), the characters, and the used
// length in the last byte.
func dstring(b []byte) string {
	n := int(b[len(b)-1])
	if n == 0 || n > len(b)-1 {
		return ""
	}
	s := b[1:n]
	switch b[0] {
	case 8:
		r := make([]rune, len(s))
		for i, c := range s {
			r[i] = rune(c)
		}
		return strings.TrimRight(string(r), " \x00")
	case 16:
		u := make([]uint16, len(s)/2)
		for i := range u {
			u[i] = binary.BigEndian.Uint16(s[2*i:])
		}
		return strings.TrimRight(string(utf16.Decode(u)), " \x00")
	}
	return ""
}
