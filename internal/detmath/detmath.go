// The exp and log below follow the Go math package's portable exp.go and
// log.go: Copyright 2009 The Go Authors, BSD-style licence; from FreeBSD's
// /usr/src/lib/msun/src/e_exp.c and e_log.c, Copyright (C) 2004 by Sun
// Microsystems, Inc. (permission to use, copy, modify, and distribute this
// software is freely granted, provided that this notice is preserved).

package detmath

import "math"

// mul is a·b rounded to float64: a product so rounded cannot be fused
// with the addition it feeds (the Go spec, Arithmetic operators).
func mul(a, b float64) float64 { return float64(a * b) }

// Exp returns e**x.
func Exp(x float64) float64 {
	const (
		ln2Hi = 6.93147180369123816490e-01
		ln2Lo = 1.90821492927058770002e-10
		log2e = 1.44269504088896338700e+00

		overflow  = 7.09782712893383973096e+02
		underflow = -7.45133219101941108420e+02
		nearZero  = 1.0 / (1 << 28) // 2**-28

		p1 = 1.66666666666666657415e-01  /* 0x3FC55555; 0x55555555 */
		p2 = -2.77777777770155933842e-03 /* 0xBF66C16C; 0x16BEBD93 */
		p3 = 6.61375632143793436117e-05  /* 0x3F11566A; 0xAF25DE2C */
		p4 = -1.65339022054652515390e-06 /* 0xBEBBBD41; 0xC5D26BF1 */
		p5 = 4.13813679705723846039e-08  /* 0x3E663769; 0x72BEA4D0 */
	)
	switch {
	case math.IsNaN(x):
		return x
	case x > overflow:
		return math.Inf(1)
	case x < underflow:
		return 0
	case -nearZero < x && x < nearZero:
		return 1 + x
	}
	// Reduce: r = hi − lo = x − k·ln 2, |r| ≤ ln(2)/2.
	var k int
	switch {
	case x < 0:
		k = int(mul(log2e, x) - 0.5)
	case x > 0:
		k = int(mul(log2e, x) + 0.5)
	}
	hi := x - mul(float64(k), ln2Hi)
	lo := mul(float64(k), ln2Lo)
	r := hi - lo
	t := mul(r, r)
	c := r - mul(t, p1+mul(t, p2+mul(t, p3+mul(t, p4+mul(t, p5)))))
	y := 1 - ((lo - mul(r, c)/(2-c)) - hi)
	return math.Ldexp(y, k)
}

// Log returns the natural logarithm of x.
func Log(x float64) float64 {
	const (
		ln2Hi = 6.93147180369123816490e-01 /* 3fe62e42 fee00000 */
		ln2Lo = 1.90821492927058770002e-10 /* 3dea39ef 35793c76 */
		l1    = 6.666666666666735130e-01   /* 3FE55555 55555593 */
		l2    = 3.999999999940941908e-01   /* 3FD99999 9997FA04 */
		l3    = 2.857142874366239149e-01   /* 3FD24924 94229359 */
		l4    = 2.222219843214978396e-01   /* 3FCC71C5 1D8E78AF */
		l5    = 1.818357216161805012e-01   /* 3FC74664 96CB03DE */
		l6    = 1.531383769920937332e-01   /* 3FC39A09 D078C69F */
		l7    = 1.479819860511658591e-01   /* 3FC2F112 DF3E5244 */
	)
	switch {
	case math.IsNaN(x) || math.IsInf(x, 1):
		return x
	case x < 0:
		return math.NaN()
	case x == 0:
		return math.Inf(-1)
	}
	f1, ki := math.Frexp(x)
	if f1 < math.Sqrt2/2 {
		f1 *= 2
		ki--
	}
	f := f1 - 1
	k := float64(ki)
	s := f / (2 + f)
	s2 := mul(s, s)
	s4 := mul(s2, s2)
	t1 := mul(s2, l1+mul(s4, l3+mul(s4, l5+mul(s4, l7))))
	t2 := mul(s4, l2+mul(s4, l4+mul(s4, l6)))
	r := t1 + t2
	hfsq := mul(mul(0.5, f), f)
	return mul(k, ln2Hi) - ((hfsq - (mul(s, hfsq+r) + mul(k, ln2Lo))) - f)
}

// Pow returns x**y for x > 0 as exp(y·log x); x ≤ 0 gives NaN but for
// 0**y with y > 0, which is 0.
func Pow(x, y float64) float64 {
	switch {
	case x == 0 && y > 0:
		return 0
	case x <= 0 || math.IsNaN(x):
		return math.NaN()
	case y == 0 || x == 1:
		return 1
	}
	return Exp(mul(y, Log(x)))
}

// ExpVariate turns u, uniform in [0, 1), into an exponential variate of
// mean 1 (inversion: −log(1 − u)).
func ExpVariate(u float64) float64 { return -Log(1 - u) }

// NormVariate draws a standard normal variate by Marsaglia's polar
// method from uniform variates in [0, 1) that next gives (on average
// 1.27 pairs per variate; the pair's second variate is not kept).
func NormVariate(next func() float64) float64 {
	for {
		u := 2*next() - 1
		v := 2*next() - 1
		s := mul(u, u) + mul(v, v)
		if s > 0 && s < 1 {
			return mul(u, math.Sqrt(-2*Log(s)/s))
		}
	}
}
