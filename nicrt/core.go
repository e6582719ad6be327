package nicrt

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/naam-project/naam/bytecode"
	"github.com/naam-project/naam/vm"
	"github.com/naam-project/naam/vm/jit"
)

// task is one queued message.
type task struct {
	msg   Message
	sink  Sink
	h     *handler
	place Placement
	// inline lets enqueue run the task at once on the submitter's
	// goroutine when the core is idle (the network side's rx loop);
	// queued is set when enqueue handed it to the core's goroutine instead.
	inline, queued bool
	// price is what fair queueing charges: the handler's proven bound.
	price uint64
	// enq is when it was queued (nanoseconds since the NIC started).
	enq int64
	tc  *tenantCounters
	// fresh: its tenant had nothing queued on the core before it (fair
	// queueing); its reply is not held back behind a busy queue.
	fresh bool
}

// core is one NIC or host core: a goroutine with its own VM and rx queue.
type core struct {
	n    *NIC
	id   int
	host bool
	q    *rxQueue
	// busy is held while the core runs a task: by the core's goroutine,
	// or by a submitter running one inline (enqueue). queued counts the
	// tasks sent to q and not yet run, so that an inline run never
	// overtakes one the goroutine has taken but not started.
	busy   sync.Mutex
	queued atomic.Int64
	m      *vm.Machine
	inv    vm.Invocation // reused, so that a run does not allocate
	task   task          // the task being run
	reply  []byte        // the reply buffer: MaxReply bytes, 8-byte aligned
	env    coreEnv
	ctr    coreCounters
	jit    *jit.Cache // host cores with Config.Tier jit or auto: the node's, shared; nil otherwise
	// retired holds executables of uninstalled programs whose instances
	// the core's machine frees before its next run (the machine is the
	// core's alone); hasRetired says it is not empty.
	retiredMu  sync.Mutex
	retired    []vm.Executable
	hasRetired atomic.Bool
	// held lists the Flushers of the sinks (Holder) of the tasks run
	// since the queue last ran empty, each once: they are told then.
	// Only whoever runs the core touches it, with busy held.
	held []Flusher
	// pace is the core's virtual clock (Config.Paced, HostLoad); last is
	// the run just finished, for it. Only the core's goroutine touches
	// them.
	pace pacer
	last lastRun
	// load is what a steering policy reads of the core (NIC.Load).
	load coreLoad
	// clock is pace.clock as the core last left it, for steering to read.
	clock atomic.Int64
}

type coreCounters struct {
	placed                                  [numPlacements]atomic.Uint64
	runs, insns, cycles                     atomic.Uint64
	replies, errors, forwarded, faults      atomic.Uint64
	sends, sendsRefused, forwards, traces   atomic.Uint64
	dmaReads, dmaWrites, dmaBytes, dmaNanos atomic.Uint64
	localHits, modelNanos, busyNanos        atomic.Uint64
	jitRuns, jitFallbacks                   atomic.Uint64
	requestBytes, replyBytes                atomic.Uint64
}

func newCore(n *NIC, id int, host bool) *core {
	c := &core{n: n, id: id, host: host, q: newRxQueue(n.cfg.RxQueueDepth, n.cfg.Fair, n.cfg.FairQuantum, n.cfg.quota)}
	words := make([]uint64, n.cfg.MaxReply/8)
	c.reply = unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(words))), n.cfg.MaxReply)
	c.env = coreEnv{c: c, rng: rand.New(rand.NewPCG(n.cfg.Seed, uint64(id)))}
	helpers := vm.ABIHelpers(&c.env)
	// Bulk helpers move bytes of regions: account for them exactly.
	hash, cp, send := helpers[bytecode.HelperHash], helpers[bytecode.HelperCopy], helpers[bytecode.HelperSend]
	helpers[bytecode.HelperHash] = func(m *vm.Machine, ptr, l, r3, r4, r5 uint64) (uint64, error) {
		v, err := hash(m, ptr, l, r3, r4, r5)
		if err == nil {
			c.env.bulk(ptr, l, false)
		}
		return v, err
	}
	helpers[bytecode.HelperCopy] = func(m *vm.Machine, dst, src, l, r4, r5 uint64) (uint64, error) {
		v, err := cp(m, dst, src, l, r4, r5)
		if err == nil {
			c.env.bulk(src, l, false)
			c.env.bulk(dst, l, true)
		}
		return v, err
	}
	helpers[bytecode.HelperSend] = func(m *vm.Machine, node, h, ptr, l, r5 uint64) (uint64, error) {
		v, err := send(m, node, h, ptr, l, r5)
		if err == nil && v == 0 {
			c.env.bulk(ptr, l, false)
		}
		return v, err
	}
	opts := vm.Options{Helpers: helpers, Budget: n.cfg.NICBudget, Unchecked: true}
	if host {
		// Host cores run what the NIC may not: up to the install budget.
		opts.Budget, opts.Unchecked = n.cfg.HostBudget, n.cfg.HostUnchecked
	}
	c.m = vm.NewMachine(opts)
	if host && n.cfg.Tier != TierInterp {
		c.jit = &jit.Cache{}
		if len(n.host) > 0 { // host cores are made in order; the first owns the cache
			c.jit = n.host[0].jit
		}
	}
	return c
}

