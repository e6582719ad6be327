package nicrt

import (
	"math"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/naam-project/naam/internal/testing/testprog"
)

func TestConfigPolicyErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		cfg  Config
		want string
	}{
		{"negative host load", Config{HostLoad: -0.1}, "HostLoad -0.1 must be in [0, 1]"},
		{"host load past 1", Config{HostLoad: 1.5}, "HostLoad 1.5 must be in [0, 1]"},
		{"host load NaN", Config{HostLoad: math.NaN()}, "HostLoad NaN must be in [0, 1]"},
		{"host placement without host cores", Config{Placement: PolicyHost, HostCores: -1}, "placement host: no host cores"},
		{"unknown placement", Config{Placement: 7}, "unknown placement 7"},
		{"weight too large", Config{Quota: TenantQuota{Weight: MaxWeight + 1}}, "Quota.Weight 65537"},
		{"negative cap", Config{Quotas: map[uint64]TenantQuota{4: {MaxQueued: -1}}}, "Quotas[4].MaxQueued -1 must not be negative"},
		{"negative partition window", Config{PartitionWindow: -time.Millisecond}, "PartitionWindow -1ms: want at least 1ms"},
		{"short partition window", Config{PartitionWindow: time.Microsecond}, "PartitionWindow 1µs: want at least 1ms"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := New(tc.cfg)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("New: %v, want %q", err, tc.want)
			}
		})
	}
	n := newNIC(t, Config{HostCores: -1})
	if err := n.SetHostLoad(2); err == nil || !strings.Contains(err.Error(), "HostLoad 2 must be in [0, 1]") {
		t.Errorf("SetHostLoad(2): %v", err)
	}
	if err := n.SetPlacement(PolicyHost); err == nil || !strings.Contains(err.Error(), "no host cores") {
		t.Errorf("SetPlacement(host): %v", err)
	}
	if err := n.SetPlacement(PolicyNIC); err != nil || n.Config().Placement != PolicyNIC {
		t.Errorf("SetPlacement(nic): %v, %v", err, n.Config().Placement)
	}
	for _, s := range []string{"auto", "nic", "host"} {
		if p, err := ParsePlacementPolicy(s); err != nil || p.String() != s {
			t.Errorf("ParsePlacementPolicy(%q) = %v, %v", s, p, err)
		}
	}
	if _, err := ParsePlacementPolicy("gpu"); err == nil || !strings.Contains(err.Error(), `placement "gpu": want auto, nic, host or steer`) {
		t.Errorf("ParsePlacementPolicy(gpu): %v", err)
	}
}

// TestPlacementPolicy holds the NIC core inside a handler's send so that
// its queue passes the spill threshold, then places a null handler and a
// host-only one under each policy and host load.
func TestPlacementPolicy(t *testing.T) {
	const N, S, F, H, X = PlaceNIC, PlaceHostSpill, PlaceHostForced, PlaceHostHelper, PlaceNone
	for _, tc := range []struct {
		name     string
		policy   PlacementPolicy
		hostLoad float64
		want     []Placement // null, null (queue past the threshold), trace
	}{
		{"auto spills", PolicyAuto, 0, []Placement{N, S, H}},
		{"nic never spills", PolicyNIC, 0, []Placement{N, N, H}},
		{"host forces", PolicyHost, 0, []Placement{F, F, H}},
		{"auto at host load 1 keeps to the NIC", PolicyAuto, 1, []Placement{N, N, X}},
		{"host at host load 1 refuses", PolicyHost, 1, []Placement{X, X, X}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := &recorder{hold: make(chan struct{}), entered: make(chan struct{}, 16)}
			n := newNIC(t, Config{NICCores: 1, HostCores: 1, RxQueueDepth: 8, SpillThreshold: 1, Outbox: out})
			p := install(t, n, 1, testprog.Object(t, nil,
				testprog.Src{Name: "send", Asm: testprog.SendAsm}, testprog.Src{Name: "null", Asm: testprog.NullAsm},
				testprog.Src{Name: "trace", Asm: testprog.TraceAsm}))
			var wg sync.WaitGroup
			done := SinkFunc(func(Reply) { wg.Done() })
			wg.Add(1)
			n.Submit(&Message{Tenant: 1, Handler: id(t, p, "send")}, done)
			<-out.entered // the NIC core is held
			if err := n.SetPlacement(tc.policy); err != nil {
				t.Fatal(err)
			}
			if err := n.SetHostLoad(tc.hostLoad); err != nil {
				t.Fatal(err)
			}
			var got []Placement
			for _, h := range []string{"null", "null", "trace"} {
				wg.Add(1)
				before := n.Stats().Placed()
				n.Submit(&Message{Tenant: 1, Handler: id(t, p, h)}, done)
				after := n.Stats().Placed()
				pl := PlaceNone
				for i := range Placement(numPlacements) {
					if after[i] > before[i] {
						pl = i
					}
				}
				got = append(got, pl)
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("placements %v, want %v", got, tc.want)
			}
			close(out.hold)
			wg.Wait()
		})
	}
}

