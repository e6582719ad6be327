package nicrt

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"sync/atomic"

	"github.com/naam-project/naam/bytecode"
	"github.com/naam-project/naam/nicrt/wire"
	"github.com/naam-project/naam/verifier"
	"github.com/naam-project/naam/vm"
)

// Errors of Install and Uninstall. Install also returns the object's
// *bytecode.ObjectError and the verifier's *verifier.Error, wrapped.
var (
	ErrRegionMissing  = errors.New("nicrt: the object's region is not registered by the tenant")
	ErrRegionTooSmall = errors.New("nicrt: the object's region is larger than the registered one")
	ErrRegionReadOnly = errors.New("nicrt: the object writes a region registered read-only")
	ErrNeedsHost      = errors.New("nicrt: the handler needs a host core and the node has none")
	ErrReplyTooLarge  = errors.New("nicrt: the handler's results do not fit the largest reply")
	ErrIDsExhausted   = errors.New("nicrt: handler ids exhausted")
	ErrNotInstalled   = errors.New("nicrt: program not installed here")
	ErrNoHandlers     = errors.New("nicrt: install: the object declares no handlers")
	ErrBadBinding     = errors.New("nicrt: install: a region binding names no region of the object, or binds two to one region")
)

// InstallOptions are the choices of one install (wire.InstallOptions: a
// caller uploads the same); the zero value links every region of the
// object to the tenant's registered region of the same name.
type InstallOptions = wire.InstallOptions

// linkName is the registered region that object region i, called name,
// links to, and how messages name the pair.
func linkName(o InstallOptions, i int, name string) (registered, label string) {
	if to, ok := o.Regions[name]; ok && to != name {
		return to, fmt.Sprintf("regions[%d] %q (bound to %q)", i, name, to)
	}
	return name, fmt.Sprintf("regions[%d] %q", i, name)
}

// checkBindings reports a binding that names no region of obj, or two
// object regions that would link to one registered region.
func checkBindings(o InstallOptions, obj *bytecode.Object) error {
	if len(o.Regions) == 0 {
		return nil
	}
	declared := make(map[string]bool, len(obj.Regions))
	for _, r := range obj.Regions {
		declared[r.Name] = true
	}
	names := make([]string, 0, len(o.Regions))
	for name := range o.Regions {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		if !declared[name] {
			return fmt.Errorf("%w: %q (bound to %q) is not a region of the object", ErrBadBinding, name, o.Regions[name])
		}
	}
	linked := make(map[string]string, len(obj.Regions))
	for i, r := range obj.Regions {
		to, _ := linkName(o, i, r.Name)
		if other, dup := linked[to]; dup {
			return fmt.Errorf("%w: regions %q and %q would both link to %q", ErrBadBinding, other, r.Name, to)
		}
		linked[to] = r.Name
	}
	return nil
}

// Program is an installed object: its bytecode, loaded once and shared by
// every core, its handlers with their node-wide ids, and the regions it is
// linked to.
type Program struct {
	ID     uint64 // node-wide, from 1, never reused (the control plane's program id)
	Tenant uint64
	Source string // the object's source file name
	// Digest names the program to other nodes (ProgramDigest): send and
	// forward carry it so that the target finds its copy of the program.
	Digest uint64
	Report *verifier.Report // what the verifier proved at Install

	lines    *bytecode.Object // the object's code and line table only, for Position
	nic      *NIC
	vm       *vm.Program
	handlers []*handler // in the object's order
	regions  []*Region  // linked, in the object's region order
	removed  bool       // Uninstall began (under NIC.mu)

	// host is how host cores run the program under a JIT tier, chosen
	// once (core.chooseHost); nil until then.
	host atomic.Pointer[hostExec]

	// inflight counts accepted messages not yet done; Uninstall waits for
	// it to reach 0 once draining is set.
	inflight atomic.Int64
	draining atomic.Bool
	drained  chan struct{}
}

// HandlerInfo describes one installed handler.
type HandlerInfo struct {
	ID        uint32 // node-wide id: what a Message names
	ObjectID  uint32 // the id in the object (bytecode.Handler.ID)
	Name      string
	Tenant    uint64
	Program   uint64    // the program's id; 0 for a built-in verb
	Source    string    // the program's source file name; "" for a verb
	MaxInsns  uint64    // the verified worst case
	Placement Placement // PlaceNIC, PlaceHostBudget or PlaceHostHelper
	Builtin   bool      // one of the built-in verbs
	// Args and Results are the object's layouts of the request payload
	// and the reply (bytecode.Handler), for callers that encode and decode.
	Args, Results []bytecode.Field
}

// Regions lists the regions linked to the program, in the object's
// region order.
func (p *Program) Regions() []*Region { return slices.Clone(p.regions) }

// Handlers lists the program's handlers in the object's order.
func (p *Program) Handlers() []HandlerInfo {
	out := make([]HandlerInfo, len(p.handlers))
	for i, h := range p.handlers {
		out[i] = h.info()
	}
	return out
}

