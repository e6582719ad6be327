package scalar

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// ---- Reference semantics, straight from RFC 9669 ----

const m32 = 0xffffffff

// sx sign-extends the low n bits of x.
func sx(x uint64, n uint) int64 { return int64(x<<(64-n)) >> (64 - n) }

// swapBytes reverses the low n bytes of x (the rest is dropped).
func swapBytes(x uint64, n int) uint64 {
	var r uint64
	for i := range n {
		r |= (x >> (8 * i) & 0xff) << (8 * (n - 1 - i))
	}
	return r
}

// ref is dst op src on concrete registers.
func ref(op Op, alu64 bool, dst, src uint64) uint64 {
	switch op {
	case Le16:
		return dst & 0xffff
	case Le32:
		return dst & m32
	case Le64:
		return dst
	case Be16, Bswap16:
		return swapBytes(dst, 2)
	case Be32, Bswap32:
		return swapBytes(dst, 4)
	case Be64, Bswap64:
		return swapBytes(dst, 8)
	}
	width, mask := uint(64), ^uint64(0)
	if !alu64 {
		width, mask = 32, m32
		dst, src = dst&m32, src&m32
	}
	sd, ss := sx(dst, width), sx(src, width)
	var r uint64
	switch op {
	case Add:
		r = dst + src
	case Sub:
		r = dst - src
	case Mul:
		r = dst * src
	case Div:
		if src != 0 {
			r = dst / src
		}
	case SDiv:
		switch {
		case ss == 0:
			r = 0
		case ss == -1:
			r = uint64(-sd) // INT_MIN / -1 = INT_MIN after truncation to the width
		default:
			r = uint64(sd / ss)
		}
	case Mod:
		r = dst
		if src != 0 {
			r = dst % src
		}
	case SMod:
		switch {
		case ss == 0:
			r = dst
		case ss == -1:
			r = 0
		default:
			r = uint64(sd % ss)
		}
	case Or:
		r = dst | src
	case And:
		r = dst & src
	case Xor:
		r = dst ^ src
	case Lsh:
		r = dst << (src & uint64(width-1))
	case Rsh:
		r = dst >> (src & uint64(width-1))
	case Arsh:
		r = uint64(sd >> (src & uint64(width-1)))
	case Mov:
		r = src
	case Neg:
		r = -dst
	case MovSX8:
		r = uint64(sx(src, 8))
	case MovSX16:
		r = uint64(sx(src, 16))
	case MovSX32:
		r = uint64(sx(src, 32))
	}
	return r & mask
}

// refCond is "a c b" on concrete registers.
func refCond(c Cond, jmp32 bool, a, b uint64) bool {
	sa, sb := int64(a), int64(b)
	if jmp32 {
		a, b = a&m32, b&m32
		sa, sb = sx(a, 32), sx(b, 32)
	}
	switch c {
	case JEq:
		return a == b
	case JNe:
		return a != b
	case JGt:
		return a > b
	case JGe:
		return a >= b
	case JLt:
		return a < b
	case JLe:
		return a <= b
	case JSGt:
		return sa > sb
	case JSGe:
		return sa >= sb
	case JSLt:
		return sa < sb
	case JSLe:
		return sa <= sb
	case JSet:
		return a&b != 0
	}
	panic("bad cond")
}

// ---- Random abstract values and members ----

// entropy feeds the generators: a PRNG in the property tests, the fuzzer's
// bytes in the fuzz targets.
type entropy interface {
	word() uint64
	n(k int) int // in [0, k)
}

type rng struct{ r *rand.Rand }

func (g rng) word() uint64 { return g.r.Uint64() }
func (g rng) n(k int) int  { return g.r.IntN(k) }

// bytesSource reads the fuzzer's input; past its end it gives zeros.
type bytesSource struct{ b []byte }

func (s *bytesSource) word() uint64 {
	var w [8]byte
	k := copy(w[:], s.b)
	s.b = s.b[k:]
	return binary.LittleEndian.Uint64(w[:])
}

func (s *bytesSource) n(k int) int {
	if len(s.b) == 0 {
		return 0
	}
	x := int(s.b[0])
	s.b = s.b[1:]
	return x % k
}

var edges = []uint64{
	0, 1, 2, 7, 8, 31, 32, 63, 64, 0x7f, 0x80, 0xff, 0x100, 0x7fff, 0x8000, 0xffff,
	0x7fffffff, 0x80000000, 0xffffffff, 1 << 32, 1<<32 + 1,
	math.MaxInt64, 1 << 63, 1<<63 + 1, ^uint64(0), ^uint64(1),
	uint64(0xffffffff80000000), uint64(0xffffffff7fffffff), uint64(0xffffffffffff8000), uint64(0xffffffffffffff80),
}

func genNum(e entropy) uint64 {
	switch e.n(6) {
	case 0, 1:
		return edges[e.n(len(edges))] + uint64(e.n(7)) - 3
	case 2:
		return uint64(e.n(1000))
	case 3:
		return uint64(-int64(e.n(1000)))
	case 4:
		return e.word() & m32
	}
	return e.word()
}

// genMask is a mask with few, clustered or low bits.
func genMask(e entropy) uint64 {
	switch e.n(5) {
	case 0:
		return 0
	case 1:
		return uint64(1)<<e.n(64) - 1
	case 2:
		return e.word() & e.word() & e.word()
	case 3:
		return (uint64(1)<<e.n(16) - 1) << e.n(64)
	}
	return e.word()
}

// genValue is a random non-empty, reduced abstract value.
func genValue(e entropy, depth int) Value {
	for {
		v, ok := genCandidate(e, depth)
		if ok {
			return v
		}
	}
}

func genCandidate(e entropy, depth int) (Value, bool) {
	order := func(x, y uint64) (uint64, uint64) { return min(x, y), max(x, y) }
	sorder := func(x, y int64) (int64, int64) { return min(x, y), max(x, y) }
	k := e.n(12)
	if depth <= 0 && k >= 9 {
		k = e.n(9)
	}
	switch k {
	case 0:
		return Const(genNum(e)), true
	case 1:
		return Range(order(genNum(e), genNum(e))), true
	case 2:
		return SRange(sorder(int64(genNum(e)), int64(genNum(e)))), true
	case 3:
		c := genNum(e)
		return Range(order(c, c+uint64(e.n(20)))), true
	case 4:
		c := int64(genNum(e))
		return SRange(sorder(c, c-int64(e.n(20)))), true
	case 5:
		m := genMask(e)
		return Value{0, maxU64, math.MinInt64, math.MaxInt64, Tnum{genNum(e) &^ m, m}, low32{}}.norm()
	case 6:
		m := genMask(e)
		lo, hi := order(genNum(e), genNum(e))
		v := Value{lo, hi, math.MinInt64, math.MaxInt64, Tnum{genNum(e) &^ m, m}, low32{}}
		if e.n(2) == 0 {
			u0, u1 := order(genNum(e)&m32, genNum(e)&m32)
			s0, s1 := sorder(int64(int32(genNum(e))), int64(int32(genNum(e))))
			v.lo = mkLow32(uint32(u0), uint32(u1), int32(s0), int32(s1))
		}
		return v.norm()
	case 7:
		if e.n(2) == 0 {
			return Range(order(genNum(e)&m32, genNum(e)&m32)), true
		}
		return SRange(sorder(int64(int32(genNum(e))), int64(int32(genNum(e))))), true
	case 8:
		if e.n(4) == 0 {
			return Unknown(), true
		}
		return Range(order(uint64(e.n(300)), uint64(e.n(300)))), true
	case 9, 10:
		return ALU(Op(e.n(int(numOps))), e.n(2) == 0, genValue(e, depth-1), genValue(e, depth-1)), true
	default:
		a, b, ok := Refine(Cond(e.n(int(numConds))), e.n(2) == 0, genValue(e, depth-1), genValue(e, depth-1), e.n(2) == 0)
		if e.n(2) == 0 {
			a = b
		}
		return a, ok
	}
}

