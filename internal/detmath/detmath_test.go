package detmath

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestAgainstMath: Exp, Log and Pow agree with the math package's to
// within a few units in the last place over their ranges, and the special
// cases are the math package's.
func TestAgainstMath(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	ulps := func(a, b float64) float64 {
		if a == b {
			return 0
		}
		return math.Abs(a-b) / math.Abs(math.Nextafter(b, math.Inf(1))-b)
	}
	for range 100_000 {
		x := (r.Float64() - 0.5) * 1400
		if d := ulps(Exp(x), math.Exp(x)); d > 2 {
			t.Fatalf("Exp(%v) = %v, math.Exp %v: %v ulps", x, Exp(x), math.Exp(x), d)
		}
		y := math.Ldexp(r.Float64()+0.5, r.IntN(2000)-1000)
		if d := ulps(Log(y), math.Log(y)); d > 2 {
			t.Fatalf("Log(%v) = %v, math.Log %v: %v ulps", y, Log(y), math.Log(y), d)
		}
		b, e := r.Float64()*100+1e-3, r.Float64()*4-2
		if d := ulps(Pow(b, e), math.Pow(b, e)); d > 64 {
			t.Fatalf("Pow(%v, %v) = %v, math.Pow %v: %v ulps", b, e, Pow(b, e), math.Pow(b, e), d)
		}
	}
	for _, tc := range []struct {
		what       string
		have, want float64
	}{
		{"Exp(0)", Exp(0), 1},
		{"Exp(+Inf)", Exp(math.Inf(1)), math.Inf(1)},
		{"Exp(-Inf)", Exp(math.Inf(-1)), 0},
		{"Exp(1000)", Exp(1000), math.Inf(1)},
		{"Log(1)", Log(1), 0},
		{"Log(0)", Log(0), math.Inf(-1)},
		{"Log(+Inf)", Log(math.Inf(1)), math.Inf(1)},
		{"Pow(0, 2)", Pow(0, 2), 0},
		{"Pow(5, 0)", Pow(5, 0), 1},
		{"Pow(1, 7)", Pow(1, 7), 1},
		{"ExpVariate(0)", ExpVariate(0), 0},
	} {
		if tc.have != tc.want {
			t.Errorf("%s = %v, want %v", tc.what, tc.have, tc.want)
		}
	}
	for _, v := range []float64{Log(-1), Exp(math.NaN()), Pow(-2, 0.5), Pow(0, -1)} {
		if !math.IsNaN(v) {
			t.Errorf("want NaN, have %v", v)
		}
	}
}

// TestVariates: the exponential and normal variates have their
// distributions' mean and variance (1 and 1; 0 and 1) within sampling
// error.
func TestVariates(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	const n = 200_000
	var se, se2, sn, sn2 float64
	for range n {
		e := ExpVariate(r.Float64())
		g := NormVariate(r.Float64)
		se, se2 = se+e, se2+e*e
		sn, sn2 = sn+g, sn2+g*g
	}
	for _, tc := range []struct {
		what       string
		have, want float64
	}{
		{"exponential mean", se / n, 1},
		{"exponential variance", se2/n - (se/n)*(se/n), 1},
		{"normal mean", sn / n, 0},
		{"normal variance", sn2/n - (sn/n)*(sn/n), 1},
	} {
		if math.Abs(tc.have-tc.want) > 0.02 {
			t.Errorf("%s %.4f, want %v", tc.what, tc.have, tc.want)
		}
	}
}

// TestGoldenBits pins a few results bit for bit: they must be the same on
// every machine.
func TestGoldenBits(t *testing.T) {
	for _, tc := range []struct {
		what string
		have float64
		want uint64
	}{
		{"Exp(1)", Exp(1), math.Float64bits(math.E)},
		{"Log(10)", Log(10), math.Float64bits(math.Ln10)},
	} {
		if b := math.Float64bits(tc.have); b != tc.want {
			t.Errorf("%s = %#x, want %#x", tc.what, b, tc.want)
		}
	}
}
