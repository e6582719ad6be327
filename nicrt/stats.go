package nicrt

import (
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/naam-project/naam/bytecode"
	"github.com/naam-project/naam/nicrt/wire"
	"github.com/naam-project/naam/vm/jit"
)

// NumStatus is the number of Status values: the length of Stats.Rejected.
const NumStatus = wire.NumRuntimeStatus

// Placements counts placement decisions, indexed by Placement (PlaceNIC …
// PlaceHostSpill).
type Placements [numPlacements]uint64

// Total is the number of decisions.
func (p Placements) Total() uint64 {
	var t uint64
	for _, v := range p {
		t += v
	}
	return t
}

// Counters are the counters of one core, or their sum.
type Counters struct {
	Placed Placements // messages queued here, by placement
	Runs   uint64     // handler runs and verbs completed (verb rejections included)
	Insns  uint64     // bytecode instructions executed (modelled for verbs)

	Replies, Errors, Forwarded, Faults uint64 // how runs ended
	Sends, SendsRefused, Forwards      uint64 // send and forward helper calls
	Traces                             uint64 // trace helper calls
	RequestBytes, ReplyBytes           uint64 // payload bytes in and reply bytes out of runs

	// The cost model (spec/nic.md, Cost model).
	Cycles     uint64 // modelled core cycles
	DMAReads   uint64 // PCIe round trips (reads, atomics, host handoffs)
	DMAWrites  uint64 // posted PCIe writes
	DMABytes   uint64
	DMANanos   uint64 // modelled PCIe time
	LocalHits  uint64 // region touches on the core's own side: nicmem for a NIC core, host memory for a host core
	ModelNanos uint64 // modelled service time
	BusyNanos  uint64 // real time spent running (this machine)

	// The host JIT tier (Config.Tier): runs through it, and runs the tier
	// setting wanted there that went to the interpreter because the JIT
	// cannot take their program (no cgo, a compile error, a written region
	// that cannot be mapped in place, regions larger than a linear memory).
	JITRuns, JITFallbacks uint64
}

func (c *Counters) add(o Counters) {
	for i := range c.Placed {
		c.Placed[i] += o.Placed[i]
	}
	c.Runs += o.Runs
	c.Insns += o.Insns
	c.Replies += o.Replies
	c.Errors += o.Errors
	c.Forwarded += o.Forwarded
	c.Faults += o.Faults
	c.Sends += o.Sends
	c.SendsRefused += o.SendsRefused
	c.Forwards += o.Forwards
	c.Traces += o.Traces
	c.RequestBytes += o.RequestBytes
	c.ReplyBytes += o.ReplyBytes
	c.Cycles += o.Cycles
	c.DMAReads += o.DMAReads
	c.DMAWrites += o.DMAWrites
	c.DMABytes += o.DMABytes
	c.DMANanos += o.DMANanos
	c.LocalHits += o.LocalHits
	c.ModelNanos += o.ModelNanos
	c.BusyNanos += o.BusyNanos
	c.JITRuns += o.JITRuns
	c.JITFallbacks += o.JITFallbacks
}

// CoreStats is one core.
type CoreStats struct {
	ID         int
	Host       bool // a host core; otherwise a NIC core
	Queued     int  // messages waiting now
	QueueDepth int
	Counters
}

// HandlerStats is one installed handler or built-in verb.
type HandlerStats struct {
	HandlerInfo
	Placed   Placements
	Rejected uint64 // messages refused for it: foreign tenant, overloaded; a verb's failed checks
	Runs     uint64
	Insns    uint64

	Replies, Errors, Forwarded, Faults uint64

	// RunTimes is the histogram of the runs' durations on their cores.
	RunTimes RunTimes
	// Steer counts the steering policy's decisions (PolicySteer).
	Steer SteerCounts
}

