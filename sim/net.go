package sim

import (
	"math"
	"math/rand/v2"

	"github.com/naam-project/naam/internal/detmath"
	"github.com/naam-project/naam/nicrt/wire"
)

// The network: every endpoint (node or client) has one port that sends
// its datagrams one after another at the port's rate (the link's when a
// rule sets one); a datagram then takes the link's latency, drawn from
// its distribution, and is lost or duplicated with the link's
// chances. A partition drops what crosses it on arrival; a failed node
// drops everything that reaches it.

type packetKind uint8

const (
	pkRequest   packetKind = iota // a client's request (hop 0)
	pkForward                     // a node's forward of a request (hop ≥ 1)
	pkReply                       // a reply: to its client, or relayed to the node before
	pkOneway                      // a send: one-way, at most once
	pkVerb                        // a caller's verb of a run at the client (hop: its round trip)
	pkVerbReply                   // the verb's reply
)

// Datagram sizes beyond the payload: the header and tag, and the route
// prefixes of a forward (forward and program) and of a send (program).
const (
	headerBytes        = wire.HeaderSize
	forwardPrefixBytes = 24 + 8
	programPrefixBytes = 8
)

// linkProps is one link's behaviour.
type linkProps struct {
	lat       Latency
	bps       float64 // 0: the port's
	loss, dup float64
}

// linkRule is a Network.Links entry with its node sets as bitmaps.
type linkRule struct {
	from, to  []uint64 // nil: every node
	lat       *Latency
	bps       float64
	loss, dup *float64
}

type network struct {
	def   linkProps
	rules []linkRule
	bps   float64 // a port's rate
	rng   *rand.Rand
	relay bool
}

func bitmap(s NodeSet, nodes int) []uint64 {
	if len(s) == 0 {
		return nil
	}
	b := make([]uint64, (nodes+63)/64)
	s.each(func(n int) { b[n/64] |= 1 << (n % 64) })
	return b
}

func inSet(b []uint64, n int32) bool { return b == nil || b[n/64]&(1<<(n%64)) != 0 }

func newNetwork(sc Scenario, bps float64, seed uint64) *network {
	n := &network{bps: bps, rng: rand.New(rand.NewPCG(seed, streamNetwork)), relay: sc.Network.Reply == "relayed",
		def: linkProps{lat: sc.Network.Latency, loss: sc.Network.Loss, dup: sc.Network.Duplicate}}
	for _, l := range sc.Network.Links {
		n.rules = append(n.rules, linkRule{from: bitmap(l.From, sc.Nodes), to: bitmap(l.To, sc.Nodes),
			lat: l.Latency, bps: l.BandwidthGbps * 1e9, loss: l.Loss, dup: l.Duplicate})
	}
	return n
}

// props is the link from node a to node b (clients as their nodes).
func (n *network) props(a, b int32) linkProps {
	p := n.def
	for i := range n.rules {
		r := &n.rules[i]
		if !inSet(r.from, a) || !inSet(r.to, b) {
			continue
		}
		if r.lat != nil {
			p.lat = *r.lat
		}
		if r.bps != 0 {
			p.bps = r.bps
		}
		if r.loss != nil {
			p.loss = *r.loss
		}
		if r.dup != nil {
			p.dup = *r.dup
		}
	}
	return p
}

// latency draws one datagram's latency in ns.
func (n *network) latency(l Latency) int64 {
	base, j := float64(l.Base), float64(l.Jitter)
	// detmath's variates and exp, each product rounded: the same bits on
	// every machine (spec/sim.md, Determinism).
	var x float64
	switch l.Dist {
	case "uniform":
		x = float64(n.rng.Float64() * j)
	case "exponential":
		x = float64(detmath.ExpVariate(n.rng.Float64()) * j)
	case "normal":
		x = float64(math.Abs(detmath.NormVariate(n.rng.Float64)) * j)
	case "lognormal":
		x = float64(detmath.Exp(detmath.NormVariate(n.rng.Float64)/2) * j)
	}
	return int64(base + min(x, 10*float64(1e9)))
}

// wireNanos is how long a port of bps takes to send bytes.
func wireNanos(bytes int, bps float64) int64 {
	if bps <= 0 {
		return 0
	}
	return int64(float64(bytes*8) * 1e9 / bps)
}
