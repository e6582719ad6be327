package nicrt

import (
	"slices"
	"sync"
	"testing"

	"github.com/naam-project/naam/internal/testing/syncbuf"

	"github.com/naam-project/naam/internal/testing/testprog"
)

func TestPlacementByBudgetAndHelper(t *testing.T) {
	var trace syncbuf.Buffer
	n := newNIC(t, Config{NICBudget: 100, Trace: &trace})
	p := install(t, n, 1, testprog.Object(t, nil, testprog.Src{Name: "null", Asm: testprog.NullAsm}, testprog.Src{Name: "loop", Asm: testprog.LoopAsm}, testprog.Src{Name: "trace", Asm: testprog.TraceAsm}))
	want := map[string]Placement{"null": PlaceNIC, "loop": PlaceHostBudget, "trace": PlaceHostHelper}
	for _, h := range p.Handlers() {
		if h.Placement != want[h.Name] {
			t.Errorf("%s placed %s, want %s (max-insns %d)", h.Name, h.Placement, want[h.Name], h.MaxInsns)
		}
	}
	for name, place := range want {
		for range 3 {
			rep := n.Call(&Message{Tenant: 1, Handler: id(t, p, name)})
			if rep.Status != StatusOK || rep.Placement != place || (rep.Core >= 8) != place.OnHost() {
				t.Errorf("%s: %+v", name, rep)
			}
		}
		hs, _ := n.HandlerStats(id(t, p, name))
		if hs.Placed[place] != 3 || hs.Placed.Total() != 3 || hs.Runs != 3 {
			t.Errorf("%s: placed %v runs %d", name, hs.Placed, hs.Runs)
		}
	}
	if trace.String() != "traced!\ntraced!\ntraced!\n" {
		t.Errorf("trace log %q", trace.String())
	}
	s := n.Stats()
	if s.NIC.Placed[PlaceNIC] != 3 || s.Host.Placed[PlaceHostBudget] != 3 || s.Host.Placed[PlaceHostHelper] != 3 || s.Host.Traces != 3 {
		t.Errorf("core placements: nic %v host %v", s.NIC.Placed, s.Host.Placed)
	}
	if len(s.Cores) != 10 || !s.Cores[8].Host || s.Cores[7].Host {
		t.Errorf("cores: %+v", s.Cores)
	}
	// Host cycles are modelled at the host's rate.
	if s.Host.Cycles == 0 || s.NIC.Cycles == 0 || s.Host.DMAReads == 0 {
		t.Errorf("model: nic cycles %d host cycles %d host handoffs %d", s.NIC.Cycles, s.Host.Cycles, s.Host.DMAReads)
	}
}

func TestNoHostCores(t *testing.T) {
	n := newNIC(t, Config{HostCores: -1, NICBudget: 100})
	if _, err := n.Install(1, testprog.Object(t, nil, testprog.Src{Name: "trace", Asm: testprog.TraceAsm})); err == nil {
		t.Error("a host-only handler installed on a node without host cores")
	}
	if _, err := n.Install(1, testprog.Object(t, nil, testprog.Src{Name: "loop", Asm: testprog.LoopAsm})); err == nil {
		t.Error("an over-budget handler installed on a node without host cores")
	}
	install(t, n, 1, testprog.Object(t, nil, testprog.Src{Name: "null", Asm: testprog.NullAsm}))
}

