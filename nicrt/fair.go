package nicrt

import (
	"fmt"
	"sort"
	"strconv"
	"sync"
	"sync/atomic"
)

// TenantQuota is a tenant's share of every core under fair queueing
// (Config.Fair, Quota, Quotas).
type TenantQuota struct {
	// Weight is the tenant's share: a tenant with weight 2 gets twice the
	// instructions of one with weight 1 while both have work queued.
	// 1 … MaxWeight; 0 takes Config.Quota's (default 1).
	Weight uint32
	// MaxQueued caps the tenant's queued messages on each core; past it
	// the tenant's messages are refused as overloaded (and counted as its
	// dropped). 0 takes Config.Quota's (default RxQueueDepth); more than
	// RxQueueDepth is RxQueueDepth.
	MaxQueued int
}

// MaxWeight is the largest TenantQuota.Weight.
const MaxWeight = 1 << 16

func (q TenantQuota) check(field string) error {
	switch {
	case q.Weight > MaxWeight:
		return fmt.Errorf("nicrt: config: %s.Weight %d: want 1 … %d", field, q.Weight, MaxWeight)
	case q.MaxQueued < 0:
		return fmt.Errorf("nicrt: config: %s.MaxQueued %d must not be negative", field, q.MaxQueued)
	}
	return nil
}

// quota is tenant's quota, defaults filled in (c has its defaults).
func (c Config) quota(tenant uint64) TenantQuota {
	q, ok := c.Quotas[tenant]
	if !ok {
		q = c.Quota
	}
	if q.Weight == 0 {
		q.Weight = c.Quota.Weight
	}
	if q.MaxQueued == 0 {
		q.MaxQueued = c.Quota.MaxQueued
	}
	q.MaxQueued = min(q.MaxQueued, c.RxQueueDepth)
	return q
}

// tenantCounters are one tenant's, over all cores.
type tenantCounters struct {
	queued      atomic.Int64  // messages queued now
	runs        atomic.Uint64 // messages run
	servedInsns atomic.Uint64 // the proven bounds of the messages run: what fair queueing charged
	insns       atomic.Uint64 // the instructions they executed
	dropped     atomic.Uint64 // messages refused at a full queue or the tenant's cap
	lastSeen    atomic.Int64  // its last message, ns since the NIC started (Config.Partition)
}

func (tc *tenantCounters) served(price, insns uint64) {
	tc.runs.Add(1)
	tc.servedInsns.Add(price)
	tc.insns.Add(insns)
}

// tenantTable holds the tenants' counters; past maxTenantCounters tenants
// share one entry (overflowTenant), so that it cannot grow without bound.
type tenantTable struct {
	m sync.Map // uint64 → *tenantCounters
	n atomic.Int64
}

const maxTenantCounters = 4096

func (tt *tenantTable) get(tenant uint64) *tenantCounters {
	if v, ok := tt.m.Load(tenant); ok {
		return v.(*tenantCounters)
	}
	if tt.n.Load() >= maxTenantCounters {
		tenant = overflowTenant
		if v, ok := tt.m.Load(tenant); ok {
			return v.(*tenantCounters)
		}
	}
	v, loaded := tt.m.LoadOrStore(tenant, &tenantCounters{})
	if !loaded {
		tt.n.Add(1)
	}
	return v.(*tenantCounters)
}

// TenantStats are one tenant's counters over all cores.
type TenantStats struct {
	Tenant uint64 // ^uint64(0): the tenants past the first 4,096 seen, together
	Queued int64  // messages queued now
	Runs   uint64 // messages run (handlers and verbs)
	// ServedInsns is the sum of the proven instruction bounds of the
	// messages run: the price fair queueing charged the tenant.
	ServedInsns uint64
	Insns       uint64 // the instructions they executed
	// Dropped counts its messages refused as overloaded: a full core
	// queue, or its cap on a core (TenantQuota.MaxQueued).
	Dropped uint64
}

func (tt *tenantTable) snapshot() []TenantStats {
	var out []TenantStats
	tt.m.Range(func(k, v any) bool {
		tc := v.(*tenantCounters)
		out = append(out, TenantStats{Tenant: k.(uint64), Queued: max(tc.queued.Load(), 0), Runs: tc.runs.Load(),
			ServedInsns: tc.servedInsns.Load(), Insns: tc.insns.Load(), Dropped: tc.dropped.Load()})
		return true
	})
	sort.Slice(out, func(i, j int) bool { return out[i].Tenant < out[j].Tenant })
	return out
}

// tenantCounterNames adds the counters of ts: "tenant.T.queued",
// "tenant.T.runs", "tenant.T.served_insns", "tenant.T.insns",
// "tenant.T.dropped".
func tenantCounterNames(ts []TenantStats, add func(string, uint64)) {
	for _, t := range ts {
		prefix := "tenant." + strconv.FormatUint(t.Tenant, 10) + "."
		if t.Tenant == overflowTenant {
			prefix = "tenant.other."
		}
		add(prefix+"queued", uint64(t.Queued))
		add(prefix+"runs", t.Runs)
		add(prefix+"served_insns", t.ServedInsns)
		add(prefix+"insns", t.Insns)
		add(prefix+"dropped", t.Dropped)
	}
}
