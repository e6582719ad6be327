// Package caller is what a pure caller of NAAM nodes links: the client,
// its control ops and the errors a call ends with.
//
// A Client calls one responder over a transport.Conn: its handlers by id
// and the built-in verbs, with request ids, retransmission with backoff, a
// bounded number of tries and the responder's credits (spec/nic.md, The
// requester); Register, InstallWith, Uninstall, NodeStats and Describe are
// the control ops over the wire; a call ends with its reply, a timeout, a
// *HandlerError or a *RemoteError.
//
// It sits on nicrt/wire (the packet format, the runtime's statuses, the
// verbs' requests) and nicrt/transport, and imports nothing of the NIC
// model, the server, the verifier, the compiler or the VM: a client
// program (examples/kv/cmd/kvclient) builds without any of them. The
// typed calls by name and layout are host/peer's, on top of it.
//
// It never trusts a reply beyond its MAC: a reply that matches no call in
// flight is counted and dropped, a responder's text is made printable
// before it reaches an error, and a responder that pages forever is cut
// off.
package caller
