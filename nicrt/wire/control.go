package wire

import (
	"bytes"
	"fmt"
	"reflect"
	"strings"

	"github.com/vmihailenco/msgpack/v5"

	"github.com/naam-project/naam/internal/msgpackshape"
)

// Op is a control operation: the Handler field of a TypeControl packet.
// The reply is a TypeReply (or TypeErrorReply) with the same RequestID
// whose payload is the op's reply body.
type Op uint32

// Control operations. Numbers are stable; new ops are appended.
const (
	OpInstall    Op = 1 // Install → InstallReply
	OpUninstall  Op = 2 // Uninstall → empty reply
	OpRegister   Op = 3 // Register → RegisterReply
	OpStats      Op = 4 // StatsRequest → StatsReply
	OpDescribe   Op = 5 // DescribeRequest → DescribeReply
	OpUnregister Op = 6 // Unregister → empty reply

	maxOp = OpUnregister
)

func (o Op) String() string {
	switch o {
	case OpInstall:
		return "install"
	case OpUninstall:
		return "uninstall"
	case OpRegister:
		return "register"
	case OpStats:
		return "stats"
	case OpDescribe:
		return "describe"
	case OpUnregister:
		return "unregister"
	}
	return fmt.Sprintf("Op(%d)", uint32(o))
}

// Limits of control bodies (spec/wire.md, Control plane).
const (
	// MaxInstallSize bounds an object upload, so that a node knows the
	// most it buffers for one.
	MaxInstallSize = 16 << 20
	// MaxRegionSize is the largest region (bytecode.MaxRegionSize).
	MaxRegionSize = 1<<32 - 1
)

// Control is a control-plane body: *Install, *InstallReply, *Uninstall,
// *Register, *RegisterReply, *StatsRequest, *StatsReply, *DescribeRequest,
// *DescribeReply or *Unregister.
type Control interface {
	// Op is the operation the body belongs to (as request or reply).
	Op() Op
	validate() error
	emptyLists() Control // a copy in which nil lists are empty, to encode
	normalize()          // empty lists to nil, after decoding
}

// Install uploads an object file (.nobj, spec/object.md) to the tenant of
// the packet, in one chunk or several: Data is bytes Offset … Offset+len
// of a file of Total bytes. The node installs the object when it holds
// all Total bytes of Upload, and answers every chunk.
type Install struct {
	Upload uint64 `msgpack:"upload"` // chosen by the sender; names the upload among its others
	Total  uint64 `msgpack:"total"`  // file size, 1 … MaxInstallSize
	Offset uint64 `msgpack:"offset"` // where Data goes
	Data   []byte `msgpack:"data"`   // non-empty; Offset+len(Data) ≤ Total
	// Regions binds object regions to registered regions of other names,
	// sorted by Object, at most MaxRegionBindings; only the chunk at
	// Offset 0 carries them. Absent from the encoding when empty, so an
	// install without bindings is the bytes it always was.
	Regions []RegionBinding `msgpack:"regions,omitempty"`
}

// RegionBinding links the object's region Object to the tenant's
// registered region Region.
type RegionBinding struct {
	Object string `msgpack:"object"` // a region of the object; not empty
	Region string `msgpack:"region"` // a registered region's name; not empty
}

// MaxRegionBindings bounds Install.Regions: an object has at most that
// many regions (bytecode.MaxRegions).
const MaxRegionBindings = 248

// InstallReply answers an Install chunk. Until the upload is complete
// Program is 0 and Handlers empty.
type InstallReply struct {
	Received uint64             `msgpack:"received"` // bytes of the upload the node holds
	Program  uint64             `msgpack:"program"`  // id of the installed program, for Uninstall
	Handlers []InstalledHandler `msgpack:"handlers"` // the object's handlers and the ids requests use
}

// InstalledHandler is one handler of an installed program.
type InstalledHandler struct {
	Name string `msgpack:"name"`
	ID   uint32 `msgpack:"id"` // the Handler field of requests
}

// Uninstall removes a program of the packet's tenant once its in-flight
// requests are done. The reply has an empty payload.
type Uninstall struct {
	Program uint64 `msgpack:"program"` // from InstallReply.Program
}

// Placement says where a region's memory lives.
type Placement string

// Placements.
const (
	PlacementHost   Placement = "host"   // host memory: NIC access is a DMA over PCIe
	PlacementNICMem Placement = "nicmem" // the NIC's own memory
)

