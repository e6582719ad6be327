package transporttest

import (
	"errors"
	"fmt"
	"net/netip"
	"os"
	"sync"
	"time"

	"github.com/naam-project/naam/nicrt/transport"
)

// MemConfig configures an in-memory Network. Zero fields take the defaults.
type MemConfig struct {
	// QueueLen is how many packets an endpoint holds unread; a packet
	// arriving at a full queue is dropped and counted. Default 1024.
	QueueLen int
	// MaxDatagram is the largest payload WriteBatch accepts; larger ones
	// fail with transport.ErrTooLarge. Default transport.MaxDatagram.
	MaxDatagram int
}

// DefaultMemQueueLen is MemConfig.QueueLen's default.
const DefaultMemQueueLen = 1024

// ErrAddrInUse is returned by Network.Listen for an address already taken.
var ErrAddrInUse = errors.New("transport: address already in use")

// Network is a set of in-memory endpoints that exchange packets. Delivery is
// immediate and FIFO per destination, and a packet is lost only when its
// destination's queue is full or nobody listens at its address; which
// happens depends on the order of calls alone, never on timing or chance.
type Network struct {
	cfg MemConfig

	mu       sync.RWMutex
	eps      map[transport.Addr]*MemConn
	nextPort uint16
}

// NewNetwork returns an empty network.
func NewNetwork(cfg MemConfig) *Network {
	if cfg.QueueLen <= 0 {
		cfg.QueueLen = DefaultMemQueueLen
	}
	if cfg.MaxDatagram <= 0 {
		cfg.MaxDatagram = transport.MaxDatagram
	}
	return &Network{cfg: cfg, eps: make(map[transport.Addr]*MemConn), nextPort: firstMemPort}
}

// firstMemPort is where automatic port numbers start, so that tests that
// name ports themselves can stay below it.
const firstMemPort = 10000

// Listen adds an endpoint at addr. The zero transport.Addr means 127.0.0.1 with a
// fresh port; port 0 picks the lowest free port from 10000 up, so a test
// that opens endpoints in the same order gets the same addresses.
func (n *Network) Listen(addr transport.Addr) (*MemConn, error) {
	ip := addr.Addr()
	if !ip.IsValid() {
		ip = netip.AddrFrom4([4]byte{127, 0, 0, 1})
	}
	ip = ip.Unmap()
	n.mu.Lock()
	defer n.mu.Unlock()
	port := addr.Port()
	if port == 0 {
		for tries := 0; ; tries++ {
			if tries > 0xffff {
				return nil, fmt.Errorf("transport: no free port on %v", ip)
			}
			p := n.nextPort
			n.nextPort++
			if n.nextPort == 0 {
				n.nextPort = firstMemPort
			}
			if _, taken := n.eps[netip.AddrPortFrom(ip, p)]; !taken && p != 0 {
				port = p
				break
			}
		}
	}
	a := netip.AddrPortFrom(ip, port)
	if _, taken := n.eps[a]; taken {
		return nil, fmt.Errorf("transport: listen %v: %w", a, ErrAddrInUse)
	}
	c := &MemConn{
		net:   n,
		local: a,
		queue: make([]memSlot, n.cfg.QueueLen),
		wake:  make(chan struct{}, 1),
		done:  make(chan struct{}),
	}
	n.eps[a] = c
	return c, nil
}

// MemConn is an endpoint of a Network.
type MemConn struct {
	net   *Network
	local transport.Addr

	rmu   sync.Mutex // one ReadBatch at a time
	timer *time.Timer

	mu       sync.Mutex
	queue    []memSlot // ring
	head     int
	count    int
	deadline time.Time
	closed   bool
	stats    MemStats

	wake chan struct{} // a token: the queue or the deadline changed
	done chan struct{} // closed by Close
}

type memSlot struct {
	from transport.Addr
	buf  []byte // owned by the queue, reused
}

// MemStats counts one endpoint's traffic.
type MemStats struct {
	Sent      uint64 // packets this endpoint wrote
	NoRoute   uint64 // of those, addressed to nobody (lost)
	Received  uint64 // packets read from this endpoint's queue
	Dropped   uint64 // packets that found this endpoint's queue full (lost)
	Truncated uint64 // packets read into a buffer shorter than they were
}

// LocalAddr is the endpoint's address.
func (c *MemConn) LocalAddr() transport.Addr { return c.local }

// Stats returns the endpoint's counters.
func (c *MemConn) Stats() MemStats {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.stats
}