// member picks a concrete value of v: a bound, or a random point of one of
// its ranges or of its tnum moved onto the set.
func member(e entropy, v Value) uint64 {
	for range 8 {
		var x uint64
		switch e.n(7) {
		case 0:
			return v.Umin
		case 1:
			return v.Umax
		case 2:
			return uint64(v.Smin)
		case 3:
			return uint64(v.Smax)
		case 4:
			x = v.Umin + randBelow(e, v.Umax-v.Umin)
		case 5:
			x = uint64(v.Smin) + randBelow(e, uint64(v.Smax)-uint64(v.Smin))
		case 6:
			x = v.T.Value | e.word()&v.T.Mask
		}
		s, ok := v.lowSext()
		if !ok {
			break
		}
		ps, n := lowPieces(s)
		if y, ok := nextMember(v.T, ps, n, x); ok && v.Contains(y) {
			return y
		}
		if y, ok := prevMember(v.T, ps, n, x); ok && v.Contains(y) {
			return y
		}
	}
	return v.Umin
}

// randBelow is in [0, n], often near the ends.
func randBelow(e entropy, n uint64) uint64 {
	switch e.n(4) {
	case 0:
		return min(uint64(e.n(16)), n)
	case 1:
		return n - min(uint64(e.n(16)), n)
	}
	if n == maxU64 {
		return e.word()
	}
	return e.word() % (n + 1)
}

// ---- Checks shared by the property tests and the fuzz targets ----

// watchEmpty makes a transfer function's empty candidate a test failure.
func watchEmpty(t testing.TB) {
	emptyHook = func(v Value) { t.Helper(); t.Fatalf("a transfer function produced an empty candidate %+v", v) }
	t.Cleanup(func() { emptyHook = nil })
}

func checkReduced(t testing.TB, what string, v Value) {
	t.Helper()
	n, ok := v.norm()
	if !ok || n != v {
		t.Fatalf("%s: result %+v is not reduced (norm: %+v, %v)", what, v, n, ok)
	}
	for _, b := range []uint64{v.Umin, v.Umax, uint64(v.Smin), uint64(v.Smax)} {
		if !v.Contains(b) {
			t.Fatalf("%s: bound %#x of %+v is not a member", what, b, v)
		}
	}
}

// checkALU evaluates op on abstract a, b and on samples concrete members.
func checkALU(t testing.TB, e entropy, op Op, alu64 bool, a, b Value, samples int) {
	t.Helper()
	r := ALU(op, alu64, a, b)
	checkReduced(t, "ALU", r)
	for range samples {
		x, y := member(e, a), member(e, b)
		if want := ref(op, alu64, x, y); !r.Contains(want) {
			t.Fatalf("%v alu64=%v: %#x op %#x = %#x not in %v\n a=%+v\n b=%+v\n r=%+v", op, alu64, x, y, want, r, a, b, r)
		}
	}
	ac, aok := a.Const()
	bc, bok := b.Const()
	if aok && bok {
		if c, ok := r.Const(); !ok || c != ref(op, alu64, ac, bc) {
			t.Fatalf("%v alu64=%v on constants %#x, %#x: %v, want %#x", op, alu64, ac, bc, r, ref(op, alu64, ac, bc))
		}
	}
	if !alu64 && !op.isSwap() && r.Umax > m32 {
		t.Fatalf("%v alu32: result %v exceeds 32 bits", op, r)
	}
}

// within reports whether w's bounds are inside v's.
func within(w, v Value) bool {
	return w.Umin >= v.Umin && w.Umax <= v.Umax && w.Smin >= v.Smin && w.Smax <= v.Smax
}

// checkRefine refines both outcomes of a c b and samples concrete pairs.
func checkRefine(t testing.TB, e entropy, c Cond, jmp32 bool, a, b Value, samples int) {
	t.Helper()
	type outcome struct {
		a2, b2 Value
		ok     bool
	}
	var out [2]outcome
	for i, taken := range []bool{false, true} {
		a2, b2, ok := Refine(c, jmp32, a, b, taken)
		out[i] = outcome{a2, b2, ok}
		if ok {
			checkReduced(t, "Refine", a2)
			checkReduced(t, "Refine", b2)
			if !within(a2, a) || !within(b2, b) {
				t.Fatalf("%v jmp32=%v taken=%v widened an operand:\n a=%+v -> %+v\n b=%+v -> %+v", c, jmp32, taken, a, a2, b, b2)
			}
		}
	}
	always, never := Decide(c, jmp32, a, b)
	if always != !out[0].ok || never != !out[1].ok {
		t.Fatalf("Decide disagrees with Refine")
	}
	for range samples {
		x, y := member(e, a), member(e, b)
		taken := refCond(c, jmp32, x, y)
		o := out[0]
		if taken {
			o = out[1]
		}
		if !o.ok {
			t.Fatalf("%v jmp32=%v: %#x, %#x has outcome %v, reported infeasible\n a=%+v\n b=%+v", c, jmp32, x, y, taken, a, b)
		}
		if !o.a2.Contains(x) || !o.b2.Contains(y) {
			t.Fatalf("%v jmp32=%v taken=%v: pair %#x, %#x lost\n a=%+v -> %+v\n b=%+v -> %+v", c, jmp32, taken, x, y, a, o.a2, b, o.b2)
		}
	}
}

func checkJoinWiden(t testing.TB, e entropy, a, b Value, thresholds []uint64, samples int) {
	t.Helper()
	j := a.Join(b)
	w := a.Widen(b, NewThresholds(thresholds))
	checkReduced(t, "Join", j)
	checkReduced(t, "Widen", w)
	for range samples {
		for _, v := range []Value{a, b} {
			x := member(e, v)
			if !j.Contains(x) {
				t.Fatalf("Join lost %#x\n a=%+v\n b=%+v\n j=%+v", x, a, b, j)
			}
			if !w.Contains(x) {
				t.Fatalf("Widen lost %#x\n a=%+v\n b=%+v\n w=%+v", x, a, b, w)
			}
		}
	}
}

func genThresholds(e entropy) []uint64 {
	ts := make([]uint64, e.n(6))
	for i := range ts {
		ts[i] = genNum(e)
	}
	return ts
}

