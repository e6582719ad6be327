package nicrt

import (
	"errors"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/naam-project/naam/internal/testing/testprog"

	"github.com/naam-project/naam/bytecode"
	"github.com/naam-project/naam/nicrt/wire"
	"github.com/naam-project/naam/vm"
)

func TestSendAndForward(t *testing.T) {
	out := &recorder{}
	n := newNIC(t, Config{Outbox: out})
	p := install(t, n, 5, testprog.Object(t, nil, testprog.Src{Name: "send", Asm: testprog.SendAsm}, testprog.Src{Name: "fwd", Asm: testprog.ForwardAsm}))
	send, fwd := id(t, p, "send"), id(t, p, "fwd")
	if rep := n.Call(&Message{Tenant: 5, Handler: send, SrcNode: 1, RequestID: 10}); rep.Status != StatusOK {
		t.Fatalf("send: %+v", rep)
	}
	rep := n.Call(&Message{Tenant: 5, Handler: fwd, SrcNode: 1, RequestID: 11, Payload: []byte("abc")})
	if rep.Status != StatusForwarded || rep.Forward == nil || *rep.Forward != (vm.Forward{Node: 9, Handler: 1}) {
		t.Fatalf("forward: %+v", rep)
	}
	if len(out.sent) != 1 || out.sent[0].node != 7 || out.sent[0].handler != 3 || len(out.sent[0].payload) != 8 ||
		out.sent[0].from.Tenant != 5 || out.sent[0].from.Handler != send || out.sent[0].from.Program != p {
		t.Errorf("sent %+v", out.sent)
	}
	if len(out.forwards) != 1 || string(out.forwards[0].payload) != "abc" || out.forwards[0].node != 9 {
		t.Errorf("forwards %+v", out.forwards)
	}
	// A refused forward: the handler fails with its own code.
	out.refuse = errors.New("no route")
	if rep := n.Call(&Message{Tenant: 5, Handler: fwd}); rep.Status != StatusError || rep.Code != 5 {
		t.Errorf("refused forward: %+v", rep)
	}
	s := n.Stats().NIC
	if s.Sends != 1 || s.Forwards != 1 || s.SendsRefused != 1 || s.Forwarded != 1 {
		t.Errorf("counters %+v", s)
	}
	// Without an outbox the helpers refuse.
	n2 := newNIC(t, Config{})
	p2 := install(t, n2, 5, testprog.Object(t, nil, testprog.Src{Name: "fwd", Asm: testprog.ForwardAsm}))
	if rep := n2.Call(&Message{Tenant: 5, Handler: id(t, p2, "fwd")}); rep.Status != StatusError || rep.Code != 5 {
		t.Errorf("no outbox: %+v", rep)
	}
}

func TestHandlerFaults(t *testing.T) {
	n := newNIC(t, Config{})
	o := testprog.Object(t, nil,
		testprog.Src{Name: "long", Asm: "mov %r0, 100\nexit"},                    // more than its 8-byte reply buffer
		testprog.Src{Name: "fwdless", Asm: "lddw %r0, 0x8000000000000000\nexit"}, // ReturnForwarded without forward
	)
	o.Handlers[0].Results = []bytecode.Field{{Name: "x", Type: "u64", Size: 8}}
	p := install(t, n, 1, o)
	for _, name := range []string{"long", "fwdless"} {
		rep := n.Call(&Message{Tenant: 1, Handler: id(t, p, name)})
		var f *vm.Fault
		if rep.Status != StatusFault || !errors.As(rep.Err, &f) || !errors.Is(rep.Err, vm.ErrReturn) {
			t.Errorf("%s: %+v", name, rep)
		}
	}
	if s := n.Stats(); s.NIC.Faults != 2 {
		t.Errorf("faults %d", s.NIC.Faults)
	}
}

