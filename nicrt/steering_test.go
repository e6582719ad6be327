package nicrt

import (
	"encoding/binary"
	"slices"
	"sync"
	"testing"

	"github.com/naam-project/naam/compiler"
	"github.com/naam-project/naam/internal/testing/testprog"
	"github.com/naam-project/naam/lang"
	"github.com/naam-project/naam/nicrt/wire"
	"github.com/naam-project/naam/steer"
)

// TestSteerCosts: the steering choice over synthetic signals, message
// after message, with the chooser's hysteresis (margin 0.2, no probes).
func TestSteerCosts(t *testing.T) {
	open := func(backlog, service float64) classEstimate {
		return classEstimate{Open: true, Backlog: backlog, Service: service}
	}
	closed := classEstimate{}
	type step struct {
		nic, host classEstimate
		load      float64
		want      steer.Location
	}
	for _, tc := range []struct {
		name  string
		steps []step
	}{
		{"unloaded host is faster", []step{{open(0, 3000), open(0, 1700), 0, steer.Host}}},
		{"host load stretches the host", []step{
			{open(0, 3000), open(0, 1700), 0, steer.Host},
			{open(0, 3000), open(0, 1700), 0.3, steer.Host}, // 2,429 > 2,400 is not cheaper by the margin
			{open(0, 3000), open(0, 1700), 0.95, steer.NIC}, // 34 µs
			{open(0, 3000), open(0, 1700), 0.5, steer.NIC},  // 3,400
			{open(0, 3000), open(0, 1700), 0.3, steer.NIC},  // 2,429 within the margin of 3,000: stays
			{open(0, 3000), open(0, 1700), 0, steer.Host},   // 1,700 < 2,400
		}},
		{"a host backlog sends work to the NIC", []step{
			{open(0, 3000), open(0, 1700), 0, steer.Host},
			{open(0, 3000), open(2000, 1700), 0, steer.Host}, // 3,700 within the margin above 3,000
			{open(0, 3000), open(4000, 1700), 0, steer.NIC},
			{open(0, 3000), open(700, 1700), 0, steer.NIC}, // 2,400 is not < 2,400
			{open(0, 3000), open(600, 1700), 0, steer.Host},
		}},
		{"a NIC backlog keeps work on the host", []step{{open(50_000, 3000), open(5000, 1700), 0.5, steer.Host}}},
		{"host load 1 takes nothing", []step{{open(1e6, 3000), open(0, 1700), 1, steer.NIC}}},
		{"a closed host takes nothing", []step{{open(1e6, 3000), closed, 0, steer.NIC}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ch := steer.NewChooser(steer.Config{ProbeEvery: -1})
			for i, s := range tc.steps {
				d, ok := ch.Choose(steerCosts(s.nic, s.host, s.load))
				if !ok || d.Location != s.want {
					t.Errorf("step %d: %v (ok %v), want %v; costs %v", i, d.Location, ok, s.want, steerCosts(s.nic, s.host, s.load))
				}
			}
		})
	}
}

// TestSteerSmooth: a handler's EWMA of each class's expected completion
// keeps one message's busy core from flipping the choice, follows a
// lasting change within a few messages, and forgets a class that became
// unavailable.
func TestSteerSmooth(t *testing.T) {
	inf := steer.Unavailable
	var s handlerSteer
	ch := steer.NewChooser(steer.Config{ProbeEvery: -1})
	for i, tc := range []struct {
		nic, host float64
		want      steer.Location
	}{
		{8000, 3400, steer.Host},
		{8000, 3400, steer.Host},
		{8000, 30000, steer.Host}, // one busy host core: smoothed 6,725, within the margin
		{8000, 3400, steer.Host},
		{8000, 68000, steer.NIC}, // a lasting change: 14,000 at once
		{8000, 68000, steer.NIC},
		{8000, inf, steer.NIC},
		{8000, 3400, steer.Host}, // the host back: its EWMA starts afresh
	} {
		d, _ := ch.Choose(s.smooth(steer.Costs{inf, tc.nic, tc.host}))
		if d.Location != tc.want {
			t.Errorf("message %d: %v, want %v", i, d.Location, tc.want)
		}
	}
}

// steerNIC is a paced NIC under PolicySteer with the add handler
// installed: its counter region and the handler's id.
func steerNIC(t *testing.T, cfg Config) (*NIC, *Region, uint32) {
	t.Helper()
	cfg.Paced, cfg.Placement, cfg.Steering = true, PolicySteer, SteerRequest
	n := newNIC(t, cfg)
	obj, err := compiler.Compile(lang.NewFileSet(), "steer.naam", []byte(testprog.SteerAddSource))
	if err != nil {
		t.Fatal(err)
	}
	r := register(t, n, 1, "counter", 8, RegionOptions{Writable: true})
	return n, r, id(t, install(t, n, 1, obj), "add")
}

