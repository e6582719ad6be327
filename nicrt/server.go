package nicrt

import (
	"errors"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/naam-project/naam/nicrt/transport"
	"github.com/naam-project/naam/nicrt/wire"
)

// ServerConfig configures Serve. Keys is required; zero fields of the rest
// take their defaults.
type ServerConfig struct {
	// Node is this node's id: a request must name it as its Dst (a packet
	// sealed for another node and replayed here is dropped), and replies
	// carry it as their Src.
	Node uint32
	// Keys gives each tenant's MAC key (wire.Keys).
	Keys wire.Keys
	// MaxPayload is the payload limit of the codec (wire.Config); 0 means
	// wire.MaxPayload. Both ends must agree.
	MaxPayload int
	// Batch is how many datagrams one ReadBatch takes. Default 64.
	Batch int
	// MaxCredits caps the credits granted to one peer (spec/nic.md,
	// Credits). Default 256: well below wire.WindowSize, so that a caller
	// within its credits never falls out of the anti-replay window, and a
	// quarter of an rx queue, so that one peer steered to one core cannot
	// fill it.
	MaxCredits int
	// MaxRegisterBytes caps a region registered over the wire (the
	// register control op), so that a tenant's peer cannot make the node
	// allocate gigabytes with one packet; the host registers larger ones
	// with NIC.Register. Default 64 MiB.
	MaxRegisterBytes uint64
}

// Server is the network side of a NIC: it reads requests from its rx
// queues, opens them with the tenant's key, runs each at most once
// (anti-replay window and reply cache per peer and tenant), submits it to
// the NIC and sends the reply. spec/nic.md, Network side.
type Server struct {
	nic        *NIC
	cfg        ServerConfig
	queues     []*rxQueue
	coreCodecs []*wire.Codec // by Reply.Core: done callbacks run on cores
	// dirty[core] lists the tx queues holding replies that core added;
	// only whoever runs that core touches it (complete, coreIdle), with
	// core.busy held.
	dirty [][]*txQueue

	peersMu sync.RWMutex
	peers   map[uint64]*peer

	ctlMu   sync.Mutex
	uploads map[uploadKey]*upload // object uploads being assembled
	active  atomic.Int64          // peers that sent a request in the last activity period

	pool     sync.Pool // *inflight
	inflight sync.WaitGroup
	rxDone   sync.WaitGroup
	stop     chan struct{}
	closing  atomic.Bool
	closed   sync.Once
	ctr      serverCounters

	payloadLimit int // the codec's payload limit
}

// peer is the state kept per (source node, tenant): the anti-replay window
// and the reply cache over the ids inside it.
type peer struct {
	mu    sync.Mutex
	win   wire.Window
	cache [wire.WindowSize]cacheSlot // by request id mod WindowSize
	seen  atomic.Bool                // a request since the last activity count
}

// cacheSlot is the reply cache entry of one request id.
type cacheSlot struct {
	id    uint64
	state slotState
	dgram []byte // the sealed reply datagram, when state is slotDone
}

type slotState uint8

const (
	slotEmpty     slotState = iota
	slotRunning             // submitted; the reply will come
	slotDone                // dgram holds the reply
	slotForwarded           // the handler forwarded it: another node answers
)

// rxQueue is one rx queue: a Conn, the goroutine reading it, its codec
// and its receive buffers, each owned by an inflight until the request it
// holds is done.
type rxQueue struct {
	s     *Server
	conn  transport.Conn
	codec *wire.Codec
	tx    *txQueue
	ps    []transport.Packet
	slots []*inflight // slots[i].buf is ps[i].Buf
}

// inflight is a request between Submit and its done: it owns the receive
// buffer its payload aliases.
type inflight struct {
	s    *Server
	q    *rxQueue
	buf  []byte
	peer *peer
	addr transport.Addr
	hdr  wire.Header
	done func(Reply) // in.complete, bound once
}

// activityPeriod is how often the server counts its active peers for the
// credit policy.
const activityPeriod = 100 * time.Millisecond

// Serve starts answering requests for nic on conns, one reading goroutine
// per conn (rx queue; transport.ListenUDPQueues opens several on one port).
// The Server owns the conns from now on: Close closes them. It does not
// own nic.
func Serve(nic *NIC, conns []transport.Conn, cfg ServerConfig) (*Server, error) {
	s, err := newServer(nic, conns, cfg)
	if err != nil {
		return nil, err
	}
	for _, q := range s.queues {
		s.rxDone.Go(q.loop)
	}
	go s.countActive()
	return s, nil
}