// enqueue queues t without blocking and counts the placement. A task
// marked inline runs at once on the caller's goroutine, instead, if the
// core is idle (nothing queued, nothing running) and not paced: the same
// as the core's goroutine taking it next, without the hand-off to that
// goroutine. A paced core's messages all go through its goroutine, which
// sleeps off its virtual clock's lead, so that no submitter sleeps.
func (c *core) enqueue(t *task) pushResult {
	if t.inline && c.queued.Load() == 0 && !c.paced() && c.busy.TryLock() {
		if c.queued.Load() == 0 {
			c.ctr.placed[t.place].Add(1)
			t.h.ctr.placed[t.place].Add(1)
			c.task = *t
			c.runTask()
			c.busy.Unlock()
			return pushed
		}
		c.busy.Unlock()
	}
	c.queued.Add(1)
	t.enq = c.n.now()
	if res := c.q.push(t); res != pushed {
		c.queued.Add(-1)
		return res
	}
	t.tc.queued.Add(1)
	c.ctr.placed[t.place].Add(1)
	t.h.ctr.placed[t.place].Add(1)
	t.queued = true
	return pushed
}

func (c *core) loop() {
	var t task
	var timer *time.Timer // for pacing
	for {
		if !c.q.pop(&t) {
			break
		}
		c.busy.Lock()
		// Run from a field of the core: a pointer to the loop variable
		// would move every task to the heap.
		c.task, t = t, task{}
		fresh := c.task.fresh && c.paced()
		c.task.tc.queued.Add(-1)
		c.load.delay(c.n.now() - c.task.enq)
		c.runTask()
		c.queued.Add(-1)
		sleep := c.paceRun()
		if sleep > 0 || fresh {
			// The replies of the runs so far go before the core sleeps, and
			// with a fresh tenant's: a tenant that had nothing queued does
			// not wait for another's backlog.
			c.flushHeld()
		}
		c.busy.Unlock()
		if sleep == 0 && fresh {
			// A paced core runs ahead of its clock in bursts: let whoever a
			// fresh tenant's sink made ready run now, not at the burst's end.
			runtime.Gosched()
		}
		if sleep > 0 {
			if timer == nil {
				timer = time.NewTimer(time.Hour)
				timer.Stop()
			}
			t0 := time.Now()
			if c.q.sleep(timer, sleep) {
				c.pace.slept(sleep, time.Since(t0))
			}
		}
	}
	// The node is closing and nothing runs here any more: free what the
	// machine holds outside the Go heap (the JIT's linear memories).
	c.busy.Lock()
	c.m.Close()
	c.busy.Unlock()
}

// runTask runs c.task and, if the queue is then empty, tells the
// Flushers of the replies held back since it last was; c.busy is held.
func (c *core) runTask() {
	if c.hasRetired.Load() {
		c.forgetRetired()
	}
	c.run(&c.task)
	c.task = task{} // keep nothing of the message alive
	if c.q.Len() == 0 {
		c.flushHeld()
	}
}

