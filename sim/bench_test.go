package sim_test

import (
	"runtime"
	"testing"

	"github.com/naam-project/naam/sim"
)

// BenchmarkSim is naam sim's scale target: 10,000 nodes and a million
// operations of the default workload (kv, YCSB B, Zipfian keys), seed 7.
// It reports the wall time per run (ns/op), the live heap at the end of
// the run per simulated node (heap-bytes/node: every node's regions, cores
// and steering state, and the run's shared state spread over them) and
// the simulated operations per wall second.
func BenchmarkSim(b *testing.B) {
	benchSim(b, sim.Scenario{Seed: 7, Nodes: 10_000, Messages: 1_000_000})
}

// BenchmarkSimChase is the chase at the same scale: lists of 8 nodes.
func BenchmarkSimChase(b *testing.B) {
	benchSim(b, sim.Scenario{Seed: 7, Nodes: 10_000, Messages: 200_000, Workload: sim.Workload{Kind: sim.KindChase, Hops: 8, Lists: 4096}})
}

func benchSim(b *testing.B, sc sim.Scenario) {
	progs := programs(b)
	var heap uint64
	opts := sim.Options{Programs: progs, Progress: func(done, total int) {
		if done == total {
			runtime.GC()
			var ms runtime.MemStats
			runtime.ReadMemStats(&ms)
			heap = ms.HeapAlloc
		}
	}}
	runtime.GC()
	var base runtime.MemStats
	runtime.ReadMemStats(&base)
	b.ReportAllocs()
	var r *sim.Result
	for b.Loop() {
		var err error
		if r, err = sim.Run(sc, opts); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(heap-base.HeapAlloc)/float64(sc.Nodes), "heap-bytes/node")
	b.ReportMetric(float64(r.Answered)*float64(b.N)/b.Elapsed().Seconds(), "sim-ops/s")
}
