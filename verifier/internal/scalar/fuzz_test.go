package scalar

import (
	"encoding/binary"
	"testing"
)

// fuzzValue builds an abstract value from the fuzzer's bytes: mostly through
// the generator, sometimes as raw fields (which may be inconsistent or
// empty: the package must take those without panicking).
func fuzzValue(e *bytesSource) Value {
	if e.n(8) == 0 {
		w := e.word()
		return Value{e.word(), e.word(), int64(e.word()), int64(e.word()), Tnum{e.word(), e.word()},
			low32{uint32(w), uint32(w >> 32), int32(e.word()), int32(e.word())}}
	}
	return genValue(e, 2)
}

func fuzzSeeds(f *testing.F) {
	f.Add([]byte{})
	f.Add([]byte{0, 1, 0, 0, 0, 0})
	for i := range 16 {
		seed := make([]byte, 64)
		for j := range seed {
			seed[j] = byte(i*31 + j*7)
		}
		binary.LittleEndian.PutUint64(seed[8:], uint64(i)<<60|0x7fffffff)
		f.Add(seed)
	}
}

// FuzzALU: for any operands the fuzzer builds, ALU, Join and Widen contain
// every concrete result, return reduced values, and never panic.
func FuzzALU(f *testing.F) {
	fuzzSeeds(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		watchEmpty(t)
		e := &bytesSource{data}
		op := Op(e.n(int(numOps) + 1)) // one past the end: must give Unknown
		alu64 := e.n(2) == 0
		a, b := fuzzValue(e), fuzzValue(e)
		thresholds := genThresholds(e)
		_ = a.String() + b.String()
		if op == numOps {
			if r := ALU(op, alu64, a, b); r != Unknown() {
				t.Fatalf("ALU(bad op) = %v", r)
			}
			return
		}
		// Sample from the reduced forms: a raw value reads as its reduced
		// form, or as Unknown when it is empty.
		checkALU(t, e, op, alu64, a.sane(), b.sane(), 16)
		if r1, r2 := ALU(op, alu64, a, b), ALU(op, alu64, a.sane(), b.sane()); r1 != r2 {
			t.Fatalf("raw and reduced operands give %v and %v", r1, r2)
		}
		checkJoinWiden(t, e, a.sane(), b.sane(), thresholds, 4)
	})
}

// FuzzRefine: for any operands the fuzzer builds, both outcomes of every
// comparison keep every concrete pair with that outcome, and Decide agrees.
func FuzzRefine(f *testing.F) {
	fuzzSeeds(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		watchEmpty(t)
		e := &bytesSource{data}
		c := Cond(e.n(int(numConds) + 1))
		jmp32 := e.n(2) == 0
		a, b := fuzzValue(e), fuzzValue(e)
		if e.n(4) == 0 {
			b = Const(member(e, b.sane()))
		}
		if c == numConds {
			if a2, b2, ok := Refine(c, jmp32, a, b, true); !ok || a2 != a.sane() || b2 != b.sane() {
				t.Fatalf("Refine(bad cond) = %v, %v, %v", a2, b2, ok)
			}
			return
		}
		checkRefine(t, e, c, jmp32, a.sane(), b.sane(), 16)
	})
}
