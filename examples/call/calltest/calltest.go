// Package calltest holds the in-process forms of the examples' Caller and
// Verbs, over a *nicrt.NIC, for the examples' tests.
//
// Local runs a handler with NIC.Call, LocalReader the built-in verbs. A handler's own
// failure comes back as a *caller.HandlerError, as over the network, so
// that the services decode codes one way (call.Code).
//
// Only tests import it (tests/ checks it): a service's client links the
// network forms of examples/call alone.
package calltest

import (
	"context"
	"encoding/binary"
	"fmt"
	"sync/atomic"

	"github.com/naam-project/naam/nicrt"
	"github.com/naam-project/naam/nicrt/caller"
	"github.com/naam-project/naam/nicrt/wire"
)

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
	return callNIC(ctx, l.NIC, l.Tenant, l.Src, &l.ids, handler, payload)
}

// callNIC runs handler on nic with payload, as tenant from node src, with
// the next of ids.
func callNIC(ctx context.Context, nic *nicrt.NIC, tenant, src uint64, ids *atomic.Uint64, handler uint32, payload []byte) ([]byte, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	r := nic.Call(&nicrt.Message{
		Tenant:    tenant,
		Handler:   handler,
		RequestID: ids.Add(1),
		SrcNode:   src,
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
		return nil, &caller.HandlerError{Code: uint32(r.Code)}
	}
	if r.Err != nil {
		return nil, fmt.Errorf("call: %v: %w", r.Status, r.Err)
	}
	return nil, fmt.Errorf("call: %v", r.Status)
}

// LocalReader runs the built-in verbs on a region of an in-process NIC:
// a Reader and Verbs.
type LocalReader struct {
	NIC    *nicrt.NIC
	Tenant uint64
	Src    uint64
	Region nicrt.RegionRef
	ids    atomic.Uint64
}

func (l *LocalReader) verb(ctx context.Context, handler uint32, payload []byte) ([]byte, error) {
	return callNIC(ctx, l.NIC, l.Tenant, l.Src, &l.ids, handler, payload)
}

// Read implements Reader.
func (l *LocalReader) Read(ctx context.Context, off uint64, n uint32) ([]byte, error) {
	return l.verb(ctx, nicrt.HandlerRead, wire.AppendRead(nil, l.Region, off, n))
}

// Write implements Verbs.
func (l *LocalReader) Write(ctx context.Context, off uint64, data []byte) error {
	_, err := l.verb(ctx, nicrt.HandlerWrite, wire.AppendWrite(nil, l.Region, off, data))
	return err
}

// CompareAndSwap implements Verbs.
func (l *LocalReader) CompareAndSwap(ctx context.Context, off, expected, desired uint64) (uint64, bool, error) {
	out, err := l.verb(ctx, nicrt.HandlerCAS, wire.AppendCAS(nil, l.Region, off, expected, desired))
	if err != nil {
		return 0, false, err
	}
	if len(out) != 8 {
		return 0, false, fmt.Errorf("call: CAS reply of %d bytes", len(out))
	}
	old := binary.LittleEndian.Uint64(out)
	return old, old == expected, nil
}

// FetchAdd implements Verbs.
func (l *LocalReader) FetchAdd(ctx context.Context, off, delta uint64) (uint64, error) {
	out, err := l.verb(ctx, nicrt.HandlerFetchAdd, wire.AppendFetchAdd(nil, l.Region, off, delta))
	if err != nil {
		return 0, err
	}
	if len(out) != 8 {
		return 0, fmt.Errorf("call: FETCH-ADD reply of %d bytes", len(out))
	}
	return binary.LittleEndian.Uint64(out), nil
}
