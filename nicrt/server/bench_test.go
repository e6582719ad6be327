package server

import (
	"context"
	"fmt"
	"net"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/naam-project/naam/internal/testing/cputime"
	"github.com/naam-project/naam/internal/testing/testprog"
	"github.com/naam-project/naam/nicrt"
	"github.com/naam-project/naam/nicrt/caller"
	"github.com/naam-project/naam/nicrt/transport/transporttest"

	"github.com/naam-project/naam/nicrt/transport"
)

// Benchmarks of the network path over 127.0.0.1, each beside the plain Go
// UDP baseline of the same shape in the same run (spec/nic.md, Measured):
//
//	go test ./nicrt/server -run '^$' -bench 'Net' -benchtime 2s
//
// p50-ns and p99-ns are round trips of single calls; msgs/s counts
// completed calls (or echoed datagrams).

const netBenchPayload = 64

type netLatencies struct {
	mu sync.Mutex
	s  []time.Duration
}

func (l *netLatencies) add(s []time.Duration) {
	l.mu.Lock()
	l.s = append(l.s, s...)
	l.mu.Unlock()
}

func (l *netLatencies) report(b *testing.B, msgs int) {
	if len(l.s) > 0 {
		s := slices.Clone(l.s)
		slices.Sort(s)
		b.ReportMetric(float64(s[len(s)/2].Nanoseconds()), "p50-ns")
		b.ReportMetric(float64(s[len(s)*99/100].Nanoseconds()), "p99-ns")
	}
	b.ReportMetric(float64(msgs)/b.Elapsed().Seconds(), "msgs/s")
}

type netip = transport.Addr

// nullServer serves a NIC with a null handler on one UDP socket and
// returns a client factory, which gives each client's socket too.
func nullServer(b *testing.B) (srv *Server, dial func(node uint32) (*caller.Client, *transport.UDPConn), null uint32) {
	n, srv, keys := udpServer(b, nicrt.Config{}, 1, transport.UDPConfig{})
	p := install(b, n, tenantA, testprog.Object(b, nil, testprog.Src{Name: "null", Asm: testprog.NullAsm}))
	return srv, func(node uint32) (*caller.Client, *transport.UDPConn) {
		var conn *transport.UDPConn
		keep := func(c transport.Conn) transport.Conn { conn = c.(*transport.UDPConn); return c }
		return udpClient(b, srv, keys, caller.ClientConfig{Node: node}, transport.UDPConfig{}, keep), conn
	}, id(b, p, "null")
}

// reportSyscalls reports the server's datagrams per receive and per send
// system call: how well the batching works.
func reportSyscalls(b *testing.B, srv *Server) {
	var rx, rxb, tx, txb uint64
	for _, q := range srv.queues {
		if u, ok := q.conn.(*transport.UDPConn); ok {
			st := u.Stats()
			rx, rxb, tx, txb = rx+st.RxPackets, rxb+st.RxBatches, tx+st.TxPackets, txb+st.TxBatches
		}
	}
	if rxb > 0 && txb > 0 {
		b.ReportMetric(float64(rx)/float64(rxb), "srv-rx/call")
		b.ReportMetric(float64(tx)/float64(txb), "srv-tx/call")
	}
}

// reportRetransmits reports the retransmissions of the run's b.N calls,
// as a count and as a share of the calls: on a lossless link every one is
// spurious (its reply was late, not lost).
func reportRetransmits(b *testing.B, retx uint64) {
	b.ReportMetric(float64(retx), "retx")
	b.ReportMetric(100*float64(retx)/float64(max(b.N, 1)), "retx-%")
}

// BenchmarkNetRoundTrip: one call in flight, a null handler against a
// plain Go UDP ping-pong.
func BenchmarkNetRoundTrip(b *testing.B) {
	b.Run("plain-go", func(b *testing.B) {
		to := transporttest.PlainEchoServer(b)
		cl, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
		if err != nil {
			b.Fatal(err)
		}
		defer cl.Close()
		req, rep := make([]byte, netBenchPayload), make([]byte, 2048)
		lat := make([]time.Duration, 0, 1<<20)
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
			lat = append(lat, time.Since(t0))
		}
		l := &netLatencies{s: lat}
		l.report(b, b.N)
	})
	for _, h := range []string{"null", "fetch-add"} {
		b.Run("naam-"+h, func(b *testing.B) {
			n, srv, keys := udpServer(b, rtNIC, 1, transport.UDPConfig{})
			p := install(b, n, tenantA, testprog.Object(b, nil, testprog.Src{Name: "null", Asm: testprog.NullAsm}))
			reg := register(b, n, tenantA, "c", 8, nicrt.RegionOptions{Writable: true})
			cl := udpClient(b, srv, keys, caller.ClientConfig{Node: 1}, transport.UDPConfig{}, nil)
			null, req := id(b, p, "null"), make([]byte, netBenchPayload)
			ctx := context.Background()
			lat := make([]time.Duration, 0, 1<<20)
			b.ReportAllocs()
			for b.Loop() {
				t0 := time.Now()
				var err error
				if h == "null" {
					_, err = cl.Call(ctx, tenantA, null, req)
				} else {
					_, err = cl.FetchAdd(ctx, tenantA, reg.Ref(), 0, 1)
				}
				if err != nil {
					b.Fatal(err)
				}
				lat = append(lat, time.Since(t0))
			}
			b.StopTimer()
			l := &netLatencies{s: lat}
			l.report(b, b.N)
			reportRetransmits(b, cl.Stats().Retransmits)
		})
	}
}