// ---- Property tests ----

func newRNG(seed uint64) rng { return rng{rand.New(rand.NewPCG(seed, 0x5ca1a7))} }

func TestALUSound(t *testing.T) {
	watchEmpty(t)
	e := newRNG(1)
	for op := range numOps {
		for _, alu64 := range []bool{true, false} {
			for range 1500 {
				checkALU(t, e, op, alu64, genValue(e, 1), genValue(e, 1), 12)
			}
		}
	}
}

func TestALUConstantsExact(t *testing.T) {
	e := newRNG(2)
	for op := range numOps {
		for _, alu64 := range []bool{true, false} {
			for range 300 {
				x, y := genNum(e), genNum(e)
				r := ALU(op, alu64, Const(x), Const(y))
				if want := ref(op, alu64, x, y); r != Const(want) {
					t.Fatalf("%v alu64=%v %#x, %#x: %v, want %#x", op, alu64, x, y, r, want)
				}
			}
		}
	}
}

func TestRefineSound(t *testing.T) {
	e := newRNG(3)
	for c := range numConds {
		for _, jmp32 := range []bool{false, true} {
			for i := range 2500 {
				a, b := genValue(e, 1), genValue(e, 1)
				if i%4 == 0 {
					b = Const(member(e, b)) // comparisons with an immediate
				}
				checkRefine(t, e, c, jmp32, a, b, 12)
			}
		}
	}
}

func TestJoinWidenSound(t *testing.T) {
	e := newRNG(4)
	for range 20000 {
		checkJoinWiden(t, e, genValue(e, 1), genValue(e, 1), genThresholds(e), 4)
	}
}

// TestWidenTerminates drives ascending chains with arbitrary new values:
// every chain must become stationary after a bounded number of changes.
func TestWidenTerminates(t *testing.T) {
	e := newRNG(5)
	worst := 0
	for range 1000 {
		ts := genThresholds(e)
		w := genValue(e, 1)
		changes := 0
		for range 300 {
			next := w.Widen(genValue(e, 1), NewThresholds(ts))
			if next != w {
				changes++
			}
			w = next
		}
		worst = max(worst, changes)
		// T loses known bits at most 64 times; each of the four bounds
		// moves outward to a threshold or a limit, possibly snapped onto T.
		if limit := 64 + 4*2*(len(ts)+2); changes > limit {
			t.Fatalf("chain changed %d times (limit %d), thresholds %v, at %v", changes, limit, ts, w)
		}
	}
	t.Logf("most changes in a chain: %d", worst)
}

// TestWidenLoops runs the loop-head iteration of small counting loops.
func TestWidenLoops(t *testing.T) {
	for _, tc := range []struct {
		name  string
		init  Value
		step  func(Value) Value
		thr   []uint64
		wantU [2]uint64
	}{
		{"i++", Const(0), func(v Value) Value { return ALU(Add, true, v, Const(1)) }, nil, [2]uint64{0, maxU64}},
		{"i++ to 100", Const(0), func(v Value) Value {
			v, _, _ = Refine(JLt, false, v, Const(100), true)
			return ALU(Add, true, v, Const(1))
		}, []uint64{99, 100, 101}, [2]uint64{0, 100}},
		{"w++", Const(0), func(v Value) Value { return ALU(Add, false, v, Const(1)) }, nil, [2]uint64{0, m32}},
		{"i<<=1", Const(1), func(v Value) Value { return ALU(Lsh, true, v, Const(1)) }, nil, [2]uint64{0, maxU64}},
		{"i-=3", Const(1000), func(v Value) Value { return ALU(Sub, true, v, Const(3)) }, nil, [2]uint64{0, maxU64}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := tc.init
			for i := 0; ; i++ {
				if i > 20 {
					t.Fatalf("no fixpoint after 20 rounds: %v", v)
				}
				next := v.Widen(v.Join(tc.step(v)), NewThresholds(tc.thr))
				if next == v {
					break
				}
				v = next
			}
			if v.Umin != tc.wantU[0] || v.Umax != tc.wantU[1] {
				t.Errorf("fixpoint %v, want umin=%#x umax=%#x", v, tc.wantU[0], tc.wantU[1])
			}
		})
	}
}

// TestTnumSnap checks nextGE and prevLE against a brute-force search on
// 8-bit tnums.
func TestTnumSnap(t *testing.T) {
	for m := range uint64(256) {
		for v := range uint64(256) {
			if v&m != 0 {
				continue
			}
			tn := Tnum{v, m}
			for x := range uint64(256) {
				want, found := uint64(0), false
				for y := x; y < 256; y++ {
					if tn.contains(y) {
						want, found = y, true
						break
					}
				}
				got, ok := nextGE(tn, x)
				if ok != found || (ok && got != want) {
					t.Fatalf("nextGE(%v, %#x) = %#x, %v; want %#x, %v", tn, x, got, ok, want, found)
				}
				// In 64 bits, a value below 256 is preceded by matches only
				// below it, so prevLE is checked the same way.
				want, found = 0, false
				for y := int(x); y >= 0; y-- {
					if tn.contains(uint64(y)) {
						want, found = uint64(y), true
						break
					}
				}
				got, ok = prevLE(tn, x)
				if ok != found || (ok && got != want) {
					t.Fatalf("prevLE(%v, %#x) = %#x, %v; want %#x, %v", tn, x, got, ok, want, found)
				}
			}
		}
	}
}

// ---- Precision ----

// bounds is the expected ranges of a result.
type bounds struct {
	umin, umax uint64
	smin, smax int64
}

func ub(lo, hi uint64) bounds {
	v := Range(lo, hi)
	return bounds{v.Umin, v.Umax, v.Smin, v.Smax}
}

func sb(lo, hi int64) bounds {
	v := SRange(lo, hi)
	return bounds{v.Umin, v.Umax, v.Smin, v.Smax}
}

func boundsOf(v Value) bounds { return bounds{v.Umin, v.Umax, v.Smin, v.Smax} }

