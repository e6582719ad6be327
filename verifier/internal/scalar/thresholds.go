package scalar

import (
	"math"
	"slices"
	"sort"
)

// Thresholds is the set of constants Widen stops at, sorted so that each
// lookup is a binary search: a widening costs O(log n) however many
// constants the program has.
type Thresholds struct {
	u   []uint64 // ascending, unique
	neg int      // index of the first element with the top bit set
}

// NewThresholds sorts and deduplicates vals in place and returns the set.
func NewThresholds(vals []uint64) Thresholds {
	slices.Sort(vals)
	vals = slices.Compact(vals)
	return Thresholds{u: vals, neg: sort.Search(len(vals), func(i int) bool { return vals[i] >= 1<<63 })}
}

// Len is the number of thresholds.
func (t Thresholds) Len() int { return len(t.u) }

// predU is the largest threshold <= x.
func (t Thresholds) predU(x uint64) (uint64, bool) {
	i := sort.Search(len(t.u), func(i int) bool { return t.u[i] > x })
	if i == 0 {
		return 0, false
	}
	return t.u[i-1], true
}

// succU is the smallest threshold >= x.
func (t Thresholds) succU(x uint64) (uint64, bool) {
	i := sort.Search(len(t.u), func(i int) bool { return t.u[i] >= x })
	if i == len(t.u) {
		return 0, false
	}
	return t.u[i], true
}

// predS is the largest threshold, read as an int64, <= y. In signed order
// the set is u[neg:] (the negative values, ascending) then u[:neg].
func (t Thresholds) predS(y int64) (int64, bool) {
	if y >= 0 {
		pos := t.u[:t.neg]
		if i := sort.Search(len(pos), func(i int) bool { return pos[i] > uint64(y) }); i > 0 {
			return int64(pos[i-1]), true
		}
		if t.neg < len(t.u) {
			return int64(t.u[len(t.u)-1]), true
		}
		return 0, false
	}
	negs := t.u[t.neg:]
	if i := sort.Search(len(negs), func(i int) bool { return negs[i] > uint64(y) }); i > 0 {
		return int64(negs[i-1]), true
	}
	return 0, false
}

// succS is the smallest threshold, read as an int64, >= y.
func (t Thresholds) succS(y int64) (int64, bool) {
	if y < 0 {
		negs := t.u[t.neg:]
		if i := sort.Search(len(negs), func(i int) bool { return negs[i] >= uint64(y) }); i < len(negs) {
			return int64(negs[i]), true
		}
		if t.neg > 0 {
			return int64(t.u[0]), true
		}
		return 0, false
	}
	pos := t.u[:t.neg]
	if i := sort.Search(len(pos), func(i int) bool { return pos[i] >= uint64(y) }); i < len(pos) {
		return int64(pos[i]), true
	}
	return 0, false
}

// The bounds a widened range jumps to. Each is the nearest threshold (or
// extra limit) beyond the new bound, strictly inside the open side; else
// the limit itself.

func (t Thresholds) widenUmin(x uint64) uint64 {
	if p, ok := t.predU(x); ok {
		return p // 0 when nothing above 0 is <= x
	}
	return 0
}

func (t Thresholds) widenUmax(x uint64) uint64 {
	w := maxU64
	if s, ok := t.succU(x); ok && s < w {
		w = s
	}
	if maxU32 >= x && maxU32 < w {
		w = maxU32
	}
	return w
}

func (t Thresholds) widenSmin(y int64) int64 {
	w := int64(math.MinInt64)
	if p, ok := t.predS(y); ok && p > w {
		w = p
	}
	for _, e := range [...]int64{math.MinInt32, 0} {
		if e <= y && e > w {
			w = e
		}
	}
	return w
}

func (t Thresholds) widenSmax(y int64) int64 {
	w := int64(math.MaxInt64)
	if s, ok := t.succS(y); ok && s < w {
		w = s
	}
	for _, e := range [...]int64{math.MaxInt32, int64(maxU32)} {
		if e >= y && e < w {
			w = e
		}
	}
	return w
}
