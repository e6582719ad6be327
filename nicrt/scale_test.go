package nicrt

import (
	"encoding/binary"
	"fmt"
	"sync"
	"testing"

	"github.com/naam-project/naam/bytecode"
	"github.com/naam-project/naam/compiler"
	"github.com/naam-project/naam/internal/testing/testprog"
	"github.com/naam-project/naam/lang"
	"github.com/naam-project/naam/nicrt/wire"
	"github.com/naam-project/naam/vm"
)

// TestManyTenants installs 1,000 handlers from 100 tenants (one object of
// ten handlers each, every tenant with its own region under the same name)
// and calls each of them, from its tenant and from the next one.
func TestManyTenants(t *testing.T) {
	const tenants, perTenant = 100, 10
	n := newNIC(t, Config{Steering: SteerRequest})
	var handlers []testprog.Src
	for i := range perTenant {
		handlers = append(handlers, testprog.Src{Name: fmt.Sprintf("h%d", i), Asm: testprog.ValueAsm(i)})
	}
	o := testprog.Object(t, []bytecode.Region{{Name: "base", Size: 8}}, handlers...)
	progs := make([]*Program, tenants)
	for tn := range tenants {
		r := register(t, n, uint64(tn), "base", 8, RegionOptions{})
		binaryPut(r.Bytes(), uint64(tn)*1000)
		progs[tn] = install(t, n, uint64(tn), o)
	}
	s := n.Stats()
	if s.Programs != tenants || len(s.Handlers) != tenants*perTenant+4 || s.Tenants != tenants {
		t.Fatalf("%d programs, %d handlers, %d tenants", s.Programs, len(s.Handlers), s.Tenants)
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	var failures []string
	for tn, p := range progs {
		for i, h := range p.Handlers() {
			want := uint64(tn)*1000 + uint64(i)
			wg.Add(2)
			n.Submit(&Message{Tenant: uint64(tn), Handler: h.ID, RequestID: want}, SinkFunc(func(rep Reply) {
				if rep.Status != StatusOK || binary.LittleEndian.Uint64(rep.Data) != want {
					mu.Lock()
					failures = append(failures, fmt.Sprintf("tenant %d %s: %s %x, want %d", tn, h.Name, rep.Status, rep.Data, want))
					mu.Unlock()
				}
				wg.Done()
			}))
			other := uint64(tn+1) % tenants
			n.Submit(&Message{Tenant: other, Handler: h.ID}, SinkFunc(func(rep Reply) {
				if rep.Status != StatusForeignHandler {
					mu.Lock()
					failures = append(failures, fmt.Sprintf("tenant %d ran tenant %d's %s: %s", other, tn, h.Name, rep.Status))
					mu.Unlock()
				}
				wg.Done()
			}))
		}
	}
	wg.Wait()
	for _, f := range failures[:min(len(failures), 10)] {
		t.Error(f)
	}
	s = n.Stats()
	if s.Rejected[StatusForeignHandler] != tenants*perTenant || s.NIC.Replies+s.Host.Replies != tenants*perTenant {
		t.Errorf("foreign %d, replies %d + %d", s.Rejected[StatusForeignHandler], s.NIC.Replies, s.Host.Replies)
	}
	for _, hs := range s.Handlers[4:] {
		if hs.Runs != 1 || hs.Rejected != 1 || hs.Placed[PlaceNIC]+hs.Placed[PlaceHostSpill] != 1 { // a burst of 2,000 may spill
			t.Fatalf("handler %d: %+v", hs.ID, hs)
		}
	}
	// Uninstalling half of them leaves the others working.
	for tn := 0; tn < tenants; tn += 2 {
		if err := n.Uninstall(progs[tn]); err != nil {
			t.Fatal(err)
		}
	}
	for tn, p := range progs {
		rep := n.Call(&Message{Tenant: uint64(tn), Handler: p.Handlers()[3].ID})
		if want := map[bool]Status{true: StatusUnknownHandler, false: StatusOK}[tn%2 == 0]; rep.Status != want {
			t.Fatalf("tenant %d after uninstalling the even ones: %s", tn, rep.Status)
		}
	}
}

// TestConcurrent runs handlers and verbs from many goroutines against
// shared counters: every increment lands exactly once. Run with -race.
func TestConcurrent(t *testing.T) {
	n := newNIC(t, Config{NICCores: 4, HostCores: 2, RxQueueDepth: 64, SpillThreshold: 8, Steering: SteerRequest})
	r := register(t, n, 1, "c", 64, RegionOptions{Writable: true})
	nm := register(t, n, 1, "n", 64, RegionOptions{Writable: true, NICMem: true})
	p := install(t, n, 1, testprog.Object(t, []bytecode.Region{{Name: "c", Size: 8, Writable: true}}, testprog.Src{Name: "incr", Asm: testprog.IncrAsm}))
	incr := id(t, p, "incr")
	const clients, each = 8, 2000
	var wg sync.WaitGroup
	var mu sync.Mutex
	ok := map[uint32]int{}
	for c := range clients {
		wg.Go(func() {
			window := make(chan struct{}, 16)
			var inner sync.WaitGroup
			for i := range each {
				msg := &Message{Tenant: 1, Handler: incr, SrcNode: uint64(c), RequestID: uint64(i)}
				if i%2 == 1 {
					msg = &Message{Tenant: 1, Handler: HandlerFetchAdd, SrcNode: uint64(c), RequestID: uint64(i),
						Payload: wire.AppendFetchAdd(nil, nm.Ref(), 8, 1)}
				}
				window <- struct{}{}
				inner.Add(1)
				n.Submit(msg, SinkFunc(func(rep Reply) {
					if rep.Status == StatusOK {
						mu.Lock()
						ok[msg.Handler]++
						mu.Unlock()
					}
					<-window
					inner.Done()
				}))
			}
			inner.Wait()
		})
	}
	wg.Wait()
	got, gotVerb := u64(r.Bytes()), binary.LittleEndian.Uint64(nm.Bytes()[8:])
	if got != uint64(ok[incr]) || gotVerb != uint64(ok[HandlerFetchAdd]) {
		t.Errorf("counters %d %d, successful calls %v", got, gotVerb, ok)
	}
	s := n.Stats()
	if over := s.Rejected[StatusOverloaded]; uint64(ok[incr]+ok[HandlerFetchAdd])+over != clients*each {
		t.Errorf("ok %v + overloaded %d != %d", ok, over, clients*each)
	}
	t.Logf("placements %v, overloaded %d", s.Placed(), s.Rejected[StatusOverloaded])
}

// TestKVGet runs the hand-written KV GET handler (internal/testing/testprog) with
// its table in host memory and in nicmem, and checks the answer and the
// cost model: one touch of the table plus the copy helper's 64 bytes.
func TestKVGet(t *testing.T) {
	o, err := testprog.KVGetHandObject()
	if err != nil {
		t.Fatal(err)
	}
	for _, nicmem := range []bool{false, true} {
		n := newNIC(t, Config{})
		table := register(t, n, 1, "table", testprog.KVGetTableSize, RegionOptions{NICMem: nicmem})
		p := install(t, n, 1, o)
		key := []byte("0123456789abcdef")
		b := table.Bytes()[(vm.FNV1a(key)%testprog.KVGetBuckets)*testprog.KVGetBucketSize:]
		copy(b, key)
		b[16] = 1                                // used
		binary.LittleEndian.PutUint32(b[20:], 5) // vlen
		copy(b[32:], "value")                    // value
		rep := n.Call(&Message{Tenant: 1, Handler: id(t, p, "get"), Payload: key})
		if rep.Status != StatusOK || len(rep.Data) != testprog.KVGetReplySize || string(rep.Data[4:9]) != "value" || rep.Data[0] != 5 {
			t.Fatalf("nicmem %v: %+v", nicmem, rep)
		}
		if miss := n.Call(&Message{Tenant: 1, Handler: id(t, p, "get"), Payload: []byte("fedcba9876543210")}); miss.Status != StatusError || miss.Code != testprog.KVGetNotFound {
			t.Errorf("miss: %+v", miss)
		}
		s := n.Stats().NIC
		// Two runs, each one touch of the table (64 B); the hit also copies 64 B out of it.
		if nicmem && (s.LocalHits != 3 || s.DMABytes != 0) || !nicmem && (s.DMAReads != 3 || s.DMABytes != 192 || s.LocalHits != 0) {
			t.Errorf("nicmem %v: %+v", nicmem, s)
		}
		t.Logf("nicmem %v: %d insns, modelled %d ns", nicmem, rep.Insns, rep.ModelNanos)
	}
}

// TestCompiled installs compiled objects: the language's counter and its
// helper showcase, where the handler that traces goes to a host core.
func TestCompiled(t *testing.T) {
	n := newNIC(t, Config{Outbox: &recorder{}})
	counter, err := compiler.Compile(lang.NewFileSet(), "counter.naam", []byte(`
region counters: [u64; 256] rw

handler incr(by: u64) -> u64 {
    let t = tenant() % 256
    counters[t] += by
    return counters[t]
}
`))
	if err != nil {
		t.Fatal(err)
	}
	register(t, n, 7, "counters", 256*8, RegionOptions{Writable: true})
	p := install(t, n, 7, counter)
	for i := range uint64(3) {
		rep := n.Call(&Message{Tenant: 7, Handler: id(t, p, "incr"), Payload: binary.LittleEndian.AppendUint64(nil, 10)})
		if rep.Status != StatusOK || u64(rep.Data) != 10*(i+1) {
			t.Fatalf("incr: %+v", rep)
		}
	}
	helpers, err := compiler.Compile(lang.NewFileSet(), "helpers.naam", []byte(`
handler log_event(peer: u64, payload: [u8; 32]) -> (h: u64, sent: bool) {
    trace(payload)
    h = hash(payload)
    sent = send(peer, log_event, payload)
    return
}

handler relay(next: u64, payload: [u8; 32]) {
    forward(next, log_event)
}
`))
	if err != nil {
		t.Fatal(err)
	}
	q := install(t, n, 7, helpers)
	want := map[string]Placement{"log_event": PlaceHostHelper, "relay": PlaceNIC}
	for _, h := range q.Handlers() {
		if h.Placement != want[h.Name] {
			t.Errorf("%s: %s, want %s", h.Name, h.Placement, want[h.Name])
		}
	}
	rep := n.Call(&Message{Tenant: 7, Handler: id(t, q, "log_event"), Payload: make([]byte, 40)})
	if rep.Status != StatusOK || !rep.Placement.OnHost() || rep.Data[8] != 1 {
		t.Errorf("log_event: %+v", rep)
	}
}
