package scalar

import (
	"math"
	"slices"
	"sort"
)

// Thresholds is the set of constants Widen stops at, sorted so that each
// lookup is a binary search: a widening costs O(log n) however many
// constants the program has. A spread set stands for every value c-1, c
// and c+1 (modulo 2^64) of its constants c without storing them.
type Thresholds struct {
	u      []uint64 // ascending, unique
	neg    int      // index of the first element with the top bit set
	spread bool
}

// NewThresholds sorts and deduplicates vals in place and returns the set
// of them.
func NewThresholds(vals []uint64) Thresholds {
	slices.Sort(vals)
	vals = slices.Compact(vals)
	return Thresholds{u: vals, neg: sort.Search(len(vals), func(i int) bool { return vals[i] >= signBit })}
}

// NewSpreadThresholds is NewThresholds of every c-1, c and c+1 for c in
// vals, in the memory of vals.
func NewSpreadThresholds(vals []uint64) Thresholds {
	t := NewThresholds(vals)
	t.spread = true
	return t
}

// view is the set in unsigned order, or (signed) in signed order with
// each element's top bit flipped, which makes signed order unsigned and
// keeps c±1 as c±1.
func (t Thresholds) view(signed bool) (int, func(int) uint64) {
	n := len(t.u)
	if !signed {
		return n, func(i int) uint64 { return t.u[i] }
	}
	return n, func(i int) uint64 { return t.u[(i+t.neg)%n] ^ signBit }
}

// pred is the largest element <= x of the set seen through at.
func (t Thresholds) pred(n int, at func(int) uint64, x uint64) (uint64, bool) {
	best, ok := uint64(0), false
	take := func(v uint64) {
		if !ok || v > best {
			best, ok = v, true
		}
	}
	le := func(y uint64) int { return sort.Search(n, func(i int) bool { return at(i) > y }) - 1 } // largest index with at(i) <= y
	if i := le(x); i >= 0 {
		take(at(i))
	}
	if !t.spread || n == 0 {
		return best, ok
	}
	if x >= 1 { // c+1 <= x
		if i := le(x - 1); i >= 0 {
			take(at(i) + 1)
		}
	}
	if at(n-1) == maxU64 { // maxU64+1 wraps to 0
		take(0)
	}
	if x < maxU64 { // c-1 <= x, c != 0
		if i := le(x + 1); i >= 0 && at(i) != 0 {
			take(at(i) - 1)
		}
	} else if at(n-1) != 0 {
		take(at(n-1) - 1)
	}
	if at(0) == 0 && x == maxU64 { // 0-1 wraps to maxU64
		take(maxU64)
	}
	return best, ok
}

// succ is the smallest element >= x of the set seen through at.
func (t Thresholds) succ(n int, at func(int) uint64, x uint64) (uint64, bool) {
	best, ok := uint64(0), false
	take := func(v uint64) {
		if !ok || v < best {
			best, ok = v, true
		}
	}
	ge := func(y uint64) int { return sort.Search(n, func(i int) bool { return at(i) >= y }) } // smallest index with at(i) >= y
	if i := ge(x); i < n {
		take(at(i))
	}
	if !t.spread || n == 0 {
		return best, ok
	}
	// c+1 >= x, c != maxU64.
	if i := ge(max(x, 1) - 1); i < n && at(i) != maxU64 {
		take(at(i) + 1)
	}
	if at(n-1) == maxU64 && x == 0 { // maxU64+1 wraps to 0
		take(0)
	}
	if x < maxU64 { // c-1 >= x: c >= x+1 >= 1
		if i := ge(x + 1); i < n {
			take(at(i) - 1)
		}
	}
	if at(0) == 0 { // 0-1 wraps to maxU64
		take(maxU64)
	}
	return best, ok
}

// predU is the largest threshold <= x.
func (t Thresholds) predU(x uint64) (uint64, bool) {
	n, at := t.view(false)
	return t.pred(n, at, x)
}

// succU is the smallest threshold >= x.
func (t Thresholds) succU(x uint64) (uint64, bool) {
	n, at := t.view(false)
	return t.succ(n, at, x)
}

// predS is the largest threshold, read as an int64, <= y.
func (t Thresholds) predS(y int64) (int64, bool) {
	n, at := t.view(true)
	v, ok := t.pred(n, at, uint64(y)^signBit)
	return int64(v ^ signBit), ok
}

// succS is the smallest threshold, read as an int64, >= y.
func (t Thresholds) succS(y int64) (int64, bool) {
	n, at := t.view(true)
	v, ok := t.succ(n, at, uint64(y)^signBit)
	return int64(v ^ signBit), ok
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
