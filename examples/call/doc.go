// Package call joins the example services (examples/kv, examples/chase,
// examples/rpc) to a NAAM node: a Caller runs one handler of an installed
// program and a Reader is the RDMA-style READ verb on one region. Each has an
// in-process form over a *nicrt.NIC (Local, LocalReader: tests, the demo)
// and a network form over a *nicrt.Client (Remote, RemoteReader: naam bench).
//
// A handler's own failure (fail(CODE)) comes back as a *nicrt.HandlerError
// from either form, so the services decode codes one way (Code). Every other
// outcome that is not a reply (a fault, a rejection) is an error naming the
// status.
//
// What it must never do: interpret payloads (the services own their
// layouts) or retry (a retry policy belongs to the service's client, which
// knows whether an operation is idempotent).
package call
