package sim

import (
	"cmp"
	"slices"
	"strconv"
	"time"

	ycsb "github.com/naam-project/naam/internal/bench/workload"
	"github.com/naam-project/naam/nicrt"
	"github.com/naam-project/naam/steer"
)

// Result is what a run measured. Its JSON is the same, byte for byte,
// for the same scenario and seed: every figure comes from the virtual
// clock and the seeded streams, lists are in a fixed order, and floats
// are printed with a fixed number of decimals.
type Result struct {
	Seed      uint64 `json:"seed"`
	Nodes     int    `json:"nodes"`
	Clients   int    `json:"clients"`
	Workload  string `json:"workload"`
	Placement string `json:"placement"`
	// Messages is the operations issued; Answered those that got a
	// reply, Failed those that ran out of tries.
	Messages int    `json:"messages"`
	Answered uint64 `json:"answered"`
	Failed   uint64 `json:"failed"`
	// Correct answers are what the workload expects (the value of the
	// key, the list's last element, a transfer done or refused for
	// want of funds); Wrong are replies that are not; Errors are
	// answers with a runtime status or a handler's code otherwise.
	Correct uint64 `json:"correct"`
	Wrong   uint64 `json:"wrong"`
	Errors  Errors `json:"errors"`
	// VirtualNanos is when the last operation ended.
	VirtualNanos int64 `json:"virtual_ns"`
	OpsPerSec    Num   `json:"ops_per_sec"`
	Latency      Lat   `json:"latency"`
	// RoundTripsPerOp is the caller's request-reply exchanges per
	// answered operation (a retransmission is a try of the same one);
	// TriesPerOp counts the retransmissions too. ForwardsPerOp and
	// DatagramsPerOp are the network's work per operation: the forwards
	// handlers made (a forward sent again from a reply cache is
	// from_cache's), and every datagram sent (requests, forwards,
	// replies, relays, sends, verbs, retransmissions).
	RoundTripsPerOp Num `json:"round_trips_per_op"`
	TriesPerOp      Num `json:"tries_per_op"`
	ForwardsPerOp   Num `json:"forwards_per_op"`
	DatagramsPerOp  Num `json:"datagrams_per_op"`
	// Runs is the handler runs on every node; Insns the instructions the
	// VM executed in them and in the runs at callers (InsnsPerRun over
	// both); ModelNanosPerRun the node runs' mean modelled service time
	// before the host load's stretch.
	Runs             uint64 `json:"runs"`
	Insns            uint64 `json:"insns"`
	InsnsPerRun      Num    `json:"insns_per_run"`
	ModelNanosPerRun Num    `json:"model_ns_per_run"`
	// Placements counts the runs per placement (nicrt.Placement's
	// names), in that order; Locations per location (steer's names).
	Placements []Count    `json:"placements"`
	Locations  []Count    `json:"locations"`
	Steer      SteerCount `json:"steer"`
	Network    NetCount   `json:"network"`
	Sends      SendCount  `json:"sends"`
	// NodesLoaded is how many nodes got a message (and so memory).
	NodesLoaded int           `json:"nodes_loaded"`
	Events      EventCount    `json:"events"`
	HotSpots    []HotSpot     `json:"hot_spots"`
	Timeline    []Bin         `json:"timeline"`
	BinNanos    int64         `json:"bin_ns"`
	KV          *KVResult     `json:"kv,omitempty"`
	Chase       *ChaseResult  `json:"chase,omitempty"`
	Ledger      *LedgerResult `json:"ledger,omitempty"`
	Shift       *ShiftResult  `json:"shift,omitempty"`

	latency ycsb.Histogram
}

// LatencyHistogram is the latencies of the answered operations.
func (r *Result) LatencyHistogram() *ycsb.Histogram { return &r.latency }

// Num is a float printed with three decimals.
type Num float64

// MarshalJSON prints n with three decimals.
func (n Num) MarshalJSON() ([]byte, error) {
	return strconv.AppendFloat(nil, float64(n), 'f', 3, 64), nil
}

// Lat is the latency percentiles of the answered operations, in µs.
type Lat struct {
	Mean Num `json:"mean_us"`
	P50  Num `json:"p50_us"`
	P90  Num `json:"p90_us"`
	P99  Num `json:"p99_us"`
	P999 Num `json:"p999_us"`
	Max  Num `json:"max_us"`
}

// Errors counts answers that were not a reply.
type Errors struct {
	Handler    uint64 `json:"handler"`    // a fail code
	Overloaded uint64 `json:"overloaded"` // refused: the queues were full, or no host core was open
	Fault      uint64 `json:"fault"`      // the run faulted
}

// Count is one named count and its share of the total.
type Count struct {
	Name  string `json:"name"`
	Count uint64 `json:"count"`
	Share Num    `json:"share"`
}

// SteerCount is PolicySteer's decisions (nicrt.SteerCounts).
type SteerCount struct {
	NIC      uint64 `json:"nic"`
	Host     uint64 `json:"host"`
	Probes   uint64 `json:"probes"`
	Switches uint64 `json:"switches"`
}

