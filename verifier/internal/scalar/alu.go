package scalar

import (
	"math"
	"math/bits"
)

// ALU is the result of dst = dst op src, computed on 64 bits (alu64) or on
// the low 32 bits with the result zero-extended. src is the immediate as a
// Const when the instruction has one, already sign-extended to 64 bits. For
// Neg and the byte-order ops src is ignored; for Mov and MovSX* dst is. The
// byte-order ops ignore alu64 (the width is in the op). An Op out of range
// gives Unknown.
func ALU(op Op, alu64 bool, dst, src Value) Value {
	if op >= numOps {
		return Unknown()
	}
	// Constants, the common case, are folded before any reduction.
	d, dok := dst.exactConst()
	s, sok := src.exactConst()
	switch {
	case op == Neg || op.isSwap():
		sok = true
	case op == Mov || op == MovSX8 || op == MovSX16 || op == MovSX32:
		dok = true
	}
	if dok && sok {
		return Const(eval(op, alu64, d, s))
	}
	dst, src = dst.sane(), src.sane()
	if r, ok := foldSmall(op, alu64, dst, src); ok {
		return r
	}
	if op.isSwap() {
		return alu64Op(op, dst, src)
	}
	if !alu64 {
		return alu32Op(op, dst, src)
	}
	r := alu64Op(op, dst, src)
	switch op {
	case Add, Sub, Mul, Or, And, Xor, Neg:
		// The low 32 bits of these depend on the low 32 bits of the
		// operands only: the 32-bit result tells the low half of r. That
		// only adds something when an operand knows more of its low half
		// than its 64-bit ranges and T say (after a JMP32, say).
		if dst.lo == dst.impliedLow32() && src.lo == src.impliedLow32() {
			return r
		}
		r = withLow(r, alu32Op(op, dst, src))
	}
	return r
}

// impliedLow32 is what v's ranges and T alone say of its low 32 bits.
func (v Value) impliedLow32() low32 {
	v.lo = low32{}
	s, ok := v.lowSext()
	if !ok {
		return low32{}
	}
	return low32Of(s)
}

// withLow narrows v to the members whose low 32 bits are among those of w.
func withLow(v, w Value) Value {
	r, ok := v.restrictLow(w)
	if !ok {
		if emptyHook != nil {
			emptyHook(w)
		}
		return v
	}
	return r
}

// restrictLow is v without the members whose low 32 bits no member of w
// has; ok is false if nothing is left.
func (v Value) restrictLow(w Value) (Value, bool) {
	s, ok := w.lowSext()
	if !ok {
		return v, false
	}
	if v.lo, ok = meetLow32(v.lo, low32Of(s)); !ok {
		return v, false
	}
	if v.T, ok = tnumIntersect(v.T, tnumLow32(s.T)); !ok {
		return v, false
	}
	return v.norm()
}

// exactConst reports whether v, as built, holds exactly one value: a tnum
// with nothing unknown whose value the other constraints admit.
func (v Value) exactConst() (uint64, bool) {
	c := v.T.Value
	return c, v.T.Mask == 0 && v.Contains(c)
}

// smallSet is how many concrete pairs foldSmall is willing to evaluate.
const smallSet = 64

// foldSmall evaluates op on every concrete member when the operands hold
// few values (constants above all), which is exact up to the final join.
func foldSmall(op Op, alu64 bool, dst, src Value) (Value, bool) {
	var dbuf, sbuf [smallSet]uint64
	ds, ss := dbuf[:1], sbuf[:1]
	switch {
	case op == Neg || op.isSwap():
		ds = members(dst, dbuf[:0])
	case op == Mov || op == MovSX8 || op == MovSX16 || op == MovSX32:
		ss = members(src, sbuf[:0])
	default:
		ds = members(dst, dbuf[:0])
		if len(ds) > 0 {
			ss = members(src, sbuf[:0:smallSet/len(ds)])
		}
	}
	if len(ds) == 0 || len(ss) == 0 {
		return Value{}, false
	}
	r := Const(eval(op, alu64, ds[0], ss[0]))
	for _, d := range ds {
		for _, s := range ss {
			r = join(r, Const(eval(op, alu64, d, s)))
		}
	}
	return mustNorm(r), true
}

