package nicrt

import (
	"runtime"
	"sync"
	"sync/atomic"
	"time"
)

// NIC is the modelled SmartNIC of one node. Its methods are safe for
// concurrent use.
type NIC struct {
	cfg   Config
	model model
	start time.Time

	// Control plane, under mu.
	mu          sync.Mutex
	tenants     map[uint64]*tenant
	programs    map[uint64]*Program
	nextProgram uint64
	nextHandler uint32
	nextRegion  uint32
	nicmemUsed  uint64

	// Data plane: lock-free tables.
	handlers table[handler]
	regions  table[Region]

	cores     []*core // NIC cores, then host cores
	nic, host []*core
	wg        sync.WaitGroup

	// active counts Submits between their closed check and their enqueue,
	// so that Close can wait for them before it closes the queues.
	active   atomic.Int64
	closed   atomic.Bool
	rejected [NumStatus]atomic.Uint64
	traceMu  sync.Mutex

	// idlers are told when a core has run its queue empty: the network
	// side sends the replies it held back to batch them (Serve).
	idlers atomic.Pointer[[]idler]

	// digests finds programs by (tenant, ProgramDigest) for
	// program-relative requests; outbox, when Config.Outbox is nil, is
	// what core helpers send and forward through (to the Server).
	digests digestIndex
	outbox  *netOutbox
}

// idler is told, by whoever runs core (its goroutine, or a submitter
// running a task inline), that core has nothing queued.
type idler interface{ coreIdle(core int) }

// addIdler and removeIdler change the idlers, copy on write.
func (n *NIC) addIdler(i idler) {
	n.mu.Lock()
	defer n.mu.Unlock()
	var list []idler
	if old := n.idlers.Load(); old != nil {
		list = append(list, *old...)
	}
	list = append(list, i)
	n.idlers.Store(&list)
}

func (n *NIC) removeIdler(i idler) {
	n.mu.Lock()
	defer n.mu.Unlock()
	var list []idler
	if old := n.idlers.Load(); old != nil {
		for _, x := range *old {
			if x != i {
				list = append(list, x)
			}
		}
	}
	n.idlers.Store(&list)
}

type tenant struct {
	regions  map[string]*Region
	programs map[*Program]struct{}
}

// tenant returns the state of tenant id, creating it. n.mu must be held.
func (n *NIC) tenant(id uint64) *tenant {
	t := n.tenants[id]
	if t == nil {
		t = &tenant{regions: map[string]*Region{}, programs: map[*Program]struct{}{}}
		n.tenants[id] = t
	}
	return t
}

// New starts a NIC: its NIC and host cores begin waiting for messages.
// Zero fields of cfg take their defaults (Config). Close stops it.
func New(cfg Config) (*NIC, error) {
	cfg = cfg.withDefaults()
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	n := &NIC{
		cfg:         cfg,
		outbox:      new(netOutbox),
		model:       newModel(cfg),
		start:       time.Now(),
		tenants:     map[uint64]*tenant{},
		programs:    map[uint64]*Program{},
		nextProgram: 1,
		nextHandler: FirstHandlerID,
		nextRegion:  1,
	}
	if cfg.Outbox == nil {
		// The cores read cfg.Outbox; Config still reports nil.
		n.cfg.Outbox = n.outbox
	}
	for _, verb := range []struct {
		id   uint32
		name string
	}{{HandlerRead, "READ"}, {HandlerWrite, "WRITE"}, {HandlerCAS, "CAS"}, {HandlerFetchAdd, "FETCH-ADD"}} {
		n.handlers.set(verb.id, &handler{id: verb.id, name: verb.name, verb: verb.id, maxInsns: cfg.BuiltinInsns})
	}
	for i := range cfg.NICCores {
		n.nic = append(n.nic, newCore(n, i, false))
	}
	for i := range cfg.hostCores() {
		n.host = append(n.host, newCore(n, cfg.NICCores+i, true))
	}
	n.cores = append(append(n.cores, n.nic...), n.host...)
	for _, c := range n.cores {
		n.wg.Go(c.loop)
	}
	return n, nil
}

// Config returns the configuration in effect, defaults filled in.
func (n *NIC) Config() Config {
	c := n.cfg
	if c.Outbox == Outbox(n.outbox) {
		c.Outbox = nil
	}
	return c
}