// Register asks the node to register a region for the packet's tenant.
type Register struct {
	Name      string    `msgpack:"name"`      // the name objects' region tables use; non-empty
	Size      uint64    `msgpack:"size"`      // bytes, 1 … MaxRegionSize
	Writable  bool      `msgpack:"writable"`  // stores and atomics allowed
	Placement Placement `msgpack:"placement"` // host or nicmem
}

// RegisterReply answers Register.
type RegisterReply struct {
	Region uint32 `msgpack:"region"` // the node's id for the region
	Key    uint64 `msgpack:"key"`    // the region's random key, which built-in verbs present
}

// Unregister removes a region of the packet's tenant, as the node's host
// would (refused while an installed program links it). The reply has an
// empty payload.
type Unregister struct {
	// Region is the node's id for it (RegisterReply.Region,
	// RegionDesc.Region): 1 … 2^32-1. A uint64, so that a larger value is
	// refused rather than cut to 32 bits by the decoder.
	Region uint64 `msgpack:"region"`
}

// StatsRequest asks for the node's counters, as many as fit one reply:
// After is "" for the first page and the last name received after that.
type StatsRequest struct {
	Prefix string `msgpack:"prefix"`          // only counters whose names start with it; empty: all
	After  string `msgpack:"after,omitempty"` // only counters whose names sort after it; absent when empty
}

// StatsReply carries counters, sorted by name. More says that others
// follow the last one (ask again with After set to its name); absent when
// false, so that a reply that holds everything is the bytes it always was.
type StatsReply struct {
	Counters []Counter `msgpack:"counters"`
	More     bool      `msgpack:"more,omitempty"`
}

// Counter is one named counter.
type Counter struct {
	Name  string `msgpack:"name"`
	Value uint64 `msgpack:"value"`
}

// DescribeRequest asks what the packet's tenant has on the node: its
// programs with their handlers' ids and layouts, and its regions with their
// keys. A description may take several packets: Cursor is 0 for the first
// and the previous reply's Next after that.
//
// It is the one op a caller may send before it knows the node's id: the
// responder accepts it with dst 0 (spec/wire.md, Control plane).
type DescribeRequest struct {
	Cursor uint64 `msgpack:"cursor"` // where this page starts: 0, or a reply's Next
}

// DescribeReply is one page of a description: programs in id order, then
// regions in id order, as many as fit a packet.
type DescribeReply struct {
	Node     uint32        `msgpack:"node"`     // the responder's node id
	Programs []ProgramDesc `msgpack:"programs"` // installed programs of the tenant
	Regions  []RegionDesc  `msgpack:"regions"`  // registered regions of the tenant
	Next     uint64        `msgpack:"next"`     // the cursor of the next page; 0: this is the last
}

// ProgramDesc describes one installed program.
type ProgramDesc struct {
	Program  uint64        `msgpack:"program"` // id, for Uninstall
	Source   string        `msgpack:"source"`  // the object's source file name
	Handlers []HandlerDesc `msgpack:"handlers"`
	// Digest is the program's digest (nicrt.ProgramDigest: of the object
	// file), so that a caller holding an object knows it is the one
	// installed; absent when 0.
	Digest uint64 `msgpack:"digest,omitempty"`
}

// HandlerDesc is one handler with the layouts callers encode and decode
// with (spec/object.md, Handlers).
type HandlerDesc struct {
	Name    string  `msgpack:"name"`
	ID      uint32  `msgpack:"id"` // the Handler field of requests
	Args    []Field `msgpack:"args"`
	Results []Field `msgpack:"results"`
	// Client says the node's verifier found the handler client-eligible
	// (spec/client.md): a caller may run it itself, over one-sided verbs.
	// Absent when false.
	Client bool `msgpack:"client,omitempty"`
	// MaxInsns is a verified bound of the handler's run and of its
	// access function's (the object's), the budget of a run at the
	// client; absent when 0.
	MaxInsns uint64 `msgpack:"max_insns,omitempty"`
}

// Field is one field of a request payload or a reply, as in the object.
type Field struct {
	Name   string `msgpack:"name"`
	Type   string `msgpack:"type"`
	Offset uint32 `msgpack:"offset"`
	Size   uint32 `msgpack:"size"`
}

