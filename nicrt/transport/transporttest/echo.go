package transporttest

import (
	"encoding/binary"
	"fmt"
	"net"
	"net/netip"
	"testing"
	"time"

	"github.com/naam-project/naam/nicrt/transport"
)

// The echo servers and load clients of the benchmarks that set NAAM
// beside plain UDP (nicrt/transport's and nicrt/server's): a client keeps
// window datagrams outstanding and sends a new one for every echo.

// PlainEchoServer echoes every datagram on 127.0.0.1 with one system call
// each way, until tb ends, and returns its address.
func PlainEchoServer(tb testing.TB) netip.AddrPort {
	srv, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		tb.Fatal(err)
	}
	go func() {
		buf := make([]byte, 2048)
		for {
			n, from, err := srv.ReadFromUDPAddrPort(buf)
			if err != nil {
				return
			}
			srv.WriteToUDPAddrPort(buf[:n], from)
		}
	}()
	tb.Cleanup(func() { srv.Close() })
	return srv.LocalAddr().(*net.UDPAddr).AddrPort()
}

// EchoServer echoes with ReadBatch and WriteBatch of up to 64 on a socket
// opened with cfg, until tb ends.
func EchoServer(tb testing.TB, cfg transport.UDPConfig) *transport.UDPConn {
	srv, err := transport.ListenUDP(cfg)
	if err != nil {
		tb.Fatal(err)
	}
	go func() {
		ps := MakePackets(64, 2048)
		for {
			n, err := srv.ReadBatch(ps)
			if err != nil {
				return
			}
			srv.WriteBatch(ps[:n])
		}
	}()
	tb.Cleanup(func() { srv.Close() })
	return srv
}

// PlainEchoLoad is EchoLoad with plain Go: one datagram per system call
// each way, from a socket on 127.0.0.1.
func PlainEchoLoad(to netip.AddrPort, window, size, count int, record func(time.Duration)) error {
	if window < 1 || window > 64 || size < 4 {
		return fmt.Errorf("transporttest: echo load: window %d not in 1…64 or size %d under 4", window, size)
	}
	cl, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		return err
	}
	defer cl.Close()
	cl.SetReadDeadline(time.Now().Add(time.Minute))
	var sentAt [64]time.Time
	req, rep := make([]byte, size), make([]byte, 2048)
	send := func(seq uint32) error {
		binary.LittleEndian.PutUint32(req, seq)
		sentAt[seq%64] = time.Now()
		_, err := cl.WriteToUDPAddrPort(req, to)
		return err
	}
	seq := uint32(0)
	for ; seq < uint32(min(window, count)); seq++ {
		if err := send(seq); err != nil {
			return err
		}
	}
	for done := 0; done < count; done++ {
		if _, _, err := cl.ReadFromUDPAddrPort(rep); err != nil {
			return err
		}
		record(time.Since(sentAt[binary.LittleEndian.Uint32(rep)%64]))
		if int(seq) < count {
			if err := send(seq); err != nil {
				return err
			}
			seq++
		}
	}
	return nil
}

// EchoLoad is the batched load client: from a socket opened with cfg it
// sends count datagrams of size bytes (at least 4: a sequence number
// leads) to the echo server at to, window of them in flight (at most 64),
// writing the next ones as the echoes come back, and gives record each
// echo's round trip.
func EchoLoad(to transport.Addr, cfg transport.UDPConfig, window, size, count int, record func(time.Duration)) error {
	if window < 1 || window > 64 || size < 4 {
		return fmt.Errorf("transporttest: echo load: window %d not in 1…64 or size %d under 4", window, size)
	}
	cl, err := transport.ListenUDP(cfg)
	if err != nil {
		return err
	}
	defer cl.Close()
	cl.SetReadDeadline(time.Now().Add(time.Minute))
	var sentAt [64]time.Time
	reqs := MakePackets(window, size)
	reps := MakePackets(window, 2048)
	seq := 0
	fill := func(k int) []transport.Packet {
		now := time.Now()
		for i := range k {
			binary.LittleEndian.PutUint32(reqs[i].Buf, uint32(seq))
			reqs[i].Addr, reqs[i].N = to, size
			sentAt[seq%64] = now
			seq++
		}
		return reqs[:k]
	}
	if _, err := cl.WriteBatch(fill(min(window, count))); err != nil {
		return err
	}
	for done := 0; done < count; {
		n, err := cl.ReadBatch(reps)
		if err != nil {
			return err
		}
		now := time.Now()
		for _, p := range reps[:n] {
			record(now.Sub(sentAt[binary.LittleEndian.Uint32(p.Buf)%64]))
		}
		done += n
		if k := min(n, count-seq); k > 0 {
			if _, err := cl.WriteBatch(fill(k)); err != nil {
				return err
			}
		}
	}
	return nil
}
