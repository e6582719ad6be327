package transport

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// UDPConfig configures a UDP socket. The zero value is a socket on
// 127.0.0.1 with a port the kernel picks and the kernel's buffer sizes.
type UDPConfig struct {
	// Addr is the local address. The zero Addr means 127.0.0.1:0; port 0
	// lets the kernel pick a free port. An IPv4 address opens an IPv4
	// socket, an IPv6 one an IPv6-only socket: each reaches peers of its
	// own family only.
	Addr Addr

	// ReadBuffer and WriteBuffer set SO_RCVBUF and SO_SNDBUF in bytes; 0
	// keeps the kernel default (net.core.rmem_default, wmem_default). The
	// kernel caps a request at net.core.rmem_max (wmem_max) and doubles
	// it for its own bookkeeping; BufferSizes reports what it granted.
	ReadBuffer  int
	WriteBuffer int

	// NoOffload turns off UDP segmentation offload on send (GSO: a train
	// of equal datagrams to one address leaves as one message) and receive
	// offload (GRO: such trains arrive as one message and are cut up
	// again). Both are on by default on the Linux path and invisible to
	// callers, who still see one Packet per datagram; GRO costs each socket
	// 8 receive buffers of 64 KiB. A train the kernel refuses is resent
	// datagram by datagram and trains stay off for that socket.
	NoOffload bool

	// Portable reads and writes through golang.org/x/net/ipv4 and ipv6
	// ReadBatch and WriteBatch instead of this package's own recvmmsg and
	// sendmmsg calls. Both batch on Linux; the own path keeps its kernel
	// headers between calls and allocates nothing, while x/net allocates
	// each received datagram's source address. Other systems always take
	// the portable path, which there moves one datagram per call.
	Portable bool
}

// UDPConn is a Conn over one UDP socket, read with recvmmsg and written
// with sendmmsg (see mmsg_linux.go for the Linux path's refinements: UDP
// GSO and GRO trains, single-datagram calls at light load).
type UDPConn struct {
	pc    *net.UDPConn
	io    batcher
	local Addr
	v6    bool

	rmu    sync.Mutex // one ReadBatch at a time: the batcher's arrays are shared
	wmu    sync.Mutex
	closed atomic.Bool // so that datagrams left of a GRO train die with the conn

	stats udpCounters
}

// batcher is the batched I/O under a UDPConn: mmsgBatcher (Linux) or
// xnetBatcher (golang.org/x/net, every system). Callers hold the
// direction's mutex; write gets destinations already checked.
type batcher interface {
	read(ps []Packet) (n, truncated int, err error)
	write(ps []Packet) (sent, calls int, err error)
}

// UDPStats counts a UDPConn's traffic since it was opened.
type UDPStats struct {
	RxPackets   uint64 // datagrams received
	RxBatches   uint64 // ReadBatch calls that returned datagrams
	RxTruncated uint64 // datagrams cut to the caller's buffer
	RxGRO       uint64 // received messages that carried several datagrams (GRO)
	TxPackets   uint64 // datagrams handed to the kernel
	TxBatches   uint64 // send system calls
	TxGSO       uint64 // sent messages that carried several datagrams (GSO)
}

type udpCounters struct {
	rxPackets, rxBatches, rxTruncated, rxGRO atomic.Uint64
	txPackets, txBatches, txGSO              atomic.Uint64
}

// ListenUDP opens one UDP socket.
func ListenUDP(cfg UDPConfig) (*UDPConn, error) {
	return listenUDP(cfg, false)
}

// ListenUDPQueues opens n sockets (rx queues) on one address with
// SO_REUSEPORT, so that a node can have one reader per queue on a single
// port. If cfg.Addr has port 0, the first socket picks the port and the
// others join it.
//
// Linux chooses a socket of the group for each arriving datagram by a hash
// of its 4-tuple (source address and port, destination address and port),
// scaled to the group's size: every datagram of one flow (one peer socket)
// lands on the same queue, in order, and distinct flows spread about evenly,
// with no balancing by load. A single peer therefore reaches one queue only;
// a client that wants to use several opens several sockets. Closing a
// socket shrinks the group and moves flows. Any socket may send: replies
// need not leave through the queue a request came in on.
func ListenUDPQueues(cfg UDPConfig, n int) ([]*UDPConn, error) {
	if n < 1 {
		return nil, fmt.Errorf("transport: %d queues, want at least 1", n)
	}
	first, err := listenUDP(cfg, n > 1)
	if err != nil {
		return nil, err
	}
	qs := []*UDPConn{first}
	cfg.Addr = first.LocalAddr()
	for len(qs) < n {
		q, err := listenUDP(cfg, true)
		if err != nil {
			for _, q := range qs {
				q.Close()
			}
			return nil, fmt.Errorf("transport: queue %d of %d: %w", len(qs), n, err)
		}
		qs = append(qs, q)
	}
	return qs, nil
}

