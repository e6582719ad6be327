package kv

import (
	"context"
	"testing"
)

// BenchmarkGet: one GET of a loaded key on an in-process NIC, by message
// and by READs (go test ./examples/kv -run '^$' -bench Get).
func BenchmarkGet(b *testing.B) {
	cfg := Config{Buckets: BucketsFor(10_000), ValueSize: 64}
	n := newNode(b, cfg)[0]
	for i := range uint64(10_000) {
		if _, err := n.table.Put(KeyOf(i), make([]byte, 64)); err != nil {
			b.Fatal(err)
		}
	}
	ctx := context.Background()
	for _, c := range []struct {
		mode string
		get  func(context.Context, Key) (Reply, error)
	}{{"am", n.am.Get}, {"rdma", n.rdma.Get}} {
		b.Run(c.mode, func(b *testing.B) {
			b.ReportAllocs()
			rts, i := 0, uint64(0)
			for b.Loop() {
				rep, err := c.get(ctx, KeyOf(i%10_000))
				if err != nil {
					b.Fatal(err)
				}
				rts += rep.RoundTrips
				i += 7919
			}
			b.ReportMetric(float64(rts)/float64(b.N), "round-trips/op")
		})
	}
}
