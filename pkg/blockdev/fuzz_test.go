package blockdev

import (
	"bytes"
	"encoding/binary"
	"io"
	"testing"
)

func bytesReader(b []byte) io.ReaderAt { return bytes.NewReader(b) }

// extSeed builds a minimal ext superblock image.
func extSeed(compat, incompat, roCompat uint32, label string) []byte {
	b := make([]byte, 2048)
	sb := b[1024:]
	le := binary.LittleEndian
	le.PutUint16(sb[56:], extMagic)
	le.PutUint32(sb[92:], compat)
	le.PutUint32(sb[96:], incompat)
	le.PutUint32(sb[100:], roCompat)
	copy(sb[104:120], "0123456789abcdef")
	copy(sb[120:136], label)
	return b
}

func FuzzProbe(f *testing.F) {
	f.Add(extSeed(0, 0x2, 0x1, "boot"))
	f.Add(extSeed(4, 0x2, 0x1, "j"))
	f.Add(extSeed(4, 0x2c2, 0x46b, "root"))
	f.Add(make([]byte, 4096))
	f.Fuzz(func(t *testing.T, b []byte) {
		fs, err := Probe(bytesReader(b), int64(len(b)))
		if err != nil && fs != (FS{}) {
			t.Errorf("error %v with a result %+v", err, fs)
		}
		if err == nil && fs.Type == "" {
			t.Errorf("no error and no type")
		}
	})
}
