package host

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/naam-project/naam/nicrt"
	"github.com/naam-project/naam/nicrt/server"
)

func TestCallAndVerbs(t *testing.T) {
	a := startDemo(t, Config{Name: "a"})
	b := startDemo(t, Config{Name: "b"})
	ctx := testCtx(t)
	p, err := b.Dial(ctx, a.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	if p.NodeID() != a.ID() || p.NodeID() != NodeID("a") {
		t.Errorf("peer id %d, node a is %d", p.NodeID(), a.ID())
	}
	if again, _ := b.Dial(ctx, a.Addr().String()); again != p {
		t.Error("a second Dial made a second peer")
	}
	var got uint64
	if err := p.Call(ctx, "incr", struct{ Slot, By uint64 }{3, 5}, &got); err != nil || got != 5 {
		t.Fatalf("incr: %d %v", got, err)
	}
	if err := p.Call(ctx, "demo.incr", map[string]int{}, &got); !errors.Is(err, ErrLayout) {
		t.Errorf("a map for args: %v", err)
	}
	type mixArgs struct {
		A     uint32
		B     int16
		Flag  bool
		Name  string
		Words [3]uint16
	}
	var mix struct {
		Sum      int64
		NotFlag  bool
		SameName [8]byte
		Next     []uint16
	}
	if err := p.Call(ctx, "mix", mixArgs{A: 10, B: -13, Flag: false, Name: "naam", Words: [3]uint16{7, 8, 9}}, &mix); err != nil {
		t.Fatal(err)
	}
	if mix.Sum != -3 || !mix.NotFlag || string(mix.SameName[:4]) != "naam" || len(mix.Next) != 3 || mix.Next[0] != 8 || mix.Next[2] != 9 {
		t.Errorf("mix: %+v", mix)
	}
	// A handler's failure code, an unknown handler, an unknown region.
	var he *HandlerError
	if err := p.Call(ctx, "incr", struct{ Slot, By uint64 }{16, 1}, &got); !errors.As(err, &he) || he.Code != 7 {
		t.Errorf("slot 16: %v", err)
	}
	if err := p.Call(ctx, "nope", nil, nil); !errors.Is(err, ErrNoHandler) || !strings.Contains(err.Error(), "demo.get, demo.incr, demo.mix") {
		t.Errorf("unknown handler: %v", err)
	}
	if _, err := p.Read(ctx, "nope", 0, 8); !errors.Is(err, ErrNoRegion) {
		t.Errorf("unknown region: %v", err)
	}
	// The verbs on the same memory.
	if old, err := p.FetchAdd(ctx, "counters", 3*8, 10); err != nil || old != 5 {
		t.Fatalf("fetch-add: %d %v", old, err)
	}
	if old, ok, err := p.CompareAndSwap(ctx, "counters", 3*8, 15, 100); err != nil || !ok || old != 15 {
		t.Fatalf("cas: %d %v %v", old, ok, err)
	}
	if old, ok, err := p.CompareAndSwap(ctx, "counters", 3*8, 15, 1); err != nil || ok || old != 100 {
		t.Fatalf("failed cas: %d %v %v", old, ok, err)
	}
	if err := p.Write(ctx, "counters", 0, []byte{1, 2, 3}); err != nil {
		t.Fatal(err)
	}
	if b, err := p.Read(ctx, "counters", 0, 4); err != nil || string(b) != "\x01\x02\x03\x00" {
		t.Fatalf("read: %x %v", b, err)
	}
	if _, err := p.Read(ctx, "counters", 16*8-4, 8); !errors.Is(err, ErrRejected) {
		t.Errorf("read past the end: %v", err)
	}
	if err := p.Call(ctx, "get", uint64(3), &got); err != nil || got != 100 {
		t.Errorf("get after the verbs: %d %v", got, err)
	}
	// An uninstalled program: the old id gives ErrNoHandler; after the
	// node installs it again, Call finds the new id by itself.
	prog := a.nic.Programs(uint64(a.tenant))[0]
	if err := a.nic.Uninstall(prog); err != nil {
		t.Fatal(err)
	}
	if err := p.Call(ctx, "get", uint64(3), &got); !errors.Is(err, ErrNoHandler) {
		t.Errorf("after uninstall: %v", err)
	}
	if _, err := a.Install(demoObject(t)); err != nil {
		t.Fatal(err)
	}
	if err := p.Call(ctx, "get", uint64(3), &got); err != nil || got != 100 {
		t.Errorf("after a local reinstall: %d %v", got, err)
	}
	if reply, err := p.CallRaw(ctx, "get", binary.LittleEndian.AppendUint64(nil, 3)); err != nil || len(reply) != 8 {
		t.Errorf("raw call after the reinstall: %x %v", reply, err)
	}
	// And one installed over the wire.
	if err := a.nic.Uninstall(a.nic.Programs(uint64(a.tenant))[0]); err != nil {
		t.Fatal(err)
	}
	if _, err := p.Install(ctx, demoObject(t)); err != nil {
		t.Fatal(err)
	}
	if err := p.Call(ctx, "get", uint64(3), &got); err != nil || got != 100 {
		t.Errorf("after a remote install: %d %v", got, err)
	}
	cs, err := p.Stats(ctx, "server.requests")
	if err != nil || len(cs) != 1 || cs[0].Value < 10 {
		t.Errorf("stats: %v %v", cs, err)
	}
}

func TestGoManyInFlight(t *testing.T) {
	a := startDemo(t, Config{})
	ctx := testCtx(t)
	p, err := Dial(ctx, a.Addr().String(), 0, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	n := 2000
	if raceEnabled {
		n = 200 // the race detector slows the node tenfold: fewer, so none times out
	}
	done := make(chan *Call, n)
	results := make([]uint64, n)
	for i := range n {
		p.Go(ctx, "incr", struct{ Slot, By uint64 }{uint64(i % 4), 1}, &results[i], done)
	}
	seen := map[uint64]bool{}
	for range n {
		c := <-done
		if c.Error != nil {
			t.Fatal(c.Error)
		}
		v := *c.Result.(*uint64)
		slot := c.Args.(struct{ Slot, By uint64 }).Slot
		if seen[slot<<32|v] {
			t.Fatalf("slot %d reached %d twice", slot, v)
		}
		seen[slot<<32|v] = true
	}
	for slot := range 4 {
		var v uint64
		if err := p.Call(ctx, "get", uint64(slot), &v); err != nil || v != uint64(n/4) {
			t.Errorf("slot %d = %d %v, want %d", slot, v, err, n/4)
		}
	}
	// Errors arrive on the channel too.
	c := <-p.Go(ctx, "nope", nil, nil, nil).Done
	if !errors.Is(c.Error, ErrNoHandler) {
		t.Errorf("Go of an unknown handler: %v", c.Error)
	}
}

func TestWrongKeyAndNobody(t *testing.T) {
	a := startDemo(t, Config{Secret: []byte("a secret of at least sixteen bytes")})
	ctx := testCtx(t)
	short, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := Dial(short, a.Addr().String(), 0, []byte("another secret, just as long"), 0)
	if err == nil || time.Since(start) > 2*time.Second {
		t.Errorf("dial with the wrong key: %v after %v", err, time.Since(start))
	}
	p, err := Dial(ctx, a.Addr().String(), 0, []byte("a secret of at least sixteen bytes"), 0)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	if _, err := Start(Config{Secret: []byte("short")}); err == nil || !strings.Contains(err.Error(), "at least 16") {
		t.Errorf("short secret: %v", err)
	}
	if _, err := Start(Config{Listen: "nonsense"}); err == nil || !strings.Contains(err.Error(), "nonsense") {
		t.Errorf("bad listen address: %v", err)
	}
}

// TestCloseDrains: Close answers what it accepted, then calls fail with
// errors (never hang).
func TestCloseDrains(t *testing.T) {
	a := startDemo(t, Config{})
	ctx := testCtx(t)
	p, err := Dial(ctx, a.Addr().String(), 0, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	counters := a.nic.Regions(uint64(a.tenant))[0].Bytes()
	var wg sync.WaitGroup
	var errN sync.Map
	answered := make([]uint64, 4) // by slot, each written by its worker
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 200 {
				var v uint64
				if err := p.Call(ctx, "incr", struct{ Slot, By uint64 }{uint64(w), 1}, &v); err != nil {
					errN.Store(w*1000+i, err)
					return
				}
				if v != answered[w]+1 {
					t.Errorf("slot %d went from %d to %d", w, answered[w], v)
				}
				answered[w] = v
			}
		}()
	}
	// Close once calls are flowing (or all done).
	for a.srv.Stats().Requests < 40 && p.ClientStats().Replies < 800 {
		runtime.Gosched()
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	errN.Range(func(k, v any) bool {
		if !errors.Is(v.(error), ErrTimeout) {
			t.Errorf("call %v after close: %v", k, v)
		}
		return true
	})
	// Every increment the node ran was answered: none was taken and then
	// dropped at Close. (The NIC's cores have stopped: reading is safe.)
	for slot := range 4 {
		if ran := binary.LittleEndian.Uint64(counters[8*slot:]); ran != answered[slot] {
			t.Errorf("slot %d: the node ran %d increments, %d were answered", slot, ran, answered[slot])
		}
	}
	if err := a.Close(); err != nil {
		t.Errorf("second close: %v", err)
	}
	if _, err := a.Dial(ctx, "127.0.0.1:1"); !errors.Is(err, ErrClosed) {
		t.Errorf("dial after close: %v", err)
	}
}

func TestMetrics(t *testing.T) {
	a := startDemo(t, Config{Name: "metrics"})
	ctx := testCtx(t)
	p, err := Dial(ctx, a.Addr().String(), 0, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	var v uint64
	for range 3 {
		if err := p.Call(ctx, "incr", struct{ Slot, By uint64 }{1, 1}, &v); err != nil {
			t.Fatal(err)
		}
	}
	p.Call(ctx, "incr", struct{ Slot, By uint64 }{99, 1}, &v)
	text := scrapeMetrics(t, a)
	incr := `handler="demo.incr",node="metrics",program="demo",tenant="1"`
	for _, want := range []string{
		`naam_handler_runs_total{` + incr + `} 4`,
		`naam_handler_outcomes_total{` + strings.Replace(incr, `program=`, `outcome="error",program=`, 1) + `} 1`,
		`naam_handler_run_seconds_count{` + incr + `} 4`,
		`naam_handler_run_seconds_bucket{` + incr + `,le="+Inf"} 4`,
		`naam_core_queue_depth{core="0",kind="nic",node="metrics"} 0`,
		`naam_core_busy_seconds_total{core="0",kind="nic",node="metrics"}`,
		`naam_placements_total{node="metrics",placement="nic"}`,
		`naam_dropped_total{node="metrics",reason="bad_mac"} 0`,
		`naam_rejected_total{node="metrics",reason="unknown_handler"}`,
		`naam_cluster_members{node="metrics"} 1`,
		`naam_jit_runs_total{core="0",kind="nic",node="metrics"} 0`,
		`naam_jit_compiles_total{node="metrics",result="ok"} 0`,
		`go_goroutines`,
	} {
		if !strings.Contains(text, want) {
			t.Errorf("metrics lack %s", want)
		}
	}
	if t.Failed() {
		t.Log(text)
	}
}

// TestPeerRegisterUnregister: a peer registers and unregisters regions
// over the wire, within the node's limits (Config.Server); one a program
// links is refused, as locally.
func TestPeerRegisterUnregister(t *testing.T) {
	a := startDemo(t, Config{Server: server.ServerConfig{MaxTenantRegisterBytes: 4096}})
	ctx := testCtx(t)
	p, err := Dial(ctx, a.Addr().String(), 0, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	if err := p.Register(ctx, "scratch", 4096, RegionOptions{Writable: true}); err != nil {
		t.Fatal(err)
	}
	if err := p.Register(ctx, "more", 8, RegionOptions{}); !errors.Is(err, nicrt.ErrControlFailed) || !strings.Contains(err.Error(), "MaxTenantRegisterBytes (4096)") {
		t.Errorf("past the tenant's cap: %v", err)
	}
	if err := p.Write(ctx, "scratch", 0, []byte("naam")); err != nil {
		t.Fatal(err)
	}
	if err := p.Unregister(ctx, "counters"); !errors.Is(err, nicrt.ErrControlFailed) || !strings.Contains(err.Error(), "linked") {
		t.Errorf("unregister a region the demo program links: %v", err)
	}
	if err := p.Unregister(ctx, "scratch"); err != nil {
		t.Fatal(err)
	}
	if _, err := p.Read(ctx, "scratch", 0, 4); !errors.Is(err, ErrNoRegion) {
		t.Errorf("read after unregister: %v", err)
	}
	if err := p.Register(ctx, "more", 8, RegionOptions{}); err != nil {
		t.Errorf("within the cap again: %v", err)
	}
}

// TestMetricsSteer: a node whose policy steers exports each handler's
// steering decisions by class, its probes and its switches, as its Stats
// count them.
func TestMetricsSteer(t *testing.T) {
	a := startDemo(t, Config{Name: "steer", NIC: nicrt.Config{Paced: true, Placement: nicrt.PolicySteer}})
	ctx := testCtx(t)
	p, err := Dial(ctx, a.Addr().String(), 0, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	var v uint64
	const calls = 200
	for range calls {
		if err := p.Call(ctx, "incr", struct{ Slot, By uint64 }{1, 1}, &v); err != nil {
			t.Fatal(err)
		}
	}
	var sc nicrt.SteerCounts
	for _, h := range a.NIC().Stats().Handlers {
		if !h.Builtin && h.Name == "incr" {
			sc = h.Steer
		}
	}
	if sc.NIC+sc.Host != calls {
		t.Fatalf("steering decisions: %+v, want %d in all", sc, calls)
	}
	text := scrapeMetrics(t, a)
	incr := `handler="demo.incr",node="steer",program="demo",tenant="1"`
	for _, want := range []string{
		fmt.Sprintf(`naam_handler_steer_decisions_total{class="nic",%s} %d`, incr, sc.NIC),
		fmt.Sprintf(`naam_handler_steer_decisions_total{class="host",%s} %d`, incr, sc.Host),
		fmt.Sprintf(`naam_handler_steer_probes_total{%s} %d`, incr, sc.Probes),
		fmt.Sprintf(`naam_handler_steer_switches_total{%s} %d`, incr, sc.Switches),
	} {
		if !strings.Contains(text, want) {
			t.Errorf("metrics lack %s", want)
		}
	}
	if t.Failed() {
		t.Log(text)
	}
}
