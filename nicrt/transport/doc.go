// Package transport moves datagrams between NAAM nodes and clients: the
// bottom of the network path, below the wire codec, under nicrt/server
// and nicrt/caller.
//
// It owns one small interface, Conn (batched read and write of Packets,
// a read deadline, Close), its implementation over UDP, and TxQueue, the
// sender that many goroutines share to write through one Conn in batches:
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
//   - TxQueue: flat combining over one Conn, so that the replies and
//     requests of many goroutines leave in few WriteBatch calls.
//
// The test doubles, an in-memory network and a lossy wrapper, are in
// nicrt/transport/transporttest, with the conformance suite every Conn
// passes.
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
