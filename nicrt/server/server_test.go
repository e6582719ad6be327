package server

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/naam-project/naam/nicrt"
	"github.com/naam-project/naam/nicrt/caller"

	"github.com/naam-project/naam/internal/testing/testprog"

	"github.com/naam-project/naam/bytecode"
	"github.com/naam-project/naam/compiler"
	"github.com/naam-project/naam/lang"
	"github.com/naam-project/naam/nicrt/transport"
	"github.com/naam-project/naam/nicrt/transport/transporttest"
	"github.com/naam-project/naam/nicrt/wire"
)

func TestNetVerbs(t *testing.T) {
	tn := newTestNet(t, nicrt.Config{}, ServerConfig{})
	reg := register(t, tn.nic, tenantA, "mem", 64, nicrt.RegionOptions{Writable: true})
	ro := register(t, tn.nic, tenantA, "ro", 64, nicrt.RegionOptions{})
	cl := tn.client(t, caller.ClientConfig{}, nil)
	ctx := context.Background()
	ref := reg.Ref()

	if err := cl.Write(ctx, tenantA, ref, 8, []byte("hello, naam")); err != nil {
		t.Fatal(err)
	}
	got, err := cl.Read(ctx, tenantA, ref, 8, 11)
	if err != nil || string(got) != "hello, naam" {
		t.Fatalf("read: %q, %v", got, err)
	}
	if old, err := cl.FetchAdd(ctx, tenantA, ref, 32, 5); err != nil || old != 0 {
		t.Fatalf("fetch-add: %d, %v", old, err)
	}
	if old, err := cl.FetchAdd(ctx, tenantA, ref, 32, 5); err != nil || old != 5 {
		t.Fatalf("fetch-add: %d, %v", old, err)
	}
	if old, ok, err := cl.CompareAndSwap(ctx, tenantA, ref, 32, 10, 99); err != nil || !ok || old != 10 {
		t.Fatalf("cas: %d %v %v", old, ok, err)
	}
	if old, ok, err := cl.CompareAndSwap(ctx, tenantA, ref, 32, 10, 7); err != nil || ok || old != 99 {
		t.Fatalf("failed cas: %d %v %v", old, ok, err)
	}
	if v := binary.LittleEndian.Uint64(reg.Bytes()[32:]); v != 99 {
		t.Fatalf("region holds %d", v)
	}

	// Rejections arrive as error replies with the runtime's status.
	for _, tc := range []struct {
		name   string
		tenant uint32
		ref    nicrt.RegionRef
		off    uint64
		want   error
	}{
		{"wrong key", tenantA, nicrt.RegionRef{ID: ref.ID, Key: ref.Key + 1}, 0, nicrt.ErrWrongKey},
		{"foreign region", tenantB, ref, 0, nicrt.ErrForeignRegion},
		{"unknown region", tenantA, nicrt.RegionRef{ID: 999}, 0, nicrt.ErrUnknownRegion},
		{"out of bounds", tenantA, ref, 64, nicrt.ErrOutOfBounds},
		{"misaligned", tenantA, ref, 4, nicrt.ErrMisaligned},
		{"read-only", tenantA, ro.Ref(), 0, nicrt.ErrReadOnly},
	} {
		_, err := cl.FetchAdd(ctx, tc.tenant, tc.ref, tc.off, 1)
		var re *caller.RemoteError
		if !errors.Is(err, tc.want) || !errors.Is(err, caller.ErrRejected) || !errors.As(err, &re) {
			t.Errorf("%s: %v", tc.name, err)
		}
	}
	if _, err := cl.Read(ctx, tenantA, ref, 0, 4096); !errors.Is(err, nicrt.ErrTooLarge) {
		t.Errorf("long read: %v", err)
	}
	s := tn.srv.Stats()
	if s.Requests != 13 || s.Replies != 6 || s.ErrorReplies != 7 || s.Dropped() != 0 {
		t.Errorf("server stats %+v", s)
	}
}

