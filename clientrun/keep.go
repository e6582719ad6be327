package clientrun

import (
	"fmt"
	"slices"
	"sync"

	"github.com/naam-project/naam/bytecode"
)

// keptStore is what a Runner keeps from one run to the next (Config.Keep):
// the ranges it may keep, and the bytes of them fetched so far, as each
// region's extents. Runs copy kept bytes out; nothing writes an extent in
// place, so a run's copy never changes under it.
type keptStore struct {
	mu      sync.RWMutex
	ranges  []bytecode.AccessRange // sorted, merged
	regions []*regionCache         // by region index; their run is nil
	bytes   uint64                 // held, in all regions
}

// CheckKeep says whether ranges can be a Runner's of obj (Config.Keep,
// Runner.Keep): each inside a region of obj, named by its index; the
// error names the first range that is not.
func CheckKeep(obj *bytecode.Object, ranges []bytecode.AccessRange) error {
	_, err := checkKeep(obj, ranges)
	return err
}

// checkKeep validates ranges against obj's regions and returns them
// sorted and merged.
func checkKeep(obj *bytecode.Object, ranges []bytecode.AccessRange) ([]bytecode.AccessRange, error) {
	out := make([]bytecode.AccessRange, 0, len(ranges))
	for i, a := range ranges {
		if int(a.Region) >= len(obj.Regions) {
			return nil, fmt.Errorf("clientrun: keep range %d: region %d, the object has %d", i, a.Region, len(obj.Regions))
		}
		if a.End() > obj.Regions[a.Region].Size {
			return nil, fmt.Errorf("clientrun: keep range %d: bytes %d…%d of region %q, which has %d", i, a.Offset, a.End(), obj.Regions[a.Region].Name, obj.Regions[a.Region].Size)
		}
		if a.Length > 0 {
			out = append(out, a)
		}
	}
	slices.SortFunc(out, func(a, b bytecode.AccessRange) int {
		if a.Region != b.Region {
			return int(a.Region) - int(b.Region)
		}
		return int(int64(a.Offset) - int64(b.Offset))
	})
	merged := out[:0]
	for _, a := range out {
		if n := len(merged); n > 0 && merged[n-1].Region == a.Region && merged[n-1].End() >= uint64(a.Offset) {
			last := &merged[n-1]
			last.Length = uint32(max(last.End(), a.End()) - uint64(last.Offset))
			continue
		}
		merged = append(merged, a)
	}
	return merged, nil
}

// reset replaces the ranges and drops every kept byte.
func (k *keptStore) reset(ranges []bytecode.AccessRange, regions int) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.ranges = ranges
	k.regions = make([]*regionCache, regions)
	for i := range k.regions {
		k.regions[i] = &regionCache{index: uint32(i)}
	}
	k.bytes = 0
}

// forget drops every kept byte and keeps the ranges.
func (k *keptStore) forget() {
	k.mu.Lock()
	defer k.mu.Unlock()
	for _, c := range k.regions {
		c.ext = nil
	}
	k.bytes = 0
}

// held is the bytes kept.
func (k *keptStore) held() uint64 {
	k.mu.RLock()
	defer k.mu.RUnlock()
	return k.bytes
}

// serve copies into the run the kept bytes of ranges (none of which the
// run holds) and returns how many it gave.
func (k *keptStore) serve(run *fetchRun, ranges []bytecode.AccessRange) uint64 {
	k.mu.RLock()
	defer k.mu.RUnlock()
	if k.bytes == 0 {
		return 0
	}
	var n uint64
	for _, a := range ranges {
		kc := k.regions[a.Region]
		for _, e := range kc.ext {
			lo, hi := max(uint64(e.off), uint64(a.Offset)), min(e.end(), a.End())
			if lo >= hi {
				continue
			}
			b := e.data[lo-uint64(e.off) : hi-uint64(e.off)]
			run.regions[a.Region].insert(uint32(lo), append([]byte(nil), b...))
			n += hi - lo
		}
	}
	return n
}

// keep adds the parts of reads that lie in the kept ranges and are not
// held yet.
func (k *keptStore) keep(reads []Read) {
	k.mu.Lock()
	defer k.mu.Unlock()
	for _, rd := range reads {
		for _, a := range k.ranges {
			if a.Region != rd.Region {
				continue
			}
			lo, hi := max(uint64(a.Offset), uint64(rd.Offset)), min(a.End(), rd.End())
			if lo >= hi {
				continue
			}
			kc := k.regions[a.Region]
			for _, m := range kc.missing(lo, hi) {
				at := uint64(m.Offset) - uint64(rd.Offset)
				kc.insert(m.Offset, append([]byte(nil), rd.Dst[at:at+uint64(m.Length)]...))
				k.bytes += uint64(m.Length)
			}
		}
	}
}