// BenchmarkNetThroughput: each client keeps 8 calls in flight (8
// goroutines calling one caller.Client) against a null handler; beside it, plain
// Go UDP echo with 8 datagrams in flight per client (one syscall per
// datagram), and the batched transport echo (recvmmsg/sendmmsg, the
// ceiling of this transport) of the same shape.
func BenchmarkNetThroughput(b *testing.B) {
	const window = 8
	for _, clients := range []int{1, 2, 4} {
		b.Run(fmt.Sprintf("plain-go/clients=%d", clients), func(b *testing.B) {
			to := transporttest.PlainEchoServer(b)
			splitClients(b, clients, func(count int, lat *netLatencies) error {
				var local []time.Duration
				record := func(d time.Duration) { local = append(local, d) }
				if err := transporttest.PlainEchoLoad(to, window, netBenchPayload, count, record); err != nil {
					return err
				}
				lat.add(local)
				return nil
			})
		})
		b.Run(fmt.Sprintf("batched-echo/clients=%d", clients), func(b *testing.B) {
			to := transporttest.EchoServer(b, transport.UDPConfig{ReadBuffer: 4 << 20, WriteBuffer: 4 << 20}).LocalAddr()
			splitClients(b, clients, func(count int, lat *netLatencies) error {
				var local []time.Duration
				record := func(d time.Duration) { local = append(local, d) }
				if err := transporttest.EchoLoad(to, transport.UDPConfig{ReadBuffer: 4 << 20, WriteBuffer: 4 << 20}, window, netBenchPayload, count, record); err != nil {
					return err
				}
				lat.add(local)
				return nil
			})
		})
		b.Run(fmt.Sprintf("naam-null/clients=%d", clients), func(b *testing.B) {
			srv, dial, null := nullServer(b)
			cls := make([]*caller.Client, clients)
			for i := range cls {
				cls[i], _ = dial(uint32(i + 1))
			}
			next := atomic.Int32{}
			req := make([]byte, netBenchPayload)
			splitClients(b, clients*window, func(count int, lat *netLatencies) error {
				cl := cls[int(next.Add(1)-1)%clients]
				local := make([]time.Duration, 0, count)
				ctx := context.Background()
				for range count {
					t0 := time.Now()
					if _, err := cl.Call(ctx, tenantA, null, req); err != nil {
						return err
					}
					local = append(local, time.Since(t0))
				}
				lat.add(local)
				return nil
			})
			var retx uint64
			for _, cl := range cls {
				retx += cl.Stats().Retransmits
			}
			reportRetransmits(b, retx)
			reportSyscalls(b, srv)
		})
		// The same with Go: one goroutine per client starts 8 calls, and
		// every callback starts the next.
		b.Run(fmt.Sprintf("naam-null-go/clients=%d", clients), func(b *testing.B) {
			srv, dial, null := nullServer(b)
			req := make([]byte, netBenchPayload)
			var retx, clRx, clRxB, clTx, clTxB atomic.Uint64
			var node atomic.Uint32
			splitClients(b, clients, func(count int, lat *netLatencies) error {
				cl, conn := dial(node.Add(1))
				defer func() {
					retx.Add(cl.Stats().Retransmits)
					if conn != nil {
						st := conn.Stats()
						clRx.Add(st.RxPackets)
						clRxB.Add(st.RxBatches)
						clTx.Add(st.TxPackets)
						clTxB.Add(st.TxBatches)
					}
				}()
				if count == 0 {
					return nil
				}
				local := make([]time.Duration, 0, count)
				var mu sync.Mutex
				var started, ended int
				var failed error
				finished := make(chan struct{})
				var t0s [window]time.Time
				var slots [window]func([]byte, error)
				for i := range slots {
					slots[i] = func(_ []byte, err error) {
						mu.Lock()
						local = append(local, time.Since(t0s[i]))
						ended++
						if err != nil && failed == nil {
							failed = err
						}
						if ended == count {
							close(finished)
						}
						more := started < count
						if more {
							started++
							t0s[i] = time.Now()
						}
						mu.Unlock()
						if more {
							if err := goRetry(cl, tenantA, null, req, slots[i]); err != nil {
								b.Error(err)
							}
						}
					}
				}
				mu.Lock()
				k := min(window, count)
				started = k
				for i := range k {
					t0s[i] = time.Now()
				}
				mu.Unlock()
				for i := range k {
					if err := cl.Go(tenantA, null, req, slots[i]); err != nil {
						return err
					}
				}
				<-finished
				lat.add(local)
				return failed
			})
			reportRetransmits(b, retx.Load())
			reportSyscalls(b, srv)
			if clRxB.Load() > 0 && clTxB.Load() > 0 {
				b.ReportMetric(float64(clRx.Load())/float64(clRxB.Load()), "cl-rx/call")
				b.ReportMetric(float64(clTx.Load())/float64(clTxB.Load()), "cl-tx/call")
			}
		})
	}
}