func TestALUPrecision(t *testing.T) {
	const (
		minI64 = math.MinInt64
		maxI64 = math.MaxInt64
	)
	neg := func(x int64) Value { return Const(uint64(x)) }
	for _, tc := range []struct {
		name     string
		op       Op
		alu64    bool
		dst, src Value
		want     bounds
	}{
		{"add range+const", Add, true, Range(0, 1000), Const(5), ub(5, 1005)},
		{"add ranges", Add, true, Range(0, 10), Range(100, 200), ub(100, 210)},
		{"add signed ranges", Add, true, SRange(-500, 500), Const(1000), ub(500, 1500)},
		{"add wraps unsigned only", Add, true, Range(maxU64-5, maxU64), Range(0, 10), sb(-6, 9)},
		{"add wraps both", Add, true, Unknown(), Const(1), ub(0, maxU64)},
		{"sub range-const", Sub, true, Range(100, 2000), Const(50), ub(50, 1950)},
		{"sub crosses zero", Sub, true, Range(0, 100), Const(1), sb(-1, 99)},
		{"sub ranges", Sub, true, Range(100, 200), Range(0, 50), ub(50, 200)},
		{"neg", Neg, true, Range(1, 100), Value{}, sb(-100, -1)},
		{"mul small", Mul, true, Range(0, 10), Range(0, 20), ub(0, 200)},
		{"mul ranges", Mul, true, Range(10, 1000), Range(3, 1000), ub(30, 1000000)},
		{"mul signed", Mul, true, SRange(-100, 100), Const(3), sb(-300, 300)},
		{"div const", Div, true, Range(100, 2000), Const(10), ub(10, 200)},
		{"div unknown by const", Div, true, Unknown(), Const(10), ub(0, maxU64/10)},
		{"div by range with 0", Div, true, Range(100, 200), Range(0, 10), ub(0, 200)},
		{"div pow2", Div, true, Range(0, 4095), Const(16), ub(0, 255)},
		{"mod const", Mod, true, Unknown(), Const(10), ub(0, 9)},
		{"mod small dividend", Mod, true, Range(0, 5), Range(10, 20), ub(0, 5)},
		{"mod same block", Mod, true, Range(1010, 1090), Const(100), ub(10, 90)},
		{"mod by range", Mod, true, Unknown(), Range(1, 64), ub(0, 63)},
		{"mod by 0 keeps dst", Mod, true, Range(500, 600), Range(0, 10), ub(0, 600)},
		{"sdiv", SDiv, true, SRange(-100, 100), Const(10), sb(-10, 10)},
		{"sdiv by negative", SDiv, true, SRange(-100, 50), neg(-10), sb(-5, 10)},
		{"sdiv min by -1", SDiv, true, SRange(minI64, minI64+100), neg(-1), bounds{1<<63 - 100, 1 << 63, minI64, maxI64}},
		{"smod", SMod, true, SRange(-100, 100), Const(10), sb(-9, 9)},
		{"smod nonneg", SMod, true, Range(0, 1000), neg(-16), ub(0, 15)},
		{"smod small", SMod, true, SRange(-3, 3), Range(5, 10), sb(-3, 3)},
		{"and mask", And, true, Unknown(), Const(1023), ub(0, 1023)},
		{"and mask of range", And, true, Range(0, 100), Const(0xff00), ub(0, 0)},
		{"and signed mask", And, true, SRange(-50, 50), Const(0xff), ub(0, 0xff)},
		{"or const", Or, true, Range(0, 255), Const(256), ub(256, 511)},
		{"xor const", Xor, true, Range(0, 255), Const(0xff), ub(0, 255)},
		{"lsh const", Lsh, true, Range(0, 255), Const(4), ub(0, 255<<4)},
		{"lsh signed", Lsh, true, SRange(-100, 100), Const(2), bounds{0, maxU64 - 3, -400, 400}},
		{"lsh overflow", Lsh, true, Range(0, 1<<62), Const(4), bounds{0, maxU64 - 15, minI64, maxI64 - 15}},
		{"lsh range", Lsh, true, Range(1, 100), Range(0, 2), ub(1, 400)},
		{"lsh small sets", Lsh, true, Range(1, 3), Range(0, 2), ub(1, 12)},
		{"lsh masked count range", Lsh, true, Range(0, 100), Const(64 + 3), ub(0, 800)},
		{"lsh masked count", Lsh, true, Const(1), Const(64 + 3), ub(8, 8)},
		{"rsh const", Rsh, true, Unknown(), Const(60), ub(0, 15)},
		{"rsh range", Rsh, true, Range(256, 1023), Const(8), ub(1, 3)},
		{"arsh const", Arsh, true, SRange(-256, 255), Const(4), sb(-16, 15)},
		{"arsh unknown", Arsh, true, Unknown(), Const(63), sb(-1, 0)},
		{"movsx8", MovSX8, true, Value{}, Range(0, 0x7f), ub(0, 0x7f)},
		{"movsx8 unknown", MovSX8, true, Value{}, Unknown(), sb(-128, 127)},
		{"movsx16 negative", MovSX16, true, Value{}, Range(0x8000, 0x80ff), sb(-0x8000, -0x7f01)},
		{"movsx32", MovSX32, true, Value{}, Unknown(), sb(math.MinInt32, math.MaxInt32)},
		{"le16", Le16, true, Unknown(), Value{}, ub(0, 0xffff)},
		{"le32", Le32, false, Unknown(), Value{}, ub(0, m32)},
		{"le64", Le64, false, SRange(-5, 5), Value{}, sb(-5, 5)},
		{"be16", Be16, false, Range(0, 0xff), Value{}, ub(0, 0xff00)},
		{"bswap32", Bswap32, true, Range(0, 0xffff), Value{}, ub(0, 0xffff0000)},
		{"bswap64", Bswap64, true, Range(0, 0xff), Value{}, bounds{0, 0xff << 56, minI64, 0x7f << 56}},

		{"add32", Add, false, Range(0, 1000), Const(5), ub(5, 1005)},
		{"add32 unknown", Add, false, Unknown(), Const(1), ub(0, m32)},
		{"add32 minus one", Add, false, Range(1, 1000), neg(-1), ub(0, 999)},
		{"add32 signed low bits", Add, false, SRange(-500, 500), Const(1000), ub(500, 1500)},
		{"add32 upper ignored", Add, false, Range(1<<32, 1<<32+1000), Const(5), ub(5, 1005)},
		{"add32 wraps all", Add, false, Range(m32-100, m32), Const(200), ub(99, 199)},
		{"add32 wraps some", Add, false, Range(m32-100, m32), Range(0, 200), ub(0, m32)},
		{"add32 sext view", Add, false, SRange(-1000, -500), Const(2000), ub(1000, 1500)},
		{"sub32", Sub, false, Range(100, 200), Const(50), ub(50, 150)},
		{"and32", And, false, Unknown(), Const(0xff), ub(0, 0xff)},
		{"mul32", Mul, false, Range(0, 100), Range(0, 100), ub(0, 10000)},
		{"lsh32", Lsh, false, Range(0, 0xff), Const(24), ub(0, 0xff000000)},
		{"lsh32 masked count", Lsh, false, Const(1), Const(32 + 4), ub(16, 16)},
		{"rsh32", Rsh, false, Unknown(), Const(28), ub(0, 15)},
		{"arsh32", Arsh, false, SRange(-16, 15), Const(2), ub(0, m32)},
		{"arsh32 nonneg", Arsh, false, Range(0, 1000), Const(2), ub(0, 250)},
		{"div32", Div, false, Unknown(), Const(16), ub(0, m32>>4)},
		{"mod32", Mod, false, Unknown(), Const(10), ub(0, 9)},
		{"mod32 by 0 keeps low bits", Mod, false, Range(1<<32, 1<<32+5), Const(0), ub(0, 5)},
		{"sdiv32 min by -1", SDiv, false, Const(0x80000000), neg(-1), ub(0x80000000, 0x80000000)},
		{"smod32 min by -1", SMod, false, Const(0x80000000), neg(-1), ub(0, 0)},
		{"smod32", SMod, false, Range(0, 1000), Const(7), ub(0, 6)},
		{"mov32", Mov, false, Value{}, Range(1<<32, 1<<32+7), ub(0, 7)},
		{"mov32 range", Mov, false, Value{}, Range(1<<32, 1<<32+1000), ub(0, 1000)},
		{"mov32 negative", Mov, false, Value{}, SRange(-1, 0), ub(0, m32)},
		{"movsx8 32", MovSX8, false, Value{}, Range(0, 0x7f), ub(0, 0x7f)},
		{"movsx16 32 negative", MovSX16, false, Value{}, Const(0x8000), ub(0xffff8000, 0xffff8000)},
		{"neg32", Neg, false, Range(1, 10), Value{}, ub(0xfffffff6, 0xffffffff)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			watchEmpty(t)
			got := ALU(tc.op, tc.alu64, tc.dst, tc.src)
			if boundsOf(got) != tc.want {
				t.Errorf("%v alu64=%v (%v, %v) = %v %+v, want %+v", tc.op, tc.alu64, tc.dst, tc.src, got, boundsOf(got), tc.want)
			}
		})
	}
}

