package peer

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/naam-project/naam/clientrun"
	"github.com/naam-project/naam/steer"
)

// Placement says where a call runs (spec/client.md, Placement at the
// caller).
type Placement uint8

const (
	// PlaceDefault is the peer's placement (Config.Placement,
	// SetPlacement), for the per-call methods; a peer's own default is
	// AtNode.
	PlaceDefault Placement = iota
	// AtNode sends the request to the node, which places it on its NIC or
	// host cores.
	AtNode
	// AtClient runs the handler in the caller's own VM over one-sided
	// verbs when it can (the caller holds the object, AddObject, and the
	// node found the handler client-eligible); other handlers run at the
	// node, counted in PlacementStats.NotAtClient.
	AtClient
	// Auto chooses per message, between the node and the client, the one
	// whose measured completion time is lower (steer.Chooser: hysteresis,
	// probes of the other).
	Auto
	numPlacements
)

var placementNames = [numPlacements]string{"default", "node", "client", "auto"}

func (pl Placement) String() string {
	if pl < numPlacements {
		return placementNames[pl]
	}
	return fmt.Sprintf("Placement(%d)", uint8(pl))
}

// ParsePlacement reads a Placement's name: node, client or auto.
func ParsePlacement(s string) (Placement, error) {
	for i, n := range placementNames {
		if n == s && Placement(i) != PlaceDefault {
			return Placement(i), nil
		}
	}
	return 0, fmt.Errorf("host: %q is not a placement (node, client, auto)", s)
}

// SetPlacement sets where the peer's calls run from now on (AtNode,
// AtClient or Auto; PlaceDefault means AtNode). A call already started
// keeps the place it was given.
func (p *Peer) SetPlacement(pl Placement) {
	if pl == PlaceDefault || pl >= numPlacements {
		pl = AtNode
	}
	p.placement.Store(uint32(pl))
}

// Placement is the peer's placement now.
func (p *Peer) Placement() Placement { return Placement(p.placement.Load()) }

// CallInfo says where a call ran and what it cost in round trips.
type CallInfo struct {
	Placement  Placement // AtNode or AtClient
	RoundTrips int       // to the node: 1 at the node (its retransmissions aside), the run's at the client
	Probe      bool      // Auto sent it to the option it had not chosen, to measure it
}

// Steering parameters of Auto.
const (
	// placeTau is the time constant of the completion times Auto
	// compares: a sample weighs by the time since the option's previous
	// one (1 − e^(−dt/τ)), so that a pause that delays every call in
	// flight at once moves the estimate as one sample, not as many as were
	// in flight, and a lasting change shows within tens of milliseconds.
	placeTau = 20 * time.Millisecond
	// placeMaxWeight and placeClip bound what one sample does: at most
	// that weight (the first after a silence would weigh most: after a
	// pause), and at most placeClip times the estimate, so that a call
	// stuck behind a stall does not move the choice.
	placeMaxWeight = 0.125
	placeClip      = 3
	// placeProbeEvery sends one call in that many to the other option,
	// k times fewer when it is estimated k times as costly
	// (steer.Config.ScaleProbes): a probe at the client costs the node's
	// calls far more than its share (naam bench kv --placement auto lost
	// 10-15% to one probe in 64 at 130,000 calls/s, and none it measured
	// to one in 256), and at these rates one in 256 is still a sample
	// every few milliseconds, many per placeTau.
	placeProbeEvery = 256
	// placeMargin is the hysteresis: the other option must be estimated
	// that much cheaper before Auto moves (steer.Config.Margin).
	placeMargin = 0.3
	// placeDwell is how many calls Auto keeps a choice after a switch;
	// a switch soon after the one before doubles it, up to placeMaxDwell
	// (steer.Config.MaxDwell): latencies under load are noisy, and a
	// caller that flaps between node and client pays the dearer option
	// on every other stay.
	placeDwell    = 256
	placeMaxDwell = 32 * placeDwell
	// placeMaxInflation bounds an option's learnt inflation, and
	// placeLearn is how far into a stay it is learnt (placeState).
	placeMaxInflation = 8
	placeLearn        = 2 * placeTau
)

