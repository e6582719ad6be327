package sim_test

import (
	"encoding/json"
	"testing"

	"github.com/naam-project/naam/sim"
)

func TestSmoke(t *testing.T) {
	for _, kind := range []string{"kv", "chase", "ledger", "shift"} {
		r := run(t, sim.Scenario{Nodes: 8, Messages: 2000, Workload: sim.Workload{Kind: kind}})
		r.Timeline, r.Placements, r.HotSpots = nil, nil, nil
		b, _ := json.Marshal(r)
		t.Logf("%s", b)
	}
}
