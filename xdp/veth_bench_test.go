package xdp

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"os"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/naam-project/naam/nicrt"
	"github.com/naam-project/naam/nicrt/caller"
	"github.com/naam-project/naam/nicrt/server"
	"github.com/naam-project/naam/nicrt/transport"
	"github.com/naam-project/naam/nicrt/wire"
)

// vethPayload is the request payload of the null calls, as in nicrt's
// network benchmarks; the plain UDP ping-pong sends datagrams of the same
// size (header and payload).
const vethPayload = 64

// reportLatencies reports p50 and p99 of lat in µs.
func reportLatencies(b *testing.B, lat []time.Duration) {
	if len(lat) == 0 {
		return
	}
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	b.ReportMetric(float64(lat[len(lat)/2].Nanoseconds())/1e3, "p50-µs")
	b.ReportMetric(float64(lat[len(lat)*99/100].Nanoseconds())/1e3, "p99-µs")
}

// BenchmarkVeth measures, over one veth pair between two namespaces and
// in one run, a plain Go UDP ping-pong (udp), the user-space node
// answering a null handler (am: server.Serve, the tier detached) and the
// XDP tier answering it in native mode (am-xdp), with the same client:
// round trips one at a time (p50, p99), and throughput with 4 callers of
// 32 calls in flight each (caller.Client.Go) and with one or two raw
// callers of 64 in flight each (batched, batched2). Root only.
func BenchmarkVeth(b *testing.B) {
	n := newVethNodeNoSocket(b, Config{})
	// veth runs a device's receive path (and so the XDP program) in the
	// softirq of the CPU that sent the frame: the caller's.
	// NAAM_VETH_THREADED=1 gives the node's end threaded NAPI, a kernel
	// thread of its own, as a NIC's queue has its own CPU: a wake-up more
	// per frame, but the node's work off the caller's CPU. (The device has
	// NAPI only while an XDP program is attached; the setting stays when
	// it is attached again.)
	if os.Getenv("NAAM_VETH_THREADED") == "1" {
		threaded := "/sys/class/net/" + n.pair.Dev[0] + "/threaded"
		if out, err := n.pair.Exec(0, "sh", "-c", "echo 1 > "+threaded+" && cat "+threaded); err != nil || strings.TrimSpace(string(out)) != "1" {
			b.Fatalf("threaded NAPI on the node's veth end: %v: %s", err, out)
		}
	}
	if err := n.tier.Detach(); err != nil {
		b.Fatal(err)
	}
	// The plain echo, on another port of the same address.
	echoAddr := netip.AddrPortFrom(n.pair.Addr[0], vethPort+1)
	var echo *net.UDPConn
	if err := n.pair.Run(0, func() error {
		var err error
		echo, err = net.ListenUDP("udp4", net.UDPAddrFromAddrPort(echoAddr))
		return err
	}); err != nil {
		b.Fatal(err)
	}
	defer echo.Close()
	go func() {
		buf := make([]byte, 2048)
		for {
			k, from, err := echo.ReadFromUDPAddrPort(buf)
			if err != nil {
				return
			}
			echo.WriteToUDPAddrPort(buf[:k], from)
		}
	}()
	// The user-space node on the tier's port.
	nic, err := nicrt.New(nicrt.Config{})
	if err != nil {
		b.Fatal(err)
	}
	defer nic.Close()
	obj, rep := compile(b, "null.naam", nullSource)
	prog, err := nic.Install(testTenant, obj)
	if err != nil {
		b.Fatal(err)
	}
	null := prog.Handlers()[0].ID
	if err := n.tier.Install(HandlerSpec{ID: null, Tenant: testTenant, Object: obj, Report: rep, ReplySize: 8}); err != nil {
		b.Fatal(err)
	}
	var srvConn *transport.UDPConn
	if err := n.pair.Run(0, func() error {
		var err error
		srvConn, err = transport.ListenUDP(transport.UDPConfig{Addr: n.addr, ReadBuffer: 4 << 20, WriteBuffer: 4 << 20})
		return err
	}); err != nil {
		b.Fatal(err)
	}
	srv, err := server.Serve(nic, []transport.Conn{srvConn}, server.ServerConfig{Node: 100, Keys: wire.KeyMap{testTenant: testKey(b)}})
	if err != nil {
		b.Fatal(err)
	}
	defer srv.Close()
	payload := make([]byte, vethPayload)
	nextNode := uint32(0)
	client := func() *caller.Client {
		nextNode++
		return n.client(b, nextNode, caller.ClientConfig{})
	}

	b.Run("roundtrip/udp", func(b *testing.B) {
		var cl *net.UDPConn
		if err := n.pair.Run(1, func() error {
			var err error
			cl, err = net.ListenUDP("udp4", net.UDPAddrFromAddrPort(netip.AddrPortFrom(n.pair.Addr[1], 0)))
			return err
		}); err != nil {
			b.Fatal(err)
		}
		defer cl.Close()
		req, rep := make([]byte, wire.HeaderSize+vethPayload), make([]byte, 2048)
		var lat []time.Duration
		for b.Loop() {
			start := time.Now()
			if _, err := cl.WriteToUDPAddrPort(req, echoAddr); err != nil {
				b.Fatal(err)
			}
			cl.SetReadDeadline(time.Now().Add(time.Second))
			if _, _, err := cl.ReadFromUDPAddrPort(rep); err != nil {
				b.Fatal(err)
			}
			lat = append(lat, time.Since(start))
		}
		reportLatencies(b, lat)
	})
	roundTrip := func(b *testing.B) {
		cl := client()
		var lat []time.Duration
		for b.Loop() {
			start := time.Now()
			if _, err := cl.Call(context.Background(), testTenant, null, payload); err != nil {
				b.Fatal(err)
			}
			lat = append(lat, time.Since(start))
		}
		reportLatencies(b, lat)
	}
	throughput := func(b *testing.B) {
		const callers, window = 4, 32
		clients := make([]*caller.Client, callers)
		for i := range clients {
			clients[i] = client()
		}
		b.ResetTimer()
		var done, failed atomic.Int64
		total := int64(b.N)
		start := time.Now()
		var wg sync.WaitGroup
		for _, cl := range clients {
			wg.Go(func() {
				sem := make(chan struct{}, window)
				var issued int64
				for {
					if issued = done.Load() + int64(len(sem)); issued >= total {
						break
					}
					sem <- struct{}{}
					err := cl.Go(testTenant, null, payload, func(_ []byte, err error) {
						if err != nil && failed.Add(1) == 1 {
							b.Logf("first failed call: %v", err)
						}
						done.Add(1)
						<-sem
					})
					if err != nil { // no credits: give the replies a moment
						<-sem
						time.Sleep(10 * time.Microsecond)
					}
				}
				for range window {
					sem <- struct{}{}
				}
			})
		}
		wg.Wait()
		elapsed := time.Since(start)
		b.ReportMetric(float64(done.Load())/elapsed.Seconds(), "calls/s")
		if failed.Load() > 0 {
			b.Logf("%d of %d calls failed", failed.Load(), done.Load())
		}
	}
	// batched runs raw callers: each seals its own requests and keeps a
	// window of them in flight with sendmmsg/recvmmsg, opening every
	// reply, so that the callers' own cost weighs less than
	// caller.Client's.
	batched := func(callers int) func(b *testing.B) {
		return func(b *testing.B) {
			const window = 64
			conns := make([]*transport.UDPConn, callers)
			for i := range conns {
				if err := n.pair.Run(1, func() error {
					var err error
					conns[i], err = transport.ListenUDP(transport.UDPConfig{Addr: netip.AddrPortFrom(n.pair.Addr[1], 0), ReadBuffer: 4 << 20, WriteBuffer: 4 << 20})
					return err
				}); err != nil {
					b.Fatal(err)
				}
				defer conns[i].Close()
			}
			per := b.N/callers + 1
			b.ResetTimer()
			start := time.Now()
			var wg sync.WaitGroup
			var total atomic.Int64
			for _, conn := range conns {
				nextNode++
				src := nextNode
				wg.Go(func() {
					done, err := batchedCaller(conn, testCodec(b), src, null, n.addr, payload, window, per)
					total.Add(int64(done))
					if err != nil {
						b.Error(err)
					}
				})
			}
			wg.Wait()
			b.ReportMetric(float64(total.Load())/time.Since(start).Seconds(), "calls/s")
		}
	}
	b.Run("roundtrip/am", roundTrip)
	b.Run("throughput/am", throughput)
	b.Run("batched/am", batched(1))
	b.Run("batched2/am", batched(2))
	if err := n.attach(); err != nil {
		b.Fatal(err)
	}
	b.Run("roundtrip/am-xdp", roundTrip)
	b.Run("throughput/am-xdp", throughput)
	b.Run("batched/am-xdp", batched(1))
	b.Run("batched2/am-xdp", batched(2))
	s := srv.Stats()
	b.Logf("user-space node: %d requests; tier: %d runs, %d passed up (%v)", s.Requests, counterOf(b, n.tier, "runs"),
		counterOf(b, n.tier, "pass.not_naam")+counterOf(b, n.tier, "pass.handler"), fmt.Sprint(nonzero(must(n.tier.Counters()))))
}

