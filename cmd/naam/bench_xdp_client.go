package main

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/netip"
	"sync"
	"time"

	"github.com/naam-project/naam/examples/kv"
	"github.com/naam-project/naam/host"
	"github.com/naam-project/naam/internal/bench/workload"
	"github.com/naam-project/naam/nicrt/caller"
	"github.com/naam-project/naam/nicrt/transport"
	"github.com/naam-project/naam/nicrt/wire"
)

// The clients of naam bench --xdp's udp, am and am-xdp modes: each
// benchmark client is one socket in the client namespace, read by one
// goroutine in batches (recvmmsg) whose completions start the next
// operations, and written through a transport.TxQueue, so that the
// requests a batch of replies starts leave in one sendmmsg. No goroutine
// waits per operation (workload.RunPipelined), which leaves the client's
// CPUs to the link and the servers.

// xdpBenchClient is a caller.Client of its own for one benchmark client
// of a node: its own socket and source node id (a peer state of its own
// at the node and its tier), the node's key for tenant.
func (b *xdpBench) xdpBenchClient(node *host.Node, tenant uint32) (*caller.Client, error) {
	key, err := wire.NewKeyAlg(wire.MACSipHash128, xdpBenchSecret)
	if err != nil {
		return nil, err
	}
	var cl *caller.Client
	err = b.pair.Run(1, func() error {
		conn, err := transport.ListenUDP(transport.UDPConfig{Addr: netip.AddrPortFrom(b.pair.Addr[1], 0)})
		if err != nil {
			return err
		}
		// The node ids of nodes have random low bits too; 1<<30 keeps
		// these apart from the XDP node's (high bit set) and from 0.
		src := 1<<30 | rand.Uint32()>>3
		cl, err = caller.Dial(conn, node.Addr(), caller.ClientConfig{Node: src, Server: node.ID(), Keys: wire.KeyMap{tenant: key},
			// As host.Peer's: a pause of the shared machine must not
			// turn into failed calls.
			MaxTries: 10, MaxTimeout: 250 * time.Millisecond})
		if err != nil {
			conn.Close()
		}
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("a client of %v: %w", node.Addr(), err)
	}
	b.closer = append(b.closer, cl)
	return cl, nil
}

// startErr is a call's start error for the runner: a call refused for
// credits is ErrNoRoom, tried again when another call ends.
func startErr(err error) error {
	if errors.Is(err, caller.ErrNoCredits) {
		return workload.ErrNoRoom
	}
	return err
}

// nullAsync calls the null handler with a 64-byte payload, Get and Put
// alike.
type nullAsync struct {
	cl      *caller.Client
	tenant  uint32
	handler uint32
}

func (t nullAsync) StartGet(_ uint64, done workload.Done) error {
	var payload [xdpBenchPayload]byte
	return startErr(t.cl.Go(t.tenant, t.handler, payload[:], func(_ []byte, err error) { done(1, err) }))
}

func (t nullAsync) StartPut(key uint64, _ []byte, done workload.Done) error {
	return t.StartGet(key, done)
}

// kvAsync runs examples/kv's get and put with one active message each,
// as kv.Client does: a busy bucket is tried again, up to
// kv.DefaultRetries tries (at once: the retry starts from the busy
// reply's completion).
type kvAsync struct {
	cl     *caller.Client
	tenant uint32
	cfg    kv.Config
	ids    kv.HandlerIDs
}

func (t *kvAsync) StartGet(record uint64, done workload.Done) error {
	op := &kvOp{t: t, handler: t.ids.Get, done: done}
	op.req = kv.AppendGet(op.key[:0], kv.KeyOf(record))
	return t.start(op)
}

func (t *kvAsync) StartPut(record uint64, value []byte, done workload.Done) error {
	req, err := t.cfg.AppendPut(make([]byte, 0, t.cfg.PutRequestSize()), kv.KeyOf(record), value)
	if err != nil {
		return err
	}
	return t.start(&kvOp{t: t, handler: t.ids.Put, req: req, done: done})
}

// kvOp is one get or put in flight: its request, kept for a retry (the
// client copied it, and nobody changes it), and its tries so far.
type kvOp struct {
	t       *kvAsync
	handler uint32
	req     []byte
	key     [kv.KeySize]byte // a get's request
	done    workload.Done
	tries   int
}

// start sends op's first try.
func (t *kvAsync) start(op *kvOp) error {
	op.tries = 1
	return startErr(t.cl.Go(t.tenant, op.handler, op.req, op.end))
}

// end is the completion of op's try: a busy reply is tried again, any
// other opened by its handler's decoder.
func (op *kvOp) end(reply []byte, err error) {
	t := op.t
	var he *caller.HandlerError
	if errors.As(err, &he) && he.Code == kv.CodeBusy && op.tries < kv.DefaultRetries {
		op.tries++
		if err = t.cl.Go(t.tenant, op.handler, op.req, op.end); err == nil {
			return
		}
	}
	if err == nil {
		if op.handler == t.ids.Get {
			_, _, err = t.cfg.DecodeGet(reply)
		} else {
			_, err = kv.DecodeVersion(reply)
		}
	}
	op.done(op.tries, err)
}

// udpAsync is the plain UDP client of the echo: datagrams of a null
// call's size, the first 8 bytes a sequence number that matches the echo
// to its operation. The echo answers each datagram once and its socket
// drops what overflows it, so the client resends a datagram without its
// echo as caller.Client does a request (after udpRetry, doubling to
// udpMaxRetry, udpTries times at most), and counts the tries as the
// operation's round trips.
type udpAsync struct {
	conn *transport.UDPConn
	to   netip.AddrPort
	tx   *transport.TxQueue

	mu       sync.Mutex
	seq      uint64
	pending  [udpWindow]udpOp
	inflight int // pending's operations
	closed   bool
}

type udpOp struct {
	seq      uint64 // 0: free
	done     workload.Done
	tries    int
	deadline time.Time // of the last try
}

const (
	udpWindow   = 1024 // operations in flight at most, per client
	udpRetry    = 5 * time.Millisecond
	udpMaxRetry = 100 * time.Millisecond
	udpTries    = 8
)

// udpAsyncTargets are one udpAsync per client, on sockets of side 1.
func (b *xdpBench) udpAsyncTargets(clients int) ([]workload.AsyncTarget, error) {
	to := b.echo.LocalAddr().(interface{ AddrPort() netip.AddrPort }).AddrPort()
	var out []workload.AsyncTarget
	for range clients {
		var conn *transport.UDPConn
		if err := b.pair.Run(1, func() error {
			var err error
			conn, err = transport.ListenUDP(transport.UDPConfig{Addr: netip.AddrPortFrom(b.pair.Addr[1], 0)})
			return err
		}); err != nil {
			return nil, err
		}
		u := &udpAsync{conn: conn, to: to, tx: transport.NewTxQueue(conn, wire.HeaderSize+xdpBenchPayload)}
		rxDone, sweepDone := make(chan struct{}), make(chan struct{})
		go u.receive(rxDone)
		go u.sweep(sweepDone)
		b.closer = append(b.closer, closeFunc(func() error {
			u.mu.Lock()
			u.closed = true
			u.mu.Unlock()
			err := conn.Close()
			<-rxDone
			<-sweepDone
			return err
		}))
		out = append(out, u)
	}
	return out, nil
}

func (u *udpAsync) StartGet(_ uint64, done workload.Done) error {
	u.mu.Lock()
	if u.closed {
		u.mu.Unlock()
		return transport.ErrClosed
	}
	u.seq++
	seq := u.seq
	op := &u.pending[seq%udpWindow]
	if op.seq != 0 {
		u.seq--
		u.mu.Unlock()
		return workload.ErrNoRoom
	}
	*op = udpOp{seq: seq, done: done, tries: 1, deadline: time.Now().Add(udpRetry)}
	u.inflight++
	u.mu.Unlock()
	u.send(seq)
	return nil
}

func (u *udpAsync) StartPut(key uint64, _ []byte, done workload.Done) error {
	return u.StartGet(key, done)
}

// send sends operation seq's datagram.
func (u *udpAsync) send(seq uint64) {
	b := u.tx.Buffer()[:wire.HeaderSize+xdpBenchPayload]
	clear(b)
	binary.LittleEndian.PutUint64(b, seq)
	u.tx.Push(u.to, b)
}

// end ends operation seq with err, if it is still pending.
func (u *udpAsync) end(seq uint64, err error) {
	u.mu.Lock()
	op := &u.pending[seq%udpWindow]
	if op.seq != seq || seq == 0 {
		u.mu.Unlock()
		return // a second echo, after a resend
	}
	done, tries := op.done, op.tries
	*op = udpOp{}
	u.inflight--
	u.mu.Unlock()
	done(tries, err)
}

// receive reads the echoes in batches until the socket closes, holding
// the sender while it ends a batch's operations.
func (u *udpAsync) receive(finished chan struct{}) {
	defer close(finished)
	ps := make([]transport.Packet, 64)
	for i := range ps {
		ps[i].Buf = make([]byte, 2048)
	}
	for {
		n, err := u.conn.ReadBatch(ps)
		if err != nil {
			if errors.Is(err, transport.ErrClosed) {
				return
			}
			time.Sleep(time.Millisecond)
			continue
		}
		held := u.tx.Hold()
		for i := range n {
			if ps[i].N >= 8 {
				u.end(binary.LittleEndian.Uint64(ps[i].Buf), nil)
			}
		}
		if held {
			u.tx.Release()
		}
	}
}

// sweep resends the datagrams whose echo is late and fails the
// operations out of tries.
func (u *udpAsync) sweep(finished chan struct{}) {
	defer close(finished)
	t := time.NewTicker(time.Millisecond)
	defer t.Stop()
	var resend, failed []uint64
	for range t.C {
		resend, failed = resend[:0], failed[:0]
		now := time.Now()
		u.mu.Lock()
		if u.closed {
			u.mu.Unlock()
			return
		}
		for i := 0; i < len(u.pending) && u.inflight > 0; i++ {
			op := &u.pending[i]
			if op.seq == 0 || now.Before(op.deadline) {
				continue
			}
			if op.tries >= udpTries {
				failed = append(failed, op.seq)
				continue
			}
			op.tries++
			op.deadline = now.Add(min(udpRetry<<(op.tries-1), udpMaxRetry))
			resend = append(resend, op.seq)
		}
		u.mu.Unlock()
		for _, seq := range resend {
			u.send(seq)
		}
		for _, seq := range failed {
			u.end(seq, fmt.Errorf("udp echo: no echo after %d tries", udpTries))
		}
	}
}