// RegionDesc describes one registered region.
type RegionDesc struct {
	Name      string    `msgpack:"name"`
	Region    uint32    `msgpack:"region"` // the node's id, which built-in verbs name
	Key       uint64    `msgpack:"key"`    // the key built-in verbs present
	Size      uint64    `msgpack:"size"`
	Writable  bool      `msgpack:"writable"`
	Placement Placement `msgpack:"placement"`
}

func (*Install) Op() Op         { return OpInstall }
func (*InstallReply) Op() Op    { return OpInstall }
func (*Uninstall) Op() Op       { return OpUninstall }
func (*Register) Op() Op        { return OpRegister }
func (*RegisterReply) Op() Op   { return OpRegister }
func (*StatsRequest) Op() Op    { return OpStats }
func (*StatsReply) Op() Op      { return OpStats }
func (*DescribeRequest) Op() Op { return OpDescribe }
func (*DescribeReply) Op() Op   { return OpDescribe }
func (*Unregister) Op() Op      { return OpUnregister }

// AppendControl validates m and appends its msgpack encoding to dst. The
// bytes depend only on m's contents: a map with the tag names as keys in
// declaration order, every key present, integers in their shortest form,
// nil and empty lists both written as empty arrays.
func AppendControl(dst []byte, m Control) ([]byte, error) {
	if err := m.validate(); err != nil {
		return dst, err
	}
	buf := bytes.NewBuffer(dst)
	enc := msgpack.NewEncoder(buf)
	enc.UseCompactInts(true)
	if err := enc.Encode(m.emptyLists()); err != nil {
		return dst, &Error{Field: m.Op().String(), Msg: "encoding: " + err.Error(), Err: ErrControl}
	}
	return buf.Bytes(), nil
}

// UnmarshalControl decodes b into m (whose previous contents it clears)
// and validates it. Keys may come in any
// order and integers in any form; an unknown key, a second value after the
// body, or a length prefix claiming more than b holds is an error. It
// never panics; every error is an *Error wrapping ErrControl.
func UnmarshalControl(b []byte, m Control) error {
	if err := msgpackshape.Check(b, maxControlDepth, "body"); err != nil {
		return &Error{Field: m.Op().String(), Msg: "malformed msgpack: " + err.Error(), Err: ErrControl}
	}
	if err := msgpackshape.CheckInts(b, m, m.Op().String()); err != nil {
		return &Error{Field: m.Op().String(), Msg: "malformed msgpack: " + err.Error(), Err: ErrControl}
	}
	reflect.ValueOf(m).Elem().SetZero()
	dec := msgpack.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields(true)
	if err := dec.Decode(m); err != nil {
		return &Error{Field: m.Op().String(), Msg: "malformed msgpack: " + err.Error(), Err: ErrControl}
	}
	m.normalize()
	return m.validate()
}

// ParseControl decodes the body of a TypeControl packet whose Handler is
// op: *Install, *Uninstall, *Register, *StatsRequest, *DescribeRequest or
// *Unregister. An unknown op is an
// *Error for field "op"; the runtime answers it with an error reply.
func ParseControl(op Op, b []byte) (Control, error) {
	var m Control
	switch op {
	case OpInstall:
		m = new(Install)
	case OpUninstall:
		m = new(Uninstall)
	case OpRegister:
		m = new(Register)
	case OpStats:
		m = new(StatsRequest)
	case OpDescribe:
		m = new(DescribeRequest)
	case OpUnregister:
		m = new(Unregister)
	default:
		return nil, errorf("op", ErrControl, "%d is not a control op", uint32(op))
	}
	if err := UnmarshalControl(b, m); err != nil {
		return nil, err
	}
	return m, nil
}

func controlErrorf(field, format string, args ...any) *Error {
	return errorf(field, ErrControl, format, args...)
}

func (m *Install) validate() error {
	switch {
	case m.Total == 0 || m.Total > MaxInstallSize:
		return controlErrorf("install.total", "%d is outside 1…%d", m.Total, MaxInstallSize)
	case len(m.Data) == 0:
		return controlErrorf("install.data", "empty")
	case m.Offset > m.Total || uint64(len(m.Data)) > m.Total-m.Offset:
		return controlErrorf("install.offset", "bytes %d…%d do not fit a file of %d", m.Offset, m.Offset+uint64(len(m.Data)), m.Total)
	case len(m.Regions) > 0 && m.Offset != 0:
		return controlErrorf("install.regions", "bindings in the chunk at %d; only the chunk at 0 carries them", m.Offset)
	case len(m.Regions) > MaxRegionBindings:
		return controlErrorf("install.regions", "%d bindings, at most %d", len(m.Regions), MaxRegionBindings)
	}
	for i, b := range m.Regions {
		field := fmt.Sprintf("install.regions[%d]", i)
		switch {
		case b.Object == "":
			return controlErrorf(field+".object", "empty")
		case b.Region == "":
			return controlErrorf(field+".region", "empty")
		case i > 0 && strings.Compare(m.Regions[i-1].Object, b.Object) >= 0:
			return controlErrorf(field+".object", "%q does not follow %q (objects are sorted and unique)", b.Object, m.Regions[i-1].Object)
		}
	}
	return nil
}

