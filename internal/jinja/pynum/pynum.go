// Package pynum is Python's arithmetic operators on its numbers as
// earlyinit's Jinja has them: bool and int as 64-bit integers (past their
// range, ErrOverflow rather than Python's big integers), and float. It
// knows nothing of templates: its errors carry no line.
package pynum

import (
	"errors"
	"fmt"
	"math"
	"strconv"
)

// ErrOverflow is an integer result past 64 bits, which Python would have.
var ErrOverflow = errors.New("integer overflow (earlyinit's Jinja has 64-bit integers)")

// Num is a Python number: an int (or bool) when Int is set, I its value,
// else a float; F is its value as a float either way.
type Num struct {
	F   float64
	I   int64
	Int bool
}

// Op is a op b with one of + - * / // % **.
func Op(op string, a, b Num) (any, error) {
	ints := a.Int && b.Int
	switch op {
	case "+":
		if ints {
			return add(a.I, b.I)
		}
		return a.F + b.F, nil
	case "-":
		if ints {
			return sub(a.I, b.I)
		}
		return a.F - b.F, nil
	case "*":
		if ints {
			return mul(a.I, b.I)
		}
		return a.F * b.F, nil
	case "/":
		if b.F == 0 {
			return nil, errors.New("division by zero")
		}
		if ints {
			return float64(a.I) / float64(b.I), nil
		}
		return a.F / b.F, nil
	case "//", "%":
		if ints {
			return intDivmod(op, a.I, b.I)
		}
		return floatDivmod(op, a.F, b.F)
	case "**":
		if ints && b.I >= 0 {
			return intPow(a.I, b.I)
		}
		return floatPow(a.F, b.F)
	}
	return nil, fmt.Errorf("unknown operator %s", op)
}

// add is ia + ib, checked.
func add(ia, ib int64) (any, error) {
	s := ia + ib
	if (s > ia) != (ib > 0) {
		return nil, ErrOverflow
	}
	return s, nil
}

// sub is ia - ib, checked.
func sub(ia, ib int64) (any, error) {
	s := ia - ib
	if (s < ia) != (ib > 0) {
		return nil, ErrOverflow
	}
	return s, nil
}

// mul is ia * ib, checked.
func mul(ia, ib int64) (any, error) {
	if ia == 0 || ib == 0 {
		return int64(0), nil
	}
	p := ia * ib
	if p/ib != ia || (ia == -1 && ib == math.MinInt64) || (ib == -1 && ia == math.MinInt64) {
		return nil, ErrOverflow
	}
	return p, nil
}

// intDivmod is ia // ib or ia % ib (op), rounded toward minus infinity
// as Python's.
func intDivmod(op string, ia, ib int64) (any, error) {
	if ib == 0 {
		return nil, errors.New("integer division or modulo by zero")
	}
	if ia == math.MinInt64 && ib == -1 {
		return nil, ErrOverflow
	}
	q, m := ia/ib, ia%ib
	if m != 0 && (m < 0) != (ib < 0) {
		q--
		m += ib
	}
	if op == "//" {
		return q, nil
	}
	return m, nil
}

// floatDivmod is fa // fb or fa % fb (op) of floats.
func floatDivmod(op string, fa, fb float64) (any, error) {
	if fb == 0 {
		return nil, errors.New("float division by zero")
	}
	div, mod := pyFloatDivmod(fa, fb)
	if op == "//" {
		return div, nil
	}
	return mod, nil
}

// intPow is base ** e for e >= 0, by squaring, checked.
func intPow(base, e int64) (any, error) {
	result := int64(1)
	for e > 0 {
		if e&1 == 1 {
			p := result * base
			if base != 0 && (p/base != result) {
				return nil, ErrOverflow
			}
			result = p
		}
		e >>= 1
		if e > 0 {
			sq := base * base
			if base != 0 && sq/base != base {
				return nil, ErrOverflow
			}
			base = sq
		}
	}
	return result, nil
}

// floatPow is fa ** fb, refused where Python's is an error or complex.
func floatPow(fa, fb float64) (any, error) {
	if fa == 0 && fb < 0 {
		return nil, errors.New("0.0 cannot be raised to a negative power")
	}
	if fa < 0 && fb != math.Trunc(fb) {
		return nil, errors.New("a negative number to a fractional power is complex, which earlyinit's Jinja does not have")
	}
	return math.Pow(fa, fb), nil
}

// pyFloatDivmod is CPython's float_divmod.
func pyFloatDivmod(vx, wx float64) (float64, float64) {
	mod := math.Mod(vx, wx)
	div := (vx - mod) / wx
	if mod != 0 {
		if (wx < 0) != (mod < 0) {
			mod += wx
			div -= 1
		}
	} else {
		mod = math.Copysign(0, wx)
	}
	var floordiv float64
	if div != 0 {
		floordiv = math.Floor(div)
		if div-floordiv > 0.5 {
			floordiv++
		}
	} else {
		floordiv = math.Copysign(0, vx/wx)
	}
	return floordiv, mod
}

// Round is Jinja's do_round of n to prec digits by method: common (half
// to even, as Python's round), ceil or floor. A float's prec is at least
// 0 with common (the caller refuses less).
func Round(n Num, prec int64, method string) (any, error) {
	if method == "common" {
		return roundCommon(n, prec), nil
	}
	p := math.Pow10(int(prec))
	x := n.F * p
	if method == "ceil" {
		x = math.Ceil(x)
	} else {
		x = math.Floor(x)
	}
	if math.IsInf(x, 0) || math.IsNaN(x) {
		return nil, errors.New("cannot convert float infinity or NaN to integer")
	}
	return x / p, nil
}

// roundCommon is Python's round(n, prec).
func roundCommon(n Num, prec int64) any {
	if n.Int {
		if prec >= 0 {
			return n.I
		}
		p := int64(math.Pow10(int(-prec)))
		q, r := n.I/p, n.I%p
		if r < 0 {
			q, r = q-1, r+p
		}
		if 2*r > p || 2*r == p && q%2 != 0 {
			q++
		}
		return q * p
	}
	if math.IsInf(n.F, 0) || math.IsNaN(n.F) {
		return n.F
	}
	out, _ := strconv.ParseFloat(strconv.FormatFloat(n.F, 'f', int(prec), 64), 64)
	return out
}
