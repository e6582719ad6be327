package transport

import (
	"errors"
	"net"
	"net/netip"
	"os"
	"time"
)

// Addr is a transport address: an IP address and a UDP port. The in-memory
// transport uses the same type so that code above it cannot tell the two
// apart. IPv4 addresses are always plain (never IPv4-mapped IPv6).
type Addr = netip.AddrPort

// Packet is one datagram in a batch. The caller owns Buf and the Packet
// itself; a Conn uses them only during the call it is passed to.
//
// ReadBatch fills Buf[:N] with a received datagram and sets Addr to its
// source; a datagram longer than len(Buf) is cut to len(Buf), so size Buf to
// the largest datagram expected (MaxDatagram at most).
//
// WriteBatch sends Buf[:N] to Addr. After a ReadBatch, the same Packets
// therefore echo each datagram to its sender.
type Packet struct {
	Addr Addr
	Buf  []byte
	N    int
}

// Payload returns the datagram's bytes, Buf[:N].
func (p *Packet) Payload() []byte { return p.Buf[:p.N] }

// Conn is a datagram endpoint read and written in batches.
//
// One goroutine may read while another writes; Close and SetReadDeadline may
// be called from any goroutine and wake a blocked reader. Concurrent calls of
// ReadBatch (or of WriteBatch) are safe but take turns.
type Conn interface {
	// ReadBatch blocks until at least one datagram is available, then
	// fills as many of ps as are ready without waiting and returns their
	// count. It returns an error matching ErrClosed after Close, and one
	// matching os.ErrDeadlineExceeded when the read deadline passes.
	ReadBatch(ps []Packet) (int, error)

	// WriteBatch sends ps[i].Buf[:ps[i].N] to ps[i].Addr for each i, in
	// order, and returns how many were handed to the network. n < len(ps)
	// only with an error, which concerns ps[n]. A datagram that is lost
	// later (a full queue, nobody listening) is not an error, as in UDP.
	WriteBatch(ps []Packet) (int, error)

	// LocalAddr is the address peers send to.
	LocalAddr() Addr

	// SetReadDeadline sets the time after which ReadBatch fails with
	// os.ErrDeadlineExceeded; the zero time means no deadline. It also
	// applies to a ReadBatch already blocked.
	SetReadDeadline(t time.Time) error

	// Close releases the endpoint and wakes blocked readers. Packets
	// queued for it are discarded.
	Close() error
}

// MaxDatagram is the largest UDP payload over IPv4 (65535 minus the IP and
// UDP headers). The wire protocol limits itself further to the link MTU.
const MaxDatagram = 65507

// ErrClosed is returned (possibly wrapped) by operations on a closed Conn.
// It is net.ErrClosed, so errors.Is works for every implementation.
var ErrClosed = net.ErrClosed

// ErrTooLarge is returned by WriteBatch for a datagram longer than the
// transport carries.
var ErrTooLarge = errors.New("transport: datagram too large")

// ErrAddrFamily is returned by WriteBatch for a destination of the other IP
// family than the socket's (an IPv4 socket cannot reach an IPv6 peer).
var ErrAddrFamily = errors.New("transport: destination of the wrong address family")

// IsTimeout reports whether err is a passed read deadline.
func IsTimeout(err error) bool { return errors.Is(err, os.ErrDeadlineExceeded) }
