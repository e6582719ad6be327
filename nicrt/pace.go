package nicrt

import (
	"math"
	"sync/atomic"
	"time"
)

// Pacing (spec/nic.md, Pacing): a paced core keeps a virtual clock, the
// time at which the modelled work it has done so far ends: a first-come
// first-served server's, each run ending its service time after the later
// of its message's arrival and the end of the run before. When the clock
// is more than paceSlack ahead of the wall clock the core sleeps until the
// wall clock catches up. Sleeping in batches of at least paceSlack keeps
// the timer's granularity (about a millisecond on a loaded machine) from
// setting the rate; a core that overslept finds the messages that arrived
// meanwhile with arrival times before its clock, and runs them at once
// until the clock is ahead again, so the oversleep is made good instead
// of lost. The clock lags the wall clock by at most paceCredit: a core
// slower than its model (this machine's real time above the modelled)
// cannot bank the difference.
const (
	paceSlack  = 200 * time.Microsecond
	paceCredit = 5 * time.Millisecond
	// minAvailable bounds the stretch of a host core's runs under a host
	// load below 1: at most 1,000 ×.
	minAvailable = 1e-3
)

// pacer is a core's virtual clock.
type pacer struct {
	clock int64 // nanoseconds since the NIC started
	// over is an EWMA (weight 1/8) of how much longer than asked the
	// core's sleeps took: a sleep asks for that much less.
	over float64
}

// charge adds a run of service time d (ns) whose message arrived at
// arrival and returns how long the core should sleep at now.
func (p *pacer) charge(arrival, now int64, d float64) time.Duration {
	p.clock = max(p.clock, arrival, now-int64(paceCredit)) + int64(d)
	over := time.Duration(p.over)
	if ahead := time.Duration(p.clock - now); ahead > paceSlack+over {
		return ahead - over
	}
	return 0
}

// slept notes that a sleep asked for took took.
func (p *pacer) slept(asked, took time.Duration) {
	p.over += (float64(max(took-asked, 0)) - p.over) / 8
}

// lastRun is what pacing needs of the run just finished.
type lastRun struct {
	arrival int64 // when its message was queued, ns since the NIC started
	tenant  uint64
	real    time.Duration
	model   float64 // ns
	verb    bool
}

// now is the time since the NIC started, in nanoseconds.
func (n *NIC) now() int64 { return int64(time.Since(n.start)) }

// paced reports whether the core's runs are paced now.
func (c *core) paced() bool {
	if c.host {
		return c.n.cfg.Paced || c.n.hostLoad.Load() != 0
	}
	return c.n.cfg.Paced
}

// serviceTime is what the run just finished costs its core (ns): a NIC
// core its modelled time (none for a verb); a host core its modelled
// time, or its real time under a host load without Paced, stretched by
// 1 / (1 − HostLoad).
func (c *core) serviceTime() float64 {
	d := c.last.model
	if !c.host {
		if c.last.verb {
			d = 0
		}
		return d
	}
	if l := c.n.HostLoad(); l > 0 {
		if !c.n.cfg.Paced {
			d = float64(c.last.real)
		}
		d /= max(1-l, minAvailable)
	}
	return d
}

// paceRun charges the run just finished to the core's clock, if the core
// is paced, and returns how long to sleep.
func (c *core) paceRun() time.Duration {
	if !c.paced() {
		return 0
	}
	d := c.serviceTime()
	if c.q.fair {
		c.q.ran(c.last.tenant, c.last.arrival, d)
	}
	sleep := c.pace.charge(c.last.arrival, c.n.now(), d)
	c.clock.Store(c.pace.clock)
	return sleep
}

// coreLoad is what a steering policy reads of a core: EWMAs (weight 1/16)
// of the queueing delay and of the service time charged, written by the
// core alone, read by anyone.
type coreLoad struct {
	delayBits, serviceBits atomic.Uint64
}

const ewmaWeight = 1.0 / 16

// ewma folds x into the average at a; the first sample starts it.
func ewma(a *atomic.Uint64, x float64) {
	bits := a.Load()
	if bits == 0 {
		a.Store(math.Float64bits(x))
		return
	}
	old := math.Float64frombits(bits)
	a.Store(math.Float64bits(old + float64(ewmaWeight*(x-old)))) // rounded: no fused multiply-add
}

func (l *coreLoad) delay(ns int64)        { ewma(&l.delayBits, float64(max(ns, 0))) }
func (l *coreLoad) service(ns float64)    { ewma(&l.serviceBits, ns) }
func (l *coreLoad) delayNanos() float64   { return math.Float64frombits(l.delayBits.Load()) }
func (l *coreLoad) serviceNanos() float64 { return math.Float64frombits(l.serviceBits.Load()) }

// ClassLoad is the load of one class of cores (NIC or host).
type ClassLoad struct {
	Cores  int // cores of the class
	Queued int // messages queued on them now
	// QueueDelayNanos is the mean over the class's cores of their EWMA
	// (weight 1/16) of the time a message waited in the queue.
	QueueDelayNanos float64
	// ServiceNanos is the mean over the class's cores of their EWMA of the
	// service time of a run: the modelled time (none for a verb), on a host
	// core stretched by 1 / (1 − HostLoad), and there the real time under a
	// host load without Config.Paced.
	ServiceNanos float64
}

// LoadSignals is what a steering policy reads of the node: per class of
// core, its queues and times, and the host load and placement in effect.
type LoadSignals struct {
	NIC, Host ClassLoad
	HostLoad  float64
	Placement PlacementPolicy
}

// Load returns the load signals now; safe while messages flow.
func (n *NIC) Load() LoadSignals {
	return LoadSignals{NIC: classLoad(n.nic), Host: classLoad(n.host), HostLoad: n.HostLoad(), Placement: n.Placement()}
}

func classLoad(cores []*core) ClassLoad {
	l := ClassLoad{Cores: len(cores)}
	for _, c := range cores {
		l.Queued += c.q.Len()
		l.QueueDelayNanos += c.load.delayNanos()
		l.ServiceNanos += c.load.serviceNanos()
	}
	if len(cores) > 0 {
		l.QueueDelayNanos /= float64(len(cores))
		l.ServiceNanos /= float64(len(cores))
	}
	return l
}
