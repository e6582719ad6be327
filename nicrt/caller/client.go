package caller

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/naam-project/naam/internal/defaults"
	"github.com/naam-project/naam/nicrt/transport"
	"github.com/naam-project/naam/nicrt/wire"
)

// ClientConfig configures a Client. Keys is required; zero fields of the
// rest take their defaults.
type ClientConfig struct {
	// Node is the caller's node id (the Src of its requests); Server is
	// the responder's (their Dst). Replies must name Node as their Dst.
	Node, Server uint32
	// Keys gives the MAC key of each tenant the client calls as.
	Keys wire.Keys
	// MaxPayload is the codec's payload limit; 0 means wire.MaxPayload.
	MaxPayload int

	// Timeout is the first try's timeout until the client has measured a
	// round trip. Default 20 ms: a cold process's first calls take
	// milliseconds (spec/nic.md, The requester).
	Timeout time.Duration
	// MinTimeout is the floor of the timeout derived from the measured
	// round trip (srtt + 4·rttvar, RFC 6298). Default 5 ms: above the
	// round trips of a loaded host (scheduling, not the network), which
	// the estimator cannot follow. A lossy link that wants losses
	// recovered sooner may lower it: a spurious retransmission costs a
	// reply-cache hit, never a second run.
	MinTimeout time.Duration
	// MaxTimeout caps the timeout as it doubles with each retry.
	// Default 100 ms.
	MaxTimeout time.Duration
	// MaxTries is how many times a request is sent before the call fails
	// with ErrTimeout. Default 8.
	MaxTries int

	// MaxOutstanding caps the calls in flight, whatever the responder
	// grants. Default 256 (at most wire.WindowSize/2).
	MaxOutstanding int
	// InitialCredits is the grant assumed until the first reply brings
	// the responder's. Default 8.
	InitialCredits int
	// Batch is how many datagrams one ReadBatch takes. Default 64.
	Batch int
	// FirstID is the first request id. Default: the wall clock in
	// nanoseconds, so that a restarted client does not reuse ids
	// (spec/wire.md, Request ids).
	FirstID uint64
}

func (c ClientConfig) withDefaults() ClientConfig {
	defaults.Set(&c.Timeout, 20*time.Millisecond)
	defaults.Set(&c.MinTimeout, 5*time.Millisecond)
	defaults.Set(&c.MaxTimeout, 100*time.Millisecond)
	defaults.Set(&c.MaxTries, 8)
	defaults.Set(&c.MaxOutstanding, 256)
	defaults.Set(&c.InitialCredits, 8)
	defaults.Set(&c.Batch, 64)
	if c.FirstID == 0 {
		c.FirstID = uint64(time.Now().UnixNano())
	}
	return c
}

// Errors of a call. A call ends with its reply, ErrTimeout, the context's
// error, ErrClosed, a *HandlerError or a *RemoteError.
var (
	// ErrTimeout: no reply after ClientConfig.MaxTries tries. The request
	// may or may not have run (its reply may be what was lost).
	ErrTimeout = errors.New("caller: no reply (timeout)")
	// ErrRejected matches a *RemoteError whose status is a rejection
	// (Status.Rejected): the handler or verb did not run.
	ErrRejected = errors.New("caller: request rejected")
	// ErrFault matches a *RemoteError with wire.RuntimeFault: the handler
	// ran and faulted.
	ErrFault = errors.New("caller: handler faulted")
	// ErrClosed: the client was closed. It is the responder's closed
	// status's sentinel too (wire.RuntimeClosed), so that one errors.Is
	// covers a closed client and a closed node.
	ErrClosed = wire.RuntimeClosed.Err()
)

// HandlerError is a handler's own error: it returned r0 = -Code. Pos is
// where in its source, "file:line:col", when the responder's object has
// a line table there.
type HandlerError struct {
	Code uint32
	Pos  string
}

func (e *HandlerError) Error() string {
	if e.Pos != "" {
		return fmt.Sprintf("caller: handler error %d at %s", e.Code, e.Pos)
	}
	return fmt.Sprintf("caller: handler error %d", e.Code)
}

// RemoteError is an error reply with a runtime status. errors.Is matches
// ErrRejected for a rejection, ErrFault for a fault, and the status's own
// sentinel (wire.RuntimeStatus.Err: nicrt.ErrWrongKey,
// nicrt.ErrUnknownHandler, …).
type RemoteError struct {
	Status wire.RuntimeStatus
	Msg    string // the responder's text, if any
}

func (e *RemoteError) Error() string {
	s := "caller: remote: " + e.Status.String()
	if e.Msg != "" {
		s += ": " + e.Msg
	}
	return s
}

