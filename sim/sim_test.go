package sim_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/naam-project/naam/sim"
)

var update = flag.Bool("update", false, "rewrite testdata/*.json")

func ms(n float64) sim.Duration { return sim.Duration(n * float64(time.Millisecond)) }

// eventful is a scenario with every kind of trouble: loss, duplication,
// a partition, a failure and a restart.
func eventful(kind string, seed uint64) sim.Scenario {
	return sim.Scenario{
		Seed: seed, Nodes: 12, Messages: 3000, Outstanding: 2,
		Workload: sim.Workload{Kind: kind},
		Network:  sim.Network{Loss: 0.02, Duplicate: 0.02, Latency: sim.Latency{Dist: "lognormal", Base: sim.Duration(3 * time.Microsecond), Jitter: sim.Duration(2 * time.Microsecond)}},
		Retransmit: sim.Retransmit{MinTimeout: sim.Duration(200 * time.Microsecond),
			Timeout: sim.Duration(200 * time.Microsecond), MaxTimeout: ms(2)},
		Events: []sim.Event{
			{At: ms(1), Kind: "partition", Groups: []sim.NodeSet{{{0, 2}}}},
			{At: ms(2), Kind: "heal"},
			{At: ms(2.5), Kind: "fail", Nodes: sim.NodeSet{{5, 5}}},
			{At: ms(4), Kind: "restart", Nodes: sim.NodeSet{{5, 5}}},
		},
	}
}

