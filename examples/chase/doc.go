// Package chase is the pointer-chasing example: a linked list
// in a region of a NAAM node, looked up in one active message (Client:
// the handler follows the links on the node) or, as a one-sided RDMA
// client must, with one READ per node visited (RDMAClient).
//
// Layout (chase.naam, embedded): region chase: [Node; NODES] ro, bound at
// install to the registered region Config.Region, with
//
//	Node = key u64 @0, value u64 @8, next u32 @16, 4 bytes of padding (NodeSize = 24)
//
// Nodes link by index; NIL (0xffffffff) ends a list. A hop is one node
// visited: Walk(head, n) visits n nodes and returns the last; Lookup(head,
// key) visits nodes until it finds key. On the node both are one message
// for up to MaxHops (default 64) hops; the RDMA client needs n READs.
//
// What it owns: the program source and its parameters, the layout, host
// functions that build lists in region bytes (SetNode, BuildList), the
// codecs and both clients. It must never reach the runtime beyond
// call.Caller and call.Reader.
package chase