func (e *RemoteError) Is(target error) bool {
	switch target {
	case ErrRejected:
		return e.Status.Rejected()
	case ErrFault:
		return e.Status == wire.RuntimeFault
	}
	err := e.Status.Err()
	return err != nil && err == target
}

// Client calls one responder over a Conn: active messages to its handlers
// and the built-in verbs, with retransmission, a bounded number of tries
// and the responder's credits. Its methods are safe for concurrent use;
// many calls may be in flight (spec/nic.md, Network side).
//
// Three goroutines serve it: the callers (Call, the verbs and Go encode
// and send their own requests), a receiver that matches replies to calls,
// and a retransmitter that resends the requests whose timeout passed and
// fails those out of tries.
type Client struct {
	conn   transport.Conn
	server transport.Addr
	cfg    ClientConfig
	codec  *wire.Codec // the reader's (one goroutine reads at a time)
	// sealers seal first tries, one per caller at a time. Not the call
	// record's own: a record may end (a retransmission answered) and be
	// reused by another caller while its first caller still seals.
	sealers sync.Pool   // *wire.Codec
	retx    *wire.Codec // the retransmitter's
	tx      *transport.TxQueue
	calls   sync.Pool // *call
	epoch   time.Time // call times are durations since it

	mu          sync.Mutex
	nextID      uint64
	oldest      uint64 // no pending id is below it
	pending     [wire.WindowSize]*call
	outstanding int
	credits     int
	waiters     int
	wake        chan struct{} // closed and replaced when a slot frees
	closed      bool
	// rtIdle: the retransmitter sleeps until kicked (nothing was pending
	// for a whole look); a call that starts then kicks it. While calls
	// come and go it keeps looking every MinTimeout/2 instead, so that a
	// call does not wake it (a goroutine hand-off, often a thread's
	// wake-up) every time the client goes from none to one outstanding.
	rtIdle bool
	// One goroutine at a time reads the conn (reading), into ps: the
	// receiver, or a caller waiting in Call (reader is its call), which
	// reads its own reply so that no hand-off to another goroutine (and
	// no wake-up of another thread) lies on its way. The receiver reads
	// only while calls are pending and no caller does; otherwise it waits
	// for rxKick (rxIdle).
	reading bool
	reader  *call
	rxIdle  bool
	rxKick  chan struct{}
	ps      []transport.Packet

	// retried holds the calls that a repeated reply ended lately after a
	// retransmission, by id mod retriedSlots (under mu): if the first
	// try's own reply follows, the retransmission was spurious.
	retried [retriedSlots]retriedCall

	rttMu        sync.Mutex
	srtt, rttvar time.Duration // 0 until the first sample
	// floor is the floor of the timeout now: MinTimeout, raised by the
	// spurious retransmissions seen (learnFloor) and halved back toward it
	// every floorHalfLife without one (decayFloor); floorSet is when it
	// last rose, or halved. resent and spurious count the retransmissions
	// and the spurious ones lately (halved every floorHalfLife).
	floor, floorSet  time.Duration
	resent, spurious float64

	kick   chan struct{} // wakes the retransmitter when calls start
	rxDone chan struct{}
	rtDone chan struct{}
	ctr    clientCounters
}

// call is one call's state, pooled. hdr and req do not change while the
// call is pending; tries, timeout and deadline belong to c.mu.
type call struct {
	id       uint64
	hdr      wire.Header
	req      []byte // the payload, kept for retransmissions
	tries    int
	timeout  time.Duration
	deadline time.Duration // since the client's epoch
	sent     time.Duration // the first try, since the epoch
	// How the caller learns the outcome: ch for Call (the outcome is left
	// in typ, status, reply and err), done for Go.
	ch       chan struct{}
	done     func(reply []byte, err error)
	selfRead bool // the caller reads the conn for its reply if nobody else does (Call)
	typ      wire.Type
	status   wire.Status
	reply    []byte
	err      error
	scratch  []byte // a verb's request
}

// retriedCall is a call that ended after a retransmission with a repeated
// reply (FlagRetransmit: from the responder's reply cache, or the answer
// to a retry). If the reply to its first try comes later, the first try
// was answered and only late: the retransmission was spurious
// (spec/nic.md, The requester).
type retriedCall struct {
	id     uint64
	tenant uint32
	sent   time.Duration // the first try
	valid  bool
}

const (
	retriedSlots = 64
	// floorHalfLife is how long the timeout's floor stays where spurious
	// retransmissions raised it before it halves back toward MinTimeout.
	floorHalfLife = 10 * time.Second
)

