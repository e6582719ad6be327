package scalar

import (
	"fmt"
	"math"
	"strings"
)

const (
	signBit = uint64(1) << 63
	maxU64  = ^uint64(0)
	maxU32  = uint64(math.MaxUint32)
	// minInt32U is MinInt32 sign-extended, as a threshold.
	minInt32U = uint64(0xffffffff80000000)
)

// Value is an abstract 64-bit scalar: the set of concrete values v with
// Umin<=v<=Umax (unsigned), Smin<=int64(v)<=Smax, and v matching T. All
// three are kept consistent (each refines the others, like the kernel's
// reg_bounds_sync). An empty set is never represented: operations that could
// produce one report infeasibility instead.
//
// A Value also carries, unexported, the unsigned and signed ranges of its
// low 32 bits (the kernel's u32 and s32 bounds), which keep ALU32 and JMP32
// precise; String shows them when they add something.
//
// Every Value this package returns is reduced: its four bounds are members
// of the set and T holds no bit that the bounds would pin down. A Value
// built by hand is read as the intersection of its three constraints (a
// Value bit under Mask counts as unknown; nothing is known of the low 32
// bits beyond them); if that is empty, the functions treat it as Unknown.
// Note that the zero Tnum is the constant 0: a hand-built range needs
// T: Tnum{Mask: ^uint64(0)} (or use Range and SRange).
type Value struct {
	Umin, Umax uint64
	Smin, Smax int64
	T          Tnum
	lo         low32
}

// Const is the single value v.
func Const(v uint64) Value {
	return Value{v, v, int64(v), int64(v), tnumConst(v), mkLow32(uint32(v), uint32(v), int32(v), int32(v))}
}

// Unknown is every 64-bit value.
func Unknown() Value {
	return Value{0, maxU64, math.MinInt64, math.MaxInt64, tnumUnknown, low32{}}
}

// Range is the values umin..umax in unsigned order. If umin > umax the range
// wraps around: umin..2^64-1 and 0..umax (which is a signed range when umin
// is negative as int64 and umax is not).
func Range(umin, umax uint64) Value {
	if umin <= umax {
		return mustNorm(Value{umin, umax, math.MinInt64, math.MaxInt64, tnumRange(umin, umax), low32{}})
	}
	v := Unknown()
	v.T = tnumUnion(tnumRange(umin, maxU64), tnumRange(0, umax))
	if int64(umin) < 0 && int64(umax) >= 0 {
		v.Smin, v.Smax = int64(umin), int64(umax)
	}
	return mustNorm(v)
}

// SRange is the values smin..smax in signed order. If smin > smax the range
// wraps around: smin..MaxInt64 and MinInt64..smax (which is an unsigned range
// when smin >= 0 and smax < 0).
func SRange(smin, smax int64) Value {
	v := Unknown()
	if smin <= smax {
		v.Smin, v.Smax = smin, smax
		if smin >= 0 || smax < 0 {
			v.T = tnumRange(uint64(smin), uint64(smax))
		}
		return mustNorm(v)
	}
	v.T = tnumUnion(tnumRange(uint64(smin), math.MaxInt64), tnumRange(signBit, uint64(smax)))
	if smin >= 0 && smax < 0 {
		v.Umin, v.Umax = uint64(smin), uint64(smax)
	}
	return mustNorm(v)
}

// Const reports whether v holds exactly one value, and which.
func (v Value) Const() (uint64, bool) {
	if v.T.Mask == 0 {
		return v.T.Value, true
	}
	if v.Umin == v.Umax {
		return v.Umin, true
	}
	return 0, false
}

// Contains reports whether x is in the set v describes.
func (v Value) Contains(x uint64) bool {
	return v.Umin <= x && x <= v.Umax && v.Smin <= int64(x) && int64(x) <= v.Smax && v.T.contains(x) && v.lo.contains(uint32(x))
}

// Equal reports whether v and w are the same abstract value. Values the
// package returns are reduced, hence canonical, so this is field equality.
func (v Value) Equal(w Value) bool { return v == w }

// Join is the least upper bound of v and w in this domain: a sound
// over-approximation of the union of the two sets.
func (v Value) Join(w Value) Value {
	v, w = v.sane(), w.sane()
	return mustNorm(join(v, w))
}

