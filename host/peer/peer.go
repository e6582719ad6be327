package peer

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/naam-project/naam/bytecode"
	"github.com/naam-project/naam/clientrun"
	"github.com/naam-project/naam/nicrt/caller"
	"github.com/naam-project/naam/nicrt/transport"
	"github.com/naam-project/naam/nicrt/wire"
)

// Peer is a node this process calls: its handlers by name, its regions by
// name, and a runtime client (retransmission, credits) to it. A Peer is
// safe for concurrent use.
type Peer struct {
	addr   netip.AddrPort
	tenant uint32
	src    uint32 // the caller's node id
	cl     *caller.Client
	node   uint32 // the peer's node id

	mu        sync.RWMutex
	handlers  map[string]*Handler // by name and by program.name; nil: ambiguous
	byID      map[uint32]*Handler
	all       []*Handler
	programs  []Program // by id
	regions   map[string]wire.RegionDesc
	described caller.Description           // the last description, for AddObject
	objects   map[uint64]knownObject       // by digest: objects whose handlers may run at the client
	runners   map[uint64]*clientrun.Runner // by digest
	keep      map[uint64]clientrun.Keep    // by digest: KeepAtClient's
	refresh   sync.Mutex                   // one describe at a time

	placement atomic.Uint32 // a Placement, never PlaceDefault
	runIDs    atomic.Uint64 // request ids of runs at the client

	down   atomic.Bool
	closed atomic.Bool
	bufs   sync.Pool // *[]byte: payload then reply
	onDone func(*Peer)
}

// Counter is one of a node's counters, by name (spec/nic.md, Stats).
type Counter = wire.Counter

// Config is what dialing a peer needs from the caller (DialConfig).
type Config struct {
	Node   uint32    // the caller's node id (the src of its requests)
	Tenant uint32    // the tenant it calls as
	Keys   wire.Keys // the tenant's MAC key
	// Client tunes the calls (timeouts, tries, outstanding requests);
	// Node, Server and Keys are set from the above.
	Client caller.ClientConfig
	// OnClose, if set, is called once, by Close, after the peer closed: a
	// node that keeps one Peer per address forgets it there.
	OnClose func(*Peer)
	// Placement is where calls run (SetPlacement); PlaceDefault means
	// AtNode.
	Placement Placement
	// WrapConn, if set, wraps the socket the calls go through (not the
	// first describe's): a test's lossy link.
	WrapConn func(transport.Conn) transport.Conn
}

// localFor is the address a socket to remote binds: loopback for a
// loopback peer, the unspecified address of its family otherwise.
func localFor(remote netip.AddrPort) transport.Addr {
	a := remote.Addr().Unmap()
	switch {
	case a.IsLoopback() && a.Is4():
		return netip.AddrPortFrom(netip.AddrFrom4([4]byte{127, 0, 0, 1}), 0)
	case a.IsLoopback():
		return netip.AddrPortFrom(netip.IPv6Loopback(), 0)
	case a.Is4():
		return netip.AddrPortFrom(netip.IPv4Unspecified(), 0)
	}
	return netip.AddrPortFrom(netip.IPv6Unspecified(), 0)
}