// Dial returns a Client that calls the responder at server through conn.
// The Client owns conn: Close closes it.
func Dial(conn transport.Conn, server transport.Addr, cfg ClientConfig) (*Client, error) {
	cfg = cfg.withDefaults()
	if cfg.MaxTries < 1 || cfg.MaxOutstanding < 1 || cfg.InitialCredits < 1 || cfg.Batch < 1 {
		return nil, errors.New("caller: dial: MaxTries, MaxOutstanding, InitialCredits and Batch must be positive")
	}
	cfg.MaxOutstanding = min(cfg.MaxOutstanding, wire.WindowSize/2)
	wcfg := wire.Config{Keys: cfg.Keys, MaxPayload: cfg.MaxPayload}
	codec, err := wire.NewCodec(wcfg)
	if err != nil {
		return nil, fmt.Errorf("caller: dial: %w", err)
	}
	retx, _ := wire.NewCodec(wcfg)
	c := &Client{
		conn: conn, server: server, cfg: cfg, codec: codec, retx: retx,
		tx:     transport.NewTxQueue(conn, wire.HeaderSize+codec.MaxPayload()),
		epoch:  time.Now(),
		nextID: cfg.FirstID, oldest: cfg.FirstID, credits: cfg.InitialCredits, floor: cfg.MinTimeout,
		wake: make(chan struct{}), kick: make(chan struct{}, 1), rxKick: make(chan struct{}, 1),
		rxDone: make(chan struct{}), rtDone: make(chan struct{}),
	}
	c.ps = make([]transport.Packet, cfg.Batch)
	for i := range c.ps {
		c.ps[i].Buf = make([]byte, wire.HeaderSize+codec.MaxPayload())
	}
	c.calls.New = func() any { return &call{ch: make(chan struct{}, 1)} }
	c.sealers.New = func() any {
		cd, _ := wire.NewCodec(wcfg)
		return cd
	}
	go c.receive()
	go c.retransmit()
	return c, nil
}

func (c *Client) now() time.Duration { return time.Since(c.epoch) }

// Close fails the calls in flight with ErrClosed and closes the conn.
func (c *Client) Close() error {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return nil
	}
	c.closed = true
	var ended []*call
	for i, cl := range c.pending {
		if cl != nil {
			c.pending[i] = nil
			ended = append(ended, cl)
		}
	}
	c.outstanding = 0
	close(c.wake) // waiters see closed
	c.wake = make(chan struct{})
	close(c.kick)
	close(c.rxKick)
	c.mu.Unlock()
	for _, cl := range ended {
		c.fail(cl, ErrClosed)
	}
	err := c.conn.Close()
	<-c.rxDone
	<-c.rtDone
	return err
}

// Call runs handler of tenant on the responder with payload and returns a
// copy of the reply.
func (c *Client) Call(ctx context.Context, tenant, handler uint32, payload []byte) ([]byte, error) {
	cl := c.calls.Get().(*call)
	return c.do(ctx, cl, tenant, handler, payload, nil)
}

// ErrNoCredits is what Go returns when no call may start now: the
// responder's credits (or MaxOutstanding) are used, or a call still being
// retried keeps newer ids from running WindowSize/2 ahead of it.
var ErrNoCredits = errors.New("caller: no credits for another call")

// Go starts a call without waiting for it: done receives the reply (valid
// only during done) or the error, exactly once, on the client's receiving
// or retransmitting goroutine (or in Close), so it must not block; it may start further
// calls with Go. Go never blocks: it returns ErrNoCredits when no more
// calls may be in flight, ErrClosed after Close, or an error for a payload
// it cannot send, and then done is not called.
func (c *Client) Go(tenant, handler uint32, payload []byte, done func(reply []byte, err error)) error {
	cl := c.calls.Get().(*call)
	cl.done = done
	cl.selfRead = false // a pooled call may come from a Call that read
	if err := c.start(nil, cl, wire.TypeRequest, tenant, handler, payload); err != nil {
		cl.done = nil
		c.calls.Put(cl)
		return err
	}
	return nil
}

// Read reads n bytes at off of the region ref (the READ verb).
func (c *Client) Read(ctx context.Context, tenant uint32, ref wire.RegionRef, off uint64, n uint32) ([]byte, error) {
	cl := c.calls.Get().(*call)
	cl.scratch = wire.AppendRead(cl.scratch[:0], ref, off, n)
	return c.do(ctx, cl, tenant, wire.HandlerRead, cl.scratch, nil)
}