// TestSteerShift: under PolicySteer the add handler runs on host cores at
// host load 0, moves to NIC cores when the host load is 0.95 and comes
// back after; every message runs once (the old values are 0 … N-1, each
// once), every decision is counted.
func TestSteerShift(t *testing.T) {
	n, counter, add := steerNIC(t, Config{})
	var mu sync.Mutex
	var olds []uint64
	var wg sync.WaitGroup
	sink := SinkFunc(func(r Reply) {
		mu.Lock()
		if r.Status == StatusOK {
			olds = append(olds, binary.LittleEndian.Uint64(r.Data))
		}
		mu.Unlock()
		wg.Done()
	})
	const perPhase = 2000
	phase := func(load float64) (host, total uint64) {
		if err := n.SetHostLoad(load); err != nil {
			t.Fatal(err)
		}
		before, _ := n.HandlerStats(add)
		for i := range perPhase {
			wg.Add(1)
			n.Submit(&Message{Tenant: 1, Handler: add, RequestID: uint64(i), Payload: make([]byte, 8)}, sink)
			wg.Wait() // one at a time: no modelled queueing on either class
		}
		wg.Wait()
		after, _ := n.HandlerStats(add)
		return after.Steer.Host - before.Steer.Host, after.Steer.Host + after.Steer.NIC - before.Steer.Host - before.Steer.NIC
	}
	for i, tc := range []struct {
		load          float64
		minHost, maxH float64 // host share
	}{{0, 0.9, 1}, {0.95, 0, 0.1}, {0, 0.9, 1}} {
		host, total := phase(tc.load)
		if share := float64(host) / float64(total); total != perPhase || share < tc.minHost || share > tc.maxH {
			t.Errorf("phase %d (host load %v): %d of %d decisions on the host (%.2f), want %.2f … %.2f", i, tc.load, host, total, share, tc.minHost, tc.maxH)
		}
	}
	const N = 3 * perPhase
	slices.Sort(olds)
	for i, v := range olds {
		if v != uint64(i) {
			t.Fatalf("old value %d at %d: a message lost or run twice", v, i)
		}
	}
	if len(olds) != N || binary.LittleEndian.Uint64(counter.Bytes()) != N {
		t.Fatalf("%d replies, counter %d; want %d each", len(olds), binary.LittleEndian.Uint64(counter.Bytes()), N)
	}
	st := n.Stats()
	hs, _ := n.HandlerStats(add)
	if hs.MaxInsns > DefaultConfig().NICBudget {
		t.Fatalf("bound %d: the handler must fit the NIC", hs.MaxInsns)
	}
	if hs.Steer.NIC+hs.Steer.Host != N || hs.Steer.Switches < 2 || st.Steer != hs.Steer {
		t.Errorf("steer counts %+v (node %+v), want %d decisions and at least 2 switches", hs.Steer, st.Steer, N)
	}
	if got := hs.Placed[PlaceNIC] + hs.Placed[PlaceHostSteer]; got != N {
		t.Errorf("placed %v, want %d nic or host-steer", hs.Placed, N)
	}
	want := map[string]uint64{"handler.steer.add.steer.host": hs.Steer.Host, "handler.steer.add.steer.nic": hs.Steer.NIC,
		"steer.switches": hs.Steer.Switches, "handler.steer.add.placed.host_steer": hs.Placed[PlaceHostSteer]}
	for _, c := range st.Counters() {
		if v, ok := want[c.Name]; ok {
			if c.Value != v {
				t.Errorf("counter %s = %d, want %d", c.Name, c.Value, v)
			}
			delete(want, c.Name)
		}
	}
	if len(want) != 0 {
		t.Errorf("counters missing: %v", want)
	}
}

// TestSteerOnlyEligible: under PolicySteer verbs stay on NIC cores and
// are not steered.
func TestSteerOnlyEligible(t *testing.T) {
	n, counter, _ := steerNIC(t, Config{})
	req := wire.AppendFetchAdd(nil, counter.Ref(), 0, 1)
	if r := n.Call(&Message{Tenant: 1, Handler: HandlerFetchAdd, Payload: req}); r.Status != StatusOK || r.Placement != PlaceNIC {
		t.Errorf("FETCH-ADD: %v on %v", r.Status, r.Placement)
	}
	if s := n.Stats().Steer; s != (SteerCounts{}) {
		t.Errorf("steered %+v", s)
	}
	if _, err := ParsePlacementPolicy("steer"); err != nil {
		t.Error(err)
	}
}