// TestUninstallDrains holds a handler's run inside send, uninstalls its
// program, and checks that Uninstall waits for the queued and running
// messages, which all complete, while new ones are refused at once.
func TestUninstallDrains(t *testing.T) {
	out := &recorder{hold: make(chan struct{}), entered: make(chan struct{}, 16)}
	n := newNIC(t, Config{NICCores: 1, Outbox: out})
	r := register(t, n, 1, "v", 8, RegionOptions{Writable: true})
	p := install(t, n, 1, testprog.Object(t, []bytecode.Region{{Name: "v", Size: 8, Writable: true}}, testprog.Src{Name: "send", Asm: testprog.SendAsm}, testprog.Src{Name: "incr", Asm: testprog.IncrAsm}))
	send, incr := id(t, p, "send"), id(t, p, "incr")
	var wg sync.WaitGroup
	var mu sync.Mutex
	statuses := map[Status]int{}
	done := func(rep Reply) {
		mu.Lock()
		statuses[rep.Status]++
		mu.Unlock()
		wg.Done()
	}
	wg.Add(1)
	n.Submit(&Message{Tenant: 1, Handler: send}, SinkFunc(done))
	<-out.entered
	for range 5 {
		wg.Add(1)
		n.Submit(&Message{Tenant: 1, Handler: incr}, SinkFunc(done))
	}
	uninstalled := make(chan error)
	go func() { uninstalled <- n.Uninstall(p) }()
	// New messages are refused as soon as Uninstall has begun: the
	// rejection's done runs before Submit returns.
	deadline := time.Now().Add(5 * time.Second)
	for {
		refused := make(chan bool, 1)
		wg.Add(1)
		n.Submit(&Message{Tenant: 1, Handler: incr}, SinkFunc(func(rep Reply) {
			refused <- rep.Status == StatusUnknownHandler
			done(rep)
		}))
		if len(refused) == 1 && <-refused {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("handler still callable during Uninstall")
		}
		runtime.Gosched()
	}
	select {
	case err := <-uninstalled:
		t.Fatalf("Uninstall returned %v with a run in progress", err)
	case <-time.After(20 * time.Millisecond):
	}
	close(out.hold)
	if err := <-uninstalled; err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	// Every accepted message ran: the send, and every incr (counted in the region).
	if got := u64(r.Bytes()); statuses[StatusOK] != 1+int(got) || got < 5 || statuses[StatusUnknownHandler] != 1 {
		t.Errorf("statuses %v, counter %d", statuses, got)
	}
	if _, ok := n.Handler(incr); ok {
		t.Error("handler still in the table")
	}
	if err := n.Unregister(r); err != nil {
		t.Errorf("region still linked after Uninstall: %v", err)
	}
	if s := n.Stats(); s.Programs != 0 {
		t.Errorf("%d programs", s.Programs)
	}
}

func TestClose(t *testing.T) {
	n, err := New(Config{NICCores: 2})
	if err != nil {
		t.Fatal(err)
	}
	r := register(t, n, 1, "v", 8, RegionOptions{Writable: true})
	p := install(t, n, 1, testprog.Object(t, []bytecode.Region{{Name: "v", Size: 8, Writable: true}}, testprog.Src{Name: "incr", Asm: testprog.IncrAsm}))
	var wg sync.WaitGroup
	var mu sync.Mutex
	counts := map[Status]int{}
	for range 1000 {
		wg.Add(1)
		n.Submit(&Message{Tenant: 1, Handler: id(t, p, "incr"), RequestID: 1}, SinkFunc(func(rep Reply) {
			mu.Lock()
			counts[rep.Status]++
			mu.Unlock()
			wg.Done()
		}))
	}
	n.Close()
	wg.Wait() // every message got its done
	if got := u64(r.Bytes()); int(got) != counts[StatusOK] || counts[StatusOK]+counts[StatusOverloaded] != 1000 {
		t.Errorf("counter %d, replies %v", got, counts)
	}
	if rep := n.Call(&Message{Tenant: 1, Handler: id(t, p, "incr")}); rep.Status != StatusClosed {
		t.Errorf("after Close: %+v", rep)
	}
	if _, err := n.Register(1, "w", 8, RegionOptions{}); !errors.Is(err, ErrClosed) {
		t.Errorf("Register after Close: %v", err)
	}
	if err := n.Close(); err != nil {
		t.Error(err)
	}
}

func TestConfig(t *testing.T) {
	for _, bad := range []Config{
		{NICCores: -1},
		{MaxReply: 12},
		{RxQueueDepth: -3},
		{NICBudget: 200, HostBudget: 100},
		{Steering: 7},
		{DMALatency: -time.Second},
	} {
		if _, err := New(bad); err == nil {
			t.Errorf("New(%+v) accepted", bad)
		}
	}
}

