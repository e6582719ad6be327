package nicrt

import (
	"math"
	"sync"
	"sync/atomic"

	"github.com/naam-project/naam/steer"
)

// Steering at the node (PolicySteer; spec/nic.md, Steering): a message
// of a handler that may run on either class of core goes to the NIC core
// or the host core its hash names, whichever is expected to finish it
// first. The expected completion on a core is its backlog — the lead of
// its virtual clock over the wall clock (the runs it has charged and not
// yet taken in wall time) plus its queued messages at its service-time
// EWMA — and the handler's own service time there: an EWMA of its runs'
// modelled time on that class (before one, its bound's), on a host core
// stretched by 1 / (1 − HostLoad) at the host load now. A steer.Chooser
// per handler turns the two into one choice, with its margin as
// hysteresis and a probe of the other class every 64 messages so that
// the service estimate of the class not chosen stays fresh.

// handlerSteer is a handler's steering state.
type handlerSteer struct {
	mu sync.Mutex
	ch *steer.Chooser // made on the first decision
	// cost smooths the messages' expected completion on each class
	// (steerCostWeight), so that one busy core among the class's does not
	// flip the choice; under mu.
	cost [2]steer.EWMA
	// service is the EWMA (float64 bits, weight 1/16) of the modelled
	// service time of the handler's runs on a NIC core [0] and a host core
	// [1], without the host load's stretch.
	service [2]atomic.Uint64
	ctr     steerCounters
}

type steerCounters struct {
	nic, host, probes, switches atomic.Uint64
}

// SteerCounts counts the steering policy's decisions for a handler (or
// all of them): NIC and Host the messages sent to each class, Probes the
// messages among those sent to the class not chosen to refresh its
// estimate, Switches the changes of the choice.
type SteerCounts struct {
	NIC, Host, Probes, Switches uint64
}

func (s *SteerCounts) add(o SteerCounts) {
	s.NIC += o.NIC
	s.Host += o.Host
	s.Probes += o.Probes
	s.Switches += o.Switches
}

func (c *steerCounters) snapshot() SteerCounts {
	return SteerCounts{NIC: c.nic.Load(), Host: c.host.Load(), Probes: c.probes.Load(), Switches: c.switches.Load()}
}

// classEstimate is what steering knows of one core a message may go to.
type classEstimate struct {
	Open    bool    // the core takes messages
	Backlog float64 // ns until it could start the message
	Service float64 // ns the message would take there, before the host load's stretch
}

// steerCosts is the expected completion time (ns) of a message on the NIC
// core and on the host core it may go to, the host's service stretched by
// the host load; a class that takes nothing is unavailable.
func steerCosts(nic, host classEstimate, hostLoad float64) steer.Costs {
	c := steer.Costs{steer.Unavailable, steer.Unavailable, steer.Unavailable}
	if nic.Open {
		c[steer.NIC] = nic.Backlog + nic.Service
	}
	if host.Open && hostLoad < 1 {
		c[steer.Host] = host.Backlog + host.Service/max(1-hostLoad, minAvailable)
	}
	return c
}

// backlog is how long a message queued on c now would wait (ns): the lead
// of the core's virtual clock when it is paced, and its queue at the
// core's service-time EWMA.
func (c *core) backlog(now int64) float64 {
	b := float64(c.q.Len()) * c.load.serviceNanos()
	if c.paced() {
		if ahead := c.clock.Load() - now; ahead > 0 {
			b += float64(ahead)
		}
	}
	return b
}

// serviceEstimate is the handler's modelled service time on a NIC core
// (host false) or a host core: the EWMA of its runs there, or before the
// first the cost of its bound's instructions, its region touches and, on
// a host core, the handoff.
func (n *NIC) serviceEstimate(h *handler, host bool) float64 {
	if v := math.Float64frombits(h.steer.service[b2i(host)].Load()); v > 0 {
		return v
	}
	k := n.model.insns(h.maxInsns, host)
	k.add(h.static[b2i(host)])
	if host {
		k.add(n.model.handoff(0, h.replySize))
	}
	return k.nanos
}

// steerCostWeight is the weight of a message's expected completion in
// its handler's EWMA per class.
const steerCostWeight = 1.0 / 8

// smooth folds costs into the handler's EWMAs and returns them; an
// unavailable class stays unavailable and starts afresh when it returns.
func (s *handlerSteer) smooth(costs steer.Costs) steer.Costs {
	for i, l := range []steer.Location{steer.NIC, steer.Host} {
		if math.IsInf(costs[l], 1) {
			s.cost[i] = steer.EWMA{}
			continue
		}
		s.cost[i].Add(costs[l], steerCostWeight)
		costs[l], _ = s.cost[i].Value()
	}
	return costs
}

// placeSteered places t, a message of a handler that may run on either
// class, under PolicySteer; when the chosen core's queue is full it tries
// the other class.
func (n *NIC) placeSteered(t *task, hash uint64) pushResult {
	h := t.h
	c := n.pickCore(n.nic, t.tc, hash, false)
	if !n.hostOpen() {
		h.steer.ctr.nic.Add(1)
		t.place = PlaceNIC
		return c.enqueue(t)
	}
	j := n.pickCore(n.host, t.tc, hash, true)
	now := n.now()
	costs := steerCosts(
		classEstimate{Open: true, Backlog: c.backlog(now), Service: n.serviceEstimate(h, false)},
		classEstimate{Open: true, Backlog: j.backlog(now), Service: n.serviceEstimate(h, true)},
		n.HostLoad())
	d := h.steer.decide(costs)
	if d.Probe {
		h.steer.ctr.probes.Add(1)
	}
	if d.Switched {
		h.steer.ctr.switches.Add(1)
	}
	first, firstPlace, other, otherPlace := c, PlaceNIC, j, PlaceHostSteer
	if d.Location == steer.Host {
		h.steer.ctr.host.Add(1)
		first, firstPlace, other, otherPlace = j, PlaceHostSteer, c, PlaceNIC
	} else {
		h.steer.ctr.nic.Add(1)
	}
	t.place = firstPlace
	if res := first.enqueue(t); res != pushFull && res != pushQuota {
		return res
	}
	t.place = otherPlace
	return other.enqueue(t)
}
