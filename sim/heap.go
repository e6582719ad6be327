package sim

// The event queue: a binary heap ordered by (virtual time, sequence
// number), the sequence number being the order in which events were
// scheduled, so that events at one instant run in the order they were
// made and the run is the same every time.

type eventKind uint8

const (
	evArrive   eventKind = iota // a datagram reaches its destination
	evDone                      // a run on a node's core ends
	evTimeout                   // a caller's retransmission timer
	evSend                      // a run's one-way message leaves its node (at the run's end)
	evIssue                     // a client starts its next operation
	evScenario                  // Scenario.Events[a]
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
