package xdp

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"sort"
	"sync"
	"time"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"

	"github.com/naam-project/naam/bytecode"
	"github.com/naam-project/naam/nicrt/wire"
	"github.com/naam-project/naam/verifier"
)

// Tier is the XDP tier of one node: the dispatcher, the handler and verb
// programs, and the maps they share with the host process (spec/xdp.md).
// A node creates it with New, gives it its SipHash tenants (SetKey), its
// XDP regions (AddRegion) and the handlers it places on the NIC
// (Install), and attaches it to an interface (Attach). Everything the
// tier does not answer passes up to the node's socket with XDP_PASS.
//
// A Tier is safe for concurrent use; packets flow while it changes.
type Tier struct {
	cfg   Config
	l     layout
	maps  map[string]*ebpf.Map
	peers *PeerTable
	mem   []byte // the peer table's mapping

	mu        sync.Mutex
	credits   uint16
	clockBase uint64
	disp      *ebpf.Program
	link      io.Closer
	progs     []*ebpf.Program // by naam_progs index; nil: free
	handlers  map[uint32]*served
	regions   map[uint32]verbRegion
	regionMem map[uint32]*Region
	verbsOn   bool
	refusals  int
	closed    bool
}

// served is an installed handler.
type served struct {
	tenant uint32
	prog   int // index in naam_progs
}

// The first naam_progs indices hold the verb programs.
const firstHandlerProg = verbFetchAdd + 1

// Errors.
var (
	// ErrNotSipHash: SetKey was given a key of another algorithm; that
	// tenant's packets pass up to the node.
	ErrNotSipHash = errors.New("xdp: the XDP tier opens and seals only SipHash-2-4-128 tenants")
	// ErrClosed: the tier was closed.
	ErrClosed = errors.New("xdp: tier closed")
	// ErrNotServed matches every *NotServed.
	ErrNotServed = errors.New("xdp: handler not served in XDP")
)

// New creates the tier's maps and loads its dispatcher. It needs what
// loading BPF programs needs (root, or CAP_BPF and CAP_NET_ADMIN); the
// error says what failed.
func New(cfg Config) (*Tier, error) {
	c, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	t := &Tier{cfg: c, l: newLayout(c), maps: map[string]*ebpf.Map{}, handlers: map[uint32]*served{},
		regions: map[uint32]verbRegion{}, regionMem: map[uint32]*Region{}}
	t.progs = make([]*ebpf.Program, firstHandlerProg+c.MaxHandlers)
	specs := []*ebpf.MapSpec{
		{Name: mapScratch, Type: ebpf.PerCPUArray, KeySize: 4, ValueSize: uint32(t.l.scrSize), MaxEntries: 1},
		{Name: mapPeers, Type: ebpf.Array, KeySize: 4, ValueSize: uint32(t.l.peerSize), MaxEntries: uint32(c.MaxPeers), Flags: bpfFMmapable},
		{Name: mapKeys, Type: ebpf.Hash, KeySize: 4, ValueSize: 16, MaxEntries: uint32(c.MaxTenants)},
		{Name: mapHandlers, Type: ebpf.Hash, KeySize: 4, ValueSize: hentSize, MaxEntries: uint32(len(t.progs))},
		{Name: mapRegions, Type: ebpf.Hash, KeySize: 4, ValueSize: 4, MaxEntries: uint32(c.MaxRegions)},
		{Name: mapProgs, Type: ebpf.ProgramArray, KeySize: 4, ValueSize: 4, MaxEntries: uint32(len(t.progs))},
		{Name: mapConfig, Type: ebpf.Array, KeySize: 4, ValueSize: cfgSize, MaxEntries: 1},
	}
	for _, s := range specs {
		m, err := ebpf.NewMap(s)
		if err != nil {
			t.Close()
			return nil, fmt.Errorf("xdp: create map %s: %w", s.Name, err)
		}
		t.maps[s.Name] = m
	}
	page := pageSize()
	size := (c.MaxPeers*t.l.peerSize + page - 1) / page * page
	if t.mem, err = mmapShared(t.maps[mapPeers].FD(), size); err != nil {
		t.Close()
		return nil, fmt.Errorf("xdp: map the peer table: %w", err)
	}
	if t.peers, err = newPeerTable(t.mem, t.l); err != nil {
		t.Close()
		return nil, err
	}
	t.credits, t.clockBase = c.Credits, monotonicNanos()
	if err := t.writeConfig(); err != nil {
		t.Close()
		return nil, err
	}
	insns, err := dispatcher(t.l, c)
	if err != nil {
		t.Close()
		return nil, err
	}
	if t.disp, err = loadProgram("naam_xdp", insns, t.maps); err != nil {
		t.Close()
		return nil, err
	}
	return t, nil
}