// members appends the values of v to out if there are at most cap(out) of
// them and they are cheap to find, else returns nil.
func members(v Value, out []uint64) []uint64 {
	limit := cap(out)
	if limit <= 0 {
		return nil
	}
	switch {
	case v.Umax-v.Umin < uint64(limit):
		for x := v.Umin; ; x++ {
			if v.Contains(x) {
				out = append(out, x)
			}
			if x == v.Umax {
				break
			}
		}
	case uint64(v.Smax)-uint64(v.Smin) < uint64(limit):
		for x := v.Smin; ; x++ {
			if v.Contains(uint64(x)) {
				out = append(out, uint64(x))
			}
			if x == v.Smax {
				break
			}
		}
	case bits.OnesCount64(v.T.Mask) <= bits.Len(uint(limit))-1:
		// Walk the submasks of Mask.
		for sub := uint64(0); ; sub = (sub - v.T.Mask) & v.T.Mask {
			if x := v.T.Value | sub; v.Contains(x) {
				out = append(out, x)
			}
			if sub == v.T.Mask {
				break
			}
		}
	default:
		return nil
	}
	return out
}

// fromT is every value matching t.
func fromT(t Tnum) Value {
	return mustNorm(Value{0, maxU64, math.MinInt64, math.MaxInt64, t, low32{}})
}

func alu64Op(op Op, a, b Value) Value {
	switch op {
	case Add:
		return add64(a, b)
	case Sub:
		return sub64(a, b)
	case Mul:
		return mul64(a, b)
	case Div:
		return div64(a, b)
	case SDiv:
		return sdiv64(a, b)
	case Mod:
		return mod64(a, b)
	case SMod:
		return smod64(a, b)
	case Or:
		return or64(a, b)
	case And:
		return and64(a, b)
	case Xor:
		return fromT(tnumXor(a.T, b.T))
	case Lsh, Rsh, Arsh:
		return shift(op, a, and64(b, Const(63)))
	case Mov:
		return b
	case Neg:
		return sub64(Const(0), a)
	case MovSX8:
		return sextN(b, 8)
	case MovSX16:
		return sextN(b, 16)
	case MovSX32:
		return sextN(b, 32)
	case Le16:
		return truncN(a, 16)
	case Le32:
		return truncN(a, 32)
	case Le64:
		return a
	case Be16, Bswap16:
		return fromT(tnumSwap16(truncN(a, 16).T))
	case Be32, Bswap32:
		return fromT(tnumSwap32(truncN(a, 32).T))
	case Be64, Bswap64:
		return fromT(tnumSwap64(a.T))
	}
	return Unknown()
}

// alu32Op computes on 32-bit views of the operands with the 64-bit transfer
// functions and truncates the result. A view is a set of 64-bit values whose
// low 32 bits are those of the operand: zero-extended (good for unsigned
// ranges) or sign-extended (good for signed ones). Where the low bits of the
// result depend on the low bits of the operands only, both are computed and
// intersected (mixed pairings add little: truncN reads both the unsigned and
// the signed range of the low half off any result).
func alu32Op(op Op, a, b Value) Value {
	switch op {
	case Add, Sub, Mul, Or, And, Xor:
		za, sa, zb, sb := zview(a), sview(a), zview(b), sview(b)
		return meetAll(
			truncN(alu64Op(op, za, zb), 32),
			truncN(alu64Op(op, sa, sb), 32),
		)
	case Neg:
		return meetAll(truncN(sub64(Const(0), zview(a)), 32), truncN(sub64(Const(0), sview(a)), 32))
	case Lsh:
		cnt := and64(b, Const(31))
		return meetAll(truncN(shift(Lsh, zview(a), cnt), 32), truncN(shift(Lsh, sview(a), cnt), 32))
	case Rsh:
		return truncN(shift(Rsh, zview(a), and64(b, Const(31))), 32)
	case Arsh:
		return truncN(shift(Arsh, sview(a), and64(b, Const(31))), 32)
	case Div, Mod:
		return truncN(alu64Op(op, zview(a), zview(b)), 32)
	case SDiv, SMod:
		// INT32_MIN / -1 is 2^31 on the sign-extended views, whose low 32
		// bits are INT32_MIN again, as the RFC wants.
		return truncN(alu64Op(op, sview(a), sview(b)), 32)
	case Mov, MovSX32:
		return truncN(b, 32)
	case MovSX8:
		return truncN(sextN(b, 8), 32)
	case MovSX16:
		return truncN(sextN(b, 16), 32)
	}
	return Unknown()
}