// flushHeld tells the Flushers of the replies held back since it last ran.
func (c *core) flushHeld() {
	for i, f := range c.held {
		f.Flush(c.id)
		c.held[i] = nil
	}
	c.held = c.held[:0]
}

// hold notes that t's sink may hold its reply back until the queue runs
// empty.
func (c *core) hold(t *task) {
	h, ok := t.sink.(Holder)
	if !ok {
		return
	}
	f := h.Held()
	for _, g := range c.held {
		if g == f {
			return
		}
	}
	c.held = append(c.held, f)
}

// run executes one task to completion and hands the outcome to its sink.
func (c *core) run(t *task) {
	start := time.Now()
	h := t.h
	var r Reply
	var k cost
	if h.verb != 0 {
		r, k = c.verb(t)
	} else {
		r, k = c.invoke(t)
	}
	r.Placement, r.Core = t.place, c.id
	r.ModelNanos = uint64(k.nanos)
	c.account(h, &r, k)
	c.ctr.requestBytes.Add(uint64(len(t.msg.Payload)))
	c.ctr.replyBytes.Add(uint64(len(r.Data)))
	t.tc.served(t.price, r.Insns)
	d := time.Since(start)
	c.last = lastRun{arrival: t.enq, tenant: t.msg.Tenant, real: d, model: k.nanos, verb: h.verb != 0}
	c.load.service(c.serviceTime())
	if h.prog != nil {
		ewma(&h.steer.service[b2i(c.host)], k.nanos)
	}
	c.ctr.busyNanos.Add(uint64(d))
	h.ctr.runTimes.observe(d)
	c.hold(t) // before Done, after which the sink may be reused
	t.sink.Done(r)
	if h.prog != nil {
		if f := c.n.cfg.Failed; f != nil && (r.Status == StatusFault || r.Status == StatusError) {
			f(Failure{Handler: h.info(), Status: r.Status, Code: r.Code, Pos: r.Pos, Err: r.Err})
		}
		h.prog.release()
	}
}

// invoke runs an installed handler in the core's VM.
func (c *core) invoke(t *task) (r Reply, k cost) {
	h := t.h
	c.inv = vm.Invocation{
		Entry: h.entry, Handler: h.id, SrcNode: t.msg.SrcNode, Tenant: t.msg.Tenant, RequestID: t.msg.RequestID,
		Request: t.msg.Payload, Reply: c.reply[:h.replySize], Regions: h.regions,
	}
	c.env.begin(t)
	res, err := c.runVM(h)
	k = c.env.end()
	c.inv.Request, c.inv.Regions = nil, nil // keep nothing of the message alive
	r.Insns = res.Insns
	switch {
	case err != nil:
		r.Status, r.Err, r.Forward = StatusFault, err, res.Forward
		var f *vm.Fault
		if errors.As(err, &f) {
			r.Pos, _ = h.prog.Position(f.PC)
		}
	case res.Outcome == bytecode.OutcomeReply:
		r.Data = res.Reply
	case res.Outcome == bytecode.OutcomeError:
		r.Status, r.Code = StatusError, res.Code
		r.Pos, _ = h.prog.Position(res.Exit)
	case res.Outcome == bytecode.OutcomeForwarded:
		r.Status, r.Forward = StatusForwarded, res.Forward
	}
	k.add(c.n.model.insns(res.Insns, c.host))
	k.add(h.static[b2i(c.host)])
	if c.host {
		k.add(c.n.model.handoff(len(t.msg.Payload), len(r.Data)))
	}
	return r, k
}

// runVM runs the invocation, turning a Go panic (which an unchecked
// machine does not recover) into an internal fault, so that it never
// escapes a run.
func (c *core) runVM(h *handler) (res vm.Result, err error) {
	defer func() {
		if p := recover(); p != nil {
			res, err = vm.Result{}, &vm.Fault{Kind: vm.FaultInternal, Err: fmt.Errorf("%v", p)}
		}
	}()
	return c.m.Invoke(c.executable(h), &c.inv)
}

