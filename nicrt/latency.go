package nicrt

import (
	"math/bits"
	"sync/atomic"
	"time"
)

// LatencyBuckets is the number of buckets of a RunTimes histogram.
const LatencyBuckets = 16

// latencyBase is the upper bound of the first bucket.
const latencyBase = 250 * time.Nanosecond

// RunTimes is a histogram of how long a handler's runs took on their
// cores (the VM run with its accounting, not the time queued): bucket i
// counts runs shorter than LatencyBound(i) and not shorter than the bound
// before it; the last bucket has no upper bound.
type RunTimes struct {
	Counts [LatencyBuckets]uint64
	Sum    time.Duration
}

// LatencyBound is the upper bound of bucket i of a RunTimes: 250 ns·2^i,
// 250 ns … 4.096 ms; the last bucket's bound is infinite (returned as 0).
func LatencyBound(i int) time.Duration {
	if i >= LatencyBuckets-1 {
		return 0
	}
	return latencyBase << i
}

// runTimes is the live histogram: one atomic counter per bucket.
type runTimes struct {
	counts [LatencyBuckets]atomic.Uint64
	sum    atomic.Uint64
}

func (r *runTimes) observe(d time.Duration) {
	i := 0
	if d > 0 {
		i = min(bits.Len64(uint64(d/latencyBase)), LatencyBuckets-1)
	}
	r.counts[i].Add(1)
	r.sum.Add(uint64(d))
}

func (r *runTimes) snapshot() RunTimes {
	var s RunTimes
	for i := range s.Counts {
		s.Counts[i] = r.counts[i].Load()
	}
	s.Sum = time.Duration(r.sum.Load())
	return s
}