func marshal(t *testing.T, r *sim.Result) []byte {
	t.Helper()
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestDeterminism: one seed and scenario give byte-identical JSON; another
// seed gives other output.
func TestDeterminism(t *testing.T) {
	for _, kind := range []string{sim.KindKV, sim.KindChase, sim.KindLedger, sim.KindShift} {
		a := marshal(t, run(t, eventful(kind, 7)))
		b := marshal(t, run(t, eventful(kind, 7)))
		if !bytes.Equal(a, b) {
			t.Errorf("%s: two runs with seed 7 differ:\n%s\n%s", kind, a, b)
		}
		c := marshal(t, run(t, eventful(kind, 8)))
		if bytes.Equal(a, c) {
			t.Errorf("%s: seeds 7 and 8 gave the same output", kind)
		}
	}
}

// TestGolden: the output of a small scenario is the file's, byte for
// byte, on any machine (go test ./sim -run Golden -update rewrites it).
func TestGolden(t *testing.T) {
	for _, name := range []string{sim.KindKV, sim.KindChase, sim.KindLedger, "kv-client"} {
		kind, caller, _ := strings.Cut(name, "-")
		sc := eventful(kind, 3)
		sc.Messages, sc.Caller = 500, caller
		have := append(marshal(t, run(t, sc)), '\n')
		path := filepath.Join("testdata", name+".json")
		if *update {
			if err := os.WriteFile(path, have, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		want, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(have, want) {
			t.Errorf("%s: the output differs from %s:\n%s", name, path, have)
		}
	}
}

// TestExactlyOnce: over a link that loses and duplicates, every operation
// is answered correctly, the ledger's money is conserved (no transfer ran
// twice), and the counters show the trouble.
func TestExactlyOnce(t *testing.T) {
	for _, kind := range []string{sim.KindKV, sim.KindChase, sim.KindLedger} {
		sc := eventful(kind, 11)
		sc.Events = nil
		sc.Network.Loss, sc.Network.Duplicate = 0.05, 0.05
		r := run(t, sc)
		n := r.Network
		if r.Answered != uint64(sc.Messages) || r.Correct != r.Answered || r.Failed != 0 {
			t.Errorf("%s: %d answered, %d correct, %d failed of %d", kind, r.Answered, r.Correct, r.Failed, sc.Messages)
		}
		if n.DroppedLoss == 0 || n.Duplicated == 0 || n.Retransmissions == 0 || n.DuplicatesSuppressed == 0 || n.FromCache == 0 {
			t.Errorf("%s: the network's trouble does not show: %+v", kind, n)
		}
		if kind == sim.KindLedger {
			l := r.Ledger
			if !l.Conserved || r.Sends.Lost == 0 || l.LostInFlight == 0 {
				t.Errorf("ledger: %+v, sends %+v", l, r.Sends)
			}
			if r.Runs != r.Answered+r.Sends.Delivered {
				t.Errorf("ledger: %d runs for %d transfers and %d credits delivered: something ran twice", r.Runs, r.Answered, r.Sends.Delivered)
			}
		}
	}
}

// TestChaseHops: a walk of k elements is one round trip, k runs and k − 1
// forwards; its reply comes back along the chain (relayed) or straight.
func TestChaseHops(t *testing.T) {
	for _, tc := range []struct {
		hops      int
		reply     string
		datagrams float64
	}{{1, "relayed", 2}, {3, "relayed", 6}, {5, "relayed", 10}, {5, "direct", 6}} {
		r := run(t, sim.Scenario{Nodes: 5, Messages: 400, Workload: sim.Workload{Kind: sim.KindChase, Hops: tc.hops}, Network: sim.Network{Reply: tc.reply}})
		if r.Correct != 400 || r.RoundTripsPerOp != 1 || float64(r.ForwardsPerOp) != float64(tc.hops-1) ||
			float64(r.DatagramsPerOp) != tc.datagrams || r.Runs != uint64(400*tc.hops) {
			t.Errorf("%d hops, %s: correct %d, %v RT/op, %v forwards/op, %v datagrams/op, %d runs", tc.hops, tc.reply,
				r.Correct, r.RoundTripsPerOp, r.ForwardsPerOp, r.DatagramsPerOp, r.Runs)
		}
	}
}

// TestFailRestart: requests to a failed node time out and retransmit;
// after its restart (reloaded) they are answered.
func TestFailRestart(t *testing.T) {
	sc := eventful(sim.KindKV, 5)
	sc.Network = sim.Network{}
	sc.Events = []sim.Event{{At: ms(0.5), Kind: "fail", Nodes: sim.NodeSet{{3, 4}}}, {At: ms(3), Kind: "restart", Nodes: sim.NodeSet{{3, 4}}}}
	r := run(t, sc)
	if r.Events.Failures != 2 || r.Events.Restarts != 2 || r.Network.DroppedDown == 0 || r.Network.Retransmissions == 0 {
		t.Errorf("events %+v, network %+v", r.Events, r.Network)
	}
	if r.Correct != uint64(sc.Messages) {
		t.Errorf("%d of %d correct, %d failed", r.Correct, sc.Messages, r.Failed)
	}
	if r.VirtualNanos < int64(ms(3)) {
		t.Errorf("the run ended at %d ns, before the restart", r.VirtualNanos)
	}
	// Without a restart the callers give up.
	sc.Events = sc.Events[:1]
	r = run(t, sc)
	if r.Failed == 0 || r.Network.Timeouts != r.Failed {
		t.Errorf("no restart: %d failed, %d timeouts", r.Failed, r.Network.Timeouts)
	}
}

// TestPartition: what crosses a partition is dropped until it heals.
func TestPartition(t *testing.T) {
	sc := eventful(sim.KindKV, 9)
	sc.Network = sim.Network{}
	sc.Events = []sim.Event{{At: ms(0.2), Kind: "partition", Groups: []sim.NodeSet{{{0, 5}}, {{6, 11}}}}, {At: ms(1.5), Kind: "heal"}}
	r := run(t, sc)
	if r.Network.DroppedPartition == 0 || r.Correct != uint64(sc.Messages) {
		t.Errorf("dropped %d at the partition, %d of %d correct", r.Network.DroppedPartition, r.Correct, sc.Messages)
	}
}

// TestShift: under steering, the congested nodes' handler moves to the
// NIC cores within a few messages and back after the release.
func TestShift(t *testing.T) {
	sc := sim.Scenario{Nodes: 8, Messages: 20000, Outstanding: 2, Workload: sim.Workload{Kind: sim.KindShift},
		Events: []sim.Event{{At: ms(5), Kind: "host_load", Nodes: sim.NodeSet{{0, 3}}, HostLoad: 0.95}, {At: ms(15), Kind: "host_load", Nodes: sim.NodeSet{{0, 3}}}}}
	r := run(t, sc)
	s := r.Shift
	if s == nil || s.Nodes != 4 || s.HostShareBefore < 0.8 || s.HostShareDuring > 0.1 || s.HostShareAfter < 0.5 || s.ShiftNanos > int64(ms(0.5)) || s.NotReturned != 0 {
		t.Fatalf("shift: %+v", s)
	}
	if r.Steer.Switches == 0 || r.Steer.Probes == 0 {
		t.Errorf("steering: %+v", r.Steer)
	}
}

// TestScenarioErrors: a bad field is refused naming its JSON path.
func TestScenarioErrors(t *testing.T) {
	for _, tc := range []struct {
		have string
		want string
	}{
		{`{"nodes": -1}`, "nodes: -1 is not in 1"},
		{`{"nodes": "x"}`, "scenario: nodes: want int"},
		{`{"workload": {"kind": "graph"}}`, `workload.kind: "graph" is not kv`},
		{`{"workload": {"mix": "D"}}`, `workload.mix: "D"`},
		{`{"workload": {"keys": "hot"}}`, `workload.keys: "hot"`},
		{`{"workload": {"value_size": 12}}`, "workload.value_size: 12"},
		{`{"workload": {"kind": "chase", "hops": 9}, "nodes": 4}`, "workload.hops: 9 hops need as many nodes"},
		{`{"nic": {"placement": "gpu"}}`, `nic.placement: "gpu"`},
		{`{"nic": {"host_load": 2}}`, "nic.host_load: 2"},
		{`{"network": {"loss": 1.5}}`, "network.loss: 1.5 is not a probability"},
		{`{"network": {"latency": {"dist": "pareto"}}}`, `network.latency.dist: "pareto"`},
		{`{"network": {"links": [{"from": ["3-99"]}]}, "nodes": 10}`, "network.links[0].from[0]: 3-99"},
		{`{"network": {"links": [{"to": ["a"]}]}}`, `"a" is not a node number`},
		{`{"network": {"reply": "echo"}}`, `network.reply: "echo"`},
		{`{"retransmit": {"max_tries": 0, "min_timeout": "1ms", "max_timeout": "1us"}}`, "retransmit.min_timeout"},
		{`{"events": [{"at": "1ms", "kind": "explode"}]}`, `events[0].kind: "explode"`},
		{`{"events": [{"at": "1ms", "kind": "fail"}]}`, "events[0].nodes: a fail event names its nodes"},
		{`{"events": [{"at": "soon", "kind": "heal"}]}`, `want a duration such as "10ms"`},
		{`{"events": [{"kind": "partition", "groups": [[40]]}], "nodes": 8}`, "events[0].groups[0][0]: 40-40"},
		{`{"bogus": 1}`, `unknown field "bogus"`},
		{`{"clients": 100000, "outstanding": 100}`, "outstanding: 100000 clients × 100 is more than 4194304"},
		{`{} {}`, "more than one JSON value"},
	} {
		sc, err := sim.ReadScenario([]byte(tc.have))
		if err == nil {
			err = sc.Validate()
		}
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want an error with %q", tc.have, err, tc.want)
		}
	}
}

// TestScenarioFile: a scenario file with every section runs, and reads
// back as it was written.
func TestScenarioFile(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("testdata", "scenario.json"))
	if err != nil {
		t.Fatal(err)
	}
	sc, err := sim.ReadScenario(b)
	if err != nil {
		t.Fatal(err)
	}
	r := run(t, sc)
	if r.Events.Applied != len(sc.Events) || r.Correct == 0 || r.Network.DroppedLoss == 0 {
		t.Errorf("events %+v, %d correct, network %+v", r.Events, r.Correct, r.Network)
	}
	again, err := json.Marshal(sc)
	if err != nil {
		t.Fatal(err)
	}
	sc2, err := sim.ReadScenario(again)
	if err != nil {
		t.Fatalf("%s: %v", again, err)
	}
	if a, b := marshal(t, run(t, sc2)), marshal(t, r); !bytes.Equal(a, b) {
		t.Error("the scenario written back runs differently")
	}
}

// TestCallerClient: at the caller, a GET is two round trips (the probe
// window it declares, then the value's slot) answered by the node's
// verbs, and correct; a PUT, which is not client-eligible, goes to the
// node.
func TestCallerClient(t *testing.T) {
	r := run(t, sim.Scenario{Nodes: 4, Messages: 1000, Caller: "client", Workload: sim.Workload{Kind: sim.KindKV, Mix: "C"}})
	if r.Correct != 1000 || r.RoundTripsPerOp != 2 || r.Runs != 0 || r.Locations[0].Count != 1000 || r.Network.Verbs != 2000 || r.DatagramsPerOp != 4 {
		t.Errorf("mix C at the client: %d correct, %v RT/op, %d node runs, locations %+v, %d verbs, %v datagrams/op",
			r.Correct, r.RoundTripsPerOp, r.Runs, r.Locations, r.Network.Verbs, r.DatagramsPerOp)
	}
	r = run(t, sim.Scenario{Nodes: 4, Messages: 1000, Caller: "client", Workload: sim.Workload{Kind: sim.KindKV, Mix: "A"}, Network: sim.Network{Loss: 0.05},
		Retransmit: sim.Retransmit{Timeout: sim.Duration(time.Millisecond), MinTimeout: sim.Duration(200 * time.Microsecond), MaxTimeout: ms(2)}})
	client, node := r.Locations[0].Count, r.Runs
	if r.Correct != 1000 || client+node != 1000 || client == 0 || node == 0 || float64(r.RoundTripsPerOp) != float64(2*client+node)/1000 || r.Network.Retransmissions == 0 {
		t.Errorf("mix A at the client over a lossy link: %d correct, %d at the client, %d at the node, %v RT/op, %d retransmissions",
			r.Correct, client, node, r.RoundTripsPerOp, r.Network.Retransmissions)
	}
}

// TestLatencyModel: with a constant latency, one caller and one node, an
// operation takes two link latencies, the two datagrams' wire time and
// the run's modelled service, and nothing else.
func TestLatencyModel(t *testing.T) {
	base := 10 * time.Microsecond
	r := run(t, sim.Scenario{Nodes: 1, Clients: 1, Messages: 100, Workload: sim.Workload{Kind: sim.KindShift}, NIC: sim.NIC{Placement: "host"},
		Network: sim.Network{Latency: sim.Latency{Dist: "constant", Base: sim.Duration(base)}, BandwidthGbps: 1}})
	// 64-byte datagrams each way (56 of header and tag, 8 of payload) at 1 Gb/s.
	want := 2*float64(base) + 2*64*8 + float64(r.ModelNanosPerRun)
	if have := float64(r.Latency.Mean) * 1e3; have < want*0.999 || have > want*1.001 {
		t.Errorf("mean latency %.0f ns, want %.0f (service %.0f ns)", have, want, float64(r.ModelNanosPerRun))
	}
	if r.Latency.Max-r.Latency.P50 > r.Latency.P50/100 {
		t.Errorf("a constant network and an idle node vary: %+v", r.Latency)
	}
}

// TestLinks: a rule slows, or loses on, only the links it names.
func TestLinks(t *testing.T) {
	loss := 0.2
	sc := sim.Scenario{Nodes: 8, Messages: 4000, Workload: sim.Workload{Kind: sim.KindShift},
		Network: sim.Network{Links: []sim.Link{
			{From: sim.NodeSet{{0, 0}}, Latency: &sim.Latency{Base: ms(1)}},
			{From: sim.NodeSet{{1, 1}}, To: sim.NodeSet{{1, 1}}, Loss: &loss},
		}}}
	r := run(t, sc)
	// Client 0 (beside node 0) waits a millisecond for each request to
	// leave; client 1 loses a fifth of its datagrams to and from node 1; the rest see
	// microseconds.
	if r.Latency.P50 > 20 || r.Latency.P99 < 1000 || r.Network.DroppedLoss == 0 || r.Network.Retransmissions == 0 {
		t.Errorf("latency %+v, lost %d, retransmissions %d", r.Latency, r.Network.DroppedLoss, r.Network.Retransmissions)
	}
	if r.Correct != 4000 {
		t.Errorf("%d correct, %d failed, errors %+v", r.Correct, r.Failed, r.Errors)
	}
}

// TestTimelineBins: a run of many bins keeps at most 2,048 of them,
// wider, and every run in one.
func TestTimelineBins(t *testing.T) {
	r := run(t, sim.Scenario{Nodes: 2, Clients: 1, Messages: 3000, Bin: sim.Duration(time.Microsecond), Workload: sim.Workload{Kind: sim.KindShift}})
	var runs uint64
	for i, b := range r.Timeline {
		runs += b.NIC + b.Host
		if b.StartNanos != int64(i)*r.BinNanos {
			t.Fatalf("bin %d starts at %d, bins of %d ns", i, b.StartNanos, r.BinNanos)
		}
	}
	if len(r.Timeline) > 2048 || r.BinNanos <= 1000 || runs != r.Runs {
		t.Errorf("%d bins of %d ns, %d runs in them of %d", len(r.Timeline), r.BinNanos, runs, r.Runs)
	}
}

// TestDuration: issuing stops at the duration; what was in flight ends.
func TestDuration(t *testing.T) {
	r := run(t, sim.Scenario{Nodes: 4, Messages: 1_000_000, Duration: ms(0.5), Workload: sim.Workload{Kind: sim.KindKV}})
	if r.Messages >= 1_000_000 || r.Answered != uint64(r.Messages) || r.VirtualNanos < int64(ms(0.5)) || r.VirtualNanos > int64(ms(0.6)) {
		t.Errorf("%d issued, %d answered, ended at %d ns", r.Messages, r.Answered, r.VirtualNanos)
	}
}

// TestCallerClientFailure: runs at the client against a failed node wait
// for it (their verbs are retransmitted) and, after its restart, read
// its reloaded table.
func TestCallerClientFailure(t *testing.T) {
	r := run(t, sim.Scenario{Nodes: 4, Messages: 2000, Caller: "client", Workload: sim.Workload{Kind: sim.KindKV, Mix: "C"},
		Events: []sim.Event{{At: 0, Kind: "fail", Nodes: sim.NodeSet{{2, 2}}}, {At: ms(3), Kind: "restart", Nodes: sim.NodeSet{{2, 2}}}}})
	if r.Correct != 2000 || r.Network.DroppedDown == 0 || r.Network.Retransmissions == 0 || r.RoundTripsPerOp != 2 {
		t.Errorf("%d correct, %d dropped at the failed node, %d retransmissions, %v RT/op", r.Correct, r.Network.DroppedDown, r.Network.Retransmissions, r.RoundTripsPerOp)
	}
}
