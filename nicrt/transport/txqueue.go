package transport

import (
	"runtime"
	"sync"
	"sync/atomic"
)

// TxQueue batches the datagrams many goroutines send through one Conn by
// flat combining: a sender appends its datagram and, if nobody is writing,
// becomes the writer and sends everything pending in one WriteBatch, again
// until nothing is left. At light load a datagram leaves at once from the
// goroutine that made it (no hand-off); under load the writer's system
// call collects the others' datagrams for the next batch. The buffers are
// the queue's, recycled once written.
type TxQueue struct {
	conn    Conn
	bufSize int

	mu       sync.Mutex
	pending  []Packet
	spare    []Packet
	free     [][]byte
	flushing bool

	packets, batches, errors atomic.Uint64
}

// Stats returns the datagrams written, the WriteBatch calls and the calls
// that failed for a datagram.
func (q *TxQueue) Stats() (packets, batches, errors uint64) {
	return q.packets.Load(), q.batches.Load(), q.errors.Load()
}

// NewTxQueue is a queue that writes to conn, in buffers of bufSize bytes.
func NewTxQueue(conn Conn, bufSize int) *TxQueue {
	return &TxQueue{conn: conn, bufSize: bufSize}
}

// Buffer returns an empty buffer of capacity bufSize for a datagram that
// will be pushed.
func (q *TxQueue) Buffer() []byte {
	q.mu.Lock()
	if n := len(q.free); n > 0 {
		b := q.free[n-1]
		q.free = q.free[:n-1]
		q.mu.Unlock()
		return b
	}
	q.mu.Unlock()
	return make([]byte, 0, q.bufSize)
}

// Push queues b (from buffer) for to and writes if nobody else is.
func (q *TxQueue) Push(to Addr, b []byte) { q.PushYield(to, b, false) }

// PushYield is push; with yield, a sender that becomes the writer first
// lets the goroutines that are ready run, so that those about to send
// join its batch (a client's callers, woken together by a batch of
// replies). With nothing else ready it costs about 100 ns, but it lets a
// reader run that would otherwise wait: only worth it when other sends
// are likely.
func (q *TxQueue) PushYield(to Addr, b []byte, yield bool) {
	q.mu.Lock()
	q.pending = append(q.pending, Packet{Addr: to, Buf: b, N: len(b)})
	if q.flushing {
		q.mu.Unlock()
		return
	}
	q.flushing = true
	if yield {
		q.mu.Unlock()
		runtime.Gosched()
		q.mu.Lock()
	}
	q.flushLocked()
}

// flushAt is how many datagrams add lets wait before it writes them
// itself.
const flushAt = 64

// Add queues b for to without writing it, unless flushAt datagrams are
// waiting: the caller promises a flush soon (the server's cores add their
// replies and flush when their rx queue runs empty).
func (q *TxQueue) Add(to Addr, b []byte) {
	q.mu.Lock()
	q.pending = append(q.pending, Packet{Addr: to, Buf: b, N: len(b)})
	if q.flushing || len(q.pending) < flushAt {
		q.mu.Unlock()
		return
	}
	q.flushing = true
	q.flushLocked()
}

// Flush writes what is waiting, unless another goroutine is writing (it
// takes what is waiting too).
func (q *TxQueue) Flush() {
	q.mu.Lock()
	if q.flushing || len(q.pending) == 0 {
		q.mu.Unlock()
		return
	}
	q.flushing = true
	q.flushLocked()
}

// Drain writes what is waiting and returns once no write is in progress.
func (q *TxQueue) Drain() {
	for {
		q.mu.Lock()
		if !q.flushing {
			q.flushing = true
			q.flushLocked()
			return
		}
		q.mu.Unlock()
		runtime.Gosched()
	}
}

// Hold makes the caller the writer, if nobody is, so that datagrams
// pushed meanwhile wait for its release: the rx loop holds the queue while
// it handles a batch and sends the replies it gathered in one call. It
// reports whether the caller got the queue (and must release it).
func (q *TxQueue) Hold() bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.flushing {
		return false
	}
	q.flushing = true
	return true
}

// Release writes what is pending and gives up the writer's role.
func (q *TxQueue) Release() {
	q.mu.Lock()
	q.flushLocked()
}

// FlushHeld writes what is pending, if at least least datagrams are, and
// stays the writer: the holder of the queue (hold) sends the replies ready
// so far and goes on.
func (q *TxQueue) FlushHeld(least int) {
	q.mu.Lock()
	if len(q.pending) >= least {
		q.writePendingLocked()
	}
	q.mu.Unlock()
}

// flushLocked writes until nothing is pending; q.mu is held on entry and
// released on return.
func (q *TxQueue) flushLocked() {
	q.writePendingLocked()
	q.flushing = false
	q.mu.Unlock()
}

// writePendingLocked writes until nothing is pending; q.mu is held, and
// released during each write.
func (q *TxQueue) writePendingLocked() {
	for len(q.pending) > 0 {
		batch := q.pending
		q.pending = q.spare[:0]
		q.mu.Unlock()
		q.write(batch)
		q.mu.Lock()
		for i := range batch {
			q.free = append(q.free, batch[i].Buf[:0])
			batch[i] = Packet{}
		}
		q.spare = batch[:0]
	}
}

// write sends batch, skipping a datagram the conn refuses (a lost
// datagram is the reliability layer's business, as any other loss).
func (q *TxQueue) write(batch []Packet) {
	for len(batch) > 0 {
		n, err := q.conn.WriteBatch(batch)
		q.batches.Add(1)
		q.packets.Add(uint64(n))
		if err == nil {
			return
		}
		q.errors.Add(1)
		batch = batch[min(n+1, len(batch)):]
	}
}
