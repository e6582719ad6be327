package transporttest

import (
	"fmt"
	"math/rand/v2"
	"os"
	"sync"
	"time"

	"github.com/naam-project/naam/nicrt/transport"
)

// Faults describes what a Lossy conn does to the packets of one direction.
// Each packet meets the faults in this order: it is dropped (probability
// Drop); else it may be duplicated (Duplicate: a copy follows the original);
// the original may be held back (Reorder); and every copy is delayed by
// Delay plus a uniform share of Jitter. The zero value passes everything.
type Faults struct {
	Drop      float64 // probability that a packet is lost
	Duplicate float64 // probability that a packet is delivered twice
	Reorder   float64 // probability that a packet is held back

	// A held-back packet is released after 1..ReorderDepth (uniform) later
	// packets have passed it, or after ReorderTimeout when traffic stops.
	// Defaults 3 and 1ms.
	ReorderDepth   int
	ReorderTimeout time.Duration

	// Delay and Jitter hold every packet for Delay + [0, Jitter). Packets
	// whose delays differ may overtake each other.
	Delay  time.Duration
	Jitter time.Duration
}

// LossyConfig configures a Lossy conn: a seed and the faults of each
// direction. The same seed, faults and sequence of packets give the same
// decisions; each direction draws from its own stream, so traffic in one
// does not change the other's.
type LossyConfig struct {
	Seed uint64
	Send Faults // applied by WriteBatch
	Recv Faults // applied by ReadBatch
}

// FaultStats counts what a Lossy conn did in one direction.
type FaultStats struct {
	Packets    uint64 // packets offered
	Dropped    uint64 // lost on purpose
	Duplicated uint64 // delivered twice
	Reordered  uint64 // held back behind later packets
	Delayed    uint64 // copies held for Delay+Jitter
	Passed     uint64 // copies delivered (duplicates count twice)
	Errors     uint64 // released packets that the inner conn failed to send
}

// LossyStats holds both directions' counters.
type LossyStats struct {
	Send, Recv FaultStats
}

// Lossy wraps a transport.Conn and injects faults, for testing the layers above.
// Packets it holds back (reordered or delayed) are copies in its own
// buffers; on the send side a timer sends them when they fall due, on the
// receive side ReadBatch wakes for them.
type Lossy struct {
	inner transport.Conn

	rmu     sync.Mutex         // one ReadBatch at a time
	scratch []transport.Packet // ReadBatch reads the inner conn into these
	sbufs   []byte

	mu       sync.Mutex
	closed   bool
	send     faultLine
	recv     faultLine
	ready    []linePacket // received packets waiting for ReadBatch
	readyOff int
	deadline time.Time // the caller's read deadline
	timer    *time.Timer
	timerAt  time.Time
}

// NewLossy wraps inner. The probabilities must lie in [0, 1].
func NewLossy(inner transport.Conn, cfg LossyConfig) (*Lossy, error) {
	for _, d := range []struct {
		name string
		f    *Faults
	}{{"send", &cfg.Send}, {"recv", &cfg.Recv}} {
		f := d.f
		for _, p := range []float64{f.Drop, f.Duplicate, f.Reorder} {
			if !(p >= 0 && p <= 1) {
				return nil, fmt.Errorf("transport: lossy %s: probability %v outside [0, 1]", d.name, p)
			}
		}
		if f.Delay < 0 || f.Jitter < 0 || f.ReorderTimeout < 0 || f.ReorderDepth < 0 {
			return nil, fmt.Errorf("transport: lossy %s: negative depth or duration", d.name)
		}
		if f.ReorderDepth == 0 {
			f.ReorderDepth = 3
		}
		if f.ReorderTimeout == 0 {
			f.ReorderTimeout = time.Millisecond
		}
	}
	l := &Lossy{inner: inner}
	// Distinct streams of one seed for the two directions.
	l.send = faultLine{f: cfg.Send, rng: rand.New(rand.NewPCG(cfg.Seed, 0x73656e64))}
	l.recv = faultLine{f: cfg.Recv, rng: rand.New(rand.NewPCG(cfg.Seed, 0x72656376))}
	return l, nil
}

// Stats returns the counters of both directions.
func (l *Lossy) Stats() LossyStats {
	l.mu.Lock()
	defer l.mu.Unlock()
	return LossyStats{Send: l.send.stats, Recv: l.recv.stats}
}

