package nicrt

import (
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"
)

// pushAll queues one task per (tenant, price) and reports the results.
func pushAll(q *rxQueue, msgs [][2]uint64) []pushResult {
	var out []pushResult
	for i, m := range msgs {
		t := task{msg: Message{Tenant: m[0], RequestID: uint64(i)}, price: m[1]}
		out = append(out, q.push(&t))
	}
	return out
}

// popOrder pops n tasks and names each by its tenant.
func popOrder(t *testing.T, q *rxQueue, n int) string {
	t.Helper()
	var b strings.Builder
	for range n {
		var tk task
		if !q.pop(&tk) {
			t.Fatal("pop: closed")
		}
		fmt.Fprintf(&b, "%d", tk.msg.Tenant)
	}
	return b.String()
}

func quotas(m map[uint64]TenantQuota) func(uint64) TenantQuota {
	c := Config{Quotas: m}.withDefaults()
	return c.quota
}

func TestDRROrder(t *testing.T) {
	for _, tc := range []struct {
		name    string
		fair    bool
		quantum uint64
		quotas  map[uint64]TenantQuota
		have    [][2]uint64 // (tenant, price) in push order
		want    string      // tenants in service order
	}{
		{"lone tenant gets everything", true, 10, nil, [][2]uint64{{1, 10}, {1, 10}, {1, 10}, {1, 10}}, "1111"},
		{"priced by bound, not count", true, 10, nil,
			[][2]uint64{{1, 10}, {1, 10}, {1, 10}, {2, 5}, {2, 5}, {2, 5}, {2, 5}}, "1221221"},
		{"equal prices alternate", true, 10, nil,
			[][2]uint64{{1, 10}, {1, 10}, {1, 10}, {2, 10}, {2, 10}, {2, 10}}, "121212"},
		{"weight 2 gets twice the instructions", true, 10, map[uint64]TenantQuota{1: {Weight: 2}},
			[][2]uint64{{1, 10}, {1, 10}, {1, 10}, {1, 10}, {2, 10}, {2, 10}, {2, 10}}, "1121122"},
		{"a bound past the quantum is not starved", true, 10, nil,
			[][2]uint64{{1, 35}, {2, 10}, {2, 10}, {2, 10}, {2, 10}, {2, 10}, {2, 10}}, "2221222"},
		{"fifo ignores tenants", false, 10, nil,
			[][2]uint64{{1, 10}, {1, 10}, {1, 10}, {2, 5}, {2, 5}}, "11122"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			q := newRxQueue(64, tc.fair, tc.quantum, quotas(tc.quotas))
			for i, res := range pushAll(q, tc.have) {
				if res != pushed {
					t.Fatalf("push %d: %d", i, res)
				}
			}
			if got := popOrder(t, q, len(tc.have)); got != tc.want {
				t.Errorf("served %s, want %s", got, tc.want)
			}
			if q.Len() != 0 {
				t.Errorf("Len %d after draining", q.Len())
			}
		})
	}
}

// TestDRRShares: two backlogged tenants' served instructions follow their
// weights whatever their messages cost.
func TestDRRShares(t *testing.T) {
	for _, tc := range []struct {
		name                  string
		price1, price2        uint64
		weight1, weight2      uint32
		wantShare1, tolerance float64 // tenant 1's share of the instructions
	}{
		{"equal", 100, 100, 1, 1, 0.5, 0.01},
		{"cheap against costly", 20, 2000, 1, 1, 0.5, 0.02},
		{"weight 3 to 1", 500, 500, 3, 1, 0.75, 0.02},
		{"weight 3 to 1, costly heavy", 1900, 30, 3, 1, 0.75, 0.03},
	} {
		t.Run(tc.name, func(t *testing.T) {
			q := newRxQueue(4096, true, 2000, quotas(map[uint64]TenantQuota{1: {Weight: tc.weight1}, 2: {Weight: tc.weight2}}))
			var served [3]uint64
			refill := func(tenant, price uint64) {
				for q.flows[tenant] == nil || q.flows[tenant].k < 100 {
					tk := task{msg: Message{Tenant: tenant}, price: price}
					if q.push(&tk) != pushed {
						t.Fatal("push refused")
					}
				}
			}
			for range 20_000 {
				refill(1, tc.price1)
				refill(2, tc.price2)
				var tk task
				q.pop(&tk)
				served[tk.msg.Tenant] += tk.price
			}
			share := float64(served[1]) / float64(served[1]+served[2])
			if share < tc.wantShare1-tc.tolerance || share > tc.wantShare1+tc.tolerance {
				t.Errorf("tenant 1's share %.3f, want %.2f ± %.2f (served %v)", share, tc.wantShare1, tc.tolerance, served[1:])
			}
		})
	}
}

