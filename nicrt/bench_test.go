package nicrt

import (
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/naam-project/naam/internal/testing/testprog"

	"github.com/naam-project/naam/nicrt/wire"
)

// installMany installs count null handlers, ten per object, one object per
// tenant, and returns their ids with their tenants.
func installMany(b *testing.B, n *NIC, count int) []Message {
	b.Helper()
	var hs []testprog.Src
	for i := range 10 {
		hs = append(hs, testprog.Src{Name: fmt.Sprintf("h%d", i), Asm: testprog.NullAsm})
	}
	o := testprog.Object(b, nil, hs...)
	var msgs []Message
	for tn := 0; len(msgs) < count; tn++ {
		p := install(b, n, uint64(tn), o)
		for _, h := range p.Handlers() {
			if len(msgs) < count {
				msgs = append(msgs, Message{Tenant: uint64(tn), Handler: h.ID, SrcNode: 1})
			}
		}
	}
	return msgs
}

// BenchmarkDispatch measures the dispatch proper (lookup, tenant check,
// steering hash) with 1 to 10,000 handlers installed: "hot" names one
// handler every time, "spread" walks all of them in a random order.
func BenchmarkDispatch(b *testing.B) {
	for _, count := range []int{1, 100, 1_000, 10_000} {
		n := newNIC(b, Config{})
		msgs := installMany(b, n, count)
		rand.New(rand.NewPCG(1, 2)).Shuffle(len(msgs), func(i, j int) { msgs[i], msgs[j] = msgs[j], msgs[i] })
		for _, mode := range []string{"hot", "spread"} {
			b.Run(fmt.Sprintf("handlers=%d/%s", count, mode), func(b *testing.B) {
				b.ReportAllocs()
				var sink uint64
				i := 0
				for b.Loop() {
					m := &msgs[0]
					if mode == "spread" {
						m = &msgs[i%len(msgs)]
						i++
					}
					h, st := n.lookup(m)
					if st != StatusOK {
						b.Fatal(st)
					}
					sink += n.steer(m) + uint64(h.entry)
				}
				_ = sink
			})
		}
	}
}

// BenchmarkNull is the Submit→done latency of a null handler, one message
// outstanding, with 1 and 1,000 handlers installed.
func BenchmarkNull(b *testing.B) {
	for _, count := range []int{1, 1_000} {
		b.Run(fmt.Sprintf("handlers=%d", count), func(b *testing.B) {
			n := newNIC(b, Config{})
			msgs := installMany(b, n, count)
			msg := msgs[len(msgs)-1]
			ch := make(chan Status, 1)
			done := func(r Reply) { ch <- r.Status }
			b.ReportAllocs()
			for b.Loop() {
				n.Submit(&msg, SinkFunc(done))
				if st := <-ch; st != StatusOK {
					b.Fatal(st)
				}
			}
		})
	}
}

// BenchmarkNullThroughput keeps a window of messages outstanding, spread
// over the NIC cores, and reports messages per second.
func BenchmarkNullThroughput(b *testing.B) {
	for _, window := range []int{8, 64} {
		b.Run(fmt.Sprintf("window=%d", window), func(b *testing.B) {
			n := newNIC(b, Config{Steering: SteerRequest})
			msg := installMany(b, n, 1)[0]
			sem := make(chan struct{}, window)
			var wg sync.WaitGroup
			done := func(r Reply) {
				if r.Status != StatusOK {
					panic(r.Status)
				}
				<-sem
				wg.Done()
			}
			b.ReportAllocs()
			start := time.Now()
			var req uint64
			for b.Loop() {
				sem <- struct{}{}
				wg.Add(1)
				req++
				msg.RequestID = req
				n.Submit(&msg, SinkFunc(done))
			}
			wg.Wait()
			b.ReportMetric(float64(req)/time.Since(start).Seconds(), "msgs/s")
		})
	}
}

// BenchmarkFetchAdd is the Submit→done latency of a FETCH-ADD verb.
func BenchmarkFetchAdd(b *testing.B) {
	n := newNIC(b, Config{})
	r := register(b, n, 1, "c", 8, RegionOptions{Writable: true})
	msg := Message{Tenant: 1, Handler: HandlerFetchAdd, Payload: wire.AppendFetchAdd(nil, r.Ref(), 0, 1)}
	ch := make(chan Status, 1)
	done := func(r Reply) { ch <- r.Status }
	b.ReportAllocs()
	for b.Loop() {
		n.Submit(&msg, SinkFunc(done))
		if st := <-ch; st != StatusOK {
			b.Fatal(st)
		}
	}
}