func (t *Tier) writeConfig() error {
	v := make([]byte, cfgSize)
	binary.LittleEndian.PutUint32(v[cfgCredits:], uint32(t.credits))
	binary.LittleEndian.PutUint64(v[cfgClockBase:], t.clockBase)
	if err := t.maps[mapConfig].Update(uint32(0), v, ebpf.UpdateAny); err != nil {
		return fmt.Errorf("xdp: write the configuration: %w", err)
	}
	return nil
}

// Config returns the tier's configuration, defaults filled in.
func (t *Tier) Config() Config { return t.cfg }

// Peers returns the peer table the tier shares with the host process:
// the node's own network side claims and completes ids in it so that both
// paths keep one window and one reply cache per (tenant, src).
func (t *Tier) Peers() *PeerTable { return t.peers }

// SetCredits sets the grant the tier's replies carry (spec/nic.md,
// Credits).
func (t *Tier) SetCredits(n uint16) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.credits = n
	return t.writeConfig()
}

// SetClock makes now() in XDP handlers read as the node's clock: the
// node's start on CLOCK_MONOTONIC (the clock of bpf_ktime_get_ns).
func (t *Tier) SetClock(start time.Duration) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.clockBase = uint64(start)
	return t.writeConfig()
}

// MonotonicNow is CLOCK_MONOTONIC now, the clock SetClock takes.
func MonotonicNow() time.Duration { return time.Duration(monotonicNanos()) }

// SetKey gives the tier a tenant's key, so that the tenant's packets are
// opened and sealed here. Only SipHash-2-4-128 keys can be: for another
// it returns ErrNotSipHash, and the tenant's packets pass up. A nil key
// removes the tenant.
func (t *Tier) SetKey(tenant uint32, k *wire.Key) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed {
		return ErrClosed
	}
	m := t.maps[mapKeys]
	if k == nil {
		if err := m.Delete(tenant); err != nil && !errors.Is(err, ebpf.ErrKeyNotExist) {
			return fmt.Errorf("xdp: remove the key of tenant %d: %w", tenant, err)
		}
		return nil
	}
	k0, k1, ok := k.SipHashKey()
	if !ok {
		_ = m.Delete(tenant)
		return fmt.Errorf("%w: tenant %d has %v", ErrNotSipHash, tenant, k.Alg())
	}
	v := make([]byte, 16)
	binary.LittleEndian.PutUint64(v, k0)
	binary.LittleEndian.PutUint64(v[8:], k1)
	if err := m.Update(tenant, v, ebpf.UpdateAny); err != nil {
		return fmt.Errorf("xdp: set the key of tenant %d: %w", tenant, err)
	}
	return nil
}

// VerbRegion is a region the built-in verbs may name here: what nicrt
// knows of it (its node-wide id, tenant, key and rights).
type VerbRegion struct {
	ID       uint32
	Tenant   uint32
	Key      uint64
	Writable bool
}

