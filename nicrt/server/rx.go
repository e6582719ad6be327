package server

import (
	"errors"
	"runtime"
	"time"

	"github.com/naam-project/naam/nicrt"
	"github.com/naam-project/naam/nicrt/transport"
	"github.com/naam-project/naam/nicrt/wire"
)

// rxQueue is one rx queue: a Conn, the goroutine reading it, its codec
// and its receive buffers, each owned by an inflight until the request it
// holds is done.
type rxQueue struct {
	s     *Server
	conn  transport.Conn
	codec *wire.Codec
	tx    *transport.TxQueue
	ps    []transport.Packet
	slots []*inflight // slots[i].buf is ps[i].Buf
	front []byte      // a reply read from the Front's cache
}

// take gives slot i of the queue a fresh inflight and its buffer.
func (q *rxQueue) take(i int) {
	in := q.s.pool.Get().(*inflight)
	in.q = q
	q.slots[i] = in
	q.ps[i].Buf = in.buf
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
		// If it handed requests to cores' goroutines (their cores were
		// busy), let those run before the next read, which would most
		// often find nothing and cost a system call on the requests' way.
		// Otherwise read at once: measured faster (spec/nic.md, Measured:
		// the network path), most likely because a yield lets the callers
		// just answered run on this thread in turn rather than on the
		// other CPU beside the next batch.
		if q.handleBatch(n) {
			runtime.Gosched()
		}
	}
}

// handleBatch handles ps[:n] with the tx queue held, so that the replies
// ready by the end of each sender's run of datagrams leave together: when
// the sender changes, the replies gathered so far are written at once
// (if there are senderFlush of them), so that a caller gets its answers
// while the rx loop still works on the next caller's requests
// (spec/nic.md, Measured: the network path).
// It reports whether it handed any request to a core's goroutine.
func (q *rxQueue) handleBatch(n int) (queued bool) {
	s := q.s
	s.ctr.rxPackets.Add(uint64(n))
	s.ctr.rxBatches.Add(1)
	held := q.tx.Hold()
	for i := range n {
		switch {
		case !held || i == 0:
		case q.ps[i].Addr != q.ps[i-1].Addr:
			q.tx.FlushHeld(senderFlush)
		case i%pipelineFlush == 0:
			q.tx.FlushHeld(1)
		}
		submitted, handed := q.handle(i)
		if submitted {
			q.take(i) // the buffer went with the request
		}
		queued = queued || handed
	}
	if held {
		q.tx.Release()
	}
	return queued
}

// senderFlush is how many replies must be waiting for a change of sender
// in a batch to write them: callers that send one request each, interleaved,
// still share system calls (at most one per senderFlush replies).
// pipelineFlush: within one sender's run of a batch the replies so far
// leave every pipelineFlush requests, so that the caller's side starts on
// them while this side works on the rest, instead of both sides taking
// turns with whole batches (a closed loop of 4 clients × 8 in flight from
// one socket moved in lockstep, each side busy while the other waited:
// MICA's YCSB-B ran at 135,000–144,000 ops/s with a third of 2 CPUs idle,
// 198,000–217,000 with this; docs/workloads.md, MICA).
const (
	senderFlush   = 4
	pipelineFlush = 8
)

// handle opens datagram i and acts on it, step by step: open (decode,
// authenticate, this node's, a request), route (the route prefixes: which
// window, where the reply goes), admit (the window and the reply cache:
// only a new request goes on), dispatch (a control op, or Submit). It
// reports whether the datagram was submitted, so that its buffer now
// belongs to the request, and whether it went to another goroutine (a
// core's, or a control op's).
func (q *rxQueue) handle(i int) (submitted, handed bool) {
	p := &q.ps[i]
	pkt, ok := q.open(p)
	if !ok {
		return false, false
	}
	rt, ok := q.route(&pkt, p.Addr)
	if !ok {
		return false, false
	}
	pr, ok := q.admit(&pkt, &rt)
	if !ok {
		return false, false
	}
	return true, q.dispatch(q.slots[i], &pkt, &rt, pr)
}

