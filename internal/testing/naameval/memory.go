package naameval

import (
	"encoding/binary"

	"github.com/naam-project/naam/lang"
)

// place is typ's bytes at mem[off:]: a variable, an element, a field, or
// the target of a reference.
type place struct {
	mem []byte
	off int64
	typ lang.Type
}

func (p place) bytes() []byte { return p.mem[p.off : p.off+lang.Sizeof(p.typ)] }

// newLocal returns a zeroed buffer for a variable of type t.
func newLocal(t lang.Type) place {
	return place{mem: make([]byte, lang.Sizeof(t)), typ: t}
}

// Scalars are held as uint64 in canonical form: the value reduced to its
// type's width, then sign-extended for signed types and zero-extended for
// the others, so that equal values have equal bits and int64(v) is the
// value of a signed one. A bool is 0 or 1, whatever byte it was read from.

func basic(t lang.Type) *lang.Basic {
	b, ok := t.(*lang.Basic)
	if !ok {
		internalf("%s is not a scalar type", t)
	}
	return b
}

// width returns an integer type's width in bits (64 for untyped constants,
// which reach run time only as already-typed values).
func width(t lang.Type) uint64 {
	if basic(t).Kind == lang.UntypedInt {
		return 64
	}
	return uint64(lang.Sizeof(t) * 8)
}

// canon reduces v to t's width and extends it by t's signedness.
func canon(t lang.Type, v uint64) uint64 {
	switch basic(t).Kind {
	case lang.Bool:
		// A bool byte from outside (request, region) may be anything;
		// it is true when not 0 (spec/language.md, Compilation).
		if uint8(v) != 0 {
			return 1
		}
		return 0
	case lang.U8:
		return uint64(uint8(v))
	case lang.U16:
		return uint64(uint16(v))
	case lang.U32:
		return uint64(uint32(v))
	case lang.I8:
		return uint64(int64(int8(v)))
	case lang.I16:
		return uint64(int64(int16(v)))
	case lang.I32:
		return uint64(int64(int32(v)))
	}
	return v
}

func load(p place) uint64 {
	b := p.bytes()
	var v uint64
	switch len(b) {
	case 1:
		v = uint64(b[0])
	case 2:
		v = uint64(binary.LittleEndian.Uint16(b))
	case 4:
		v = uint64(binary.LittleEndian.Uint32(b))
	case 8:
		v = binary.LittleEndian.Uint64(b)
	default:
		internalf("load of %s (%d bytes)", p.typ, len(b))
	}
	return canon(p.typ, v)
}

func store(p place, v uint64) {
	b := p.bytes()
	switch len(b) {
	case 1:
		b[0] = byte(v)
	case 2:
		binary.LittleEndian.PutUint16(b, uint16(v))
	case 4:
		binary.LittleEndian.PutUint32(b, uint32(v))
	case 8:
		binary.LittleEndian.PutUint64(b, v)
	default:
		internalf("store to %s (%d bytes)", p.typ, len(b))
	}
}

// fnv1a is the hash builtin (spec/abi.md, hash).
func fnv1a(b []byte) uint64 {
	h := uint64(0xcbf29ce484222325)
	for _, c := range b {
		h ^= uint64(c)
		h *= 0x100000001b3
	}
	return h
}