func TestALUTnumPrecision(t *testing.T) {
	for _, tc := range []struct {
		name     string
		op       Op
		dst, src Value
		want     Tnum
	}{
		{"and", And, Unknown(), Const(0xf0), Tnum{0, 0xf0}},
		{"or", Or, Unknown(), Const(0xf), Tnum{0xf, ^uint64(0xf)}},
		{"lsh", Lsh, Unknown(), Const(3), Tnum{0, ^uint64(7)}},
		{"mul by 8", Mul, Unknown(), Const(8), Tnum{0, ^uint64(7)}},
		{"xor", Xor, Range(0, 0xff), Const(0x100), Tnum{0x100, 0xff}},
		{"mod pow2", Mod, Unknown(), Const(64), Tnum{0, 63}},
		{"add aligned", Add, fromT(Tnum{0, 0xf0}), Const(4), Tnum{4, 0xf0}},
		{"be16", Be16, fromT(Tnum{0x12, 0x0f00}), Value{}, Tnum{0x1200, 0x0f}},
	} {
		if got := ALU(tc.op, true, tc.dst, tc.src); got.T != tc.want {
			t.Errorf("%s: T = %v, want %v (%v)", tc.name, got.T, tc.want, got)
		}
	}
}

func TestRefinePrecision(t *testing.T) {
	neg := func(x int64) Value { return Const(uint64(x)) }
	for _, tc := range []struct {
		name       string
		c          Cond
		jmp32      bool
		a, b       Value
		taken      bool
		wantA      bounds
		wantB      bounds // zero: not checked
		infeasible bool
	}{
		{"jgt const taken", JGt, false, Unknown(), Const(10), true, ub(11, maxU64), bounds{}, false},
		{"jgt const not", JGt, false, Unknown(), Const(10), false, ub(0, 10), bounds{}, false},
		{"jge const taken", JGe, false, Unknown(), Const(10), true, ub(10, maxU64), bounds{}, false},
		{"jge const not", JGe, false, Unknown(), Const(10), false, ub(0, 9), bounds{}, false},
		{"jlt const taken", JLt, false, Unknown(), Const(10), true, ub(0, 9), bounds{}, false},
		{"jlt const not", JLt, false, Unknown(), Const(10), false, ub(10, maxU64), bounds{}, false},
		{"jle const taken", JLe, false, Unknown(), Const(10), true, ub(0, 10), bounds{}, false},
		{"jle const not", JLe, false, Unknown(), Const(10), false, ub(11, maxU64), bounds{}, false},
		{"jsgt const taken", JSGt, false, Unknown(), neg(-1), true, sb(0, math.MaxInt64), bounds{}, false},
		{"jsgt const not", JSGt, false, Unknown(), Const(5), false, sb(math.MinInt64, 5), bounds{}, false},
		{"jsge const taken", JSGe, false, Unknown(), neg(-5), true, sb(-5, math.MaxInt64), bounds{}, false},
		{"jslt const taken", JSLt, false, Unknown(), Const(0), true, sb(math.MinInt64, -1), bounds{}, false},
		{"jslt const not", JSLt, false, SRange(-100, 100), Const(0), false, sb(0, 100), bounds{}, false},
		{"jsle const taken", JSLe, false, SRange(-100, 100), neg(-10), true, sb(-100, -10), bounds{}, false},
		{"jsle const not", JSLe, false, SRange(-100, 100), neg(-10), false, sb(-9, 100), bounds{}, false},
		{"signed on unsigned range", JSLt, false, Range(0, maxU64), Const(100), true, sb(math.MinInt64, 99), bounds{}, false},
		{"jeq const", JEq, false, Unknown(), Const(42), true, ub(42, 42), ub(42, 42), false},
		{"jeq const out of range", JEq, false, Range(0, 10), Const(42), true, bounds{}, bounds{}, true},
		{"jeq const not", JEq, false, Range(0, 10), Const(0), false, ub(1, 10), bounds{}, false},
		{"jne const taken low", JNe, false, Range(0, 10), Const(0), true, ub(1, 10), bounds{}, false},
		{"jne const taken high", JNe, false, Range(0, 10), Const(10), true, ub(0, 9), bounds{}, false},
		{"jne const inside", JNe, false, Range(0, 10), Const(5), true, ub(0, 10), bounds{}, false},
		{"jne const not", JNe, false, Range(0, 10), Const(5), false, ub(5, 5), bounds{}, false},
		{"jne const equal const", JNe, false, Const(5), Const(5), true, bounds{}, bounds{}, true},
		{"jne signed edge", JNe, false, SRange(-10, 10), neg(-10), true, sb(-9, 10), bounds{}, false},
		{"const on the left", JLt, false, Const(10), Unknown(), true, ub(10, 10), ub(11, maxU64), false},
		{"const on the left signed", JSGe, false, neg(-3), SRange(-100, 100), false, sb(-3, -3), sb(-2, 100), false},
		{"jset bit taken", JSet, false, Range(0, 15), Const(8), true, ub(8, 15), bounds{}, false},
		{"jset bit not", JSet, false, Range(0, 15), Const(8), false, ub(0, 7), bounds{}, false},
		{"jset impossible", JSet, false, Range(0, 7), Const(8), true, bounds{}, bounds{}, true},
		{"jset sign bit", JSet, false, Unknown(), Const(1 << 63), true, sb(math.MinInt64, -1), bounds{}, false},
		{"jset mask not", JSet, false, Range(0, 0xff), Const(0xf0), false, ub(0, 0x0f), bounds{}, false},
		{"reg lt", JLt, false, Range(0, 100), Range(50, 60), true, ub(0, 59), ub(50, 60), false},
		{"reg gt", JGt, false, Range(0, 100), Range(50, 60), true, ub(51, 100), ub(50, 60), false},
		{"reg ge not", JGe, false, Range(0, 100), Range(50, 60), false, ub(0, 59), ub(50, 60), false},
		{"reg le both", JLe, false, Range(40, 100), Range(0, 60), true, ub(40, 60), ub(40, 60), false},
		{"reg slt", JSLt, false, SRange(-100, 100), SRange(-50, -40), true, sb(-100, -41), sb(-50, -40), false},
		{"reg eq", JEq, false, Range(0, 100), Range(50, 200), true, ub(50, 100), ub(50, 100), false},
		{"reg disjoint", JLt, false, Range(0, 10), Range(20, 30), false, bounds{}, bounds{}, true},
		{"jlt32 zext", JLt, true, Range(0, m32), Const(10), true, ub(0, 9), bounds{}, false},
		{"jlt32 upper fixed", JLt, true, Range(1<<32, 1<<33-1), Const(10), true, ub(1<<32, 1<<32+9), bounds{}, false},
		{"jsgt32", JSGt, true, Range(0, m32), Const(0), true, ub(1, 0x7fffffff), bounds{}, false},
		{"jslt32 sext", JSLt, true, SRange(-1000, 1000), Const(0), true, sb(-1000, -1), bounds{}, false},
		{"jeq32", JEq, true, Range(5<<32, 5<<32+m32), Const(7), true, ub(5<<32+7, 5<<32+7), bounds{}, false},
		{"jeq32 imm sign-extended", JEq, true, Range(0, m32), neg(-1), true, ub(m32, m32), bounds{}, false},
		{"jeq32 impossible", JEq, true, Range(0, 10), Const(1<<32 + 20), true, bounds{}, bounds{}, true},
		{"jset32 bit", JSet, true, Range(0, 15), Const(1<<32 | 8), true, ub(8, 15), bounds{}, false},
		{"jset32 upper bit only", JSet, true, Unknown(), Const(1 << 40), true, bounds{}, bounds{}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a2, b2, ok := Refine(tc.c, tc.jmp32, tc.a, tc.b, tc.taken)
			if ok == tc.infeasible {
				t.Fatalf("feasible = %v, want %v (%v, %v)", ok, !tc.infeasible, a2, b2)
			}
			if !ok {
				return
			}
			if boundsOf(a2) != tc.wantA {
				t.Errorf("a: %v %+v, want %+v", a2, boundsOf(a2), tc.wantA)
			}
			if tc.wantB != (bounds{}) && boundsOf(b2) != tc.wantB {
				t.Errorf("b: %v %+v, want %+v", b2, boundsOf(b2), tc.wantB)
			}
		})
	}
}

