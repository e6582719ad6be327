package server

import (
	"context"
	"errors"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/naam-project/naam/nicrt"
	"github.com/naam-project/naam/nicrt/caller"

	"github.com/naam-project/naam/nicrt/transport"
	"github.com/naam-project/naam/nicrt/transport/transporttest"
)

// faultN is the number of FETCH-ADDs of each fault run: the target's
// 100,000 (about 6 s for the three loss rates), 20,000 under -race and
// 4,000 with -short; NAAM_FAULT_N sets it.
func faultN(t *testing.T) int {
	if s := os.Getenv("NAAM_FAULT_N"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 4 {
			t.Fatalf("NAAM_FAULT_N=%q", s)
		}
		return n
	}
	switch {
	case testing.Short():
		return 4_000
	case raceEnabled:
		return 20_000
	}
	return 100_000
}

// faultRun is the outcome of fetchAddStorm.
type faultRun struct {
	ok, timeouts int
	counter      uint64
	took         time.Duration
	clients      []caller.ClientStats
}

// fetchAddStorm runs n FETCH-ADDs of 1 on one counter from 4 clients with
// 8 calls in flight each, every client's datagrams passing a Lossy conn
// with faults f both ways. It checks that every call ended (with its reply
// or caller.ErrTimeout) within the deadline and that no two calls saw the same
// old value, which is what "never adds twice" looks like from outside.
func fetchAddStorm(t *testing.T, tn *testNet, n int, f transporttest.Faults, cfg caller.ClientConfig, deadline time.Duration, dial func(i int, wrap func(transport.Conn) transport.Conn) *caller.Client) faultRun {
	t.Helper()
	const clients, inFlight = 4, 8
	reg := register(t, tn.nic, tenantA, fmt.Sprintf("counter%d", time.Now().UnixNano()), 8, nicrt.RegionOptions{Writable: true})
	seen := make([]atomic.Bool, n)
	var ok, timeouts, next atomic.Int64
	var cls []*caller.Client
	for i := range clients {
		wrap := func(c transport.Conn) transport.Conn {
			l, err := transporttest.NewLossy(c, transporttest.LossyConfig{Seed: uint64(i + 1), Send: f, Recv: f})
			if err != nil {
				t.Fatal(err)
			}
			return l
		}
		cls = append(cls, dial(i, wrap))
	}
	start := time.Now()
	var wg sync.WaitGroup
	for _, cl := range cls {
		for range inFlight {
			wg.Go(func() {
				for next.Add(1) <= int64(n) {
					old, err := cl.FetchAdd(context.Background(), tenantA, reg.Ref(), 0, 1)
					switch {
					case err == nil && old < uint64(n) && !seen[old].Swap(true):
						ok.Add(1)
					case err == nil:
						t.Errorf("FETCH-ADD returned %d twice or out of range", old)
					case errors.Is(err, caller.ErrTimeout):
						timeouts.Add(1)
					default:
						t.Errorf("FETCH-ADD: %v", err)
					}
				}
			})
		}
	}
	finished := make(chan struct{})
	go func() { wg.Wait(); close(finished) }()
	select {
	case <-finished:
	case <-time.After(deadline):
		buf := make([]byte, 1<<20)
		t.Fatalf("calls still running after %v:\n%s", deadline, buf[:runtime.Stack(buf, true)])
	}
	r := faultRun{ok: int(ok.Load()), timeouts: int(timeouts.Load()), counter: counter(reg), took: time.Since(start)}
	for _, cl := range cls {
		r.clients = append(r.clients, cl.Stats())
	}
	if r.ok+r.timeouts != n {
		t.Errorf("%d calls ended with a reply and %d with a timeout, of %d", r.ok, r.timeouts, n)
	}
	return r
}

// TestFaultFetchAdd: at 1%, 10% and 30% loss,
// each with 5% duplication and 5% reordering in both directions, n
// FETCH-ADDs from 4 concurrent clients leave the counter at exactly n.
// The clients retry up to 30 times (a call fails only if all 30 tries or
// their replies are lost: 0.51^30 ≈ 2e-9 at 30% loss), so every call gets
// its reply; TestFaultTimeouts keeps the default 8 tries.
func TestFaultFetchAdd(t *testing.T) {
	n := faultN(t)
	for _, loss := range []float64{0.01, 0.10, 0.30} {
		t.Run(fmt.Sprintf("loss=%v", loss), func(t *testing.T) {
			tn := newTestNet(t, nicrt.Config{}, ServerConfig{})
			f := transporttest.Faults{Drop: loss, Duplicate: 0.05, Reorder: 0.05}
			cfg := lossyLink(caller.ClientConfig{MaxTries: 30, MaxTimeout: 10 * time.Millisecond})
			r := fetchAddStorm(t, tn, n, f, cfg, 5*time.Minute, func(i int, wrap func(transport.Conn) transport.Conn) *caller.Client {
				cfg := cfg
				cfg.Node = uint32(i + 1)
				return tn.client(t, cfg, wrap)
			})
			if r.counter != uint64(n) || r.ok != n || r.timeouts != 0 {
				t.Errorf("counter %d after %d FETCH-ADDs (%d replies, %d timeouts)", r.counter, n, r.ok, r.timeouts)
			}
			s := tn.srv.Stats()
			if s.Requests != uint64(n) {
				t.Errorf("the NIC ran %d FETCH-ADDs, want %d", s.Requests, n)
			}
			var retx uint64
			for _, c := range r.clients {
				retx += c.Retransmits
			}
			t.Logf("%d FETCH-ADDs in %v: %d retransmissions, %d answered from the reply cache, %d duplicates of running requests dropped, %d uncached replays",
				n, r.took.Round(time.Millisecond), retx, s.CacheHits, s.DuplicatesRunning, s.ReplaysUncached)
		})
	}
}

// TestFaultTimeouts keeps the default 8 tries at 30% loss: some calls end
// with caller.ErrTimeout (their request may have run, if only the replies were
// lost), every other with its reply, and the counter is the replies plus
// the timed-out calls that ran, never more.
func TestFaultTimeouts(t *testing.T) {
	n := faultN(t) / 4
	tn := newTestNet(t, nicrt.Config{}, ServerConfig{})
	f := transporttest.Faults{Drop: 0.30, Duplicate: 0.05, Reorder: 0.05}
	cfg := lossyLink(caller.ClientConfig{MaxTimeout: 2 * time.Millisecond})
	r := fetchAddStorm(t, tn, n, f, cfg, 2*time.Minute, func(i int, wrap func(transport.Conn) transport.Conn) *caller.Client {
		cfg := cfg
		cfg.Node = uint32(i + 1)
		return tn.client(t, cfg, wrap)
	})
	if r.counter < uint64(r.ok) || r.counter > uint64(r.ok+r.timeouts) {
		t.Errorf("counter %d, with %d replies and %d timeouts", r.counter, r.ok, r.timeouts)
	}
	if s := tn.srv.Stats(); s.Requests != r.counter {
		t.Errorf("the NIC ran %d FETCH-ADDs, the counter is %d", s.Requests, r.counter)
	}
	t.Logf("%d calls in %v: %d replies, %d timeouts", n, r.took.Round(time.Millisecond), r.ok, r.timeouts)
}
