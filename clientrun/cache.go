package clientrun

import (
	"context"
	"encoding/binary"
	"fmt"
	"slices"
	"sort"

	"github.com/naam-project/naam/bytecode"
)

// fetchRun is the state of one run: what was fetched and what it cost.
type fetchRun struct {
	ctx     context.Context
	f       Fetcher
	cfg     *Config
	stats   Stats
	regions []*regionCache
	kept    *keptStore // the runner's; nil in the cache's own test
	// keptGen, keptEpoch and keepUnits are the store's as the run began;
	// collected is the copies of the units one of the run's reads brought
	// whole, which the store takes if the run replies.
	keptGen   uint64
	keptEpoch uint64
	keepUnits []bytecode.AccessRange
	collected []keptUnit
	served    []int // the kept units the run was given, by index
}

// regionCache is what a run holds of one region: the bytes fetched so far,
// as sorted extents that neither overlap nor touch. It is the region's
// vm.RemoteMemory.
type regionCache struct {
	run   *fetchRun
	index uint32
	size  uint32
	ext   []extent
}

type extent struct {
	off  uint32
	data []byte
}

func (e extent) end() uint64 { return uint64(e.off) + uint64(len(e.data)) }

// Len implements vm.RemoteMemory.
func (c *regionCache) Len() int { return int(c.size) }

// missing returns the ranges of [off, end) that are not held.
func (c *regionCache) missing(off, end uint64) []bytecode.AccessRange {
	var out []bytecode.AccessRange
	cur := off
	for _, e := range c.ext {
		if e.end() <= cur {
			continue
		}
		if uint64(e.off) >= end {
			break
		}
		if uint64(e.off) > cur {
			out = append(out, bytecode.AccessRange{Region: c.index, Offset: uint32(cur), Length: uint32(uint64(e.off) - cur)})
		}
		cur = max(cur, e.end())
	}
	if cur < end {
		out = append(out, bytecode.AccessRange{Region: c.index, Offset: uint32(cur), Length: uint32(end - cur)})
	}
	return out
}

// insert adds data at off, which must not overlap what is held, and
// merges it with the extents it touches.
func (c *regionCache) insert(off uint32, data []byte) {
	c.ext = append(c.ext, extent{off: off, data: data})
	slices.SortFunc(c.ext, func(a, b extent) int { return int(int64(a.off) - int64(b.off)) })
	out := c.ext[:1]
	for _, e := range c.ext[1:] {
		last := &out[len(out)-1]
		if last.end() == uint64(e.off) {
			last.data = append(last.data[:len(last.data):len(last.data)], e.data...)
			continue
		}
		out = append(out, e)
	}
	c.ext = out
}

// holdsNone says whether the run holds no byte of [off, end).
func (c *regionCache) holdsNone(off, end uint64) bool {
	i := sort.Search(len(c.ext), func(i int) bool { return c.ext[i].end() > off })
	return i == len(c.ext) || uint64(c.ext[i].off) >= end
}

// copyOut copies the held bytes [off, off+len(p)) into p; they must all
// be held.
func (c *regionCache) copyOut(p []byte, off uint32) {
	e := c.ext[c.find(off)]
	copy(p, e.data[off-e.off:])
}

// write sets the bytes at off to data in what the run holds, adding what
// it did not hold: the value a verb returned.
func (c *regionCache) write(off uint32, data []byte) {
	for _, m := range c.missing(uint64(off), uint64(off)+uint64(len(data))) {
		c.insert(m.Offset, append([]byte(nil), data[m.Offset-off:m.Offset-off+m.Length]...))
	}
	e := c.ext[c.find(off)]
	copy(e.data[off-e.off:], data)
}

// find is the index of the extent holding byte off.
func (c *regionCache) find(off uint32) int {
	i, _ := slices.BinarySearchFunc(c.ext, off, func(e extent, off uint32) int {
		if e.end() <= uint64(off) {
			return -1
		}
		if uint64(e.off) > uint64(off) {
			return 1
		}
		return 0
	})
	return i
}