func TestRefineTnum(t *testing.T) {
	// JSet with a single bit sets or clears that bit of T.
	a, _, _ := Refine(JSet, false, Unknown(), Const(4), true)
	if a.T != (Tnum{4, ^uint64(4)}) {
		t.Errorf("jset 4 taken: T = %v", a.T)
	}
	a, _, _ = Refine(JSet, false, Unknown(), Const(1), false)
	if a.T != (Tnum{0, ^uint64(1)}) {
		t.Errorf("jset 1 not taken: T = %v", a.T)
	}
	a, _, _ = Refine(JSet, true, Unknown(), Const(1), false)
	if a.T != (Tnum{0, ^uint64(1)}) {
		t.Errorf("jset32 1 not taken: T = %v", a.T)
	}
	// jeq32 with a constant fixes the low 32 bits of an unknown value.
	a, _, _ = Refine(JEq, true, Unknown(), Const(0x1234), true)
	if a.T != (Tnum{0x1234, 0xffffffff00000000}) {
		t.Errorf("jeq32 taken: T = %v", a.T)
	}
}

func TestDecide(t *testing.T) {
	neg := func(x int64) Value { return Const(uint64(x)) }
	for _, tc := range []struct {
		c             Cond
		jmp32         bool
		a, b          Value
		always, never bool
	}{
		{JEq, false, Const(5), Const(5), true, false},
		{JEq, false, Range(0, 10), Const(20), false, true},
		{JNe, false, Range(0, 10), Const(20), true, false},
		{JGt, false, Range(0, 10), Const(20), false, true},
		{JGt, false, Range(30, 40), Range(0, 29), true, false},
		{JGe, false, Range(0, 10), Range(10, 20), false, false},
		{JLt, false, Range(0, 10), Range(11, 20), true, false},
		{JLe, false, Range(11, 20), Range(0, 10), false, true},
		{JSGt, false, SRange(-10, -1), Const(0), false, true},
		{JSLt, false, SRange(-10, -1), Const(0), true, false},
		{JSGe, false, Range(0, 100), neg(-1), true, false},
		{JSet, false, Range(0, 7), Const(8), false, true},
		{JSet, false, Range(8, 15), Const(8), true, false},
		{JSet, false, Range(0, 15), Const(8), false, false},
		{JEq, true, Const(0x100000005), Const(5), true, false},
		{JLt, true, Range(1<<32, 1<<32+9), Const(10), true, false},
		{JSLt, true, Const(0xffffffff), Const(0), true, false},
		{JGt, true, Range(0, 0xff), Const(0x100), false, true},
		{JGe, false, Unknown(), Unknown(), false, false},
	} {
		always, never := Decide(tc.c, tc.jmp32, tc.a, tc.b)
		if always != tc.always || never != tc.never {
			t.Errorf("Decide(%v, jmp32=%v, %v, %v) = %v, %v; want %v, %v", tc.c, tc.jmp32, tc.a, tc.b, always, never, tc.always, tc.never)
		}
	}
}

func TestConstructors(t *testing.T) {
	for _, tc := range []struct {
		name string
		have Value
		want bounds
	}{
		{"range", Range(5, 10), bounds{5, 10, 5, 10}},
		{"range wraps to a signed range", Range(uint64(math.MaxUint64-4), 5), bounds{0, maxU64, -5, 5}},
		{"range wraps both ways", Range(10, 5), bounds{0, maxU64, math.MinInt64, math.MaxInt64}},
		{"srange negative", SRange(-10, -5), bounds{uint64(1<<64 - 10), uint64(1<<64 - 5), -10, -5}},
		{"srange wraps to an unsigned range", SRange(math.MaxInt64-1, math.MinInt64+1), bounds{math.MaxInt64 - 1, 1<<63 + 1, math.MinInt64, math.MaxInt64}},
		{"zero Value is 0", Value{}.Join(Const(0)), bounds{}},
	} {
		if boundsOf(tc.have) != tc.want {
			t.Errorf("%s: %+v, want %+v", tc.name, tc.have, tc.want)
		}
	}
	if c, ok := Const(7).Const(); !ok || c != 7 {
		t.Errorf("Const(7).Const() = %v, %v", c, ok)
	}
	if _, ok := Range(1, 2).Const(); ok {
		t.Errorf("Range(1, 2) is not a constant")
	}
	// Hand-built values: an inconsistent one reads as Unknown, a loose one
	// is reduced.
	if got := ALU(Add, true, Value{Umin: 10, Umax: 5}, Const(0)); got != Unknown() {
		t.Errorf("empty hand-built value: %v", got)
	}
	if got := ALU(Mov, true, Value{}, Value{Umin: 3, Umax: 9, Smin: math.MinInt64, Smax: math.MaxInt64, T: tnumUnknown}); got != Range(3, 9) {
		t.Errorf("hand-built range: %v", got)
	}
}

