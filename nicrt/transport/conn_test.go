package transport

import (
	"bytes"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"testing"
	"time"
)

// The conformance suite: every Conn implementation must pass these.

// pairFunc opens two connected-by-network Conns; the test closes them.
type pairFunc func(t *testing.T) (a, b Conn)

// waitLimit bounds every blocking step of a test.
const waitLimit = 5 * time.Second

func testConn(t *testing.T, pair pairFunc) {
	t.Run("BatchRoundTrip", func(t *testing.T) { testBatchRoundTrip(t, pair) })
	t.Run("Echo", func(t *testing.T) { testEcho(t, pair) })
	t.Run("CloseUnblocksReader", func(t *testing.T) { testCloseUnblocks(t, pair) })
	t.Run("Deadline", func(t *testing.T) { testDeadline(t, pair) })
	t.Run("DeadlineChangedWhileBlocked", func(t *testing.T) { testDeadlineWhileBlocked(t, pair) })
	t.Run("AfterClose", func(t *testing.T) { testAfterClose(t, pair) })
	t.Run("BadLength", func(t *testing.T) { testBadLength(t, pair) })
}

func makePackets(n, size int) []Packet {
	ps := make([]Packet, n)
	for i := range ps {
		ps[i].Buf = make([]byte, size)
	}
	return ps
}

// readN reads until want packets have arrived or waitLimit passes.
func readN(t *testing.T, c Conn, want int) []Packet {
	t.Helper()
	got := make([]Packet, 0, want)
	ps := makePackets(8, 2048)
	c.SetReadDeadline(time.Now().Add(waitLimit))
	defer c.SetReadDeadline(time.Time{})
	for len(got) < want {
		n, err := c.ReadBatch(ps)
		if err != nil {
			t.Fatalf("after %d of %d packets: %v", len(got), want, err)
		}
		for _, p := range ps[:n] {
			got = append(got, Packet{Addr: p.Addr, Buf: bytes.Clone(p.Payload()), N: p.N})
		}
	}
	return got
}

func testBatchRoundTrip(t *testing.T, pair pairFunc) {
	a, b := pair(t)
	const n = 16
	ps := makePackets(n, 64)
	for i := range ps {
		ps[i].Addr = b.LocalAddr()
		ps[i].N = copy(ps[i].Buf, fmt.Sprintf("packet %02d", i))
	}
	if sent, err := a.WriteBatch(ps); sent != n || err != nil {
		t.Fatalf("WriteBatch = %d, %v; want %d, nil", sent, err, n)
	}
	got := readN(t, b, n)
	for i, p := range got {
		if want := fmt.Sprintf("packet %02d", i); string(p.Buf) != want {
			t.Errorf("packet %d = %q, want %q", i, p.Buf, want)
		}
		if p.Addr != a.LocalAddr() {
			t.Errorf("packet %d from %v, want %v", i, p.Addr, a.LocalAddr())
		}
	}
}

func testEcho(t *testing.T, pair pairFunc) {
	a, b := pair(t)
	done := make(chan error, 1)
	go func() {
		ps := makePackets(4, 256)
		b.SetReadDeadline(time.Now().Add(waitLimit))
		n, err := b.ReadBatch(ps)
		if err == nil {
			_, err = b.WriteBatch(ps[:n]) // the same Packets echo to their senders
		}
		done <- err
	}()
	req := []Packet{{Addr: b.LocalAddr(), Buf: []byte("ping"), N: 4}}
	if _, err := a.WriteBatch(req); err != nil {
		t.Fatal(err)
	}
	got := readN(t, a, 1)
	if string(got[0].Buf) != "ping" || got[0].Addr != b.LocalAddr() {
		t.Errorf("echo = %q from %v, want \"ping\" from %v", got[0].Buf, got[0].Addr, b.LocalAddr())
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

func testCloseUnblocks(t *testing.T, pair pairFunc) {
	_, b := pair(t)
	errc := make(chan error, 1)
	go func() {
		_, err := b.ReadBatch(makePackets(1, 64))
		errc <- err
	}()
	time.Sleep(20 * time.Millisecond) // let the reader block
	b.Close()
	select {
	case err := <-errc:
		if !errors.Is(err, ErrClosed) {
			t.Errorf("ReadBatch after Close: %v, want ErrClosed", err)
		}
	case <-time.After(waitLimit):
		t.Fatal("Close did not unblock ReadBatch")
	}
}

func testDeadline(t *testing.T, pair pairFunc) {
	_, b := pair(t)
	start := time.Now()
	b.SetReadDeadline(start.Add(30 * time.Millisecond))
	_, err := b.ReadBatch(makePackets(1, 64))
	if !IsTimeout(err) || !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("ReadBatch = %v, want deadline exceeded", err)
	}
	if el := time.Since(start); el < 25*time.Millisecond || el > waitLimit {
		t.Errorf("timed out after %v, want about 30ms", el)
	}
	// A passed deadline fails at once; clearing it makes reads block again.
	if _, err := b.ReadBatch(makePackets(1, 64)); !IsTimeout(err) {
		t.Errorf("second ReadBatch = %v, want deadline exceeded", err)
	}
}

func testDeadlineWhileBlocked(t *testing.T, pair pairFunc) {
	a, b := pair(t)
	errc := make(chan error, 1)
	go func() {
		_, err := b.ReadBatch(makePackets(1, 64))
		errc <- err
	}()
	time.Sleep(20 * time.Millisecond)
	b.SetReadDeadline(time.Now().Add(10 * time.Millisecond))
	select {
	case err := <-errc:
		if !IsTimeout(err) {
			t.Errorf("ReadBatch = %v, want deadline exceeded", err)
		}
	case <-time.After(waitLimit):
		t.Fatal("a deadline set while blocked did not end ReadBatch")
	}
	// Cleared again, the conn reads normally.
	b.SetReadDeadline(time.Time{})
	a.WriteBatch([]Packet{{Addr: b.LocalAddr(), Buf: []byte("x"), N: 1}})
	if got := readN(t, b, 1); string(got[0].Buf) != "x" {
		t.Errorf("got %q after clearing the deadline", got[0].Buf)
	}
}

func testAfterClose(t *testing.T, pair pairFunc) {
	a, b := pair(t)
	a.Close()
	if _, err := a.ReadBatch(makePackets(1, 8)); !errors.Is(err, ErrClosed) {
		t.Errorf("ReadBatch after Close: %v, want ErrClosed", err)
	}
	if _, err := a.WriteBatch([]Packet{{Addr: b.LocalAddr(), Buf: []byte("x"), N: 1}}); !errors.Is(err, ErrClosed) {
		t.Errorf("WriteBatch after Close: %v, want ErrClosed", err)
	}
}

func testBadLength(t *testing.T, pair pairFunc) {
	a, b := pair(t)
	ps := []Packet{
		{Addr: b.LocalAddr(), Buf: []byte("ok"), N: 2},
		{Addr: b.LocalAddr(), Buf: []byte("no"), N: 3},
	}
	if n, err := a.WriteBatch(ps); n != 1 || err == nil {
		t.Errorf("WriteBatch with N > len(Buf) = %d, %v; want 1 and an error", n, err)
	}
	if got := readN(t, b, 1); string(got[0].Buf) != "ok" {
		t.Errorf("got %q, want the packet before the bad one", got[0].Buf)
	}
}

func closeAll(t *testing.T, cs ...Conn) {
	t.Cleanup(func() {
		for _, c := range cs {
			c.Close()
		}
	})
}

func loopback4(port uint16) Addr {
	return netip.AddrPortFrom(netip.AddrFrom4([4]byte{127, 0, 0, 1}), port)
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
