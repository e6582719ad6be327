package server

import (
	"github.com/naam-project/naam/nicrt"
	"github.com/naam-project/naam/nicrt/transport"
	"github.com/naam-project/naam/nicrt/wire"
)

// inflight is a request between Submit and its end: the sink the NIC
// hands the outcome to (Done), and sends and forwards through (Send,
// Forward); it owns the receive buffer its payload aliases.
type inflight struct {
	s    *Server
	q    *rxQueue
	buf  []byte
	peer *peer
	addr transport.Addr // where the reply goes: the sender, the original caller of a forwarded request, or the node that relays it
	hdr  wire.Header
	// relay: addr is the forwarding node's, which passes the reply on to
	// the caller (the reply carries FlagForwarded; spec/wire.md, Routing).
	relay bool
	// oneway: a one-way message, answered by nothing. fwd, when the
	// handler forwarded the request: the sealed datagram, for fwdTo.
	oneway bool
	fwd    []byte
	fwdTo  transport.Addr
	// shared: the id is claimed in the Front's window too; its end is
	// recorded there (cache).
	shared bool
}

// Held names the server as the Flusher of the replies it holds back.
func (in *inflight) Held() nicrt.Flusher { return in.s }

// Flush sends the replies core held back: its queue ran empty, so no
// more are coming from it for now.
func (s *Server) Flush(core int) {
	for i, tx := range s.dirty[core] {
		tx.Flush()
		s.dirty[core][i] = nil
	}
	s.dirty[core] = s.dirty[core][:0]
}

// repeatFlag is the FlagRetransmit of a reply to a request whose run came
// from a try that carried it: the reply is not the first try's own.
func repeatFlag(req *wire.Header) wire.Flags { return req.Flags & wire.FlagRetransmit }

// credits is the grant a reply carries (spec/nic.md, Credits): the NIC
// cores' free queue room shared out among the active peers, at least 1 and
// at most MaxCredits.
func (s *Server) credits() uint16 {
	share := s.nic.QueueSpace() / int(max(s.active.Load(), 1))
	return uint16(min(max(share, 1), s.cfg.MaxCredits))
}

// Done is a request's end: it seals the reply, keeps it in the reply
// cache and sends it. It runs where the request ran: on its core's
// goroutine, or on the rx goroutine, which runs a request inline when its
// core is idle (the reply then leaves with the batch's), or which got a
// rejection at Submit.
func (in *inflight) Done(r nicrt.Reply) {
	s := in.s
	switch {
	case in.oneway: // nobody waits for it: count how it ended
		in.cache(slotDone, nil)
		if r.Status != nicrt.StatusOK {
			s.ctr.oneWayFailed.Add(1)
		}
	case in.fwd != nil:
		// The handler forwarded it (and returned ReturnForwarded, or
		// faulted after forwarding: the request has left all the same).
		// Keep the sealed forward, so that a retransmission of the
		// caller's goes on to the same node unchanged, and send it.
		b := in.fwd
		in.fwd = nil
		in.cache(slotForwarded, b)
		s.ctr.forwarded.Add(1)
		in.send(r.Core, in.fwdTo, b)
	case r.Status == nicrt.StatusForwarded: // through an Outbox of the NIC's Config
		in.cache(slotForwarded, nil)
		s.ctr.forwarded.Add(1)
	default:
		b := in.seal(r)
		in.cache(slotDone, b)
		in.send(r.Core, in.addr, b)
	}
	in.release()
}

