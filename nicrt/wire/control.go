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
	OpInstall   Op = 1 // Install → InstallReply
	OpUninstall Op = 2 // Uninstall → empty reply
	OpRegister  Op = 3 // Register → RegisterReply
	OpStats     Op = 4 // StatsRequest → StatsReply
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
// *Register, *RegisterReply, *StatsRequest or *StatsReply.
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
}

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

// StatsRequest asks for the node's counters.
type StatsRequest struct {
	Prefix string `msgpack:"prefix"` // only counters whose names start with it; empty: all
}

// StatsReply carries counters, sorted by name.
type StatsReply struct {
	Counters []Counter `msgpack:"counters"`
}

// Counter is one named counter.
type Counter struct {
	Name  string `msgpack:"name"`
	Value uint64 `msgpack:"value"`
}

func (*Install) Op() Op       { return OpInstall }
func (*InstallReply) Op() Op  { return OpInstall }
func (*Uninstall) Op() Op     { return OpUninstall }
func (*Register) Op() Op      { return OpRegister }
func (*RegisterReply) Op() Op { return OpRegister }
func (*StatsRequest) Op() Op  { return OpStats }
func (*StatsReply) Op() Op    { return OpStats }

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
// op: *Install, *Uninstall, *Register or *StatsRequest. An unknown op is an
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
func (m *StatsRequest) validate() error  { return nil }

func (m *StatsReply) validate() error {
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

func (m *Install) emptyLists() Control       { return m } // Data is never empty when valid
func (m *Uninstall) emptyLists() Control     { return m }
func (m *Register) emptyLists() Control      { return m }
func (m *RegisterReply) emptyLists() Control { return m }
func (m *StatsRequest) emptyLists() Control  { return m }

func (m *InstallReply) emptyLists() Control {
	c := *m
	c.Handlers = msgpackshape.OrEmpty(c.Handlers)
	return &c
}

func (m *StatsReply) emptyLists() Control {
	return &StatsReply{Counters: msgpackshape.OrEmpty(m.Counters)}
}

func (m *Install) normalize()       {}
func (m *Uninstall) normalize()     {}
func (m *Register) normalize()      {}
func (m *RegisterReply) normalize() {}
func (m *StatsRequest) normalize()  {}
func (m *InstallReply) normalize()  { m.Handlers = msgpackshape.OrNil(m.Handlers) }
func (m *StatsReply) normalize()    { m.Counters = msgpackshape.OrNil(m.Counters) }

// maxControlDepth bounds the nesting of a control body: the deepest the
// format has is body → list → element → value, 4 levels.
const maxControlDepth = 6