// TestHandlerCostModel checks the per-entry region touches: each handler
// of a two-handler object is charged only for the region it uses, a DMA
// for host memory and a local hit for nicmem, and the other way round on a
// host core.
func TestHandlerCostModel(t *testing.T) {
	n := newNIC(t, Config{NICBudget: 5})
	a := register(t, n, 1, "a", 8, RegionOptions{})
	register(t, n, 1, "b", 8, RegionOptions{Writable: true, NICMem: true})
	binaryPut(a.Bytes(), 3)
	p := install(t, n, 1, testprog.Object(t, []bytecode.Region{{Name: "a", Size: 8}, {Name: "b", Size: 8, Writable: true}},
		testprog.Src{Name: "ra", Asm: testprog.ValueAsm(0)},
		testprog.Src{Name: "wb", Asm: "lddw %r1, region[1]\nmov %r2, 1\nlock add [%r1+0], %r2\nmov %r0, 0\nexit"},
	))
	// ra has 11 instructions: over the NIC budget of 5, so it runs on a host core.
	ra := n.Call(&Message{Tenant: 1, Handler: id(t, p, "ra")})
	wb := n.Call(&Message{Tenant: 1, Handler: id(t, p, "wb")})
	if ra.Placement != PlaceHostBudget || wb.Placement != PlaceNIC || u64(ra.Data) != 3 {
		t.Fatalf("ra %+v, wb %+v", ra, wb)
	}
	s := n.Stats()
	// wb on a NIC core: one nicmem hit, no DMA.
	if s.NIC.LocalHits != 1 || s.NIC.DMABytes != 0 || s.NIC.Cycles != 50 {
		t.Errorf("NIC: %+v", s.NIC)
	}
	// ra on a host core: host memory is local; the handoff moves the request (0 B) and the reply (8 B).
	if s.Host.LocalHits != 1 || s.Host.DMAReads != 1 || s.Host.DMAWrites != 1 || s.Host.DMABytes != 8 || s.Host.Cycles != 44 {
		t.Errorf("host: %+v", s.Host)
	}
	if wb.ModelNanos != 120 { // 5 insns × 10 cycles at 2.5 GHz = 20 ns, nicmem 100 ns
		t.Errorf("wb modelled %d ns", wb.ModelNanos)
	}
}

func TestStatsCounters(t *testing.T) {
	n := newNIC(t, Config{NICCores: 2, HostCores: 1, RxQueueDepth: 8})
	r := register(t, n, 1, "v", 8, RegionOptions{})
	p := install(t, n, 1, testprog.Object(t, []bytecode.Region{{Name: "v", Size: 8}}, testprog.Src{Name: "get", Asm: testprog.ValueAsm(1)}))
	if got, ok := n.Program(p.ID); !ok || got != p || p.ID == 0 {
		t.Errorf("Program(%d) = %v, %v", p.ID, got, ok)
	}
	if space := n.QueueSpace(); space != 16 {
		t.Errorf("QueueSpace = %d, want 16", space)
	}
	n.Call(&Message{Tenant: 1, Handler: id(t, p, "get")})
	n.Call(&Message{Tenant: 1, Handler: HandlerRead, Payload: wire.AppendRead(nil, RegionRef{ID: r.ID}, 0, 8)})
	cs := n.Stats().Counters()
	seen := map[string]uint64{}
	for i, c := range cs {
		if _, dup := seen[c.Name]; dup || c.Name == "" || i > 0 && cs[i-1].Name >= c.Name {
			t.Fatalf("counter %d %q: duplicate, empty or out of order", i, c.Name)
		}
		seen[c.Name] = c.Value
	}
	prog := bytecode.ProgramName(p.Source)
	for name, want := range map[string]uint64{
		"programs": 1, "regions": 1, "rejected.wrong_key": 1, "nic.placed.nic": 2, "nic.runs": 2, "nic.replies": 1,
		"nic.reply_bytes": 8, "handler." + prog + ".get.runs": 1, "verb.read.rejected": 1, "nic.dma_reads": 1,
	} {
		if got, ok := seen[name]; !ok || got != want {
			t.Errorf("%s = %d (present %v), want %d", name, got, ok, want)
		}
	}
	if _, ok := seen["core.2.busy_nanos"]; !ok {
		t.Error("no counters for the host core")
	}
}