// TestSpillUnderLoad holds both cores inside a handler's send, so that
// the queues fill deterministically: below the threshold requests queue on
// the NIC core; past it they spill to the host core; with the host queue
// full they queue on the NIC core again until it is full; then they are
// dropped as overloaded.
func TestSpillUnderLoad(t *testing.T) {
	out := &recorder{hold: make(chan struct{}), entered: make(chan struct{}, 16)}
	n := newNIC(t, Config{NICCores: 1, HostCores: 1, RxQueueDepth: 4, SpillThreshold: 2, Outbox: out})
	p := install(t, n, 1, testprog.Object(t, nil, testprog.Src{Name: "send", Asm: testprog.SendAsm}, testprog.Src{Name: "null", Asm: testprog.NullAsm}))
	send, null := id(t, p, "send"), id(t, p, "null")
	var wg sync.WaitGroup
	var mu sync.Mutex
	var replies []Reply
	done := func(r Reply) {
		mu.Lock()
		replies = append(replies, r)
		mu.Unlock()
		wg.Done()
	}
	submit := func(h uint32) Placement {
		wg.Add(1)
		before := n.Stats().Placed()
		n.Submit(&Message{Tenant: 1, Handler: h}, SinkFunc(done))
		after := n.Stats().Placed()
		for pl := range Placement(numPlacements) {
			if after[pl] > before[pl] {
				return pl
			}
		}
		return PlaceNone
	}
	var got []Placement
	got = append(got, submit(send))
	<-out.entered // the NIC core is held, its queue empty
	got = append(got, submit(send), submit(send))
	got = append(got, submit(send)) // NIC queue at the threshold: spills
	<-out.entered                   // the host core is held too
	for range 10 {
		got = append(got, submit(null))
	}
	const N, S, X = PlaceNIC, PlaceHostSpill, PlaceNone
	want := []Placement{N, N, N, S, S, S, S, S, N, N, X, X, X, X}
	if !slices.Equal(got, want) {
		t.Errorf("placements\n got %v\nwant %v", got, want)
	}
	s := n.Stats()
	if s.NIC.Placed[PlaceNIC] != 5 || s.Host.Placed[PlaceHostSpill] != 5 || s.Rejected[StatusOverloaded] != 4 {
		t.Errorf("NIC %v host %v overloaded %d", s.NIC.Placed, s.Host.Placed, s.Rejected[StatusOverloaded])
	}
	if s.Cores[0].Queued != 4 || s.Cores[1].Queued != 4 {
		t.Errorf("queues %d %d, want 4 4", s.Cores[0].Queued, s.Cores[1].Queued)
	}
	hs, _ := n.HandlerStats(null)
	if hs.Placed[PlaceHostSpill] != 4 || hs.Placed[PlaceNIC] != 2 || hs.Rejected != 4 {
		t.Errorf("null handler: placed %v rejected %d", hs.Placed, hs.Rejected)
	}
	close(out.hold)
	wg.Wait()
	counts := map[Status]int{}
	for _, r := range replies {
		counts[r.Status]++
	}
	if counts[StatusOK] != 10 || counts[StatusOverloaded] != 4 {
		t.Errorf("replies %v", counts)
	}
}

func TestSpillDisabled(t *testing.T) {
	out := &recorder{hold: make(chan struct{}), entered: make(chan struct{}, 16)}
	n := newNIC(t, Config{NICCores: 1, RxQueueDepth: 2, SpillThreshold: -1, Outbox: out})
	p := install(t, n, 1, testprog.Object(t, nil, testprog.Src{Name: "send", Asm: testprog.SendAsm}))
	var wg sync.WaitGroup
	wg.Add(4)
	done := func(Reply) { wg.Done() }
	for i := range 4 {
		n.Submit(&Message{Tenant: 1, Handler: id(t, p, "send")}, SinkFunc(done))
		if i == 0 {
			<-out.entered
		}
	}
	s := n.Stats()
	if s.Placed()[PlaceHostSpill] != 0 || s.Rejected[StatusOverloaded] != 1 {
		t.Errorf("placed %v overloaded %d", s.Placed(), s.Rejected[StatusOverloaded])
	}
	close(out.hold)
	wg.Wait()
}

func TestSteering(t *testing.T) {
	n := newNIC(t, Config{})
	p := install(t, n, 1, testprog.Object(t, nil, testprog.Src{Name: "null", Asm: testprog.NullAsm}))
	h := id(t, p, "null")
	cores := map[int]bool{}
	for req := range uint64(50) {
		cores[n.Call(&Message{Tenant: 1, Handler: h, SrcNode: 4, RequestID: req}).Core] = true
	}
	if len(cores) != 1 {
		t.Errorf("flow steering used cores %v for one flow", cores)
	}
	n2 := newNIC(t, Config{Steering: SteerRequest})
	p2 := install(t, n2, 1, testprog.Object(t, nil, testprog.Src{Name: "null", Asm: testprog.NullAsm}))
	cores = map[int]bool{}
	for req := range uint64(200) {
		cores[n2.Call(&Message{Tenant: 1, Handler: id(t, p2, "null"), SrcNode: 4, RequestID: req}).Core] = true
	}
	if len(cores) != 8 {
		t.Errorf("request steering used %d of 8 cores", len(cores))
	}
}
