package nicrt

import (
	"sync"
	"sync/atomic"
	"time"
)

// rxQueue is one core's rx queue: bounded, with many submitters and the
// core as its one consumer. Without Config.Fair it is one FIFO. With it,
// every tenant has a FIFO of its own and the core serves them by deficit
// round robin (DRR, Shreedhar and Varghese, SIGCOMM'95), each message
// priced by its handler's proven instruction bound: a visit gives a tenant
// quantum × weight instructions' worth of credit, and it is served while
// its head message costs no more than its credit. Over time every tenant
// with work queued gets a share of the core's instructions proportional to
// its weight, whatever its messages cost; a tenant's queue is also capped
// (TenantQuota.MaxQueued), so that no tenant fills the core's queue.
type rxQueue struct {
	mu      sync.Mutex
	fair    bool
	depth   int    // the bound on all queued messages
	quantum uint64 // credit per visit and unit of weight, in instructions
	quota   func(tenant uint64) TenantQuota
	// flows are the tenants' queues (fair); fifo the one queue otherwise.
	flows map[uint64]*flow
	fifo  flow
	// ring is the tenants with messages queued in service order: ring[0]
	// is being served.
	ring   []*flow
	n      int          // queued, under mu
	length atomic.Int64 // n, for readers without mu
	// waiting: the consumer waits on wake until a push. sleeping: the
	// consumer is pacing (Config.Paced). With fair queueing a message is
	// fresh when its tenant had nothing queued and its modelled work on
	// the core is done (flow.done): it wakes the consumer, and the
	// consumer does not sleep again until every fresh message has been
	// served, each in its DRR turn, rather than after the sleep (fresh
	// counts them).
	waiting, sleeping bool
	fresh             int
	wake              chan struct{}
	closed            bool
}

const (
	// maxFlows bounds the tenants' flows of one core.
	maxFlows = 4096
	// overflowTenant keys the flow of the tenants past maxFlows.
	overflowTenant = ^uint64(0)
	// keepFlowTasks: a drained flow keeps a buffer this large for its next
	// burst, and frees a larger one.
	keepFlowTasks = 64
)

// flow is the queue of one tenant on one core (or the whole FIFO).
type flow struct {
	tasks   []task // a ring buffer: head, count
	head, k int
	weight  uint64
	limit   int
	// deficit is the credit left, in instructions; visited says the flow
	// had its quantum for the visit in progress; fresh, that its first
	// message since it was empty has not been served (rxQueue.fresh).
	deficit        uint64
	visited, fresh bool
	// done is when the tenant's modelled work on a paced core ends, as if
	// it had the core alone (ns since the NIC started; rxQueue.ran).
	done int64
}

func newRxQueue(depth int, fair bool, quantum uint64, quota func(uint64) TenantQuota) *rxQueue {
	q := &rxQueue{depth: depth, fair: fair, quantum: max(quantum, 1), quota: quota, wake: make(chan struct{}, 1)}
	q.fifo = flow{weight: 1, limit: depth}
	if fair {
		q.flows = map[uint64]*flow{}
	}
	return q
}

// Len is the number of messages queued.
func (q *rxQueue) Len() int { return int(q.length.Load()) }

// Cap is the queue's bound.
func (q *rxQueue) Cap() int { return q.depth }

// pushResult says why push refused a message.
type pushResult uint8

const (
	pushed    pushResult = iota
	pushFull             // the core's queue is full
	pushQuota            // the tenant's queue on this core is at its cap
	pushClosed
)

// push queues t without blocking.
func (q *rxQueue) push(t *task) pushResult {
	q.mu.Lock()
	if q.closed {
		q.mu.Unlock()
		return pushClosed
	}
	if q.n >= q.depth {
		q.mu.Unlock()
		return pushFull
	}
	f := &q.fifo
	if q.fair {
		f = q.flows[t.msg.Tenant]
		if f == nil {
			// Tenants past maxFlows share one flow: the network side admits
			// only tenants it has keys for, but nothing here may grow
			// without bound.
			key, qt := t.msg.Tenant, q.quota(t.msg.Tenant)
			if len(q.flows) >= maxFlows {
				key, qt = overflowTenant, TenantQuota{Weight: 1, MaxQueued: q.depth}
			}
			if f = q.flows[key]; f == nil {
				f = &flow{weight: uint64(qt.Weight), limit: qt.MaxQueued}
				q.flows[key] = f
			}
		}
	}
	if f.k >= f.limit {
		q.mu.Unlock()
		return pushQuota
	}
	f.put(t)
	if f.k == 1 {
		q.ring = append(q.ring, f)
	}
	q.n++
	q.length.Store(int64(q.n))
	if q.fair && f.k == 1 && f.done <= t.enq {
		f.fresh = true
		q.fresh++
	}
	wake := q.waiting || q.sleeping && f.fresh
	if wake {
		q.waiting, q.sleeping = false, false
	}
	q.mu.Unlock()
	if wake {
		select {
		case q.wake <- struct{}{}:
		default:
		}
	}
	return pushed
}