// TestTenantQuotaAndCounters: a tenant at its cap on a core is refused as
// overloaded and counted as dropped, another tenant is not, and the
// counters name each tenant (a tenant's view holds only its own).
func TestTenantQuotaAndCounters(t *testing.T) {
	out := &recorder{hold: make(chan struct{}), entered: make(chan struct{}, 16)}
	n := newNIC(t, Config{NICCores: 1, HostCores: -1, Fair: true, Outbox: out,
		Quotas: map[uint64]TenantQuota{2: {MaxQueued: 2}}})
	obj := testprog.Object(t, nil, testprog.Src{Name: "send", Asm: testprog.SendAsm}, testprog.Src{Name: "null", Asm: testprog.NullAsm})
	p1, p2 := install(t, n, 1, obj), install(t, n, 2, obj)
	var wg sync.WaitGroup
	var mu sync.Mutex
	statuses := map[uint64][]Status{}
	submit := func(tenant uint64, h uint32) {
		wg.Add(1)
		n.Submit(&Message{Tenant: tenant, Handler: h}, SinkFunc(func(r Reply) {
			mu.Lock()
			statuses[tenant] = append(statuses[tenant], r.Status)
			mu.Unlock()
			wg.Done()
		}))
	}
	submit(1, id(t, p1, "send"))
	<-out.entered
	for range 4 {
		submit(2, id(t, p2, "null"))
		submit(1, id(t, p1, "null"))
	}
	s := n.Stats()
	byTenant := map[uint64]TenantStats{}
	for _, ts := range s.TenantCounters {
		byTenant[ts.Tenant] = ts
	}
	if got := byTenant[2]; got.Queued != 2 || got.Dropped != 2 {
		t.Errorf("tenant 2 while held: %+v", got)
	}
	if got := byTenant[1]; got.Queued != 4 || got.Dropped != 0 {
		t.Errorf("tenant 1 while held: %+v", got)
	}
	close(out.hold)
	wg.Wait()
	count := func(sts []Status, want Status) (k int) {
		for _, st := range sts {
			if st == want {
				k++
			}
		}
		return k
	}
	if count(statuses[2], StatusOverloaded) != 2 || count(statuses[2], StatusOK) != 2 || count(statuses[1], StatusOK) != 5 {
		t.Errorf("statuses %v", statuses)
	}
	s = n.Stats()
	counters := map[string]uint64{}
	for _, c := range s.Counters() {
		counters[c.Name] = c.Value
	}
	// The null handler's bound is 2 instructions, the send handler's 9.
	for name, want := range map[string]uint64{
		"tenant.1.runs": 5, "tenant.1.dropped": 0, "tenant.1.queued": 0, "tenant.2.runs": 2, "tenant.2.dropped": 2,
		"tenant.2.served_insns": 4, "tenant.2.insns": 4, "tenant.1.served_insns": 4*2 + 9,
	} {
		if got, ok := counters[name]; !ok || got != want {
			t.Errorf("%s = %d (%v), want %d", name, got, ok, want)
		}
	}
	if ts := s.ForTenant(2).TenantCounters; len(ts) != 1 || ts[0].Tenant != 2 {
		t.Errorf("ForTenant(2): %+v", ts)
	}
}

// TestHostLoadStretches: under a host load L a host core's service time is
// its run's stretched by 1 / (1 − L), and the load signals say so.
func TestHostLoadStretches(t *testing.T) {
	n := newNIC(t, Config{NICCores: 1, HostCores: 1, Paced: true, HostLoad: 0.75, Placement: PolicyHost})
	p := install(t, n, 1, testprog.Object(t, nil, testprog.Src{Name: "loop", Asm: testprog.LoopAsm}))
	rep := n.Call(&Message{Tenant: 1, Handler: id(t, p, "loop")})
	if rep.Status != StatusOK || rep.Placement != PlaceHostForced {
		t.Fatalf("%+v", rep)
	}
	l := n.Load()
	if want := float64(rep.ModelNanos) * 4; math.Abs(l.Host.ServiceNanos-want) > 4 { // ModelNanos is truncated to a nanosecond
		t.Errorf("host service %v ns, want %v (modelled %d × 4)", l.Host.ServiceNanos, want, rep.ModelNanos)
	}
	if l.HostLoad != 0.75 || l.Placement != PolicyHost || l.Host.Cores != 1 || l.NIC.Cores != 1 {
		t.Errorf("load %+v", l)
	}
}

// TestPlaceFor: the placement policy's decision over synthetic
// signals.
func TestPlaceFor(t *testing.T) {
	for _, tc := range []struct {
		policy   PlacementPolicy
		fixed    Placement
		hostOpen bool
		queued   int
		spill    int
		want     Placement
	}{
		{PolicyAuto, PlaceNIC, true, 0, 128, PlaceNIC},
		{PolicyAuto, PlaceNIC, true, 127, 128, PlaceNIC},
		{PolicyAuto, PlaceNIC, true, 128, 128, PlaceHostSpill},
		{PolicyAuto, PlaceNIC, false, 500, 128, PlaceNIC},
		{PolicyAuto, PlaceNIC, true, 500, -1, PlaceNIC},
		{PolicyNIC, PlaceNIC, true, 500, 128, PlaceNIC},
		{PolicySteer, PlaceNIC, true, 500, 128, PlaceNIC},
		{PolicyHost, PlaceNIC, true, 0, 128, PlaceHostForced},
		{PolicyHost, PlaceNIC, false, 0, 128, PlaceNone},
		{PolicyAuto, PlaceHostBudget, true, 0, 128, PlaceHostBudget},
		{PolicyNIC, PlaceHostHelper, true, 0, 128, PlaceHostHelper},
		{PolicySteer, PlaceHostBudget, false, 0, 128, PlaceNone},
	} {
		if have := PlaceFor(tc.policy, tc.fixed, tc.hostOpen, tc.queued, tc.spill); have != tc.want {
			t.Errorf("PlaceFor(%v, %v, host open %v, %d queued, spill at %d) = %v, want %v",
				tc.policy, tc.fixed, tc.hostOpen, tc.queued, tc.spill, have, tc.want)
		}
	}
}