func (m *InstallReply) validate() error {
	if m.Received > MaxInstallSize {
		return controlErrorf("install.received", "%d is over %d", m.Received, MaxInstallSize)
	}
	if m.Program == 0 && len(m.Handlers) > 0 {
		return controlErrorf("install.handlers", "%d handlers but no program", len(m.Handlers))
	}
	names := make(map[string]int, len(m.Handlers))
	ids := make(map[uint32]int, len(m.Handlers))
	for i, h := range m.Handlers {
		field := fmt.Sprintf("install.handlers[%d]", i)
		if h.Name == "" {
			return controlErrorf(field+".name", "empty")
		}
		if j, dup := names[h.Name]; dup {
			return controlErrorf(field+".name", "%q listed twice (first at handlers[%d])", h.Name, j)
		}
		if j, dup := ids[h.ID]; dup {
			return controlErrorf(field+".id", "%d listed twice (first at handlers[%d])", h.ID, j)
		}
		names[h.Name], ids[h.ID] = i, i
	}
	return nil
}

func (m *Uninstall) validate() error {
	if m.Program == 0 {
		return controlErrorf("uninstall.program", "0 names no program")
	}
	return nil
}

func (m *Register) validate() error {
	switch {
	case m.Name == "":
		return controlErrorf("register.name", "empty")
	case m.Size == 0 || m.Size > MaxRegionSize:
		return controlErrorf("register.size", "%d is outside 1…%d", m.Size, uint64(MaxRegionSize))
	case m.Placement != PlacementHost && m.Placement != PlacementNICMem:
		return controlErrorf("register.placement", "%q is not %q or %q", m.Placement, PlacementHost, PlacementNICMem)
	}
	return nil
}

func (m *RegisterReply) validate() error { return nil }

func (m *Unregister) validate() error {
	switch {
	case m.Region == 0:
		return controlErrorf("unregister.region", "0 names no region")
	case m.Region > 1<<32-1:
		return controlErrorf("unregister.region", "%d is over 2^32-1: region ids are 32 bits", m.Region)
	}
	return nil
}
func (m *StatsRequest) validate() error { return nil }

func (m *StatsReply) validate() error {
	if m.More && len(m.Counters) == 0 {
		return controlErrorf("stats.more", "more counters follow, but the page holds none")
	}
	for i, c := range m.Counters {
		field := fmt.Sprintf("stats.counters[%d].name", i)
		if c.Name == "" {
			return controlErrorf(field, "empty")
		}
		if i > 0 && strings.Compare(m.Counters[i-1].Name, c.Name) >= 0 {
			return controlErrorf(field, "%q does not follow %q (names are sorted and unique)", c.Name, m.Counters[i-1].Name)
		}
	}
	return nil
}

func (m *DescribeRequest) validate() error { return nil }

