package accounts

import (
	"errors"
	"math/big"
)

// nistCurve is one of the NIST prime curves of OpenSSH's ECDSA keys (SP
// 800-186, as crypto/elliptic's params): y² = x³ - 3x + b over GF(p).
type nistCurve struct {
	p, b *big.Int
	bits int
}

func bigHex(s string) *big.Int {
	n, _ := new(big.Int).SetString(s, 16)
	return n
}

// nistCurveNamed is the NIST curve of an OpenSSH curve name, made on each
// call (a key is checked now and then; a package-level table would cost
// every process at start-up, issue 18). The curves are checked with
// math/big, not crypto/ecdh: ecdh's P-256/384/521 code and tables are some
// 160 KB of binary, and the keys checked are the host's own and
// authorized_keys'.
func nistCurveNamed(name string) (nistCurve, bool) {
	switch name {
	case "nistp256":
		return nistCurve{
			p:    bigHex("ffffffff00000001000000000000000000000000ffffffffffffffffffffffff"),
			b:    bigHex("5ac635d8aa3a93e7b3ebbd55769886bc651d06b0cc53b0f63bce3c3e27d2604b"),
			bits: 256,
		}, true
	case "nistp384":
		return nistCurve{
			p: bigHex("fffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffe" +
				"ffffffff0000000000000000ffffffff"),
			b: bigHex("b3312fa7e23ee7e4988e056be3f82d19181d9c6efe8141120314088f5013875a" +
				"c656398d8a2ed19d2a85c8edd3ec2aef"),
			bits: 384,
		}, true
	case "nistp521":
		return nistCurve{
			p: new(big.Int).Sub(new(big.Int).Lsh(big.NewInt(1), 521), big.NewInt(1)),
			b: bigHex("0051953eb9618e1c9a1f929a21a0b68540eea2da725b99b315f3b8b489918ef1" +
				"09e156193951ec7e937b1652c0bd3bb1bf073573df883d2c34f1ef451fd46b503f00"),
			bits: 521,
		}, true
	}
	return nistCurve{}, false
}

// checkPoint checks an ECDSA public key's point as OpenSSH's
// sshkey_ec_validate_public does first: uncompressed (0x04, X, Y), both
// coordinates below p, and on the curve. It returns the curve's size.
func checkPoint(curve string, pt []byte) (int, error) {
	c, ok := nistCurveNamed(curve)
	if !ok {
		return 0, errors.New("unknown curve")
	}
	n := (c.bits + 7) / 8
	if len(pt) != 1+2*n || pt[0] != 4 {
		return 0, errors.New("not an uncompressed point of the curve")
	}
	x := new(big.Int).SetBytes(pt[1 : 1+n])
	y := new(big.Int).SetBytes(pt[1+n:])
	if x.Cmp(c.p) >= 0 || y.Cmp(c.p) >= 0 {
		return 0, errors.New("coordinate out of range")
	}
	lhs := new(big.Int).Mul(y, y)
	lhs.Mod(lhs, c.p)
	rhs := new(big.Int).Mul(x, x)
	rhs.Mul(rhs, x)
	rhs.Sub(rhs, new(big.Int).Mul(x, big.NewInt(3)))
	rhs.Add(rhs, c.b)
	rhs.Mod(rhs, c.p)
	if lhs.Cmp(rhs) != 0 {
		return 0, errors.New("point not on the curve")
	}
	return c.bits, nil
}
