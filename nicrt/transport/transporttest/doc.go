// Package transporttest holds the transport's test doubles and the
// conformance suite every transport.Conn passes.
//
// It is to nicrt/transport what net/http/httptest is to net/http; TestConn
// checks a Conn as golang.org/x/net/nettest checks a net.Conn. The doubles:
//
//   - MemConn: an endpoint of an in-memory Network. Each endpoint has a
//     bounded queue; a packet that finds it full is dropped and counted,
//     as a NIC drops on a full rx ring. Nothing in it depends on timing or
//     randomness.
//   - Lossy: a wrapper over any Conn that drops, duplicates, reorders and
//     delays packets in each direction, from a seed, and counts what it did.
//
// Only tests import it: no command or library of NAAM's runs on these
// doubles (a test in tests/ checks it).
package transporttest