// Write writes data at off of the region ref (the WRITE verb).
func (c *Client) Write(ctx context.Context, tenant uint32, ref wire.RegionRef, off uint64, data []byte) error {
	cl := c.calls.Get().(*call)
	cl.scratch = wire.AppendWrite(cl.scratch[:0], ref, off, data)
	var out [8]byte
	_, err := c.do(ctx, cl, tenant, wire.HandlerWrite, cl.scratch, out[:0])
	return err
}

// CompareAndSwap sets the 8 bytes at off of the region ref to desired if
// they hold expected (the CAS verb). It returns the value they held.
func (c *Client) CompareAndSwap(ctx context.Context, tenant uint32, ref wire.RegionRef, off, expected, desired uint64) (old uint64, swapped bool, err error) {
	cl := c.calls.Get().(*call)
	cl.scratch = wire.AppendCAS(cl.scratch[:0], ref, off, expected, desired)
	old, err = c.word(ctx, cl, tenant, wire.HandlerCAS)
	return old, err == nil && old == expected, err
}

// FetchAdd adds delta to the 8 bytes at off of the region ref and returns
// their old value (the FETCH-ADD verb). A retransmitted FETCH-ADD adds
// once: the responder answers a duplicate from its reply cache.
func (c *Client) FetchAdd(ctx context.Context, tenant uint32, ref wire.RegionRef, off, delta uint64) (uint64, error) {
	cl := c.calls.Get().(*call)
	cl.scratch = wire.AppendFetchAdd(cl.scratch[:0], ref, off, delta)
	return c.word(ctx, cl, tenant, wire.HandlerFetchAdd)
}

// word runs a verb whose reply is one 8-byte word.
func (c *Client) word(ctx context.Context, cl *call, tenant, handler uint32) (uint64, error) {
	var out [8]byte
	r, err := c.do(ctx, cl, tenant, handler, cl.scratch, out[:0])
	if err != nil {
		return 0, err
	}
	if len(r) != 8 {
		return 0, fmt.Errorf("caller: %d-byte reply to a verb that returns 8", len(r))
	}
	return binary.LittleEndian.Uint64(r), nil
}

// do runs one call with cl (from the pool, returned to it here), waits
// for it and appends the reply to out.
func (c *Client) do(ctx context.Context, cl *call, tenant, handler uint32, payload, out []byte) ([]byte, error) {
	return c.doType(ctx, cl, wire.TypeRequest, tenant, handler, payload, out)
}

// doType is do for a request or a control packet (handler: the op).
func (c *Client) doType(ctx context.Context, cl *call, typ wire.Type, tenant, handler uint32, payload, out []byte) ([]byte, error) {
	defer c.calls.Put(cl)
	// A caller whose context cannot be cancelled may read its reply itself
	// (nothing but a datagram, Close or the retransmitter's verdict ends
	// its wait).
	cl.selfRead = ctx.Done() == nil
	err := c.start(ctx, cl, typ, tenant, handler, payload)
	if err != nil {
		return out, err
	}
	if cl.selfRead {
		c.readFor(cl)
	}
	select {
	case <-cl.ch:
	case <-ctx.Done():
		if c.abandon(cl) {
			return out, ctx.Err()
		}
		<-cl.ch // the call ended as the context did: take its outcome
	}
	return c.result(cl, out)
}

// start waits for room (a nil ctx: fails with ErrNoCredits instead), makes
// cl pending under a new id and sends its first try.
func (c *Client) start(ctx context.Context, cl *call, typ wire.Type, tenant, handler uint32, payload []byte) error {
	if len(payload) > c.codec.MaxPayload() {
		return fmt.Errorf("caller: call: %d-byte payload, the limit is %d", len(payload), c.codec.MaxPayload())
	}
	if c.cfg.Keys.Key(tenant) == nil {
		return fmt.Errorf("caller: call: no key for tenant %d: %w", tenant, wire.ErrUnknownTenant)
	}
	cl.req = append(cl.req[:0], payload...)
	cl.err, cl.typ, cl.status = nil, 0, 0
	h, others, err := c.acquire(ctx, cl, typ, tenant, handler, c.timeout())
	if err != nil {
		return err
	}
	codec := c.sealers.Get().(*wire.Codec)
	b, _ := codec.Encode(c.tx.Buffer(), &h, payload)
	c.sealers.Put(codec)
	c.tx.PushYield(c.server, b, others)
	return nil
}

// result turns the outcome the receiver left in cl into the call's.
func (c *Client) result(cl *call, out []byte) ([]byte, error) {
	if cl.err != nil {
		return out, cl.err
	}
	if cl.typ == wire.TypeReply {
		return append(out, cl.reply...), nil
	}
	return out, remoteError(cl.status, cl.reply)
}