// newServer builds a server without starting its goroutines.
func newServer(nic *NIC, conns []transport.Conn, cfg ServerConfig) (*Server, error) {
	if len(conns) == 0 {
		return nil, errors.New("nicrt: serve: no conns")
	}
	setInt(&cfg.Batch, 64)
	setInt(&cfg.MaxCredits, 256)
	setU64(&cfg.MaxRegisterBytes, 64<<20)
	if cfg.Batch < 1 || cfg.MaxCredits < 1 || cfg.MaxCredits > 0xffff {
		return nil, fmt.Errorf("nicrt: serve: Batch %d and MaxCredits %d must be positive (credits at most 65535)", cfg.Batch, cfg.MaxCredits)
	}
	wcfg := wire.Config{Keys: cfg.Keys, MaxPayload: cfg.MaxPayload}
	newCodec := func() (*wire.Codec, error) { return wire.NewCodec(wcfg) }
	probe, err := newCodec()
	if err != nil {
		return nil, fmt.Errorf("nicrt: serve: %w", err)
	}
	s := &Server{nic: nic, cfg: cfg, peers: map[uint64]*peer{}, uploads: map[uploadKey]*upload{}, stop: make(chan struct{}), payloadLimit: probe.MaxPayload()}
	bufSize := wire.HeaderSize + probe.MaxPayload()
	s.pool.New = func() any {
		in := &inflight{s: s, buf: make([]byte, bufSize)}
		in.done = in.complete
		return in
	}
	for range nic.cores {
		c, _ := newCodec()
		s.coreCodecs = append(s.coreCodecs, c)
	}
	s.dirty = make([][]*txQueue, len(nic.cores))
	for _, conn := range conns {
		c, _ := newCodec()
		q := &rxQueue{s: s, conn: conn, codec: c, tx: newTxQueue(conn, bufSize)}
		q.ps = make([]transport.Packet, cfg.Batch)
		q.slots = make([]*inflight, cfg.Batch)
		for i := range q.slots {
			q.take(i)
		}
		s.queues = append(s.queues, q)
	}
	nic.addIdler(s)
	return s, nil
}

// coreIdle sends the replies core held back: its queue ran empty, so no
// more are coming from it for now.
func (s *Server) coreIdle(core int) {
	for i, tx := range s.dirty[core] {
		tx.flush()
		s.dirty[core][i] = nil
	}
	s.dirty[core] = s.dirty[core][:0]
}

// take gives slot i of the queue a fresh inflight and its buffer.
func (q *rxQueue) take(i int) {
	in := q.s.pool.Get().(*inflight)
	in.q = q
	q.slots[i] = in
	q.ps[i].Buf = in.buf
}

// LocalAddrs returns the addresses of the server's rx queues.
func (s *Server) LocalAddrs() []transport.Addr {
	var out []transport.Addr
	for _, q := range s.queues {
		out = append(out, q.conn.LocalAddr())
	}
	return out
}

// Close stops reading, waits until every request already submitted has
// been answered, and closes the conns. It does not close the NIC.
func (s *Server) Close() error {
	var err error
	s.closed.Do(func() {
		s.closing.Store(true)
		for _, q := range s.queues {
			q.conn.SetReadDeadline(time.Unix(1, 0)) // wake the reader
		}
		s.rxDone.Wait()
		s.inflight.Wait()
		s.nic.removeIdler(s)
		for _, q := range s.queues {
			q.tx.drain() // replies a core held back
		}
		close(s.stop)
		for _, q := range s.queues {
			if e := q.conn.Close(); e != nil && err == nil && !errors.Is(e, transport.ErrClosed) {
				err = e
			}
		}
	})
	return err
}

// loop reads batches until the server closes.
func (q *rxQueue) loop() {
	s := q.s
	for !s.closing.Load() {
		n, err := q.conn.ReadBatch(q.ps)
		if err != nil {
			if s.closing.Load() || errors.Is(err, transport.ErrClosed) {
				return
			}
			if !transport.IsTimeout(err) {
				s.ctr.rxErrors.Add(1)
				time.Sleep(time.Millisecond) // a persistent error must not spin
			}
			continue
		}
		q.handleBatch(n)
		// Let the cores just handed requests run before the next read,
		// which would most often find nothing and cost a system call on
		// the requests' way.
		runtime.Gosched()
	}
}

