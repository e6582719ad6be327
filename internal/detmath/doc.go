// Package detmath is exp, log and pow that give the same bits on every
// machine, for the figures package sim must reproduce byte for byte: the
// math package's Exp (and Pow through it) takes an assembly path with
// fused multiply-adds where the CPU has them (amd64 with FMA), and Go may
// fuse a multiply and an add in plain code on arm64, ppc64 and s390x. Here
// every product is rounded (mul) before it is added to anything, and the
// only other operations are IEEE additions, divisions and exact scalings
// (math.Frexp, math.Ldexp), so the result is a function of the input
// alone. The algorithms are the math package's portable ones (FreeBSD's
// e_exp.c and e_log.c), accurate to within a unit or two in the last
// place; Pow is exp(y·log x), for x > 0, which is accurate enough for
// drawing keys and latencies and not a replacement for math.Pow.
//
// It also draws exponential and normal variates from uniform ones by
// inversion and by Marsaglia's polar method, because math/rand's
// ExpFloat64 and NormFloat64 call math.Exp and math.Log in their tails.
package detmath
