// Package clientruntest has a clientrun.Fetcher for tests: one over
// region byte slices in the same process, which counts what it is asked.
package clientruntest

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/naam-project/naam/clientrun"
)

// MemFetcher serves clientrun.Fetcher from Regions, the bytes of each
// region of the object (by index), as a node's memory would: reads copy
// them, atomics are sync/atomic operations on them, so a node's machine
// running on the same slices sees them as it sees its own. It counts the
// round trips. It is safe for concurrent use.
type MemFetcher struct {
	Regions [][]byte

	mu    sync.Mutex
	stats Stats
}

// Stats is what a MemFetcher was asked.
type Stats struct {
	RoundTrips int // Read calls and atomics
	Reads      int // Read calls
	Ranges     int // ranges over all Read calls
	Atomics    int
	Bytes      uint64 // bytes read
}

// NewMemFetcher serves regions.
func NewMemFetcher(regions ...[]byte) *MemFetcher { return &MemFetcher{Regions: regions} }

// Stats returns the counts so far.
func (f *MemFetcher) Stats() Stats {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.stats
}

// Reset sets the counts to zero.
func (f *MemFetcher) Reset() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.stats = Stats{}
}

func (f *MemFetcher) bytes(region, offset, n uint32) ([]byte, error) {
	if int(region) >= len(f.Regions) {
		return nil, fmt.Errorf("clientruntest: region %d, %d are served", region, len(f.Regions))
	}
	r := f.Regions[region]
	if uint64(offset)+uint64(n) > uint64(len(r)) {
		return nil, fmt.Errorf("clientruntest: bytes %d..%d of region %d, which has %d", offset, uint64(offset)+uint64(n), region, len(r))
	}
	return r[offset : offset+n], nil
}

// Read implements clientrun.Fetcher.
func (f *MemFetcher) Read(ctx context.Context, reads []clientrun.Read) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	f.mu.Lock()
	f.stats.RoundTrips++
	f.stats.Reads++
	f.stats.Ranges += len(reads)
	f.mu.Unlock()
	for _, rd := range reads {
		b, err := f.bytes(rd.Region, rd.Offset, rd.Length)
		if err != nil {
			return err
		}
		if len(rd.Dst) != len(b) {
			return fmt.Errorf("clientruntest: a read of %d bytes into %d", len(b), len(rd.Dst))
		}
		copy(rd.Dst, b)
		f.mu.Lock()
		f.stats.Bytes += uint64(len(b))
		f.mu.Unlock()
	}
	return nil
}

// word is the 8-byte word at offset of region, for sync/atomic.
func (f *MemFetcher) word(ctx context.Context, region, offset uint32) (*uint64, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	f.mu.Lock()
	f.stats.RoundTrips++
	f.stats.Atomics++
	f.mu.Unlock()
	b, err := f.bytes(region, offset, 8)
	if err != nil {
		return nil, err
	}
	p := unsafe.Pointer(unsafe.SliceData(b))
	if uintptr(p)%8 != 0 {
		return nil, fmt.Errorf("clientruntest: the word at %d of region %d is not 8-byte aligned in memory", offset, region)
	}
	return (*uint64)(p), nil
}

// FetchAdd implements clientrun.Fetcher.
func (f *MemFetcher) FetchAdd(ctx context.Context, region, offset uint32, delta uint64) (uint64, error) {
	w, err := f.word(ctx, region, offset)
	if err != nil {
		return 0, err
	}
	return atomic.AddUint64(w, delta) - delta, nil
}

// CompareAndSwap implements clientrun.Fetcher.
func (f *MemFetcher) CompareAndSwap(ctx context.Context, region, offset uint32, old, new uint64) (uint64, error) {
	w, err := f.word(ctx, region, offset)
	if err != nil {
		return 0, err
	}
	for {
		prev := atomic.LoadUint64(w)
		if prev != old || atomic.CompareAndSwapUint64(w, old, new) {
			return prev, nil
		}
	}
}