// LocalAddr is the inner conn's address.
func (l *Lossy) LocalAddr() transport.Addr { return l.inner.LocalAddr() }

// WriteBatch passes the packets through the send faults and writes what
// comes out now (with any held packets that fell due) in one inner
// WriteBatch. Dropped and held packets count as written. An error writing a
// packet released from an earlier call is counted in Stats().Send.Errors.
func (l *Lossy) WriteBatch(ps []transport.Packet) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return 0, fmt.Errorf("transport: lossy write: %w", transport.ErrClosed)
	}
	now := time.Now()
	line := &l.send
	line.out = line.out[:0]
	line.releaseDue(now)
	var bad error
	n := 0
	for ; n < len(ps); n++ {
		if bad = checkPacket(&ps[n]); bad != nil {
			break
		}
		line.offer(ps[n], n, false, now)
	}
	sent, err := l.writeOut()
	if err != nil {
		// Report the first caller packet the failure kept from the wire.
		n = len(ps)
		for _, o := range line.out[sent:] {
			if o.from >= 0 {
				n = o.from
				break
			}
		}
	}
	line.recycle()
	l.armSendTimer()
	if err == nil {
		err = bad
	}
	return n, err
}

// writeOut writes l.send.out to the inner conn; l.mu is held.
func (l *Lossy) writeOut() (int, error) {
	out := l.send.out
	if len(out) == 0 {
		return 0, nil
	}
	batch := l.send.batch[:0]
	for _, o := range out {
		batch = append(batch, o.p)
	}
	l.send.batch = batch
	sent, err := l.inner.WriteBatch(batch)
	for i := range batch {
		batch[i].Buf = nil
	}
	if err != nil {
		for _, o := range out[sent:] {
			if o.from < 0 {
				l.send.stats.Errors++
			}
		}
	}
	return sent, err
}

// armSendTimer makes the send timer fire when the next held packet is due.
func (l *Lossy) armSendTimer() {
	at := l.send.nextDue()
	if at.IsZero() || at.Equal(l.timerAt) {
		return
	}
	l.timerAt = at
	d := time.Until(at)
	if l.timer == nil {
		l.timer = time.AfterFunc(d, l.flushSend)
	} else {
		l.timer.Reset(d)
	}
}

func (l *Lossy) flushSend() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.timerAt = time.Time{}
	if l.closed {
		return
	}
	line := &l.send
	line.out = line.out[:0]
	line.releaseDue(time.Now())
	l.writeOut()
	line.recycle()
	l.armSendTimer()
}

// ReadBatch reads from the inner conn, passes each packet through the
// receive faults and returns what comes out, waking by itself when a held
// packet falls due.
func (l *Lossy) ReadBatch(ps []transport.Packet) (int, error) {
	if len(ps) == 0 {
		return 0, nil
	}
	l.rmu.Lock()
	defer l.rmu.Unlock()
	l.prepareScratch(ps)
	for {
		l.mu.Lock()
		if l.closed {
			l.mu.Unlock()
			return 0, fmt.Errorf("transport: lossy read: %w", transport.ErrClosed)
		}
		now := time.Now()
		l.recv.out = l.recv.out[:0]
		l.recv.releaseDue(now)
		l.queueReady()
		if l.readyOff < len(l.ready) {
			n := l.takeReady(ps)
			l.mu.Unlock()
			return n, nil
		}
		if !l.deadline.IsZero() && !now.Before(l.deadline) {
			l.mu.Unlock()
			return 0, fmt.Errorf("transport: lossy read: %w", os.ErrDeadlineExceeded)
		}
		l.setInnerDeadline()
		l.mu.Unlock()

		n, err := l.inner.ReadBatch(l.scratch[:len(ps)])

		l.mu.Lock()
		now = time.Now()
		l.recv.out = l.recv.out[:0]
		for i := 0; i < n; i++ {
			l.recv.offer(l.scratch[i], -1, true, now)
		}
		l.queueReady()
		l.mu.Unlock()
		if err != nil && !transport.IsTimeout(err) {
			return 0, err
		}
		// A timeout is ours (a held packet is due) or the caller's: the
		// next round tells which.
	}
}

