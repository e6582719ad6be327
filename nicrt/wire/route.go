package wire

import (
	"encoding/binary"
	"net/netip"
)

// Route prefixes (spec/wire.md, Routing): a request that carries
// FlagForwarded or FlagProgram starts its payload with them, in this
// order, before the handler's own bytes.
const (
	// ForwardPrefixSize is the prefix of a forwarded request: the node
	// that forwarded it and the original caller's reply address.
	ForwardPrefixSize = 24
	// ProgramPrefixSize is the prefix of a program-relative request: the
	// digest of the object whose handler index the handler field holds.
	ProgramPrefixSize = 8
)

// Route is what a request's route prefixes say.
type Route struct {
	// Forwarded: the request was passed on by Via with forward; its reply
	// goes to ReplyTo (the original caller), not to the datagram's sender.
	Forwarded bool
	Via       uint32
	ReplyTo   netip.AddrPort
	// HasProgram: Handler is a handler id in the object whose digest is
	// Program (ProgramDigest in nicrt), not a node-wide id.
	HasProgram bool
	Program    uint64
}

// prefixSize reports the bytes of route prefixes the flags call for.
func (f Flags) prefixSize() int {
	n := 0
	if f&FlagForwarded != 0 {
		n += ForwardPrefixSize
	}
	if f&FlagProgram != 0 {
		n += ProgramPrefixSize
	}
	return n
}

// SplitRoute reads the route prefixes of a request packet that its flags
// announce and returns them with the handler's payload after them (aliasing
// p.Payload). A packet without FlagForwarded and FlagProgram has an empty
// Route and its whole payload. An error is an *Error with field "route"
// wrapping ErrRoute.
func SplitRoute(p *Packet) (Route, []byte, error) {
	var r Route
	b := p.Payload
	if p.Flags&FlagForwarded != 0 && p.Flags&FlagOneWay != 0 {
		return r, nil, errorf("route", ErrRoute, "flags %v: a one-way message cannot be forwarded", p.Flags)
	}
	if need := p.Flags.prefixSize(); len(b) < need {
		return r, nil, errorf("route", ErrRoute, "%d payload bytes, the flags %v need a %d-byte prefix", len(b), p.Flags, need)
	}
	if p.Flags&FlagForwarded != 0 {
		if reserved := binary.LittleEndian.Uint16(b[6:]); reserved != 0 {
			return r, nil, errorf("route", ErrRoute, "reserved bytes 6…7 of the forward prefix are %#04x, not 0", reserved)
		}
		ip := netip.AddrFrom16([16]byte(b[8:24])).Unmap()
		port := binary.LittleEndian.Uint16(b[4:])
		if !ip.IsValid() || ip.IsUnspecified() || port == 0 {
			return r, nil, errorf("route", ErrRoute, "reply address %v is not a peer's", netip.AddrPortFrom(ip, port))
		}
		r.Forwarded, r.Via, r.ReplyTo = true, binary.LittleEndian.Uint32(b), netip.AddrPortFrom(ip, port)
		b = b[ForwardPrefixSize:]
	}
	if p.Flags&FlagProgram != 0 {
		r.HasProgram, r.Program = true, binary.LittleEndian.Uint64(b)
		b = b[ProgramPrefixSize:]
	}
	return r, b, nil
}

// AppendRoute appends the prefixes of r to dst: the forward prefix if
// r.Forwarded, then the program prefix if r.HasProgram. The packet's flags
// must say the same (RouteFlags).
func AppendRoute(dst []byte, r *Route) []byte {
	if r.Forwarded {
		var b [ForwardPrefixSize]byte
		binary.LittleEndian.PutUint32(b[0:], r.Via)
		binary.LittleEndian.PutUint16(b[4:], r.ReplyTo.Port())
		ip := r.ReplyTo.Addr().As16() // IPv4 as IPv4-mapped
		copy(b[8:], ip[:])
		dst = append(dst, b[:]...)
	}
	if r.HasProgram {
		dst = binary.LittleEndian.AppendUint64(dst, r.Program)
	}
	return dst
}

// RouteFlags returns the flags that announce r's prefixes.
func RouteFlags(r *Route) Flags {
	var f Flags
	if r.Forwarded {
		f |= FlagForwarded
	}
	if r.HasProgram {
		f |= FlagProgram
	}
	return f
}