func join(v, w Value) Value {
	return Value{
		min(v.Umin, w.Umin), max(v.Umax, w.Umax),
		min(v.Smin, w.Smin), max(v.Smax, w.Smax),
		tnumUnion(v.T, w.T),
		joinLow32(v.lo, w.lo),
	}
}

// Widen extrapolates v (the value at a loop head so far) by next (the value
// arriving along a back edge). A bound that grows jumps to the nearest
// threshold beyond it (thresholds are read as uint64 for the unsigned bounds
// and as int64 for the signed ones; their order does not matter), else to
// the nearest limit of a 32-bit type beyond it (0, MinInt32, MaxInt32,
// MaxUint32), else to the 64-bit limit; the ranges of the low 32 bits widen
// the same way within 32 bits. T is joined, and when a bound jumped, T also
// takes in the new range except for the low bits that both v and next know
// (so a stride stays aligned and a 32-bit value stays 32-bit, but T does not
// trail behind the bounds one bit per iteration).
//
// Termination: every bound only moves outward, to one of finitely many
// places, and T only loses known bits, so every chain v1 = v0.Widen(x0),
// v2 = v1.Widen(x1), ... becomes stationary.
func (v Value) Widen(next Value, th Thresholds) Value {
	v, next = v.sane(), next.sane()
	w := v
	if next.Umin < v.Umin {
		w.Umin = th.widenUmin(next.Umin)
	}
	if next.Umax > v.Umax {
		w.Umax = th.widenUmax(next.Umax)
	}
	if next.Smin < v.Smin {
		w.Smin = th.widenSmin(next.Smin)
	}
	if next.Smax > v.Smax {
		w.Smax = th.widenSmax(next.Smax)
	}
	w.lo = widenLow32(v.lo, next.lo, th)
	return widenT(v, next, w)
}

// widenT completes w, v widened by next with its bounds already moved:
// T is joined, and takes in the new range when a bound moved.
func widenT(v, next, w Value) Value {
	w.T = tnumUnion(v.T, next.T)
	if w.Umin != v.Umin || w.Umax != v.Umax || w.Smin != v.Smin || w.Smax != v.Smax || w.lo != v.lo {
		// The new range, seen as a tnum, with the low bits that are known
		// in w.T (below its lowest unknown bit) kept.
		r := tnumRange(w.Umin, w.Umax)
		if ps, n := pieces(w.Umin, w.Umax, w.Smin, w.Smax); n == 2 {
			r = tnumUnion(tnumRange(ps[0].lo, ps[0].hi), tnumRange(ps[1].lo, ps[1].hi))
		} else if n == 1 {
			r = tnumRange(ps[0].lo, ps[0].hi)
		}
		low := w.T.Mask&-w.T.Mask - 1
		if w.T.Mask == 0 {
			low = maxU64
		}
		r = Tnum{r.Value&^low | w.T.Value&low, r.Mask &^ low}
		w.T = tnumUnion(w.T, r)
	}
	return mustNorm(w)
}

// widenLow32 widens the 32-bit ranges as Widen does the 64-bit ones, with
// the thresholds that fit in 32 bits (unsigned, or as int64 in int32).
func widenLow32(v, next low32, th Thresholds) low32 {
	vu0, vu1, vs0, vs1 := v.bounds()
	nu0, nu1, ns0, ns1 := next.bounds()
	u0, u1, s0, s1 := vu0, vu1, vs0, vs1
	if nu0 < vu0 {
		u0 = uint32(th.widenUmin(uint64(nu0))) // <= nu0: fits
	}
	if nu1 > vu1 {
		u1 = math.MaxUint32
		if t, ok := th.succU(uint64(nu1)); ok && t < math.MaxUint32 {
			u1 = uint32(t)
		}
	}
	if ns0 < vs0 {
		s0 = math.MinInt32
		if x, ok := th.predS(int64(ns0)); ok && x > math.MinInt32 {
			s0 = int32(x)
		}
		if ns0 >= 0 && s0 < 0 {
			s0 = 0
		}
	}
	if ns1 > vs1 {
		s1 = math.MaxInt32
		if x, ok := th.succS(int64(ns1)); ok && x < math.MaxInt32 {
			s1 = int32(x)
		}
	}
	return mkLow32(u0, u1, s0, s1)
}

