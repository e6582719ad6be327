package clientrun

import (
	"fmt"
	"slices"
	"sort"
	"sync"

	"github.com/naam-project/naam/bytecode"
)

// Keep is what a Runner keeps from one run to the next (Config.Keep,
// Runner.Keep): units of the object's regions that runs fetched, for
// later runs to read without a READ.
type Keep struct {
	// Ranges are the units, of the object's regions by region index; they
	// may not overlap. A unit is kept and given out whole or not at all:
	// kept only when one read of a run that replied brought all of it
	// (one Fetcher.Read range, within one Config.ReadPiece of it: the
	// handler's checks of a unit read at one go, such as a node's two
	// versions, hold for the copy), given to a run only when it holds none
	// of it yet (a run never joins a kept unit to fresh bytes). So a unit
	// is one record the handler checks as a whole: a B-tree node, not a
	// level.
	Ranges []bytecode.AccessRange
	// DropOn are the handler's fail codes that say a copy misled it (one
	// a writer tore, one too old to lead it to its data): a run that used
	// kept units and failed with one of them, or with a code compiled code
	// fails with of its own (bytecode.FailIndexOutOfRange and the rest),
	// or faulted, drops the units it used, so that the next run fetches
	// them afresh. nil: every fail drops them.
	DropOn []int32
}

// keptStore is what a Runner keeps. Runs copy kept units out and commit
// copies in; nothing writes a kept unit in place, so a run's copy never
// changes under it. The units and codes are replaced whole, never
// changed, so a run may hold on to the ones it began with.
type keptStore struct {
	mu     sync.RWMutex
	gen    uint64                 // +1 at every reset, forget and drop
	epoch  uint64                 // +1 at every reset: the units' indices change
	units  []bytecode.AccessRange // sorted
	dropOn []int32
	kept   map[int][]byte // by index in units
	bytes  uint64         // held
}

// keptUnit is a run's copy of unit i, for the store.
type keptUnit struct {
	i    int
	data []byte
}

// CheckKeep says whether k can be a Runner's of obj (Config.Keep,
// Runner.Keep): each range inside a region of obj, named by its index,
// and no two overlapping; the error names the first range that is not.
func CheckKeep(obj *bytecode.Object, k Keep) error {
	_, err := checkKeep(obj, k.Ranges)
	return err
}

// checkKeep validates units against obj's regions and returns them
// sorted, without the empty ones.
func checkKeep(obj *bytecode.Object, units []bytecode.AccessRange) ([]bytecode.AccessRange, error) {
	type indexed struct {
		bytecode.AccessRange
		i int
	}
	out := make([]indexed, 0, len(units))
	for i, a := range units {
		if int(a.Region) >= len(obj.Regions) {
			return nil, fmt.Errorf("clientrun: keep range %d: region %d, the object has %d", i, a.Region, len(obj.Regions))
		}
		if a.End() > obj.Regions[a.Region].Size {
			return nil, fmt.Errorf("clientrun: keep range %d: bytes %d…%d of region %q, which has %d", i, a.Offset, a.End(), obj.Regions[a.Region].Name, obj.Regions[a.Region].Size)
		}
		if a.Length > 0 {
			out = append(out, indexed{a, i})
		}
	}
	slices.SortFunc(out, func(a, b indexed) int { return compareRanges(a.AccessRange, b.AccessRange) })
	sorted := make([]bytecode.AccessRange, len(out))
	for j, a := range out {
		if j > 0 && out[j-1].Region == a.Region && out[j-1].End() > uint64(a.Offset) {
			lo, hi := min(out[j-1].i, a.i), max(out[j-1].i, a.i)
			return nil, fmt.Errorf("clientrun: keep ranges %d and %d overlap (a unit is kept whole)", lo, hi)
		}
		sorted[j] = a.AccessRange
	}
	return sorted, nil
}

func compareRanges(a, b bytecode.AccessRange) int {
	if a.Region != b.Region {
		return int(a.Region) - int(b.Region)
	}
	return int(int64(a.Offset) - int64(b.Offset))
}

// from is the index of the first unit of region that ends after off.
func from(units []bytecode.AccessRange, region uint32, off uint64) int {
	return sort.Search(len(units), func(i int) bool {
		u := units[i]
		return u.Region > region || (u.Region == region && u.End() > off)
	})
}