// Close stops accepting messages (they get StatusClosed), runs what is
// already queued to completion, and stops the cores. It must not be called
// from a done callback, which runs on a core it would wait for.
func (n *NIC) Close() error {
	n.mu.Lock()
	if n.closed.Swap(true) {
		n.mu.Unlock()
		return nil
	}
	n.mu.Unlock()
	for n.active.Load() != 0 {
		runtime.Gosched() // a Submit is between its check and its enqueue
	}
	for _, c := range n.cores {
		close(c.q)
	}
	n.wg.Wait()
	return nil
}

// QueueSpace returns how many more messages the NIC cores' rx queues hold
// now: what the network side may share out as credits (spec/nic.md, Flow
// control).
func (n *NIC) QueueSpace() int {
	free := 0
	for _, c := range n.nic {
		free += cap(c.q) - len(c.q)
	}
	return free
}

// Handler describes the handler or verb with node-wide id.
func (n *NIC) Handler(id uint32) (HandlerInfo, bool) {
	h := n.handlers.get(id)
	if h == nil {
		return HandlerInfo{}, false
	}
	return h.info(), true
}

// Submit queues msg for the handler or verb it names; done receives the
// outcome exactly once: on the core that ran it, or at once on the
// caller's goroutine when the message is rejected (unknown or foreign
// handler, full queues, closed NIC). Submit never blocks.
//
// msg is copied, but msg.Payload must stay unchanged until done runs.
// done must not be nil; it should not block, since it runs on a core.
func (n *NIC) Submit(msg *Message, done func(Reply)) { n.submit(msg, done, false) }

// submit is Submit; with inline, a request whose core is idle runs on the
// caller's goroutine before submit returns (core.enqueue). It reports
// whether the request went to a core's goroutine instead (queued).
func (n *NIC) submit(msg *Message, done func(Reply), inline bool) (queued bool) {
	n.active.Add(1)
	st := StatusClosed
	if !n.closed.Load() {
		st, queued = n.dispatch(msg, done, inline)
	}
	n.active.Add(-1)
	if st != StatusOK {
		n.rejected[st].Add(1)
		done(rejection(st))
	}
	return queued
}

// Call submits msg and waits for the reply, whose Data it copies. For
// tests and tools; the network side uses Submit.
func (n *NIC) Call(msg *Message) Reply {
	ch := make(chan Reply, 1)
	n.Submit(msg, func(r Reply) {
		if r.Data != nil {
			r.Data = append([]byte{}, r.Data...)
		}
		ch <- r
	})
	return <-ch
}

// dispatch finds msg's handler, checks its tenant, places it and queues
// it. It returns StatusOK when queued (or run inline), or the rejection;
// queued: handed to a core's goroutine.
func (n *NIC) dispatch(msg *Message, done func(Reply), inline bool) (st Status, queued bool) {
	h, st := n.lookup(msg)
	if st != StatusOK {
		return st, false
	}
	t := task{msg: *msg, done: done, h: h, inline: inline}
	hash := n.steer(msg)
	if h.verb != 0 {
		// Verbs run on NIC cores only, as an RDMA NIC runs them; their
		// tenant is checked against the region they name.
		t.place = PlaceNIC
		if !n.nic[hash%uint64(len(n.nic))].enqueue(&t) {
			h.ctr.rejected.Add(1)
			return StatusOverloaded, false
		}
		return StatusOK, t.queued
	}
	p := h.prog
	p.inflight.Add(1)
	if p.draining.Load() {
		p.release()
		return StatusUnknownHandler, false
	}
	if !n.place(&t, hash) {
		p.release()
		h.ctr.rejected.Add(1)
		return StatusOverloaded, false
	}
	return StatusOK, t.queued
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
// handler placed on the host; otherwise the steered NIC core, unless its
// queue is past the spill threshold and a host core has room.
func (n *NIC) place(t *task, hash uint64) bool {
	h := t.h
	if h.place != PlaceNIC {
		t.place = h.place
		return n.host[hash%uint64(len(n.host))].enqueue(t)
	}
	c := n.nic[hash%uint64(len(n.nic))]
	if n.cfg.SpillThreshold >= 0 && len(c.q) >= n.cfg.SpillThreshold && len(n.host) > 0 {
		t.place = PlaceHostSpill
		if n.host[hash%uint64(len(n.host))].enqueue(t) {
			return true
		}
	}
	t.place = PlaceNIC
	return c.enqueue(t)
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