// prepareScratch sizes the inner read buffers to the caller's largest.
func (l *Lossy) prepareScratch(ps []transport.Packet) {
	size := 0
	for i := range ps {
		size = max(size, len(ps[i].Buf))
	}
	if len(ps) > len(l.scratch) || size > len(l.sbufs)/max(len(l.scratch), 1) {
		l.scratch = make([]transport.Packet, len(ps))
		l.sbufs = make([]byte, len(ps)*size)
		for i := range l.scratch {
			l.scratch[i].Buf = l.sbufs[i*size : (i+1)*size : (i+1)*size]
		}
	}
}

// setInnerDeadline wakes the inner read at the caller's deadline or when
// the next held packet is due, whichever is first; l.mu is held.
func (l *Lossy) setInnerDeadline() {
	d := l.deadline
	if due := l.recv.nextDue(); !due.IsZero() && (d.IsZero() || due.Before(d)) {
		d = due
	}
	l.inner.SetReadDeadline(d)
}

// queueReady moves l.recv.out to the ready queue; every entry owns its
// buffer because offer was told to copy.
func (l *Lossy) queueReady() {
	if l.readyOff == len(l.ready) {
		l.ready, l.readyOff = l.ready[:0], 0
	}
	l.ready = append(l.ready, l.recv.out...)
	l.recv.out = l.recv.out[:0]
}

func (l *Lossy) takeReady(ps []transport.Packet) int {
	n := 0
	for n < len(ps) && l.readyOff < len(l.ready) {
		o := &l.ready[l.readyOff]
		ps[n].Addr = o.p.Addr
		ps[n].N = copy(ps[n].Buf, o.p.Buf[:o.p.N])
		l.recv.free = append(l.recv.free, o.p.Buf[:0])
		*o = linePacket{}
		l.readyOff++
		n++
	}
	return n
}

// SetReadDeadline sets the caller's read deadline.
func (l *Lossy) SetReadDeadline(t time.Time) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return fmt.Errorf("transport: lossy deadline: %w", transport.ErrClosed)
	}
	l.deadline = t
	l.setInnerDeadline()
	return nil
}

// Close discards held packets and closes the inner conn.
func (l *Lossy) Close() error {
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		return fmt.Errorf("transport: lossy close: %w", transport.ErrClosed)
	}
	l.closed = true
	if l.timer != nil {
		l.timer.Stop()
	}
	l.send.held, l.send.delayed = nil, nil
	l.recv.held, l.recv.delayed = nil, nil
	l.ready = nil
	l.mu.Unlock()
	return l.inner.Close()
}

func checkPacket(p *transport.Packet) error {
	if p.N < 0 || p.N > len(p.Buf) {
		return fmt.Errorf("transport: packet length %d outside its buffer of %d", p.N, len(p.Buf))
	}
	return nil
}

// faultLine applies one direction's Faults. It is not safe for concurrent
// use; Lossy guards it with its mutex.
type faultLine struct {
	f     Faults
	rng   *rand.Rand
	stats FaultStats

	held    []heldPacket // reordered: released by later packets or a timeout
	delayed []heldPacket // delayed: a min-heap by (at, seq)
	seq     uint64

	out   []linePacket       // what leaves the line now, in order
	batch []transport.Packet // out as a transport.Packet slice for the inner WriteBatch
	free  [][]byte           // recycled buffers for copies
}

// linePacket is a packet leaving a line. from is the caller's index for a
// packet of the current WriteBatch, -1 for a released copy (whose buffer
// the line owns).
type linePacket struct {
	p    transport.Packet
	from int
}

type heldPacket struct {
	p     transport.Packet // Buf owned by the line
	after int              // reordered: packets still to pass it
	at    time.Time
	seq   uint64
}

// offer passes one packet through the faults, appending what leaves now to
// l.out. A packet that leaves at once keeps the caller's buffer unless copy
// is set; one that is held is always copied.
func (l *faultLine) offer(p transport.Packet, from int, copyNow bool, now time.Time) {
	l.stats.Packets++
	// Always draw the same numbers per packet so that changing one rate
	// does not shift the decisions of the others.
	drop, dup, reorder := l.rng.Float64(), l.rng.Float64(), l.rng.Float64()
	depth := 1 + l.rng.IntN(max(l.f.ReorderDepth, 1))
	jitter1, jitter2 := l.rng.Float64(), l.rng.Float64()
	if drop < l.f.Drop {
		l.stats.Dropped++
		return
	}
	copies := 1
	if dup < l.f.Duplicate {
		l.stats.Duplicated++
		copies = 2
	}
	for c := 0; c < copies; c++ {
		delay := l.f.Delay
		if l.f.Jitter > 0 {
			j := jitter1
			if c == 1 {
				j = jitter2
			}
			delay += time.Duration(j * float64(l.f.Jitter))
		}
		switch {
		case c == 0 && reorder < l.f.Reorder:
			l.stats.Reordered++
			l.held = append(l.held, heldPacket{p: l.copyOf(p), after: depth, at: now.Add(delay + l.f.ReorderTimeout)})
		case delay > 0:
			l.stats.Delayed++
			l.pushDelayed(heldPacket{p: l.copyOf(p), at: now.Add(delay)})
		default:
			if copyNow {
				l.emit(linePacket{p: l.copyOf(p), from: from})
			} else {
				l.emit(linePacket{p: p, from: from})
			}
		}
	}
}

