package peer

import (
	"errors"
	"fmt"

	"github.com/naam-project/naam/nicrt/caller"
	"github.com/naam-project/naam/nicrt/wire"
)

// Errors of calls. They match with errors.Is.
var (
	// ErrTimeout: no reply after the runtime's retries. The request may
	// or may not have run.
	ErrTimeout = caller.ErrTimeout
	// ErrRejected: the peer refused the request without running it
	// (a foreign handler or region, a wrong region key, overloaded, a
	// verb's failed checks, …). A packet sealed with the wrong tenant key
	// is dropped unanswered: that call ends with ErrTimeout.
	ErrRejected = caller.ErrRejected
	// ErrFault: the handler ran and faulted.
	ErrFault = caller.ErrFault
	// ErrNoHandler: the peer has no handler of that name, or the id the
	// caller used is no longer installed.
	ErrNoHandler = errors.New("host: no such handler")
	// ErrNoRegion: the peer has no region of that name for the tenant.
	ErrNoRegion = errors.New("host: no such region")
	// ErrLayout: a Go value does not match a handler's layout.
	ErrLayout = errors.New("host: value does not match the layout")
	// ErrPeerDown: membership declared the peer dead or gone.
	ErrPeerDown = errors.New("host: peer is down")
	// ErrClosed: the node or peer was closed.
	ErrClosed = caller.ErrClosed
)

// errUnknownHandler is the responder's "unknown handler" status: the id
// a call used is not installed there (any more).
var errUnknownHandler = wire.RuntimeUnknownHandler.Err()

// HandlerError is a handler's own error: it failed with Code (r0 = -Code)
// at Pos, "file:line:col" when the peer's object has a line table there.
type HandlerError = caller.HandlerError

// RemoteError is an error reply with a runtime status: a fault (matching
// ErrFault, its text in Msg), a rejection (ErrRejected), a refused
// control op.
type RemoteError = caller.RemoteError

// callError adds the handler's name to err and makes a remote "unknown
// handler" match ErrNoHandler too.
func callError(h *Handler, err error) error {
	if errors.Is(err, errUnknownHandler) {
		return fmt.Errorf("host: call %s: %w (%w)", h, ErrNoHandler, err)
	}
	return fmt.Errorf("host: call %s: %w", h, err)
}
