package scalar

import "math"

// low32 is what a Value knows of its low 32 bits beyond T, like the kernel's
// u32_min_value..s32_max_value: low32(x) in [umin, umax] and int32(low32(x))
// in [smin, smax]. A zero-extended ALU32 result needs it: after "w1 s<= 60"
// on a value of 0..2^32-1 the set is 0..60 and 2^31..2^32-1, which the 64-bit
// ranges can only cover with 0..2^32-1, while smax32=60 keeps it exact.
//
// Each field is stored XOR its "nothing known" value, so that the zero
// low32 (in the zero Value, or in a Value built by hand outside the package)
// constrains nothing.
type low32 struct {
	umin, umaxX  uint32
	sminX, smaxX int32
}

func mkLow32(umin, umax uint32, smin, smax int32) low32 {
	return low32{umin, ^umax, smin ^ math.MinInt32, smax ^ math.MaxInt32}
}

func (l low32) bounds() (umin, umax uint32, smin, smax int32) {
	return l.umin, ^l.umaxX, l.sminX ^ math.MinInt32, l.smaxX ^ math.MaxInt32
}

func (l low32) contains(x uint32) bool {
	umin, umax, smin, smax := l.bounds()
	return umin <= x && x <= umax && smin <= int32(x) && int32(x) <= smax
}

func joinLow32(a, b low32) low32 {
	au0, au1, as0, as1 := a.bounds()
	bu0, bu1, bs0, bs1 := b.bounds()
	return mkLow32(min(au0, bu0), max(au1, bu1), min(as0, bs0), max(as1, bs1))
}

// meetLow32 intersects; ok is false if a range becomes empty.
func meetLow32(a, b low32) (low32, bool) {
	au0, au1, as0, as1 := a.bounds()
	bu0, bu1, bs0, bs1 := b.bounds()
	u0, u1, s0, s1 := max(au0, bu0), min(au1, bu1), max(as0, bs0), min(as1, bs1)
	return mkLow32(u0, u1, s0, s1), u0 <= u1 && s0 <= s1
}

// sext32 is u sign-extended, which maps 32-bit unsigned order monotonically
// into 64-bit unsigned order (and int32 order onto int64 order).
func sext32(u uint32) uint64 { return uint64(int64(int32(u))) }

// lowSext is the set of low 32 bits of v's members, sign-extended, as a
// 64-bit Value (reduced by norm64; its own low32 is left empty). In that
// form the 32-bit unsigned and signed ranges and the low half of T are just
// a Value's ranges and T, so the 64-bit reduction is the 32-bit one. The
// set is what v's 64-bit ranges (where they do not wrap mod 2^32), T and
// v.lo say; ok is false if it is empty.
func (v Value) lowSext() (Value, bool) {
	const h = 1 << 31
	r := Value{0, maxU64, -h, h - 1, tnumSext(v.T, 32), low32{}}
	for _, s := range [2]span{{v.Umin, v.Umax}, {uint64(v.Smin), uint64(v.Smax)}} {
		if lo, hi, ok := lowBits(s.lo, s.hi, 32); ok {
			r.Umin, r.Umax = max(r.Umin, sext32(uint32(lo))), min(r.Umax, sext32(uint32(hi)))
		}
		if lo, hi, ok := lowBits(s.lo+h, s.hi+h, 32); ok {
			r.Smin, r.Smax = max(r.Smin, int64(lo)-h), min(r.Smax, int64(hi)-h)
		}
	}
	umin, umax, smin, smax := v.lo.bounds()
	r.Umin, r.Umax = max(r.Umin, sext32(umin)), min(r.Umax, sext32(umax))
	r.Smin, r.Smax = max(r.Smin, int64(smin)), min(r.Smax, int64(smax))
	return r.norm64()
}

// low32Of reads a low32 off a reduced sign-extended form.
func low32Of(s Value) low32 {
	return mkLow32(uint32(s.Umin), uint32(s.Umax), int32(s.Smin), int32(s.Smax))
}

// span32 is an interval of 32-bit values.
type span32 struct{ lo, hi uint32 }

// lowPieces are the unsigned 32-bit intervals that the sign-extended form s
// allows (its unsigned and signed ranges intersected), in ascending order.
func lowPieces(s Value) (ps [2]span32, n int) {
	p, k := pieces(s.Umin, s.Umax, s.Smin, s.Smax)
	for i := range k {
		ps[i] = span32{uint32(p[i].lo), uint32(p[i].hi)}
	}
	return ps, k
}

// lowTnums split t into its high and low halves, each as a tnum of a
// 32-bit number.
func lowTnums(t Tnum) (hi, lo Tnum) {
	return Tnum{t.Value >> 32, t.Mask >> 32}, Tnum{t.Value & maxU32, t.Mask & maxU32}
}

// nextLow is the smallest l >= x in the pieces that matches tl.
func nextLow(tl Tnum, ps [2]span32, n int, x uint32) (uint32, bool) {
	for _, p := range ps[:n] {
		if p.hi < x {
			continue
		}
		if y, ok := nextGE(tl, uint64(max(p.lo, x))); ok && y <= uint64(p.hi) {
			return uint32(y), true
		}
	}
	return 0, false
}

// prevLow is the largest l <= x in the pieces that matches tl.
func prevLow(tl Tnum, ps [2]span32, n int, x uint32) (uint32, bool) {
	for i := n - 1; i >= 0; i-- {
		p := ps[i]
		if p.lo > x {
			continue
		}
		if y, ok := prevLE(tl, uint64(min(p.hi, x))); ok && y >= uint64(p.lo) {
			return uint32(y), true
		}
	}
	return 0, false
}

// nextMember is the smallest y >= x that matches t and whose low 32 bits
// lie in the pieces: the same high half as x if that works, else the next
// high half that matches t, with the smallest low half.
func nextMember(t Tnum, ps [2]span32, n int, x uint64) (uint64, bool) {
	th, tl := lowTnums(t)
	h := x >> 32
	if th.contains(h) {
		if l, ok := nextLow(tl, ps, n, uint32(x)); ok {
			return h<<32 | uint64(l), true
		}
	}
	if h == maxU32 {
		return 0, false
	}
	h, ok := nextGE(th, h+1)
	if !ok || h > maxU32 {
		return 0, false
	}
	l, ok := nextLow(tl, ps, n, 0)
	return h<<32 | uint64(l), ok
}

// prevMember is the largest y <= x that matches t and whose low 32 bits lie
// in the pieces.
func prevMember(t Tnum, ps [2]span32, n int, x uint64) (uint64, bool) {
	th, tl := lowTnums(t)
	h := x >> 32
	if th.contains(h) {
		if l, ok := prevLow(tl, ps, n, uint32(x)); ok {
			return h<<32 | uint64(l), true
		}
	}
	if h == 0 {
		return 0, false
	}
	h, ok := prevLE(th, h-1)
	if !ok {
		return 0, false
	}
	l, ok := prevLow(tl, ps, n, math.MaxUint32)
	return h<<32 | uint64(l), ok
}
