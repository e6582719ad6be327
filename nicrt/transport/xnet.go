package transport

import (
	"net"

	"golang.org/x/net/ipv4"
	"golang.org/x/net/ipv6"
)

// xnetBatcher batches through golang.org/x/net: recvmmsg and sendmmsg on
// Linux, one datagram per call elsewhere. Receiving allocates the source
// address of each datagram (x/net returns a new *net.UDPAddr); sending
// reuses per-slot net.UDPAddr values and allocates nothing.
type xnetBatcher struct {
	pc interface {
		ReadBatch(ms []ipv4.Message, flags int) (int, error)
		WriteBatch(ms []ipv4.Message, flags int) (int, error)
	} // ipv4.PacketConn or ipv6.PacketConn: their Message types are one type

	rmsgs []ipv4.Message
	rbufs [][]byte

	wmsgs  []ipv4.Message
	wbufs  [][]byte
	waddrs []net.UDPAddr
	wips   [][16]byte
}

func newXNetBatcher(pc *net.UDPConn, v6 bool) *xnetBatcher {
	if v6 {
		return &xnetBatcher{pc: ipv6.NewPacketConn(pc)}
	}
	return &xnetBatcher{pc: ipv4.NewPacketConn(pc)}
}

func (x *xnetBatcher) read(ps []Packet) (n, trunc int, err error) {
	if len(ps) > len(x.rmsgs) {
		x.rmsgs = make([]ipv4.Message, len(ps))
		x.rbufs = make([][]byte, len(ps))
	}
	ms := x.rmsgs[:len(ps)]
	for i := range ps {
		x.rbufs[i] = ps[i].Buf
		ms[i].Buffers = x.rbufs[i : i+1]
	}
	n, err = x.pc.ReadBatch(ms, 0)
	for i := 0; i < n; i++ {
		ps[i].N = ms[i].N
		if ms[i].Flags&msgTrunc != 0 {
			trunc++
		}
		ps[i].Addr = Addr{}
		if ua, ok := ms[i].Addr.(*net.UDPAddr); ok {
			ps[i].Addr = unmapAddrPort(ua.AddrPort())
		}
	}
	for i := range ps {
		x.rbufs[i] = nil // keep no reference to the caller's buffers
		ms[i].Addr = nil
	}
	return n, trunc, err
}

func (x *xnetBatcher) write(ps []Packet) (sent, calls int, err error) {
	if len(ps) > len(x.wmsgs) {
		x.wmsgs = make([]ipv4.Message, len(ps))
		x.wbufs = make([][]byte, len(ps))
		x.waddrs = make([]net.UDPAddr, len(ps))
		x.wips = make([][16]byte, len(ps))
	}
	for i := range ps {
		p := &ps[i]
		a := p.Addr.Addr()
		ip := x.wips[i][:]
		if a.Is4() || a.Is4In6() {
			a4 := a.Unmap().As4()
			ip = ip[:copy(ip, a4[:])]
		} else {
			a16 := a.As16()
			copy(ip, a16[:])
		}
		x.waddrs[i] = net.UDPAddr{IP: ip, Port: int(p.Addr.Port()), Zone: a.Zone()}
		x.wbufs[i] = p.Buf[:p.N]
		x.wmsgs[i].Buffers = x.wbufs[i : i+1]
		x.wmsgs[i].Addr = &x.waddrs[i]
	}
	for sent < len(ps) {
		var n int
		n, err = x.pc.WriteBatch(x.wmsgs[sent:len(ps)], 0)
		calls++
		sent += n
		if err != nil || n == 0 {
			break
		}
	}
	for i := range ps {
		x.wbufs[i] = nil
	}
	return sent, calls, err
}