// batchedCaller keeps window requests of src to handler in flight until
// count replies came back, each opened with codec; it returns how many
// did.
func batchedCaller(conn *transport.UDPConn, codec *wire.Codec, src, handler uint32, to netip.AddrPort, payload []byte, window, count int) (int, error) {
	id := uint64(time.Now().UnixNano())
	reqs := make([]transport.Packet, window)
	reps := make([]transport.Packet, window)
	for i := range reps {
		reps[i].Buf = make([]byte, 2048)
		reqs[i].Buf = make([]byte, 0, 2048)
	}
	seal := func(ps []transport.Packet) error {
		for i := range ps {
			id++
			h := wire.Header{Type: wire.TypeRequest, Tenant: testTenant, Handler: handler, RequestID: id, Src: src, Dst: 100}
			buf, err := codec.Encode(ps[i].Buf[:0], &h, payload)
			if err != nil {
				return err
			}
			ps[i].Buf, ps[i].N, ps[i].Addr = buf, len(buf), to
		}
		return nil
	}
	first := min(window, count)
	if err := seal(reqs[:first]); err != nil {
		return 0, err
	}
	if _, err := conn.WriteBatch(reqs[:first]); err != nil {
		return 0, err
	}
	outstanding, done := first, 0
	for done < count {
		conn.SetReadDeadline(time.Now().Add(time.Second))
		k, err := conn.ReadBatch(reps)
		if err != nil {
			return done, fmt.Errorf("after %d replies with %d outstanding: %w", done, outstanding, err)
		}
		for i := range k {
			if _, err := codec.Decode(reps[i].Payload()); err != nil {
				return done, err
			}
		}
		done += k
		outstanding -= k
		if more := min(k, count-done-outstanding); more > 0 {
			if err := seal(reqs[:more]); err != nil {
				return done, err
			}
			if _, err := conn.WriteBatch(reqs[:more]); err != nil {
				return done, err
			}
			outstanding += more
		}
	}
	return done, nil
}