func TestNetCompiledHandler(t *testing.T) {
	tn := newTestNet(t, nicrt.Config{}, ServerConfig{})
	obj, err := compiler.Compile(lang.NewFileSet(), "counter.naam", []byte(`
region counters: [u64; 16] rw

handler incr(slot: u64, by: u64) -> u64 {
    if slot >= 16 {
        fail(7)
    }
    counters[slot] += by
    return counters[slot]
}

handler echo(x: [u8; 16]) -> [u8; 16] {
    return x
}
`))
	if err != nil {
		t.Fatal(err)
	}
	register(t, tn.nic, tenantA, "counters", 16*8, nicrt.RegionOptions{Writable: true})
	p := install(t, tn.nic, tenantA, obj)
	cl := tn.client(t, caller.ClientConfig{}, nil)
	ctx := context.Background()
	req := func(slot, by uint64) []byte {
		return binary.LittleEndian.AppendUint64(binary.LittleEndian.AppendUint64(nil, slot), by)
	}
	for i := range uint64(3) {
		got, err := cl.Call(ctx, tenantA, id(t, p, "incr"), req(3, 10))
		if err != nil || len(got) != 8 || u64(got) != 10*(i+1) {
			t.Fatalf("incr: %x, %v", got, err)
		}
	}
	var he *caller.HandlerError
	if _, err := cl.Call(ctx, tenantA, id(t, p, "incr"), req(16, 1)); !errors.As(err, &he) || he.Code != 7 {
		t.Errorf("fail(7): %v", err)
	}
	x := []byte("0123456789abcdef")
	if got, err := cl.Call(ctx, tenantA, id(t, p, "echo"), x); err != nil || !bytes.Equal(got, x) {
		t.Errorf("echo: %q, %v", got, err)
	}
	// Another tenant may not call it; unknown handlers are refused.
	if _, err := cl.Call(ctx, tenantB, id(t, p, "echo"), x); !errors.Is(err, nicrt.ErrForeignHandler) || !errors.Is(err, caller.ErrRejected) {
		t.Errorf("foreign handler: %v", err)
	}
	if _, err := cl.Call(ctx, tenantA, 9999, nil); !errors.Is(err, nicrt.ErrUnknownHandler) {
		t.Errorf("unknown handler: %v", err)
	}
	// A fault carries the VM's message.
	faulty := install(t, tn.nic, tenantA, testprog.Object(t, nil, testprog.Src{Name: "bad", Asm: "mov %r0, 100000\nexit"}))
	if _, err := cl.Call(ctx, tenantA, id(t, faulty, "bad"), nil); !errors.Is(err, caller.ErrFault) || errors.Is(err, caller.ErrRejected) {
		t.Errorf("fault: %v", err)
	}
}

// TestNetRetryOnce drops the first reply: the client retransmits, the
// server answers from its reply cache, and the FETCH-ADD adds once.
func TestNetRetryOnce(t *testing.T) {
	tn := newTestNet(t, nicrt.Config{}, ServerConfig{})
	reg := register(t, tn.nic, tenantA, "c", 8, nicrt.RegionOptions{Writable: true})
	dropped := 0
	cl := tn.client(t, caller.ClientConfig{Timeout: 2 * time.Millisecond}, func(c transport.Conn) transport.Conn {
		return &dropConn{Conn: c, drop: func([]byte) bool { dropped++; return dropped == 1 }}
	})
	old, err := cl.FetchAdd(context.Background(), tenantA, reg.Ref(), 0, 1)
	if err != nil || old != 0 {
		t.Fatalf("fetch-add: %d, %v", old, err)
	}
	if v := counter(reg); v != 1 {
		t.Fatalf("counter %d after one retried FETCH-ADD", v)
	}
	s, c := tn.srv.Stats(), cl.Stats()
	if s.Requests != 1 || s.CacheHits != 1 || s.Retransmitted != 1 || c.Retransmits != 1 || c.Replies != 1 {
		t.Errorf("server %+v\nclient %+v", s, c)
	}
	if h, _ := tn.nic.HandlerStats(nicrt.HandlerFetchAdd); h.Runs != 1 {
		t.Errorf("FETCH-ADD ran %d times", h.Runs)
	}
}