func TestJoinWidenPrecision(t *testing.T) {
	if got := Const(1).Join(Const(3)); boundsOf(got) != ub(1, 3) || got.T != (Tnum{1, 2}) {
		t.Errorf("1 ⊔ 3 = %v", got)
	}
	if got := Range(0, 10).Join(SRange(-5, -1)); boundsOf(got) != sb(-5, 10) {
		t.Errorf("[0,10] ⊔ [-5,-1] = %v", got)
	}
	thr := []uint64{100, 10, 1000, uint64(1<<64 - 8)}
	if got := Range(0, 5).Widen(Range(0, 7), NewThresholds(thr)); got.Umax != 10 {
		t.Errorf("widen to threshold: %v", got)
	}
	if got := Range(0, 5).Widen(Range(1, 4), NewThresholds(thr)); got != Range(0, 5) {
		t.Errorf("widen by a smaller value: %v", got)
	}
	// Past the thresholds, the limits: int32, uint32, int64, uint64.
	v := Range(0, 5)
	for _, step := range []struct{ next, want uint64 }{
		{2000, math.MaxInt32}, {1 << 31, m32}, {1 << 32, math.MaxInt64}, {1 << 63, maxU64},
	} {
		v = v.Widen(Range(0, step.next), NewThresholds(nil))
		if v.Umax != step.want {
			t.Errorf("widen to %#x: %v, want umax %#x", step.next, v, step.want)
		}
	}
	if got := SRange(-5, 5).Widen(SRange(-10, 5), NewThresholds(nil)); got.Smin != math.MinInt32 {
		t.Errorf("widen of smin: %v", got)
	}
	// 32-bit values widen to the 32-bit limit; a stride keeps its alignment.
	w := ALU(Add, false, Unknown(), Const(0))
	if got := Range(0, 5).Widen(w, NewThresholds(nil)); got.Umax != m32 {
		t.Errorf("widen of 32-bit values: %v", got)
	}
	if got := Const(0).Widen(Const(0).Join(Const(8)), NewThresholds(nil)); got.T != (Tnum{0, 0x7ffffff8}) {
		t.Errorf("widen of a stride: %v", got)
	}
}

func TestString(t *testing.T) {
	for _, tc := range []struct {
		have Value
		want string
	}{
		{Const(42), "42"},
		{Const(maxU64), "-1"},
		{Const(0xdeadbeef), "0xdeadbeef"},
		{Const(1 << 63), "-0x8000000000000000"},
		{Range(0, 255), "scalar(umin=0,umax=255,var_off=(0x0; 0xff))"},
		{Range(1, 10), "scalar(umin=1,umax=10,var_off=(0x0; 0xf))"},
		{Unknown(), "scalar()"},
		{SRange(-5, 5), "scalar(smin=-5,smax=5)"},
		{SRange(-100, -1), "scalar(smin=-100,smax=-1,var_off=(0xffffffffffffff80; 0x7f))"},
		{SRange(math.MinInt64, -1), "scalar(smin=-0x8000000000000000,smax=-1,var_off=(0x8000000000000000; 0x7fffffffffffffff))"},
		{Range(0, m32), "scalar(umin=0,umax=0xffffffff,var_off=(0x0; 0xffffffff))"},
		{Range(1<<63-2, 1<<63+1), "scalar(umin=0x7ffffffffffffffe,umax=0x8000000000000001)"},
		{fromT(Tnum{0, 0xf0}), "scalar(umin=0,umax=240,var_off=(0x0; 0xf0))"},
	} {
		if got := tc.have.String(); got != tc.want {
			t.Errorf("%+v: %q, want %q", tc.have, got, tc.want)
		}
	}
	if Add.String() != "add" || Bswap64.String() != "bswap64" || JSet.String() != "jset" || Op(200).String() != "Op(200)" {
		t.Errorf("enum names")
	}
}

// TestOutOfRange: bad enums give Unknown or refine nothing, never a panic.
func TestOutOfRange(t *testing.T) {
	if got := ALU(numOps, true, Const(1), Const(2)); got != Unknown() {
		t.Errorf("ALU(bad op) = %v", got)
	}
	a, b, ok := Refine(numConds, false, Const(1), Const(2), true)
	if !ok || a != Const(1) || b != Const(2) {
		t.Errorf("Refine(bad cond) = %v %v %v", a, b, ok)
	}
	if always, never := Decide(numConds, true, Const(1), Const(2)); always || never {
		t.Errorf("Decide(bad cond)")
	}
}

// TestLow32 checks the ranges of the low 32 bits, which keep JMP32 and
// ALU32 precise on values the 64-bit ranges can only cover coarsely.
func TestLow32(t *testing.T) {
	must := func(a, _ Value, ok bool) Value {
		t.Helper()
		if !ok {
			t.Fatal("infeasible")
		}
		return a
	}
	// jsgt32 60 falls through, jslt32 0 falls through: 0..60.
	x := Range(0, m32)
	x = must(Refine(JSGt, true, x, Const(60), false))
	if x.Umax != m32 {
		t.Fatalf("after s32 <= 60: %v", x)
	}
	x = must(Refine(JSLt, true, x, Const(0), false))
	if boundsOf(x) != ub(0, 60) {
		t.Errorf("after s32 in 0..60: %v", x)
	}

	// A 32-bit move of a small signed range keeps it as s32.
	w := ALU(Mov, false, Value{}, SRange(-1000, 1000))
	if boundsOf(w) != ub(0, m32) {
		t.Fatalf("mov32: %v", w)
	}
	if got := ALU(Add, false, w, Const(1000)); boundsOf(got) != ub(0, 2000) {
		t.Errorf("add32 on an s32 range: %v", got)
	}
	if got := must(Refine(JSGe, true, w, Const(0), true)); boundsOf(got) != ub(0, 1000) {
		t.Errorf("jsge32 0 on an s32 range: %v", got)
	}
	if _, never := Decide(JSGt, true, w, Const(1000)); !never {
		t.Errorf("jsgt32 1000 on s32 -1000..1000 should never hold")
	}
	if got := w.String(); got != "scalar(umin=0,umax=0xffffffff,smin32=-1000,smax32=1000,var_off=(0x0; 0xffffffff))" {
		t.Errorf("String: %q", got)
	}

	// A 64-bit add carries the low 32 bits along.
	y := must(Refine(JSLe, true, Unknown(), Const(60), true))
	y = must(Refine(JSGe, true, y, Const(0), true))
	y = ALU(Add, true, y, Const(1))
	if got := ALU(Mov, false, Value{}, y); boundsOf(got) != ub(1, 61) {
		t.Errorf("low half after a 64-bit add: %v (from %v)", got, y)
	}

	// The low range pins the 64-bit range where the upper half is fixed.
	z := must(Refine(JLt, true, Range(3<<32, 4<<32-1), Const(10), true))
	if boundsOf(z) != ub(3<<32, 3<<32+9) {
		t.Errorf("jlt32 with the upper half fixed: %v", z)
	}
	// ... and the bounds skip the blocks where no low half fits.
	z = must(Refine(JGt, true, Range(5, 3<<32+5), Const(100), false))
	if z.Umin != 5 || z.Umax != 3<<32+5 {
		t.Errorf("jle32 100: %v", z)
	}
	z = must(Refine(JGt, true, Range(200, 3<<32+50), Const(100), true))
	if z.Umin != 200 || z.Umax != 2<<32+m32 {
		t.Errorf("jgt32 100: %v", z)
	}
}