// splitClients runs b.N calls split over workers goroutines and reports
// latency, throughput and the process's CPU time per message.
func splitClients(b *testing.B, workers int, work func(count int, lat *netLatencies) error) {
	lat := &netLatencies{}
	b.ReportAllocs()
	b.ResetTimer()
	cpu0, wall0 := cputime.Process(), time.Now()
	var wg sync.WaitGroup
	errs := make([]error, workers)
	for i := range workers {
		count := b.N / workers
		if i == 0 {
			count += b.N % workers
		}
		wg.Go(func() { errs[i] = work(count, lat) })
	}
	wg.Wait()
	b.StopTimer()
	if cpu := cputime.Process() - cpu0; cpu > 0 {
		// CPU per message (both ends, user and system) and CPUs busy: a
		// path bound by work shows both CPUs busy, one bound by hand-offs
		// and wake-ups fewer.
		b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N), "cpu-ns/msg")
		b.ReportMetric(cpu.Seconds()/time.Since(wall0).Seconds(), "cpus")
	}
	for _, err := range errs {
		if err != nil {
			b.Fatal(err)
		}
	}
	lat.report(b, b.N)
}

var rtNIC = nicrt.Config{}

// BenchmarkNetFirstCalls: a freshly started node and client, the
// client's first 8 calls at once (before it has measured a round trip:
// their timeout is caller.ClientConfig.Timeout), then 200 more from 8 goroutines
// (while the estimator warms up). Reports the retransmissions per fresh
// node of each phase and the first calls' latencies (spec/nic.md,
// Measured: the network path):
//
//	go test ./nicrt/server -run '^$' -bench NetFirstCalls -benchtime 50x
func BenchmarkNetFirstCalls(b *testing.B) {
	const first, more = 8, 25
	lat := &netLatencies{}
	var retxFirst, retxMore uint64
	req := make([]byte, netBenchPayload)
	ctx := context.Background()
	for b.Loop() {
		n, srv, keys := udpServer(b, nicrt.Config{}, 1, transport.UDPConfig{})
		p := install(b, n, tenantA, testprog.Object(b, nil, testprog.Src{Name: "null", Asm: testprog.NullAsm}))
		null := id(b, p, "null")
		cl := udpClient(b, srv, keys, caller.ClientConfig{Node: 1}, transport.UDPConfig{}, nil)
		var wg sync.WaitGroup
		ls := make([]time.Duration, first)
		t0 := time.Now()
		for i := range first {
			wg.Go(func() {
				if _, err := cl.Call(ctx, tenantA, null, req); err != nil {
					b.Error(err)
				}
				ls[i] = time.Since(t0)
			})
		}
		wg.Wait()
		lat.add(ls)
		r := cl.Stats().Retransmits
		retxFirst += r
		for range first {
			wg.Go(func() {
				for range more {
					if _, err := cl.Call(ctx, tenantA, null, req); err != nil {
						b.Error(err)
					}
				}
			})
		}
		wg.Wait()
		retxMore += cl.Stats().Retransmits - r
		cl.Close()
		srv.Close()
		n.Close()
	}
	b.StopTimer()
	slices.Sort(lat.s)
	b.ReportMetric(float64(lat.s[len(lat.s)/2].Nanoseconds()), "p50-ns")
	b.ReportMetric(float64(lat.s[len(lat.s)*99/100].Nanoseconds()), "p99-ns")
	b.ReportMetric(float64(lat.s[len(lat.s)-1].Nanoseconds()), "max-ns")
	b.ReportMetric(float64(retxFirst)/float64(b.N), "retx-first/node")
	b.ReportMetric(float64(retxMore)/float64(b.N), "retx-next/node")
}
