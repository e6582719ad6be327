// Package wire is NAAM's packet format: the fixed 56-byte little-endian
// header that every active message, reply, credit and control packet
// carries, its per-tenant MAC, the anti-replay window that responders keep
// per peer and tenant, and the msgpack bodies of the control plane (install,
// uninstall, register, stats). spec/wire.md is the contract, byte by byte.
//
// It sits under the transports and the NIC model (nicrt/transport and
// nicrt import it) and imports nothing of NAAM's: a packet's payload is
// opaque bytes here, and an installed object travels as the bytes of a
// .nobj file that the runtime hands to bytecode.UnmarshalObject.
//
//   - Codec.Encode appends a sealed packet to a caller's buffer without
//     allocating; Codec.Decode checks every field, the lengths against the
//     datagram and the MAC, and returns a Packet whose Payload aliases the
//     datagram (zero copy). Decode never panics: a malformed packet is an
//     *Error that names the field and wraps a sentinel (ErrShort, ErrMagic,
//     ErrLength, ErrMAC, …) for the runtime's drop counters.
//   - Keys maps a tenant to its Key; the MAC is the key's algorithm
//     (MACAlg: HMAC-SHA256, the default, or SipHash-2-4-128, which the
//     XDP tier can compute in the kernel), 16 bytes, over the header
//     without its tag and the payload. A Key is immutable and shared by
//     all goroutines; a Codec holds the hash state and belongs to one
//     goroutine (one per NIC core).
//   - Window is the per-(peer, tenant) sliding window of request ids that
//     tells a new request from a duplicate or one too old to judge; with the
//     runtime's reply cache it separates retransmissions from replays.
//   - AppendControl, UnmarshalControl and ParseControl encode and decode the
//     control bodies deterministically and validate what they read.
//   - SplitRoute and AppendRoute read and write the route prefixes of
//     forwarded and program-relative requests (the flags forwarded,
//     program and one-way): the forwarding node, the original caller's
//     reply address, the program's digest.
//
// The package never does I/O, keeps no state across packets (a Window is
// the caller's) and never interprets a request's payload.
package wire
