package clientrun

import (
	"fmt"
	"slices"
	"sort"
	"sync"

	"github.com/naam-project/naam/bytecode"
)

// Keep is what a Runner keeps from one run to the next (Config.Keep,
// Runner.Keep): the bytes of Ranges that runs fetched, for later runs to
// read without a READ.
type Keep struct {
	// Ranges are of the object's regions, by region index.
	Ranges []bytecode.AccessRange
	// DropOn are the handler's fail codes that say a copy misled it (one
	// a writer tore, one too old to lead it to its data): a run that used
	// kept bytes and failed with one of them, or with a code compiled code
	// fails with of its own (bytecode.FailIndexOutOfRange and the rest),
	// or faulted, drops everything kept. nil: every fail drops them.
	DropOn []int32
}

// keptStore is what a Runner keeps. Runs copy kept bytes out and commit
// copies in; nothing writes an extent in place, so a run's copy never
// changes under it. The ranges and codes are replaced whole, never
// changed, so a run may hold on to the ones it began with.
type keptStore struct {
	mu      sync.RWMutex
	gen     uint64                 // +1 at every reset and forget
	ranges  []bytecode.AccessRange // sorted, merged
	dropOn  []int32
	regions []*regionCache // by region index; their run is nil
	bytes   uint64         // held, in all regions
}

// CheckKeep says whether k can be a Runner's of obj (Config.Keep,
// Runner.Keep): each range inside a region of obj, named by its index;
// the error names the first range that is not.
func CheckKeep(obj *bytecode.Object, k Keep) error {
	_, err := checkKeep(obj, k.Ranges)
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

// reset replaces the ranges and codes (ranges sorted and merged) and
// drops every kept byte.
func (k *keptStore) reset(ranges []bytecode.AccessRange, dropOn []int32, regions int) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.gen++
	k.ranges, k.dropOn = ranges, slices.Clone(dropOn)
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
	k.forgetLocked()
}

func (k *keptStore) forgetLocked() {
	k.gen++
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

// begin is what a run starts with: the generation its commit must find,
// and the ranges it collects copies of (none: it collects nothing).
func (k *keptStore) begin() (gen uint64, ranges []bytecode.AccessRange) {
	k.mu.RLock()
	defer k.mu.RUnlock()
	return k.gen, k.ranges
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
		ext := k.regions[a.Region].ext
		i := sort.Search(len(ext), func(i int) bool { return ext[i].end() > uint64(a.Offset) })
		for _, e := range ext[i:] {
			if uint64(e.off) >= a.End() {
				break
			}
			lo, hi := max(uint64(e.off), uint64(a.Offset)), min(e.end(), a.End())
			b := e.data[lo-uint64(e.off) : hi-uint64(e.off)]
			run.regions[a.Region].insert(uint32(lo), append([]byte(nil), b...))
			n += hi - lo
		}
	}
	return n
}

// collect returns copies of the parts of reads that lie in ranges.
func collect(ranges []bytecode.AccessRange, reads []Read) []Read {
	var out []Read
	for _, rd := range reads {
		for _, a := range ranges {
			if a.Region != rd.Region {
				continue
			}
			lo, hi := max(uint64(a.Offset), uint64(rd.Offset)), min(a.End(), rd.End())
			if lo >= hi {
				continue
			}
			at := lo - uint64(rd.Offset)
			out = append(out, Read{
				AccessRange: bytecode.AccessRange{Region: rd.Region, Offset: uint32(lo), Length: uint32(hi - lo)},
				Dst:         append([]byte(nil), rd.Dst[at:at+(hi-lo)]...),
			})
		}
	}
	return out
}

// commit keeps what a run that began at gen collected and replied with,
// unless the store was reset or forgotten since.
func (k *keptStore) commit(gen uint64, reads []Read) {
	if len(reads) == 0 {
		return
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.gen != gen {
		return
	}
	for _, rd := range reads {
		kc := k.regions[rd.Region]
		for _, m := range kc.missing(uint64(rd.Offset), rd.End()) {
			at := m.Offset - rd.Offset
			kc.insert(m.Offset, rd.Dst[at:at+m.Length])
			k.bytes += uint64(m.Length)
		}
	}
}

// failed is the end of a run that began at gen, used kept bytes and did
// not reply: code is its fail code (OutcomeError), fault says it faulted
// instead. It drops everything kept if the failure is one that a copy
// may have caused and nothing has dropped them since.
func (k *keptStore) failed(gen uint64, code int32, fault bool) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.gen != gen {
		return
	}
	reserved := code <= 0 || bytecode.FailName(int64(code)) != "" // an index out of range, a short request…
	if fault || reserved || k.dropOn == nil || slices.Contains(k.dropOn, code) {
		k.forgetLocked()
	}
}
