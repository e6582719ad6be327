package nicrt

import (
	"math"

	"github.com/naam-project/naam/steer"
	"github.com/naam-project/naam/verifier"
)

// The model and the steering policy for a runtime that keeps cores of
// its own on a virtual clock (package sim): the same functions the NIC's
// cores charge and PolicySteer decides with, exported without the NIC.

// CostModel is the cost model of a Config (spec/nic.md, Cost model): what
// a run costs a NIC or a host core of the modelled DPU, in nanoseconds.
type CostModel struct {
	m   model
	cfg Config
}

// NewCostModel is the cost model of c after its defaults; it fails as
// New does for a Config New refuses.
func NewCostModel(c Config) (CostModel, error) {
	c = c.withDefaults()
	if err := c.validate(); err != nil {
		return CostModel{}, err
	}
	return CostModel{m: newModel(c), cfg: c}, nil
}

// Config is the Config the model was made from, every field filled.
func (k CostModel) Config() Config { return k.cfg }

// Insns is the time of n instructions on a host core or a NIC core.
func (k CostModel) Insns(n uint64, host bool) float64 { return k.m.insns(n, host).nanos }

// Bulk is the time of a bulk helper (hash, copy, send) moving n bytes of
// a region, exactly as a core accounts it: a read, or a posted write.
func (k CostModel) Bulk(n uint64, write, hostCore, nicmem bool) float64 {
	return k.m.access(n, write, false, hostCore, nicmem).nanos
}

// Handoff is the extra time of a run on a host core for a request and
// reply of these sizes.
func (k CostModel) Handoff(request, reply int) float64 { return k.m.handoff(request, reply).nanos }

// Touches is the static part of a run of entry on a host core or a NIC
// core: one touch per region it may use (nicmem by region index).
func (k CostModel) Touches(entry *verifier.EntryReport, nicmem []bool, hostCore bool) float64 {
	return k.m.touches(entry.RegionsRead, entry.RegionsWritten, nicmem, hostCore).nanos
}

// FixedPlacement is where Install places a handler of entry before any
// spill or policy: a host core for a host-only helper or a bound past
// NICBudget, else a NIC core.
func (k CostModel) FixedPlacement(entry *verifier.EntryReport) Placement {
	switch {
	case entry.HostOnly:
		return PlaceHostHelper
	case entry.MaxInsns > k.cfg.NICBudget:
		return PlaceHostBudget
	}
	return PlaceNIC
}

// HostStretch is how much a host load l stretches a host core's service
// time: 1 / (1 − l), at most 1,000 ×.
func HostStretch(l float64) float64 { return 1 / max(1-l, minAvailable) }

// ClassEstimate is what steering knows of one core a message may go to:
// whether it takes messages, the ns until it could start the message,
// and the ns the message would take there before the host load's
// stretch.
type ClassEstimate struct {
	Open    bool
	Backlog float64
	Service float64
}

// SteerCosts is PolicySteer's expected completion (ns) of a message on
// the NIC core and on the host core it may go to (spec/nic.md, Steering).
func SteerCosts(nic, host ClassEstimate, hostLoad float64) steer.Costs {
	return steerCosts(classEstimate(nic), classEstimate(host), hostLoad)
}

// SteerState is one handler's state under PolicySteer on one node: its
// chooser (steer.Config{}), the EWMAs of the expected completion per
// class and of the modelled service time of its runs per class. The zero
// value is ready. Safe for concurrent use.
type SteerState struct{ s handlerSteer }

// Decide smooths costs (SteerCosts) into the handler's EWMAs and makes
// the chooser's decision, as PolicySteer does for every message; the NIC
// must be available.
func (s *SteerState) Decide(costs steer.Costs) steer.Decision { return s.s.decide(costs) }

// decide is a handler's PolicySteer decision over costs (the NIC always
// available): placeSteered's and SteerState's.
func (s *handlerSteer) decide(costs steer.Costs) steer.Decision {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ch == nil {
		s.ch = steer.NewChooser(steer.Config{})
	}
	d, _ := s.ch.Choose(s.smooth(costs))
	return d
}

// Ran folds the modelled time of a run on a host core or a NIC core into
// the handler's service EWMA (weight 1/16), as a core does after a run.
func (s *SteerState) Ran(host bool, nanos float64) { ewma(&s.s.service[b2i(host)], nanos) }

// Service is the handler's service estimate on a class (steering's): the
// EWMA of its runs there, or bound before the first.
func (s *SteerState) Service(host bool, bound float64) float64 {
	if v := s.serviceEWMA(host); v > 0 {
		return v
	}
	return bound
}

func (s *SteerState) serviceEWMA(host bool) float64 {
	return math.Float64frombits(s.s.service[b2i(host)].Load())
}

// Bound is the service estimate of a handler before its first run on a
// class: its proven bound's instructions, its region touches and on a
// host core the handoff of an empty request and a reply of replySize.
func (k CostModel) Bound(entry *verifier.EntryReport, nicmem []bool, replySize int, host bool) float64 {
	c := k.m.insns(entry.MaxInsns, host)
	c.add(k.m.touches(entry.RegionsRead, entry.RegionsWritten, nicmem, host))
	if host {
		c.add(k.m.handoff(0, replySize))
	}
	return c.nanos
}

// FlowHash is what SteerFlow places a message of tenant from src by: the
// core is FlowHash mod the class's cores.
func FlowHash(src, tenant uint64) uint64 { return mix(src*0x9e3779b97f4a7c15 ^ tenant) }
