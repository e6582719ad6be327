package bytecode

import (
	"encoding/binary"
	"fmt"
)

// Declared data access (spec/abi.md, Access functions). A handler may come
// with an access function: a second entry point, run on the same context
// and request, that writes the ranges of region bytes the handler will
// read into its reply buffer and returns their length in bytes, so that
// whoever runs the handler somewhere else (a client, a NIC) can fetch
// that data first. Each range is AccessRangeSize bytes: the region index,
// the offset and the length, little-endian u32s.
const (
	// AccessRangeSize is the bytes of one range in an access function's
	// reply.
	AccessRangeSize = 12
	// MaxAccessRanges is the most ranges one access function may write
	// (Handler.MaxRanges).
	MaxAccessRanges = 64
)

// AccessRange is one range of region bytes a handler declares it reads:
// Length bytes of region Region (an index into Object.Regions) from byte
// Offset. A Length of 0 declares nothing.
type AccessRange struct {
	Region uint32
	Offset uint32
	Length uint32
}

// End is one past the range's last byte, as a 64-bit number (it may pass
// 2^32 in a range that is not valid).
func (r AccessRange) End() uint64 { return uint64(r.Offset) + uint64(r.Length) }

// Put writes r in its reply form into b[:AccessRangeSize].
func (r AccessRange) Put(b []byte) {
	le := binary.LittleEndian
	le.PutUint32(b[0:], r.Region)
	le.PutUint32(b[4:], r.Offset)
	le.PutUint32(b[8:], r.Length)
}

// DecodeAccessRanges reads the ranges of an access function's reply: a
// whole number of ranges, at most MaxAccessRanges of them. It does not
// check them against an object's regions (CheckAccessRanges does).
func DecodeAccessRanges(reply []byte) ([]AccessRange, error) {
	if len(reply)%AccessRangeSize != 0 {
		return nil, fmt.Errorf("access ranges: %d bytes is not a whole number of %d-byte ranges", len(reply), AccessRangeSize)
	}
	n := len(reply) / AccessRangeSize
	if n > MaxAccessRanges {
		return nil, fmt.Errorf("access ranges: %d ranges, at most %d", n, MaxAccessRanges)
	}
	out := make([]AccessRange, n)
	le := binary.LittleEndian
	for i := range out {
		b := reply[i*AccessRangeSize:]
		out[i] = AccessRange{Region: le.Uint32(b[0:]), Offset: le.Uint32(b[4:]), Length: le.Uint32(b[8:])}
	}
	return out, nil
}

// CheckAccessRanges checks that every non-empty range lies inside a region
// of o: the first one that does not is an error naming it.
func (o *Object) CheckAccessRanges(ranges []AccessRange) error {
	for i, r := range ranges {
		if r.Length == 0 {
			continue
		}
		if uint64(r.Region) >= uint64(len(o.Regions)) {
			return fmt.Errorf("access range %d: region %d, but the object has %d regions", i, r.Region, len(o.Regions))
		}
		if size := o.Regions[r.Region].Size; r.End() > size {
			return fmt.Errorf("access range %d: bytes %d..%d of region %d (%s), which has %d", i, r.Offset, r.End(), r.Region, o.Regions[r.Region].Name, size)
		}
	}
	return nil
}
