package transport_test

import (
	"bytes"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/naam-project/naam/nicrt/transport"
	"github.com/naam-project/naam/nicrt/transport/transporttest"
)

// udpPair opens two sockets on ip configured as cfg.
func udpPair(ip netip.Addr, cfg transport.UDPConfig) transporttest.Pair {
	return func(t *testing.T) (transport.Conn, transport.Conn) {
		cfg.Addr = netip.AddrPortFrom(ip, 0)
		a, err := transport.ListenUDP(cfg)
		if err != nil {
			t.Fatal(err)
		}
		b, err := transport.ListenUDP(cfg)
		if err != nil {
			a.Close()
			t.Fatal(err)
		}
		transporttest.CloseAll(t, a, b)
		return a, b
	}
}

// udpPaths are the UDPConn configurations every UDP test runs on.
var udpPaths = []struct {
	name string
	cfg  transport.UDPConfig
}{
	{"own", transport.UDPConfig{}},
	{"own-nooffload", transport.UDPConfig{NoOffload: true}},
	{"portable", transport.UDPConfig{Portable: true}},
}

func TestUDPConn4(t *testing.T) {
	for _, path := range udpPaths {
		t.Run(path.name, func(t *testing.T) { transporttest.TestConn(t, udpPair(netip.MustParseAddr("127.0.0.1"), path.cfg)) })
	}
}

func TestUDPConn6(t *testing.T) {
	c, err := transport.ListenUDP(transport.UDPConfig{Addr: netip.MustParseAddrPort("[::1]:0")})
	if err != nil {
		t.Skipf("no IPv6 loopback here: %v", err)
	}
	c.Close()
	for _, path := range udpPaths {
		t.Run(path.name, func(t *testing.T) { transporttest.TestConn(t, udpPair(netip.IPv6Loopback(), path.cfg)) })
	}
}

func TestUDPDefaultsToLoopback(t *testing.T) {
	c, err := transport.ListenUDP(transport.UDPConfig{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if a := c.LocalAddr(); !a.Addr().IsLoopback() || !a.Addr().Is4() || a.Port() == 0 {
		t.Errorf("LocalAddr = %v, want 127.0.0.1 with a picked port", a)
	}
}

// One WriteBatch of 32 datagrams is one sendmmsg; the receiver gets them in
// few recvmmsg calls.
func TestUDPBatching(t *testing.T) {
	for _, path := range udpPaths {
		a, err := transport.ListenUDP(path.cfg)
		if err != nil {
			t.Fatal(err)
		}
		b, err := transport.ListenUDP(path.cfg)
		if err != nil {
			t.Fatal(err)
		}
		transporttest.CloseAll(t, a, b)
		ps := transporttest.MakePackets(32, 100)
		for i := range ps {
			ps[i].Addr, ps[i].N = b.LocalAddr(), 100
		}
		if n, err := a.WriteBatch(ps); n != 32 || err != nil {
			t.Fatalf("WriteBatch = %d, %v", n, err)
		}
		transporttest.ReadN(t, b, 32)
		as, bs := a.Stats(), b.Stats()
		if as.TxPackets != 32 || as.TxBatches != 1 {
			t.Errorf("%s: sender %+v, want 32 packets in 1 sendmmsg", path.name, as)
		}
		if bs.RxPackets != 32 || bs.RxBatches > 8 {
			t.Errorf("%s: receiver %+v, want 32 packets in at most 8 reads (8 per call)", path.name, bs)
		}
	}
}

func TestUDPAddrFamily(t *testing.T) {
	a, err := transport.ListenUDP(transport.UDPConfig{})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	ps := []transport.Packet{{Addr: netip.MustParseAddrPort("[::1]:9"), Buf: []byte("x"), N: 1}}
	if _, err := a.WriteBatch(ps); !errors.Is(err, transport.ErrAddrFamily) {
		t.Errorf("IPv6 destination from an IPv4 socket: %v, want transport.ErrAddrFamily", err)
	}
	// An IPv4-mapped destination is plain IPv4.
	ps[0].Addr = netip.AddrPortFrom(netip.AddrFrom16(transporttest.Loopback4(0).Addr().As16()), a.LocalAddr().Port())
	if n, err := a.WriteBatch(ps); n != 1 || err != nil {
		t.Errorf("IPv4-mapped destination: %d, %v", n, err)
	}
	if got := transporttest.ReadN(t, a, 1); got[0].Addr != a.LocalAddr() {
		t.Errorf("source %v, want %v (unmapped)", got[0].Addr, a.LocalAddr())
	}
}

func TestUDPBufferSizes(t *testing.T) {
	const want = 1 << 20
	c, err := transport.ListenUDP(transport.UDPConfig{ReadBuffer: want, WriteBuffer: want})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	r, w, err := c.BufferSizes()
	if err != nil {
		t.Skipf("cannot read socket buffer sizes here: %v", err)
	}
	// Linux doubles the request, capped at net.core.rmem_max/wmem_max.
	if r < want && r < readSysctl(t, "/proc/sys/net/core/rmem_max") {
		t.Errorf("SO_RCVBUF = %d, want at least %d", r, want)
	}
	if w < want && w < readSysctl(t, "/proc/sys/net/core/wmem_max") {
		t.Errorf("SO_SNDBUF = %d, want at least %d", w, want)
	}
}

// Several rx queues on one port: flows from many client sockets spread
// over all of them, and each datagram arrives exactly once.
func TestUDPReusePortQueues(t *testing.T) {
	const queues, clients = 4, 64
	qs, err := transport.ListenUDPQueues(transport.UDPConfig{}, queues)
	if err != nil {
		t.Skipf("SO_REUSEPORT unavailable: %v", err)
	}
	port := qs[0].LocalAddr().Port()
	for _, q := range qs {
		defer q.Close()
		if q.LocalAddr().Port() != port {
			t.Fatalf("queue on %v, want port %d", q.LocalAddr(), port)
		}
	}
	counts := make([]int, queues)
	var wg sync.WaitGroup
	var mu sync.Mutex
	total := 0
	allIn := make(chan struct{})
	for i, q := range qs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ps := transporttest.MakePackets(8, 64)
			q.SetReadDeadline(time.Now().Add(transporttest.WaitLimit))
			for {
				n, err := q.ReadBatch(ps)
				if err != nil {
					return // closed or deadline
				}
				mu.Lock()
				counts[i] += n
				total += n
				if total == clients {
					close(allIn)
				}
				mu.Unlock()
			}
		}()
	}
	for range clients {
		c, err := transport.ListenUDP(transport.UDPConfig{})
		if err != nil {
			t.Fatal(err)
		}
		c.WriteBatch([]transport.Packet{{Addr: qs[0].LocalAddr(), Buf: []byte("hi"), N: 2}})
		c.Close()
	}
	select {
	case <-allIn:
	case <-time.After(transporttest.WaitLimit):
	}
	for _, q := range qs {
		q.Close()
	}
	wg.Wait()
	if total != clients {
		t.Fatalf("queues got %d datagrams, want %d", total, clients)
	}
	// 64 flows hashed over 4 queues leave one empty with probability ~4e-8.
	for i, n := range counts {
		if n == 0 {
			t.Errorf("queue %d received nothing (counts %v)", i, counts)
		}
	}
	t.Logf("datagrams per queue: %v", counts)
}