// open decodes datagram p and checks its MAC with the tenant's key
// (Codec.Decode), passes on a relayed reply, and keeps a request or a
// control packet for this node; everything else is counted and dropped.
func (q *rxQueue) open(p *transport.Packet) (wire.Packet, bool) {
	s := q.s
	pkt, err := q.codec.Decode(p.Buf[:p.N])
	if err != nil {
		s.ctr.Count(err)
		return pkt, false
	}
	if isRelay(&pkt) { // addressed to the caller, not to this node
		q.relay(&pkt, p.Buf[:p.N])
		return pkt, false
	}
	if pkt.Dst != s.cfg.Node && !describesAnyNode(&pkt) {
		s.ctr.wrongDst.Add(1)
		return pkt, false
	}
	switch pkt.Type {
	case wire.TypeRequest, wire.TypeControl:
	case wire.TypeCredit:
		s.ctr.creditPackets.Add(1)
		return pkt, false
	default:
		s.ctr.unexpectedType.Add(1)
		return pkt, false
	}
	if pkt.Flags&wire.FlagRetransmit != 0 {
		s.ctr.retransmitted.Add(1)
	}
	return pkt, true
}

// routed is what a request's route prefixes say (spec/wire.md, Routing).
type routed struct {
	route   wire.Route
	payload []byte         // the request's own payload, after the prefixes
	key     peerKey        // the window it belongs to
	replyTo transport.Addr // where its reply goes
	relay   bool           // replyTo is the forwarding node's, which passes the reply on
	shared  bool           // claimed in the Front's window too: its end goes there
	// answered: the Front's window says the server answered it before, so
	// it must not run, whatever the server's own window says now.
	answered bool
}

// route reads pkt's route prefixes, if it has any: which window the
// request belongs to, where its reply goes, which program it names.
func (q *rxQueue) route(pkt *wire.Packet, from transport.Addr) (routed, bool) {
	s := q.s
	rt := routed{payload: pkt.Payload, key: peerKey{src: pkt.Src, tenant: pkt.Tenant}, replyTo: from}
	if pkt.Flags&(wire.FlagForwarded|wire.FlagProgram|wire.FlagOneWay) == 0 {
		return rt, true
	}
	if pkt.Type != wire.TypeRequest {
		s.ctr.CountMalformed(wire.MalformedRoute)
		return rt, false
	}
	var err error
	rt.route, rt.payload, err = wire.SplitRoute(pkt)
	if err != nil {
		s.ctr.CountMalformed(wire.MalformedRoute)
		return rt, false
	}
	switch {
	case pkt.Flags&wire.FlagOneWay != 0:
		rt.key.kind = peerOneWay
	case rt.route.Forwarded:
		rt.key.kind, rt.key.via = peerForwarded, rt.route.Via
		rt.replyTo, rt.relay = s.forwardReplyTo(pkt.Src, &rt.route, from)
	}
	return rt, true
}

// admit runs pkt through its peer's anti-replay window and reply cache:
// a new request takes its slot (running) and goes on, with its peer; a
// duplicate is answered from the cache, forwarded again or dropped, and
// one too old or below an evicted window's edge is dropped.
func (q *rxQueue) admit(pkt *wire.Packet, rt *routed) (*peer, bool) {
	s := q.s
	id := pkt.RequestID
	if s.cfg.Front != nil && rt.key.kind == peerDirect {
		goOn, shared, answered := q.frontAdmit(pkt, rt)
		if !goOn {
			return nil, false
		}
		rt.shared, rt.answered = shared, answered
	}
	var pr *peer
	for {
		if pr = s.peer(rt.key); pr == nil {
			s.ctr.peersFull.Add(1)
			q.frontAbandon(pkt, rt)
			return nil, false
		}
		pr.mu.Lock()
		if !pr.evicted {
			break
		}
		pr.mu.Unlock() // evicted meanwhile: its successor has the floor
	}
	pr.seen.Store(true)
	if pr.hasFloor && id <= pr.floor {
		pr.mu.Unlock()
		s.ctr.replaysEvicted.Add(1)
		q.frontAbandon(pkt, rt)
		return nil, false
	}
	switch pr.win.Observe(id) {
	case wire.IDNew:
		if rt.answered { // its state here was evicted since: it ran once
			pr.mu.Unlock()
			s.ctr.replaysUncached.Add(1)
			return nil, false
		}
		slot := pr.slot(id)
		slot.id, slot.state = id, slotRunning
		pr.running++
		pr.mu.Unlock()
		return pr, true
	case wire.IDDuplicate:
		q.duplicate(pr, pr.slot(id), id, rt) // unlocks pr.mu
	default: // wire.IDTooOld
		pr.mu.Unlock()
		s.ctr.replaysTooOld.Add(1)
	}
	q.frontAbandon(pkt, rt)
	return nil, false
}