// AddRegion lets the verbs reach r as the node's region v.ID. Verbs that
// name a region not added pass up. The verb programs are rebuilt.
func (t *Tier) AddRegion(v VerbRegion, r *Region) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed {
		return ErrClosed
	}
	if _, dup := t.regions[v.ID]; dup {
		return fmt.Errorf("xdp: region %d is already added", v.ID)
	}
	if len(t.regions) >= t.cfg.MaxRegions {
		return fmt.Errorf("xdp: %d regions, the most Config.MaxRegions allows", len(t.regions))
	}
	t.regions[v.ID] = verbRegion{id: v.ID, tenant: v.Tenant, key: v.Key, size: r.Size(), writable: v.Writable,
		mapName: fmt.Sprintf("naam_vregion%d", v.ID)}
	t.regionMem[v.ID] = r
	if t.verbsOn {
		if err := t.loadVerbs(); err != nil {
			delete(t.regions, v.ID)
			delete(t.regionMem, v.ID)
			return err
		}
	}
	if err := t.maps[mapRegions].Update(v.ID, uint32(1), ebpf.UpdateAny); err != nil {
		return fmt.Errorf("xdp: add region %d: %w", v.ID, err)
	}
	return nil
}

// RemoveRegion stops the verbs reaching region id here: from now on they
// pass up.
func (t *Tier) RemoveRegion(id uint32) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if _, ok := t.regions[id]; !ok {
		return fmt.Errorf("xdp: region %d is not added", id)
	}
	if err := t.maps[mapRegions].Delete(id); err != nil {
		return fmt.Errorf("xdp: remove region %d: %w", id, err)
	}
	delete(t.regions, id)
	delete(t.regionMem, id)
	if t.verbsOn {
		return t.loadVerbs()
	}
	return nil
}

// EnableVerbs answers READ, WRITE, CAS and FETCH-ADD here for the regions
// added (AddRegion).
func (t *Tier) EnableVerbs() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed {
		return ErrClosed
	}
	if t.verbsOn {
		return nil
	}
	if err := t.loadVerbs(); err != nil {
		return err
	}
	for v := uint32(verbRead); v <= verbFetchAdd; v++ {
		if err := t.putHandler(v, 0, int(v)-1, kindVerb); err != nil {
			return err
		}
	}
	t.verbsOn = true
	return nil
}

