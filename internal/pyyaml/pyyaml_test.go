package pyyaml

import (
	"math"
	"strconv"
	"testing"

	"github.com/earlyinit/earlyinit/internal/oracle"
)

// FloatRepr is Python's repr(float), checked against Python itself on the
// edges of its two notations and of rounding: each value goes to Python
// exactly, as a hex float.
func TestFloatReprMatchesPython(t *testing.T) {
	vals := []float64{0, math.Copysign(0, -1), 1, -1, 0.1, 0.5, 1.5, 2.675, 100, 1e15, 1e16, 1e16 - 2, 9999999999999998,
		123456789012345678, 1e22, 1e100, 1.7976931348623157e308, 0.0001, 0.00011, 0.00009999999999999999, 1e-5, 1.5e-5,
		5e-324, 2.2250738585072014e-308, 1.0 / 3, 2.0 / 3, -12.5, 1e-4 * (1 - 1e-16), math.Nextafter(1e16, 0),
		math.Nextafter(1e-4, 0), math.Inf(1), math.Inf(-1), math.NaN()}
	in := make([]string, len(vals))
	for i, v := range vals {
		in[i] = strconv.FormatFloat(v, 'x', -1, 64)
		if math.IsInf(v, 0) || math.IsNaN(v) {
			in[i] = strconv.FormatFloat(v, 'g', -1, 64)
		}
	}
	var want []string
	oracle.Run(t, `print(json.dumps([repr(float.fromhex(x) if x[-1].isdigit() or 'p' in x else float(x)) for x in json.load(sys.stdin)]))`, in, &want)
	for i, v := range vals {
		if got := FloatRepr(v); got != want[i] {
			t.Errorf("FloatRepr(%s) = %q, Python's repr %q", in[i], got, want[i])
		}
	}
}
