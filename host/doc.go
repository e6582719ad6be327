// Package host is the Go library applications program NAAM with.
//
// A Node is one machine's runtime: a modelled SmartNIC (nicrt) serving
// active messages on a UDP port, regions of memory the application
// registers and reads and writes directly, and the programs it installs.
// A Peer is another node: Call runs one of its handlers with arguments
// encoded from a Go value by the handler's layout and decodes the reply
// into another; Go does the same without waiting; Read, Write,
// CompareAndSwap and FetchAdd are the RDMA verbs, as active messages.
//
//	n, _ := host.Start(host.Config{Listen: "127.0.0.1:0"})
//	defer n.Close()
//	p, _ := n.Dial(ctx, "127.0.0.1:7946")
//	var v struct{ Value uint64 }
//	err := p.Call(ctx, "kv.get", struct{ Key uint64 }{42}, &v)
//
// Nodes find each other by a static list of addresses or by joining a
// cluster through hashicorp/memberlist (Config.Gossip, Config.Join), which
// detects failures: a peer that dies turns into errors (ErrPeerDown,
// ErrTimeout) within the call's deadline, never a hang.
//
// Errors work with errors.Is: ErrTimeout, ErrRejected, ErrNoHandler,
// ErrLayout, ErrPeerDown, ErrClosed; a handler's own error code is a
// *HandlerError (errors.As).
//
// The node builds on the NIC model (nicrt) and its network side
// (nicrt/server); the caller's half (Peer, Handler, Call, Dial) is
// host/peer, re-exported here, which a program that only calls imports
// alone, without the verifier, the compiler or the JIT.
package host
