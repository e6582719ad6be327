package nicrt

// The way of a message into the model: Submit → dispatch (lookup, the
// tenant check) → place (steering, spill) → a core's rx queue
// (core.enqueue), or a rejection straight to the sink.

// Submit queues msg for the handler or verb it names; sink.Done receives
// the outcome exactly once: on the core that ran it, or at once on the
// caller's goroutine when the message is rejected (unknown or foreign
// handler, full queues, closed NIC). Submit never blocks.
//
// msg is copied, but msg.Payload must stay unchanged until Done runs.
// sink must not be nil.
func (n *NIC) Submit(msg *Message, sink Sink) { n.submit(msg, sink, false) }

// SubmitInline is Submit for a submitter that may run the message itself:
// if the core it is placed on is idle (nothing queued, nothing running),
// it runs on the caller's goroutine before SubmitInline returns, as the
// core's goroutine would have run it next, without the hand-off. It
// reports whether the message went to a core's goroutine instead (queued):
// the network side's rx loop then lets that goroutine run before it reads
// again.
func (n *NIC) SubmitInline(msg *Message, sink Sink) (queued bool) {
	return n.submit(msg, sink, true)
}

func (n *NIC) submit(msg *Message, sink Sink, inline bool) (queued bool) {
	n.active.Add(1)
	st := StatusClosed
	if !n.closed.Load() {
		st, queued = n.dispatch(msg, sink, inline)
	}
	n.active.Add(-1)
	if st != StatusOK {
		n.rejected[st].Add(1)
		sink.Done(rejection(st))
	}
	return queued
}

// Call submits msg and waits for the reply, whose Data it copies. For
// tests and tools; the network side uses Submit.
func (n *NIC) Call(msg *Message) Reply {
	ch := make(chan Reply, 1)
	n.Submit(msg, SinkFunc(func(r Reply) {
		if r.Data != nil {
			r.Data = append([]byte{}, r.Data...)
		}
		ch <- r
	}))
	return <-ch
}

// dispatch finds msg's handler, checks its tenant, places it and queues
// it. It returns StatusOK when queued (or run inline), or the rejection;
// queued: handed to a core's goroutine.
func (n *NIC) dispatch(msg *Message, sink Sink, inline bool) (st Status, queued bool) {
	h, st := n.lookup(msg)
	if st != StatusOK {
		return st, false
	}
	t := task{msg: *msg, sink: sink, h: h, inline: inline, price: max(h.maxInsns, 1), tc: n.tenantCt.get(msg.Tenant)}
	hash := n.steer(msg)
	if h.verb != 0 {
		// Verbs run on NIC cores only, as an RDMA NIC runs them; their
		// tenant is checked against the region they name.
		t.place = PlaceNIC
		if res := n.pickCore(n.nic, t.tc, hash, false).enqueue(&t); res != pushed {
			return n.refused(&t, res), false
		}
		return StatusOK, t.queued
	}
	p := h.prog
	p.inflight.Add(1)
	if p.draining.Load() {
		p.release()
		return StatusUnknownHandler, false
	}
	if res := n.place(&t, hash); res != pushed {
		p.release()
		return n.refused(&t, res), false
	}
	return StatusOK, t.queued
}

// refused counts a message no queue took and returns its status.
func (n *NIC) refused(t *task, res pushResult) Status {
	if res == pushClosed {
		return StatusClosed
	}
	t.h.ctr.rejected.Add(1)
	t.tc.dropped.Add(1)
	return StatusOverloaded
}

// lookup is the dispatch proper: one table lookup and the tenant check.
func (n *NIC) lookup(msg *Message) (*handler, Status) {
	h := n.handlers.get(msg.Handler)
	if h == nil {
		return nil, StatusUnknownHandler
	}
	if h.verb == 0 && h.tenant != msg.Tenant {
		h.ctr.rejected.Add(1)
		return nil, StatusForeignHandler
	}
	return h, StatusOK
}

// place picks the core for t and queues it there: a host core for a
// handler placed on the host or under the host policy; otherwise the
// steered NIC core, unless the policy is auto, the core's queue is past
// the spill threshold and a host core has room. Host cores take nothing
// under a host load of 1. Under the steer policy a handler that may run
// on either class is steered (placeSteered); the rest is PlaceFor.
func (n *NIC) place(t *task, hash uint64) pushResult {
	h := t.h
	policy := n.Placement()
	if policy == PolicySteer && h.place == PlaceNIC {
		return n.placeSteered(t, hash)
	}
	c := n.pickCore(n.nic, t.tc, hash, false)
	switch t.place = PlaceFor(policy, h.place, n.hostOpen(), c.q.Len(), n.cfg.SpillThreshold); t.place {
	case PlaceNone:
		return pushFull
	case PlaceNIC:
		return c.enqueue(t)
	case PlaceHostSpill:
		if n.pickCore(n.host, t.tc, hash, true).enqueue(t) == pushed {
			return pushed
		}
		t.place = PlaceNIC
		return c.enqueue(t)
	}
	return n.pickCore(n.host, t.tc, hash, true).enqueue(t)
}

// steer hashes what the steering policy looks at.
func (n *NIC) steer(msg *Message) uint64 {
	if n.cfg.Steering == SteerRequest {
		return mix(msg.SrcNode*0x9e3779b97f4a7c15 ^ msg.RequestID)
	}
	return mix(msg.SrcNode*0x9e3779b97f4a7c15 ^ msg.Tenant)
}

// mix is SplitMix64's finaliser: every input bit affects every output bit.
func mix(x uint64) uint64 {
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	x ^= x >> 31
	return x
}