// Stats is a snapshot of every counter. Counters only grow; fields read at
// slightly different moments may not add up exactly while messages flow.
type Stats struct {
	Uptime     time.Duration
	Tenants    int
	Programs   int
	Regions    int
	NICMemUsed uint64
	NICMemSize uint64

	// Rejected counts messages refused, indexed by Status (only the
	// statuses for which Status.Rejected holds are non-zero): unknown or
	// foreign handler, full queues and closed at Submit; a verb's failed
	// checks on its core.
	Rejected [NumStatus]uint64

	NIC  Counters // the sum over NIC cores: NIC.Cycles are the modelled NIC cycles, NIC.LocalHits the nicmem hits
	Host Counters // the sum over host cores

	// JIT is the host JIT tier's cache: compilations and their time.
	JIT jit.CacheStats

	Cores    []CoreStats    // NIC cores first, then host cores
	Handlers []HandlerStats // by id: verbs first
	// TenantCounters are the tenants' queues and service, by tenant.
	TenantCounters []TenantStats
	// Partition is the core partitions' (Config.Partition).
	Partition PartitionStats
	// Load is what a steering policy reads (NIC.Load).
	Load LoadSignals
	// Steer sums the handlers' steering decisions (PolicySteer).
	Steer SteerCounts
}

// Placed returns every placement decision, NIC and host cores together.
func (s Stats) Placed() Placements {
	var p Placements
	for i := range p {
		p[i] = s.NIC.Placed[i] + s.Host.Placed[i]
	}
	return p
}

// Stats takes a snapshot of the counters.
func (n *NIC) Stats() Stats {
	s := Stats{Uptime: time.Since(n.start), NICMemSize: n.cfg.NICMemBytes}
	n.mu.Lock()
	s.Tenants = len(n.tenants)
	for _, t := range n.tenants {
		s.Programs += len(t.programs)
		s.Regions += len(t.regions)
	}
	s.NICMemUsed = n.nicmemUsed
	n.mu.Unlock()
	for i := range s.Rejected {
		s.Rejected[i] = n.rejected[i].Load()
	}
	for _, c := range n.cores {
		cs := CoreStats{ID: c.id, Host: c.host, Queued: c.q.Len(), QueueDepth: c.q.Cap(), Counters: c.ctr.snapshot()}
		s.Cores = append(s.Cores, cs)
		if c.host {
			s.Host.add(cs.Counters)
		} else {
			s.NIC.add(cs.Counters)
		}
	}
	if len(n.host) > 0 && n.host[0].jit != nil {
		s.JIT = n.host[0].jit.Stats()
	}
	s.TenantCounters = n.tenantCt.snapshot()
	s.Partition = n.partitionStats()
	s.Load = n.Load()
	n.handlers.each(func(_ uint32, h *handler) { s.Handlers = append(s.Handlers, h.stats()) })
	sort.Slice(s.Handlers, func(i, j int) bool { return s.Handlers[i].ID < s.Handlers[j].ID })
	for _, h := range s.Handlers {
		s.Steer.add(h.Steer)
	}
	return s
}

// HandlerStats returns the counters of the handler or verb with id.
func (n *NIC) HandlerStats(id uint32) (HandlerStats, bool) {
	h := n.handlers.get(id)
	if h == nil {
		return HandlerStats{}, false
	}
	return h.stats(), true
}

func (h *handler) stats() HandlerStats {
	hs := HandlerStats{
		HandlerInfo: h.info(),
		Rejected:    h.ctr.rejected.Load(),
		Runs:        h.ctr.runs.Load(),
		Insns:       h.ctr.insns.Load(),
		Replies:     h.ctr.replies.Load(),
		Errors:      h.ctr.errors.Load(),
		Forwarded:   h.ctr.forwarded.Load(),
		Faults:      h.ctr.faults.Load(),
		RunTimes:    h.ctr.runTimes.snapshot(),
		Steer:       h.steer.ctr.snapshot(),
	}
	for i := range hs.Placed {
		hs.Placed[i] = h.ctr.placed[i].Load()
	}
	return hs
}

