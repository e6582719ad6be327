package sim

import "container/heap"

// The event queue: a binary heap ordered by (virtual time, sequence
// number), the sequence number being the order in which events were
// scheduled, so that events at one instant run in the order they were
// made and the run is the same every time. It is written out rather than
// on container/heap because every event of a run passes through it: no
// interface calls, no boxing of the event.

type eventKind uint8

const (
	evArrive   eventKind = iota // a datagram reaches its destination
	evDone                      // a run on a node's core ends
	evSend                      // a run's one-way message leaves its node (at the run's end)
	evIssue                     // a client starts its next operation
	evScenario                  // Scenario.Events[op]
	evFinish                    // a run at the caller is done: the op ends
)

// event is one scheduled thing. Which fields mean what depends on kind.
type event struct {
	at   int64
	seq  uint64
	kind eventKind
	pk   packetKind
	hop  uint8
	try  uint8
	src  int32 // endpoint
	dst  int32 // endpoint
	op   int32 // op or one-way record
	gen  uint32
	core int32 // evDone: the core
	// epoch is the node's epoch when the run began (evDone, evSend): a
	// node that failed since has lost it.
	epoch uint32
}

type eventHeap struct {
	ev  []event
	seq uint64
}

func (h *eventHeap) less(i, j int) bool {
	a, b := &h.ev[i], &h.ev[j]
	if a.at != b.at {
		return a.at < b.at
	}
	return a.seq < b.seq
}

func (h *eventHeap) push(e event) {
	h.seq++
	e.seq = h.seq
	h.ev = append(h.ev, e)
	i := len(h.ev) - 1
	for i > 0 {
		p := (i - 1) / 2
		if !h.less(i, p) {
			break
		}
		h.ev[i], h.ev[p] = h.ev[p], h.ev[i]
		i = p
	}
}

func (h *eventHeap) pop() event {
	top := h.ev[0]
	last := len(h.ev) - 1
	h.ev[0] = h.ev[last]
	h.ev = h.ev[:last]
	i := 0
	for {
		l, r, m := 2*i+1, 2*i+2, i
		if l < last && h.less(l, m) {
			m = l
		}
		if r < last && h.less(r, m) {
			m = r
		}
		if m == i {
			break
		}
		h.ev[i], h.ev[m] = h.ev[m], h.ev[i]
		i = m
	}
	return top
}

func (h *eventHeap) len() int { return len(h.ev) }

// timers are the callers' retransmission timers, one per op in flight at
// most, in a heap of their own (container/heap) that an op leaves when it
// ends: so the event heap does not fill with the timers of answered
// requests. Their sequence numbers come from the event heap's counter,
// and the loop takes whichever of the two heaps' heads is first by (time,
// sequence).
type timers struct {
	s   *sim
	ops []int32 // op indices by (op.timerAt, op.timerSeq)
}

func (t *timers) Len() int { return len(t.ops) }

func (t *timers) Less(i, j int) bool {
	a, b := &t.s.ops[t.ops[i]], &t.s.ops[t.ops[j]]
	if a.timerAt != b.timerAt {
		return a.timerAt < b.timerAt
	}
	return a.timerSeq < b.timerSeq
}

func (t *timers) Swap(i, j int) {
	t.ops[i], t.ops[j] = t.ops[j], t.ops[i]
	t.s.ops[t.ops[i]].timerPos = int32(i)
	t.s.ops[t.ops[j]].timerPos = int32(j)
}

func (t *timers) Push(x any) {
	i := x.(int32)
	t.s.ops[i].timerPos = int32(len(t.ops))
	t.ops = append(t.ops, i)
}

func (t *timers) Pop() any {
	i := t.ops[len(t.ops)-1]
	t.ops = t.ops[:len(t.ops)-1]
	t.s.ops[i].timerPos = -1
	return i
}

// setTimer (re)arms op i's timer for at.
func (s *sim) setTimer(i int32, at int64) {
	o := &s.ops[i]
	s.heap.seq++
	o.timerAt, o.timerSeq = at, s.heap.seq
	if o.timerPos < 0 {
		heap.Push(&s.timers, i)
	} else {
		heap.Fix(&s.timers, int(o.timerPos))
	}
}

// stopTimer disarms op i's timer, if armed.
func (s *sim) stopTimer(i int32) {
	if p := s.ops[i].timerPos; p >= 0 {
		heap.Remove(&s.timers, int(p))
	}
}

// nextIsTimer reports whether the first thing to happen is a timer.
func (s *sim) nextIsTimer() bool {
	if len(s.timers.ops) == 0 {
		return false
	}
	if s.heap.len() == 0 {
		return true
	}
	o, e := &s.ops[s.timers.ops[0]], &s.heap.ev[0]
	if o.timerAt != e.at {
		return o.timerAt < e.at
	}
	return o.timerSeq < e.seq
}
