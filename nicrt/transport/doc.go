// Package transport moves datagrams between NAAM nodes and clients: the
// bottom of the NIC model's data path, below the wire codec.
//
// It owns one small interface, Conn (batched read and write of Packets,
// a read deadline, Close), and three implementations of it:
//
//   - UDPConn: a real UDP socket read and written in batches with
//     recvmmsg/sendmmsg. On Linux it makes those calls itself through the
//     socket's RawConn, with kernel headers kept between calls, allocates
//     nothing, and sends runs of equal datagrams to one peer as UDP GSO
//     trains that arrive as GRO trains (four times the echo throughput of
//     plain Go on loopback); UDPConfig.Portable (and every other system)
//     uses golang.org/x/net/ipv4 and ipv6 ReadBatch and WriteBatch instead.
//     ListenUDPQueues opens one socket per rx queue on a single port with
//     SO_REUSEPORT; the kernel spreads flows over them by a hash of each
//     datagram's 4-tuple (see ListenUDPQueues).
//   - MemConn: an endpoint of an in-memory Network, for unit tests. Each
//     endpoint has a bounded queue; a packet that finds it full is dropped
//     and counted, as a NIC drops on a full rx ring. Nothing in it depends
//     on timing or randomness.
//   - Lossy: a wrapper over any Conn that drops, duplicates, reorders and
//     delays packets in each direction, from a seed, and counts what it did.
//
// Buffers are always the caller's: a Packet names a buffer that the
// transport fills (ReadBatch) or reads (WriteBatch) during the call and
// never keeps afterwards, so a caller may reuse its Packets at once.
// Implementations copy whatever they must hold on to. In steady state no
// call allocates, except the portable UDP path's receive (x/net allocates
// each source address).
//
// The package never parses payloads (that is nicrt/wire's job), never
// retransmits (reliability lives above it) and, in its tests and
// benchmarks, sends only to loopback addresses.
package transport