func (c *coreCounters) snapshot() Counters {
	var s Counters
	for i := range s.Placed {
		s.Placed[i] = c.placed[i].Load()
	}
	s.Runs, s.Insns, s.Cycles = c.runs.Load(), c.insns.Load(), c.cycles.Load()
	s.Replies, s.Errors, s.Forwarded, s.Faults = c.replies.Load(), c.errors.Load(), c.forwarded.Load(), c.faults.Load()
	s.Sends, s.SendsRefused, s.Forwards, s.Traces = c.sends.Load(), c.sendsRefused.Load(), c.forwards.Load(), c.traces.Load()
	s.DMAReads, s.DMAWrites, s.DMABytes, s.DMANanos = c.dmaReads.Load(), c.dmaWrites.Load(), c.dmaBytes.Load(), c.dmaNanos.Load()
	s.LocalHits, s.ModelNanos, s.BusyNanos = c.localHits.Load(), c.modelNanos.Load(), c.busyNanos.Load()
	s.RequestBytes, s.ReplyBytes = c.requestBytes.Load(), c.replyBytes.Load()
	s.JITRuns, s.JITFallbacks = c.jitRuns.Load(), c.jitFallbacks.Load()
	return s
}

// ForTenant is the snapshot as tenant may read it: the handlers' counters
// only of its own handlers and of the verbs; every other counter as it is.
func (s Stats) ForTenant(tenant uint64) Stats {
	hs := make([]HandlerStats, 0, len(s.Handlers))
	for _, h := range s.Handlers {
		if h.Builtin || h.Tenant == tenant {
			hs = append(hs, h)
		}
	}
	s.Handlers = hs
	var ts []TenantStats
	for _, t := range s.TenantCounters {
		if t.Tenant == tenant {
			ts = append(ts, t)
		}
	}
	s.TenantCounters = ts
	return s
}

// HandlerNames returns the name counters and metrics give each handler of
// hs: "PROGRAM.HANDLER" with the program's label among its tenant's
// programs (bytecode.ProgramLabels), or for a verb its lower-case name ("read",
// "fetch_add").
func HandlerNames(hs []HandlerStats) []string {
	type key struct{ tenant, program uint64 }
	labels := map[key]string{}
	byTenant := map[uint64][]HandlerStats{}
	seen := map[key]bool{}
	for _, h := range hs {
		k := key{h.Tenant, h.Program}
		if !h.Builtin && !seen[k] {
			seen[k] = true
			byTenant[h.Tenant] = append(byTenant[h.Tenant], h)
		}
	}
	for tenant, progs := range byTenant {
		ids := make([]uint64, len(progs))
		sources := make([]string, len(progs))
		for i, p := range progs {
			ids[i], sources[i] = p.Program, p.Source
		}
		for i, l := range bytecode.ProgramLabels(ids, sources) {
			labels[key{tenant, ids[i]}] = l
		}
	}
	out := make([]string, len(hs))
	for i, h := range hs {
		if h.Builtin {
			out[i] = strings.ToLower(metricName(h.Name))
		} else {
			out[i] = labels[key{h.Tenant, h.Program}] + "." + h.Name
		}
	}
	return out
}

// Counter is one named counter of Stats.Counters (wire.Counter: the
// stats op carries the same).
type Counter = wire.Counter

