package nicrt

import (
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/naam-project/naam/internal/testing/testprog"
	"github.com/naam-project/naam/nicrt/wire"
)

func TestSplitCores(t *testing.T) {
	for _, tc := range []struct {
		cores   int
		weights []uint32
		want    [][]int
	}{
		{2, []uint32{1}, [][]int{{0, 1}}},
		{2, []uint32{1, 1}, [][]int{{0}, {1}}},
		{8, []uint32{1, 1}, [][]int{{0, 1, 2, 3}, {4, 5, 6, 7}}},
		{8, []uint32{3, 1}, [][]int{{0, 1, 2, 3, 4, 5}, {6, 7}}},
		{8, []uint32{1, 1, 1}, [][]int{{0, 1, 2}, {3, 4, 5}, {6, 7}}},
		{4, []uint32{100, 1}, [][]int{{0, 1, 2}, {3}}}, // at least one core each
		{2, []uint32{1, 1, 1}, [][]int{{0}, {1}, {0}}}, // more tenants than cores: they share
		{3, []uint32{1, 1, 1}, [][]int{{0}, {1}, {2}}},
		{2, []uint32{3, 1, 1}, [][]int{{0}, {1}, {1}}}, // by weight given so far
		{2, []uint32{2, 2, 1, 1}, [][]int{{0}, {1}, {0}, {1}}},
		{0, []uint32{1}, [][]int{nil}},
		{4, nil, [][]int{}},
	} {
		t.Run(fmt.Sprintf("%d/%v", tc.cores, tc.weights), func(t *testing.T) {
			if got := splitCores(tc.cores, tc.weights); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("splitCores(%d, %v) = %v, want %v", tc.cores, tc.weights, got, tc.want)
			}
		})
	}
}

// TestPartition: with Config.Partition, two active tenants' messages run
// on disjoint NIC cores, by weight; a tenant alone again, once the other
// has been quiet for the window, gets every core; without Partition
// every tenant's messages reach every core.
func TestPartition(t *testing.T) {
	const window = 200 * time.Millisecond
	obj := testprog.Object(t, nil, testprog.Src{Name: "echo", Asm: testprog.NullAsm})
	for _, tc := range []struct {
		name      string
		partition bool
		weight2   uint32
		// want: the cores tenant 2's and tenant 3's messages may run on
		// while both are active, and tenant 2's alone.
		want2, want3, alone []int
	}{
		{"partition", true, 1, []int{0, 1}, []int{2, 3}, []int{0, 1, 2, 3}},
		{"weighted", true, 3, []int{0, 1, 2}, []int{3}, []int{0, 1, 2, 3}},
		{"off", false, 1, []int{0, 1, 2, 3}, []int{0, 1, 2, 3}, []int{0, 1, 2, 3}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n := newNIC(t, Config{NICCores: 4, Placement: PolicyNIC, Steering: SteerRequest, Fair: true,
				Partition: tc.partition, PartitionWindow: window, Quotas: map[uint64]TenantQuota{2: {Weight: tc.weight2}}})
			h2, h3 := id(t, install(t, n, 2, obj), "echo"), id(t, install(t, n, 3, obj), "echo")
			ran := func(tenant uint64, h uint32) []int {
				t.Helper()
				before := n.Stats().Cores
				for i := range 100 {
					if r := n.Call(&Message{Tenant: tenant, Handler: h, RequestID: uint64(i)}); r.Status != StatusOK {
						t.Fatalf("tenant %d: %v", tenant, r.Status)
					}
				}
				var cores []int
				for i, c := range n.Stats().Cores[:4] {
					if c.Runs > before[i].Runs {
						cores = append(cores, i)
					}
				}
				return cores
			}
			// Both active: each calls once, then each runs its 100.
			n.Call(&Message{Tenant: 2, Handler: h2})
			n.Call(&Message{Tenant: 3, Handler: h3})
			time.Sleep(window/remakeDiv + 5*time.Millisecond) // the next split knows tenant 3
			n.Call(&Message{Tenant: 2, Handler: h2})
			got2 := ran(2, h2)
			got3 := ran(3, h3)
			if !reflect.DeepEqual(got2, tc.want2) || !reflect.DeepEqual(got3, tc.want3) {
				t.Errorf("both active: tenant 2 on cores %v, tenant 3 on %v; want %v and %v", got2, got3, tc.want2, tc.want3)
			}
			// Tenant 3 quiet for more than the window: tenant 2 alone.
			time.Sleep(window + window/2)
			n.Call(&Message{Tenant: 2, Handler: h2})
			time.Sleep(window/refreshDiv + 10*time.Millisecond) // the next split drops tenant 3
			if got := ran(2, h2); !reflect.DeepEqual(got, tc.alone) {
				t.Errorf("alone: tenant 2 on cores %v, want %v", got, tc.alone)
			}
			if s := n.Stats().Partition; tc.partition && (s.Splits < 2 || s.Tenants != 1) {
				t.Errorf("partition stats %+v: want at least 2 splits and 1 tenant", s)
			} else if !tc.partition && s != (PartitionStats{}) {
				t.Errorf("partition stats %+v without Partition", s)
			}
		})
	}
}