// loadVerbs builds and loads the four verb programs over the regions
// added, and puts them in naam_progs.
func (t *Tier) loadVerbs() error {
	ids := make([]uint32, 0, len(t.regions))
	for id := range t.regions {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	regions := make([]verbRegion, len(ids))
	maps := make(map[string]*ebpf.Map, len(t.maps)+len(ids))
	for k, m := range t.maps {
		maps[k] = m
	}
	for i, id := range ids {
		regions[i] = t.regions[id]
		maps[regions[i].mapName] = t.regionMem[id].m
	}
	for v := verbRead; v <= verbFetchAdd; v++ {
		insns, err := handlerProgram(t.l, t.cfg.Node, uint32(v), t.cfg.MaxReply, true, verbBody(v, regions, t.l), nil)
		if err != nil {
			return err
		}
		prog, err := loadProgram(fmt.Sprintf("naam_verb%d", v), insns, maps)
		if err != nil {
			return err
		}
		if err := t.setProg(v-1, prog); err != nil {
			prog.Close()
			return err
		}
	}
	return nil
}

// setProg puts prog at index i of naam_progs, replacing (and closing) the
// one there.
func (t *Tier) setProg(i int, prog *ebpf.Program) error {
	if err := t.maps[mapProgs].Update(uint32(i), uint32(prog.FD()), ebpf.UpdateAny); err != nil {
		return fmt.Errorf("xdp: put program %d: %w", i, err)
	}
	if old := t.progs[i]; old != nil {
		old.Close()
	}
	t.progs[i] = prog
	return nil
}

func (t *Tier) putHandler(id, tenant uint32, prog, kind int) error {
	v := make([]byte, hentSize)
	binary.LittleEndian.PutUint32(v[hentProg:], uint32(prog))
	binary.LittleEndian.PutUint32(v[hentTenant:], tenant)
	binary.LittleEndian.PutUint32(v[hentKind:], uint32(kind))
	if err := t.maps[mapHandlers].Update(id, v, ebpf.UpdateAny); err != nil {
		return fmt.Errorf("xdp: add handler %d: %w", id, err)
	}
	return nil
}

// HandlerSpec is a handler the node places on the NIC, as the node
// installed it.
type HandlerSpec struct {
	ID     uint32 // the node-wide handler id (wire.Header.Handler)
	Tenant uint32
	Object *bytecode.Object
	// Report is what the node's verifier proved of Object (verifier.
	// VerifyObject): only verified code runs here.
	Report  *verifier.Report
	Handler int // index in Object.Handlers
	// ReplySize is the handler's reply buffer (spec/nic.md, Install: the
	// extent of the declared results rounded up to 8, or MaxReply).
	ReplySize int
	// Regions gives, by object region index, the region linked there, in
	// XDP memory; nil: not here (the handler cannot be served).
	Regions []*Region
}

// NotServed says why a handler is not answered here; its requests pass
// up to the node.
type NotServed struct {
	ID     uint32
	Reason string
	// Refusal is the kernel verifier's, with its log, when the kernel
	// refused the translation.
	Refusal *KernelRefusal
}

func (n *NotServed) Error() string {
	return fmt.Sprintf("xdp: handler %d is served by the node: %s", n.ID, n.Reason)
}

func (n *NotServed) Is(target error) bool { return target == ErrNotServed }

// Install translates the handler, loads it through the kernel's verifier
// and answers its requests here from then on. A handler that cannot be
// served here is a *NotServed (errors.Is ErrNotServed) saying why; any
// other error is the tier's own.
func (t *Tier) Install(h HandlerSpec) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed {
		return ErrClosed
	}
	notServed := func(format string, args ...any) error {
		return &NotServed{ID: h.ID, Reason: fmt.Sprintf(format, args...)}
	}
	switch {
	case h.ID <= verbFetchAdd:
		return fmt.Errorf("xdp: handler id %d is a verb's", h.ID)
	case t.handlers[h.ID] != nil:
		return fmt.Errorf("xdp: handler %d is already installed", h.ID)
	case h.Object == nil || h.Handler < 0 || h.Handler >= len(h.Object.Handlers):
		return fmt.Errorf("xdp: handler %d: no handler %d in the object", h.ID, h.Handler)
	case h.Report == nil:
		return fmt.Errorf("xdp: handler %d: no verifier report (only verified code runs here)", h.ID)
	case h.ReplySize < 0 || h.ReplySize%8 != 0 || h.ReplySize > t.cfg.MaxReply:
		return fmt.Errorf("xdp: handler %d: reply buffer of %d bytes (a multiple of 8, at most %d)", h.ID, h.ReplySize, t.cfg.MaxReply)
	}
	oh := h.Object.Handlers[h.Handler]
	verified := false
	for _, e := range h.Report.Entries {
		verified = verified || e.Slot == oh.Entry && e.Name == oh.Name
	}
	if !verified {
		return fmt.Errorf("xdp: handler %d (%s): the report has no entry for it", h.ID, oh.Name)
	}
	if wire.HeaderSize+h.ReplySize > t.cfg.CacheBytes {
		return notServed("its reply buffer of %d bytes and the header do not fit a reply-cache slot of %d bytes (Config.CacheBytes)", h.ReplySize, t.cfg.CacheBytes)
	}
	insns, err := h.Object.Insns()
	if err != nil {
		return fmt.Errorf("xdp: handler %d: %w", h.ID, err)
	}
	tr, err := translate(insns, oh.Entry, "t")
	var u *untranslatable
	if errors.As(err, &u) {
		return notServed("%s", u.reason)
	}
	if err != nil {
		return err
	}
	maps := make(map[string]*ebpf.Map, len(t.maps)+len(tr.regions))
	for k, m := range t.maps {
		maps[k] = m
	}
	for _, idx := range tr.regions {
		if idx >= len(h.Object.Regions) {
			return fmt.Errorf("xdp: handler %d addresses region %d, which the object does not declare", h.ID, idx)
		}
		or := h.Object.Regions[idx]
		if idx >= len(h.Regions) || h.Regions[idx] == nil {
			return notServed("region %q is not in XDP memory", or.Name)
		}
		if h.Regions[idx].Size() < or.Size {
			return fmt.Errorf("xdp: handler %d: region %q has %d bytes, the object declares %d", h.ID, or.Name, h.Regions[idx].Size(), or.Size)
		}
		maps[regionMap(idx)] = h.Regions[idx].m
	}
	slot := -1
	for i := firstHandlerProg; i < len(t.progs); i++ {
		if t.progs[i] == nil {
			slot = i
			break
		}
	}
	if slot < 0 {
		return notServed("%d handlers are served here, the most Config.MaxHandlers allows", len(t.handlers))
	}
	prog, err := handlerProgram(t.l, t.cfg.Node, h.ID, h.ReplySize, false, callHandler(tr), handlerSubprograms(tr))
	if err != nil {
		return err
	}
	p, err := loadProgram(fmt.Sprintf("naam_h%d", h.ID), prog, maps)
	var kr *KernelRefusal
	if errors.As(err, &kr) {
		t.refusals++
		return &NotServed{ID: h.ID, Reason: "the kernel verifier refused it: " + kr.Reason, Refusal: kr}
	}
	if err != nil {
		return err
	}
	if err := t.setProg(slot, p); err != nil {
		p.Close()
		return err
	}
	if err := t.putHandler(h.ID, h.Tenant, slot, kindHandler); err != nil {
		return err
	}
	t.handlers[h.ID] = &served{tenant: h.Tenant, prog: slot}
	return nil
}