// DialConfig asks the node at addr to describe itself (with dst 0: the
// caller does not know its id yet), then opens the client calls go
// through. A node dials its peers so (host.Node.Dial), a tool without a
// node with Dial.
func DialConfig(ctx context.Context, addr netip.AddrPort, cfg Config) (*Peer, error) {
	addr = netip.AddrPortFrom(addr.Addr().Unmap(), addr.Port())
	open := func(server uint32) (*caller.Client, error) {
		conn, err := transport.ListenUDP(transport.UDPConfig{Addr: localFor(addr)})
		if err != nil {
			return nil, err
		}
		var tc transport.Conn = conn
		if server != 0 && cfg.WrapConn != nil {
			tc = cfg.WrapConn(conn)
		}
		ccfg := cfg.Client
		ccfg.Node, ccfg.Server, ccfg.Keys = cfg.Node, server, cfg.Keys
		// More patience than the runtime's defaults (8 tries, timeouts up
		// to 100 ms: about 0.2 s): a host shares its cores with the
		// application, and a pause of a few hundred milliseconds must not
		// turn into failed calls. A dead peer still fails within a second
		// and a half, or at the caller's deadline.
		if ccfg.MaxTries == 0 {
			ccfg.MaxTries = 10
		}
		if ccfg.MaxTimeout == 0 {
			ccfg.MaxTimeout = 250 * time.Millisecond
		}
		cl, err := caller.Dial(tc, addr, ccfg)
		if err != nil {
			tc.Close()
			return nil, err
		}
		return cl, nil
	}
	probe, err := open(0)
	if err != nil {
		return nil, fmt.Errorf("host: dial %v: %w", addr, err)
	}
	d, err := probe.Describe(ctx, cfg.Tenant)
	probe.Close()
	if err != nil {
		if errors.Is(err, ErrTimeout) || errors.Is(err, context.DeadlineExceeded) {
			return nil, fmt.Errorf("host: dial %v: no answer (is a node listening there, with this tenant's key?): %w", addr, err)
		}
		return nil, fmt.Errorf("host: dial %v: %w", addr, err)
	}
	cl, err := open(d.Node)
	if err != nil {
		return nil, fmt.Errorf("host: dial %v: %w", addr, err)
	}
	p := &Peer{addr: addr, tenant: cfg.Tenant, src: cfg.Node, cl: cl, node: d.Node, onDone: cfg.OnClose}
	p.SetPlacement(cfg.Placement)
	p.bufs.New = func() any {
		b := make([]byte, 0, 2*(wire.HeaderSize+wire.MaxPayload))
		return &b
	}
	if err := p.load(d); err != nil {
		cl.Close()
		return nil, fmt.Errorf("host: dial %v: %w", addr, err)
	}
	return p, nil
}

