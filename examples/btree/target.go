package btree

import (
	"context"
	"encoding/binary"
	"fmt"
)

// AMTarget is a Client as the benchmark's target (workload.Target, by
// shape): record n is KeyOf(n); a read is a lookup, an update replaces
// the record's value with the first 8 bytes of the benchmark's.
type AMTarget struct{ C *Client }

// Get implements workload.Target.
func (t AMTarget) Get(ctx context.Context, rec uint64) (int, error) {
	_, rep, err := t.C.Lookup(ctx, KeyOf(rec))
	return rep.RoundTrips, err
}

// Put implements workload.Target.
func (t AMTarget) Put(ctx context.Context, rec uint64, value []byte) (int, error) {
	_, rep, err := t.C.Update(ctx, KeyOf(rec), word(value))
	return rep.RoundTrips, err
}

// RDMATarget is an RDMAClient as the benchmark's target: lookups with a
// READ per uncached level, updates with the one-sided write path (its
// reader must be call.Verbs).
type RDMATarget struct{ C *RDMAClient }

// Get implements workload.Target.
func (t RDMATarget) Get(ctx context.Context, rec uint64) (int, error) {
	_, rep, err := t.C.Lookup(ctx, KeyOf(rec))
	return rep.RoundTrips, err
}

// Put implements workload.Target.
func (t RDMATarget) Put(ctx context.Context, rec uint64, value []byte) (int, error) {
	_, rep, err := t.C.Update(ctx, KeyOf(rec), word(value))
	return rep.RoundTrips, err
}

// word is the first 8 bytes of value, little-endian (zero-padded).
func word(value []byte) uint64 {
	var w [8]byte
	copy(w[:], value)
	return binary.LittleEndian.Uint64(w[:])
}

// Load bulk-loads records 0…records-1 (KeyOf(n), ValueOf(n)) into t, fill
// keys to a node (0: three quarters of the fanout).
func Load(t *Tree, records uint64, fill int) error {
	keys, vals := make([]uint64, records), make([]uint64, records)
	for n := range records {
		keys[n], vals[n] = KeyOf(n), ValueOf(n)
	}
	if err := t.BulkLoad(keys, vals, fill); err != nil {
		return fmt.Errorf("btree: loading %d records: %w", records, err)
	}
	return nil
}
