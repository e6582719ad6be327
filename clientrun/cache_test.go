package clientrun

import (
	"bytes"
	"context"
	"encoding/binary"
	"math/rand/v2"
	"testing"
)

// sliceFetcher serves one region from a byte slice, for the cache's own
// test (clientruntest has the real one; it imports this package).
type sliceFetcher struct {
	mem   []byte
	reads int
}

func (f *sliceFetcher) Read(_ context.Context, reads []Read) error {
	f.reads++
	for _, r := range reads {
		copy(r.Dst, f.mem[r.Offset:r.End()])
	}
	return nil
}

func (f *sliceFetcher) FetchAdd(_ context.Context, _, off uint32, d uint64) (uint64, error) {
	old := binary.LittleEndian.Uint64(f.mem[off:])
	binary.LittleEndian.PutUint64(f.mem[off:], old+d)
	return old, nil
}

func (f *sliceFetcher) CompareAndSwap(_ context.Context, _, off uint32, old, new uint64) (uint64, error) {
	prev := binary.LittleEndian.Uint64(f.mem[off:])
	if prev == old {
		binary.LittleEndian.PutUint64(f.mem[off:], new)
	}
	return prev, nil
}

// TestRegionCache: whatever the order of reads and atomics, every read
// returns the region's bytes, every byte is fetched at most once, and the
// extents stay sorted, disjoint and apart.
func TestRegionCache(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for round := range 200 {
		size := 1 + rng.IntN(3000)
		mem := make([]byte, size)
		for i := range mem {
			mem[i] = byte(rng.Uint32())
		}
		f := &sliceFetcher{mem: mem}
		cfg := Config{FetchSize: uint32(1 + rng.IntN(300))}.withDefaults()
		run := &fetchRun{ctx: context.Background(), f: f, cfg: &cfg}
		c := &regionCache{run: run, size: uint32(size)}
		run.regions = []*regionCache{c}
		for op := range 60 {
			off := rng.IntN(size)
			switch {
			case rng.IntN(4) == 0 && size >= 8:
				w := uint32(rng.IntN(size/8) * 8)
				if rng.IntN(2) == 0 {
					if _, err := c.FetchAdd(w, rng.Uint64N(9)); err != nil {
						t.Fatal(err)
					}
				} else if _, err := c.CompareAndSwap(w, binary.LittleEndian.Uint64(mem[w:]), rng.Uint64()); err != nil {
					t.Fatal(err)
				}
			default:
				n := 1 + rng.IntN(min(64, size-off))
				got := make([]byte, n)
				if err := c.ReadAt(got, uint32(off)); err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(got, mem[off:off+n]) {
					t.Fatalf("round %d op %d: read %d+%d gave %x, want %x", round, op, off, n, got, mem[off:off+n])
				}
			}
			for i, e := range c.ext {
				if i > 0 && uint64(e.off) <= c.ext[i-1].end() {
					t.Fatalf("round %d op %d: extents %d and %d overlap or touch", round, op, i-1, i)
				}
				if !bytes.Equal(e.data, mem[e.off:e.end()]) {
					t.Fatalf("round %d op %d: extent at %d differs from the region", round, op, e.off)
				}
			}
		}
		if run.stats.BytesRead > uint64(size) {
			t.Fatalf("round %d: %d bytes fetched of a %d-byte region", round, run.stats.BytesRead, size)
		}
	}
}
