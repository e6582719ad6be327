package transport

import (
	"errors"
	"net/netip"
	"sync"
	"testing"
	"time"
)

func udpPair(ip netip.Addr, portable bool) pairFunc {
	return func(t *testing.T) (Conn, Conn) {
		a, err := ListenUDP(UDPConfig{Addr: netip.AddrPortFrom(ip, 0), Portable: portable})
		if err != nil {
			t.Fatal(err)
		}
		b, err := ListenUDP(UDPConfig{Addr: netip.AddrPortFrom(ip, 0), Portable: portable})
		if err != nil {
			a.Close()
			t.Fatal(err)
		}
		closeAll(t, a, b)
		return a, b
	}
}

func TestUDPConn4(t *testing.T) {
	testConn(t, udpPair(netip.MustParseAddr("127.0.0.1"), false))
}

func TestUDPConn4Portable(t *testing.T) {
	testConn(t, udpPair(netip.MustParseAddr("127.0.0.1"), true))
}

func TestUDPConn6(t *testing.T) {
	c, err := ListenUDP(UDPConfig{Addr: netip.MustParseAddrPort("[::1]:0")})
	if err != nil {
		t.Skipf("no IPv6 loopback here: %v", err)
	}
	c.Close()
	t.Run("own", func(t *testing.T) { testConn(t, udpPair(netip.IPv6Loopback(), false)) })
	t.Run("portable", func(t *testing.T) { testConn(t, udpPair(netip.IPv6Loopback(), true)) })
}

func TestUDPDefaultsToLoopback(t *testing.T) {
	c, err := ListenUDP(UDPConfig{})
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
	for _, portable := range []bool{false, true} {
		a, err := ListenUDP(UDPConfig{Portable: portable})
		if err != nil {
			t.Fatal(err)
		}
		b, err := ListenUDP(UDPConfig{Portable: portable})
		if err != nil {
			t.Fatal(err)
		}
		closeAll(t, a, b)
		ps := makePackets(32, 100)
		for i := range ps {
			ps[i].Addr, ps[i].N = b.LocalAddr(), 100
		}
		if n, err := a.WriteBatch(ps); n != 32 || err != nil {
			t.Fatalf("WriteBatch = %d, %v", n, err)
		}
		readN(t, b, 32)
		as, bs := a.Stats(), b.Stats()
		if as.TxPackets != 32 || as.TxBatches != 1 {
			t.Errorf("portable=%v: sender %+v, want 32 packets in 1 sendmmsg", portable, as)
		}
		if bs.RxPackets != 32 || bs.RxBatches > 8 {
			t.Errorf("portable=%v: receiver %+v, want 32 packets in at most 8 recvmmsg (8 per call)", portable, bs)
		}
	}
}

func TestUDPAddrFamily(t *testing.T) {
	a, err := ListenUDP(UDPConfig{})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	ps := []Packet{{Addr: netip.MustParseAddrPort("[::1]:9"), Buf: []byte("x"), N: 1}}
	if _, err := a.WriteBatch(ps); !errors.Is(err, ErrAddrFamily) {
		t.Errorf("IPv6 destination from an IPv4 socket: %v, want ErrAddrFamily", err)
	}
	// An IPv4-mapped destination is plain IPv4.
	ps[0].Addr = netip.AddrPortFrom(netip.AddrFrom16(loopback4(0).Addr().As16()), a.LocalAddr().Port())
	if n, err := a.WriteBatch(ps); n != 1 || err != nil {
		t.Errorf("IPv4-mapped destination: %d, %v", n, err)
	}
	if got := readN(t, a, 1); got[0].Addr != a.LocalAddr() {
		t.Errorf("source %v, want %v (unmapped)", got[0].Addr, a.LocalAddr())
	}
}

func TestUDPBufferSizes(t *testing.T) {
	const want = 1 << 20
	c, err := ListenUDP(UDPConfig{ReadBuffer: want, WriteBuffer: want})
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
	qs, err := ListenUDPQueues(UDPConfig{}, queues)
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
			ps := makePackets(8, 64)
			q.SetReadDeadline(time.Now().Add(waitLimit))
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
		c, err := ListenUDP(UDPConfig{})
		if err != nil {
			t.Fatal(err)
		}
		c.WriteBatch([]Packet{{Addr: qs[0].LocalAddr(), Buf: []byte("hi"), N: 2}})
		c.Close()
	}
	select {
	case <-allIn:
	case <-time.After(waitLimit):
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
	if _, err := ListenUDPQueues(UDPConfig{}, 0); err == nil {
		t.Error("ListenUDPQueues(0) succeeded")
	}
}

func TestUDPAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector adds allocations")
	}
	// x/net allocates the source address of each received datagram (two
	// objects); the rest of either path allocates nothing.
	for _, tc := range []struct {
		portable bool
		max      float64
	}{{false, 0}, {true, 2 * 8}} {
		a, err := ListenUDP(UDPConfig{Portable: tc.portable})
		if err != nil {
			t.Fatal(err)
		}
		b, err := ListenUDP(UDPConfig{Portable: tc.portable})
		if err != nil {
			t.Fatal(err)
		}
		w := makePackets(8, 64)
		for i := range w {
			w[i].Addr, w[i].N = b.LocalAddr(), 64
		}
		r := makePackets(8, 64)
		b.SetReadDeadline(time.Now().Add(waitLimit))
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
			t.Errorf("portable=%v: %v allocations per 8-datagram round trip, want at most %v", tc.portable, allocs, tc.max)
		}
		if w := testing.AllocsPerRun(50, func() { a.WriteBatch(w[:1]) }); w != 0 {
			t.Errorf("portable=%v: WriteBatch allocates %v times, want 0", tc.portable, w)
		}
		a.Close()
		b.Close()
	}
}

func TestUDPTruncates(t *testing.T) {
	for _, portable := range []bool{false, true} {
		c, err := ListenUDP(UDPConfig{Portable: portable})
		if err != nil {
			t.Fatal(err)
		}
		c.WriteBatch([]Packet{{Addr: c.LocalAddr(), Buf: make([]byte, 100), N: 100}})
		ps := makePackets(1, 10)
		c.SetReadDeadline(time.Now().Add(waitLimit))
		if n, err := c.ReadBatch(ps); n != 1 || err != nil || ps[0].N != 10 {
			t.Errorf("portable=%v: ReadBatch = %d, %v, N %d; want 1 datagram cut to 10 bytes", portable, n, err, ps[0].N)
		}
		if s := c.Stats(); s.RxTruncated != 1 {
			t.Errorf("portable=%v: RxTruncated = %d, want 1", portable, s.RxTruncated)
		}
		c.Close()
	}
}
