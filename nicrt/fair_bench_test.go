package nicrt

import (
	"os"
	"slices"
	"testing"
	"time"

	"github.com/naam-project/naam/compiler"
	"github.com/naam-project/naam/lang"
)

// BenchmarkFairVictim is naam bench isolation on the NIC model alone, no
// network: on 2 paced NIC cores, an aggressor keeps 32 near-budget burns
// (cmd/naam/isolation.naam) in flight while a victim calls its probe one
// at a time, 1 ms apart; it reports the victim's Submit → done p50 and
// p99 with fair queueing and core partitions, with fair queueing alone
// and with one FIFO per core; solo is the victim alone (fair queueing).
// go test ./nicrt -run '^$' -bench FairVictim -benchtime 2000x.
func BenchmarkFairVictim(b *testing.B) {
	src, err := os.ReadFile("../cmd/naam/isolation.naam")
	if err != nil {
		b.Fatal(err)
	}
	obj, err := compiler.Compile(lang.NewFileSet(), "isolation.naam", src)
	if err != nil {
		b.Fatal(err)
	}
	for _, mode := range []string{"solo", "partition", "fair", "fifo"} {
		b.Run("mode="+mode, func(b *testing.B) {
			n := newNIC(b, Config{Paced: true, Fair: mode != "fifo", Partition: mode == "partition", NICCores: 2, Placement: PolicyNIC, Steering: SteerRequest})
			register(b, n, 2, "data", 8, RegionOptions{})
			register(b, n, 3, "data", 8, RegionOptions{})
			probe, burn := id(b, install(b, n, 2, obj), "probe"), id(b, install(b, n, 3, obj), "burn")
			stop, stopped := make(chan struct{}), make(chan struct{})
			sem := make(chan struct{}, 32)
			go func() {
				defer close(stopped)
				if mode == "solo" {
					return
				}
				payload := make([]byte, 8)
				for i := uint64(0); ; i++ {
					select {
					case <-stop:
						return
					case sem <- struct{}{}:
					}
					n.Submit(&Message{Tenant: 3, Handler: burn, RequestID: i, Payload: payload}, SinkFunc(func(Reply) { <-sem }))
				}
			}()
			time.Sleep(50 * time.Millisecond)
			lats := make([]time.Duration, 0, b.N)
			payload := make([]byte, 8)
			b.ResetTimer()
			for i := range b.N {
				t0 := time.Now()
				if r := n.Call(&Message{Tenant: 2, Handler: probe, RequestID: uint64(i), Payload: payload}); r.Status != StatusOK {
					b.Fatal(r.Status)
				}
				lats = append(lats, time.Since(t0))
				time.Sleep(time.Millisecond)
			}
			b.StopTimer()
			close(stop)
			<-stopped
			slices.Sort(lats)
			q := func(p float64) float64 { return float64(lats[min(int(p*float64(len(lats))), len(lats)-1)]) / 1e3 }
			b.ReportMetric(q(0.50), "victim_p50_us")
			b.ReportMetric(q(0.99), "victim_p99_us")
		})
	}
}