// meetAll intersects sound results for the same set.
func meetAll(vs ...Value) Value {
	r := vs[0]
	for _, v := range vs[1:] {
		m, ok := meet(r, v)
		if !ok {
			if emptyHook != nil {
				emptyHook(v)
			}
			return r
		}
		r = m
	}
	return r
}

func zview(v Value) Value { return truncN(v, 32) }
func sview(v Value) Value { return sextN(v, 32) }

// lowBits is the set {x mod 2^n : x in lo, lo+1, ..., hi} (counting mod
// 2^64, so a signed range fits too) when that is one interval.
func lowBits(lo, hi uint64, n uint) (uint64, uint64, bool) {
	m := uint64(1)<<n - 1
	if hi-lo > m {
		return 0, 0, false
	}
	l, h := lo&m, hi&m
	return l, h, l <= h
}

// truncN is the low n bits (n <= 32), zero-extended.
func truncN(v Value, n uint) Value {
	if n == 32 {
		s, ok := v.lowSext()
		if !ok {
			return mustNorm(s) // v is empty: cannot happen
		}
		lo, hi := uint64(uint32(s.Umin)), uint64(uint32(s.Umax))
		return mustNorm(Value{lo, hi, int64(lo), int64(hi), tnumTrunc(s.T, 32), low32Of(s)})
	}
	m := uint64(1)<<n - 1
	r := Value{0, m, 0, int64(m), tnumTrunc(v.T, n), low32{}}
	for _, s := range [2]span{{v.Umin, v.Umax}, {uint64(v.Smin), uint64(v.Smax)}} {
		if lo, hi, ok := lowBits(s.lo, s.hi, n); ok {
			r.Umin, r.Umax = max(r.Umin, lo), min(r.Umax, hi)
		}
	}
	return mustNorm(r)
}

// sextN is the low n bits (n <= 32), sign-extended: x+2^(n-1) mod 2^n,
// minus 2^(n-1).
func sextN(v Value, n uint) Value {
	if n == 32 {
		s, ok := v.lowSext()
		if !ok {
			return mustNorm(s) // v is empty: cannot happen
		}
		s.lo = low32Of(s)
		return mustNorm(s)
	}
	h := uint64(1) << (n - 1)
	r := Value{0, maxU64, -int64(h), int64(h - 1), tnumSext(v.T, n), low32{}}
	for _, s := range [2]span{{v.Umin, v.Umax}, {uint64(v.Smin), uint64(v.Smax)}} {
		if lo, hi, ok := lowBits(s.lo+h, s.hi+h, n); ok {
			r.Smin, r.Smax = max(r.Smin, int64(lo-h)), min(r.Smax, int64(hi-h))
		}
	}
	return mustNorm(r)
}

// sAddOverflow and sSubOverflow say which way x op y left int64: -1, 0, +1.
func sAddOverflow(x, y int64) (int64, int) {
	r := x + y
	switch {
	case x >= 0 && y >= 0 && r < 0:
		return r, 1
	case x < 0 && y < 0 && r >= 0:
		return r, -1
	}
	return r, 0
}

func sSubOverflow(x, y int64) (int64, int) {
	r := x - y
	switch {
	case x >= 0 && y < 0 && r < 0:
		return r, 1
	case x < 0 && y >= 0 && r >= 0:
		return r, -1
	}
	return r, 0
}

// add64 and sub64: the range of sums is exact unless its two ends wrapped
// by different amounts, in which case the range is given up (T remains).
func add64(a, b Value) Value {
	r := Unknown()
	r.T = tnumAdd(a.T, b.T)
	lo, c1 := bits.Add64(a.Umin, b.Umin, 0)
	hi, c2 := bits.Add64(a.Umax, b.Umax, 0)
	if c1 == c2 {
		r.Umin, r.Umax = lo, hi
	}
	slo, o1 := sAddOverflow(a.Smin, b.Smin)
	shi, o2 := sAddOverflow(a.Smax, b.Smax)
	if o1 == o2 {
		r.Smin, r.Smax = slo, shi
	}
	return mustNorm(r)
}

func sub64(a, b Value) Value {
	r := Unknown()
	r.T = tnumSub(a.T, b.T)
	lo, b1 := bits.Sub64(a.Umin, b.Umax, 0)
	hi, b2 := bits.Sub64(a.Umax, b.Umin, 0)
	if b1 == b2 {
		r.Umin, r.Umax = lo, hi
	}
	slo, o1 := sSubOverflow(a.Smin, b.Smax)
	shi, o2 := sSubOverflow(a.Smax, b.Smin)
	if o1 == o2 {
		r.Smin, r.Smax = slo, shi
	}
	return mustNorm(r)
}

