package transport_test

import (
	"fmt"
	"net"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/naam-project/naam/nicrt/transport"
	"github.com/naam-project/naam/nicrt/transport/transporttest"
)

// Benchmarks over 127.0.0.1 only. Each sub-benchmark pair measures plain Go
// UDP (net.UDPConn, one datagram per syscall) beside this package's transport.UDPConn
// in the same run, as the baselines the NIC runtime is measured against.
//
//	go test ./nicrt/transport -run '^$' -bench . -benchtime 2s
//
// Metrics: p50-ns and p99-ns are round-trip times of single requests;
// msgs/s counts completed request-reply pairs.

const benchPayload = 64

// latencies collects round-trip samples without allocating in the loop.
type latencies struct{ s []time.Duration }

func newLatencies() *latencies { return &latencies{s: make([]time.Duration, 0, 1<<20)} }

func (l *latencies) add(d time.Duration) {
	if len(l.s) < cap(l.s) {
		l.s = append(l.s, d)
	}
}

func (l *latencies) report(b *testing.B, msgs int) {
	if len(l.s) > 0 {
		s := slices.Clone(l.s)
		slices.Sort(s)
		b.ReportMetric(float64(s[len(s)/2].Nanoseconds()), "p50-ns")
		b.ReportMetric(float64(s[len(s)*99/100].Nanoseconds()), "p99-ns")
	}
	b.ReportMetric(float64(msgs)/b.Elapsed().Seconds(), "msgs/s")
}

// benchPaths are the transport.UDPConn configurations measured beside plain Go.
var benchPaths = []struct {
	name string
	cfg  transport.UDPConfig
}{
	{"conn", transport.UDPConfig{}},
	{"conn-nooffload", transport.UDPConfig{NoOffload: true}},
	{"conn-portable", transport.UDPConfig{Portable: true}},
}

func batchServer(b *testing.B, cfg transport.UDPConfig) *transport.UDPConn {
	cfg.ReadBuffer, cfg.WriteBuffer = 1<<20, 1<<20
	return transporttest.EchoServer(b, cfg)
}

// BenchmarkPingPong: one request in flight.
func BenchmarkPingPong(b *testing.B) {
	b.Run("plain-go", func(b *testing.B) {
		to := transporttest.PlainEchoServer(b)
		cl, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
		if err != nil {
			b.Fatal(err)
		}
		defer cl.Close()
		req, rep := make([]byte, benchPayload), make([]byte, 2048)
		lat := newLatencies()
		cl.SetReadDeadline(time.Now().Add(time.Minute))
		b.ReportAllocs()
		for b.Loop() {
			t0 := time.Now()
			if _, err := cl.WriteToUDPAddrPort(req, to); err != nil {
				b.Fatal(err)
			}
			if _, _, err := cl.ReadFromUDPAddrPort(rep); err != nil {
				b.Fatal(err)
			}
			lat.add(time.Since(t0))
		}
		lat.report(b, b.N)
	})
	for _, path := range benchPaths {
		b.Run(path.name, func(b *testing.B) {
			srv := batchServer(b, path.cfg)
			cl, err := transport.ListenUDP(path.cfg)
			if err != nil {
				b.Fatal(err)
			}
			defer cl.Close()
			req := []transport.Packet{{Addr: srv.LocalAddr(), Buf: make([]byte, benchPayload), N: benchPayload}}
			rep := transporttest.MakePackets(1, 2048)
			lat := newLatencies()
			cl.SetReadDeadline(time.Now().Add(time.Minute))
			b.ReportAllocs()
			for b.Loop() {
				t0 := time.Now()
				if _, err := cl.WriteBatch(req); err != nil {
					b.Fatal(err)
				}
				if _, err := cl.ReadBatch(rep); err != nil {
					b.Fatal(err)
				}
				lat.add(time.Since(t0))
			}
			lat.report(b, b.N)
		})
	}
}

// BenchmarkEcho: each client keeps `window` requests outstanding and sends
// a new one for every reply. The plain-Go pair reads and writes one
// datagram per syscall on both sides; the batched pair reads every reply
// that is ready in one recvmmsg and sends their successors in one sendmmsg.
// The echo server is one goroutine either way. With several clients the
// work is split by hand, as b.Loop drives a single goroutine.
func BenchmarkEcho(b *testing.B) {
	const window = 8
	for _, clients := range []int{1, 2} {
		b.Run(fmt.Sprintf("plain-go/clients=%d", clients), func(b *testing.B) {
			to := transporttest.PlainEchoServer(b)
			runClients(b, clients, func(count int, lat *latencies) error {
				return transporttest.PlainEchoLoad(to, window, benchPayload, count, lat.add)
			})
		})
		for _, path := range benchPaths {
			b.Run(fmt.Sprintf("%s/clients=%d", path.name, clients), func(b *testing.B) {
				benchBatchEcho(b, clients, window, path.cfg)
			})
		}
	}
}

func benchBatchEcho(b *testing.B, clients, window int, cfg transport.UDPConfig) {
	to := batchServer(b, cfg).LocalAddr()
	cfg.ReadBuffer, cfg.WriteBuffer = 1<<20, 1<<20
	runClients(b, clients, func(count int, lat *latencies) error {
		return transporttest.EchoLoad(to, cfg, window, benchPayload, count, lat.add)
	})
}

// runClients runs b.N request-reply pairs split over the clients and
// reports latency and throughput.
func runClients(b *testing.B, clients int, client func(count int, lat *latencies) error) {
	lats := make([]*latencies, clients)
	for i := range lats {
		lats[i] = newLatencies()
	}
	b.ReportAllocs()
	b.ResetTimer()
	var wg sync.WaitGroup
	errs := make([]error, clients)
	for i := range clients {
		count := b.N / clients
		if i == 0 {
			count += b.N % clients
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = client(count, lats[i])
		}()
	}
	wg.Wait()
	b.StopTimer()
	for _, err := range errs {
		if err != nil {
			b.Fatal(err)
		}
	}
	all := newLatencies()
	for _, l := range lats {
		for _, d := range l.s {
			all.add(d)
		}
	}
	all.report(b, b.N)
}
