package sim_test

import (
	"testing"

	"github.com/naam-project/naam/bytecode"
	"github.com/naam-project/naam/compiler"
	"github.com/naam-project/naam/examples/kv"
	"github.com/naam-project/naam/examples/kv/kvnode"
	"github.com/naam-project/naam/examples/rpc"
	"github.com/naam-project/naam/internal/testing/testprog"
	"github.com/naam-project/naam/lang"
	"github.com/naam-project/naam/sim"
)

// programs are the workloads' programs, as naam sim compiles them.
func programs(t testing.TB) sim.Programs {
	t.Helper()
	shift, err := compiler.Compile(lang.NewFileSet(), "shift.naam", []byte(testprog.SteerAddSource))
	if err != nil {
		t.Fatal(err)
	}
	return sim.Programs{
		KV: func(buckets, probes, value uint32) (*bytecode.Object, error) {
			return kvnode.Compile(kv.Config{Buckets: buckets, Probes: probes, ValueSize: value})
		},
		Ledger: func(accounts, history uint32) (*bytecode.Object, error) {
			return rpc.Compile(rpc.Config{Accounts: accounts, History: history})
		},
		Shift: shift,
	}
}

func run(t testing.TB, sc sim.Scenario) *sim.Result {
	t.Helper()
	r, err := sim.Run(sc, sim.Options{Programs: programs(t)})
	if err != nil {
		t.Fatal(err)
	}
	return r
}
