// Package peer is the caller's half of the host library: a Peer is a node
// this process calls, by the names its programs and regions have there.
// Call runs a handler with arguments encoded from a Go value by the
// handler's layout (the object's, as the node describes it) and decodes
// the reply into another; Go does the same without waiting; Read, Write,
// CompareAndSwap and FetchAdd are the RDMA verbs; Install, Register,
// Stats and the others are the control plane's ops.
//
// A handler the node's verifier found client-eligible can also run here,
// in this process's interpreter over one-sided verbs (package clientrun),
// when the peer holds its object (AddObject; Install adds it): where each
// call runs is the peer's Placement, AtNode (the default), AtClient or
// Auto, which chooses per call from measured completion times (package
// steer), and every decision is counted (PlacementStats). A call is
// placed once, before it is sent, and keeps its place through every
// retransmission (spec/client.md).
//
// It builds on nicrt/caller (the client: retransmission, credits) and
// links nothing of a node: no NIC model, server, verifier, compiler or
// JIT (only the interpreter, for runs at the client), so that a program that only calls (examples/kv/cmd/kvclient)
// stays small. host re-exports it (host.Peer, host.Dial) for programs
// that also run a node, which dials its peers through DialConfig; its
// errors say "host:", the library's name.
package peer
