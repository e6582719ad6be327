package scalar

import (
	"fmt"
	"math/bits"
)

// Tnum is a tristate number as in the Linux verifier (kernel/bpf/tnum.c):
// bits set in Mask are unknown; Value holds the known bits (Value&Mask == 0).
type Tnum struct{ Value, Mask uint64 }

var tnumUnknown = Tnum{0, ^uint64(0)}

func tnumConst(v uint64) Tnum { return Tnum{v, 0} }

// String prints the tnum as the kernel does: "(value; mask)".
func (t Tnum) String() string { return fmt.Sprintf("(%#x; %#x)", t.Value, t.Mask) }

// contains reports whether x matches every known bit of t.
func (t Tnum) contains(x uint64) bool { return (x^t.Value)&^t.Mask == 0 }

// maybe is the set of bits that may be 1.
func (t Tnum) maybe() uint64 { return t.Value | t.Mask }

// tnumRange is the smallest tnum holding every value of [lo, hi]: the
// common prefix of lo and hi is known, everything below it unknown.
func tnumRange(lo, hi uint64) Tnum {
	chi := lo ^ hi
	if chi == 0 {
		return Tnum{lo, 0}
	}
	n := 64 - bits.LeadingZeros64(chi)
	if n == 64 {
		return tnumUnknown
	}
	delta := uint64(1)<<n - 1
	return Tnum{lo &^ delta, delta}
}

func tnumLsh(a Tnum, k uint) Tnum { return Tnum{a.Value << k, a.Mask << k} }
func tnumRsh(a Tnum, k uint) Tnum { return Tnum{a.Value >> k, a.Mask >> k} }

// tnumArsh shifts the mask arithmetically too: an unknown sign bit makes
// every bit it is copied into unknown, and the value's copies are then 0.
func tnumArsh(a Tnum, k uint) Tnum {
	return Tnum{uint64(int64(a.Value) >> k), uint64(int64(a.Mask) >> k)}
}

func tnumAdd(a, b Tnum) Tnum {
	sm := a.Mask + b.Mask
	sv := a.Value + b.Value
	sigma := sm + sv
	chi := sigma ^ sv
	mu := chi | a.Mask | b.Mask
	return Tnum{sv &^ mu, mu}
}

func tnumSub(a, b Tnum) Tnum {
	dv := a.Value - b.Value
	alpha := dv + a.Mask
	beta := dv - b.Mask
	chi := alpha ^ beta
	mu := chi | a.Mask | b.Mask
	return Tnum{dv &^ mu, mu}
}

func tnumAnd(a, b Tnum) Tnum {
	v := a.Value & b.Value
	return Tnum{v, a.maybe() & b.maybe() &^ v}
}

func tnumOr(a, b Tnum) Tnum {
	v := a.Value | b.Value
	return Tnum{v, (a.Mask | b.Mask) &^ v}
}

func tnumXor(a, b Tnum) Tnum {
	mu := a.Mask | b.Mask
	return Tnum{(a.Value ^ b.Value) &^ mu, mu}
}

// tnumMul is the kernel's long multiplication (the version proven sound in
// "Sound, Precise, and Fast Abstract Interpretation with Tristate Numbers").
func tnumMul(a, b Tnum) Tnum {
	accV := a.Value * b.Value
	accM := Tnum{}
	for a.Value != 0 || a.Mask != 0 {
		if a.Value&1 != 0 {
			accM = tnumAdd(accM, Tnum{0, b.Mask})
		} else if a.Mask&1 != 0 {
			accM = tnumAdd(accM, Tnum{0, b.Value | b.Mask})
		}
		a = tnumRsh(a, 1)
		b = tnumLsh(b, 1)
	}
	return tnumAdd(Tnum{accV, 0}, accM)
}

// tnumIntersect is the meet; ok is false when a known bit disagrees.
func tnumIntersect(a, b Tnum) (Tnum, bool) {
	if (a.Value^b.Value)&^a.Mask&^b.Mask != 0 {
		return Tnum{}, false
	}
	mu := a.Mask & b.Mask
	return Tnum{(a.Value | b.Value) &^ mu, mu}, true
}

// tnumUnion is the join: a bit stays known only where both agree.
func tnumUnion(a, b Tnum) Tnum {
	mu := a.Mask | b.Mask | (a.Value ^ b.Value)
	return Tnum{a.Value &^ mu, mu}
}

// tnumTrunc keeps the low n bits (n < 64) and makes the rest known zero.
func tnumTrunc(a Tnum, n uint) Tnum {
	m := uint64(1)<<n - 1
	return Tnum{a.Value & m, a.Mask & m}
}

// tnumSext sign-extends the low n bits (n < 64).
func tnumSext(a Tnum, n uint) Tnum {
	s := 64 - n
	return tnumArsh(tnumLsh(a, s), s)
}

// tnumLow32 constrains only the low 32 bits: those of a, the rest unknown.
func tnumLow32(a Tnum) Tnum {
	return Tnum{a.Value & 0xffffffff, a.Mask | 0xffffffff00000000}
}

func tnumSwap16(a Tnum) Tnum {
	return Tnum{uint64(bits.ReverseBytes16(uint16(a.Value))), uint64(bits.ReverseBytes16(uint16(a.Mask)))}
}

func tnumSwap32(a Tnum) Tnum {
	return Tnum{uint64(bits.ReverseBytes32(uint32(a.Value))), uint64(bits.ReverseBytes32(uint32(a.Mask)))}
}

func tnumSwap64(a Tnum) Tnum {
	return Tnum{bits.ReverseBytes64(a.Value), bits.ReverseBytes64(a.Mask)}
}

// nextGE is the smallest y >= x that matches t; ok is false if none does.
//
// y must agree with x above the first bit k where it differs (x_k=0, y_k=1),
// so k is at least the highest bit h where x contradicts a known bit. If x
// has 0 there (the known bit is 1), k=h; otherwise k is the lowest unknown
// bit above h where x has 0. Below k, y takes the known bits and zeros.
func nextGE(t Tnum, x uint64) (uint64, bool) {
	d := (x ^ t.Value) &^ t.Mask
	if d == 0 {
		return x, true
	}
	hb := uint64(1) << (63 - bits.LeadingZeros64(d))
	kb := hb
	if x&hb != 0 {
		cand := t.Mask &^ x &^ (hb<<1 - 1)
		if hb == 1<<63 || cand == 0 {
			return 0, false
		}
		kb = cand & -cand
	}
	return x&^(kb<<1-1) | kb | t.Value&(kb-1), true
}

// prevLE is the largest y <= x that matches t; ok is false if none does.
// It is nextGE in the complemented order.
func prevLE(t Tnum, x uint64) (uint64, bool) {
	y, ok := nextGE(Tnum{^t.Value &^ t.Mask, t.Mask}, ^x)
	return ^y, ok
}

// flipSign maps signed order onto unsigned order (x ^ 1<<63 is monotone).
func flipSign(t Tnum) Tnum {
	if t.Mask&signBit == 0 {
		t.Value ^= signBit
	}
	return t
}

// snextGE is the smallest y >= x (signed) that matches t.
func snextGE(t Tnum, x int64) (int64, bool) {
	y, ok := nextGE(flipSign(t), uint64(x)^signBit)
	return int64(y ^ signBit), ok
}

// sprevLE is the largest y <= x (signed) that matches t.
func sprevLE(t Tnum, x int64) (int64, bool) {
	y, ok := prevLE(flipSign(t), uint64(x)^signBit)
	return int64(y ^ signBit), ok
}
