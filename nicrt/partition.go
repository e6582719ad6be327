package nicrt

import (
	"cmp"
	"slices"
	"sync"
	"sync/atomic"
)

// Core partitions (Config.Partition, spec/nic.md): every tenant active in
// the last PartitionWindow gets cores of each class of its own, so that
// no other tenant's run, which no core preempts, stands between its
// message and a core. Fair queueing alone bounds a tenant's wait to the
// run in progress on the core its message lands on; a partition takes
// that run away too, at the price of the cores a tenant leaves idle while
// it is active.

// partition is one split of the cores among the active tenants. It is
// never changed once published; a new split replaces it.
type partition struct {
	at        int64 // when it was made, ns since the NIC started
	took      int64 // what making it cost, ns, estimated from the tenants it walked (splitNsPerTenant)
	nic, host map[*tenantCounters][]int
}

// partitioner keeps the current split and makes a new one when a tenant
// it does not know arrives, or when the split is old enough that a tenant
// in it may have gone quiet.
type partitioner struct {
	cur atomic.Pointer[partition]
	mu  sync.Mutex
	// made counts the splits made: a new tenant, or the window's refresh.
	made atomic.Uint64
	// stale: a tenant the split does not know has sent a message since.
	stale atomic.Bool
}

// A split is remade a refreshDiv-th of the window after the last was
// begun, to drop the tenants gone quiet, and for a tenant it does not
// know, but no sooner than a remakeDiv-th of the window after the last: until
// then a new tenant's messages may go to every core, and a stream of new
// tenants cannot make every message pay for a split. Neither comes
// sooner than costDiv times the last split's cost after it, so that
// splits (a walk of up to 4,096 tenants' counters, a few ms) take at
// most a costDiv-th of one submitter's time however many tenants come.
// The cost is estimated from the tenants walked (splitNsPerTenant, about
// what BenchmarkPartitionSplit measures, 0.7–1.2 µs), not timed: a split
// the scheduler preempted must not hold the next one off for 16 times
// the preemption.
const (
	refreshDiv       = 4
	remakeDiv        = 64
	costDiv          = 16
	splitNsPerTenant = 1000
)

// partitionCores returns the indices of the cores of a class of n (NIC
// or host) a message of tc may go to, or nil for every core.
func (n *NIC) partitionCores(tc *tenantCounters, host bool) []int {
	if !n.cfg.Partition {
		return nil
	}
	now := n.now()
	tc.lastSeen.Store(now)
	window := int64(n.cfg.PartitionWindow)
	p := n.part.cur.Load()
	var own []int
	age := int64(0)
	if p != nil {
		var known bool
		if own, known = p.of(tc, host); !known {
			n.part.stale.Store(true)
		}
		age = now - p.at
	}
	if p == nil || age >= costDiv*p.took && (age >= window/refreshDiv || age >= window/remakeDiv && n.part.stale.Load()) {
		if n.part.mu.TryLock() {
			if q := n.part.cur.Load(); q == p {
				n.part.stale.Store(false)
				p = n.split(now)
				n.part.cur.Store(p)
				n.part.made.Add(1)
			} else {
				p = q
			}
			n.part.mu.Unlock()
			own, _ = p.of(tc, host)
		}
	}
	return own
}

// of is tc's cores of a class, and whether the split knows tc.
func (p *partition) of(tc *tenantCounters, host bool) ([]int, bool) {
	m := p.nic
	if host {
		m = p.host
	}
	own, ok := m[tc]
	return own, ok
}

// split divides each class's cores among the tenants seen in the last
// window.
func (n *NIC) split(now int64) *partition {
	type active struct {
		tenant uint64
		tc     *tenantCounters
		weight uint32
	}
	var ts []active
	window := int64(n.cfg.PartitionWindow)
	walked := int64(0)
	n.tenantCt.m.Range(func(k, v any) bool {
		walked++
		tc := v.(*tenantCounters)
		if seen := tc.lastSeen.Load(); seen != 0 && now-seen <= window {
			ts = append(ts, active{k.(uint64), tc, n.cfg.quota(k.(uint64)).Weight})
		}
		return true
	})
	// Heavier tenants first, then by id: the split is a function of the
	// active tenants and their weights alone.
	slices.SortFunc(ts, func(a, b active) int {
		if c := cmp.Compare(b.weight, a.weight); c != 0 {
			return c
		}
		return cmp.Compare(a.tenant, b.tenant)
	})
	weights := make([]uint32, len(ts))
	for i, t := range ts {
		weights[i] = t.weight
	}
	p := &partition{at: now, took: walked * splitNsPerTenant,
		nic: make(map[*tenantCounters][]int, len(ts)), host: make(map[*tenantCounters][]int, len(ts))}
	for class, cores := range [2]int{len(n.nic), len(n.host)} {
		m := p.nic
		if class == 1 {
			m = p.host
		}
		for i, own := range splitCores(cores, weights) {
			m[ts[i].tc] = own
		}
	}
	return p
}

// splitCores gives each of len(weights) tenants, in order, the cores it
// owns of n: with fewer tenants than cores, one each and the rest by
// largest remaining share of n × weight / Σ weights, in runs of
// consecutive cores; with as many or more, one core each, in order, the
// one with the least weight given so far (the lowest of equals): round
// robin for equal weights.
func splitCores(n int, weights []uint32) [][]int {
	out := make([][]int, len(weights))
	if n == 0 || len(weights) == 0 {
		return out
	}
	if len(weights) >= n {
		load := make([]uint64, n)
		cores := make([]int, len(weights)) // one backing array for every tenant's one core
		for i, w := range weights {
			c := 0
			for j := range load {
				if load[j] < load[c] {
					c = j
				}
			}
			load[c] += uint64(w)
			cores[i] = c
			out[i] = cores[i : i+1 : i+1]
		}
		return out
	}
	var total uint64
	for _, w := range weights {
		total += uint64(w)
	}
	counts := make([]uint64, len(weights))
	for i := range counts {
		counts[i] = 1
	}
	for left := n - len(weights); left > 0; left-- {
		// The tenant furthest below its share n·w/W: the largest
		// n·w − counts·W, in integers.
		best := 0
		var bestGap int64
		for i, w := range weights {
			gap := int64(uint64(n)*uint64(w)) - int64(counts[i]*total)
			if i == 0 || gap > bestGap {
				best, bestGap = i, gap
			}
		}
		counts[best]++
	}
	next := 0
	for i, c := range counts {
		for range c {
			out[i] = append(out[i], next)
			next++
		}
	}
	return out
}

// pickCore is the core of cores (a class) for a message of tc with
// steering hash: one of its partition's when the NIC partitions cores.
func (n *NIC) pickCore(cores []*core, tc *tenantCounters, hash uint64, host bool) *core {
	if own := n.partitionCores(tc, host); len(own) > 0 {
		return cores[own[hash%uint64(len(own))]]
	}
	return cores[hash%uint64(len(cores))]
}

// PartitionStats are the core partitions in effect (Config.Partition).
type PartitionStats struct {
	// Splits counts the splits made: one for a tenant the split did not
	// know, one a quarter window after the last.
	Splits uint64
	// Tenants are the active tenants of the last split.
	Tenants int
}

func (n *NIC) partitionStats() PartitionStats {
	s := PartitionStats{Splits: n.part.made.Load()}
	if p := n.part.cur.Load(); p != nil {
		s.Tenants = len(p.nic)
	}
	return s
}
