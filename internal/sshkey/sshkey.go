// Package sshkey makes OpenSSH host keys in Go, as `ssh-keygen -t T -N ""
// -f FILE` makes them: the private key in OpenSSH's own format
// (PROTOCOL.key, unencrypted), the public key line, and what ssh-keygen
// prints (the SHA256 fingerprint and its randomart). An ed25519 or ECDSA
// key costs microseconds in-process where ssh-keygen costs a process
// (a second or more per key under TCG); RSA's prime search costs the same
// either way.
package sshkey

import (
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"io"
	"math/big"
	"strings"
)

// Key is a generated key pair.
type Key struct {
	// Type is ssh-keygen's -t: "ed25519", "ecdsa" or "rsa".
	Type string
	// Private is the private key file (0600), PEM "OPENSSH PRIVATE KEY".
	Private []byte
	// Public is the public key file: "ALG BASE64 COMMENT\n".
	Public []byte
	// Blob is the public key in the SSH wire format.
	Blob []byte
	// Bits is the key's size as ssh-keygen reports it.
	Bits int
	// Comment is the comment both files carry.
	Comment string
}

// rsaBits and ecdsaBits are ssh-keygen's default sizes (OpenSSH 8.0 on:
// RSA 3072; ECDSA 256, nistp256).
const (
	rsaBits   = 3072
	ecdsaBits = 256
)

// Types are the key types Generate makes.
var Types = []string{"rsa", "ecdsa", "ed25519"}

// Generate makes a key of type typ ("rsa", "ecdsa", "ed25519") with
// comment (ssh-keygen's default is user@hostname) from rand.
func Generate(typ, comment string, rand io.Reader) (*Key, error) {
	if strings.ContainsAny(comment, "\n\r") {
		return nil, fmt.Errorf("ssh key comment has a line break")
	}
	var pub, priv []byte // the wire public key; the private fields after the type
	var alg string
	k := &Key{Type: typ, Comment: comment}
	switch typ {
	case "ed25519":
		p, s, err := ed25519.GenerateKey(rand)
		if err != nil {
			return nil, fmt.Errorf("ed25519 key: %w", err)
		}
		alg = "ssh-ed25519"
		pub = appendString(appendString(nil, alg), p)
		priv = appendString(appendString(nil, p), s)
		k.Bits = 256
	case "ecdsa":
		s, err := ecdsa.GenerateKey(elliptic.P256(), rand)
		if err != nil {
			return nil, fmt.Errorf("ecdsa key: %w", err)
		}
		q, err := s.PublicKey.Bytes()
		if err != nil {
			return nil, fmt.Errorf("ecdsa key: %w", err)
		}
		d, err := s.Bytes()
		if err != nil {
			return nil, fmt.Errorf("ecdsa key: %w", err)
		}
		alg = "ecdsa-sha2-nistp256"
		pub = appendString(appendString(appendString(nil, alg), []byte("nistp256")), q)
		priv = appendMpint(appendString(appendString(nil, []byte("nistp256")), q), new(big.Int).SetBytes(d))
		k.Bits = ecdsaBits
	case "rsa":
		s, err := rsa.GenerateKey(rand, rsaBits)
		if err != nil {
			return nil, fmt.Errorf("rsa key: %w", err)
		}
		if len(s.Primes) != 2 {
			return nil, fmt.Errorf("rsa key: %d primes", len(s.Primes))
		}
		e := big.NewInt(int64(s.E))
		alg = "ssh-rsa"
		pub = appendMpint(appendMpint(appendString(nil, alg), e), s.N)
		// n, e, d, iqmp (q⁻¹ mod p), p, q: OpenSSH's order.
		priv = appendMpint(appendMpint(appendMpint(appendMpint(appendMpint(appendMpint(nil,
			s.N), e), s.D), s.Precomputed.Qinv), s.Primes[0]), s.Primes[1])
		k.Bits = s.N.BitLen()
	default:
		return nil, fmt.Errorf("ssh key type %q: not one of %s", typ, strings.Join(Types, ", "))
	}
	var check [4]byte
	if _, err := io.ReadFull(rand, check[:]); err != nil {
		return nil, fmt.Errorf("%s key: %w", typ, err)
	}
	k.Blob = pub
	k.Private = privateFile(alg, pub, priv, comment, check)
	line := alg + " " + base64.StdEncoding.EncodeToString(pub)
	if comment != "" {
		line += " " + comment
	}
	k.Public = []byte(line + "\n")
	return k, nil
}

