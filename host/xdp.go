package host

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"runtime"
	"sort"
	"sync"
	"time"
	"unsafe"

	"github.com/naam-project/naam/bytecode"
	"github.com/naam-project/naam/nicrt"
	"github.com/naam-project/naam/nicrt/server"
	"github.com/naam-project/naam/nicrt/wire"
	"github.com/naam-project/naam/vm"
	"github.com/naam-project/naam/xdp"
)

// ErrXDPUnavailable is what Start returns, wrapped with the reason, when
// Config.XDP names an interface the XDP tier cannot run on: the node does
// not start without the tier it was asked for.
var ErrXDPUnavailable = errors.New("host: the XDP tier cannot run here")

// xdpFront is a node's XDP tier (package xdp) on Config.XDP, in front of
// its server on the same port (server.Front): the node's regions are its
// shared memory, the handlers the node places on the NIC are translated
// and loaded into it, and the server shares the tier's window and reply
// cache for the caller streams (spec/xdp.md, The node).
type xdpFront struct {
	iface   *net.Interface
	generic bool
	log     *slog.Logger
	start   time.Time // just before the NIC was made: its clock's origin, within microseconds

	tier  *xdp.Tier
	peers *xdp.PeerTable
	srv   *server.Server

	mu sync.Mutex
	// mem: the XDP regions backing the NIC's regions, by the address of
	// their first byte; an entry leaves when its nicrt region is collected.
	mem map[uintptr]*xdp.Region
	// notServed: why each handler the node has is not answered in XDP.
	notServed map[uint32]string

	stop chan struct{}
	done chan struct{}
}

// newXDPFront checks that the tier can run on cfg.XDP here (privilege,
// kernel support, the interface), before anything else starts.
func newXDPFront(cfg *Config, log *slog.Logger) (*xdpFront, error) {
	if err := xdp.Probe(); err != nil {
		return nil, fmt.Errorf("%w: --xdp %s: %v", ErrXDPUnavailable, cfg.XDP, err)
	}
	iface, err := net.InterfaceByName(cfg.XDP)
	if err != nil {
		return nil, fmt.Errorf("%w: --xdp %s: %v", ErrXDPUnavailable, cfg.XDP, err)
	}
	return &xdpFront{iface: iface, generic: cfg.XDPGeneric, log: log, start: time.Now(),
		mem: map[uintptr]*xdp.Region{}, notServed: map[uint32]string{}}, nil
}

// memory allocates a region's memory in XDP memory (nicrt.Config.Memory):
// the host, the verbs, the user-space cores and the kernel see the same
// bytes. A region the tier cannot hold (over xdp.MaxRegionSize) is Go
// memory, and the handlers linking it are served by the node.
func (f *xdpFront) memory(size uint64) (*vm.Memory, error) {
	xr, err := xdp.NewRegion(size)
	if err != nil {
		f.log.Warn("region not shared with XDP: its handlers run in user space", "size", size, "err", err)
		return vm.HeapMemory(size), nil
	}
	b := xr.Bytes()
	m := vm.ExternalMemory(b)
	addr := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	f.mu.Lock()
	f.mem[addr] = xr
	f.mu.Unlock()
	runtime.AddCleanup(m, func(addr uintptr) {
		f.mu.Lock()
		xr := f.mem[addr]
		delete(f.mem, addr)
		f.mu.Unlock()
		if xr != nil {
			xr.Close()
		}
	}, addr)
	return m, nil
}