// ReadAt implements vm.RemoteMemory: the bytes come from what the run
// holds; what it lacks of the FetchSize bytes from off (at least p's) is
// fetched in one round trip, an extra read.
func (c *regionCache) ReadAt(p []byte, off uint32) error {
	end := uint64(off) + uint64(len(p))
	// What the runner kept of the read comes first: a fetch, and the bytes
	// ahead that it brings, only if the read still lacks some.
	if miss := c.run.takeKept(c.missing(uint64(off), end)); len(miss) > 0 {
		window := min(max(end, uint64(off)+uint64(c.run.cfg.FetchSize)), uint64(c.size))
		ahead := c.missing(uint64(off), window)
		if c.run.stats.BytesRead+rangeBytes(ahead) <= uint64(c.run.cfg.MaxBytes) {
			miss = ahead // near the limit, only what the read needs
		}
		if err := c.run.fetch(miss, true); err != nil {
			return err
		}
	}
	c.copyOut(p, off)
	return nil
}

// FetchAdd implements vm.RemoteMemory with the Fetcher's FETCH-ADD.
func (c *regionCache) FetchAdd(off uint32, delta uint64) (uint64, error) {
	r := c.run
	r.stats.RoundTrips++
	r.stats.Atomics++
	old, err := r.f.FetchAdd(r.ctx, c.index, off, delta)
	if err != nil {
		return 0, err
	}
	c.write(off, binary.LittleEndian.AppendUint64(nil, old+delta))
	return old, nil
}

// CompareAndSwap implements vm.RemoteMemory with the Fetcher's CAS.
func (c *regionCache) CompareAndSwap(off uint32, old, new uint64) (uint64, error) {
	r := c.run
	r.stats.RoundTrips++
	r.stats.Atomics++
	prev, err := r.f.CompareAndSwap(r.ctx, c.index, off, old, new)
	if err != nil {
		return 0, err
	}
	now := prev
	if prev == old {
		now = new
	}
	c.write(off, binary.LittleEndian.AppendUint64(nil, now))
	return prev, nil
}

// fetch reads ranges (none of them held) in one round trip and keeps
// their bytes; extra says the handler asked for them beyond its
// declaration. What the runner kept of them (Config.Keep) comes from
// there, and costs no round trip if it is all of them.
func (r *fetchRun) fetch(ranges []bytecode.AccessRange, extra bool) error {
	if len(ranges) == 0 {
		return nil
	}
	if ranges = r.takeKept(ranges); len(ranges) == 0 {
		return nil
	}
	n := rangeBytes(ranges)
	if r.stats.BytesRead+n > uint64(r.cfg.MaxBytes) {
		return fmt.Errorf("%w: %d bytes fetched and %d more needed, at most %d per run (Config.MaxBytes)", ErrFetchLimit, r.stats.BytesRead, n, r.cfg.MaxBytes)
	}
	reads := make([]Read, len(ranges))
	for i, a := range ranges {
		reads[i] = Read{AccessRange: a, Dst: make([]byte, a.Length)}
	}
	r.stats.RoundTrips++
	if extra {
		r.stats.ExtraReads++
	}
	r.stats.BytesRead += n
	if err := r.f.Read(r.ctx, reads); err != nil {
		return err
	}
	for _, rd := range reads {
		r.regions[rd.Region].insert(rd.Offset, rd.Dst)
	}
	if len(r.keepUnits) > 0 {
		r.collected = append(r.collected, collect(r.keepUnits, reads, r.cfg.ReadPiece)...)
	}
	return nil
}

// takeKept copies into the run the kept units that overlap ranges (none
// of them held) and of which it holds nothing, and returns what is still
// missing of ranges.
func (r *fetchRun) takeKept(ranges []bytecode.AccessRange) []bytecode.AccessRange {
	if len(r.keepUnits) == 0 || len(ranges) == 0 {
		return ranges // nothing kept, or nothing to take
	}
	n := r.kept.serve(r, ranges)
	if n == 0 {
		return ranges
	}
	r.stats.KeptBytes += n
	var rest []bytecode.AccessRange
	for _, a := range ranges {
		rest = append(rest, r.regions[a.Region].missing(uint64(a.Offset), a.End())...)
	}
	return rest
}

func rangeBytes(ranges []bytecode.AccessRange) uint64 {
	var n uint64
	for _, a := range ranges {
		n += uint64(a.Length)
	}
	return n
}