// HandlerID returns the node-wide id of the handler called name.
func (p *Program) HandlerID(name string) (uint32, bool) {
	for _, h := range p.handlers {
		if h.name == name {
			return h.id, true
		}
	}
	return 0, false
}

// ResolveLocal maps a handler id of the object (what compiled code passes
// to send and forward) to its node-wide id on this node.
func (p *Program) ResolveLocal(objectID uint32) (uint32, bool) {
	for _, h := range p.handlers {
		if h.objectID == objectID {
			return h.id, true
		}
	}
	return 0, false
}

// Program returns the installed program with id.
func (n *NIC) Program(id uint64) (*Program, bool) {
	n.mu.Lock()
	defer n.mu.Unlock()
	p, ok := n.programs[id]
	return p, ok
}

// Programs returns tenant's installed programs in id order.
func (n *NIC) Programs(tenant uint64) []*Program {
	n.mu.Lock()
	defer n.mu.Unlock()
	var out []*Program
	if t := n.tenants[tenant]; t != nil {
		for p := range t.programs {
			out = append(out, p)
		}
	}
	slices.SortFunc(out, func(a, b *Program) int { return cmp.Compare(a.ID, b.ID) })
	return out
}

// release ends one accepted message; the last one of a draining program
// wakes Uninstall.
func (p *Program) release() {
	if p.inflight.Add(-1) == 0 && p.draining.Load() {
		select {
		case p.drained <- struct{}{}:
		default:
		}
	}
}

// handler is one entry of the dispatch table: an installed handler or a
// built-in verb.
type handler struct {
	id       uint32
	tenant   uint64
	name     string
	objectID uint32
	prog     *Program // nil for a verb
	verb     uint32   // the verb's id, 0 for installed handlers
	entry    int
	maxInsns uint64
	place    Placement // where it goes before any spill
	// replySize is the reply buffer: the extent of the declared results,
	// or MaxReply when the object declares none.
	replySize     int
	args, results []bytecode.Field // the object's layouts
	regions       []vm.RegionMem   // shared by every run: Invoke only reads it
	nicmem        []bool           // by region index: the region is in nicmem
	// static is the cost of the region touches on a NIC core [0] and a
	// host core [1].
	static [2]cost
	ctr    handlerCounters
	steer  handlerSteer // PolicySteer's state (steering.go)
}

type handlerCounters struct {
	placed    [numPlacements]atomic.Uint64
	rejected  atomic.Uint64 // foreign tenant, overloaded
	runs      atomic.Uint64
	insns     atomic.Uint64
	replies   atomic.Uint64
	errors    atomic.Uint64
	forwarded atomic.Uint64
	faults    atomic.Uint64
	runTimes  runTimes
}

func (h *handler) info() HandlerInfo {
	hi := HandlerInfo{ID: h.id, ObjectID: h.objectID, Name: h.name, Tenant: h.tenant,
		MaxInsns: h.maxInsns, Placement: h.place, Builtin: h.verb != 0, Args: h.args, Results: h.results}
	if h.prog != nil {
		hi.Program, hi.Source = h.prog.ID, h.prog.Source
	}
	return hi
}

// Position is the source position of instruction slot in the program's
// object, from its line table; false where the object has none.
func (p *Program) Position(slot int) (bytecode.Line, bool) {
	return p.lines.Position(slot)
}

// Install is InstallWith with the zero InstallOptions: every region of
// obj links to the tenant's registered region of the same name.
func (n *NIC) Install(tenant uint64, obj *bytecode.Object) (*Program, error) {
	return n.InstallWith(tenant, obj, InstallOptions{})
}