// placeState is one handler's placement at this caller: Auto's chooser
// and its estimates, and the counters of every decision. It outlives a
// Refresh that keeps the handler's id.
type placeState struct {
	mu      sync.Mutex
	chooser *steer.Chooser
	node    steer.EWMA // ns of a call at the node
	client  steer.EWMA // ns of a run at the client
	rounds  steer.EWMA // round trips of a run at the client
	// lastNode and lastClient are when each estimate took its last
	// sample.
	lastNode, lastClient time.Time
	// Inflation: the estimate of the option the calls do not go to comes
	// from probes, and a lone probe finds the option idle: a run at the
	// client takes its round trips' time while the node's cores queue the
	// caller's load, and looks cheaper than it will be once every call
	// goes there. So the chooser sees that option's estimate times its
	// inflation, learnt from the stays: placeLearn into a stay (when the
	// estimates have taken in the calls' own samples, and before much
	// else can have changed), or at its end if sooner, the option's
	// estimate over its estimate when the stay began (entered, from
	// probes), averaged with the inflation before, at least 1 and at most
	// placeMaxInflation.
	inflation [2]float64 // AtNode, AtClient: index Placement − 1
	entered   float64    // 0: the choice is the first, no move, or the stay has been learnt from
	enteredAt time.Time

	atNode, atClient, auto, probes, notAtClient, clientRoundTrips atomic.Uint64
	choice                                                        atomic.Uint32 // the chooser's current choice, a Placement (0: none yet)
}

func newPlaceState() *placeState {
	return &placeState{
		chooser:   steer.NewChooser(steer.Config{Margin: placeMargin, ProbeEvery: placeProbeEvery, MinDwell: placeDwell, MaxDwell: placeMaxDwell, ScaleProbes: true}),
		inflation: [2]float64{1, 1},
	}
}

// choose is one decision of Auto's chooser over the estimates node and
// client (ns) at now, under st.mu: the option not chosen inflated, and
// the stay learnt from.
func (st *placeState) choose(node, client float64, now time.Time) steer.Decision {
	raw := [2]float64{node, client}
	var costs steer.Costs
	costs[steer.Host] = steer.Unavailable // the node is one option here: it places on its NIC or host itself
	costs[steer.NIC], costs[steer.Client] = node, client
	cur, ok := st.chooser.Current()
	at := AtNode
	if cur == steer.Client {
		at = AtClient
	}
	if ok {
		if at == AtClient {
			costs[steer.NIC] *= st.inflation[AtNode-1]
		} else {
			costs[steer.Client] *= st.inflation[AtClient-1]
		}
	}
	d, _ := st.chooser.Choose(costs)
	if ok && st.entered > 0 && (d.Switched || now.Sub(st.enteredAt) >= placeLearn) {
		inf := &st.inflation[at-1]
		*inf = min(max((*inf+raw[at-1]/st.entered)/2, 1), placeMaxInflation)
		st.entered = 0
	}
	if d.Switched {
		to := AtNode
		if cur, _ := st.chooser.Current(); cur == steer.Client {
			to = AtClient
		}
		st.entered, st.enteredAt = raw[to-1], now
	}
	return d
}

// decision is where one call runs.
type decision struct {
	at          Placement // AtNode or AtClient
	auto, probe bool      // Auto placed it (its time is measured); a probe
	decided     time.Time // when Auto's chooser decided (zero: it did not, the chooser was busy)
}