func TestUDPQueuesNeedOne(t *testing.T) {
	if _, err := transport.ListenUDPQueues(transport.UDPConfig{}, 0); err == nil {
		t.Error("transport.ListenUDPQueues(0) succeeded")
	}
}

func TestUDPAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector adds allocations")
	}
	// x/net allocates the source address of each received datagram (two
	// objects); the rest of either path allocates nothing.
	for _, path := range udpPaths {
		tc := struct {
			name string
			max  float64
		}{path.name, 0}
		if path.cfg.Portable {
			tc.max = 2 * 8
		}
		a, err := transport.ListenUDP(path.cfg)
		if err != nil {
			t.Fatal(err)
		}
		b, err := transport.ListenUDP(path.cfg)
		if err != nil {
			t.Fatal(err)
		}
		w := transporttest.MakePackets(8, 64)
		for i := range w {
			w[i].Addr, w[i].N = b.LocalAddr(), 64
		}
		r := transporttest.MakePackets(8, 64)
		b.SetReadDeadline(time.Now().Add(transporttest.WaitLimit))
		allocs := testing.AllocsPerRun(50, func() {
			if n, err := a.WriteBatch(w); n != 8 || err != nil {
				t.Fatalf("WriteBatch = %d, %v", n, err)
			}
			for got := 0; got < 8; {
				n, err := b.ReadBatch(r)
				if err != nil {
					t.Fatal(err)
				}
				got += n
			}
		})
		if allocs > tc.max {
			t.Errorf("%s: %v allocations per 8-datagram round trip, want at most %v", tc.name, allocs, tc.max)
		}
		if w := testing.AllocsPerRun(50, func() { a.WriteBatch(w[:1]) }); w != 0 {
			t.Errorf("%s: WriteBatch allocates %v times, want 0", tc.name, w)
		}
		one := testing.AllocsPerRun(50, func() {
			if n, err := b.ReadBatch(r[:1]); n != 1 || err != nil {
				t.Fatalf("ReadBatch = %d, %v", n, err)
			}
		})
		if one > tc.max/8 {
			t.Errorf("%s: a one-datagram ReadBatch allocates %v times, want at most %v", tc.name, one, tc.max/8)
		}
		a.Close()
		b.Close()
	}
}