// WriteBatch delivers each packet to the queue of the endpoint at its
// address, copying the payload. It fails only for a closed conn or a packet
// that is malformed or larger than MemConfig.MaxDatagram.
func (c *MemConn) WriteBatch(ps []transport.Packet) (int, error) {
	n := c.net
	n.mu.RLock()
	defer n.mu.RUnlock()
	if n.eps[c.local] != c {
		return 0, fmt.Errorf("transport: write from %v: %w", c.local, transport.ErrClosed)
	}
	var sent, noRoute uint64
	defer func() {
		c.mu.Lock()
		c.stats.Sent += sent
		c.stats.NoRoute += noRoute
		c.mu.Unlock()
	}()
	for i := range ps {
		p := &ps[i]
		if p.N < 0 || p.N > len(p.Buf) {
			return i, fmt.Errorf("transport: packet length %d outside its buffer of %d", p.N, len(p.Buf))
		}
		if p.N > n.cfg.MaxDatagram {
			return i, transport.ErrTooLarge
		}
		sent++
		dst := n.eps[netip.AddrPortFrom(p.Addr.Addr().Unmap(), p.Addr.Port())]
		if dst == nil {
			noRoute++
			continue
		}
		dst.deliver(c.local, p.Buf[:p.N])
	}
	return len(ps), nil
}

func (c *MemConn) deliver(from transport.Addr, payload []byte) {
	c.mu.Lock()
	if c.closed || c.count == len(c.queue) {
		c.stats.Dropped++
		c.mu.Unlock()
		return
	}
	s := &c.queue[(c.head+c.count)%len(c.queue)]
	s.from = from
	s.buf = append(s.buf[:0], payload...)
	c.count++
	c.mu.Unlock()
	c.poke()
}

func (c *MemConn) poke() {
	select {
	case c.wake <- struct{}{}:
	default:
	}
}

// ReadBatch takes up to len(ps) packets from the endpoint's queue, waiting
// for the first one.
func (c *MemConn) ReadBatch(ps []transport.Packet) (int, error) {
	if len(ps) == 0 {
		return 0, nil
	}
	c.rmu.Lock()
	defer c.rmu.Unlock()
	for {
		c.mu.Lock()
		if c.closed {
			c.mu.Unlock()
			return 0, fmt.Errorf("transport: read %v: %w", c.local, transport.ErrClosed)
		}
		if c.count > 0 {
			n := c.take(ps)
			more := c.count > 0
			c.mu.Unlock()
			if more {
				c.poke() // leave the token for the next reader
			}
			return n, nil
		}
		deadline := c.deadline
		c.mu.Unlock()

		var timeout <-chan time.Time
		if !deadline.IsZero() {
			d := time.Until(deadline)
			if d <= 0 {
				return 0, fmt.Errorf("transport: read %v: %w", c.local, os.ErrDeadlineExceeded)
			}
			if c.timer == nil {
				c.timer = time.NewTimer(d)
			} else {
				c.timer.Reset(d)
			}
			timeout = c.timer.C
		}
		select {
		case <-c.wake:
		case <-c.done:
		case <-timeout:
		}
		if c.timer != nil {
			c.timer.Stop()
		}
	}
}

// take moves queued packets into ps; c.mu is held.
func (c *MemConn) take(ps []transport.Packet) int {
	n := 0
	for n < len(ps) && c.count > 0 {
		s := &c.queue[c.head]
		p := &ps[n]
		p.Addr = s.from
		p.N = copy(p.Buf, s.buf)
		if p.N < len(s.buf) {
			c.stats.Truncated++
		}
		c.head = (c.head + 1) % len(c.queue)
		c.count--
		n++
	}
	if c.count == 0 {
		c.head = 0 // reuse the same few slots (and their buffers) when reads keep up
	}
	c.stats.Received += uint64(n)
	return n
}

// SetReadDeadline sets the read deadline and wakes a blocked reader to see it.
func (c *MemConn) SetReadDeadline(t time.Time) error {
	c.mu.Lock()
	closed := c.closed
	c.deadline = t
	c.mu.Unlock()
	if closed {
		return fmt.Errorf("transport: set deadline %v: %w", c.local, transport.ErrClosed)
	}
	c.poke()
	return nil
}

// Close removes the endpoint from its network (its address becomes free),
// discards its queue and wakes blocked readers.
func (c *MemConn) Close() error {
	c.net.mu.Lock()
	if c.net.eps[c.local] == c {
		delete(c.net.eps, c.local)
	}
	c.net.mu.Unlock()
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return fmt.Errorf("transport: close %v: %w", c.local, transport.ErrClosed)
	}
	c.closed = true
	c.count = 0
	close(c.done)
	return nil
}
