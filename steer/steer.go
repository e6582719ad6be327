package steer

import (
	"fmt"
	"math"
)

// Location is where a message runs.
type Location uint8

const (
	Client Location = iota // the caller runs the handler itself, over one-sided verbs
	NIC                    // a NIC core of the node that owns the data
	Host                   // a host core of that node
	NumLocations
)

var locationNames = [NumLocations]string{"client", "nic", "host"}

func (l Location) String() string {
	if l < NumLocations {
		return locationNames[l]
	}
	return fmt.Sprintf("Location(%d)", uint8(l))
}

// ParseLocation reads a Location's name.
func ParseLocation(s string) (Location, error) {
	for i, n := range locationNames {
		if n == s {
			return Location(i), nil
		}
	}
	return 0, fmt.Errorf("steer: %q is not a location (client, nic, host)", s)
}

// Costs are the estimated completion times of one message at each
// location, in nanoseconds (or any unit, the same for all). An option
// that may not be chosen (not eligible, not present) is +Inf: use
// Unavailable.
type Costs [NumLocations]float64

// Unavailable marks an option that may not be chosen.
var Unavailable = math.Inf(1)

// Config tunes a Chooser. Zero fields take their defaults.
type Config struct {
	// Margin is how much cheaper another option must be before the
	// chooser leaves the current one: it switches when
	// cost(other) < cost(current) × (1 − Margin). Default 0.2.
	Margin float64
	// ProbeEvery sends one message in ProbeEvery to the cheapest option
	// other than the chosen one, so that an estimate made from the
	// option's own replies (a caller's round trips to the node, say) does
	// not go stale while it gets no traffic. 0 means 64; negative, never.
	ProbeEvery int
	// MinDwell is how many decisions the chooser keeps a choice after it
	// switched, unless that option becomes unavailable: hysteresis in
	// time, for estimates whose samples are noisy (latencies under
	// load), which the margin alone would let flap. 0: none.
	MinDwell int
	// MaxDwell lets the dwell grow: a switch made within twice the dwell
	// of the one before (the choice oscillates) doubles it, up to
	// MaxDwell; a choice held for four times the dwell halves it, down to
	// MinDwell. Two options that each look cheaper while the load is on
	// the other (a congestion game) then settle into long stays. 0 (or
	// not above MinDwell): the dwell is MinDwell.
	MaxDwell int
	// ScaleProbes spaces the probes of an option estimated k times as
	// costly as the current one k times wider (k rounded up, at most 4):
	// probing an option that is far behind costs the most and tells the
	// least.
	ScaleProbes bool
}

// DefaultMargin and DefaultProbeEvery are Config's defaults.
const (
	DefaultMargin     = 0.2
	DefaultProbeEvery = 64
)

func (c Config) withDefaults() Config {
	if c.Margin == 0 {
		c.Margin = DefaultMargin
	}
	if c.ProbeEvery == 0 {
		c.ProbeEvery = DefaultProbeEvery
	}
	return c
}

// Decision is one choice.
type Decision struct {
	Location Location
	// Probe: the message goes to an option that is not the current
	// choice, to refresh its estimate.
	Probe bool
	// Switched: the current choice changed with this decision.
	Switched bool
}

// Chooser keeps the current choice of one stream of messages (one
// handler at one caller or one node). It is not safe for concurrent use;
// callers hold it under their own lock or keep one per core.
type Chooser struct {
	cfg     Config
	cur     Location
	has     bool
	n       uint64
	changes uint64
	since   uint64 // c.n at the last switch
	dwell   uint64 // decisions a choice is held after a switch now
	probed  uint64 // c.n at the last probe
}

// NewChooser returns a Chooser with cfg's settings.
func NewChooser(cfg Config) *Chooser {
	c := &Chooser{cfg: cfg.withDefaults()}
	c.dwell = uint64(max(c.cfg.MinDwell, 0))
	return c
}

