package scalar

import (
	"fmt"
	"math"
)

// Cond is a conditional jump's comparison of RFC 9669.
type Cond uint8

const (
	JEq  Cond = iota // a == b
	JNe              // a != b
	JGt              // a > b, unsigned
	JGe              // a >= b, unsigned
	JLt              // a < b, unsigned
	JLe              // a <= b, unsigned
	JSGt             // a > b, signed
	JSGe             // a >= b, signed
	JSLt             // a < b, signed
	JSLe             // a <= b, signed
	JSet             // a & b != 0
	numConds
)

var condNames = [...]string{"jeq", "jne", "jgt", "jge", "jlt", "jle", "jsgt", "jsge", "jslt", "jsle", "jset"}

func (c Cond) String() string {
	if c < numConds {
		return condNames[c]
	}
	return fmt.Sprintf("Cond(%d)", uint8(c))
}

// rel is what an outcome of a Cond says about (x, y), after the operands
// were swapped if needed so that only these eight forms are left.
type rel uint8

const (
	relEq   rel = iota // x == y
	relNe              // x != y
	relUlt             // x < y, unsigned
	relUle             // x <= y, unsigned
	relSlt             // x < y, signed
	relSle             // x <= y, signed
	relSet             // x & y != 0
	relNset            // x & y == 0
)

// relation maps an outcome of c on (a, b) to a rel on (a, b), or on (b, a)
// when swap is set.
func relation(c Cond, taken bool) (r rel, swap bool) {
	type form struct {
		r    rel
		swap bool
	}
	// [c] = {outcome true, outcome false}
	table := [numConds][2]form{
		JEq:  {{relEq, false}, {relNe, false}},
		JNe:  {{relNe, false}, {relEq, false}},
		JGt:  {{relUlt, true}, {relUle, false}},
		JGe:  {{relUle, true}, {relUlt, false}},
		JLt:  {{relUlt, false}, {relUle, true}},
		JLe:  {{relUle, false}, {relUlt, true}},
		JSGt: {{relSlt, true}, {relSle, false}},
		JSGe: {{relSle, true}, {relSlt, false}},
		JSLt: {{relSlt, false}, {relSle, true}},
		JSLe: {{relSle, false}, {relSlt, true}},
		JSet: {{relSet, false}, {relNset, false}},
	}
	f := table[c][0]
	if !taken {
		f = table[c][1]
	}
	return f.r, f.swap
}

// Refine narrows a and b given that the comparison "a c b" had outcome
// taken (true: the condition holds), comparing all 64 bits or, with jmp32,
// the low 32 bits (unsigned, or signed as int32). feasible is false when no
// concrete pair of a and b has that outcome; a2 and b2 are then a and b.
//
// Soundness: every concrete pair (x in a, y in b) with that outcome has x in
// a2 and y in b2. A Cond out of range refines nothing.
func Refine(c Cond, jmp32 bool, a, b Value, taken bool) (a2, b2 Value, feasible bool) {
	a, b = a.sane(), b.sane()
	if c >= numConds {
		return a, b, true
	}
	r, swap := relation(c, taken)
	x, y := a, b
	if swap {
		x, y = b, a
	}
	var ok bool
	if jmp32 {
		x, y, ok = refine32(r, x, y)
	} else {
		x, y, ok = refine64(r, x, y)
	}
	if !ok {
		return a, b, false
	}
	if swap {
		x, y = y, x
	}
	return x, y, true
}

// Decide reports whether "a c b" holds for every concrete pair (always) or
// for none (never). Both are false when either outcome is possible.
func Decide(c Cond, jmp32 bool, a, b Value) (always, never bool) {
	if c >= numConds {
		return false, false
	}
	_, _, canTake := Refine(c, jmp32, a, b, true)
	_, _, canFall := Refine(c, jmp32, a, b, false)
	return !canFall, !canTake
}

