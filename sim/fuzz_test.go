package sim_test

import (
	"errors"
	"testing"

	"github.com/naam-project/naam/sim"
)

// FuzzReadScenario: any bytes are read and validated without a panic,
// and a scenario that validates runs (kept small) without an internal
// error.
func FuzzReadScenario(f *testing.F) {
	for _, s := range []string{
		`{}`, `{"nodes": 3, "messages": 20, "workload": {"kind": "chase", "hops": 3}}`,
		`{"network": {"links": [{"from": ["0-1"], "loss": 0.5}]}, "nodes": 4}`,
		`{"events": [{"at": "1us", "kind": "fail", "nodes": [0]}, {"at": "2ms", "kind": "restart", "nodes": [0]}], "nodes": 2}`,
		`{"caller": "client", "workload": {"kind": "ledger"}, "nodes": 3}`,
	} {
		f.Add([]byte(s))
	}
	progs := programs(f)
	f.Fuzz(func(t *testing.T, b []byte) {
		sc, err := sim.ReadScenario(b)
		if err != nil || sc.Validate() != nil {
			return
		}
		if sc.Nodes > 64 || sc.Messages > 200 || sc.Clients > 64 || sc.Workload.Records > 4096 || sc.Workload.Lists > 256 || len(sc.Events) > 16 {
			return
		}
		if _, err := sim.Run(sc, sim.Options{Programs: progs}); err != nil && !isUserError(err) {
			t.Fatalf("%s: %v", b, err)
		}
	})
}

// isUserError: a run may still refuse a scenario that validates (a kv
// shard that does not fit its table); only an internal error is a bug.
func isUserError(err error) bool {
	return !errors.Is(err, sim.ErrInternal)
}