// Uninstall stops answering handler id here: its requests pass up from
// now on (one the dispatcher had already claimed gets unknown handler).
func (t *Tier) Uninstall(id uint32) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	s := t.handlers[id]
	if s == nil {
		return fmt.Errorf("xdp: handler %d is not installed", id)
	}
	if err := t.maps[mapHandlers].Delete(id); err != nil {
		return fmt.Errorf("xdp: remove handler %d: %w", id, err)
	}
	if err := t.maps[mapProgs].Delete(uint32(s.prog)); err != nil {
		return fmt.Errorf("xdp: remove handler %d's program: %w", id, err)
	}
	t.progs[s.prog].Close()
	t.progs[s.prog] = nil
	delete(t.handlers, id)
	return nil
}

// Served reports whether handler id is answered here.
func (t *Tier) Served(id uint32) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.handlers[id] != nil || t.verbsOn && id >= verbRead && id <= verbFetchAdd
}

// Attach attaches the dispatcher to the interface, in the driver's native
// mode (XDP_FLAGS_DRV_MODE) or, with generic, in the kernel's generic
// mode. One interface at a time.
func (t *Tier) Attach(ifindex int, generic bool) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed {
		return ErrClosed
	}
	if t.link != nil {
		return errors.New("xdp: already attached")
	}
	l, err := attachXDP(t.disp, ifindex, generic)
	if err != nil {
		return fmt.Errorf("xdp: attach to interface %d: %w", ifindex, err)
	}
	t.link = l
	return nil
}

// Detach detaches the dispatcher.
func (t *Tier) Detach() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.link == nil {
		return nil
	}
	err := t.link.Close()
	t.link = nil
	return err
}

// Run runs the dispatcher once on an Ethernet frame (BPF_PROG_TEST_RUN),
// with its tail calls, and returns the action and the frame as the
// program left it (the reply, for XDP_TX).
func (t *Tier) Run(frame []byte) (action int, out []byte, err error) {
	opts := &ebpf.RunOptions{Data: frame, DataOut: make([]byte, len(frame)+2*t.l.scrSize), Repeat: 1}
	ret, err := t.disp.Run(opts)
	if err != nil {
		return 0, nil, fmt.Errorf("xdp: test run: %w", err)
	}
	// cilium/ebpf trims opts.DataOut to what the kernel wrote.
	return int(ret), opts.DataOut, nil
}

