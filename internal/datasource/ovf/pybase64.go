package ovf

import "errors"

// pyB64Decode is Python's base64.b64decode(s) (binascii.a2b_base64, not
// strict), which cloud-init uses for OVF properties and the customization's
// password: bytes outside the base64 alphabet are skipped, "=" ends the
// data once it completes a group, and what is left over must be a whole
// group; a string that is not ASCII is an error. So "#cloud-config\n..." is not an error when its alphabet
// characters happen to make whole groups: it decodes to other bytes, as it
// does in cloud-init.
func pyB64Decode(s string) ([]byte, error) {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			// Python refuses a str that is not ASCII before decoding.
			return nil, errors.New("base64: not ASCII")
		}
	}
	var out []byte
	quad, pads := 0, 0
	var left uint32
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '=' {
			if quad >= 2 {
				pads++
				if quad+pads >= 4 {
					break
				}
			}
			continue
		}
		v := b64value(c)
		if v < 0 {
			continue
		}
		pads = 0
		switch quad {
		case 0:
			quad, left = 1, uint32(v)
		case 1:
			quad = 2
			out = append(out, byte(left<<2|uint32(v)>>4))
			left = uint32(v) & 0x0f
		case 2:
			quad = 3
			out = append(out, byte(left<<4|uint32(v)>>2))
			left = uint32(v) & 0x03
		case 3:
			quad = 0
			out = append(out, byte(left<<6|uint32(v)))
			left = 0
		}
	}
	switch quad {
	case 0:
		return out, nil
	case 1:
		return nil, errors.New("base64: the number of data characters is 1 more than a multiple of 4")
	}
	if quad+pads >= 4 {
		return out, nil
	}
	return nil, errors.New("base64: incorrect padding")
}

func b64value(c byte) int {
	switch {
	case c >= 'A' && c <= 'Z':
		return int(c - 'A')
	case c >= 'a' && c <= 'z':
		return int(c-'a') + 26
	case c >= '0' && c <= '9':
		return int(c-'0') + 52
	case c == '+':
		return 62
	case c == '/':
		return 63
	}
	return -1
}
