package call

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"

	"github.com/naam-project/naam/nicrt"
)

// Caller runs handler (a node-wide id from the install) with payload and
// returns the reply. A handler's fail(CODE) is a *nicrt.HandlerError.
// Implementations are safe for concurrent use.
type Caller interface {
	Call(ctx context.Context, handler uint32, payload []byte) ([]byte, error)
}

// Reader reads n bytes at off of one region, as the built-in READ verb
// does: one round trip per call.
type Reader interface {
	Read(ctx context.Context, off uint64, n uint32) ([]byte, error)
}

// Code reports the handler's own error code in err, if err is one.
func Code(err error) (uint32, bool) {
	var he *nicrt.HandlerError
	if errors.As(err, &he) {
		return he.Code, true
	}
	return 0, false
}

// Local calls handlers of an in-process NIC as Tenant from node Src.
// Request ids come from a counter of its own.
type Local struct {
	NIC    *nicrt.NIC
	Tenant uint64
	Src    uint64
	ids    atomic.Uint64
}

// Call implements Caller with NIC.Call. The context is checked before the
// call only: the in-process NIC always answers.
func (l *Local) Call(ctx context.Context, handler uint32, payload []byte) ([]byte, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	r := l.NIC.Call(&nicrt.Message{
		Tenant:    l.Tenant,
		Handler:   handler,
		RequestID: l.ids.Add(1),
		SrcNode:   l.Src,
		Payload:   payload,
	})
	return replyResult(r)
}

// replyResult turns a NIC reply into a Caller's result.
func replyResult(r nicrt.Reply) ([]byte, error) {
	switch r.Status {
	case nicrt.StatusOK:
		return r.Data, nil
	case nicrt.StatusError:
		return nil, &nicrt.HandlerError{Code: uint32(r.Code)}
	}
	if r.Err != nil {
		return nil, fmt.Errorf("call: %v: %w", r.Status, r.Err)
	}
	return nil, fmt.Errorf("call: %v", r.Status)
}

// LocalReader reads a region of an in-process NIC with the READ verb.
type LocalReader struct {
	NIC    *nicrt.NIC
	Tenant uint64
	Src    uint64
	Region nicrt.RegionRef
	ids    atomic.Uint64
}

// Read implements Reader.
func (l *LocalReader) Read(ctx context.Context, off uint64, n uint32) ([]byte, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	r := l.NIC.Call(&nicrt.Message{
		Tenant:    l.Tenant,
		Handler:   nicrt.HandlerRead,
		RequestID: l.ids.Add(1),
		SrcNode:   l.Src,
		Payload:   nicrt.AppendRead(nil, l.Region, off, n),
	})
	return replyResult(r)
}

// Remote calls handlers of a node over the network as Tenant.
type Remote struct {
	Client *nicrt.Client
	Tenant uint32
}

// Call implements Caller with Client.Call.
func (r Remote) Call(ctx context.Context, handler uint32, payload []byte) ([]byte, error) {
	return r.Client.Call(ctx, r.Tenant, handler, payload)
}

// RemoteReader reads a region of a node over the network.
type RemoteReader struct {
	Client *nicrt.Client
	Tenant uint32
	Region nicrt.RegionRef
}

// Read implements Reader with Client.Read.
func (r RemoteReader) Read(ctx context.Context, off uint64, n uint32) ([]byte, error) {
	return r.Client.Read(ctx, r.Tenant, r.Region, off, n)
}