// NetCount is the network's and the callers' counters.
type NetCount struct {
	Datagrams        uint64 `json:"datagrams"`
	Bytes            uint64 `json:"bytes"`
	DroppedLoss      uint64 `json:"dropped_loss"`
	DroppedPartition uint64 `json:"dropped_partition"`
	DroppedDown      uint64 `json:"dropped_down"`
	Duplicated       uint64 `json:"duplicated"`
	// DuplicatesSuppressed are copies of a request or send that a node's
	// window stopped (FromCache of them answered from the reply cache,
	// or forwarded again).
	DuplicatesSuppressed uint64 `json:"duplicates_suppressed"`
	FromCache            uint64 `json:"from_cache"`
	Retransmissions      uint64 `json:"retransmissions"`
	Timeouts             uint64 `json:"timeouts"`
	StaleReplies         uint64 `json:"stale_replies"`
	Forwards             uint64 `json:"forwards"`
	// Verbs are the one-sided verbs of runs at the caller that nodes
	// answered.
	Verbs          uint64 `json:"verbs"`
	Relays         uint64 `json:"relays"`
	RelayUnmatched uint64 `json:"relay_unmatched"`
	// RerunsAfterRestart are requests that ran a second time because
	// their node restarted and lost its windows (spec/wire.md, Known gap).
	RerunsAfterRestart uint64 `json:"reruns_after_restart"`
}

// SendCount is the one-way messages of send.
type SendCount struct {
	Sent      uint64 `json:"sent"`
	Delivered uint64 `json:"delivered"`
	Lost      uint64 `json:"lost"`
	Refused   uint64 `json:"refused"` // send returned -1, or the receiver's queues were full
}

// EventCount is what the scenario's events did.
type EventCount struct {
	Applied  int `json:"applied"`
	Failures int `json:"failures"`
	Restarts int `json:"restarts"`
}

// HotSpot is one of the nodes that received the most datagrams.
type HotSpot struct {
	Node     int    `json:"node"`
	Messages uint64 `json:"messages"`
	Runs     uint64 `json:"runs"`
}

// Bin is the runs that started in one bin of virtual time, by class of
// core.
type Bin struct {
	StartNanos int64  `json:"start_ns"`
	NIC        uint64 `json:"nic"`
	Host       uint64 `json:"host"`
}

// KVResult is the kv workload's.
type KVResult struct {
	Records int    `json:"records"`
	Buckets int    `json:"buckets_per_node"`
	Mix     string `json:"mix"`
	Keys    string `json:"keys"`
	Reads   uint64 `json:"reads"`
	Updates uint64 `json:"updates"`
}

// ChaseResult is the chase's.
type ChaseResult struct {
	Lists int    `json:"lists"`
	Hops  int    `json:"hops"`
	Slots int    `json:"slots_per_node"`
	Reply string `json:"reply"`
}

// LedgerResult is the ledger's: money is conserved when the balances
// and what was lost in flight (sends no copy of arrived) add up to what
// the nodes were loaded with.
type LedgerResult struct {
	Transfers    uint64 `json:"transfers"`
	Insufficient uint64 `json:"insufficient"`
	Expected     uint64 `json:"expected"`
	Balances     uint64 `json:"balances"`
	LostInFlight uint64 `json:"lost_in_flight"`
	Conserved    bool   `json:"conserved"`
}

// stats accumulates a run's counters.
type stats struct {
	err        error
	firstFault error
	net        NetCount
	sends      SendCount
	steer      SteerCount
	events     EventCount
	errs       Errors
	place      [nicrt.PlaceNone]uint64
	runs       uint64
	insns      uint64
	modelNanos float64
	lat        ycsb.Histogram
	answered   uint64
	failed     uint64
	correct    uint64
	wrong      uint64
	lastDone   int64
	tries      uint64
	roundTrips uint64
	clientRuns uint64
	verbs      uint64
	bins       []Bin
	binNanos   int64
	loaded     int
	traces     uint64
}

// maxBins bounds the timeline: past it, its bins double in width.
const maxBins = 2048

func (st *stats) init(s *sim) { st.binNanos = int64(s.sc.Bin) }

// ran counts a run.
func (st *stats) ran(s *sim, n int32, place nicrt.Placement, start int64, insns uint64, model float64) {
	st.place[place]++
	st.runs++
	st.insns += insns
	st.modelNanos += model
	b := int(start / st.binNanos)
	for b >= maxBins { // a long run: twice as wide bins, half as many
		for i := range len(st.bins) / 2 {
			x, y := st.bins[2*i], st.bins[2*i+1]
			st.bins[i] = Bin{StartNanos: x.StartNanos, NIC: x.NIC + y.NIC, Host: x.Host + y.Host}
		}
		if len(st.bins)%2 == 1 {
			last := st.bins[len(st.bins)-1]
			st.bins[len(st.bins)/2] = last
			st.bins = st.bins[:len(st.bins)/2+1]
		} else {
			st.bins = st.bins[:len(st.bins)/2]
		}
		st.binNanos *= 2
		b = int(start / st.binNanos)
	}
	for len(st.bins) <= b {
		st.bins = append(st.bins, Bin{StartNanos: int64(len(st.bins)) * st.binNanos})
	}
	if place.OnHost() {
		st.bins[b].Host++
	} else {
		st.bins[b].NIC++
	}
	s.shift.ran(s, n, place, start)
}