// sMul is x*y and whether it fits in int64.
func sMul(x, y int64) (int64, bool) {
	p := x * y
	if x == 0 {
		return 0, true
	}
	if p/x != y || (x == -1 && y == math.MinInt64) {
		return p, false
	}
	return p, true
}

func mul64(a, b Value) Value {
	r := Unknown()
	r.T = tnumMul(a.T, b.T)
	if hi, lo := bits.Mul64(a.Umax, b.Umax); hi == 0 {
		r.Umin, r.Umax = a.Umin*b.Umin, lo
	}
	// x*y over a rectangle has its extremes at the corners.
	slo, shi := int64(math.MaxInt64), int64(math.MinInt64)
	fits := true
	for _, x := range [2]int64{a.Smin, a.Smax} {
		for _, y := range [2]int64{b.Smin, b.Smax} {
			p, ok := sMul(x, y)
			fits = fits && ok
			slo, shi = min(slo, p), max(shi, p)
		}
	}
	if fits {
		r.Smin, r.Smax = slo, shi
	}
	return mustNorm(r)
}

// nonzeroU is the smallest non-zero member of b, if any.
func nonzeroU(b Value) (uint64, bool) {
	p, ok := nextGE(b.T, max(b.Umin, 1))
	return p, ok && p <= b.Umax
}

func div64(a, b Value) Value {
	if c, ok := b.Const(); ok && c != 0 && c&(c-1) == 0 {
		return shiftConst(Rsh, a, uint(bits.TrailingZeros64(c)))
	}
	p, ok := nonzeroU(b)
	if !ok {
		return Const(0) // b is {0}
	}
	lo := a.Umin / b.Umax
	if b.Umin == 0 {
		lo = 0 // x/0 = 0
	}
	return Range(lo, a.Umax/p)
}

func mod64(a, b Value) Value {
	var r Value
	have := false
	if b.Contains(0) {
		r, have = a, true // x%0 = x
	}
	p, ok := nonzeroU(b)
	if !ok {
		return r
	}
	var part Value
	c, isConst := b.Const()
	switch {
	case a.Umax < p:
		part = a
	case isConst && a.Umin/c == a.Umax/c:
		part = Range(a.Umin%c, a.Umax%c)
	default:
		part = Range(0, min(a.Umax, b.Umax-1))
	}
	if isConst && c&(c-1) == 0 {
		part = meetAll(part, fromT(tnumAnd(a.T, tnumConst(c-1))))
	}
	if have {
		return mustNorm(join(r, part))
	}
	return part
}

// signedParts are the negative and the positive members of b as signed
// ranges, each ending on members.
func signedParts(b Value) (neg, pos [2]int64, hasNeg, hasPos bool) {
	if b.Smin <= -1 {
		if q, ok := sprevLE(b.T, min(b.Smax, -1)); ok && q >= b.Smin {
			neg, hasNeg = [2]int64{b.Smin, q}, true
		}
	}
	if b.Smax >= 1 {
		if p, ok := snextGE(b.T, max(b.Smin, 1)); ok && p <= b.Smax {
			pos, hasPos = [2]int64{p, b.Smax}, true
		}
	}
	return
}

func sdiv64(a, b Value) Value {
	// The quotients form up to four groups (0, MinInt64, and one per sign
	// of the divisor), joined at the end so that the unsigned view of each
	// group survives.
	var groups []Value
	lo, hi := int64(math.MaxInt64), int64(math.MinInt64)
	acc := func(x int64) { lo, hi = min(lo, x), max(hi, x) }
	flush := func() {
		if lo <= hi {
			groups = append(groups, SRange(lo, hi))
		}
		lo, hi = math.MaxInt64, math.MinInt64
	}
	// Truncating division is monotone in each argument while the divisor
	// keeps its sign, so the corners bound it; the one overflow,
	// MinInt64 / -1 = MinInt64, is cut out of the rectangle.
	corners := func(a1, a2, b1, b2 int64) {
		for _, x := range [2]int64{a1, a2} {
			for _, y := range [2]int64{b1, b2} {
				acc(x / y)
			}
		}
	}
	part := func(b1, b2 int64) {
		if a.Smin == math.MinInt64 && b2 == -1 {
			groups = append(groups, Const(signBit))
			if a.Smax > math.MinInt64 {
				corners(math.MinInt64+1, a.Smax, b1, b2)
			}
			if b1 <= -2 {
				corners(math.MinInt64, math.MinInt64, b1, -2)
			}
		} else {
			corners(a.Smin, a.Smax, b1, b2)
		}
		flush()
	}
	if b.Contains(0) {
		groups = append(groups, Const(0))
	}
	neg, pos, hasNeg, hasPos := signedParts(b)
	if hasNeg {
		part(neg[0], neg[1])
	}
	if hasPos {
		part(pos[0], pos[1])
	}
	if len(groups) == 0 {
		return Unknown() // cannot happen: b is non-empty
	}
	r := groups[0]
	for _, g := range groups[1:] {
		r = join(r, g)
	}
	return mustNorm(r)
}