// TestNetTimeout: a responder that never answers gives caller.ErrTimeout after
// MaxTries tries, each with the retransmit flag but the first.
func TestNetTimeout(t *testing.T) {
	nw := transporttest.NewNetwork(transporttest.MemConfig{})
	deaf, err := nw.Listen(transport.Addr{})
	if err != nil {
		t.Fatal(err)
	}
	defer deaf.Close()
	conn, err := nw.Listen(transport.Addr{})
	if err != nil {
		t.Fatal(err)
	}
	cl, err := caller.Dial(conn, deaf.LocalAddr(), caller.ClientConfig{Node: 1, Server: serverNode, Keys: testKeys(t),
		Timeout: time.Millisecond, MaxTimeout: 4 * time.Millisecond, MaxTries: 5})
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	start := time.Now()
	_, err = cl.Call(context.Background(), tenantA, 16, nil)
	took := time.Since(start)
	if !errors.Is(err, caller.ErrTimeout) {
		t.Fatalf("want caller.ErrTimeout, got %v", err)
	}
	// 1 + 2 + 4 + 4 + 4 ms.
	if took < 15*time.Millisecond || took > 2*time.Second {
		t.Errorf("gave up after %v", took)
	}
	ps := make([]transport.Packet, 16)
	for i := range ps {
		ps[i].Buf = make([]byte, 2048)
	}
	n, _ := deaf.ReadBatch(ps)
	if n != 5 {
		t.Fatalf("%d tries reached the responder, want 5", n)
	}
	for i, p := range ps[:n] {
		pkt, err := wire.Parse(p.Payload(), 0)
		if err != nil || (pkt.Flags&wire.FlagRetransmit != 0) != (i > 0) {
			t.Errorf("try %d: %v %v", i, &pkt.Header, err)
		}
		if pkt.RequestID != mustParse(t, ps[0].Payload()).RequestID {
			t.Errorf("try %d has another id", i)
		}
	}
	if s := cl.Stats(); s.Timeouts != 1 || s.Retransmits != 4 || s.Outstanding != 0 {
		t.Errorf("stats %+v", s)
	}

	// A context ends the call first.
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Millisecond)
	defer cancel()
	if _, err := cl.Call(ctx, tenantA, 16, nil); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("deadline: %v", err)
	}
	// Close fails the calls in flight.
	go func() {
		time.Sleep(2 * time.Millisecond)
		cl.Close()
	}()
	if _, err := cl.Call(context.Background(), tenantA, 16, nil); !errors.Is(err, caller.ErrClosed) && !errors.Is(err, caller.ErrTimeout) {
		t.Errorf("closed: %v", err)
	}
	if _, err := cl.Call(context.Background(), tenantA, 16, nil); !errors.Is(err, caller.ErrClosed) {
		t.Errorf("after close: %v", err)
	}
}

