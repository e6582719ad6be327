// Package server is the network side of a NAAM node: the receive loop,
// authentication, windows, reply cache, credits and control plane.
//
// Serve reads requests from rx queues (transport.Conn), opens them with
// the tenant's key, runs each at most once (an anti-replay window and a
// reply cache per peer and tenant), submits it to the NIC model and sends
// the sealed reply with the credits it grants; it also runs the control
// plane (register, install, uninstall, stats, describe) within its limits.
//
// The way of a request, read forward: rx.go (read a batch, then per
// datagram open → route → admit → dispatch, which calls
// nicrt.NIC.SubmitInline with the request's record as its sink) → the
// model (nicrt's submit.go and core.go) → reply.go (Done: seal, keep in
// the reply cache, send through the rx queue's transport.TxQueue).
// spec/nic.md, The message path, lists the files.
//
// A request's sink carries what its handler sends and forwards: they
// leave as program-relative requests (the program's digest and the
// handler's id in the object) to the node ids of the server's address
// book (SetPeer); a forward keeps the caller's tenant, source and request
// id and is answered by the last node, directly when the caller is a node
// it knows, else through the forwarding node (no reflection). Peer state
// is bounded (MaxPeers); an evicted window leaves its high edge behind so
// that nothing it saw runs again.
//
// Nothing from the network can make it allocate without bound: peer
// states, reply-cache bytes, uploads, registered bytes and control ops
// running are all capped (ServerConfig), and a packet that fails any
// check is counted and dropped. spec/nic.md, Network side, is the
// contract.
package server