// emit sends a packet out. It overtakes every reordered packet; those it
// (or a packet released after it) is the last to overtake follow it.
func (l *faultLine) emit(o linePacket) {
	l.out = append(l.out, o)
	for i := len(l.out) - 1; i < len(l.out); i++ {
		l.stats.Passed++
		kept := l.held[:0]
		for _, h := range l.held {
			if h.after--; h.after > 0 {
				kept = append(kept, h)
			} else {
				l.out = append(l.out, linePacket{p: h.p, from: -1})
			}
		}
		clear(l.held[len(kept):])
		l.held = kept
	}
}

// releaseDue emits the held and delayed packets whose time has come.
func (l *faultLine) releaseDue(now time.Time) {
	for i := 0; i < len(l.held); {
		if now.Before(l.held[i].at) {
			i++
			continue
		}
		p := l.held[i].p
		l.held = append(l.held[:i], l.held[i+1:]...)
		l.emit(linePacket{p: p, from: -1})
	}
	for len(l.delayed) > 0 && !now.Before(l.delayed[0].at) {
		h := l.popDelayed()
		l.emit(linePacket{p: h.p, from: -1})
	}
}

// nextDue is the earliest time a held packet falls due, or zero.
func (l *faultLine) nextDue() time.Time {
	var t time.Time
	for i := range l.held {
		if t.IsZero() || l.held[i].at.Before(t) {
			t = l.held[i].at
		}
	}
	if len(l.delayed) > 0 && (t.IsZero() || l.delayed[0].at.Before(t)) {
		t = l.delayed[0].at
	}
	return t
}

// recycle returns the buffers of released copies in l.out to the pool.
func (l *faultLine) recycle() {
	for i := range l.out {
		if l.out[i].from < 0 {
			l.free = append(l.free, l.out[i].p.Buf[:0])
		}
		l.out[i] = linePacket{}
	}
	l.out = l.out[:0]
}

func (l *faultLine) copyOf(p transport.Packet) transport.Packet {
	var b []byte
	if n := len(l.free); n > 0 {
		b = l.free[n-1]
		l.free = l.free[:n-1]
	}
	b = append(b[:0], p.Buf[:p.N]...)
	return transport.Packet{Addr: p.Addr, Buf: b, N: p.N}
}

func (l *faultLine) pushDelayed(h heldPacket) {
	h.seq = l.seq
	l.seq++
	l.delayed = append(l.delayed, h)
	for i := len(l.delayed) - 1; i > 0; {
		parent := (i - 1) / 2
		if !l.delayed[i].before(&l.delayed[parent]) {
			break
		}
		l.delayed[i], l.delayed[parent] = l.delayed[parent], l.delayed[i]
		i = parent
	}
}

func (l *faultLine) popDelayed() heldPacket {
	top := l.delayed[0]
	last := len(l.delayed) - 1
	l.delayed[0] = l.delayed[last]
	l.delayed[last] = heldPacket{}
	l.delayed = l.delayed[:last]
	for i := 0; ; {
		small, left, right := i, 2*i+1, 2*i+2
		if left < last && l.delayed[left].before(&l.delayed[small]) {
			small = left
		}
		if right < last && l.delayed[right].before(&l.delayed[small]) {
			small = right
		}
		if small == i {
			break
		}
		l.delayed[i], l.delayed[small] = l.delayed[small], l.delayed[i]
		i = small
	}
	return top
}

func (h *heldPacket) before(o *heldPacket) bool {
	if !h.at.Equal(o.at) {
		return h.at.Before(o.at)
	}
	return h.seq < o.seq
}