// TestDRRVictimDelay is the model's isolation guarantee: however long an
// aggressor's queue, a victim's message that arrives behind it waits for
// at most one quantum of the aggressor's instructions (times its weight).
func TestDRRVictimDelay(t *testing.T) {
	const quantum = 2000
	for _, tc := range []struct {
		name          string
		fair          bool
		aggressorMsgs int
		price         uint64
		weight        uint32
		wantAtMost    uint64 // aggressor instructions served before the victim's message
	}{
		{"fair, near-budget aggressor", true, 500, 1990, 1, quantum},
		{"fair, cheap aggressor", true, 500, 10, 1, quantum},
		{"fair, weight 4 aggressor", true, 500, 1990, 4, 4 * quantum},
		{"fifo waits for the whole queue", false, 500, 1990, 1, 500 * 1990},
	} {
		t.Run(tc.name, func(t *testing.T) {
			q := newRxQueue(1024, tc.fair, quantum, quotas(map[uint64]TenantQuota{2: {Weight: tc.weight}}))
			for range tc.aggressorMsgs {
				tk := task{msg: Message{Tenant: 2}, price: tc.price}
				q.push(&tk)
			}
			// The aggressor is being served when the victim's message comes.
			var tk task
			q.pop(&tk)
			victim := task{msg: Message{Tenant: 1}, price: 30}
			if q.push(&victim) != pushed {
				t.Fatal("victim refused")
			}
			var before uint64
			for {
				q.pop(&tk)
				if tk.msg.Tenant == 1 {
					break
				}
				before += tk.price
			}
			if before > tc.wantAtMost {
				t.Errorf("%d aggressor instructions before the victim, want at most %d", before, tc.wantAtMost)
			}
			if !tc.fair && before != tc.wantAtMost-tc.price {
				t.Errorf("fifo: %d instructions before the victim, want the rest of the queue, %d", before, tc.wantAtMost-tc.price)
			}
		})
	}
}

func TestQueueCaps(t *testing.T) {
	q := newRxQueue(6, true, 10, quotas(map[uint64]TenantQuota{1: {MaxQueued: 3}}))
	got := pushAll(q, [][2]uint64{{1, 1}, {1, 1}, {1, 1}, {1, 1}, {2, 1}, {2, 1}, {2, 1}, {3, 1}, {3, 1}})
	want := []pushResult{pushed, pushed, pushed, pushQuota, pushed, pushed, pushed, pushFull, pushFull}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("push results %v, want %v", got, want)
	}
	if by := q.queuedBy(); by[1] != 3 || by[2] != 3 || len(by) != 2 {
		t.Errorf("queuedBy %v", by)
	}
	q.close()
	if res := pushAll(q, [][2]uint64{{1, 1}}); res[0] != pushClosed {
		t.Errorf("push after close: %v", res)
	}
	n := 0
	for {
		var tk task
		if !q.pop(&tk) {
			break
		}
		n++
	}
	if n != 6 {
		t.Errorf("popped %d after close, want the 6 queued", n)
	}
}

func TestQueueFlowsBounded(t *testing.T) {
	q := newRxQueue(maxFlows+10, true, 10, quotas(nil))
	for i := range maxFlows + 5 {
		tk := task{msg: Message{Tenant: uint64(i)}, price: 1}
		if q.push(&tk) != pushed {
			t.Fatalf("push %d refused", i)
		}
	}
	if len(q.flows) != maxFlows+1 || q.flows[overflowTenant].k != 5 {
		t.Errorf("%d flows, the overflow flow holds %d", len(q.flows), q.flows[overflowTenant].k)
	}
}

// TestQueueFresh: under fair queueing the first message of a tenant whose
// modelled work is done wakes a pacing core and keeps it from sleeping
// until it is served; a tenant with modelled work outstanding does not.
func TestQueueFresh(t *testing.T) {
	q := newRxQueue(8, true, 10, quotas(nil))
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	push := func(tenant uint64, enq int64) {
		tk := task{msg: Message{Tenant: tenant}, price: 1, enq: enq}
		if q.push(&tk) != pushed {
			t.Fatal("push refused")
		}
	}
	push(1, 100)
	if q.sleep(timer, time.Hour) {
		t.Fatal("slept with a fresh message queued")
	}
	var tk task
	if q.pop(&tk); !tk.fresh || q.fresh != 0 {
		t.Fatalf("popped fresh=%v, %d fresh left", tk.fresh, q.fresh)
	}
	q.ran(1, 100, 1e6) // tenant 1's work is done at 1,000,100 ns
	push(1, 200)
	if q.fresh != 0 {
		t.Errorf("a tenant with modelled work outstanding is fresh")
	}
	if !q.sleep(timer, time.Millisecond) {
		t.Errorf("a sleep was cut short with nothing fresh")
	}
	woke := make(chan bool)
	go func() { woke <- q.sleep(timer, time.Hour) }()
	for {
		q.mu.Lock()
		asleep := q.sleeping
		q.mu.Unlock()
		if asleep {
			break
		}
		runtime.Gosched()
	}
	push(2, 300)
	select {
	case full := <-woke:
		if full {
			t.Error("the sleep ran out instead of waking")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("a fresh tenant's message did not wake the sleeping core")
	}
}