// account adds a finished run to the core's and the handler's counters.
func (c *core) account(h *handler, r *Reply, k cost) {
	ctr := &c.ctr
	ctr.runs.Add(1)
	ctr.insns.Add(r.Insns)
	ctr.cycles.Add(k.cycles)
	ctr.modelNanos.Add(uint64(k.nanos))
	if k.dmaReads|k.dmaWrites != 0 {
		ctr.dmaReads.Add(k.dmaReads)
		ctr.dmaWrites.Add(k.dmaWrites)
		ctr.dmaBytes.Add(k.dmaBytes)
		ctr.dmaNanos.Add(uint64(k.dmaNanos))
	}
	if k.localHits != 0 {
		ctr.localHits.Add(k.localHits)
	}
	h.ctr.runs.Add(1)
	h.ctr.insns.Add(r.Insns)
	switch r.Status {
	case StatusOK:
		ctr.replies.Add(1)
		h.ctr.replies.Add(1)
	case StatusError:
		ctr.errors.Add(1)
		h.ctr.errors.Add(1)
	case StatusForwarded:
		ctr.forwarded.Add(1)
		h.ctr.forwarded.Add(1)
	case StatusFault:
		ctr.faults.Add(1)
		h.ctr.faults.Add(1)
	default: // a verb's rejection
		c.n.rejected[r.Status].Add(1)
		h.ctr.rejected.Add(1)
	}
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// ErrNoOutbox is what send and forward refuse with when neither
// Config.Outbox nor the message's sink is an Outbox.
var ErrNoOutbox = errors.New("nicrt: no outbox")

// coreEnv is the node as the ABI helpers of one core see it.
type coreEnv struct {
	c   *core
	rng *rand.Rand
	cur *task // the run in progress
	acc cost  // bulk accesses of the run in progress
}

func (e *coreEnv) begin(t *task) { e.cur, e.acc = t, cost{} }

func (e *coreEnv) end() cost {
	e.cur = nil
	return e.acc
}

// bulk accounts n bytes a helper moved at addr, if addr is in a region.
func (e *coreEnv) bulk(addr, n uint64, write bool) {
	idx := int(addr>>32) - int(vm.RegionSegment(0))
	if e.cur == nil || n == 0 || idx < 0 || idx >= len(e.cur.h.nicmem) {
		return
	}
	e.acc.add(e.c.n.model.access(n, write, false, e.c.host, e.cur.h.nicmem[idx]))
}

func (e *coreEnv) Now() uint64    { return uint64(time.Since(e.c.n.start)) }
func (e *coreEnv) Random() uint64 { return e.rng.Uint64() }

func (e *coreEnv) Trace(b []byte) {
	e.c.ctr.traces.Add(1)
	if w := e.c.n.cfg.Trace; w != nil {
		e.c.n.traceMu.Lock()
		w.Write(b)
		e.c.n.traceMu.Unlock()
	}
}

func (e *coreEnv) origin() Origin {
	return Origin{Tenant: e.cur.msg.Tenant, Handler: e.cur.h.id, Program: e.cur.h.prog}
}

// outbox is where the run in progress sends and forwards: Config.Outbox,
// else its message's sink if that is an Outbox; nil if neither.
func (e *coreEnv) outbox() Outbox {
	if ob := e.c.n.cfg.Outbox; ob != nil {
		return ob
	}
	if ob, ok := e.cur.sink.(Outbox); ok {
		return ob
	}
	return nil
}

func (e *coreEnv) Send(node uint64, handler uint32, payload []byte) error {
	ob := e.outbox()
	if ob == nil {
		e.c.ctr.sendsRefused.Add(1)
		return ErrNoOutbox
	}
	if err := ob.Send(e.origin(), node, handler, payload); err != nil {
		e.c.ctr.sendsRefused.Add(1)
		return err
	}
	e.c.ctr.sends.Add(1)
	return nil
}

func (e *coreEnv) Forward(node uint64, handler uint32) error {
	ob := e.outbox()
	if ob == nil {
		e.c.ctr.sendsRefused.Add(1)
		return ErrNoOutbox
	}
	if err := ob.Forward(e.origin(), &e.cur.msg, node, handler); err != nil {
		e.c.ctr.sendsRefused.Add(1)
		return err
	}
	e.c.ctr.forwards.Add(1)
	return nil
}