// remoteError is the error of an error reply.
func remoteError(status wire.Status, text []byte) error {
	if k, ok := status.Runtime(); ok {
		st := wire.RuntimeStatus(255) // not a status this runtime knows
		if k < uint32(wire.NumRuntimeStatus) {
			st = wire.RuntimeStatus(k)
		}
		return &RemoteError{Status: st, Msg: string(text)}
	}
	return &HandlerError{Code: uint32(status), Pos: printable(text)}
}

// printable is text with every byte outside printable ASCII replaced by
// '?': a responder's text goes into messages and terminals.
func printable(text []byte) string {
	b := []byte(string(text))
	for i, c := range b {
		if c < 0x20 || c > 0x7e {
			b[i] = '?'
		}
	}
	return string(b)
}

// acquire waits until the responder's credits (and MaxOutstanding, and the
// anti-replay window's span) allow one more call, then gives cl an id and
// makes it pending; others says whether other calls are in flight. A nil
// ctx does not wait: it fails with ErrNoCredits.
func (c *Client) acquire(ctx context.Context, cl *call, typ wire.Type, tenant, handler uint32, timeout time.Duration) (h wire.Header, others bool, err error) {
	c.mu.Lock()
	for {
		if c.closed {
			c.mu.Unlock()
			return h, false, ErrClosed
		}
		limit := min(c.credits, c.cfg.MaxOutstanding)
		// A call must end before WindowSize later ids exist, or the
		// responder would find its retransmissions too old
		// (spec/wire.md, Retransmission): stay within half of it.
		if c.outstanding < limit && c.nextID-c.oldest < wire.WindowSize/2 {
			break
		}
		if ctx == nil {
			c.mu.Unlock()
			return h, false, ErrNoCredits
		}
		wake := c.wake
		c.waiters++
		c.mu.Unlock()
		c.ctr.creditWaits.Add(1)
		select {
		case <-wake:
		case <-ctx.Done():
			c.mu.Lock()
			c.waiters--
			c.mu.Unlock()
			return h, false, ctx.Err()
		}
		c.mu.Lock()
		c.waiters--
	}
	id := c.nextID
	c.nextID++
	now := c.now()
	cl.id, cl.tries, cl.timeout, cl.sent, cl.deadline = id, 1, timeout, now, now+timeout
	h = wire.Header{
		Type: typ, Tenant: tenant, Handler: handler, RequestID: id,
		Src: c.cfg.Node, Dst: c.cfg.Server,
	}
	cl.hdr = h
	c.pending[id%wire.WindowSize] = cl
	c.outstanding++
	switch {
	case c.reading:
	case cl.selfRead:
		c.reading, c.reader = true, cl
	default:
		c.kickReceiverLocked()
	}
	cl.selfRead = c.reader == cl
	others = c.outstanding > 1
	if c.rtIdle {
		c.rtIdle = false
		select {
		case c.kick <- struct{}{}:
		default:
		}
	}
	c.mu.Unlock()
	c.ctr.calls.Add(1)
	return h, others, nil
}

// abandon removes cl from the pending table, unless a reply (or the
// retransmitter, or Close) ended it first; it reports whether it did.
func (c *Client) abandon(cl *call) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	slot := &c.pending[cl.id%wire.WindowSize]
	if *slot != cl {
		return false
	}
	c.removeLocked(slot, cl.id)
	return true
}

// removeLocked frees a pending slot, moves oldest past ended calls and
// wakes waiters; c.mu is held.
func (c *Client) removeLocked(slot **call, id uint64) {
	*slot = nil
	c.outstanding--
	if id == c.oldest {
		for c.oldest < c.nextID {
			p := c.pending[c.oldest%wire.WindowSize]
			if p != nil && p.id == c.oldest {
				break
			}
			c.oldest++
		}
	}
	if c.waiters > 0 {
		close(c.wake)
		c.wake = make(chan struct{})
	}
}

// fail ends a call that is no longer pending with err.
func (c *Client) fail(cl *call, err error) {
	if done := cl.done; done != nil {
		cl.done = nil
		c.calls.Put(cl)
		done(nil, err)
		return
	}
	cl.err = err
	cl.ch <- struct{}{}
}