// handleBatch handles ps[:n] with the tx queue held, so that the replies
// ready by the end of the batch leave in one WriteBatch.
func (q *rxQueue) handleBatch(n int) {
	s := q.s
	s.ctr.rxPackets.Add(uint64(n))
	s.ctr.rxBatches.Add(1)
	held := q.tx.hold()
	for i := range n {
		if q.handle(i, n <= inlineBatch) {
			q.take(i) // the buffer went with the request
		}
	}
	if held {
		q.tx.release()
	}
}

// handle opens datagram i and acts on it. It reports whether the datagram
// was submitted, so that its buffer now belongs to the request.
func (q *rxQueue) handle(i int, inline bool) bool {
	s := q.s
	p := &q.ps[i]
	pkt, err := q.codec.Decode(p.Buf[:p.N])
	if err != nil {
		s.ctr.countDecodeError(err)
		return false
	}
	if pkt.Dst != s.cfg.Node && !describesAnyNode(&pkt) {
		s.ctr.wrongDst.Add(1)
		return false
	}
	switch pkt.Type {
	case wire.TypeRequest, wire.TypeControl:
	case wire.TypeCredit:
		s.ctr.creditPackets.Add(1)
		return false
	default:
		s.ctr.unexpectedType.Add(1)
		return false
	}
	if pkt.Flags&wire.FlagRetransmit != 0 {
		s.ctr.retransmitted.Add(1)
	}
	pr := s.peer(pkt.Src, pkt.Tenant)
	pr.seen.Store(true)
	id := pkt.RequestID
	slot := &pr.cache[id%wire.WindowSize]
	pr.mu.Lock()
	switch pr.win.Observe(id) {
	case wire.IDNew:
		slot.id, slot.state = id, slotRunning
		pr.mu.Unlock()
	case wire.IDDuplicate:
		switch {
		case slot.id == id && slot.state == slotDone:
			b := append(q.tx.buffer(), slot.dgram...)
			pr.mu.Unlock()
			q.tx.push(p.Addr, b)
			s.ctr.cacheHits.Add(1)
		case slot.id == id && slot.state == slotRunning:
			pr.mu.Unlock()
			s.ctr.duplicatesRunning.Add(1)
		case slot.id == id && slot.state == slotForwarded:
			pr.mu.Unlock()
			s.ctr.duplicatesForwarded.Add(1)
		default:
			pr.mu.Unlock()
			s.ctr.replaysUncached.Add(1)
		}
		return false
	default: // wire.IDTooOld
		pr.mu.Unlock()
		s.ctr.replaysTooOld.Add(1)
		return false
	}
	in := q.slots[i]
	in.peer, in.addr, in.hdr = pr, p.Addr, pkt.Header
	s.inflight.Add(1)
	if pkt.Type == wire.TypeControl {
		s.ctr.control.Add(1)
		go in.runControl(pkt.Payload)
		return true
	}
	s.ctr.requests.Add(1)
	msg := Message{
		Tenant: uint64(pkt.Tenant), Handler: pkt.Handler, RequestID: id,
		SrcNode: uint64(pkt.Src), Payload: pkt.Payload,
	}
	s.nic.submit(&msg, in.done, inline)
	return true
}

// peer returns the state of (src, tenant), creating it.
func (s *Server) peer(src, tenant uint32) *peer {
	key := uint64(src)<<32 | uint64(tenant)
	s.peersMu.RLock()
	pr := s.peers[key]
	s.peersMu.RUnlock()
	if pr != nil {
		return pr
	}
	s.peersMu.Lock()
	defer s.peersMu.Unlock()
	if pr = s.peers[key]; pr == nil {
		pr = new(peer)
		s.peers[key] = pr
		s.active.Add(1) // counted at once, until the next count
	}
	return pr
}

// countActive counts the peers that sent requests in each activity
// period, for the credit policy.
func (s *Server) countActive() {
	t := time.NewTicker(activityPeriod)
	defer t.Stop()
	for {
		select {
		case <-s.stop:
			return
		case <-t.C:
		}
		var n int64
		s.peersMu.RLock()
		for _, pr := range s.peers {
			if pr.seen.Swap(false) {
				n++
			}
		}
		s.peersMu.RUnlock()
		s.active.Store(n)
	}
}

