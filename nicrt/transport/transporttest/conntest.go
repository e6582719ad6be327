package transporttest

import (
	"bytes"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"testing"
	"time"

	"github.com/naam-project/naam/nicrt/transport"
)

// The conformance suite: every transport.Conn must pass it (TestConn),
// as golang.org/x/net/nettest.TestConn checks a net.Conn.

// Pair opens two Conns that reach each other; the test closes them.
type Pair func(t *testing.T) (a, b transport.Conn)

// WaitLimit bounds every blocking step of a test.
const WaitLimit = 5 * time.Second

// TestConn runs the conformance suite on the Conns pair opens.
func TestConn(t *testing.T, pair Pair) {
	t.Run("BatchRoundTrip", func(t *testing.T) { testBatchRoundTrip(t, pair) })
	t.Run("Echo", func(t *testing.T) { testEcho(t, pair) })
	t.Run("CloseUnblocksReader", func(t *testing.T) { testCloseUnblocks(t, pair) })
	t.Run("Deadline", func(t *testing.T) { testDeadline(t, pair) })
	t.Run("DeadlineChangedWhileBlocked", func(t *testing.T) { testDeadlineWhileBlocked(t, pair) })
	t.Run("AfterClose", func(t *testing.T) { testAfterClose(t, pair) })
	t.Run("BadLength", func(t *testing.T) { testBadLength(t, pair) })
}

// MakePackets returns n packets with buffers of size bytes.
func MakePackets(n, size int) []transport.Packet {
	ps := make([]transport.Packet, n)
	for i := range ps {
		ps[i].Buf = make([]byte, size)
	}
	return ps
}

// ReadN reads until want packets have arrived or WaitLimit passes.
func ReadN(t *testing.T, c transport.Conn, want int) []transport.Packet {
	t.Helper()
	got := make([]transport.Packet, 0, want)
	ps := MakePackets(8, 2048)
	c.SetReadDeadline(time.Now().Add(WaitLimit))
	defer c.SetReadDeadline(time.Time{})
	for len(got) < want {
		n, err := c.ReadBatch(ps)
		if err != nil {
			t.Fatalf("after %d of %d packets: %v", len(got), want, err)
		}
		for _, p := range ps[:n] {
			got = append(got, transport.Packet{Addr: p.Addr, Buf: bytes.Clone(p.Payload()), N: p.N})
		}
	}
	return got
}

func testBatchRoundTrip(t *testing.T, pair Pair) {
	a, b := pair(t)
	const n = 16
	ps := MakePackets(n, 64)
	for i := range ps {
		ps[i].Addr = b.LocalAddr()
		ps[i].N = copy(ps[i].Buf, fmt.Sprintf("packet %02d", i))
	}
	if sent, err := a.WriteBatch(ps); sent != n || err != nil {
		t.Fatalf("WriteBatch = %d, %v; want %d, nil", sent, err, n)
	}
	got := ReadN(t, b, n)
	for i, p := range got {
		if want := fmt.Sprintf("packet %02d", i); string(p.Buf) != want {
			t.Errorf("packet %d = %q, want %q", i, p.Buf, want)
		}
		if p.Addr != a.LocalAddr() {
			t.Errorf("packet %d from %v, want %v", i, p.Addr, a.LocalAddr())
		}
	}
}