// seal encodes the reply to the request for r, in a buffer of the rx
// queue's tx queue, with the codec of the core that ran it: a reply, or
// an error reply whose status is the handler's code or the runtime's
// status and whose payload names the failing site.
func (in *inflight) seal(r nicrt.Reply) []byte {
	s, q := in.s, in.q
	codec := q.codec
	if r.Core >= 0 {
		codec = s.coreCodecs[r.Core]
	}
	req := &in.hdr
	h := wire.Header{
		Type: wire.TypeReply, Flags: repeatFlag(req), Credits: s.credits(), Tenant: req.Tenant, Handler: req.Handler,
		RequestID: req.RequestID, Src: s.cfg.Node, Dst: req.Src,
	}
	if in.relay {
		h.Flags |= wire.FlagForwarded
	}
	var payload []byte
	switch {
	case r.Status == nicrt.StatusOK:
		payload = r.Data
	case r.Status == nicrt.StatusError && r.Code > 0:
		// The payload names the failing site, file:line:col, when the
		// object's line table has it (spec/nic.md, Error replies).
		h.Type, h.Status = wire.TypeErrorReply, wire.Status(r.Code)
		if r.Pos.Line > 0 {
			pos := r.Pos.String()
			payload = []byte(pos[:min(len(pos), codec.MaxPayload())])
		}
	default:
		st := r.Status
		if st == nicrt.StatusError { // a code outside 1 … 2^31-1 cannot travel as one
			st = nicrt.StatusFault
		}
		h.Type, h.Status = wire.TypeErrorReply, st.Wire()
		if r.Err != nil && st == nicrt.StatusFault {
			msg := r.Err.Error()
			if r.Pos.Line > 0 {
				msg = r.Pos.String() + ": " + msg
			}
			payload = []byte(msg[:min(len(msg), codec.MaxPayload())])
		}
	}
	b, err := codec.Encode(q.tx.Buffer(), &h, payload)
	if err != nil {
		// Only a reply over the payload limit gets here.
		s.ctr.encodeErrors.Add(1)
		h.Type, h.Status = wire.TypeErrorReply, nicrt.StatusTooLarge.Wire()
		b, _ = codec.Encode(b[:0], &h, nil)
	}
	if h.Type == wire.TypeReply {
		s.ctr.replies.Add(1)
	} else {
		s.ctr.errorReplies.Add(1)
	}
	return b
}

// send sends b (from q.tx.buffer) to to from where the request ran: a core
// holds it back until its queue runs empty (Flush), so that the replies
// of a burst leave in one WriteBatch rather than one system call each.
func (in *inflight) send(core int, to transport.Addr, b []byte) {
	s, q := in.s, in.q
	if core < 0 {
		q.tx.Push(to, b)
		return
	}
	q.tx.Add(to, b)
	d := s.dirty[core]
	if len(d) == 0 || d[len(d)-1] != q.tx {
		s.dirty[core] = append(d, q.tx)
	}
}

// cache records the request's end in its peer's reply cache, unless the
// slot went to a newer id meanwhile. The slot's buffer is kept for the
// next id of the slot; a reply larger than it needs the bytes within
// MaxReplyCacheBytes and MaxTenantReplyCacheBytes, or is not kept
// (slotNotCached).
func (in *inflight) cache(state slotState, dgram []byte) {
	s, pr, id := in.s, in.peer, in.hdr.RequestID
	if in.shared {
		var reply []byte
		if state == slotDone {
			reply = dgram
		}
		s.cfg.Front.Complete(in.hdr.Tenant, in.hdr.Src, id, reply)
	}
	pr.mu.Lock()
	slot := pr.slot(id)
	pr.running--
	if slot.id == id && slot.state == slotRunning {
		slot.state = state
		if len(dgram) > cap(slot.dgram) {
			s.uncache(pr, slot)
			if !s.reserveCache(pr, len(dgram)) {
				slot.state = slotNotCached
				s.ctr.notCached.Add(1)
			} else {
				slot.dgram = make([]byte, 0, len(dgram))
			}
		}
		if slot.state != slotNotCached {
			slot.dgram = append(slot.dgram[:0], dgram...)
		}
	}
	pr.mu.Unlock()
}

// reserveCache takes n bytes of the reply cache for pr's tenant, if both
// limits allow.
func (s *Server) reserveCache(pr *peer, n int) bool {
	node, tenant := s.cacheBytes.Add(int64(n)), pr.bytes.Add(int64(n))
	if uint64(node) > s.cfg.MaxReplyCacheBytes || uint64(tenant) > s.cfg.MaxTenantReplyCacheBytes {
		s.cacheBytes.Add(-int64(n))
		pr.bytes.Add(-int64(n))
		return false
	}
	return true
}

// uncache gives back the bytes of slot's buffer; pr.mu is held.
func (s *Server) uncache(pr *peer, slot *cacheSlot) {
	if n := int64(cap(slot.dgram)); n > 0 {
		s.cacheBytes.Add(-n)
		pr.bytes.Add(-n)
		slot.dgram = nil
	}
}

func (in *inflight) release() {
	s := in.s
	in.q, in.peer, in.hdr, in.relay = nil, nil, wire.Header{}, false
	in.oneway, in.fwd, in.fwdTo, in.shared = false, nil, transport.Addr{}, false
	s.pool.Put(in)
	s.inflight.Done()
}
