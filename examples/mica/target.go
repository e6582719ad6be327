package mica

import (
	"context"
	"errors"
	"runtime"
	"sync/atomic"

	"github.com/naam-project/naam/examples/kv"
)

// Misses counts the GETs of a benchmark that found no live entry. A
// cache may miss (a key evicted by the log's wrap or displaced from a
// full bucket), so a miss is an answer, not a failure; the benchmark
// reports how many there were.
type Misses struct{ n atomic.Uint64 }

// Count is the misses so far.
func (m *Misses) Count() uint64 {
	if m == nil {
		return 0
	}
	return m.n.Load()
}

// got turns a GET's ErrNotFound into a counted miss.
func (m *Misses) got(err error) error {
	if errors.Is(err, ErrNotFound) {
		if m != nil {
			m.n.Add(1)
		}
		return nil
	}
	return err
}

// Target is a client (a Client or an RDMAClient: its reader must then
// be call.Verbs, for the PUTs) as the benchmark's target
// (workload.Target, by shape): record n is kv.KeyOf(n).
type Target struct {
	C interface {
		Get(ctx context.Context, key Key) (Reply, error)
		Put(ctx context.Context, key Key, value []byte) (Reply, error)
	}
	Misses *Misses // may be nil
}

// Get implements workload.Target.
func (t Target) Get(ctx context.Context, key uint64) (int, error) {
	rep, err := t.C.Get(ctx, kv.KeyOf(key))
	return rep.RoundTrips, t.Misses.got(err)
}

// Put implements workload.Target.
func (t Target) Put(ctx context.Context, key uint64, value []byte) (int, error) {
	rep, err := t.C.Put(ctx, kv.KeyOf(key), value)
	return rep.RoundTrips, err
}

// Loader is a Store as a target of workload.Load: records written
// straight into the region's bytes on the host, no round trip.
type Loader struct{ S *Store }

// Get implements workload.Target (a host-side lookup).
func (l Loader) Get(ctx context.Context, key uint64) (int, error) {
	_, _, err := l.S.Get(kv.KeyOf(key))
	return 0, err
}

// Put implements workload.Target. Loaders running side by side may meet
// at a bucket, so a busy bucket is tried again.
func (l Loader) Put(ctx context.Context, key uint64, value []byte) (int, error) {
	for {
		_, err := l.S.Put(kv.KeyOf(key), value)
		if !errors.Is(err, ErrBusy) {
			return 0, err
		}
		if err := ctx.Err(); err != nil {
			return 0, err
		}
		runtime.Gosched()
	}
}