// reset replaces the units and codes (units sorted) and drops every kept
// byte.
func (k *keptStore) reset(units []bytecode.AccessRange, dropOn []int32) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.gen++
	k.epoch++
	k.units, k.dropOn = units, slices.Clone(dropOn)
	k.kept, k.bytes = map[int][]byte{}, 0
}

// forget drops every kept unit and keeps the units.
func (k *keptStore) forget() {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.gen++
	k.kept, k.bytes = map[int][]byte{}, 0
}

// held is the bytes kept.
func (k *keptStore) held() uint64 {
	k.mu.RLock()
	defer k.mu.RUnlock()
	return k.bytes
}

// begin is what a run starts with: the generation its commit must find,
// the epoch of the units' indices, and the units it collects copies of
// (none: it collects nothing).
func (k *keptStore) begin() (gen, epoch uint64, units []bytecode.AccessRange) {
	k.mu.RLock()
	defer k.mu.RUnlock()
	return k.gen, k.epoch, k.units
}

// serve copies into the run every kept unit that overlaps ranges and of
// which the run holds nothing, and returns the bytes it gave; a run gets
// units only of the epoch it began in (a reset since: none), so that a
// failure can drop what it used.
func (k *keptStore) serve(run *fetchRun, ranges []bytecode.AccessRange) uint64 {
	k.mu.RLock()
	defer k.mu.RUnlock()
	if k.bytes == 0 || k.epoch != run.keptEpoch {
		return 0 // nothing kept, or not of the units the run began with
	}
	var n uint64
	for _, a := range ranges {
		for i := from(k.units, a.Region, uint64(a.Offset)); i < len(k.units); i++ {
			u := k.units[i]
			if u.Region != a.Region || uint64(u.Offset) >= a.End() {
				break
			}
			data, ok := k.kept[i]
			if !ok || !run.regions[u.Region].holdsNone(uint64(u.Offset), u.End()) {
				continue
			}
			run.regions[u.Region].insert(u.Offset, slices.Clone(data))
			run.served = append(run.served, i)
			n += uint64(u.Length)
		}
	}
	return n
}

// collect returns copies of the units that lie wholly inside one of
// reads, and inside one piece of it: piece bytes from the read's start
// (0: the whole read), what the Fetcher reads at one moment.
func collect(units []bytecode.AccessRange, reads []Read, piece uint32) []keptUnit {
	var out []keptUnit
	for _, rd := range reads {
		for i := from(units, rd.Region, uint64(rd.Offset)); i < len(units); i++ {
			u := units[i]
			if u.Region != rd.Region || u.End() > rd.End() {
				break
			}
			if u.Offset < rd.Offset {
				continue // begins before the read
			}
			at := u.Offset - rd.Offset
			if piece > 0 && at/piece != (at+u.Length-1)/piece {
				continue // across two pieces, which the Fetcher may read in either order
			}
			out = append(out, keptUnit{i: i, data: slices.Clone(rd.Dst[at : at+u.Length])})
		}
	}
	return out
}

// commit keeps the units a run that began at gen collected and replied
// with, unless the store was reset or forgotten since.
func (k *keptStore) commit(gen uint64, units []keptUnit) {
	if len(units) == 0 {
		return
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.gen != gen {
		return
	}
	for _, u := range units {
		if _, ok := k.kept[u.i]; !ok {
			k.kept[u.i] = u.data
			k.bytes += uint64(len(u.data))
		}
	}
}

// failed is the end of a run that used the kept units served (by index
// in the units of epoch) and did not reply: code is its fail code
// (OutcomeError), fault says it faulted instead. If the failure is one
// that a copy may have caused, it drops those units, unless the units
// were replaced since.
func (k *keptStore) failed(epoch uint64, served []int, code int32, fault bool) {
	reserved := code <= 0 || bytecode.FailName(int64(code)) != "" // an index out of range, a short request…
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.epoch != epoch || !(fault || reserved || k.dropOn == nil || slices.Contains(k.dropOn, code)) {
		return
	}
	for _, i := range served {
		if data, ok := k.kept[i]; ok {
			delete(k.kept, i)
			k.bytes -= uint64(len(data))
		}
	}
	// Runs under way may hold copies as old as the ones dropped: none of
	// them adds what it collected.
	k.gen++
}
