package naamgen

import (
	"encoding/binary"
	"math/rand/v2"
)

// Input is one request for a handler of a generated program, with the
// region contents to run it against.
type Input struct {
	Handler   int // index into Generated.Handlers (the handler id)
	Request   []byte
	ReplySize int      // bytes in the reply buffer
	Regions   [][]byte // one per region, in Generated.Regions order
	SrcNode   uint64
	Tenant    uint64
	RequestID uint64
}

// Inputs returns a request for handler h of p and region contents.
// Integers are mostly small (so that indices are often in range and
// divisors often zero) or at the edges of their type; padding is random;
// bools are mostly 0 or 1. One request in twenty is shorter than the arguments,
// one reply buffer in twenty shorter than the results, and others are
// longer than needed.
func Inputs(r *rand.Rand, p *Generated, h int) Input {
	hd := p.Handlers[h]
	in := Input{Handler: h, SrcNode: r.Uint64N(4), Tenant: r.Uint64(), RequestID: r.Uint64N(1 << 20)}

	req := randomBytes(r, hd.RequestSize+16)
	for _, f := range hd.args {
		fill(r, req, f.off, f.t)
	}
	switch n := r.IntN(20); {
	case n == 0 && hd.RequestSize > 0:
		req = req[:r.IntN(hd.RequestSize)]
	case n < 3:
		req = req[:hd.RequestSize+1+r.IntN(16)]
	default:
		req = req[:hd.RequestSize]
	}
	in.Request = req

	switch n := r.IntN(20); {
	case n == 0 && hd.ReplySize > 0:
		in.ReplySize = r.IntN(hd.ReplySize)
	case n < 3:
		in.ReplySize = hd.ReplySize + 1 + r.IntN(16)
	default:
		in.ReplySize = hd.ReplySize
	}

	for _, reg := range p.Regions {
		b := randomBytes(r, reg.Size)
		fill(r, b, 0, reg.t)
		in.Regions = append(in.Regions, b)
	}
	return in
}

func randomBytes(r *rand.Rand, n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return b
}

// fill writes a value of type t at b[off:], leaving padding as it is.
func fill(r *rand.Rand, b []byte, off int, t *typ) {
	switch t.kind {
	case kBool:
		b[off] = byte(r.IntN(2))
		if r.IntN(8) == 0 {
			b[off] = byte(r.Uint32()) // any byte not 0 is true
		}
	case kArray:
		for i := range t.n {
			fill(r, b, off+i*t.elem.size(), t.elem)
		}
	case kStruct:
		for _, f := range t.st.fields {
			fill(r, b, off+f.off, f.t)
		}
	default:
		var v uint64
		switch r.IntN(8) {
		case 0, 1, 2:
			v = r.Uint64N(8)
		case 3:
			v = r.Uint64N(70)
		case 4:
			v = ^r.Uint64N(4) // -1 … -4
		case 5:
			if t.signed() {
				v = 1<<(t.bits()-1) - r.Uint64N(2) // the largest values
			} else {
				v = ^uint64(0) - r.Uint64N(2)
			}
		default:
			v = r.Uint64()
		}
		var w [8]byte
		binary.LittleEndian.PutUint64(w[:], v)
		copy(b[off:off+t.size()], w[:])
	}
}