// refine64 narrows x and y under r on 64-bit values.
func refine64(r rel, x, y Value) (Value, Value, bool) {
	switch r {
	case relEq:
		m, ok := meet(x, y)
		return m, m, ok
	case relNe:
		var ok bool
		if c, isConst := y.Const(); isConst {
			if x, ok = remove(x, c); !ok {
				return x, y, false
			}
		}
		if c, isConst := x.Const(); isConst {
			if y, ok = remove(y, c); !ok {
				return x, y, false
			}
		}
		return x, y, true
	case relSet:
		common := x.T.maybe() & y.T.maybe()
		if common == 0 {
			return x, y, false
		}
		// Both have a bit of common set, so both are at least its lowest
		// bit; with a single candidate bit, both must have it.
		low := common & -common
		x.Umin, y.Umin = max(x.Umin, low), max(y.Umin, low)
		if common == low {
			x.T = Tnum{x.T.Value | low, x.T.Mask &^ low}
			y.T = Tnum{y.T.Value | low, y.T.Mask &^ low}
		}
		return norm2(x, y)
	case relNset:
		if x.T.Value&y.T.Value != 0 {
			return x, y, false
		}
		// A bit known 1 in one operand is 0 in the other.
		x.T.Mask &^= y.T.Value
		y.T.Mask &^= x.T.Value
		return norm2(x, y)
	}
	// The orderings: x's upper bound from y's, y's lower bound from x's.
	// Reduction may move a bound onto a member, which can tighten the other
	// side again, so repeat until stable (a few rounds at most).
	for range 8 {
		old := [2]Value{x, y}
		switch r {
		case relUlt:
			if y.Umax == 0 || x.Umin == maxU64 {
				return x, y, false
			}
			x.Umax, y.Umin = min(x.Umax, y.Umax-1), max(y.Umin, x.Umin+1)
		case relUle:
			x.Umax, y.Umin = min(x.Umax, y.Umax), max(y.Umin, x.Umin)
		case relSlt:
			if y.Smax == math.MinInt64 || x.Smin == math.MaxInt64 {
				return x, y, false
			}
			x.Smax, y.Smin = min(x.Smax, y.Smax-1), max(y.Smin, x.Smin+1)
		case relSle:
			x.Smax, y.Smin = min(x.Smax, y.Smax), max(y.Smin, x.Smin)
		}
		var ok bool
		if x, y, ok = norm2(x, y); !ok {
			return x, y, false
		}
		if old == [2]Value{x, y} {
			break
		}
	}
	return x, y, true
}

func norm2(x, y Value) (Value, Value, bool) {
	x, ok1 := x.norm()
	y, ok2 := y.norm()
	return x, y, ok1 && ok2
}

// remove takes c out of v where the domain can say so: at a bound (the
// bounds are members, so this also empties a constant).
func remove(v Value, c uint64) (Value, bool) {
	if !v.Contains(c) {
		return v, true
	}
	if v.Umin == v.Umax {
		return v, false
	}
	if v.Umin == c {
		v.Umin++
	}
	if v.Umax == c {
		v.Umax--
	}
	if v.Smin == int64(c) {
		v.Smin++
	}
	if v.Smax == int64(c) {
		v.Smax--
	}
	return v.norm()
}

// refine32 compares the low 32 bits: it refines 32-bit views of x and y
// (zero-extended for the unsigned and bitwise relations, sign-extended for
// the signed ones, which preserves each order) and narrows x and y to the
// values whose low halves remain; reduction carries that into their 64-bit
// ranges where the upper half allows.
func refine32(r rel, x, y Value) (Value, Value, bool) {
	view := zview
	if r == relSlt || r == relSle {
		view = sview
	}
	vx, vy, ok := refine64(r, view(x), view(y))
	if !ok {
		return x, y, false
	}
	x2, ok1 := x.restrictLow(vx)
	y2, ok2 := y.restrictLow(vy)
	return x2, y2, ok1 && ok2
}