// Datagrams longer than the buffer are cut, on the one-datagram path
// (recvfrom) and the batch path (recvmmsg) alike.
func TestUDPTruncates(t *testing.T) {
	for _, path := range udpPaths {
		for _, batch := range []int{1, 4} {
			c, err := transport.ListenUDP(path.cfg)
			if err != nil {
				t.Fatal(err)
			}
			c.WriteBatch([]transport.Packet{{Addr: c.LocalAddr(), Buf: make([]byte, 100), N: 100}})
			ps := transporttest.MakePackets(batch, 10)
			c.SetReadDeadline(time.Now().Add(transporttest.WaitLimit))
			if n, err := c.ReadBatch(ps); n != 1 || err != nil || ps[0].N != 10 || ps[0].Addr != c.LocalAddr() {
				t.Errorf("%s batch=%d: ReadBatch = %d, %v, N %d from %v; want 1 datagram cut to 10 bytes",
					path.name, batch, n, err, ps[0].N, ps[0].Addr)
			}
			if s := c.Stats(); s.RxTruncated != 1 {
				t.Errorf("%s batch=%d: RxTruncated = %d, want 1", path.name, batch, s.RxTruncated)
			}
			c.Close()
		}
	}
}

// Trains: runs of equal datagrams to one address leave as one message
// (GSO) and may arrive as one (GRO); the receivers still see every
// datagram, in order, with its own length and source.
func TestUDPOffloadTrains(t *testing.T) {
	for _, path := range udpPaths {
		t.Run(path.name, func(t *testing.T) {
			a, _ := transport.ListenUDP(path.cfg)
			b, _ := transport.ListenUDP(path.cfg)
			c, _ := transport.ListenUDP(path.cfg)
			transporttest.CloseAll(t, a, b, c)
			type want struct {
				to  transport.Conn
				len int
			}
			var plan []want
			add := func(to transport.Conn, n, size int) {
				for range n {
					plan = append(plan, want{to, size})
				}
			}
			add(b, 10, 100)  // a train
			add(b, 1, 50)    // a shorter one ends it
			add(c, 5, 100)   // another address
			add(b, 3, 0)     // empty datagrams go alone
			add(b, 150, 64)  // longer than a train may be (64)
			add(c, 40, 2000) // more bytes than a train may hold
			add(b, 1, 7)
			ps := make([]transport.Packet, len(plan))
			for i, w := range plan {
				ps[i] = transport.Packet{Addr: w.to.LocalAddr(), Buf: make([]byte, w.len), N: w.len}
				for j := range ps[i].Buf {
					ps[i].Buf[j] = byte(i)
				}
			}
			if n, err := a.WriteBatch(ps); n != len(ps) || err != nil {
				t.Fatalf("WriteBatch = %d, %v; want %d", n, err, len(ps))
			}
			for _, rx := range []transport.Conn{b, c} {
				var expect []int
				for i, w := range plan {
					if w.to == rx {
						expect = append(expect, i)
					}
				}
				// Read 3 at a time so that trains are handed out across calls.
				got := make([]transport.Packet, 0, len(expect))
				rd := transporttest.MakePackets(3, 4096)
				rx.SetReadDeadline(time.Now().Add(transporttest.WaitLimit))
				for len(got) < len(expect) {
					n, err := rx.ReadBatch(rd)
					if err != nil {
						t.Fatalf("after %d of %d: %v", len(got), len(expect), err)
					}
					for _, p := range rd[:n] {
						got = append(got, transport.Packet{Addr: p.Addr, Buf: bytes.Clone(p.Payload()), N: p.N})
					}
				}
				for k, i := range expect {
					p := got[k]
					if p.N != plan[i].len || p.Addr != a.LocalAddr() || (p.N > 0 && (p.Buf[0] != byte(i) || p.Buf[p.N-1] != byte(i))) {
						t.Fatalf("datagram %d: %d bytes from %v starting %v; want packet %d, %d bytes from %v",
							k, p.N, p.Addr, p.Buf[:min(p.N, 1)], i, plan[i].len, a.LocalAddr())
					}
				}
			}
			as, bs := a.Stats(), b.Stats()
			offload := !path.cfg.NoOffload && !path.cfg.Portable
			if offload && as.TxGSO == 0 {
				t.Errorf("no train left with GSO on: %+v", as)
			}
			if !offload && (as.TxGSO != 0 || bs.RxGRO != 0) {
				t.Errorf("trains without offload: sender %+v, receiver %+v", as, bs)
			}
			t.Logf("sender %+v; receiver %+v", as, bs)
		})
	}
}
func readSysctl(t *testing.T, path string) int {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0
	}
	var n int
	fmt.Sscan(string(b), &n)
	return n
}
