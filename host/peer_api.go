package host

import (
	"github.com/naam-project/naam/host/peer"
	"github.com/naam-project/naam/nicrt/caller"
)

// The caller's half of the library is host/peer, which links nothing of
// the node (no NIC model, verifier, compiler or JIT): a program that only
// calls imports it alone. host re-exports it here for programs that also
// run a node.

// Peer is a node this process calls (peer.Peer): its handlers by name,
// its regions by name, the verbs, the control ops.
type Peer = peer.Peer

// Handler is a handler installed on a peer, with its layouts (peer.Handler).
type Handler = peer.Handler

// Call is an asynchronous call started by Peer.Go (peer.Call).
type Call = peer.Call

// PeerProgram is a program installed on a peer, as it described it
// (peer.Program).
type PeerProgram = peer.Program

// PeerRegion is a region registered on a peer for the tenant (peer.Region).
type PeerRegion = peer.Region

// Keep is what a peer's runs at the client keep from one run to the next
// (peer.Keep, clientrun.Keep; Peer.KeepAtClient).
type Keep = peer.Keep

// Counter is one of a node's counters, by name (spec/nic.md, Stats).
type Counter = peer.Counter

// HandlerError is a handler's own error: it failed with Code (r0 = -Code)
// at Pos, "file:line:col" when the peer's object has a line table there.
type HandlerError = caller.HandlerError

// RemoteError is an error reply with a runtime status: a fault (matching
// ErrFault, its text in Msg), a rejection (ErrRejected), a refused
// control op.
type RemoteError = caller.RemoteError

// Errors of calls (peer's). They match with errors.Is.
var (
	ErrTimeout   = peer.ErrTimeout   // no reply after the runtime's retries; the request may or may not have run
	ErrRejected  = peer.ErrRejected  // the peer refused the request without running it
	ErrFault     = peer.ErrFault     // the handler ran and faulted
	ErrNoHandler = peer.ErrNoHandler // no handler of that name, or its id is no longer installed
	ErrNoRegion  = peer.ErrNoRegion  // no region of that name for the tenant
	ErrLayout    = peer.ErrLayout    // a Go value does not match a handler's layout
	ErrPeerDown  = peer.ErrPeerDown  // membership declared the peer dead or gone
	ErrClosed    = peer.ErrClosed    // the node or peer was closed
	ErrNoProgram = peer.ErrNoProgram // no program of that name or id
	ErrRange     = peer.ErrRange     // a range is not inside the peer's region; nothing was sent
)