func (st *stats) opDone(s *sim, o *op, answered bool) {
	if !answered {
		st.failed++
		return
	}
	st.answered++
	st.tries += uint64(o.try)
	st.roundTrips += uint64(o.roundTrips)
	st.lat.Record(time.Duration(s.now - o.start))
	st.lastDone = max(st.lastDone, s.now)
	switch {
	case s.wl.check(o):
		st.correct++
	case o.status == nicrt.StatusOK:
		st.wrong++
	case o.status == nicrt.StatusError:
		st.errs.Handler++
	case o.status == nicrt.StatusFault:
		st.errs.Fault++
	default:
		st.errs.Overloaded++
	}
}

func share(n, total uint64) Num {
	if total == 0 {
		return 0
	}
	return Num(float64(n) / float64(total))
}

func us(d time.Duration) Num { return Num(float64(d) / 1e3) }

func (s *sim) result() *Result {
	st := &s.st
	r := &Result{Seed: s.sc.Seed, Nodes: s.sc.Nodes, Clients: s.sc.Clients, Workload: s.sc.Workload.Kind,
		Placement: s.cfg.Placement.String(), Messages: s.issued, Answered: st.answered, Failed: st.failed,
		Correct: st.correct, Wrong: st.wrong, Errors: st.errs, VirtualNanos: st.lastDone,
		Runs: st.runs, Insns: st.insns, Steer: st.steer, Network: st.net, Sends: st.sends,
		NodesLoaded: st.loaded, Events: st.events, Timeline: st.bins, BinNanos: st.binNanos, latency: st.lat}
	if r.Timeline == nil {
		r.Timeline = []Bin{}
	}
	if st.lastDone > 0 {
		r.OpsPerSec = Num(float64(st.answered) / (float64(st.lastDone) / 1e9))
	}
	h := &st.lat
	r.Latency = Lat{Mean: us(h.Mean()), P50: us(h.Quantile(0.5)), P90: us(h.Quantile(0.9)), P99: us(h.Quantile(0.99)),
		P999: us(h.Quantile(0.999)), Max: us(h.Max())}
	if st.answered > 0 {
		a := float64(st.answered)
		r.RoundTripsPerOp = Num(float64(st.roundTrips) / a)
		r.TriesPerOp = Num(float64(st.tries) / a)
		r.ForwardsPerOp = Num(float64(st.net.Forwards) / a)
		r.DatagramsPerOp = Num(float64(st.net.Datagrams) / a)
	}
	if st.runs+st.clientRuns > 0 {
		r.InsnsPerRun = Num(float64(st.insns) / float64(st.runs+st.clientRuns))
	}
	if st.runs > 0 {
		r.ModelNanosPerRun = Num(st.modelNanos / float64(st.runs))
	}
	var loc [steer.NumLocations]uint64
	loc[steer.Client] = st.clientRuns
	r.Network.Verbs = st.verbs
	for p := nicrt.Placement(0); p < nicrt.PlaceNone; p++ {
		r.Placements = append(r.Placements, Count{Name: p.String(), Count: st.place[p], Share: share(st.place[p], st.runs)})
		if p.OnHost() {
			loc[steer.Host] += st.place[p]
		} else {
			loc[steer.NIC] += st.place[p]
		}
	}
	for l := steer.Location(0); l < steer.NumLocations; l++ {
		r.Locations = append(r.Locations, Count{Name: l.String(), Count: loc[l], Share: share(loc[l], st.runs+st.clientRuns)})
	}
	r.HotSpots = s.hotSpots(s.sc.HotSpots)
	s.wl.report(s, r)
	r.Shift = s.shift.result(s)
	return r
}

// hotSpots is the k nodes that received the most datagrams, most first,
// ties to the lower node.
func (s *sim) hotSpots(k int) []HotSpot {
	idx := make([]int32, 0, len(s.nodes))
	for i := range s.nodes {
		if s.nodes[i].received > 0 {
			idx = append(idx, int32(i))
		}
	}
	slices.SortFunc(idx, func(a, b int32) int {
		return cmp.Or(cmp.Compare(s.nodes[b].received, s.nodes[a].received), cmp.Compare(a, b))
	})
	out := []HotSpot{}
	for _, i := range idx[:min(k, len(idx))] {
		out = append(out, HotSpot{Node: int(i), Messages: s.nodes[i].received, Runs: s.nodes[i].runs})
	}
	return out
}