func testEcho(t *testing.T, pair Pair) {
	a, b := pair(t)
	done := make(chan error, 1)
	go func() {
		ps := MakePackets(4, 256)
		b.SetReadDeadline(time.Now().Add(WaitLimit))
		n, err := b.ReadBatch(ps)
		if err == nil {
			_, err = b.WriteBatch(ps[:n]) // the same Packets echo to their senders
		}
		done <- err
	}()
	req := []transport.Packet{{Addr: b.LocalAddr(), Buf: []byte("ping"), N: 4}}
	if _, err := a.WriteBatch(req); err != nil {
		t.Fatal(err)
	}
	got := ReadN(t, a, 1)
	if string(got[0].Buf) != "ping" || got[0].Addr != b.LocalAddr() {
		t.Errorf("echo = %q from %v, want \"ping\" from %v", got[0].Buf, got[0].Addr, b.LocalAddr())
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

func testCloseUnblocks(t *testing.T, pair Pair) {
	_, b := pair(t)
	errc := make(chan error, 1)
	go func() {
		_, err := b.ReadBatch(MakePackets(1, 64))
		errc <- err
	}()
	time.Sleep(20 * time.Millisecond) // let the reader block
	b.Close()
	select {
	case err := <-errc:
		if !errors.Is(err, transport.ErrClosed) {
			t.Errorf("ReadBatch after Close: %v, want transport.ErrClosed", err)
		}
	case <-time.After(WaitLimit):
		t.Fatal("Close did not unblock ReadBatch")
	}
}

func testDeadline(t *testing.T, pair Pair) {
	_, b := pair(t)
	start := time.Now()
	b.SetReadDeadline(start.Add(30 * time.Millisecond))
	_, err := b.ReadBatch(MakePackets(1, 64))
	if !transport.IsTimeout(err) || !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("ReadBatch = %v, want deadline exceeded", err)
	}
	if el := time.Since(start); el < 25*time.Millisecond || el > WaitLimit {
		t.Errorf("timed out after %v, want about 30ms", el)
	}
	// A passed deadline fails at once; clearing it makes reads block again.
	if _, err := b.ReadBatch(MakePackets(1, 64)); !transport.IsTimeout(err) {
		t.Errorf("second ReadBatch = %v, want deadline exceeded", err)
	}
}

func testDeadlineWhileBlocked(t *testing.T, pair Pair) {
	a, b := pair(t)
	errc := make(chan error, 1)
	go func() {
		_, err := b.ReadBatch(MakePackets(1, 64))
		errc <- err
	}()
	time.Sleep(20 * time.Millisecond)
	b.SetReadDeadline(time.Now().Add(10 * time.Millisecond))
	select {
	case err := <-errc:
		if !transport.IsTimeout(err) {
			t.Errorf("ReadBatch = %v, want deadline exceeded", err)
		}
	case <-time.After(WaitLimit):
		t.Fatal("a deadline set while blocked did not end ReadBatch")
	}
	// Cleared again, the conn reads normally.
	b.SetReadDeadline(time.Time{})
	a.WriteBatch([]transport.Packet{{Addr: b.LocalAddr(), Buf: []byte("x"), N: 1}})
	if got := ReadN(t, b, 1); string(got[0].Buf) != "x" {
		t.Errorf("got %q after clearing the deadline", got[0].Buf)
	}
}

func testAfterClose(t *testing.T, pair Pair) {
	a, b := pair(t)
	a.Close()
	if _, err := a.ReadBatch(MakePackets(1, 8)); !errors.Is(err, transport.ErrClosed) {
		t.Errorf("ReadBatch after Close: %v, want transport.ErrClosed", err)
	}
	if _, err := a.WriteBatch([]transport.Packet{{Addr: b.LocalAddr(), Buf: []byte("x"), N: 1}}); !errors.Is(err, transport.ErrClosed) {
		t.Errorf("WriteBatch after Close: %v, want transport.ErrClosed", err)
	}
}

func testBadLength(t *testing.T, pair Pair) {
	a, b := pair(t)
	ps := []transport.Packet{
		{Addr: b.LocalAddr(), Buf: []byte("ok"), N: 2},
		{Addr: b.LocalAddr(), Buf: []byte("no"), N: 3},
	}
	if n, err := a.WriteBatch(ps); n != 1 || err == nil {
		t.Errorf("WriteBatch with N > len(Buf) = %d, %v; want 1 and an error", n, err)
	}
	if got := ReadN(t, b, 1); string(got[0].Buf) != "ok" {
		t.Errorf("got %q, want the packet before the bad one", got[0].Buf)
	}
}

// CloseAll closes cs when the test ends.
func CloseAll(t *testing.T, cs ...transport.Conn) {
	t.Cleanup(func() {
		for _, c := range cs {
			c.Close()
		}
	})
}

// Loopback4 is 127.0.0.1:port.
func Loopback4(port uint16) transport.Addr {
	return netip.AddrPortFrom(netip.AddrFrom4([4]byte{127, 0, 0, 1}), port)
}
