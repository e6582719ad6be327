// Package call joins the example services (examples/kv, examples/chase,
// examples/rpc) to a NAAM node: a Caller runs one handler of an installed
// program and a Reader is the RDMA-style READ verb on one region. Each has
// a network form over a *caller.Client (Remote, RemoteReader: naam bench,
// kvclient) and one over a host/peer Peer (Peer, PeerRegion: handlers and
// regions by name); the in-process forms over a *nicrt.NIC, for tests, are
// in examples/call/calltest. The package links nothing of a node, so that
// a service's client does not either.
//
// A handler's own failure (fail(CODE)) comes back as a *caller.HandlerError
// from every form, so the services decode codes one way (Code). Every other
// outcome that is not a reply (a fault, a rejection) is an error naming the
// status.
//
// What it must never do: interpret payloads (the services own their
// layouts) or retry (a retry policy belongs to the service's client, which
// knows whether an operation is idempotent).
package call