// sleep sleeps for d or until a push wakes it (sleeping, above), and
// reports whether it slept all of d.
func (q *rxQueue) sleep(timer *time.Timer, d time.Duration) (full bool) {
	q.mu.Lock()
	if q.fresh > 0 {
		q.mu.Unlock()
		return false
	}
	q.sleeping = true
	q.mu.Unlock()
	timer.Reset(d)
	select {
	case <-timer.C:
		full = true
	case <-q.wake:
		timer.Stop()
	}
	q.mu.Lock()
	q.sleeping = false
	q.mu.Unlock()
	return full
}

// pop takes the next message into *t, blocking while the queue is empty;
// false when the queue is closed and empty.
func (q *rxQueue) pop(t *task) bool {
	q.mu.Lock()
	for q.n == 0 {
		if q.closed {
			q.mu.Unlock()
			return false
		}
		q.waiting = true
		q.mu.Unlock()
		<-q.wake
		q.mu.Lock()
	}
	q.next(t)
	q.n--
	q.length.Store(int64(q.n))
	q.mu.Unlock()
	return true
}

// next is one DRR step: the first flow of the ring with credit for its
// head message gives it up; a flow without enough goes to the back of the
// ring with its credit kept. q.n > 0; q.mu is held.
func (q *rxQueue) next(t *task) {
	if !q.fair {
		q.fifo.take(t)
		if q.fifo.k == 0 {
			q.ring = q.ring[:0]
		}
		return
	}
	for passed := 0; ; passed++ {
		if passed == len(q.ring) {
			// A whole round served nobody (bounds far above the quantum):
			// give every flow the rounds the first to be served needs at
			// once, as that many rounds would.
			q.addRounds()
			passed = 0
		}
		f := q.ring[0]
		if !f.visited {
			f.deficit += q.quantum * f.weight
			f.visited = true
		}
		if price := f.tasks[f.head].price; price <= f.deficit {
			f.deficit -= price
			f.take(t)
			if f.fresh {
				f.fresh = false
				q.fresh--
				t.fresh = true
			}
			if f.k == 0 {
				// An idle flow keeps no credit (DRR), so that a tenant cannot
				// save up a burst.
				f.deficit, f.visited = 0, false
				if len(f.tasks) > keepFlowTasks {
					f.tasks, f.head = nil, 0
				}
				q.ring[0] = nil
				q.ring = q.ring[1:]
			}
			return
		}
		f.visited = false
		q.ring = append(q.ring[1:], f)
	}
}

// addRounds adds to every flow of the ring the credit of the fewest whole
// rounds after which one of them can pay for its head message.
func (q *rxQueue) addRounds() {
	rounds := uint64(1<<63 - 1)
	for _, f := range q.ring {
		per := q.quantum * f.weight
		need := (f.tasks[f.head].price - f.deficit + per - 1) / per
		rounds = min(rounds, need)
	}
	// The next visit of each flow adds one more round.
	for _, f := range q.ring {
		f.deficit += (rounds - 1) * q.quantum * f.weight
	}
}

// ran notes a paced run of tenant's message that arrived at arrival and
// cost d (ns), for its flow's done.
func (q *rxQueue) ran(tenant uint64, arrival int64, d float64) {
	q.mu.Lock()
	if f := q.flows[tenant]; f != nil {
		f.done = max(f.done, arrival) + int64(d)
	}
	q.mu.Unlock()
}

// close makes pop return false once the queue is empty, and push refuse.
func (q *rxQueue) close() {
	q.mu.Lock()
	q.closed = true
	wake := q.waiting
	q.waiting = false
	q.mu.Unlock()
	if wake {
		select {
		case q.wake <- struct{}{}:
		default:
		}
	}
}

// queuedBy returns the messages each tenant has queued (fair), or nil.
func (q *rxQueue) queuedBy() map[uint64]int {
	q.mu.Lock()
	defer q.mu.Unlock()
	if !q.fair {
		return nil
	}
	m := make(map[uint64]int, len(q.flows))
	for tenant, f := range q.flows {
		if f.k > 0 {
			m[tenant] = f.k
		}
	}
	return m
}

func (f *flow) put(t *task) {
	if f.k == len(f.tasks) {
		grown := make([]task, max(2*len(f.tasks), 4))
		for i := range f.k {
			grown[i] = f.tasks[(f.head+i)%len(f.tasks)]
		}
		f.tasks, f.head = grown, 0
	}
	f.tasks[(f.head+f.k)%len(f.tasks)] = *t
	f.k++
}

func (f *flow) take(t *task) {
	*t = f.tasks[f.head]
	f.tasks[f.head] = task{} // keep nothing of the message alive
	f.head = (f.head + 1) % len(f.tasks)
	f.k--
}