func listenUDP(cfg UDPConfig, reusePort bool) (*UDPConn, error) {
	addr := cfg.Addr
	if !addr.IsValid() {
		addr = netip.AddrPortFrom(netip.AddrFrom4([4]byte{127, 0, 0, 1}), addr.Port())
	}
	addr = netip.AddrPortFrom(addr.Addr().Unmap(), addr.Port())
	network := "udp4"
	if addr.Addr().Is6() {
		network = "udp6"
	}
	lc := net.ListenConfig{}
	if reusePort {
		lc.Control = func(network, address string, c syscall.RawConn) error {
			return controlReusePort(c)
		}
	}
	pconn, err := lc.ListenPacket(context.Background(), network, addr.String())
	if err != nil {
		return nil, err
	}
	pc := pconn.(*net.UDPConn)
	if cfg.ReadBuffer > 0 {
		if err := pc.SetReadBuffer(cfg.ReadBuffer); err != nil {
			pc.Close()
			return nil, err
		}
	}
	if cfg.WriteBuffer > 0 {
		if err := pc.SetWriteBuffer(cfg.WriteBuffer); err != nil {
			pc.Close()
			return nil, err
		}
	}
	c := &UDPConn{pc: pc, v6: network == "udp6"}
	c.local = unmapAddrPort(pc.LocalAddr().(*net.UDPAddr).AddrPort())
	if !cfg.Portable {
		rc, err := pc.SyscallConn()
		if err != nil {
			pc.Close()
			return nil, err
		}
		c.io = newMmsgBatcher(rc, c.v6, !cfg.NoOffload, &c.stats)
	}
	if c.io == nil {
		c.io = newXNetBatcher(pc, c.v6)
	}
	return c, nil
}

// ReadBatch receives up to len(ps) datagrams with at most one system call
// (none when a GRO train from the last call still holds datagrams). Each
// returned Packet's Addr is its source (a link-local IPv6 source carries its
// interface index as the zone).
func (c *UDPConn) ReadBatch(ps []Packet) (int, error) {
	if len(ps) == 0 {
		return 0, nil
	}
	c.rmu.Lock()
	defer c.rmu.Unlock()
	if c.closed.Load() {
		return 0, fmt.Errorf("transport: read %v: %w", c.local, ErrClosed)
	}
	n, trunc, err := c.io.read(ps)
	if n > 0 {
		c.stats.rxPackets.Add(uint64(n))
		c.stats.rxBatches.Add(1)
		if trunc > 0 {
			c.stats.rxTruncated.Add(uint64(trunc))
		}
	}
	return n, err
}

// WriteBatch sends the datagrams with as few system calls as the kernel
// allows (one, unless the socket buffer fills); with offload, runs of
// equal datagrams to one address go as single GSO messages.
func (c *UDPConn) WriteBatch(ps []Packet) (int, error) {
	// Send the valid prefix; a bad packet ends the batch and its error is
	// reported once the packets before it are out.
	k := 0
	var bad error
	for ; k < len(ps); k++ {
		if bad = checkDest(&ps[k], c.v6); bad != nil {
			break
		}
	}
	if k == 0 {
		return 0, bad
	}
	c.wmu.Lock()
	defer c.wmu.Unlock()
	sent, calls, err := c.io.write(ps[:k])
	c.stats.txPackets.Add(uint64(sent))
	c.stats.txBatches.Add(uint64(calls))
	if err == nil && sent < k {
		err = io.ErrShortWrite
	}
	if err == nil {
		err = bad
	}
	return sent, err
}

// checkDest checks that p can be sent from a socket of the family v6.
func checkDest(p *Packet, v6 bool) error {
	if p.N < 0 || p.N > len(p.Buf) {
		return fmt.Errorf("transport: packet length %d outside its buffer of %d", p.N, len(p.Buf))
	}
	if p.N > MaxDatagram {
		return ErrTooLarge
	}
	a := p.Addr.Addr()
	switch {
	case !a.IsValid():
		return errors.New("transport: packet without a destination")
	case a.Is4() || a.Is4In6():
		if v6 {
			return ErrAddrFamily
		}
	default:
		if !v6 {
			return ErrAddrFamily
		}
	}
	return nil
}

// LocalAddr is the socket's bound address (with the port the kernel picked).
func (c *UDPConn) LocalAddr() Addr { return c.local }

// SetReadDeadline sets the socket's read deadline.
func (c *UDPConn) SetReadDeadline(t time.Time) error { return c.pc.SetReadDeadline(t) }

// Close closes the socket; a blocked ReadBatch returns an error matching
// ErrClosed.
func (c *UDPConn) Close() error {
	c.closed.Store(true)
	return c.pc.Close()
}

// Stats returns the conn's counters.
func (c *UDPConn) Stats() UDPStats {
	return UDPStats{
		RxPackets:   c.stats.rxPackets.Load(),
		RxBatches:   c.stats.rxBatches.Load(),
		RxTruncated: c.stats.rxTruncated.Load(),
		RxGRO:       c.stats.rxGRO.Load(),
		TxPackets:   c.stats.txPackets.Load(),
		TxBatches:   c.stats.txBatches.Load(),
		TxGSO:       c.stats.txGSO.Load(),
	}
}

// BufferSizes reports the socket's SO_RCVBUF and SO_SNDBUF as the kernel
// holds them (on Linux, twice what was asked, within the sysctl caps).
func (c *UDPConn) BufferSizes() (read, write int, err error) {
	rc, err := c.pc.SyscallConn()
	if err != nil {
		return 0, 0, err
	}
	return socketBufferSizes(rc)
}

func netInterfaceIndex(name string) (int, error) {
	ifi, err := net.InterfaceByName(name)
	if err != nil {
		return 0, err
	}
	return ifi.Index, nil
}

func unmapAddrPort(ap netip.AddrPort) Addr {
	return netip.AddrPortFrom(ap.Addr().Unmap(), ap.Port())
}

var errUnsupported = errors.New("transport: socket option not supported on this system")
