package naamgen

import (
	"fmt"
	"math/big"
)

// kind is a type's shape in the generator's own model of the language's
// types (it does not import lang, so that it can be used to test it).
type kind int

const (
	kBool kind = iota
	kU8
	kU16
	kU32
	kU64
	kI8
	kI16
	kI32
	kI64
	kArray
	kStruct
)

var kindNames = [...]string{"bool", "u8", "u16", "u32", "u64", "i8", "i16", "i32", "i64"}

// typ is a value type: a scalar, [elem; n] or a struct.
type typ struct {
	kind kind
	elem *typ // array
	n    int  // array
	st   *structDef
}

type structDef struct {
	name   string
	fields []*field
	size   int
	align  int
}

type field struct {
	name string
	t    *typ
	off  int
}

var scalars = func() []*typ {
	var ts []*typ
	for k := kBool; k <= kI64; k++ {
		ts = append(ts, &typ{kind: k})
	}
	return ts
}()

func scalar(k kind) *typ { return scalars[k] }

// intKinds are the integer types.
var intKinds = []kind{kU8, kU16, kU32, kU64, kI8, kI16, kI32, kI64}

func arrayOf(elem *typ, n int) *typ { return &typ{kind: kArray, elem: elem, n: n} }

func (t *typ) String() string {
	switch t.kind {
	case kArray:
		return fmt.Sprintf("[%s; %d]", t.elem, t.n)
	case kStruct:
		return t.st.name
	}
	return kindNames[t.kind]
}

func (t *typ) isInt() bool    { return t.kind >= kU8 && t.kind <= kI64 }
func (t *typ) isBool() bool   { return t.kind == kBool }
func (t *typ) isScalar() bool { return t.kind <= kI64 }
func (t *typ) signed() bool   { return t.kind >= kI8 && t.kind <= kI64 }
func (t *typ) bits() int      { return 8 * t.size() }

// comparable: == applies (scalars and arrays of them).
func (t *typ) comparable() bool {
	if t.kind == kArray {
		return t.elem.comparable()
	}
	return t.isScalar()
}

func (t *typ) size() int {
	switch t.kind {
	case kBool, kU8, kI8:
		return 1
	case kU16, kI16:
		return 2
	case kU32, kI32:
		return 4
	case kU64, kI64:
		return 8
	case kArray:
		return t.n * t.elem.size()
	}
	return t.st.size
}

func (t *typ) align() int {
	switch t.kind {
	case kArray:
		return t.elem.align()
	case kStruct:
		return t.st.align
	}
	return t.size()
}

func identical(a, b *typ) bool {
	if a.kind != b.kind {
		return false
	}
	switch a.kind {
	case kArray:
		return a.n == b.n && identical(a.elem, b.elem)
	case kStruct:
		return a.st == b.st
	}
	return true
}

func roundUp(n, a int) int { return (n + a - 1) / a * a }

// layout places fields as spec/language.md (Layout) says and returns the
// size and alignment.
func layout(fields []*field) (size, align int) {
	off, align := 0, 1
	for _, f := range fields {
		a := f.t.align()
		off = roundUp(off, a)
		f.off = off
		off += f.t.size()
		align = max(align, a)
	}
	return roundUp(off, align), align
}

// contains reports whether t is, or has a part that is, a type pred accepts.
func contains(t *typ, pred func(*typ) bool) bool {
	if pred(t) {
		return true
	}
	switch t.kind {
	case kArray:
		return contains(t.elem, pred)
	case kStruct:
		for _, f := range t.st.fields {
			if contains(f.t, pred) {
				return true
			}
		}
	}
	return false
}

// intRange returns the smallest and largest values of integer type t.
func intRange(t *typ) (lo, hi *big.Int) {
	n := uint(t.bits())
	one := big.NewInt(1)
	if t.signed() {
		hi = new(big.Int).Sub(new(big.Int).Lsh(one, n-1), one)
		lo = new(big.Int).Neg(new(big.Int).Lsh(one, n-1))
		return lo, hi
	}
	return big.NewInt(0), new(big.Int).Sub(new(big.Int).Lsh(one, n), one)
}

func fits(v *big.Int, t *typ) bool {
	if t.isBool() {
		return false
	}
	lo, hi := intRange(t)
	return v.Cmp(lo) >= 0 && v.Cmp(hi) <= 0
}

// wrap reduces v to t the way a cast does: keep the low bits, read them
// with t's signedness.
func wrap(v *big.Int, t *typ) *big.Int {
	n := uint(t.bits())
	mod := new(big.Int).Lsh(big.NewInt(1), n)
	w := new(big.Int).Mod(v, mod) // Mod is Euclidean: 0 <= w < mod
	if t.signed() && w.Cmp(new(big.Int).Rsh(mod, 1)) >= 0 {
		w.Sub(w, mod)
	}
	return w
}
