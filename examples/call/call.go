package call

import (
	"context"
	"errors"
	"fmt"

	"github.com/naam-project/naam/host/peer"
	"github.com/naam-project/naam/nicrt/caller"
	"github.com/naam-project/naam/nicrt/wire"
)

// Caller runs handler (a node-wide id from the install) with payload and
// returns the reply, which is the caller's: nothing else refers to it. A
// handler's fail(CODE) is a *caller.HandlerError. Implementations are
// safe for concurrent use.
type Caller interface {
	Call(ctx context.Context, handler uint32, payload []byte) ([]byte, error)
}

// Reader reads n bytes at off of one region, as the built-in READ verb
// does: one round trip per call.
type Reader interface {
	Read(ctx context.Context, off uint64, n uint32) ([]byte, error)
}

// Verbs are the one-sided operations on one region that an RDMA-style
// writer needs besides READ: WRITE, CAS and FETCH-ADD on 8-byte words
// (nicrt's built-in verbs). Each call is one round trip.
type Verbs interface {
	Reader
	Write(ctx context.Context, off uint64, data []byte) error
	CompareAndSwap(ctx context.Context, off, expected, desired uint64) (old uint64, swapped bool, err error)
	FetchAdd(ctx context.Context, off, delta uint64) (old uint64, err error)
}

// Code reports the handler's own error code in err, if err is one.
func Code(err error) (uint32, bool) {
	var he *caller.HandlerError
	if errors.As(err, &he) {
		return he.Code, true
	}
	return 0, false
}

// Errors maps an example's handler fail codes to its sentinel errors.
type Errors map[uint32]error

// Of is the sentinel of code, the fail code of the handler error err; a
// code e does not map (one of the language's reserved ones) keeps err,
// wrapped as "what: err".
func (e Errors) Of(what string, code uint32, err error) error {
	if s, ok := e[code]; ok {
		return s
	}
	return fmt.Errorf("%s: %w", what, err)
}

// Remote calls handlers of a node over the network as Tenant.
type Remote struct {
	Client *caller.Client
	Tenant uint32
}

// Call implements Caller with Client.Call.
func (r Remote) Call(ctx context.Context, handler uint32, payload []byte) ([]byte, error) {
	return r.Client.Call(ctx, r.Tenant, handler, payload)
}

// RemoteReader runs the built-in verbs on a region of a node over the
// network: a Reader and Verbs.
type RemoteReader struct {
	Client *caller.Client
	Tenant uint32
	Region wire.RegionRef
}

// Read implements Reader with Client.Read.
func (r RemoteReader) Read(ctx context.Context, off uint64, n uint32) ([]byte, error) {
	return r.Client.Read(ctx, r.Tenant, r.Region, off, n)
}

// Write implements Verbs with Client.Write.
func (r RemoteReader) Write(ctx context.Context, off uint64, data []byte) error {
	return r.Client.Write(ctx, r.Tenant, r.Region, off, data)
}

// CompareAndSwap implements Verbs with Client.CompareAndSwap.
func (r RemoteReader) CompareAndSwap(ctx context.Context, off, expected, desired uint64) (uint64, bool, error) {
	return r.Client.CompareAndSwap(ctx, r.Tenant, r.Region, off, expected, desired)
}

// FetchAdd implements Verbs with Client.FetchAdd.
func (r RemoteReader) FetchAdd(ctx context.Context, off, delta uint64) (uint64, error) {
	return r.Client.FetchAdd(ctx, r.Tenant, r.Region, off, delta)
}

// Peer calls a node through the host library's caller half (host/peer,
// re-exported as host.Peer): handlers by id, as the examples' clients
// look them up (Peer.Handler(ctx, name).ID).
type Peer struct{ P *peer.Peer }

// Call implements Caller.
func (p Peer) Call(ctx context.Context, handler uint32, payload []byte) ([]byte, error) {
	return p.P.CallID(ctx, handler, payload)
}

// PeerRegion runs the built-in verbs on one region of a node, named as
// the node registered it, through the host library.
type PeerRegion struct {
	P      *peer.Peer
	Region string
}

// Read implements Reader.
func (r PeerRegion) Read(ctx context.Context, off uint64, n uint32) ([]byte, error) {
	return r.P.Read(ctx, r.Region, off, n)
}

// Write implements Verbs.
func (r PeerRegion) Write(ctx context.Context, off uint64, data []byte) error {
	return r.P.Write(ctx, r.Region, off, data)
}

// CompareAndSwap implements Verbs.
func (r PeerRegion) CompareAndSwap(ctx context.Context, off, expected, desired uint64) (uint64, bool, error) {
	return r.P.CompareAndSwap(ctx, r.Region, off, expected, desired)
}

// FetchAdd implements Verbs.
func (r PeerRegion) FetchAdd(ctx context.Context, off, delta uint64) (uint64, error) {
	return r.P.FetchAdd(ctx, r.Region, off, delta)
}