// decide is where h's next call runs, given pl (PlaceDefault: the peer's).
// It is called once per call, before anything is sent, and the call keeps
// its answer through every retransmission.
func (p *Peer) decide(h *Handler, pl Placement) decision {
	if pl == PlaceDefault {
		pl = Placement(p.placement.Load())
	}
	st := h.place
	switch {
	case pl == AtNode || pl == PlaceDefault:
		st.atNode.Add(1)
		return decision{at: AtNode}
	case h.client == nil:
		st.atNode.Add(1)
		st.notAtClient.Add(1)
		return decision{at: AtNode}
	case pl == AtClient:
		st.atClient.Add(1)
		return decision{at: AtClient}
	}
	st.auto.Add(1)
	// A call that finds the chooser busy takes its current choice rather
	// than wait: with many calls in flight on few CPUs, waiting behind a
	// holder that lost its CPU costs more than the decision is worth.
	if !st.mu.TryLock() {
		if at := Placement(st.choice.Load()); at == AtClient {
			st.atClient.Add(1)
			return decision{at: AtClient, auto: true}
		}
		st.atNode.Add(1)
		return decision{at: AtNode, auto: true}
	}
	guess := p.rttGuess(st)
	now := time.Now()
	d := st.choose(st.node.Or(guess), st.client.Or(st.rounds.Or(2)*guess), now)
	if cur, _ := st.chooser.Current(); cur == steer.Client {
		st.choice.Store(uint32(AtClient))
	} else {
		st.choice.Store(uint32(AtNode))
	}
	st.mu.Unlock()
	if d.Probe {
		st.probes.Add(1)
	}
	if d.Location == steer.Client {
		st.atClient.Add(1)
		return decision{at: AtClient, auto: true, probe: d.Probe, decided: now}
	}
	st.atNode.Add(1)
	return decision{at: AtNode, auto: true, probe: d.Probe, decided: now}
}

// rttGuess is a round trip's estimate in ns before a handler has samples
// of its own: the client's smoothed round trip, else 1 (then the node, at
// one round trip, goes first and the client is probed).
func (p *Peer) rttGuess(st *placeState) float64 {
	if _, ok := st.node.Value(); ok {
		if _, ok := st.client.Value(); ok {
			return 1
		}
	}
	if srtt := p.cl.Stats().SRTT; srtt > 0 {
		return float64(srtt)
	}
	return 1
}

// measured folds a call that Auto placed into its estimates: its
// completion time, if it completed (a reply or the handler's own error).
func (st *placeState) measured(at Placement, probe bool, start time.Time, rounds int, err error) {
	var he *HandlerError
	if err != nil && !errors.As(err, &he) {
		return
	}
	now := time.Now()
	ns := float64(now.Sub(start))
	// A probe's sample is the only news of its option: it waits for the
	// lock. The chosen option's samples are many; one that finds the lock
	// busy is dropped.
	if probe {
		st.mu.Lock()
	} else if !st.mu.TryLock() {
		return
	}
	if at == AtClient {
		alpha := addTimed(&st.client, &st.lastClient, ns, now)
		st.rounds.Add(float64(rounds), alpha)
	} else {
		addTimed(&st.node, &st.lastNode, ns, now)
	}
	st.mu.Unlock()
}

// addTimed folds sample x, taken at now, into e with the weight of the
// time since the last one (placeTau; at most placeMaxWeight, x at most
// placeClip times the estimate), and returns that weight.
func addTimed(e *steer.EWMA, last *time.Time, x float64, now time.Time) float64 {
	alpha := 1.0
	if v, ok := e.Value(); ok {
		alpha = min(-math.Expm1(-float64(now.Sub(*last))/float64(placeTau)), placeMaxWeight)
		x = min(x, placeClip*v)
	}
	*last = now
	e.Add(x, alpha)
	return alpha
}

// exec runs h with payload where pl places it; a reply at the node is
// appended to dst (a copy: dst nil), one at the client is the run's own.
func (p *Peer) exec(ctx context.Context, h *Handler, payload, dst []byte, pl Placement) ([]byte, CallInfo, error) {
	return p.execAt(ctx, h, payload, dst, p.decide(h, pl))
}