// Counters flattens the snapshot into named counters, sorted by name, for
// the control plane's stats reply and for exporters: "rejected.wrong_key",
// "nic.placed.host_spill", "host.dma_bytes", "core.3.busy_nanos",
// "handler.kv.get.runs", "verb.fetch_add.runs" (spec/nic.md, Stats).
// Handlers are named by HandlerNames; two tenants' handlers of one name
// share their counters' names (the stats op answers a tenant with its own,
// ForTenant).
func (s Stats) Counters() []Counter {
	var out []Counter
	add := func(name string, v uint64) { out = append(out, Counter{Name: name, Value: v}) }
	add("uptime_nanos", uint64(s.Uptime))
	add("tenants", uint64(s.Tenants))
	add("programs", uint64(s.Programs))
	add("regions", uint64(s.Regions))
	add("nicmem_used_bytes", s.NICMemUsed)
	add("nicmem_size_bytes", s.NICMemSize)
	for st, v := range s.Rejected {
		if Status(st).Rejected() {
			add("rejected."+metricName(Status(st).String()), v)
		}
	}
	s.NIC.each("nic.", add)
	s.Host.each("host.", add)
	for _, c := range s.Cores {
		prefix := "core." + strconv.Itoa(c.ID) + "."
		add(prefix+"queued", uint64(c.Queued))
		c.Counters.each(prefix, add)
	}
	tenantCounterNames(s.TenantCounters, add)
	add("partition.splits", s.Partition.Splits)
	add("partition.tenants", uint64(s.Partition.Tenants))
	for _, c := range []struct {
		prefix string
		l      ClassLoad
	}{{"load.nic.", s.Load.NIC}, {"load.host.", s.Load.Host}} {
		add(c.prefix+"queued", uint64(c.l.Queued))
		add(c.prefix+"queue_delay_nanos", uint64(c.l.QueueDelayNanos))
		add(c.prefix+"service_nanos", uint64(c.l.ServiceNanos))
	}
	add("load.host_load_permille", uint64(s.Load.HostLoad*1000+0.5))
	s.Steer.each("steer.", add)
	names := HandlerNames(s.Handlers)
	for i, h := range s.Handlers {
		prefix := "handler." + names[i] + "."
		if h.Builtin {
			prefix = "verb." + names[i] + "."
		}
		placed(prefix, h.Placed, add)
		add(prefix+"rejected", h.Rejected)
		add(prefix+"runs", h.Runs)
		add(prefix+"insns", h.Insns)
		add(prefix+"replies", h.Replies)
		add(prefix+"errors", h.Errors)
		add(prefix+"forwarded", h.Forwarded)
		add(prefix+"faults", h.Faults)
		if !h.Builtin {
			h.Steer.each(prefix+"steer.", add)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

func (c Counters) each(prefix string, add func(string, uint64)) {
	placed(prefix, c.Placed, add)
	for _, f := range []struct {
		name string
		v    uint64
	}{
		{"runs", c.Runs}, {"insns", c.Insns}, {"replies", c.Replies}, {"errors", c.Errors},
		{"forwarded", c.Forwarded}, {"faults", c.Faults}, {"sends", c.Sends}, {"sends_refused", c.SendsRefused},
		{"forwards", c.Forwards}, {"traces", c.Traces}, {"request_bytes", c.RequestBytes}, {"reply_bytes", c.ReplyBytes},
		{"cycles", c.Cycles}, {"dma_reads", c.DMAReads}, {"dma_writes", c.DMAWrites}, {"dma_bytes", c.DMABytes},
		{"dma_nanos", c.DMANanos}, {"local_hits", c.LocalHits}, {"model_nanos", c.ModelNanos}, {"busy_nanos", c.BusyNanos},
		{"jit_runs", c.JITRuns}, {"jit_fallbacks", c.JITFallbacks},
	} {
		add(prefix+f.name, f.v)
	}
}

func (s SteerCounts) each(prefix string, add func(string, uint64)) {
	add(prefix+"nic", s.NIC)
	add(prefix+"host", s.Host)
	add(prefix+"probes", s.Probes)
	add(prefix+"switches", s.Switches)
}

func placed(prefix string, p Placements, add func(string, uint64)) {
	for i, v := range p {
		add(prefix+"placed."+metricName(Placement(i).String()), v)
	}
}

// metricName turns "foreign handler" and "host-spill" into
// "foreign_handler" and "host_spill".
func metricName(s string) string {
	return strings.NewReplacer(" ", "_", "-", "_").Replace(s)
}
