package nicrt

import (
	"math"
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

	// hostLoad (float64 bits) and policy are Config.HostLoad and
	// Config.Placement as SetHostLoad and SetPlacement left them.
	hostLoad atomic.Uint64
	policy   atomic.Uint32
	tenantCt tenantTable
	part     partitioner

	// digests finds programs by (tenant, ProgramDigest) for
	// program-relative requests.
	digests digestIndex
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
		model:       newModel(cfg),
		start:       time.Now(),
		tenants:     map[uint64]*tenant{},
		programs:    map[uint64]*Program{},
		nextProgram: 1,
		nextHandler: FirstHandlerID,
		nextRegion:  1,
	}
	n.hostLoad.Store(math.Float64bits(cfg.HostLoad))
	n.policy.Store(uint32(cfg.Placement))
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

// Config returns the configuration in effect, defaults filled in, with
// the host load and placement policy in effect now.
func (n *NIC) Config() Config {
	c := n.cfg
	c.HostLoad, c.Placement = n.HostLoad(), n.Placement()
	return c
}

// Cores returns the number of cores, NIC and host: Reply.Core is below it.
func (n *NIC) Cores() int { return len(n.cores) }

// Close stops accepting messages (they get StatusClosed), runs what is
// already queued to completion, and stops the cores. It must not be called
// from a sink's Done, which runs on a core it would wait for.
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
		c.q.close()
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
		free += c.q.Cap() - c.q.Len()
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