// absU is |x| as uint64 (|MinInt64| = 2^63 fits).
func absU(x int64) uint64 {
	if x < 0 {
		return -uint64(x)
	}
	return uint64(x)
}

func smod64(a, b Value) Value {
	var r Value
	have := false
	if b.Contains(0) {
		r, have = a, true // x%0 = x
	}
	neg, pos, hasNeg, hasPos := signedParts(b)
	if !hasNeg && !hasPos {
		return r
	}
	// The remainder has the sign of a and |r| < |b|, |r| <= |a|.
	minAbs, maxAbs := uint64(math.MaxUint64), uint64(0)
	if hasNeg {
		minAbs, maxAbs = min(minAbs, absU(neg[1])), max(maxAbs, absU(neg[0]))
	}
	if hasPos {
		minAbs, maxAbs = min(minAbs, uint64(pos[0])), max(maxAbs, uint64(pos[1]))
	}
	m := maxAbs - 1
	var part Value
	c, isConst := b.Const()
	switch {
	case absU(a.Smin) < minAbs && absU(a.Smax) < minAbs:
		part = a
	case isConst && int64(c) != -1 && (a.Smin >= 0 || a.Smax <= 0) && a.Smin/int64(c) == a.Smax/int64(c):
		part = SRange(a.Smin%int64(c), a.Smax%int64(c))
	default:
		lo, hi := int64(0), int64(0)
		if a.Smin < 0 {
			lo = -int64(min(absU(a.Smin), m))
		}
		if a.Smax > 0 {
			hi = int64(min(uint64(a.Smax), m))
		}
		part = SRange(lo, hi)
	}
	if have {
		return mustNorm(join(r, part))
	}
	return part
}

func or64(a, b Value) Value {
	r := Unknown()
	r.T = tnumOr(a.T, b.T)
	r.Umin = max(a.Umin, b.Umin) // x|y >= x, y
	return mustNorm(r)
}

func and64(a, b Value) Value {
	r := Unknown()
	r.T = tnumAnd(a.T, b.T)
	r.Umax = min(a.Umax, b.Umax) // x&y <= x, y
	return mustNorm(r)
}

// shift applies a shift by every count cnt holds (cnt is already masked).
func shift(op Op, a, cnt Value) Value {
	if k, ok := cnt.Const(); ok {
		return shiftConst(op, a, uint(k))
	}
	r := Value{}
	first := true
	for k := cnt.Umin; k <= cnt.Umax && k < 64; k++ {
		if !cnt.Contains(k) {
			continue
		}
		s := shiftConst(op, a, uint(k))
		if first {
			r, first = s, false
		} else {
			r = join(r, s)
		}
	}
	if first {
		return Unknown() // cannot happen: cnt is non-empty and below 64
	}
	return mustNorm(r)
}

func shiftConst(op Op, a Value, k uint) Value {
	if k == 0 {
		return a
	}
	r := Unknown()
	switch op {
	case Lsh:
		r.T = tnumLsh(a.T, k)
		if a.Umax>>(64-k) == 0 {
			r.Umin, r.Umax = a.Umin<<k, a.Umax<<k
		}
		if (a.Smin<<k)>>k == a.Smin && (a.Smax<<k)>>k == a.Smax {
			r.Smin, r.Smax = a.Smin<<k, a.Smax<<k
		}
	case Rsh:
		r.T = tnumRsh(a.T, k)
		r.Umin, r.Umax = a.Umin>>k, a.Umax>>k
	case Arsh:
		r.T = tnumArsh(a.T, k)
		r.Smin, r.Smax = a.Smin>>k, a.Smax>>k
	}
	return mustNorm(r)
}
