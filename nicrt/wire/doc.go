// Package wire is NAAM's contract between nodes and their callers: packets,
// MACs, windows, control bodies, runtime statuses and verb requests.
//
// It holds the packet format (the fixed 56-byte little-endian header that
// every active message, reply, credit and control packet carries), its
// per-tenant MAC,
// the anti-replay window that responders keep per peer and tenant, the
// msgpack bodies of the control plane (install, uninstall, register,
// stats, describe), the runtime's statuses that error replies carry, and
// the built-in verbs' ids and requests. spec/wire.md is the contract, byte
// by byte; spec/nic.md lists the statuses and the verbs.
//
// It sits under the NIC model, the server and the caller (nicrt,
// nicrt/server and nicrt/caller import it) and imports nothing of NAAM's
// but internal/msgpackshape, which checks the control bodies' shapes: a
// packet's payload is opaque bytes here, and an installed object travels
// as the bytes of a .nobj file that the runtime hands to
// bytecode.UnmarshalObject.
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
//   - RuntimeStatus is what became of a request at its responder (the NIC
//     model's Reply.Status, an error reply's StatusRuntime+k), with its
//     names, Rejected and the sentinel errors both ends match.
//   - HandlerRead … FirstHandlerID are the built-in verbs' ids; AppendRead,
//     AppendWrite, AppendCAS and AppendFetchAdd encode their requests and
//     ParseVerb decodes one (RegionRef names the region).
//   - RegionOptions and InstallOptions are the options of a register and
//     an install, the same for a node's host and a remote caller;
//     DecodeErrors counts the packets a Codec refused, by reason.
//
// The package never does I/O, keeps no state across packets (a Window is
// the caller's) and never interprets a request's payload.
package wire