// InstallWith verifies obj for tenant and makes its handlers callable. It
// never trusts the object: it validates it, runs verifier.Verify over its
// code with the object's handlers as entries and its regions as declared
// (budget Config.HostBudget), and links every region by name — its own,
// or the one opts.Regions binds it to — to a region the tenant
// registered, which must be at least as large and, if the object writes
// it, writable. A handler whose verified bound exceeds Config.NICBudget,
// or that may call a host-only helper, is placed on host cores.
//
// A rejection by the verifier is returned wrapped: errors.As finds the
// *verifier.Error.
func (n *NIC) InstallWith(tenant uint64, obj *bytecode.Object, opts InstallOptions) (*Program, error) {
	if obj == nil {
		return nil, errors.New("nicrt: install: nil object")
	}
	if err := obj.Validate(); err != nil {
		return nil, fmt.Errorf("nicrt: install: %w", err)
	}
	if err := checkBindings(opts, obj); err != nil {
		return nil, err
	}
	insns, err := obj.Insns()
	if err != nil {
		return nil, fmt.Errorf("nicrt: install: %w", err)
	}
	if len(obj.Handlers) == 0 {
		return nil, ErrNoHandlers
	}
	rep, err := verifier.Verify(insns, verifier.ObjectConfig(obj, verifier.Config{Budget: n.cfg.HostBudget}))
	if err != nil {
		return nil, fmt.Errorf("nicrt: install: %w", err)
	}
	prog, err := vm.Load(insns)
	if err != nil {
		return nil, fmt.Errorf("nicrt: install: %w", err)
	}
	digest, err := ProgramDigest(obj)
	if err != nil {
		return nil, fmt.Errorf("nicrt: install: %w", err)
	}
	p := &Program{Tenant: tenant, Source: obj.Source, Digest: digest, Report: rep, nic: n, vm: prog, drained: make(chan struct{}, 1),
		lines: &bytecode.Object{Code: obj.Code, Lines: obj.Lines}}
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.closed.Load() {
		return nil, ErrClosed
	}
	t := n.tenant(tenant)
	mems := make([]vm.RegionMem, len(obj.Regions))
	nicmem := make([]bool, len(obj.Regions))
	for i, or := range obj.Regions {
		name, label := linkName(opts, i, or.Name)
		r := t.regions[name]
		switch {
		case r == nil:
			return nil, fmt.Errorf("%w: %s (tenant %d)", ErrRegionMissing, label, tenant)
		case or.Size > r.Size():
			return nil, fmt.Errorf("%w: %s: the object needs %d bytes, %d are registered", ErrRegionTooSmall, label, or.Size, r.Size())
		case or.Writable && !r.Writable:
			return nil, fmt.Errorf("%w: %s", ErrRegionReadOnly, label)
		}
		p.regions = append(p.regions, r)
		// The object's size, not the registered one: the verifier proved
		// accesses against it, and the rest stays out of reach.
		mems[i] = vm.RegionMem{Data: r.mem[:or.Size], Writable: or.Writable, Memory: r.backing}
		nicmem[i] = r.NICMem
	}
	if uint64(n.nextHandler)+uint64(len(obj.Handlers)) > 1<<32-1 {
		return nil, ErrIDsExhausted
	}
	for i, oh := range obj.Handlers {
		h := &handler{
			tenant: tenant, name: oh.Name, objectID: oh.ID, prog: p, entry: oh.Entry,
			maxInsns: rep.Entries[i].MaxInsns, regions: mems, nicmem: nicmem,
			replySize: n.cfg.MaxReply, args: oh.Args, results: oh.Results,
		}
		if len(oh.Results) > 0 {
			extent := uint64(0)
			for _, f := range oh.Results {
				extent = max(extent, uint64(f.Offset)+uint64(f.Size))
			}
			if extent > uint64(n.cfg.MaxReply) {
				return nil, fmt.Errorf("%w: handler %q has %d bytes of results, the limit is %d", ErrReplyTooLarge, oh.Name, extent, n.cfg.MaxReply)
			}
			h.replySize = int(extent+7) &^ 7
		}
		// The verifier's report of the entry says what its runs may use:
		// the helpers (placement) and the regions (the cost model's
		// touches).
		entry := &rep.Entries[i]
		switch {
		case entry.HostOnly:
			h.place = PlaceHostHelper
		case h.maxInsns > n.cfg.NICBudget:
			h.place = PlaceHostBudget
		}
		if h.place != PlaceNIC && len(n.host) == 0 {
			return nil, fmt.Errorf("%w: handler %q (%s)", ErrNeedsHost, oh.Name, h.place)
		}
		h.static[0] = n.model.touches(entry.RegionsRead, entry.RegionsWritten, nicmem, false)
		h.static[1] = n.model.touches(entry.RegionsRead, entry.RegionsWritten, nicmem, true)
		p.handlers = append(p.handlers, h)
	}
	// Nothing can fail from here on.
	p.ID = n.nextProgram
	n.nextProgram++
	n.programs[p.ID] = p
	for _, h := range p.handlers {
		h.id = n.nextHandler
		n.nextHandler++
	}
	for _, r := range p.regions {
		r.links++
	}
	t.programs[p] = struct{}{}
	for _, h := range p.handlers {
		n.handlers.set(h.id, h)
	}
	n.digests.add(p)
	return p, nil
}

// Uninstall removes p's handlers from dispatch (new messages for them get
// StatusUnknownHandler), waits until every message already accepted for
// them is done, and then unlinks the program's regions. It must not be
// called from a done callback of p's own messages, which it would wait for.
func (n *NIC) Uninstall(p *Program) error {
	n.mu.Lock()
	if p == nil || p.nic != n || p.removed {
		n.mu.Unlock()
		return ErrNotInstalled
	}
	p.removed = true
	p.draining.Store(true)
	n.digests.remove(p)
	for _, h := range p.handlers {
		n.handlers.set(h.id, nil)
	}
	n.mu.Unlock()

	for p.inflight.Load() != 0 {
		<-p.drained
	}

	n.mu.Lock()
	defer n.mu.Unlock()
	for _, r := range p.regions {
		r.links--
	}
	delete(n.tenants[p.Tenant].programs, p)
	delete(n.programs, p.ID)
	if len(n.host) > 0 && n.host[0].jit != nil {
		n.host[0].jit.Forget(p) // every host core shares the cache
		if e := p.host.Load(); e != nil && e.jit {
			for _, c := range n.host {
				c.retire(e.x)
			}
		}
	}
	return nil
}
