package server

import (
	"github.com/naam-project/naam/bytecode"
	"github.com/naam-project/naam/nicrt"
	"github.com/naam-project/naam/nicrt/wire"
)

// Front is a tier in front of the server on the same port, such as the
// XDP tier (package xdp, which host ties to the server): it answers some
// requests before they reach the socket and passes the rest up. The
// server then judges the requests and control packets of every caller
// stream (a (tenant, src)'s own, not forwarded, not one-way) by the
// front's window first, so that one window and one reply cache serve both
// paths (spec/xdp.md, The two paths): a request the front answered is a
// duplicate here, and one the server answered is one there.
//
// The methods are called from the rx goroutines, the cores and the
// control plane at once: they must be safe for concurrent use and quick.
type Front interface {
	// Claim judges request id of the caller stream (tenant, src) by the
	// shared window and claims it when it is new; ok is false when the
	// front keeps no state for the stream, which it then passes up whole
	// (the server's own window alone judges it).
	Claim(tenant, src uint32, id uint64) (v FrontVerdict, ok bool)
	// Cached appends to dst the sealed reply the shared cache holds for
	// id, if it still does.
	Cached(dst []byte, tenant, src uint32, id uint64) ([]byte, bool)
	// Complete ends a claimed id: dgram is its sealed reply, nil when the
	// server keeps what answers it (a forward, a reply it did not cache
	// here), so that the front passes its duplicates up.
	Complete(tenant, src uint32, id uint64, dgram []byte)

	// Installed tells the front of a program installed over the wire,
	// with its object; Uninstalling of one about to be removed.
	Installed(p *nicrt.Program, obj *bytecode.Object)
	Uninstalling(p *nicrt.Program)
	// Registered tells the front of a region registered over the wire;
	// Unregistering of one about to be unregistered.
	Registered(r *nicrt.Region)
	Unregistering(r *nicrt.Region)

	// Counters are the front's, merged into the server's stats op.
	Counters() []nicrt.Counter
}

// FrontVerdict is what the shared window says of a request id.
type FrontVerdict uint8

const (
	// FrontClaimed: new, and now the server's to run.
	FrontClaimed FrontVerdict = iota
	// FrontRunning: claimed, not answered yet (by either path).
	FrontRunning
	// FrontCached: answered; the shared cache holds the reply.
	FrontCached
	// FrontElsewhere: answered by the server, which keeps the reply.
	FrontElsewhere
	// FrontTooOld: a full window below the newest claimed id, or a newer
	// id holds the slot.
	FrontTooOld
	// FrontBelowFloor: below an evicted window's edge.
	FrontBelowFloor
	// FrontContended: the shared slot changed under every try.
	FrontContended
)

// Credits is the grant the server's replies carry now (spec/nic.md,
// Credits), for a front to give its own replies.
func (s *Server) Credits() uint16 { return s.credits() }

// frontAdmit runs a caller stream's request through the front's window
// before the server's own (admit). It reports whether the request goes
// on to the server's window: claimed (shared marks it so), or answered
// by the server before (FrontElsewhere, answered: its reply cache
// answers it, and it never runs again); the other verdicts are acted on
// here.
func (q *rxQueue) frontAdmit(pkt *wire.Packet, rt *routed) (goOn, shared, answered bool) {
	s := q.s
	v, ok := s.cfg.Front.Claim(pkt.Tenant, pkt.Src, pkt.RequestID)
	if !ok {
		return true, false, false
	}
	switch v {
	case FrontClaimed:
		return true, true, false
	case FrontElsewhere:
		return true, false, true
	case FrontCached:
		var ok bool
		q.front, ok = s.cfg.Front.Cached(q.front[:0], pkt.Tenant, pkt.Src, pkt.RequestID)
		if !ok { // a newer id took the slot while it was read
			s.ctr.replaysTooOld.Add(1)
			return false, false, false
		}
		// A first try comes up answered when the tier had no room for its
		// reply in the frame (xdp.pass.tailroom): its reply as it is.
		b := append(q.tx.Buffer(), q.front...)
		if pkt.Flags&wire.FlagRetransmit != 0 {
			b = q.resealRepeat(q.front)
		}
		q.tx.Push(rt.replyTo, b)
		s.ctr.cacheHits.Add(1)
		s.ctr.frontCacheHits.Add(1)
	case FrontRunning:
		s.ctr.duplicatesRunning.Add(1)
	case FrontBelowFloor:
		s.ctr.replaysEvicted.Add(1)
	default: // FrontTooOld, FrontContended
		s.ctr.replaysTooOld.Add(1)
	}
	return false, false, false
}

// frontAbandon ends an id the Front's window claimed and the server's
// own then refused (its state was evicted, or full): it will never run
// here, so the Front passes its duplicates up, where they are refused
// again.
func (q *rxQueue) frontAbandon(pkt *wire.Packet, rt *routed) {
	if rt.shared {
		q.s.cfg.Front.Complete(pkt.Tenant, pkt.Src, pkt.RequestID, nil)
		rt.shared = false
	}
}