// Counter is one of the tier's counters (spec/xdp.md, Counters).
type Counter struct {
	Name  string
	Value uint64
}

// Counters returns the tier's counters, summed over the CPUs, sorted by
// name, each prefixed "xdp.": the dispatcher's by reason, and
// kernel_refusals (handlers the kernel verifier refused at install).
func (t *Tier) Counters() ([]Counter, error) {
	var per [][]byte
	if err := t.maps[mapScratch].Lookup(uint32(0), &per); err != nil {
		return nil, fmt.Errorf("xdp: read the counters: %w", err)
	}
	out := make([]Counter, 0, numCounters+2)
	for c := counter(0); c < numCounters; c++ {
		var sum uint64
		for _, v := range per {
			sum += binary.LittleEndian.Uint64(v[scrCounters+8*int(c):])
		}
		out = append(out, Counter{"xdp." + counterNames[c], sum})
	}
	t.mu.Lock()
	out = append(out, Counter{"xdp.kernel_refusals", uint64(t.refusals)}, Counter{"xdp.handlers", uint64(len(t.handlers))})
	t.mu.Unlock()
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// Close detaches the tier and releases its programs and maps. Regions
// stay the caller's.
func (t *Tier) Close() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed {
		return nil
	}
	t.closed = true
	var errs []error
	if t.link != nil {
		errs = append(errs, t.link.Close())
	}
	for _, p := range t.progs {
		if p != nil {
			errs = append(errs, p.Close())
		}
	}
	if t.disp != nil {
		errs = append(errs, t.disp.Close())
	}
	if t.mem != nil {
		errs = append(errs, munmap(t.mem))
	}
	for _, m := range t.maps {
		errs = append(errs, m.Close())
	}
	return errors.Join(errs...)
}

// Probe says in one line why this process cannot run the tier here (not
// root, no BPF, a kernel without the helpers the tier needs), or returns
// nil. It loads and runs a small XDP program that uses them.
func Probe() error {
	m, err := ebpf.NewMap(&ebpf.MapSpec{Type: ebpf.Array, KeySize: 4, ValueSize: 64, MaxEntries: 1, Flags: bpfFMmapable})
	if err != nil {
		return fmt.Errorf("xdp: cannot create a shared BPF map (needs root, or CAP_BPF): %w", err)
	}
	defer m.Close()
	insns := []asm.Instruction{
		asm.Mov.Reg(asm.R6, asm.R1),
		asm.Mov.Reg(asm.R1, asm.R6),
		asm.Mov.Imm(asm.R2, 0),
		mapValue(asm.R3, "probe", 0),
		asm.Mov.Imm(asm.R4, 14),
		asm.FnXdpLoadBytes.Call(),
		asm.Mov.Reg(asm.R1, asm.R6),
		asm.Mov.Imm(asm.R2, 0),
		asm.FnXdpAdjustTail.Call(),
		asm.Mov.Imm(asm.R0, xdpPass),
		asm.Return(),
	}
	prog, err := loadProgram("naam_probe", insns, map[string]*ebpf.Map{"probe": m})
	if err != nil {
		return fmt.Errorf("xdp: cannot load an XDP program with the helpers the tier needs: %w", err)
	}
	defer prog.Close()
	if _, err := prog.Run(&ebpf.RunOptions{Data: make([]byte, 64)}); err != nil {
		return fmt.Errorf("xdp: cannot test-run an XDP program: %w", err)
	}
	return nil
}

// ReplySize is the reply buffer of handler h on a node whose MaxReply is
// maxReply (spec/nic.md, Install): the extent of its declared results
// rounded up to 8, or maxReply when it declares none.
func ReplySize(h bytecode.Handler, maxReply int) int {
	if len(h.Results) == 0 {
		return maxReply
	}
	var extent uint64
	for _, f := range h.Results {
		extent = max(extent, uint64(f.Offset)+uint64(f.Size))
	}
	return int(extent+7) &^ 7
}
