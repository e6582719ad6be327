package host

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/naam-project/naam/host/peer"
)

// callerCollector exports where this node, as a caller, ran its calls to
// each peer it dialed (peer.Peer.PlacementStats), read at each scrape.
type callerCollector struct {
	n                                  *Node
	placed, probes, switches, notLocal *prometheus.Desc
	roundTrips                         *prometheus.Desc
}

func newCallerCollector(n *Node) *callerCollector {
	d := func(name, help string, labels ...string) *prometheus.Desc {
		return prometheus.NewDesc("naam_caller_"+name, help, labels, prometheus.Labels{"node": n.cfg.Name})
	}
	h := []string{"peer", "handler"}
	return &callerCollector{
		n:          n,
		placed:     d("placements_total", "Calls to a peer's handler by where they ran: at the node, or at this caller over one-sided verbs.", append(h, "placement")...),
		probes:     d("placement_probes_total", "Calls that automatic placement sent to the option it had not chosen, to measure it.", h...),
		switches:   d("placement_switches_total", "Changes of automatic placement's choice.", h...),
		notLocal:   d("placement_not_at_client_total", "Calls placed at the client that ran at the node: the handler cannot run at the client.", h...),
		roundTrips: d("client_round_trips_total", "Round trips of the runs at this caller (READs, atomics).", h...),
	}
}

func (c *callerCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{c.placed, c.probes, c.switches, c.notLocal, c.roundTrips} {
		ch <- d
	}
}

func (c *callerCollector) Collect(ch chan<- prometheus.Metric) {
	c.n.mu.Lock()
	peers := make([]*peer.Peer, 0, len(c.n.peers))
	for _, p := range c.n.peers {
		peers = append(peers, p)
	}
	c.n.mu.Unlock()
	counter := func(d *prometheus.Desc, v uint64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, float64(v), labels...)
	}
	for _, p := range peers {
		addr := p.Addr().String()
		for _, s := range p.PlacementStats() {
			if s.Node+s.Client == 0 {
				continue
			}
			counter(c.placed, s.Node, addr, s.Handler, peer.AtNode.String())
			counter(c.placed, s.Client, addr, s.Handler, peer.AtClient.String())
			counter(c.probes, s.Probes, addr, s.Handler)
			counter(c.switches, s.Switches, addr, s.Handler)
			counter(c.notLocal, s.NotAtClient, addr, s.Handler)
			counter(c.roundTrips, s.ClientRoundTrips, addr, s.Handler)
		}
	}
}