// execAt is exec with the placement decided.
func (p *Peer) execAt(ctx context.Context, h *Handler, payload, dst []byte, d decision) ([]byte, CallInfo, error) {
	at, auto := d.at, d.auto
	info := CallInfo{Placement: at, RoundTrips: 1, Probe: d.probe}
	start := d.decided // the call's time is measured from the decision, when there was one
	if auto && start.IsZero() {
		start = time.Now()
	}
	var reply []byte
	var err error
	if at == AtClient {
		var stats clientrun.Stats
		reply, stats, err = p.runAtClient(ctx, h, payload)
		info.RoundTrips = stats.RoundTrips
		h.place.clientRoundTrips.Add(uint64(stats.RoundTrips))
	} else if dst == nil {
		reply, err = p.cl.Call(ctx, p.tenant, h.ID, payload)
	} else {
		reply, err = p.cl.AppendCall(ctx, dst, p.tenant, h.ID, payload)
	}
	if auto {
		h.place.measured(at, d.probe, start, info.RoundTrips, err)
	}
	if err != nil && at == AtNode {
		err = p.err(callError(h, err))
	}
	return reply, info, err
}

// CallPlaced runs h with payload as the request where pl says
// (PlaceDefault: the peer's placement) and returns a copy of the reply and
// where the call ran.
func (p *Peer) CallPlaced(ctx context.Context, h *Handler, payload []byte, pl Placement) ([]byte, CallInfo, error) {
	if err := p.usable(); err != nil {
		return nil, CallInfo{}, err
	}
	return p.exec(ctx, h, payload, nil, pl)
}

// PlacementStats are one handler's placements at this caller.
type PlacementStats struct {
	Handler string // as Handler.String names it
	// Node and Client count the calls that ran at each; Auto those of
	// them that Auto placed, Probes those it sent to the option it had
	// not chosen, Switches how often its choice changed.
	Node, Client, Auto, Probes, Switches uint64
	// NotAtClient counts calls placed at the client (AtClient or Auto)
	// that ran at the node, since the handler cannot run at the client.
	NotAtClient uint64
	// ClientRoundTrips is the round trips of the runs at the client.
	ClientRoundTrips uint64
	// NodeTime and ClientTime are Auto's estimates of a call's completion
	// at each, 0 before a sample.
	NodeTime, ClientTime time.Duration
	// Choice is Auto's current choice ("node", "client"; "" before one).
	Choice string
	// CanRunAtClient: the caller holds the object and the node found the
	// handler client-eligible.
	CanRunAtClient bool
}

// PlacementStats returns the placement counters of every handler the
// peer knows, sorted by name.
func (p *Peer) PlacementStats() []PlacementStats {
	hs := p.Handlers()
	out := make([]PlacementStats, 0, len(hs))
	for _, h := range hs {
		out = append(out, h.PlacementStats())
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Handler < out[j].Handler })
	return out
}

// PlacementStats returns h's placement counters at its peer.
func (h *Handler) PlacementStats() PlacementStats {
	st := h.place
	s := PlacementStats{
		Handler: h.String(), Node: st.atNode.Load(), Client: st.atClient.Load(), Auto: st.auto.Load(),
		Probes: st.probes.Load(), NotAtClient: st.notAtClient.Load(), ClientRoundTrips: st.clientRoundTrips.Load(),
		CanRunAtClient: h.client != nil,
	}
	st.mu.Lock()
	s.Switches = st.chooser.Switches()
	s.NodeTime = time.Duration(st.node.Or(0))
	s.ClientTime = time.Duration(st.client.Or(0))
	if loc, ok := st.chooser.Current(); ok {
		s.Choice = AtNode.String()
		if loc == steer.Client {
			s.Choice = AtClient.String()
		}
	}
	st.mu.Unlock()
	return s
}

// CanRunAtClient says whether h can run at the client: the caller holds
// its object (AddObject) and the node's verifier found it client-eligible.
func (h *Handler) CanRunAtClient() bool { return h.client != nil }