// sane returns the reduced form of a Value that may have been built by hand,
// or Unknown if it describes no value.
func (v Value) sane() Value {
	if v.Umin == v.Umax && v == Const(v.Umin) { // the common case, already reduced
		return v
	}
	r, ok := v.norm()
	if !ok {
		return Unknown()
	}
	return r
}

// emptyHook, when set (by tests only), is told whenever a transfer function
// produced a candidate that reduced to the empty set: a sound transfer
// function never does that, so it marks a bug that the Unknown fallback
// would otherwise hide.
var emptyHook func(Value)

// mustNorm reduces a candidate result that cannot be empty if the code is
// right; should it be, Unknown is returned (sound, and never a panic).
func mustNorm(v Value) Value {
	r, ok := v.norm()
	if !ok {
		if emptyHook != nil {
			emptyHook(v)
		}
		return Unknown()
	}
	return r
}

// span is an unsigned interval [lo, hi].
type span struct{ lo, hi uint64 }

// pieces intersects the unsigned range [umin, umax] with the signed range
// [smin, smax] seen as unsigned (one interval, or two when it crosses zero).
// Each piece lies inside one half of the unsigned range, so it is an
// interval in signed order as well.
func pieces(umin, umax uint64, smin, smax int64) (ps [2]span, n int) {
	add := func(lo, hi uint64) {
		lo, hi = max(lo, umin), min(hi, umax)
		if lo <= hi {
			ps[n] = span{lo, hi}
			n++
		}
	}
	if smin < 0 && smax >= 0 {
		add(0, uint64(smax))
		add(uint64(smin), maxU64)
	} else {
		add(uint64(smin), uint64(smax))
	}
	return ps, n
}

// norm reduces v, like the kernel's reg_bounds_sync but exact for each pair
// of constraints: the low 32 bits are reduced on their own (lowSext), the
// bounds are moved to the nearest members of T and the low-32 set (in both
// orders), the unsigned and signed ranges are intersected, and T learns the
// bits the ranges fix. This repeats until nothing changes, so each bound
// ends up a member of the set. ok is false if the set is empty.
func (v Value) norm() (Value, bool) {
	if v.Umin > v.Umax || v.Smin > v.Smax {
		return v, false
	}
	if _, ok := meetLow32(v.lo, low32{}); !ok {
		return v, false
	}
	v.T.Value &^= v.T.Mask
	// Every round shrinks v or stops; two or three rounds are the rule. The
	// cap only guards the proof: stopping early is still sound.
	for range 64 {
		old := v
		s, ok := v.lowSext()
		if !ok {
			return v, false
		}
		v.lo = low32Of(s)
		if v.T, ok = tnumIntersect(v.T, tnumLow32(s.T)); !ok {
			return v, false
		}
		ps, n := lowPieces(s)
		lo, ok := nextMember(v.T, ps, n, v.Umin)
		if !ok || lo > v.Umax {
			return v, false
		}
		hi, _ := prevMember(v.T, ps, n, v.Umax)
		v.Umin, v.Umax = lo, hi
		ts := flipSign(v.T)
		slo, ok := nextMember(ts, ps, n, uint64(v.Smin)^signBit)
		if !ok || int64(slo^signBit) > v.Smax {
			return v, false
		}
		shi, _ := prevMember(ts, ps, n, uint64(v.Smax)^signBit)
		v.Smin, v.Smax = int64(slo^signBit), int64(shi^signBit)
		if v, ok = v.reduce64(); !ok {
			return v, false
		}
		if v == old {
			break
		}
	}
	return v, true
}

// norm64 is norm without the low-32 part, for values whose low32 is unused
// (the sign-extended forms of lowSext).
func (v Value) norm64() (Value, bool) {
	if v.Umin > v.Umax || v.Smin > v.Smax {
		return v, false
	}
	v.T.Value &^= v.T.Mask
	for range 64 {
		old := v
		lo, ok := nextGE(v.T, v.Umin)
		if !ok || lo > v.Umax {
			return v, false
		}
		hi, _ := prevLE(v.T, v.Umax)
		v.Umin, v.Umax = lo, hi
		slo, ok := snextGE(v.T, v.Smin)
		if !ok || slo > v.Smax {
			return v, false
		}
		shi, _ := sprevLE(v.T, v.Smax)
		v.Smin, v.Smax = slo, shi
		if v, ok = v.reduce64(); !ok {
			return v, false
		}
		if v == old {
			break
		}
	}
	return v, true
}