// TestPartitionNewTenants: a stream of tenants the split does not know
// makes at most one split per 1/64 of the window, not one per message,
// and every message still runs.
func TestPartitionNewTenants(t *testing.T) {
	const window = 64 * time.Millisecond
	n := newNIC(t, Config{NICCores: 4, Partition: true, PartitionWindow: window})
	start := time.Now()
	const tenants = 5000
	for i := range uint64(tenants) {
		if r := n.Call(&Message{Tenant: 10 + i, Handler: HandlerRead}); r.Status != StatusBadRequest {
			t.Fatalf("tenant %d: %v, want bad request (an empty READ)", 10+i, r.Status)
		}
	}
	elapsed := time.Since(start)
	s := n.Stats().Partition
	if most := uint64(elapsed/(window/remakeDiv)) + 2; s.Splits > most {
		t.Errorf("%d splits in %v for %d new tenants, want at most %d", s.Splits, elapsed, tenants, most)
	}
	if s.Splits == 0 || s.Tenants == 0 {
		t.Errorf("partition stats %+v", s)
	}
}

// TestPartitionClasses: host cores are split as NIC cores are, and verbs
// (which run on NIC cores) keep to their tenant's NIC cores.
func TestPartitionClasses(t *testing.T) {
	n := newNIC(t, Config{NICCores: 2, HostCores: 2, Placement: PolicyHost, Steering: SteerRequest,
		Partition: true, PartitionWindow: time.Second})
	obj := testprog.Object(t, nil, testprog.Src{Name: "null", Asm: testprog.NullAsm})
	h2, h3 := id(t, install(t, n, 2, obj), "null"), id(t, install(t, n, 3, obj), "null")
	r2 := register(t, n, 2, "r", 64, RegionOptions{})
	n.Call(&Message{Tenant: 2, Handler: h2})
	n.Call(&Message{Tenant: 3, Handler: h3})
	time.Sleep(time.Second/remakeDiv + 5*time.Millisecond) // the next split knows tenant 3
	before := n.Stats().Cores
	for i := range 100 {
		if r := n.Call(&Message{Tenant: 2, Handler: h2, RequestID: uint64(i)}); r.Status != StatusOK {
			t.Fatal(r.Status)
		}
		read := wire.AppendRead(nil, r2.Ref(), 0, 8)
		if r := n.Call(&Message{Tenant: 2, Handler: HandlerRead, RequestID: uint64(i), Payload: read}); r.Status != StatusOK {
			t.Fatal(r.Status)
		}
	}
	var runs []uint64
	for i, c := range n.Stats().Cores {
		runs = append(runs, c.Runs-before[i].Runs)
	}
	// Cores: NIC 0, 1, then host 2, 3; tenant 2 (the lower id) owns the
	// first of each class.
	if want := []uint64{100, 0, 100, 0}; !reflect.DeepEqual(runs, want) {
		t.Errorf("runs per core %v, want %v (tenant 2's READs on NIC core 0, its handler on host core 0)", runs, want)
	}
}

// BenchmarkPartitionSplit is one split of the cores among the most
// tenants a node keeps counters for, all active.
// go test ./nicrt -run '^$' -bench PartitionSplit.
func BenchmarkPartitionSplit(b *testing.B) {
	n := newNIC(b, Config{NICCores: 8, Partition: true})
	now := n.now() + 1
	for i := range uint64(maxTenantCounters) {
		n.tenantCt.get(10 + i).lastSeen.Store(now)
	}
	b.ResetTimer()
	for range b.N {
		if p := n.split(now); len(p.nic) != maxTenantCounters {
			b.Fatalf("%d tenants in the split", len(p.nic))
		}
	}
}