// load replaces what the peer knows of the node's programs and regions.
// A handler that keeps its id keeps its placement counters; one whose
// program the caller holds (AddObject) gets what runs it at the client.
func (p *Peer) load(d caller.Description) error {
	regions := map[string]wire.RegionDesc{}
	for _, r := range d.Regions {
		regions[r.Name] = r
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	handlers := map[string]*Handler{}
	byID := map[uint32]*Handler{}
	var all []*Handler
	ids := make([]uint64, len(d.Programs))
	sources := make([]string, len(d.Programs))
	for i, prog := range d.Programs {
		ids[i], sources[i] = prog.Program, prog.Source
	}
	labels := bytecode.ProgramLabels(ids, sources)
	programs := make([]Program, len(d.Programs))
	for i, prog := range d.Programs {
		programs[i] = Program{ID: prog.Program, Source: prog.Source, Name: labels[i]}
		cp := p.clientProgramFor(prog, regions)
		for _, hd := range prog.Handlers {
			h, err := newHandler(prog.Source, hd.Name, hd.ID, fieldsOf(hd.Args), fieldsOf(hd.Results))
			if err != nil {
				return err
			}
			h.ProgramID, h.label = prog.Program, labels[i]
			h.ClientEligible, h.MaxInsns = hd.Client, hd.MaxInsns
			if hd.Client && cp != nil {
				h.client = cp
			}
			if old := p.byID[hd.ID]; old != nil && old.Name == h.Name && old.ProgramID == h.ProgramID {
				h.place = old.place
			}
			byID[hd.ID] = h
			programs[i].Handlers = append(programs[i].Handlers, h)
			all = append(all, h)
			for _, key := range []string{h.Name, h.String()} {
				if old, dup := handlers[key]; dup && old != h {
					handlers[key] = nil // ambiguous
				} else {
					handlers[key] = h
				}
			}
		}
	}
	p.handlers, p.byID, p.all, p.programs, p.regions, p.described = handlers, byID, all, programs, regions, d
	return nil
}

func fieldsOf(fs []wire.Field) []bytecode.Field {
	out := make([]bytecode.Field, len(fs))
	for i, f := range fs {
		out[i] = bytecode.Field{Name: f.Name, Type: f.Type, Offset: f.Offset, Size: f.Size}
	}
	return out
}

// Addr is the peer's address.
func (p *Peer) Addr() netip.AddrPort { return p.addr }

// NodeID is the peer's node id.
func (p *Peer) NodeID() uint32 { return p.node }

// Refresh asks the peer again for its programs and regions (Call does so
// by itself when a name or id is unknown).
func (p *Peer) Refresh(ctx context.Context) error {
	if err := p.usable(); err != nil {
		return err
	}
	p.refresh.Lock()
	defer p.refresh.Unlock()
	d, err := p.cl.Describe(ctx, p.tenant)
	if err != nil {
		return p.err(fmt.Errorf("host: describe %v: %w", p.addr, err))
	}
	if d.Node != p.node {
		return fmt.Errorf("host: %v is node %d now, not %d: dial it again", p.addr, d.Node, p.node)
	}
	return p.load(d)
}

// Handlers lists the peer's handlers as last described.
func (p *Peer) Handlers() []*Handler {
	p.mu.RLock()
	defer p.mu.RUnlock()
	out := append([]*Handler(nil), p.all...)
	sort.Slice(out, func(i, j int) bool { return out[i].String() < out[j].String() })
	return out
}

// Handler returns the handler called name ("get", or "kv.get" to pick
// the program), describing the peer again if it does not know the name.
func (p *Peer) Handler(ctx context.Context, name string) (*Handler, error) {
	if h, ok := p.lookup(name); ok {
		if h == nil {
			return nil, p.ambiguous(name)
		}
		return h, nil
	}
	if err := p.Refresh(ctx); err != nil {
		return nil, err
	}
	h, ok := p.lookup(name)
	switch {
	case !ok:
		return nil, fmt.Errorf("host: %v has no handler %q: %w (it has %s)", p.addr, name, ErrNoHandler, p.handlerNames())
	case h == nil:
		return nil, p.ambiguous(name)
	}
	return h, nil
}

func (p *Peer) lookup(name string) (*Handler, bool) {
	p.mu.RLock()
	h, ok := p.handlers[name]
	p.mu.RUnlock()
	return h, ok
}

func (p *Peer) ambiguous(name string) error {
	var in []string
	for _, h := range p.Handlers() {
		if h.Name == name {
			in = append(in, h.String())
		}
	}
	return fmt.Errorf("host: %v: handler %q is ambiguous: name one of %s: %w", p.addr, name, strings.Join(in, ", "), ErrNoHandler)
}

func (p *Peer) handlerNames() string {
	hs := p.Handlers()
	if len(hs) == 0 {
		return "none"
	}
	names := make([]string, len(hs))
	for i, h := range hs {
		names[i] = h.String()
	}
	return strings.Join(names, ", ")
}

// usable says why the peer cannot be called, if it cannot.
func (p *Peer) usable() error {
	switch {
	case p.down.Load():
		return fmt.Errorf("host: %v: %w", p.addr, ErrPeerDown)
	case p.closed.Load():
		return fmt.Errorf("host: %v: %w", p.addr, ErrClosed)
	}
	return nil
}

// err turns the ErrClosed of a peer that membership took down into
// ErrPeerDown.
func (p *Peer) err(err error) error {
	if p.down.Load() && errors.Is(err, ErrClosed) {
		return fmt.Errorf("%w (%w)", ErrPeerDown, err)
	}
	return err
}

// Call runs handler on the peer with args and decodes its reply into
// result (Handler.Encode and Handler.Decode say what fits). It returns when
// the reply arrives, ctx ends, or the runtime gives up (ErrTimeout); a
// handler that failed is a *HandlerError.
//
// A handler id the peer no longer knows (its program was uninstalled and
// installed again) makes Call describe the peer again and, if the name now
// has another id, call that once: the peer refused the first request
// without running it.
func (p *Peer) Call(ctx context.Context, handler string, args, result any) error {
	h, err := p.Handler(ctx, handler)
	if err != nil {
		return err
	}
	err = p.CallHandler(ctx, h, args, result)
	if h2 := p.renamed(ctx, handler, h, err); h2 != nil {
		return p.CallHandler(ctx, h2, args, result)
	}
	return err
}

// renamed returns the handler called name after a refresh, if a call to
// h failed because the peer did not know h's id and the name now has
// another.
func (p *Peer) renamed(ctx context.Context, name string, h *Handler, err error) *Handler {
	if !errors.Is(err, errUnknownHandler) || p.Refresh(ctx) != nil {
		return nil
	}
	if h2, ok := p.lookup(name); ok && h2 != nil && h2.ID != h.ID {
		return h2
	}
	return nil
}

// CallHandler is Call with the handler already looked up.
func (p *Peer) CallHandler(ctx context.Context, h *Handler, args, result any) error {
	if err := p.usable(); err != nil {
		return err
	}
	return p.callAt(ctx, h, args, result, p.decide(h, PlaceDefault))
}

// callAt is CallHandler with the placement decided.
func (p *Peer) callAt(ctx context.Context, h *Handler, args, result any, d decision) error {
	bp := p.bufs.Get().(*[]byte)
	defer p.bufs.Put(bp)
	payload, err := h.Encode((*bp)[:0], args)
	if err != nil {
		return err
	}
	reply, _, err := p.execAt(ctx, h, payload, payload[len(payload):], d)
	if err != nil {
		return err
	}
	return h.Decode(reply, result)
}

// CallRaw runs handler with payload as the request and returns a copy of
// the reply, without layouts.
func (p *Peer) CallRaw(ctx context.Context, handler string, payload []byte) ([]byte, error) {
	h, err := p.Handler(ctx, handler)
	if err != nil {
		return nil, err
	}
	if err := p.usable(); err != nil {
		return nil, err
	}
	reply, _, err := p.exec(ctx, h, payload, nil, PlaceDefault)
	if h2 := p.renamed(ctx, handler, h, err); h2 != nil {
		reply, _, err = p.exec(ctx, h2, payload, nil, PlaceDefault)
	}
	if err != nil {
		return nil, err
	}
	return reply, nil
}

// CallID runs the handler with node-wide id on the peer, with payload as
// the request, and returns a copy of the reply: for callers that looked
// the id up once (Handler) and encode themselves. A handler the peer
// described runs where the placement puts it.
func (p *Peer) CallID(ctx context.Context, id uint32, payload []byte) ([]byte, error) {
	if err := p.usable(); err != nil {
		return nil, err
	}
	p.mu.RLock()
	h := p.byID[id]
	p.mu.RUnlock()
	if h != nil {
		reply, _, err := p.exec(ctx, h, payload, nil, PlaceDefault)
		return reply, err
	}
	reply, err := p.cl.Call(ctx, p.tenant, id, payload)
	if err != nil {
		if errors.Is(err, errUnknownHandler) {
			err = fmt.Errorf("%w (%w)", ErrNoHandler, err)
		}
		return nil, p.err(fmt.Errorf("host: call handler %d on %v: %w", id, p.addr, err))
	}
	return reply, nil
}

// A Call is an asynchronous call started by Go, as in net/rpc: when it
// ends, Error is set (nil on success, the reply decoded into Result) and
// the Call is sent on Done.
type Call struct {
	Handler *Handler
	Args    any
	Result  any
	Error   error
	Done    chan *Call
}

func (c *Call) finish(err error) {
	c.Error = err
	c.Done <- c
}

// Go starts a call and returns without waiting for it (it may describe
// the peer first, if it does not know the name); the Call arrives on done
// when it ends. done must have room for every call sent to it (a buffered
// channel), as the runtime's goroutine delivers it; nil makes a channel of
// one. Many calls may be in flight: up to the peer's credits go out at
// once, later ones wait for room on a goroutine of their own.
func (p *Peer) Go(ctx context.Context, handler string, args, result any, done chan *Call) *Call {
	if done == nil {
		done = make(chan *Call, 1)
	}
	c := &Call{Args: args, Result: result, Done: done}
	h, err := p.Handler(ctx, handler)
	if err != nil {
		c.finish(err)
		return c
	}
	c.Handler = h
	if err := p.usable(); err != nil {
		c.finish(err)
		return c
	}
	d := p.decide(h, PlaceDefault)
	if d.at == AtClient || d.auto {
		// A run at the client waits for its verbs, and Auto measures the
		// call's time: on a goroutine of its own, placed once, here.
		go func() { c.finish(p.callAt(ctx, h, args, result, d)) }()
		return c
	}
	bp := p.bufs.Get().(*[]byte)
	payload, err := h.Encode((*bp)[:0], args)
	if err != nil {
		p.bufs.Put(bp)
		c.finish(err)
		return c
	}
	err = p.cl.Go(p.tenant, h.ID, payload, func(reply []byte, err error) {
		if err != nil {
			c.finish(p.err(callError(h, err)))
			return
		}
		c.finish(h.Decode(reply, result))
	})
	p.bufs.Put(bp) // Go copied the payload
	if errors.Is(err, caller.ErrNoCredits) {
		go func() { c.finish(p.callAt(ctx, h, args, result, d)) }()
		return c
	}
	if err != nil {
		c.finish(p.err(callError(h, err)))
	}
	return c
}

// region returns the peer's region called name, describing it again if
// it does not know the name.
func (p *Peer) region(ctx context.Context, name string) (wire.RegionRef, error) {
	r, err := p.regionDesc(ctx, name)
	if err != nil {
		return wire.RegionRef{}, err
	}
	return wire.RegionRef{ID: r.Region, Key: r.Key}, nil
}

// Read returns n bytes at off of the peer's region called region: an
// RDMA READ as the built-in READ handler.
func (p *Peer) Read(ctx context.Context, region string, off uint64, n uint32) ([]byte, error) {
	ref, err := p.region(ctx, region)
	if err != nil {
		return nil, err
	}
	if err := p.usable(); err != nil {
		return nil, err
	}
	b, err := p.cl.Read(ctx, p.tenant, ref, off, n)
	return b, p.verbError("read", err)
}

// Write writes data at off of the peer's region: an RDMA WRITE.
func (p *Peer) Write(ctx context.Context, region string, off uint64, data []byte) error {
	ref, err := p.region(ctx, region)
	if err != nil {
		return err
	}
	if err := p.usable(); err != nil {
		return err
	}
	return p.verbError("write", p.cl.Write(ctx, p.tenant, ref, off, data))
}

// CompareAndSwap replaces the 8-byte word at off (8-byte aligned) with
// desired if it holds expected, atomically, and returns what it held: an
// RDMA CAS.
func (p *Peer) CompareAndSwap(ctx context.Context, region string, off, expected, desired uint64) (old uint64, swapped bool, err error) {
	ref, err := p.region(ctx, region)
	if err != nil {
		return 0, false, err
	}
	if err := p.usable(); err != nil {
		return 0, false, err
	}
	old, swapped, err = p.cl.CompareAndSwap(ctx, p.tenant, ref, off, expected, desired)
	return old, swapped, p.verbError("compare-and-swap", err)
}

// FetchAdd adds delta to the 8-byte word at off atomically and returns
// what it held: an RDMA FETCH-ADD. A retried FETCH-ADD never adds twice.
func (p *Peer) FetchAdd(ctx context.Context, region string, off, delta uint64) (uint64, error) {
	ref, err := p.region(ctx, region)
	if err != nil {
		return 0, err
	}
	if err := p.usable(); err != nil {
		return 0, err
	}
	old, err := p.cl.FetchAdd(ctx, p.tenant, ref, off, delta)
	return old, p.verbError("fetch-add", err)
}

func (p *Peer) verbError(verb string, err error) error {
	if err == nil {
		return nil
	}
	return p.err(fmt.Errorf("host: %s on %v: %w", verb, p.addr, err))
}

// ClientStats are the runtime client's counters for this peer:
// retransmissions, timeouts, replies.
func (p *Peer) ClientStats() caller.ClientStats { return p.cl.Stats() }

// MarkDown fails the calls in flight with ErrPeerDown and refuses new
// ones: for membership, which declared the peer dead or gone.
func (p *Peer) MarkDown() {
	p.down.Store(true)
	p.cl.Close()
}

// Close ends the calls in flight with ErrClosed and closes the socket.
func (p *Peer) Close() error {
	if p.closed.Swap(true) {
		return nil
	}
	err := p.cl.Close()
	if p.onDone != nil {
		p.onDone(p)
	}
	return err
}