func (m *DescribeReply) validate() error {
	prev := uint64(0)
	for i, p := range m.Programs {
		field := fmt.Sprintf("describe.programs[%d]", i)
		if p.Program <= prev {
			return controlErrorf(field+".program", "%d does not follow %d (ids are increasing and not 0)", p.Program, prev)
		}
		prev = p.Program
		names := make(map[string]int, len(p.Handlers))
		for j, h := range p.Handlers {
			hf := fmt.Sprintf("%s.handlers[%d]", field, j)
			if h.Name == "" {
				return controlErrorf(hf+".name", "empty")
			}
			if k, dup := names[h.Name]; dup {
				return controlErrorf(hf+".name", "%q listed twice (first at handlers[%d])", h.Name, k)
			}
			names[h.Name] = j
			if err := validFields(hf+".args", h.Args); err != nil {
				return err
			}
			if err := validFields(hf+".results", h.Results); err != nil {
				return err
			}
			if h.Client && h.MaxInsns == 0 {
				return controlErrorf(hf+".max_insns", "0 for a client-eligible handler (a run at the client needs the bound)")
			}
		}
	}
	prevRegion := uint32(0)
	for i, r := range m.Regions {
		field := fmt.Sprintf("describe.regions[%d]", i)
		switch {
		case r.Name == "":
			return controlErrorf(field+".name", "empty")
		case r.Region <= prevRegion:
			return controlErrorf(field+".region", "%d does not follow %d (ids are increasing and not 0)", r.Region, prevRegion)
		case r.Size == 0 || r.Size > MaxRegionSize:
			return controlErrorf(field+".size", "%d is outside 1…%d", r.Size, uint64(MaxRegionSize))
		case r.Placement != PlacementHost && r.Placement != PlacementNICMem:
			return controlErrorf(field+".placement", "%q is not %q or %q", r.Placement, PlacementHost, PlacementNICMem)
		}
		prevRegion = r.Region
	}
	return nil
}

// validFields checks a layout: named fields with sizes that end inside a
// 32-bit payload.
func validFields(field string, fs []Field) error {
	for i, f := range fs {
		ff := fmt.Sprintf("%s[%d]", field, i)
		switch {
		case f.Name == "":
			return controlErrorf(ff+".name", "empty")
		case f.Type == "":
			return controlErrorf(ff+".type", "empty")
		case f.Size == 0:
			return controlErrorf(ff+".size", "0")
		case uint64(f.Offset)+uint64(f.Size) > 1<<32-1:
			return controlErrorf(ff+".offset", "%d + %d bytes overflows", f.Offset, f.Size)
		}
	}
	return nil
}

func (m *Install) emptyLists() Control       { return m } // Data is never empty when valid
func (m *Uninstall) emptyLists() Control     { return m }
func (m *Register) emptyLists() Control      { return m }
func (m *RegisterReply) emptyLists() Control { return m }
func (m *StatsRequest) emptyLists() Control  { return m }
func (m *Unregister) emptyLists() Control    { return m }

func (m *InstallReply) emptyLists() Control {
	c := *m
	c.Handlers = msgpackshape.OrEmpty(c.Handlers)
	return &c
}

func (m *StatsReply) emptyLists() Control {
	return &StatsReply{Counters: msgpackshape.OrEmpty(m.Counters), More: m.More}
}

func (m *DescribeRequest) emptyLists() Control { return m }

func (m *DescribeReply) emptyLists() Control {
	c := *m
	c.Programs = make([]ProgramDesc, len(m.Programs))
	for i, p := range m.Programs {
		p.Handlers = append([]HandlerDesc{}, p.Handlers...)
		for j := range p.Handlers {
			p.Handlers[j].Args = msgpackshape.OrEmpty(p.Handlers[j].Args)
			p.Handlers[j].Results = msgpackshape.OrEmpty(p.Handlers[j].Results)
		}
		c.Programs[i] = p
	}
	c.Regions = msgpackshape.OrEmpty(c.Regions)
	return &c
}

func (m *DescribeRequest) normalize() {}

func (m *DescribeReply) normalize() {
	m.Programs = msgpackshape.OrNil(m.Programs)
	m.Regions = msgpackshape.OrNil(m.Regions)
	for i := range m.Programs {
		p := &m.Programs[i]
		p.Handlers = msgpackshape.OrNil(p.Handlers)
		for j := range p.Handlers {
			p.Handlers[j].Args = msgpackshape.OrNil(p.Handlers[j].Args)
			p.Handlers[j].Results = msgpackshape.OrNil(p.Handlers[j].Results)
		}
	}
}

func (m *Install) normalize()       { m.Regions = msgpackshape.OrNil(m.Regions) }
func (m *Uninstall) normalize()     {}
func (m *Register) normalize()      {}
func (m *RegisterReply) normalize() {}
func (m *Unregister) normalize()    {}
func (m *StatsRequest) normalize()  {}
func (m *InstallReply) normalize()  { m.Handlers = msgpackshape.OrNil(m.Handlers) }
func (m *StatsReply) normalize()    { m.Counters = msgpackshape.OrNil(m.Counters) }

// maxControlDepth bounds the nesting of a control body: the deepest the
// format has is a describe reply's body → programs → program → handlers →
// handler → args → field → value, 8 levels.
const maxControlDepth = 10