// retransmit resends the requests whose timeout passed, each timeout
// twice the last (to MaxTimeout), and fails a call with ErrTimeout once it
// has been sent MaxTries times. It looks every MinTimeout/2 at most while
// calls are pending, and sleeps otherwise.
func (c *Client) retransmit() {
	defer close(c.rtDone)
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	var failed []*call
	var resend []transport.Packet
	quiet := false // nothing was pending at the last look
	wakeReader := false
	for {
		c.mu.Lock()
		if quiet && c.outstanding == 0 {
			c.rtIdle = true
			for c.rtIdle && !c.closed {
				c.mu.Unlock()
				<-c.kick
				c.mu.Lock()
			}
		}
		if c.closed {
			c.mu.Unlock()
			return
		}
		quiet = c.outstanding == 0
		now := c.now()
		c.decayFloor(now)
		next := now + c.cfg.MinTimeout/2
		for id := c.oldest; id < c.nextID; id++ {
			cl := c.pending[id%wire.WindowSize]
			if cl == nil || cl.id != id {
				continue
			}
			if cl.deadline > now {
				next = min(next, cl.deadline)
				continue
			}
			if cl.tries >= c.cfg.MaxTries {
				c.removeLocked(&c.pending[id%wire.WindowSize], id)
				failed = append(failed, cl)
				wakeReader = wakeReader || c.reader == cl
				continue
			}
			cl.tries++
			cl.timeout = min(2*cl.timeout, c.cfg.MaxTimeout)
			cl.deadline = now + cl.timeout
			next = min(next, cl.deadline)
			h := cl.hdr
			h.Flags |= wire.FlagRetransmit
			b, _ := c.retx.Encode(c.tx.Buffer(), &h, cl.req)
			resend = append(resend, transport.Packet{Addr: c.server, Buf: b, N: len(b)})
		}
		c.mu.Unlock()
		if wakeReader { // its caller is blocked reading: end the read
			c.conn.SetReadDeadline(time.Unix(1, 0))
			wakeReader = false
		}
		if len(resend) > 0 {
			c.rttMu.Lock()
			c.resent += float64(len(resend))
			c.rttMu.Unlock()
		}
		for i := range resend {
			// Counted before it leaves: its reply may end the call, and a
			// caller read Stats, before push returns.
			c.ctr.retransmits.Add(1)
			c.tx.Push(resend[i].Addr, resend[i].Buf)
			resend[i] = transport.Packet{}
		}
		resend = resend[:0]
		for i, cl := range failed {
			c.ctr.timeouts.Add(1)
			c.fail(cl, ErrTimeout)
			failed[i] = nil
		}
		failed = failed[:0]
		timer.Reset(max(next-c.now(), 20*time.Microsecond))
		select {
		case <-timer.C:
		case <-c.kick: // Close
		}
	}
}

// receive reads replies while calls are pending and no caller reads its
// own, and hands each to its call; it ends when the client closes.
func (c *Client) receive() {
	defer close(c.rxDone)
	for {
		c.mu.Lock()
		for (c.reading || c.outstanding == 0) && !c.closed {
			c.rxIdle = true
			c.mu.Unlock()
			<-c.rxKick
			c.mu.Lock()
		}
		if c.closed {
			c.mu.Unlock()
			return
		}
		c.reading = true
		c.mu.Unlock()
		err := c.readBatch()
		c.mu.Lock()
		c.reading = false
		c.mu.Unlock()
		if err != nil {
			return
		}
		// Let the callers just woken run before the next read, which
		// would most often find nothing and cost a system call on their
		// way.
		runtime.Gosched()
	}
}

// readFor is the wait of a Call that reads the conn itself: it reads and
// delivers batches (others' replies too) until cl has ended, then passes
// the reading on to the receiver if calls are still pending.
func (c *Client) readFor(cl *call) {
	for {
		c.mu.Lock()
		if c.pending[cl.id%wire.WindowSize] != cl || c.closed {
			c.reading, c.reader = false, nil
			if c.outstanding > 0 {
				c.kickReceiverLocked()
			}
			c.mu.Unlock()
			return
		}
		c.mu.Unlock()
		if err := c.readBatch(); err != nil {
			c.mu.Lock()
			c.reading, c.reader = false, nil
			c.mu.Unlock()
			return
		}
	}
}

// kickReceiverLocked wakes the receiver if it waits; c.mu is held.
func (c *Client) kickReceiverLocked() {
	if c.rxIdle && !c.closed {
		c.rxIdle = false
		select {
		case c.rxKick <- struct{}{}:
		default:
		}
	}
}

