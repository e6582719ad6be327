package kv

import (
	"context"
	"errors"
	"runtime"
)

// AMTarget is a Client as the benchmark's target (workload.Target, by
// shape): record n is KeyOf(n).
type AMTarget struct{ C *Client }

// Get implements workload.Target.
func (t AMTarget) Get(ctx context.Context, key uint64) (int, error) {
	rep, err := t.C.Get(ctx, KeyOf(key))
	return rep.RoundTrips, err
}

// Put implements workload.Target.
func (t AMTarget) Put(ctx context.Context, key uint64, value []byte) (int, error) {
	rep, err := t.C.Put(ctx, KeyOf(key), value)
	return rep.RoundTrips, err
}

// RDMATarget is an RDMAClient as the benchmark's target: GETs with two
// READs, PUTs with the one-sided write path (its reader must be
// call.Verbs).
type RDMATarget struct{ C *RDMAClient }

// Get implements workload.Target.
func (t RDMATarget) Get(ctx context.Context, key uint64) (int, error) {
	rep, err := t.C.Get(ctx, KeyOf(key))
	return rep.RoundTrips, err
}

// Put implements workload.Target.
func (t RDMATarget) Put(ctx context.Context, key uint64, value []byte) (int, error) {
	rep, err := t.C.Put(ctx, KeyOf(key), value)
	return rep.RoundTrips, err
}

// Loader is a Table as a target of workload.Load: records written
// straight into the region's bytes on the host, no round trip.
type Loader struct{ T *Table }

// Get implements workload.Target (a host-side lookup).
func (l Loader) Get(ctx context.Context, key uint64) (int, error) {
	_, _, err := l.T.Get(KeyOf(key))
	return 0, err
}

// Put implements workload.Target. Loaders running side by side may meet
// at a free bucket (one takes it, the other is busy), so a busy bucket is
// tried again.
func (l Loader) Put(ctx context.Context, key uint64, value []byte) (int, error) {
	for {
		_, err := l.T.Put(KeyOf(key), value)
		if !errors.Is(err, ErrBusy) {
			return 0, err
		}
		if err := ctx.Err(); err != nil {
			return 0, err
		}
		runtime.Gosched()
	}
}