// reduce64 intersects the unsigned and signed ranges and narrows T to the
// bits they fix.
func (v Value) reduce64() (Value, bool) {
	ps, n := pieces(v.Umin, v.Umax, v.Smin, v.Smax)
	var r Tnum
	switch n {
	case 0:
		return v, false
	case 1:
		p := ps[0]
		v.Umin, v.Umax = p.lo, p.hi
		v.Smin, v.Smax = int64(p.lo), int64(p.hi)
		r = tnumRange(p.lo, p.hi)
	case 2:
		// ps[0] is in the low half (non-negative), ps[1] in the high one.
		v.Umin, v.Umax = ps[0].lo, ps[1].hi
		v.Smin, v.Smax = int64(ps[1].lo), int64(ps[0].hi)
		r = tnumUnion(tnumRange(ps[0].lo, ps[0].hi), tnumRange(ps[1].lo, ps[1].hi))
	}
	t, ok := tnumIntersect(v.T, r)
	v.T = t
	return v, ok
}

// meet intersects two sound descriptions of the same set. ok is false if
// they share no value.
func meet(a, b Value) (Value, bool) {
	t, ok := tnumIntersect(a.T, b.T)
	if !ok {
		return a, false
	}
	lo, ok := meetLow32(a.lo, b.lo)
	if !ok {
		return a, false
	}
	return Value{max(a.Umin, b.Umin), min(a.Umax, b.Umax), max(a.Smin, b.Smin), min(a.Smax, b.Smax), t, lo}.norm()
}

// String prints v compactly in the kernel's style: a constant as a number,
// anything else as scalar(...) with the fields that add something. The
// unsigned bounds lead, or the signed ones when every value is negative;
// the other pair is printed only when the leading pair and T do not imply it.
func (v Value) String() string {
	if c, ok := v.Const(); ok {
		return fmtS(int64(c))
	}
	var f []string
	us := []string{"umin=" + fmtU(v.Umin), "umax=" + fmtU(v.Umax)}
	ss := []string{"smin=" + fmtS(v.Smin), "smax=" + fmtS(v.Smax)}
	if v.Smax < 0 {
		f = append(f, ss...)
		implied, ok := Value{0, maxU64, v.Smin, v.Smax, v.T, v.lo}.norm()
		if !ok || implied.Umin != v.Umin {
			f = append(f, us[0])
		}
		if !ok || implied.Umax != v.Umax {
			f = append(f, us[1])
		}
	} else {
		if v.Umin != 0 || v.Umax != maxU64 {
			f = append(f, us...)
		}
		implied, ok := Value{v.Umin, v.Umax, math.MinInt64, math.MaxInt64, v.T, v.lo}.norm()
		if !ok || implied.Smin != v.Smin {
			f = append(f, ss[0])
		}
		if !ok || implied.Smax != v.Smax {
			f = append(f, ss[1])
		}
	}
	// The 32-bit ranges, when the rest does not imply them.
	if implied, ok := (Value{v.Umin, v.Umax, v.Smin, v.Smax, v.T, low32{}}).norm(); !ok || implied.lo != v.lo {
		iu0, iu1, is0, is1 := implied.lo.bounds()
		u0, u1, s0, s1 := v.lo.bounds()
		if !ok || iu0 != u0 || iu1 != u1 {
			f = append(f, "umin32="+fmtU(uint64(u0)), "umax32="+fmtU(uint64(u1)))
		}
		if !ok || is0 != s0 || is1 != s1 {
			f = append(f, "smin32="+fmtS(int64(s0)), "smax32="+fmtS(int64(s1)))
		}
	}
	if v.T != tnumUnknown {
		f = append(f, "var_off="+v.T.String())
	}
	return "scalar(" + strings.Join(f, ",") + ")"
}

// fmtU and fmtS print small numbers in decimal and large ones in hex.
func fmtU(x uint64) string {
	if x < 1<<16 {
		return fmt.Sprint(x)
	}
	return fmt.Sprintf("%#x", x)
}

func fmtS(x int64) string {
	if -1<<16 < x && x < 1<<16 {
		return fmt.Sprint(x)
	}
	if x < 0 {
		return fmt.Sprintf("-%#x", -uint64(x))
	}
	return fmt.Sprintf("%#x", x)
}
