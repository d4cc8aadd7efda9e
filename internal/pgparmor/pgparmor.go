// Package pgparmor reads an ASCII-armoured OpenPGP block (RFC 4880,
// section 6.2) as `gpg --dearmor` does, which is what cloud-init's apt
// module runs on a source's key: the bytes of its base64 body, the armor
// headers left out, its checksum verified.
package pgparmor

import (
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
)

// Dearmor is the bodies of the armoured blocks in text, one after the
// other, as gpg --dearmor writes them, and refuses what gpg refuses
// (cloud-init writes no key file when gpg fails: TestDearmorAsCloudInit):
//
//   - A block starts at a "-----BEGIN PGP " line, which must start the
//     line (gpg finds no OpenPGP data in an indented one); text before
//     it is skipped.
//   - Armor headers ("Version: ...") follow, then an empty line, which
//     must be there: without it gpg takes the body's first line for a
//     header, and refuses it.
//   - The base64 body, each line trimmed, then the checksum line ("=" and
//     the body's CRC-24 in 4 base64 characters), which gpg 2.2 requires.
//   - A line starting "-----" (the "-----END PGP " line) or the end of
//     the text ends the block.
func Dearmor(text string) ([]byte, error) {
	lines := strings.Split(strings.ReplaceAll(text, "\r\n", "\n"), "\n")
	var out []byte
	found := false
	for i := 0; i < len(lines); i++ {
		if !strings.HasPrefix(lines[i], "-----BEGIN PGP ") {
			continue
		}
		b, last, err := block(lines, i+1)
		if err != nil {
			return nil, err
		}
		out = append(out, b...)
		found = true
		i = last
	}
	if !found {
		return nil, errors.New("not an ASCII-armoured OpenPGP key (no line starting -----BEGIN PGP)")
	}
	return out, nil
}

// block reads the block whose headers start at lines[i]: its body, and
// the index of its last line.
func block(lines []string, i int) ([]byte, int, error) {
	for ; ; i++ {
		if i == len(lines) {
			return nil, i, errors.New("ASCII-armoured key without a body")
		}
		l := strings.TrimSpace(lines[i])
		if l == "" {
			i++
			break
		}
		if !strings.Contains(l, ":") {
			return nil, i, fmt.Errorf("line %d of the armoured key is not an armor header (Key: value), and no empty line comes before the body", i+1)
		}
	}
	var body strings.Builder
	sum := ""
	for ; i < len(lines); i++ {
		l := strings.TrimSpace(lines[i])
		if strings.HasPrefix(l, "-----") {
			break
		}
		if l == "" {
			continue
		}
		if l[0] == '=' {
			if sum != "" {
				return nil, i, errors.New("two checksum lines in the armoured key")
			}
			sum = l[1:]
			continue
		}
		if sum != "" {
			return nil, i, errors.New("base64 after the armoured key's checksum line")
		}
		body.WriteString(l)
	}
	b, err := base64.StdEncoding.DecodeString(body.String())
	if err != nil || len(b) == 0 {
		return nil, i, fmt.Errorf("bad base64 in the armoured key: %v", err)
	}
	if sum == "" {
		return nil, i, errors.New("the armoured key has no checksum line (=XXXX), which gpg requires")
	}
	want, err := base64.StdEncoding.DecodeString(sum)
	if err != nil || len(want) != 3 {
		return nil, i, fmt.Errorf("bad checksum line %q in the armoured key", "="+sum)
	}
	if w, got := uint32(want[0])<<16|uint32(want[1])<<8|uint32(want[2]), crc24(b); w != got {
		return nil, i, fmt.Errorf("the armoured key's checksum is %06X, its body's CRC-24 %06X: the key is damaged", w, got)
	}
	return b, i, nil
}

// crc24 is RFC 4880's CRC-24 (section 6.1).
func crc24(b []byte) uint32 {
	const (
		init = 0xB704CE
		poly = 0x1864CFB
	)
	crc := uint32(init)
	for _, c := range b {
		crc ^= uint32(c) << 16
		for i := 0; i < 8; i++ {
			crc <<= 1
			if crc&0x1000000 != 0 {
				crc ^= poly
			}
		}
	}
	return crc & 0xFFFFFF
}