// TestMembers checks nextMember and prevMember against enumeration on
// tnums with a few unknown bits in each half.
func TestMembers(t *testing.T) {
	e := newRNG(6)
	for range 3000 {
		var mask uint64
		for range 6 {
			mask |= 1 << (e.n(5) + 29*e.n(2))
		}
		tn := Tnum{e.word() &^ mask, mask}
		a, b := uint32(e.word()), uint32(e.word())
		ps := [2]span32{{min(a, b), max(a, b)}}
		n := 1
		if e.n(2) == 0 {
			c := uint32(e.word())
			ps = [2]span32{{0, min(a, b, c)}, {max(a, b, c), math.MaxUint32}}
			n = 2
		}
		var all []uint64
		for sub := uint64(0); ; sub = (sub - mask) & mask {
			x := tn.Value | sub
			for _, p := range ps[:n] {
				if l := uint32(x); p.lo <= l && l <= p.hi {
					all = append(all, x)
				}
			}
			if sub == mask {
				break
			}
		}
		for range 20 {
			x := e.word()
			if len(all) > 0 && e.n(2) == 0 {
				x = all[e.n(len(all))] + uint64(e.n(3)) - 1
			}
			wantNext, wantPrev, okNext, okPrev := maxU64, uint64(0), false, false
			for _, y := range all {
				if y >= x && y <= wantNext {
					wantNext, okNext = y, true
				}
				if y <= x && y >= wantPrev {
					wantPrev, okPrev = y, true
				}
			}
			if got, ok := nextMember(tn, ps, n, x); ok != okNext || (ok && got != wantNext) {
				t.Fatalf("nextMember(%v, %v, %#x) = %#x, %v; want %#x, %v", tn, ps[:n], x, got, ok, wantNext, okNext)
			}
			if got, ok := prevMember(tn, ps, n, x); ok != okPrev || (ok && got != wantPrev) {
				t.Fatalf("prevMember(%v, %v, %#x) = %#x, %v; want %#x, %v", tn, ps[:n], x, got, ok, wantPrev, okPrev)
			}
		}
	}
}

// widenLinear is Widen as a scan over an unsorted threshold list: the
// reference the binary searches of Thresholds must agree with.
func widenLinear(v, next Value, thresholds []uint64) Value {
	v, next = v.sane(), next.sane()
	w := v
	if next.Umin < v.Umin {
		w.Umin = 0
		for _, t := range thresholds {
			if t <= next.Umin && t > w.Umin {
				w.Umin = t
			}
		}
	}
	if next.Umax > v.Umax {
		w.Umax = maxU64
		for _, t := range append(thresholds[:len(thresholds):len(thresholds)], maxU32) {
			if t >= next.Umax && t < w.Umax {
				w.Umax = t
			}
		}
	}
	if next.Smin < v.Smin {
		w.Smin = math.MinInt64
		for _, t := range append(thresholds[:len(thresholds):len(thresholds)], minInt32U, 0) {
			if s := int64(t); s <= next.Smin && s > w.Smin {
				w.Smin = s
			}
		}
	}
	if next.Smax > v.Smax {
		w.Smax = math.MaxInt64
		for _, t := range append(thresholds[:len(thresholds):len(thresholds)], math.MaxInt32, maxU32) {
			if s := int64(t); s >= next.Smax && s < w.Smax {
				w.Smax = s
			}
		}
	}
	w.lo = widenLow32Linear(v.lo, next.lo, thresholds)
	return widenT(v, next, w)
}

// widenLow32 widens the 32-bit ranges as Widen does the 64-bit ones, with
// the thresholds that fit in 32 bits (unsigned, or as int64 in int32).
func widenLow32Linear(v, next low32, thresholds []uint64) low32 {
	vu0, vu1, vs0, vs1 := v.bounds()
	nu0, nu1, ns0, ns1 := next.bounds()
	u0, u1, s0, s1 := vu0, vu1, vs0, vs1
	if nu0 < vu0 {
		u0 = 0
		for _, t := range thresholds {
			if t <= uint64(nu0) && t > uint64(u0) {
				u0 = uint32(t)
			}
		}
	}
	if nu1 > vu1 {
		u1 = math.MaxUint32
		for _, t := range thresholds {
			if t >= uint64(nu1) && t < uint64(u1) {
				u1 = uint32(t)
			}
		}
	}
	if ns0 < vs0 {
		s0 = math.MinInt32
		for _, t := range append(thresholds[:len(thresholds):len(thresholds)], 0) {
			if x := int64(t); x <= int64(ns0) && x > int64(s0) {
				s0 = int32(x)
			}
		}
	}
	if ns1 > vs1 {
		s1 = math.MaxInt32
		for _, t := range thresholds {
			if x := int64(t); x >= int64(ns1) && x < int64(s1) {
				s1 = int32(x)
			}
		}
	}
	return mkLow32(u0, u1, s0, s1)
}

// TestWidenMatchesLinear: the sorted lookups give what a scan over every
// threshold gives, for thresholds near the 32- and 64-bit limits too.
func TestWidenMatchesLinear(t *testing.T) {
	e := newRNG(9)
	edges := []uint64{0, 1, 2, maxU32 - 1, maxU32, maxU32 + 1, minInt32U, minInt32U - 1, minInt32U + 1,
		1<<31 - 1, 1 << 31, 1<<63 - 1, 1 << 63, 1<<63 + 1, maxU64 - 1, maxU64}
	for i := range 40000 {
		ts := genThresholds(e)
		if i%3 == 0 {
			for range e.n(4) {
				ts = append(ts, edges[e.n(len(edges))])
			}
		}
		a, b := genValue(e, 1), genValue(e, 1)
		want := widenLinear(a, b, ts)
		if got := a.Widen(b, NewThresholds(slices.Clone(ts))); got != want {
			t.Fatalf("thresholds %#x\n a=%+v\n b=%+v\n sorted=%+v\n linear=%+v", ts, a, b, got, want)
		}
		var spread []uint64
		for _, c := range ts {
			spread = append(spread, c-1, c, c+1)
		}
		want = widenLinear(a, b, spread)
		if got := a.Widen(b, NewSpreadThresholds(slices.Clone(ts))); got != want {
			t.Fatalf("spread thresholds %#x\n a=%+v\n b=%+v\n sorted=%+v\n linear=%+v", ts, a, b, got, want)
		}
	}
}