// Dwell is how many decisions a choice is held after a switch now.
func (c *Chooser) Dwell() uint64 { return c.dwell }

// Current is the current choice, and whether there is one yet.
func (c *Chooser) Current() (Location, bool) { return c.cur, c.has }

// Switches counts how often the choice changed after the first.
func (c *Chooser) Switches() uint64 { return c.changes }

// Choose picks where the next message runs. With no option available it
// returns ok false. The first decision takes the cheapest option; after
// that the chooser stays unless another is cheaper by the margin (and
// MinDwell decisions passed since it last switched), or the current one
// became unavailable. Ties go to the lower Location.
func (c *Chooser) Choose(costs Costs) (d Decision, ok bool) {
	best, second := cheapest(costs, NumLocations)
	if math.IsInf(costs[best], 1) {
		return Decision{}, false
	}
	c.n++
	held := c.n - c.since
	if minDwell := uint64(max(c.cfg.MinDwell, 0)); c.changes > 0 && held > 4*c.dwell && c.dwell > minDwell {
		c.dwell, c.since = max(c.dwell/2, minDwell), c.n
	}
	switch {
	case !c.has:
		c.cur, c.has = best, true
	case math.IsInf(costs[c.cur], 1):
		c.switchTo(best, &d)
	case costs[best] < costs[c.cur]*(1-c.cfg.Margin) && (c.changes == 0 || held > c.dwell):
		if c.changes > 0 && held <= 2*c.dwell && c.cfg.MaxDwell > c.cfg.MinDwell {
			c.dwell = min(max(2*c.dwell, 1), uint64(c.cfg.MaxDwell))
		}
		c.switchTo(best, &d)
	}
	d.Location = c.cur
	other := best
	if other == c.cur {
		other = second
	}
	if c.cfg.ProbeEvery > 0 && other != c.cur && !math.IsInf(costs[other], 1) && c.n-c.probed >= c.probeEvery(costs[other], costs[c.cur]) {
		d.Location, d.Probe = other, true
		c.probed = c.n
	}
	return d, true
}

// probeEvery is the decisions between probes of an option estimated to
// cost other while the current one costs cur.
func (c *Chooser) probeEvery(other, cur float64) uint64 {
	every := uint64(c.cfg.ProbeEvery)
	if c.cfg.ScaleProbes && cur > 0 && other > cur {
		every *= uint64(min(math.Ceil(other/cur), 4))
	}
	return every
}

func (c *Chooser) switchTo(l Location, d *Decision) {
	if l != c.cur {
		c.cur = l
		c.changes++
		c.since = c.n
		d.Switched = true
	}
}

// cheapest returns the cheapest option and the cheapest after it, skipping
// skip (NumLocations: none).
func cheapest(costs Costs, skip Location) (best, second Location) {
	best, second = NumLocations, NumLocations
	for l := Location(0); l < NumLocations; l++ {
		switch {
		case l == skip:
		case best == NumLocations || costs[l] < costs[best]:
			best, second = l, best
		case second == NumLocations || costs[l] < costs[second]:
			second = l
		}
	}
	if second == NumLocations {
		second = best
	}
	return best, second
}

// EWMA is an exponentially weighted moving average. The zero value takes
// its first sample as its value. Not safe for concurrent use.
type EWMA struct {
	value float64
	has   bool
}

// Add folds x in with weight alpha (0 < alpha ≤ 1; larger follows faster).
func (e *EWMA) Add(x, alpha float64) {
	if !e.has {
		e.value, e.has = x, true
		return
	}
	e.value += float64(alpha * (x - e.value)) // rounded: no fused multiply-add, the same bits on every architecture
}

// Value is the average, and whether there has been a sample.
func (e *EWMA) Value() (float64, bool) { return e.value, e.has }

// Or is the average, or def before the first sample.
func (e *EWMA) Or(def float64) float64 {
	if !e.has {
		return def
	}
	return e.value
}