// readBatch reads one batch into c.ps and delivers it; the caller is the
// reader. It fails only when the conn is closed. A read deadline (set to
// wake a reading caller whose call the retransmitter ended) is cleared.
func (c *Client) readBatch() error {
	n, err := c.conn.ReadBatch(c.ps)
	if err != nil {
		switch {
		case errors.Is(err, transport.ErrClosed):
			return err
		case transport.IsTimeout(err):
			c.conn.SetReadDeadline(time.Time{})
		default:
			c.mu.Lock()
			closed := c.closed
			c.mu.Unlock()
			if closed {
				return transport.ErrClosed
			}
			c.ctr.rxErrors.Add(1)
			time.Sleep(time.Millisecond)
		}
		return nil
	}
	// Hold the sender while the batch is delivered, so that the calls Go
	// callbacks start leave in one WriteBatch.
	held := c.tx.Hold()
	for i := range n {
		c.deliver(c.ps[i].Buf[:c.ps[i].N])
	}
	if held {
		c.tx.Release()
	}
	return nil
}

// deliver opens one datagram and ends the call it answers.
func (c *Client) deliver(b []byte) {
	pkt, err := c.codec.Decode(b)
	if err != nil {
		c.ctr.Count(err)
		return
	}
	if pkt.Dst != c.cfg.Node {
		c.ctr.wrongDst.Add(1)
		return
	}
	switch pkt.Type {
	case wire.TypeReply, wire.TypeErrorReply:
	case wire.TypeCredit:
		if pkt.Src == c.cfg.Server {
			c.mu.Lock()
			c.grantLocked(pkt.Credits)
			c.mu.Unlock()
		}
		return
	default:
		c.ctr.unexpectedType.Add(1)
		return
	}
	c.mu.Lock()
	// A reply from another node answers a request the responder forwarded
	// (spec/wire.md, Routing): it is as authentic, but its grant is that
	// node's, not the responder's.
	other := pkt.Src != c.cfg.Server
	if !other {
		c.grantLocked(pkt.Credits)
	}
	slot := &c.pending[pkt.RequestID%wire.WindowSize]
	cl := *slot
	// A reply without FlagRetransmit is the first try's own answer: the
	// responder ran the request as first sent, and this is not a resend
	// from its reply cache (spec/wire.md, Flags).
	original := pkt.Flags&wire.FlagRetransmit == 0
	if cl == nil || cl.id != pkt.RequestID || cl.hdr.Tenant != pkt.Tenant {
		// A duplicate, the reply to a call that gave up, or the first
		// try's late reply to a call a repeated reply already ended.
		r := &c.retried[pkt.RequestID%retriedSlots]
		spurious := original && r.valid && r.id == pkt.RequestID && r.tenant == pkt.Tenant
		var sent time.Duration
		if spurious {
			r.valid, sent = false, r.sent
		}
		c.mu.Unlock()
		c.ctr.stale.Add(1)
		if spurious {
			c.learnFloor(c.now() - sent)
		}
		return
	}
	c.removeLocked(slot, cl.id)
	first, sent := cl.tries == 1, cl.sent
	if !first && !original {
		c.retried[cl.id%retriedSlots] = retriedCall{id: cl.id, tenant: pkt.Tenant, sent: sent, valid: true}
	}
	c.mu.Unlock()
	switch {
	case first: // Karn: only a reply to a request sent once times a round trip
		c.sample(c.now() - sent)
	case original: // the first try's answer, after a retransmission
		c.learnFloor(c.now() - sent)
	}
	c.ctr.replies.Add(1)
	if other {
		c.ctr.otherNode.Add(1)
	}
	if done := cl.done; done != nil {
		cl.done = nil
		c.calls.Put(cl)
		if pkt.Type == wire.TypeReply {
			done(pkt.Payload, nil)
		} else {
			done(nil, remoteError(pkt.Status, pkt.Payload))
		}
		return
	}
	cl.typ, cl.status = pkt.Type, pkt.Status
	cl.reply = append(cl.reply[:0], pkt.Payload...)
	cl.ch <- struct{}{}
}

// grantLocked takes the responder's credits; c.mu is held. A grant of 0
// is read as 1, so that a caller is never stuck without a reply to bring
// a new grant.
func (c *Client) grantLocked(credits uint16) {
	old := c.credits
	c.credits = max(int(credits), 1)
	if c.credits > old && c.waiters > 0 {
		close(c.wake)
		c.wake = make(chan struct{})
	}
}

// sample feeds a round trip to the estimator of RFC 6298.
func (c *Client) sample(rtt time.Duration) {
	c.rttMu.Lock()
	defer c.rttMu.Unlock()
	if c.srtt == 0 {
		c.srtt, c.rttvar = rtt, rtt/2
		return
	}
	d := c.srtt - rtt
	if d < 0 {
		d = -d
	}
	c.rttvar = (3*c.rttvar + d) / 4
	c.srtt = (7*c.srtt + rtt) / 8
}

