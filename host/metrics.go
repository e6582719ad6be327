package host

import (
	"net/http"
	"strconv"
	"strings"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/naam-project/naam/nicrt"
)

// collector exports a node's counters to Prometheus, read from the NIC and
// the server at each scrape (nothing is counted twice).
type collector struct {
	n *Node

	queued, queueCap, busy, runs, insns, placed *prometheus.Desc
	hRuns, hOutcome, hRejected, hTime, hPlaced  *prometheus.Desc
	hSteer, hSteerProbes, hSteerSwitches        *prometheus.Desc
	dropped, rejected, server, dma, cycles      *prometheus.Desc
	members, serverState, xdp                   *prometheus.Desc
	jitRuns, jitFallbacks, jitCompiles, jitTime *prometheus.Desc
}

func newCollector(n *Node) *collector {
	core := []string{"core", "kind"}
	// handler: "counter.add" (nicrt.HandlerNames), or a verb's name;
	// program: "counter" ("" for a verb); tenant: the program's ("" for a
	// verb).
	h := []string{"handler", "program", "tenant"}
	d := func(name, help string, labels ...string) *prometheus.Desc {
		return prometheus.NewDesc("naam_"+name, help, labels, prometheus.Labels{"node": n.cfg.Name})
	}
	return &collector{
		n:              n,
		queued:         d("core_queue_depth", "Messages waiting in a core's rx queue now.", core...),
		queueCap:       d("core_queue_capacity", "A core's rx queue capacity.", core...),
		busy:           d("core_busy_seconds_total", "Time a core spent running handlers and verbs.", core...),
		runs:           d("core_runs_total", "Handler and verb runs on a core.", core...),
		insns:          d("core_instructions_total", "eBPF instructions a core executed.", core...),
		placed:         d("placements_total", "Placement decisions: where messages were sent to run.", "placement"),
		hRuns:          d("handler_runs_total", "Runs of a handler or verb.", h...),
		hOutcome:       d("handler_outcomes_total", "Ends of a handler's runs by outcome.", append(h, "outcome")...),
		hRejected:      d("handler_rejected_total", "Messages for a handler refused before running (foreign tenant, overloaded, failed verb checks).", h...),
		hTime:          d("handler_run_seconds", "How long a handler's runs took on their core.", h...),
		hPlaced:        d("handler_placements_total", "Placement decisions for a handler.", append(h, "placement")...),
		hSteer:         d("handler_steer_decisions_total", "The steering policy's choices for a handler (placement steer), by core class.", append(h, "class")...),
		hSteerProbes:   d("handler_steer_probes_total", "The steering policy's probes of the class it had not chosen, for a handler.", h...),
		hSteerSwitches: d("handler_steer_switches_total", "Times the steering policy changed its choice for a handler.", h...),
		dropped:        d("dropped_total", "Datagrams the server dropped, by reason.", "reason"),
		rejected:       d("rejected_total", "Messages the NIC refused, by reason.", "reason"),
		server:         d("server_packets_total", "Server traffic by kind (rx, tx, requests, replies, retransmitted, cache hits, ...).", "kind"),
		serverState:    d("server_state", "The server's state now: peer states, floors, uploads in progress, reply-cache bytes.", "kind"),
		dma:            d("dma_bytes_total", "Modelled PCIe DMA bytes.", "side"),
		cycles:         d("nic_cycles_total", "Modelled NIC core cycles.", "side"),
		members:        d("cluster_members", "Members of the cluster alive or suspected, as this node sees them."),
		xdp:            d("xdp_packets_total", "The XDP tier's counters (spec/xdp.md, Counters): runs, passes and drops by reason, cache hits, kernel-verifier refusals, ...", "kind"),

		jitRuns:      d("jit_runs_total", "Host-core runs through the JIT tier.", core...),
		jitFallbacks: d("jit_fallbacks_total", "Host-core runs the tier setting sent to the JIT that ran in the interpreter (no cgo, a program whose written regions could only be copied per run, a compile error).", core...),
		jitCompiles:  d("jit_compiles_total", "JIT compilations, by result.", "result"),
		jitTime:      d("jit_compile_seconds_total", "Time spent compiling handlers to machine code."),
	}
}

func (c *collector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{c.queued, c.queueCap, c.busy, c.runs, c.insns, c.placed, c.hRuns, c.hOutcome,
		c.hRejected, c.hTime, c.hPlaced, c.hSteer, c.hSteerProbes, c.hSteerSwitches, c.dropped, c.rejected, c.server, c.serverState, c.dma, c.cycles, c.members,
		c.jitRuns, c.jitFallbacks, c.jitCompiles, c.jitTime, c.xdp} {
		ch <- d
	}
}

