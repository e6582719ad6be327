package nicrt_test

import (
	"testing"

	"github.com/naam-project/naam/compiler"
	"github.com/naam-project/naam/internal/testing/testprog"
	"github.com/naam-project/naam/lang"
	"github.com/naam-project/naam/nicrt"
)

// TestCostModelMatchesRuns: what CostModel says a run costs is what the
// NIC's cores charge it (Reply.ModelNanos), on a NIC core and on a host
// core: the simulator's service times are the runtime's.
func TestCostModelMatchesRuns(t *testing.T) {
	obj, err := compiler.Compile(lang.NewFileSet(), "add.naam", []byte(testprog.SteerAddSource))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		policy nicrt.PlacementPolicy
		host   bool
	}{{nicrt.PolicyNIC, false}, {nicrt.PolicyHost, true}} {
		cfg := nicrt.Config{Placement: tc.policy}
		nic, err := nicrt.New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		defer nic.Close()
		if _, err := nic.Register(1, "counter", 8, nicrt.RegionOptions{Writable: true}); err != nil {
			t.Fatal(err)
		}
		p, err := nic.Install(1, obj)
		if err != nil {
			t.Fatal(err)
		}
		id, _ := p.HandlerID("add")
		payload := make([]byte, 8)
		r := nic.Call(&nicrt.Message{Tenant: 1, Handler: id, Payload: payload})
		if r.Status != nicrt.StatusOK || r.Placement.OnHost() != tc.host {
			t.Fatalf("%v: %v on %v", tc.policy, r.Status, r.Placement)
		}
		k, err := nicrt.NewCostModel(cfg)
		if err != nil {
			t.Fatal(err)
		}
		entry := &p.Report.Entries[0]
		want := k.Insns(r.Insns, tc.host) + k.Touches(entry, []bool{false}, tc.host)
		if tc.host {
			want += k.Handoff(len(payload), len(r.Data))
		}
		if uint64(want) != r.ModelNanos {
			t.Errorf("%v: the run was charged %d ns, the cost model says %.1f", tc.policy, r.ModelNanos, want)
		}
		if b := k.Bound(entry, []bool{false}, 8, false); !tc.host && b < want {
			t.Errorf("%v: the proven bound's estimate %.1f ns is below a run's %.1f", tc.policy, b, want)
		}
		if got := k.FixedPlacement(entry); got != nicrt.PlaceNIC {
			t.Errorf("fixed placement %v", got)
		}
	}
	if s := nicrt.HostStretch(0.95); s < 19.99 || s > 20.01 {
		t.Errorf("HostStretch(0.95) = %v", s)
	}
	if _, err := nicrt.NewCostModel(nicrt.Config{NICCores: -1}); err == nil {
		t.Error("a bad config made a cost model")
	}
}
