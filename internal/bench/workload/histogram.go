package workload

import (
	"math"
	"math/bits"
	"time"
)

// Histogram records latencies in log-linear buckets, as HdrHistogram
// does: values below 2^subBits nanoseconds exactly, larger ones in
// 2^subBits buckets per power of two, so a recorded value is known within
// 1/2^subBits (0.8%) of itself. Memory is fixed (numBuckets counters)
// however many values are recorded. Not safe for concurrent use: record
// per goroutine and Merge.
type Histogram struct {
	counts   [numBuckets]uint64
	n        uint64
	sum      float64
	min, max uint64
}

const (
	subBits    = 7
	subCount   = 1 << subBits
	numBuckets = (64 - subBits + 1) * subCount
)

// bucketOf is v's bucket.
func bucketOf(v uint64) int {
	if v < subCount {
		return int(v)
	}
	shift := bits.Len64(v) - subBits - 1
	return (shift+1)*subCount + int(v>>uint(shift)) - subCount
}

// bucketRange is the range [lo, hi] of values bucket b holds.
func bucketRange(b int) (lo, hi uint64) {
	if b < subCount {
		return uint64(b), uint64(b)
	}
	shift := uint(b/subCount - 1)
	lo = uint64(b%subCount+subCount) << shift
	return lo, lo + (1 << shift) - 1
}

// Record adds one latency (negative ones count as 0).
func (h *Histogram) Record(d time.Duration) {
	v := uint64(max(d, 0))
	h.counts[bucketOf(v)]++
	if h.n == 0 || v < h.min {
		h.min = v
	}
	h.max = max(h.max, v)
	h.n++
	h.sum += float64(v)
}

// Merge adds o's values to h.
func (h *Histogram) Merge(o *Histogram) {
	if o.n == 0 {
		return
	}
	for i, c := range o.counts {
		h.counts[i] += c
	}
	if h.n == 0 || o.min < h.min {
		h.min = o.min
	}
	h.max = max(h.max, o.max)
	h.n += o.n
	h.sum += o.sum
}

// Count is the number of values recorded.
func (h *Histogram) Count() uint64 { return h.n }

// Min, Max and Mean of the values recorded (exact); 0 when empty.
func (h *Histogram) Min() time.Duration { return time.Duration(h.min) }
func (h *Histogram) Max() time.Duration { return time.Duration(h.max) }
func (h *Histogram) Mean() time.Duration {
	if h.n == 0 {
		return 0
	}
	return time.Duration(h.sum / float64(h.n))
}

// Quantile is the value at quantile q in [0, 1]: the smallest recorded
// value v such that at least q of the values are ≤ v, given as the middle
// of its bucket (exact below 128 ns), clamped to [Min, Max]. 0 when empty.
func (h *Histogram) Quantile(q float64) time.Duration {
	if h.n == 0 {
		return 0
	}
	rank := uint64(math.Ceil(q * float64(h.n)))
	rank = min(max(rank, 1), h.n)
	var seen uint64
	for b, c := range h.counts {
		seen += c
		if seen >= rank {
			lo, hi := bucketRange(b)
			mid := lo + (hi-lo)/2
			return time.Duration(min(max(mid, h.min), h.max))
		}
	}
	return time.Duration(h.max)
}

// CDFPoint is one step of a latency CDF: Fraction of the values are ≤
// Latency.
type CDFPoint struct {
	Latency  time.Duration
	Fraction float64
}

// CDF is the cumulative distribution, one point per non-empty bucket (at
// the bucket's upper end, clamped to Max).
func (h *Histogram) CDF() []CDFPoint {
	var pts []CDFPoint
	var seen uint64
	for b, c := range h.counts {
		if c == 0 {
			continue
		}
		seen += c
		_, hi := bucketRange(b)
		pts = append(pts, CDFPoint{Latency: time.Duration(min(hi, h.max)), Fraction: float64(seen) / float64(h.n)})
	}
	return pts
}