func (c *collector) Collect(ch chan<- prometheus.Metric) {
	st := c.n.nic.Stats()
	counter := func(d *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, v, labels...)
	}
	gauge := func(d *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, labels...)
	}
	for _, k := range st.Cores {
		id, kind := strconv.Itoa(k.ID), "nic"
		if k.Host {
			kind = "host"
		}
		gauge(c.queued, float64(k.Queued), id, kind)
		gauge(c.queueCap, float64(k.QueueDepth), id, kind)
		counter(c.busy, float64(k.BusyNanos)/1e9, id, kind)
		counter(c.runs, float64(k.Runs), id, kind)
		counter(c.insns, float64(k.Insns), id, kind)
		counter(c.jitRuns, float64(k.JITRuns), id, kind)
		counter(c.jitFallbacks, float64(k.JITFallbacks), id, kind)
	}
	counter(c.jitCompiles, float64(st.JIT.Compiles), "ok")
	counter(c.jitCompiles, float64(st.JIT.Failures), "failed")
	counter(c.jitTime, st.JIT.CompileTime.Seconds())
	for i, v := range st.Placed() {
		counter(c.placed, float64(v), metricLabel(nicrt.Placement(i).String()))
	}
	names := nicrt.HandlerNames(st.Handlers)
	for i, h := range st.Handlers {
		labels := []string{names[i], "", ""}
		if !h.Builtin {
			labels[1], labels[2] = strings.TrimSuffix(names[i], "."+h.Name), strconv.FormatUint(h.Tenant, 10)
		}
		counter(c.hRuns, float64(h.Runs), labels...)
		for _, o := range []struct {
			name string
			v    uint64
		}{{"reply", h.Replies}, {"error", h.Errors}, {"forwarded", h.Forwarded}, {"fault", h.Faults}} {
			counter(c.hOutcome, float64(o.v), append(labels, o.name)...)
		}
		counter(c.hRejected, float64(h.Rejected), labels...)
		for i, v := range h.Placed {
			if v != 0 {
				counter(c.hPlaced, float64(v), append(labels, metricLabel(nicrt.Placement(i).String()))...)
			}
		}
		if sc := h.Steer; sc != (nicrt.SteerCounts{}) {
			counter(c.hSteer, float64(sc.NIC), append(labels, "nic")...)
			counter(c.hSteer, float64(sc.Host), append(labels, "host")...)
			counter(c.hSteerProbes, float64(sc.Probes), labels...)
			counter(c.hSteerSwitches, float64(sc.Switches), labels...)
		}
		buckets := map[float64]uint64{}
		cum := uint64(0)
		for i, v := range h.RunTimes.Counts {
			cum += v
			if b := nicrt.LatencyBound(i); b > 0 {
				buckets[b.Seconds()] = cum
			}
		}
		ch <- prometheus.MustNewConstHistogram(c.hTime, cum, h.RunTimes.Sum.Seconds(), buckets, labels...)
	}
	for _, k := range c.n.srv.Stats().Counters() {
		switch {
		case strings.HasPrefix(k.Name, "server.drop."):
			counter(c.dropped, float64(k.Value), strings.TrimPrefix(k.Name, "server.drop."))
		case serverGauges[k.Name]:
			gauge(c.serverState, float64(k.Value), strings.TrimPrefix(k.Name, "server."))
		default:
			counter(c.server, float64(k.Value), strings.TrimPrefix(k.Name, "server."))
		}
	}
	for s, v := range st.Rejected {
		if nicrt.Status(s).Rejected() {
			counter(c.rejected, float64(v), metricLabel(nicrt.Status(s).String()))
		}
	}
	counter(c.dma, float64(st.NIC.DMABytes), "nic")
	counter(c.dma, float64(st.Host.DMABytes), "host")
	counter(c.cycles, float64(st.NIC.Cycles), "nic")
	counter(c.cycles, float64(st.Host.Cycles), "host")
	gauge(c.members, float64(len(c.n.Members())))
	for _, k := range c.n.XDPCounters() {
		counter(c.xdp, float64(k.Value), strings.TrimPrefix(k.Name, "xdp."))
	}
}

// serverGauges are the server's counters that are levels, not totals.
var serverGauges = map[string]bool{"server.peers": true, "server.floors": true, "server.uploads": true, "server.cache_bytes": true}

func metricLabel(s string) string {
	return strings.NewReplacer(" ", "_", "-", "_").Replace(s)
}

// MetricsHandler serves the node's metrics in the Prometheus text format:
// queue depths, per-core busy time, per-handler counts and run-time
// histograms, placement decisions, drops by reason, plus the Go runtime's.
func (n *Node) MetricsHandler() http.Handler {
	reg := prometheus.NewRegistry()
	reg.MustRegister(newCollector(n), newCallerCollector(n), collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return promhttp.HandlerFor(reg, promhttp.HandlerOpts{ErrorHandling: promhttp.ContinueOnError})
}
