package clientrun_test

import (
	"context"
	"testing"
	"unsafe"

	"github.com/naam-project/naam/clientrun"
	"github.com/naam-project/naam/vm"
)

// BenchmarkKVGet is one KV GET of a present key, run at the node
// (vm.Machine.Invoke on the table, buffers reused) and at the client (a
// Runner over an in-process MemFetcher, so that the figure is the
// client's own work: the access function, the batch, the handler over its
// remote regions, with no network), with the round trips each takes.
func BenchmarkKVGet(b *testing.B) {
	w := newTwin(b, exampleObject(b, "kv/kv.naam", nil))
	const records = 500
	for i := range records {
		if _, err := w.Call(context.Background(), clientrun.Call{Handler: "put", Request: kvPut(kvKey(i), []byte("a value of twenty-four b"), 256)}); err != nil {
			b.Fatal(err)
		}
	}
	obj := w.Runner.Object()
	b.Run("node", func(b *testing.B) {
		prog := w.Runner.Program()
		m := vm.NewMachine(vm.Options{Helpers: vm.ABIHelpers(vm.NewLocalEnv(1, nil))})
		words := make([]uint64, 512)
		inv := &vm.Invocation{Entry: obj.Handlers[0].Entry, Reply: unsafe.Slice((*byte)(unsafe.Pointer(&words[0])), 4096),
			Regions: []vm.RegionMem{{Data: w.Node[0], Writable: true}}}
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			inv.Request = kvKey(i % records)
			if res, err := m.Invoke(prog, inv); err != nil || res.Code != 0 {
				b.Fatal(err, res.Code)
			}
			i++
		}
		b.ReportMetric(1, "round-trips/op")
	})
	b.Run("client", func(b *testing.B) {
		b.ReportAllocs()
		i, trips := 0, 0
		for b.Loop() {
			res, err := w.Runner.Run(context.Background(), w.Fetcher, clientrun.Call{Handler: "get", Request: kvKey(i % records)})
			if err != nil || res.Code != 0 {
				b.Fatal(err, res.Code)
			}
			trips += res.Stats.RoundTrips
			i++
		}
		b.ReportMetric(float64(trips)/float64(i), "round-trips/op")
	})
}