// privateFile is PROTOCOL.key's unencrypted container, PEM-armoured at 70
// columns as ssh-keygen writes it.
func privateFile(alg string, pub, fields []byte, comment string, check [4]byte) []byte {
	sec := append([]byte{}, check[:]...)
	sec = append(sec, check[:]...)
	sec = appendString(sec, []byte(alg))
	sec = append(sec, fields...)
	sec = appendString(sec, []byte(comment))
	for i := byte(1); len(sec)%8 != 0; i++ {
		sec = append(sec, i)
	}
	b := append([]byte("openssh-key-v1"), 0)
	b = appendString(b, []byte("none"))
	b = appendString(b, []byte("none"))
	b = appendString(b, "")
	b = binary.BigEndian.AppendUint32(b, 1)
	b = appendString(b, pub)
	b = appendString(b, sec)
	enc := base64.StdEncoding.EncodeToString(b)
	var out strings.Builder
	out.WriteString("-----BEGIN OPENSSH PRIVATE KEY-----\n")
	for len(enc) > 70 {
		out.WriteString(enc[:70] + "\n")
		enc = enc[70:]
	}
	out.WriteString(enc + "\n-----END OPENSSH PRIVATE KEY-----\n")
	return []byte(out.String())
}

// appendString appends an SSH string: uint32 length, bytes.
func appendString[T ~[]byte | ~string](b []byte, s T) []byte {
	b = binary.BigEndian.AppendUint32(b, uint32(len(s)))
	return append(b, s...)
}

// appendMpint appends a non-negative SSH mpint: big-endian, a leading zero
// byte when the top bit is set, nothing for zero.
func appendMpint(b []byte, n *big.Int) []byte {
	v := n.Bytes()
	if len(v) > 0 && v[0]&0x80 != 0 {
		v = append([]byte{0}, v...)
	}
	return appendString(b, v)
}

// Fingerprint is ssh-keygen's default fingerprint: "SHA256:" and the
// digest in unpadded base64.
func (k *Key) Fingerprint() string {
	d := sha256.Sum256(k.Blob)
	return "SHA256:" + base64.RawStdEncoding.EncodeToString(d[:])
}

// keygenName is sshkey_type(): the name randomart's title gives the type.
func (k *Key) keygenName() string {
	return map[string]string{"rsa": "RSA", "ecdsa": "ECDSA", "ed25519": "ED25519"}[k.Type]
}

// Randomart is OpenSSH's sshkey_fingerprint_randomart of the SHA256
// digest ("the drunken bishop"): a 17×9 field the digest walks two bits
// at a time, framed by the key's type and size and the hash's name.
func (k *Key) Randomart() string {
	const (
		w, h = 17, 9
		aug  = " .o+=*BOX@%&#/^SE"
	)
	top := len(aug) - 1
	var field [w][h]int
	x, y := w/2, h/2
	d := sha256.Sum256(k.Blob)
	for _, in := range d {
		for range 4 {
			if in&1 != 0 {
				x++
			} else {
				x--
			}
			if in&2 != 0 {
				y++
			} else {
				y--
			}
			x, y = max(0, min(x, w-1)), max(0, min(y, h-1))
			if field[x][y] < top-2 {
				field[x][y]++
			}
			in >>= 2
		}
	}
	field[w/2][h/2] = top - 1
	field[x][y] = top
	border := func(title string) string {
		if len(title) > w {
			title = title[:w]
		}
		left := (w - len(title)) / 2
		return "+" + strings.Repeat("-", left) + title + strings.Repeat("-", w-left-len(title)) + "+\n"
	}
	title := fmt.Sprintf("[%s %d]", k.keygenName(), k.Bits)
	if len(title) > w {
		title = "[" + k.keygenName() + "]"
	}
	var b strings.Builder
	b.WriteString(border(title))
	for y := range h {
		b.WriteByte('|')
		for x := range w {
			b.WriteByte(aug[min(field[x][y], top)])
		}
		b.WriteString("|\n")
	}
	b.WriteString(border("[SHA256]"))
	return b.String()
}

// Report is what `ssh-keygen -t T -N "" -f file` prints (LANG=C) on
// making k.
func (k *Key) Report(file string) string {
	return "Generating public/private " + k.Type + " key pair.\n" +
		"Your identification has been saved in " + file + "\n" +
		"Your public key has been saved in " + file + ".pub\n" +
		"The key fingerprint is:\n" +
		k.Fingerprint() + " " + k.Comment + "\n" +
		"The key's randomart image is:\n" +
		k.Randomart()
}