// region returns the XDP region backing r, if there is one.
func (f *xdpFront) region(r *nicrt.Region) *xdp.Region {
	b := r.Bytes()
	if len(b) == 0 {
		return nil
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.mem[uintptr(unsafe.Pointer(unsafe.SliceData(b)))]
}

// open creates the tier for the node (id, the address it listens on),
// gives it the tenants' keys and the verbs; attach attaches it once the
// server is there.
func (f *xdpFront) open(id uint32, addr netip.AddrPort, keys wire.KeyMap, maxPayload, maxReply int, log *slog.Logger) error {
	f.log = log
	ip := [4]byte{}
	if a := addr.Addr().Unmap(); a.Is4() && !a.IsUnspecified() {
		ip = a.As4()
	}
	tier, err := xdp.New(xdp.Config{Node: id, Port: addr.Port(), IP: ip, MaxPayload: maxPayload, MaxReply: maxReply})
	if err != nil {
		return fmt.Errorf("%w: --xdp %s: %v", ErrXDPUnavailable, f.iface.Name, err)
	}
	f.tier, f.peers = tier, tier.Peers()
	tenants := make([]uint32, 0, len(keys))
	for t := range keys {
		tenants = append(tenants, t)
	}
	sort.Slice(tenants, func(i, j int) bool { return tenants[i] < tenants[j] })
	for _, t := range tenants {
		switch err := tier.SetKey(t, keys[t]); {
		case errors.Is(err, xdp.ErrNotSipHash):
			f.log.Warn("tenant's packets pass up from XDP: its key is not SipHash (Config.MAC)", "tenant", t)
		case err != nil:
			tier.Close()
			return err
		}
	}
	if err := tier.EnableVerbs(); err != nil {
		tier.Close()
		return fmt.Errorf("%w: --xdp %s: the verbs: %v", ErrXDPUnavailable, f.iface.Name, err)
	}
	if err := tier.SetClock(xdp.MonotonicNow() - time.Since(f.start)); err != nil {
		tier.Close()
		return err
	}
	return nil
}

// attach attaches the tier to the interface (native mode, or generic with
// Config.XDPGeneric) and keeps its credits the server's.
func (f *xdpFront) attach(srv *server.Server) error {
	f.srv = srv
	if err := f.tier.Attach(f.iface.Index, f.generic); err != nil {
		return fmt.Errorf("%w: --xdp %s: %v", ErrXDPUnavailable, f.iface.Name, err)
	}
	f.stop, f.done = make(chan struct{}), make(chan struct{})
	go f.feedCredits()
	mode := "native"
	if f.generic {
		mode = "generic"
	}
	f.log.Info("XDP tier attached", "interface", f.iface.Name, "mode", mode)
	return nil
}

// feedCredits gives the tier the server's grant, as it changes.
func (f *xdpFront) feedCredits() {
	defer close(f.done)
	t := time.NewTicker(50 * time.Millisecond)
	defer t.Stop()
	last := uint16(0)
	for {
		if c := f.srv.Credits(); c != last {
			if f.tier.SetCredits(c) == nil {
				last = c
			}
		}
		select {
		case <-f.stop:
			return
		case <-t.C:
		}
	}
}

func (f *xdpFront) close() error {
	if f == nil || f.tier == nil {
		return nil
	}
	if f.stop != nil {
		close(f.stop)
		<-f.done
	}
	return f.tier.Close()
}

// Claim, Cached and Complete are server.Front's: the caller streams'
// shared window and reply cache (xdp.PeerTable).
func (f *xdpFront) Claim(tenant, src uint32, id uint64) (server.FrontVerdict, bool) {
	p, ok := f.peers.Peer(tenant, src)
	if !ok {
		return 0, false
	}
	switch p.Claim(id) {
	case xdp.Claimed:
		return server.FrontClaimed, true
	case xdp.Running:
		return server.FrontRunning, true
	case xdp.Cached:
		return server.FrontCached, true
	case xdp.Elsewhere:
		return server.FrontElsewhere, true
	case xdp.BelowFloor:
		return server.FrontBelowFloor, true
	case xdp.Contended:
		return server.FrontContended, true
	}
	return server.FrontTooOld, true
}

func (f *xdpFront) Cached(dst []byte, tenant, src uint32, id uint64) ([]byte, bool) {
	p, ok := f.peers.Peer(tenant, src)
	if !ok {
		return dst, false
	}
	return p.Cached(dst, id)
}

func (f *xdpFront) Complete(tenant, src uint32, id uint64, dgram []byte) {
	p, ok := f.peers.Peer(tenant, src)
	if !ok {
		return
	}
	if dgram == nil {
		p.CompleteElsewhere(id)
		return
	}
	p.Complete(id, dgram)
}

// Installed loads the handlers of p that the node places on the NIC into
// the tier; each that cannot be served there is logged with the reason
// (the kernel verifier's log at debug level) and passes up.
func (f *xdpFront) Installed(p *nicrt.Program, obj *bytecode.Object) {
	linked := p.Regions()
	regions := make([]*xdp.Region, len(linked))
	for i, r := range linked {
		regions[i] = f.region(r)
	}
	maxReply := f.tier.Config().MaxReply
	for i, h := range p.Handlers() {
		if i >= len(obj.Handlers) {
			break
		}
		why := ""
		if h.Placement != nicrt.PlaceNIC {
			why = "placed on the host (" + h.Placement.String() + ")"
		} else {
			err := f.tier.Install(xdp.HandlerSpec{ID: h.ID, Tenant: uint32(p.Tenant), Object: obj, Report: p.Report,
				Handler: i, ReplySize: xdp.ReplySize(obj.Handlers[i], maxReply), Regions: regions})
			var ns *xdp.NotServed
			switch {
			case err == nil:
				f.log.Info("handler answered in XDP", "handler", h.Name, "id", h.ID)
			case errors.As(err, &ns):
				why = ns.Reason
				if ns.Refusal != nil {
					f.log.Warn("the kernel's verifier refused the handler in XDP: served in user space", "handler", h.Name, "id", h.ID,
						"reason", ns.Reason, "log", fmt.Sprintf("%+v", ns.Refusal))
				}
			default:
				why = err.Error()
			}
		}
		if why != "" {
			f.log.Info("handler served in user space, not XDP", "handler", h.Name, "id", h.ID, "reason", why)
		}
		f.mu.Lock()
		if why != "" {
			f.notServed[h.ID] = why
		} else {
			delete(f.notServed, h.ID)
		}
		f.mu.Unlock()
	}
}

// Uninstalling takes p's handlers out of the tier before the NIC drains
// them: their requests pass up, where the NIC refuses them once p is gone.
func (f *xdpFront) Uninstalling(p *nicrt.Program) {
	for _, h := range p.Handlers() {
		if f.tier.Served(h.ID) {
			f.tier.Uninstall(h.ID)
		}
		f.mu.Lock()
		delete(f.notServed, h.ID)
		f.mu.Unlock()
	}
}

// Registered lets the verbs reach r in the tier, when r is in XDP memory.
func (f *xdpFront) Registered(r *nicrt.Region) {
	xr := f.region(r)
	if xr == nil {
		return
	}
	if err := f.tier.AddRegion(xdp.VerbRegion{ID: r.ID, Tenant: uint32(r.Tenant), Key: r.Key, Writable: r.Writable}, xr); err != nil {
		f.log.Warn("region not reachable by the verbs in XDP", "region", r.Name, "err", err)
	}
}

// Unregistering takes r out of the tier's verbs.
func (f *xdpFront) Unregistering(r *nicrt.Region) { f.tier.RemoveRegion(r.ID) }

// Counters are the tier's counters (xdp.*), or none when they cannot be
// read.
func (f *xdpFront) Counters() []nicrt.Counter {
	cs, err := f.tier.Counters()
	if err != nil {
		return nil
	}
	out := make([]nicrt.Counter, len(cs))
	for i, c := range cs {
		out[i] = nicrt.Counter{Name: c.Name, Value: c.Value}
	}
	return out
}

// XDPNotServed lists, by handler id, why the node's handlers are not
// answered in its XDP tier (placed on the host, a helper XDP lacks, the
// kernel verifier's refusal, …); nil without the tier.
func (n *Node) XDPNotServed() map[uint32]string {
	f := n.front
	if f == nil {
		return nil
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	out := make(map[uint32]string, len(f.notServed))
	for id, why := range f.notServed {
		out[id] = why
	}
	return out
}

// XDPCounters are the node's XDP tier's counters (xdp.runs,
// xdp.pass.handler, xdp.kernel_refusals, …: spec/xdp.md, Counters); nil
// without the tier.
func (n *Node) XDPCounters() []nicrt.Counter {
	if n.front == nil {
		return nil
	}
	return n.front.Counters()
}