func mustParse(t *testing.T, b []byte) wire.Packet {
	t.Helper()
	p, err := wire.Parse(b, 0)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestNetCredits: the client never has more calls outstanding than the
// server grants.
func TestNetCredits(t *testing.T) {
	tn := newTestNet(t, nicrt.Config{}, ServerConfig{MaxCredits: 3})
	reg := register(t, tn.nic, tenantA, "c", 8, nicrt.RegionOptions{Writable: true})
	var mu sync.Mutex
	inFlight, most, replies := map[uint64]bool{}, 0, 0
	var cl *caller.Client
	wrap := func(c transport.Conn) transport.Conn {
		return &watchConn{Conn: c, sent: func(b []byte) {
			p, _ := wire.Parse(b, 0)
			if p.Flags&wire.FlagRetransmit != 0 {
				return // its call is counted already, and may have ended
			}
			mu.Lock()
			inFlight[p.RequestID] = true
			most = max(most, len(inFlight))
			mu.Unlock()
		}, recv: func(b []byte) {
			p, _ := wire.Parse(b, 0)
			// Hold replies back until the credit path has been taken
			// (callers waited for credits before the first reply brought
			// the grant of 3; later, 2 or more calls went out at once),
			// however fast the responder answers: the 15 other callers
			// keep calling while a reply is held.
			mu.Lock()
			for cl.Stats().CreditWaits == 0 || (replies > 0 && most < 2) {
				mu.Unlock()
				runtime.Gosched()
				mu.Lock()
			}
			replies++
			delete(inFlight, p.RequestID)
			mu.Unlock()
		}}
	}
	// No retransmissions: a late first try overtaken by its retransmission
	// would look like one more call outstanding on the wire.
	cl = tn.client(t, caller.ClientConfig{InitialCredits: 1, Timeout: time.Minute, MinTimeout: time.Minute, MaxTimeout: time.Minute}, wrap)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for range 16 {
		wg.Go(func() {
			<-start
			for range 50 {
				if _, err := cl.FetchAdd(context.Background(), tenantA, reg.Ref(), 0, 1); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	close(start)
	wg.Wait()
	if counter(reg) != 800 || most > 3 || most < 2 {
		t.Errorf("counter %d, at most %d outstanding (granted 3)", counter(reg), most)
	}
	if s := cl.Stats(); s.Credits != 3 || s.CreditWaits == 0 {
		t.Errorf("stats %+v", s)
	}
}

// watchConn calls sent for every datagram written and recv for every one
// read.
type watchConn struct {
	transport.Conn
	sent, recv func([]byte)
}

func (w *watchConn) WriteBatch(ps []transport.Packet) (int, error) {
	for i := range ps {
		w.sent(ps[i].Payload())
	}
	return w.Conn.WriteBatch(ps)
}

func (w *watchConn) ReadBatch(ps []transport.Packet) (int, error) {
	n, err := w.Conn.ReadBatch(ps)
	for i := range n {
		w.recv(ps[i].Payload())
	}
	return n, err
}

// TestNetClose: Close drains the requests in flight before it returns,
// and the calls end with a reply.
func TestNetClose(t *testing.T) {
	tn := newTestNet(t, nicrt.Config{}, ServerConfig{})
	p := install(t, tn.nic, tenantA, testprog.Object(t, nil, testprog.Src{Name: "loop", Asm: testprog.LoopAsm}))
	cl := tn.client(t, caller.ClientConfig{MaxTries: 3}, nil)
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for range 8 {
		wg.Go(func() {
			for range 8 {
				_, err := cl.Call(context.Background(), tenantA, id(t, p, "loop"), nil)
				errs <- err
			}
		})
	}
	time.Sleep(time.Millisecond)
	if err := tn.srv.Close(); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	close(errs)
	ok := 0
	for err := range errs {
		if err == nil {
			ok++
		} else if !errors.Is(err, caller.ErrTimeout) {
			t.Errorf("call: %v", err)
		}
	}
	s := tn.srv.Stats()
	if uint64(ok) < s.Replies-s.Retransmitted || s.Requests != s.Replies {
		t.Errorf("%d calls answered; server %+v", ok, s)
	}
}

// TestNetGo pipelines calls with Go: every callback starts the next call,
// keeping 8 in flight, on a lossy network.
func TestNetGo(t *testing.T) {
	tn := newTestNet(t, nicrt.Config{}, ServerConfig{})
	reg := register(t, tn.nic, tenantA, "c", 8, nicrt.RegionOptions{Writable: true})
	cl := tn.client(t, caller.ClientConfig{MaxTries: 30, MaxTimeout: 5 * time.Millisecond}, func(c transport.Conn) transport.Conn {
		f := transporttest.Faults{Drop: 0.1, Duplicate: 0.05, Reorder: 0.05}
		l, err := transporttest.NewLossy(c, transporttest.LossyConfig{Seed: 7, Send: f, Recv: f})
		if err != nil {
			t.Fatal(err)
		}
		return l
	})
	const n, window = 5000, 8
	req := wire.AppendFetchAdd(nil, reg.Ref(), 0, 1)
	var started, ended atomic.Int64
	finished := make(chan struct{})
	var next func([]byte, error)
	next = func(reply []byte, err error) {
		if err != nil || len(reply) != 8 {
			t.Errorf("reply %x, %v", reply, err)
		}
		if ended.Add(1) == n {
			close(finished)
		}
		if started.Add(1) <= n {
			if err := goRetry(cl, tenantA, nicrt.HandlerFetchAdd, req, next); err != nil {
				t.Errorf("go: %v", err)
			}
		}
	}
	for range window {
		started.Add(1)
		if err := cl.Go(tenantA, nicrt.HandlerFetchAdd, req, next); err != nil {
			t.Fatal(err)
		}
	}
	select {
	case <-finished:
	case <-time.After(time.Minute):
		t.Fatalf("%d of %d calls ended", ended.Load(), n)
	}
	if v := counter(reg); v != n {
		t.Errorf("counter %d, want %d", v, n)
	}
	// Go does not wait for credits.
	nw := transporttest.NewNetwork(transporttest.MemConfig{})
	deaf, _ := nw.Listen(transport.Addr{})
	conn, _ := nw.Listen(transport.Addr{})
	c2, err := caller.Dial(conn, deaf.LocalAddr(), caller.ClientConfig{Node: 1, Server: serverNode, Keys: tn.keys, InitialCredits: 2, MaxTries: 2, Timeout: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer c2.Close()
	errs := make(chan error, 2)
	for range 2 {
		if err := c2.Go(tenantA, 16, nil, func(_ []byte, err error) { errs <- err }); err != nil {
			t.Fatal(err)
		}
	}
	if err := c2.Go(tenantA, 16, nil, func([]byte, error) {}); !errors.Is(err, caller.ErrNoCredits) {
		t.Errorf("third call: %v", err)
	}
	for range 2 {
		if err := <-errs; !errors.Is(err, caller.ErrTimeout) {
			t.Errorf("deaf responder: %v", err)
		}
	}
}

// TestNetControl: register, install (in several chunks), call, stats and
// uninstall over the wire; refusals arrive as error replies.
func TestNetControl(t *testing.T) {
	tn := newTestNet(t, nicrt.Config{}, ServerConfig{})
	// A small payload limit on the client's side, so that the object goes
	// in several chunks (replies still fit).
	cl := tn.client(t, caller.ClientConfig{MaxPayload: 384}, nil)
	cl2 := tn.client(t, caller.ClientConfig{Node: 2}, nil)
	ctx := context.Background()
	ref, err := cl.Register(ctx, tenantA, "counters", 16*8, nicrt.RegionOptions{Writable: true, NICMem: true})
	if err != nil || ref.ID == 0 {
		t.Fatalf("register: %+v %v", ref, err)
	}
	if _, err := cl.Register(ctx, tenantA, "counters", 8, nicrt.RegionOptions{}); !errors.Is(err, nicrt.ErrControlFailed) {
		t.Errorf("a name taken: %v", err)
	}
	obj, err := compiler.Compile(lang.NewFileSet(), "counter.naam", []byte(`
region counters: [u64; 16] rw

handler incr(slot: u64, by: u64) -> u64 {
    if slot >= 16 {
        fail(7)
    }
    counters[slot] += by
    return counters[slot]
}
`))
	if err != nil {
		t.Fatal(err)
	}
	if file, _ := obj.Marshal(); len(file) <= 2*(384-64) {
		t.Fatalf("the object has %d bytes: one chunk, the test wants several", len(file))
	}
	inst, err := cl.Install(ctx, tenantA, obj)
	if err != nil || inst.Program == 0 || len(inst.Handlers) != 1 || inst.Handlers[0].Name != "incr" {
		t.Fatalf("install: %+v %v", inst, err)
	}
	req := binary.LittleEndian.AppendUint64(binary.LittleEndian.AppendUint64(nil, 2), 5)
	if got, err := cl.Call(ctx, tenantA, inst.Handlers[0].ID, req); err != nil || u64(got) != 5 {
		t.Fatalf("incr: %x %v", got, err)
	}
	if old, err := cl.FetchAdd(ctx, tenantA, ref, 16, 1); err != nil || old != 5 {
		t.Fatalf("fetch-add on the registered region: %d %v", old, err)
	}
	cs, err := cl2.NodeStats(ctx, tenantA, "handler."+bytecode.ProgramName(obj.Source)+".incr.")
	if err != nil || len(cs) == 0 {
		t.Fatalf("stats: %v %v", cs, err)
	}
	for _, c := range cs {
		if strings.HasSuffix(c.Name, ".runs") && c.Value != 1 {
			t.Errorf("%s = %d", c.Name, c.Value)
		}
	}
	// Every counter, over many pages: none is over the payload limit,
	// so reading them counts no error.
	before := tn.srv.Stats()
	all, err := cl2.NodeStats(ctx, tenantA, "")
	if err != nil || len(all) < 100 {
		t.Fatalf("every counter: %d, %v", len(all), err)
	}
	for i := 1; i < len(all); i++ {
		if all[i-1].Name >= all[i].Name {
			t.Fatalf("counters %q and %q out of order", all[i-1].Name, all[i].Name)
		}
	}
	if after := tn.srv.Stats(); after.EncodeErrors != before.EncodeErrors || after.ErrorReplies != before.ErrorReplies {
		t.Errorf("reading the stats: encode errors %d → %d, error replies %d → %d", before.EncodeErrors, after.EncodeErrors, before.ErrorReplies, after.ErrorReplies)
	}
	// Another tenant may neither uninstall it nor install code that fails
	// to verify or link.
	if err := cl.Uninstall(ctx, tenantB, inst.Program); !errors.Is(err, nicrt.ErrControlFailed) {
		t.Errorf("foreign uninstall: %v", err)
	}
	if _, err := cl.Install(ctx, tenantB, obj); !errors.Is(err, nicrt.ErrControlFailed) || !strings.Contains(err.Error(), "counters") {
		t.Errorf("install without the region: %v", err)
	}
	if err := cl.Uninstall(ctx, tenantA, inst.Program); err != nil {
		t.Fatal(err)
	}
	if _, err := cl.Call(ctx, tenantA, inst.Handlers[0].ID, req); !errors.Is(err, nicrt.ErrUnknownHandler) {
		t.Errorf("after uninstall: %v", err)
	}
	if err := cl.Uninstall(ctx, tenantA, inst.Program); !errors.Is(err, nicrt.ErrControlFailed) {
		t.Errorf("a second uninstall: %v", err)
	}
	// A malformed body.
	if _, err := cl2.ControlBody(ctx, tenantA, wire.OpRegister, []byte{0xc1}); !errors.Is(err, nicrt.ErrBadControl) {
		t.Errorf("malformed body: %v", err)
	}
	// An install that verifies for longer than the first timeout is sent
	// again and dropped while it runs; nothing else is dropped.
	if s := tn.srv.Stats(); s.Control < 8 || s.Dropped() != s.DuplicatesRunning {
		t.Errorf("stats %+v", s)
	}
}

// goRetry is Go, which a callback may call; when there is no room now (a
// call being retried holds back new ids, or the credits are used), it
// tries again from a goroutine of its own rather than block the callback.
func goRetry(cl *caller.Client, tenant, handler uint32, req []byte, done func([]byte, error)) error {
	err := cl.Go(tenant, handler, req, done)
	if !errors.Is(err, caller.ErrNoCredits) {
		return err
	}
	go func() {
		for errors.Is(cl.Go(tenant, handler, req, done), caller.ErrNoCredits) {
			time.Sleep(50 * time.Microsecond)
		}
	}()
	return nil
}

// TestNetCallerReads mixes calls whose callers read their own replies
// (Call with a context that cannot be cancelled), calls that wait for the
// receiver (a cancellable context) and Go, from several goroutines on one
// client, with the pooled call records passing between them: every call
// gets its reply, none times out (spec/nic.md, The requester: who reads).
func TestNetCallerReads(t *testing.T) {
	tn := newTestNet(t, nicrt.Config{}, ServerConfig{})
	reg := register(t, tn.nic, tenantA, "c", 8, nicrt.RegionOptions{Writable: true})
	cl := tn.client(t, caller.ClientConfig{}, nil)
	fetchAddGo := func() error {
		done := make(chan error, 1)
		if err := goRetry(cl, tenantA, nicrt.HandlerFetchAdd, wire.AppendFetchAdd(nil, reg.Ref(), 0, 1), func(_ []byte, err error) { done <- err }); err != nil {
			return err
		}
		return <-done
	}
	// One goroutine: a Go right after a Call that read its own reply
	// (likely with the same pooled record) while nobody reads.
	const seq = 50
	for i := range seq {
		if _, err := cl.FetchAdd(context.Background(), tenantA, reg.Ref(), 0, 1); err != nil {
			t.Fatalf("call %d: %v", i, err)
		}
		if err := fetchAddGo(); err != nil {
			t.Fatalf("go %d: %v", i, err)
		}
	}
	const perWorker = 300
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Go(func() {
			cctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			for i := range perWorker {
				var err error
				switch (i + w) % 3 {
				case 0:
					_, err = cl.FetchAdd(context.Background(), tenantA, reg.Ref(), 0, 1)
				case 1:
					_, err = cl.FetchAdd(cctx, tenantA, reg.Ref(), 0, 1)
				default:
					err = fetchAddGo()
				}
				if err != nil {
					t.Errorf("worker %d call %d: %v", w, i, err)
					return
				}
			}
		})
	}
	wg.Wait()
	if got := counter(reg); got != 2*seq+4*perWorker {
		t.Errorf("counter %d, want %d", got, 2*seq+4*perWorker)
	}
	if st := cl.Stats(); st.Timeouts != 0 {
		t.Errorf("%d timeouts", st.Timeouts)
	}
}

// gateConn holds the first ReadBatch until open is closed, so that what
// was sent meanwhile is read as one batch, and records the size of every
// WriteBatch.
type gateConn struct {
	transport.Conn
	open   chan struct{}
	mu     sync.Mutex
	writes []int
}

func (g *gateConn) ReadBatch(ps []transport.Packet) (int, error) {
	<-g.open
	return g.Conn.ReadBatch(ps)
}

func (g *gateConn) WriteBatch(ps []transport.Packet) (int, error) {
	g.mu.Lock()
	g.writes = append(g.writes, len(ps))
	g.mu.Unlock()
	return g.Conn.WriteBatch(ps)
}

// TestBatchRepliesPipelined: the replies to one caller's batch of 32
// requests leave in groups of pipelineFlush as the batch is worked
// through, not all at its end, so that the caller starts on the first
// while the server works on the rest.
func TestBatchRepliesPipelined(t *testing.T) {
	net := transporttest.NewNetwork(transporttest.MemConfig{})
	keys := testKeys(t)
	n := newNIC(t, nicrt.Config{})
	h := id(t, install(t, n, tenantA, testprog.Object(t, nil, testprog.Src{Name: "null", Asm: testprog.NullAsm})), "null")
	inner, err := net.Listen(transport.Addr{})
	if err != nil {
		t.Fatal(err)
	}
	gate := &gateConn{Conn: inner, open: make(chan struct{})}
	srv, err := Serve(n, []transport.Conn{gate}, ServerConfig{Keys: keys, Node: serverNode})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	conn, err := net.Listen(transport.Addr{})
	if err != nil {
		t.Fatal(err)
	}
	cl, err := caller.Dial(conn, inner.LocalAddr(), caller.ClientConfig{Keys: keys, Node: 1, Server: serverNode, InitialCredits: 64, Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cl.Close() })
	const calls = 32
	var wg sync.WaitGroup
	wg.Add(calls)
	for range calls {
		if err := cl.Go(tenantA, h, nil, func(_ []byte, err error) {
			if err != nil {
				t.Error(err)
			}
			wg.Done()
		}); err != nil {
			t.Fatal(err)
		}
	}
	for deadline := time.Now().Add(5 * time.Second); cl.Stats().Calls < calls && time.Now().Before(deadline); {
		time.Sleep(time.Millisecond)
	}
	time.Sleep(50 * time.Millisecond) // sent, and delivered by the in-memory network
	close(gate.open)
	wg.Wait()
	gate.mu.Lock()
	defer gate.mu.Unlock()
	if s := srv.Stats(); s.Replies != calls {
		t.Fatalf("%d replies, want %d", s.Replies, calls)
	}
	// Read as one batch (the usual case here) the replies leave as 8, 8,
	// 8, 8; read in parts, in smaller groups still; never as one write of
	// more than pipelineFlush.
	sum := 0
	for _, w := range gate.writes {
		sum += w
	}
	if sum != calls || slices.Max(gate.writes) > pipelineFlush {
		t.Errorf("reply writes of %v datagrams, want %d in writes of at most %d", gate.writes, calls, pipelineFlush)
	}
}
