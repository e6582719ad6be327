package wire

import "encoding/binary"

// Handler ids of the built-in verbs, which replace RDMA's one-sided
// operations (spec/nic.md, Built-in verbs). Ids below FirstHandlerID are
// the verbs'; a node hands out ids of installed handlers from
// FirstHandlerID up.
const (
	HandlerRead     uint32 = 1 // READ: bytes of a region
	HandlerWrite    uint32 = 2 // WRITE: bytes into a region
	HandlerCAS      uint32 = 3 // CAS: 8-byte compare-and-swap
	HandlerFetchAdd uint32 = 4 // FETCH-ADD: 8-byte fetch-and-add
	FirstHandlerID  uint32 = 16
)

// VerbHeaderSize is the size of the header that starts every verb
// request, naming the region:
//
//	 0  key     u64   the region's key
//	 8  region  u32   the region's id
//	12  length  u32   READ: bytes to read; WRITE: bytes that follow; CAS, FETCH-ADD: 8
//	16  offset  u64   byte offset in the region
//	24  …             WRITE: the bytes; CAS: expected u64, desired u64; FETCH-ADD: delta u64
//
// All little-endian. The reply is the bytes read (READ), nothing (WRITE),
// or the old 8-byte value (CAS, FETCH-ADD; a CAS succeeded when it equals
// the expected value).
const VerbHeaderSize = 24

// RegionRef is what a peer needs to name a region in a verb: its id and key.
type RegionRef struct {
	ID  uint32
	Key uint64
}

func appendVerbHeader(dst []byte, ref RegionRef, length uint32, off uint64) []byte {
	dst = binary.LittleEndian.AppendUint64(dst, ref.Key)
	dst = binary.LittleEndian.AppendUint32(dst, ref.ID)
	dst = binary.LittleEndian.AppendUint32(dst, length)
	return binary.LittleEndian.AppendUint64(dst, off)
}

// AppendRead appends a READ request for n bytes at off.
func AppendRead(dst []byte, ref RegionRef, off uint64, n uint32) []byte {
	return appendVerbHeader(dst, ref, n, off)
}

// AppendWrite appends a WRITE request of data at off.
func AppendWrite(dst []byte, ref RegionRef, off uint64, data []byte) []byte {
	return append(appendVerbHeader(dst, ref, uint32(len(data)), off), data...)
}

// AppendCAS appends a CAS request: the 8 bytes at off become desired if
// they hold expected.
func AppendCAS(dst []byte, ref RegionRef, off, expected, desired uint64) []byte {
	dst = binary.LittleEndian.AppendUint64(appendVerbHeader(dst, ref, 8, off), expected)
	return binary.LittleEndian.AppendUint64(dst, desired)
}

// AppendFetchAdd appends a FETCH-ADD request adding delta to the 8 bytes at off.
func AppendFetchAdd(dst []byte, ref RegionRef, off, delta uint64) []byte {
	return binary.LittleEndian.AppendUint64(appendVerbHeader(dst, ref, 8, off), delta)
}

// VerbRequest is a verb request as ParseVerb reads it.
type VerbRequest struct {
	Ref    RegionRef
	Length uint32
	Offset uint64
	// Operands follow the header: WRITE's bytes, CAS's expected and
	// desired values, FETCH-ADD's delta. They alias the payload.
	Operands []byte
}

// ParseVerb reads the request of verb (one of the Handler ids above) from
// p and checks its shape: the header, and exactly the operands the verb
// takes (an atomic's length is 8). It reports false for a malformed
// request; what the request names (region, bounds, rights) is the
// runtime's to check.
func ParseVerb(verb uint32, p []byte) (VerbRequest, bool) {
	if len(p) < VerbHeaderSize {
		return VerbRequest{}, false
	}
	le := binary.LittleEndian
	r := VerbRequest{
		Ref:    RegionRef{ID: le.Uint32(p[8:]), Key: le.Uint64(p)},
		Length: le.Uint32(p[12:]),
		Offset: le.Uint64(p[16:]),
	}
	want := uint64(VerbHeaderSize) // the payload's exact length
	switch verb {
	case HandlerWrite:
		want += uint64(r.Length)
	case HandlerCAS:
		want += 16
	case HandlerFetchAdd:
		want += 8
	}
	atomic := verb == HandlerCAS || verb == HandlerFetchAdd
	if uint64(len(p)) != want || atomic && r.Length != 8 {
		return VerbRequest{}, false
	}
	r.Operands = p[VerbHeaderSize:]
	return r, true
}
