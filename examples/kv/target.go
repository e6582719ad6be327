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

// RecordTarget is the shape of workload.Target (kv does not import the
// workload package).
type RecordTarget interface {
	Get(ctx context.Context, key uint64) (int, error)
	Put(ctx context.Context, key uint64, value []byte) (int, error)
}

// SplitTarget sends the records in a hot set to one target (a table in a
// nicmem region, say) and every other record to another. Each record
// must have been loaded where it is routed.
type SplitTarget struct {
	Hot, Cold RecordTarget
	hot       map[uint64]bool
}

// NewSplitTarget routes hotRecords to hot, the rest to cold.
func NewSplitTarget(hot, cold RecordTarget, hotRecords []uint64) *SplitTarget {
	s := &SplitTarget{Hot: hot, Cold: cold, hot: make(map[uint64]bool, len(hotRecords))}
	for _, r := range hotRecords {
		s.hot[r] = true
	}
	return s
}

// IsHot says where record key goes.
func (s *SplitTarget) IsHot(key uint64) bool { return s.hot[key] }

func (s *SplitTarget) pick(key uint64) RecordTarget {
	if s.hot[key] {
		return s.Hot
	}
	return s.Cold
}

// Get implements workload.Target.
func (s *SplitTarget) Get(ctx context.Context, key uint64) (int, error) {
	return s.pick(key).Get(ctx, key)
}

// Put implements workload.Target.
func (s *SplitTarget) Put(ctx context.Context, key uint64, value []byte) (int, error) {
	return s.pick(key).Put(ctx, key, value)
}