// duplicate acts on a request id seen before, by what its reply cache
// slot holds; pr.mu is held and released.
func (q *rxQueue) duplicate(pr *peer, slot *cacheSlot, id uint64, rt *routed) {
	s := q.s
	switch {
	case rt.key.kind == peerOneWay:
		pr.mu.Unlock()
		s.ctr.duplicatesOneWay.Add(1)
	case slot.id == id && slot.state == slotDone:
		b := q.resealRepeat(slot.dgram)
		pr.mu.Unlock()
		q.tx.Push(rt.replyTo, b)
		s.ctr.cacheHits.Add(1)
	case slot.id == id && slot.state == slotRunning:
		pr.mu.Unlock()
		s.ctr.duplicatesRunning.Add(1)
	case slot.id == id && slot.state == slotForwarded && len(slot.dgram) > 0:
		// Forward it again, as it was, to the node it went to (its dst,
		// at its address now): the next node's window and reply cache see
		// a duplicate and answer from its cache.
		fwd, _ := wire.Parse(slot.dgram, q.codec.MaxPayload()) // sealed here: it parses
		to, ok := s.Peer(fwd.Dst)
		if !ok { // the node left the address book meanwhile
			pr.mu.Unlock()
			s.ctr.duplicatesForwarded.Add(1)
			return
		}
		b := append(q.tx.Buffer(), slot.dgram...)
		pr.mu.Unlock()
		q.tx.Push(to, b)
		s.ctr.reforwarded.Add(1)
	case slot.id == id && slot.state == slotForwarded:
		pr.mu.Unlock()
		s.ctr.duplicatesForwarded.Add(1)
	case slot.id == id && slot.state == slotNotCached:
		pr.mu.Unlock()
		s.ctr.duplicatesNotCached.Add(1)
	default:
		pr.mu.Unlock()
		s.ctr.replaysUncached.Add(1)
	}
}

// dispatch hands an admitted request to its runner, in, the receive
// slot's inflight, which holds the request's record and is the sink of
// its outcome: a control op runs on a goroutine of its own; a request is
// submitted to the NIC, which runs it here if its core is idle rather
// than hand it to the core's goroutine (NIC.SubmitInline). It reports
// whether the request went to another goroutine.
func (q *rxQueue) dispatch(in *inflight, pkt *wire.Packet, rt *routed, pr *peer) (handed bool) {
	s := q.s
	in.peer, in.addr, in.relay, in.hdr, in.oneway = pr, rt.replyTo, rt.relay, pkt.Header, rt.key.kind == peerOneWay
	in.shared = rt.shared
	s.inflight.Add(1)
	if pkt.Type == wire.TypeControl {
		s.ctr.control.Add(1)
		if why := s.startControl(pkt.Tenant); why != "" {
			s.ctr.controlRefused.Add(1)
			in.answerControl(q.codec, nil, nicrt.StatusOverloaded, why)
			return false
		}
		go in.runControl(pkt.Payload)
		return true
	}
	handler := pkt.Handler
	if rt.route.HasProgram {
		// The target's own id of the handler the sender's copy of the
		// program named; 0 (an unknown handler, refused by the NIC and
		// answered so) when this node has no such program or handler.
		if handler = s.resolveProgram(uint64(pkt.Tenant), rt.route.Program, pkt.Handler); handler == 0 {
			s.ctr.unknownProgram.Add(1)
		}
	}
	if in.oneway {
		s.ctr.oneWay.Add(1)
	} else {
		s.ctr.requests.Add(1)
	}
	msg := nicrt.Message{
		Tenant: uint64(pkt.Tenant), Handler: handler, RequestID: pkt.RequestID,
		SrcNode: uint64(pkt.Src), Payload: rt.payload,
	}
	return s.nic.SubmitInline(&msg, in)
}

// resealRepeat returns a copy of the cached reply dgram (sealed here) in
// a buffer of the tx queue, with FlagRetransmit set (sealed again if it
// was not): a repeated reply, so that the caller can tell the first try's
// own answer from it and know a retransmission spurious when both come
// (spec/wire.md, Flags).
func (q *rxQueue) resealRepeat(dgram []byte) []byte {
	pkt, err := wire.Parse(dgram, q.codec.MaxPayload())
	if err == nil && pkt.Flags&wire.FlagRetransmit == 0 {
		h := pkt.Header
		h.Flags |= wire.FlagRetransmit
		if b, err := q.codec.Encode(q.tx.Buffer(), &h, pkt.Payload); err == nil {
			return b
		}
	}
	return append(q.tx.Buffer(), dgram...)
}

// describesAnyNode reports whether pkt is a describe op sent to dst 0: the
// one packet a node takes without its id, so that a caller that knows only
// an address can learn it (spec/wire.md, Control plane).
func describesAnyNode(pkt *wire.Packet) bool {
	return pkt.Dst == 0 && pkt.Type == wire.TypeControl && wire.Op(pkt.Handler) == wire.OpDescribe
}
