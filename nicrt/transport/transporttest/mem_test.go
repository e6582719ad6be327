package transporttest

import (
	"errors"
	"testing"
	"time"

	"github.com/naam-project/naam/nicrt/transport"
)

func memPair(t *testing.T) (transport.Conn, transport.Conn) {
	nw := NewNetwork(MemConfig{})
	a, err := nw.Listen(transport.Addr{})
	if err != nil {
		t.Fatal(err)
	}
	b, err := nw.Listen(transport.Addr{})
	if err != nil {
		t.Fatal(err)
	}
	CloseAll(t, a, b)
	return a, b
}

func TestMemConn(t *testing.T) { TestConn(t, memPair) }

func TestMemAddresses(t *testing.T) {
	nw := NewNetwork(MemConfig{})
	a, _ := nw.Listen(transport.Addr{})
	b, _ := nw.Listen(transport.Addr{})
	if a.LocalAddr() != Loopback4(10000) || b.LocalAddr() != Loopback4(10001) {
		t.Errorf("automatic addresses %v, %v; want 127.0.0.1:10000, :10001", a.LocalAddr(), b.LocalAddr())
	}
	if _, err := nw.Listen(Loopback4(10000)); !errors.Is(err, ErrAddrInUse) {
		t.Errorf("Listen on a taken address: %v, want ErrAddrInUse", err)
	}
	a.Close()
	if c, err := nw.Listen(Loopback4(10000)); err != nil {
		t.Errorf("Listen after Close: %v", err)
	} else {
		c.Close()
	}
	b.Close()
}

func TestMemQueueFullDrops(t *testing.T) {
	nw := NewNetwork(MemConfig{QueueLen: 4})
	a, _ := nw.Listen(transport.Addr{})
	b, _ := nw.Listen(transport.Addr{})
	CloseAll(t, a, b)
	ps := MakePackets(10, 8)
	for i := range ps {
		ps[i].Addr = b.LocalAddr()
		ps[i].Buf[0] = byte(i)
		ps[i].N = 1
	}
	if n, err := a.WriteBatch(ps); n != 10 || err != nil {
		t.Fatalf("WriteBatch = %d, %v", n, err)
	}
	rd := MakePackets(16, 8)
	n, err := b.ReadBatch(rd)
	if n != 4 || err != nil {
		t.Fatalf("ReadBatch = %d, %v; want the 4 that fit", n, err)
	}
	for i := range 4 {
		if rd[i].Buf[0] != byte(i) {
			t.Errorf("packet %d = %d: the first ones must stay, later ones drop", i, rd[i].Buf[0])
		}
	}
	if s := b.Stats(); s.Dropped != 6 || s.Received != 4 {
		t.Errorf("receiver stats %+v, want Dropped 6, Received 4", s)
	}
	if s := a.Stats(); s.Sent != 10 || s.NoRoute != 0 {
		t.Errorf("sender stats %+v, want Sent 10", s)
	}
}

func TestMemNoRouteAndLimits(t *testing.T) {
	nw := NewNetwork(MemConfig{MaxDatagram: 100})
	a, _ := nw.Listen(transport.Addr{})
	defer a.Close()
	if n, err := a.WriteBatch([]transport.Packet{{Addr: Loopback4(9), Buf: []byte("lost"), N: 4}}); n != 1 || err != nil {
		t.Errorf("WriteBatch to nobody = %d, %v; want 1, nil (lost like UDP)", n, err)
	}
	if s := a.Stats(); s.NoRoute != 1 {
		t.Errorf("NoRoute = %d, want 1", s.NoRoute)
	}
	big := make([]byte, 101)
	if _, err := a.WriteBatch([]transport.Packet{{Addr: a.LocalAddr(), Buf: big, N: 101}}); !errors.Is(err, transport.ErrTooLarge) {
		t.Errorf("oversized WriteBatch: %v, want transport.ErrTooLarge", err)
	}
}

func TestMemTruncates(t *testing.T) {
	nw := NewNetwork(MemConfig{})
	a, _ := nw.Listen(transport.Addr{})
	defer a.Close()
	a.WriteBatch([]transport.Packet{{Addr: a.LocalAddr(), Buf: []byte("abcdef"), N: 6}})
	ps := MakePackets(1, 3)
	if n, err := a.ReadBatch(ps); n != 1 || err != nil || string(ps[0].Payload()) != "abc" {
		t.Fatalf("ReadBatch = %d, %v, %q; want the first 3 bytes", n, err, ps[0].Payload())
	}
	if s := a.Stats(); s.Truncated != 1 {
		t.Errorf("Truncated = %d, want 1", s.Truncated)
	}
}

// Several readers of one endpoint all finish when enough packets come.
func TestMemConcurrentReaders(t *testing.T) {
	a, b := memPair(t)
	const readers, each = 4, 50
	done := make(chan int, readers)
	for range readers {
		go func() {
			got := 0
			ps := MakePackets(3, 8)
			b.SetReadDeadline(time.Now().Add(WaitLimit))
			for got < each {
				n, err := b.ReadBatch(ps[:min(3, each-got)])
				if err != nil {
					break
				}
				got += n
			}
			done <- got
		}()
	}
	ps := MakePackets(1, 8)
	ps[0].Addr, ps[0].N = b.LocalAddr(), 1
	for range readers * each {
		a.WriteBatch(ps)
		time.Sleep(10 * time.Microsecond) // stay under the queue length
	}
	for range readers {
		if got := <-done; got != each {
			t.Errorf("a reader got %d packets, want %d", got, each)
		}
	}
}

func TestMemAllocs(t *testing.T) {
	a, b := memPair(t)
	w := MakePackets(8, 64)
	for i := range w {
		w[i].Addr, w[i].N = b.LocalAddr(), 64
	}
	r := MakePackets(8, 64)
	allocs := testing.AllocsPerRun(100, func() {
		a.WriteBatch(w)
		if n, err := b.ReadBatch(r); n != 8 || err != nil {
			t.Fatalf("ReadBatch = %d, %v", n, err)
		}
	})
	if allocs != 0 {
		t.Errorf("%v allocations per batch round trip, want 0", allocs)
	}
}