// timeout is the first try's timeout: srtt + 4·rttvar, or Timeout before
// any sample, within [floor, MaxTimeout].
func (c *Client) timeout() time.Duration {
	c.rttMu.Lock()
	defer c.rttMu.Unlock()
	rto := c.cfg.Timeout
	if c.srtt > 0 {
		rto = c.srtt + 4*c.rttvar
	}
	return min(max(rto, c.floor), c.cfg.MaxTimeout)
}

// learnFloor takes a spurious retransmission: the first try's reply took
// rtt, longer than its timeout. While at least half of the recent
// retransmissions were spurious (the link loses little: the delays are
// the hosts'), the floor rises to twice that, so that a delay as long,
// and one up to twice as long, is waited out from now on; at most to a
// quarter of MaxTimeout, so that the retries still back off. Where most
// retransmissions are needed (a lossy link) it stays, so that losses are
// recovered soon. The measured round trips cannot teach this: by Karn's
// rule a retransmitted call gives no sample, and the estimator forgets a
// rare long round trip within a few calls.
func (c *Client) learnFloor(rtt time.Duration) {
	c.ctr.spurious.Add(1)
	c.rttMu.Lock()
	c.spurious++
	if 2*c.spurious >= c.resent {
		c.floor = max(c.floor, min(2*rtt, c.cfg.MaxTimeout/4))
		c.floorSet = c.now()
	}
	c.rttMu.Unlock()
}

// decayFloor halves the floor's excess over MinTimeout once it has gone
// floorHalfLife without rising, and the recent counts with it.
func (c *Client) decayFloor(now time.Duration) {
	c.rttMu.Lock()
	if now-c.floorSet >= floorHalfLife {
		c.floor = max(c.cfg.MinTimeout, c.floor/2)
		c.resent, c.spurious = c.resent/2, c.spurious/2
		c.floorSet = now
	}
	c.rttMu.Unlock()
}

type clientCounters struct {
	wire.DecodeErrors
	calls, replies, retransmits, timeouts atomic.Uint64
	spurious                              atomic.Uint64
	stale, wrongDst, unexpectedType       atomic.Uint64
	creditWaits, rxErrors, otherNode      atomic.Uint64
}

// ClientStats is a snapshot of a Client's counters.
type ClientStats struct {
	Calls   uint64 // calls that got a request id
	Replies uint64 // replies and error replies matched to a call
	// OtherNode counts the replies (among Replies) that another node sent:
	// the answers to requests the responder forwarded.
	OtherNode   uint64
	Retransmits uint64 // requests sent again after a timeout
	// Spurious counts the retransmissions found needless: the first try's
	// own reply came (FlagRetransmit clear) after the request was sent again.
	Spurious    uint64
	Timeouts    uint64 // calls that ended with ErrTimeout
	Stale       uint64 // replies for no pending call: duplicates, or late after a timeout
	CreditWaits uint64 // times a call waited for credits (or the window)
	RxErrors    uint64

	Malformed      [wire.NumMalformed]uint64
	BadMAC         uint64
	UnknownTenant  uint64
	WrongDst       uint64
	UnexpectedType uint64

	Credits     int           // the responder's last grant
	Outstanding int           // calls in flight now
	SRTT        time.Duration // smoothed round trip (0 before a sample)
	Floor       time.Duration // the timeout's floor now (MinTimeout, or above after spurious retransmissions)
	Timeout     time.Duration // the first try's timeout now
}

// Stats returns a snapshot of the client's counters.
func (c *Client) Stats() ClientStats {
	k := &c.ctr
	s := ClientStats{
		Calls: k.calls.Load(), Replies: k.replies.Load(), Retransmits: k.retransmits.Load(), Spurious: k.spurious.Load(),
		Timeouts: k.timeouts.Load(), Stale: k.stale.Load(), CreditWaits: k.creditWaits.Load(),
		RxErrors: k.rxErrors.Load(), OtherNode: k.otherNode.Load(), WrongDst: k.wrongDst.Load(), UnexpectedType: k.unexpectedType.Load(),
	}
	s.Malformed, s.BadMAC, s.UnknownTenant = k.DecodeErrors.Snapshot()
	c.mu.Lock()
	s.Credits, s.Outstanding = c.credits, c.outstanding
	c.mu.Unlock()
	c.rttMu.Lock()
	s.SRTT, s.Floor = c.srtt, c.floor
	c.rttMu.Unlock()
	s.Timeout = c.timeout()
	return s
}
