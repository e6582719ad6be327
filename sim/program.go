package sim

import (
	_ "embed"
	"encoding/binary"
	"fmt"
	"go/constant"
	"slices"

	"github.com/naam-project/naam/bytecode"
	"github.com/naam-project/naam/compiler"
	"github.com/naam-project/naam/lang"
	"github.com/naam-project/naam/nicrt"
	"github.com/naam-project/naam/verifier"
	"github.com/naam-project/naam/vm"
)

// Programs are the handler programs of the workloads, compiled by the
// caller with the parameters the simulator picks (examples/kv,
// examples/rpc and naam bench shift's program are where cmd/naam takes
// them from). The chase's program is the simulator's own (chain.naam).
type Programs struct {
	// KV compiles examples/kv's kv.naam with BUCKETS, PROBES and VALUE.
	KV func(buckets, probes, value uint32) (*bytecode.Object, error)
	// Ledger compiles examples/rpc's ledger.naam with ACCOUNTS and
	// HISTORY.
	Ledger func(accounts, history uint32) (*bytecode.Object, error)
	// Shift is naam bench shift's program: add(x) -> u64 over region
	// counter.
	Shift *bytecode.Object
}

//go:embed chain.naam
var chainSource []byte

// compileChain compiles chain.naam with LISTS = lists.
func compileChain(lists int) (*bytecode.Object, error) {
	conf := lang.Config{Constants: map[string]constant.Value{"LISTS": constant.MakeUint64(uint64(lists))}}
	obj, err := compiler.CompileWith(conf, lang.NewFileSet(), "chain.naam", chainSource)
	if err != nil {
		return nil, fmt.Errorf("sim: chain.naam: %w", err)
	}
	return obj, nil
}

// program is one object, verified and loaded once, shared by every node.
type program struct {
	code     *vm.Program
	report   *verifier.Report
	regions  []bytecode.Region
	nicmem   []bool
	handlers []handler // by object id order (the object's order)
	digest   uint64
}

// handler is what placement and the cost model need of one entry.
type handler struct {
	name      string
	objectID  uint32
	entry     int
	report    *verifier.EntryReport
	fixed     nicrt.Placement
	touches   [2]float64 // NIC core, host core
	bound     [2]float64 // the service estimate before a run
	replySize int
	args      []bytecode.Field
	results   []bytecode.Field
	argSize   int
}

// load verifies obj as Install does (the host budget, the object's
// regions) and loads its code once.
func load(obj *bytecode.Object, model nicrt.CostModel, nicmem bool) (*program, error) {
	if err := obj.Validate(); err != nil {
		return nil, fmt.Errorf("sim: %s: %w", obj.Source, err)
	}
	insns, err := obj.Insns()
	if err != nil {
		return nil, fmt.Errorf("sim: %s: %w", obj.Source, err)
	}
	cfg := model.Config()
	rep, err := verifier.Verify(insns, verifier.ObjectConfig(obj, verifier.Config{Budget: cfg.HostBudget}))
	if err != nil {
		return nil, fmt.Errorf("sim: %s: %w", obj.Source, err)
	}
	code, err := vm.Load(insns)
	if err != nil {
		return nil, fmt.Errorf("sim: %s: %w", obj.Source, err)
	}
	digest, err := nicrt.ProgramDigest(obj)
	if err != nil {
		return nil, err
	}
	p := &program{code: code, report: rep, regions: obj.Regions, nicmem: make([]bool, len(obj.Regions)), digest: digest}
	for i := range p.nicmem {
		p.nicmem[i] = nicmem
	}
	for i, oh := range obj.Handlers {
		e := &rep.Entries[i]
		h := handler{name: oh.Name, objectID: oh.ID, entry: oh.Entry, report: e, fixed: model.FixedPlacement(e),
			replySize: cfg.MaxReply, args: oh.Args, results: oh.Results}
		if h.fixed != nicrt.PlaceNIC && cfg.HostCores < 0 {
			return nil, fmt.Errorf("sim: %s: handler %q needs a host core (%s) and nic.host_cores is -1", obj.Source, oh.Name, h.fixed)
		}
		if len(oh.Results) > 0 {
			extent := uint64(0)
			for _, f := range oh.Results {
				extent = max(extent, uint64(f.Offset)+uint64(f.Size))
			}
			h.replySize = int(extent+7) &^ 7
		}
		for _, f := range oh.Args {
			h.argSize = max(h.argSize, int(f.Offset+f.Size))
		}
		for c := range 2 {
			host := c == 1
			h.touches[c] = model.Touches(e, p.nicmem, host)
			h.bound[c] = model.Bound(e, p.nicmem, h.replySize, host)
		}
		p.handlers = append(p.handlers, h)
	}
	return p, nil
}

// handlerIndex finds a handler by name.
func (p *program) handlerIndex(name string) (int, error) {
	i := slices.IndexFunc(p.handlers, func(h handler) bool { return h.name == name })
	if i < 0 {
		return 0, fmt.Errorf("sim: the program has no handler %q", name)
	}
	return i, nil
}

// byObjectID finds the handler a send or forward names.
func (p *program) byObjectID(id uint32) (int, bool) {
	for i := range p.handlers {
		if p.handlers[i].objectID == id {
			return i, true
		}
	}
	return 0, false
}

// args encodes a request of h: the values of its fields in order, each
// little-endian in its size (an array field takes the bytes of raw, in
// order, or zeros).
type argWriter struct {
	h   *handler
	buf []byte
}

func (p *program) request(h int, dst []byte) argWriter {
	hd := &p.handlers[h]
	dst = slices.Grow(dst[:0], hd.argSize)[:hd.argSize]
	clear(dst)
	return argWriter{h: hd, buf: dst}
}

// u sets scalar field i.
func (a argWriter) u(i int, v uint64) argWriter {
	f := a.h.args[i]
	b := a.buf[f.Offset : f.Offset+f.Size]
	switch f.Size {
	case 1:
		b[0] = byte(v)
	case 2:
		binary.LittleEndian.PutUint16(b, uint16(v))
	case 4:
		binary.LittleEndian.PutUint32(b, uint32(v))
	default:
		binary.LittleEndian.PutUint64(b, v)
	}
	return a
}

// bytes fills array field i from raw.
func (a argWriter) bytes(i int, raw []byte) argWriter {
	f := a.h.args[i]
	copy(a.buf[f.Offset:f.Offset+f.Size], raw)
	return a
}

// resultField is the offset and size of h's result field name.
func (h *handler) resultField(name string) (off, size int, err error) {
	for _, f := range h.results {
		if f.Name == name {
			return int(f.Offset), int(f.Size), nil
		}
	}
	return 0, 0, fmt.Errorf("sim: handler %q has no result %q", h.name, name)
}