// credits is the grant a reply carries (spec/nic.md, Credits): the NIC
// cores' free queue room shared out among the active peers, at least 1 and
// at most MaxCredits.
func (s *Server) credits() uint16 {
	share := s.nic.QueueSpace() / int(max(s.active.Load(), 1))
	return uint16(min(max(share, 1), s.cfg.MaxCredits))
}

// complete is a request's done: it seals the reply, keeps it in the reply
// cache and sends it. It runs where the request ran: on its core's
// goroutine, or on the rx goroutine, which runs a request inline when its
// core is idle (the reply then leaves with the batch's), or which got a
// rejection at Submit.
func (in *inflight) complete(r Reply) {
	s, q := in.s, in.q
	codec := q.codec
	if r.Core >= 0 {
		codec = s.coreCodecs[r.Core]
	}
	req := &in.hdr
	h := wire.Header{
		Type: wire.TypeReply, Credits: s.credits(), Tenant: req.Tenant, Handler: req.Handler,
		RequestID: req.RequestID, Src: s.cfg.Node, Dst: req.Src,
	}
	var payload []byte
	switch {
	case r.Status == StatusOK:
		payload = r.Data
	case r.Status == StatusError && r.Code > 0:
		h.Type, h.Status = wire.TypeErrorReply, wire.Status(r.Code)
	case r.Status == StatusForwarded:
		in.cache(slotForwarded, nil)
		s.ctr.forwarded.Add(1)
		in.release()
		return
	default:
		st := r.Status
		if st == StatusError { // a code outside 1 … 2^31-1 cannot travel as one
			st = StatusFault
		}
		h.Type, h.Status = wire.TypeErrorReply, wire.StatusRuntime+wire.Status(st)
		if r.Err != nil && st == StatusFault {
			msg := r.Err.Error()
			payload = []byte(msg[:min(len(msg), codec.MaxPayload())])
		}
	}
	b, err := codec.Encode(q.tx.buffer(), &h, payload)
	if err != nil {
		// Only a reply over the payload limit gets here.
		s.ctr.encodeErrors.Add(1)
		h.Type, h.Status = wire.TypeErrorReply, wire.StatusRuntime+wire.Status(StatusTooLarge)
		b, _ = codec.Encode(b[:0], &h, nil)
	}
	if h.Type == wire.TypeReply {
		s.ctr.replies.Add(1)
	} else {
		s.ctr.errorReplies.Add(1)
	}
	in.cache(slotDone, b)
	if r.Core >= 0 {
		// On a core: hold the reply back until the core's queue runs
		// empty (coreIdle), so that the replies of a burst leave in one
		// WriteBatch rather than one system call each.
		q.tx.add(in.addr, b)
		d := s.dirty[r.Core]
		if len(d) == 0 || d[len(d)-1] != q.tx {
			s.dirty[r.Core] = append(d, q.tx)
		}
	} else {
		q.tx.push(in.addr, b)
	}
	in.release()
}

// cache records the request's end in its peer's reply cache, unless the
// slot went to a newer id meanwhile.
func (in *inflight) cache(state slotState, dgram []byte) {
	pr, id := in.peer, in.hdr.RequestID
	slot := &pr.cache[id%wire.WindowSize]
	pr.mu.Lock()
	if slot.id == id && slot.state == slotRunning {
		slot.state = state
		slot.dgram = append(slot.dgram[:0], dgram...)
	}
	pr.mu.Unlock()
}

func (in *inflight) release() {
	s := in.s
	in.q, in.peer, in.hdr = nil, nil, wire.Header{}
	s.pool.Put(in)
	s.inflight.Done()
}

// inlineBatch is the largest batch whose requests the rx loop runs inline
// when their cores are idle; larger batches go to the cores' goroutines,
// which run them beside the rx loop.
const inlineBatch = 8

// describesAnyNode reports whether pkt is a describe op sent to dst 0: the
// one packet a node takes without its id, so that a caller that knows only
// an address can learn it (spec/wire.md, Control plane).
func describesAnyNode(pkt *wire.Packet) bool {
	return pkt.Dst == 0 && pkt.Type == wire.TypeControl && wire.Op(pkt.Handler) == wire.OpDescribe
}
