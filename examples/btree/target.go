package btree

import (
	"context"
	"encoding/binary"
	"fmt"
)

// Target is a client (a Client, or an RDMAClient whose reader is
// call.Verbs, for the updates) as the benchmark's target
// (workload.Target, by shape): record n is KeyOf(n); a read is a lookup,
// an update replaces the record's value with the first 8 bytes of the
// benchmark's.
type Target struct {
	C interface {
		Lookup(ctx context.Context, key uint64) (uint64, Reply, error)
		Update(ctx context.Context, key, value uint64) (uint64, Reply, error)
	}
}

// Get implements workload.Target.
func (t Target) Get(ctx context.Context, rec uint64) (int, error) {
	_, rep, err := t.C.Lookup(ctx, KeyOf(rec))
	return rep.RoundTrips, err
}

// Put implements workload.Target.
func (t Target) Put(ctx context.Context, rec uint64, value []byte) (int, error) {
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
