package bytecode

import (
	"bytes"
	"fmt"
	"sort"
	"strconv"

	"github.com/cilium/ebpf/asm"
	"github.com/vmihailenco/msgpack/v5"

	"github.com/naam-project/naam/internal/msgpackshape"
)

// Object file identification (spec/object.md).
const (
	ObjectMagic   = "naam-obj"
	ObjectVersion = 2
	// ObjectVersionNoAccess is the previous version, still read: the same
	// layout without the handlers' access functions (Handler.Access and
	// MaxRanges are absent, so zero).
	ObjectVersionNoAccess = 1
)

// Object is the unit a NAAM node installs: bytecode, the handlers that enter
// it, the regions it addresses, and a pc→source table. Its file form (.nobj)
// is msgpack, written by Marshal and read by UnmarshalObject; spec/object.md
// gives the layout field by field.
//
// Marshal is deterministic: equal Objects give equal bytes. Objects that
// UnmarshalObject returns have nil, never empty, slices, so that an object
// read back compares equal (reflect.DeepEqual) to one built with nil slices.
type Object struct {
	Magic    string       `msgpack:"magic"`    // ObjectMagic
	Version  uint32       `msgpack:"version"`  // ObjectVersion
	Source   string       `msgpack:"source"`   // source file name, may be empty
	Code     []byte       `msgpack:"code"`     // raw instruction slots, little-endian
	Handlers []Handler    `msgpack:"handlers"` // entry points
	Regions  []Region     `msgpack:"regions"`  // indexed by lddw region[IDX]
	Lines    []Line       `msgpack:"lines"`    // pc→source, sorted by Insn
	Sources  []SourceFile `msgpack:"sources"`  // optional source text, for listings
}

// Handler is an entry point: a message naming ID runs the code from slot Entry.
type Handler struct {
	Name    string  `msgpack:"name"`
	ID      uint32  `msgpack:"id"`
	Entry   int     `msgpack:"entry"`   // slot index of the first instruction
	Args    []Field `msgpack:"args"`    // layout of the request payload
	Results []Field `msgpack:"results"` // layout of the reply
	// MaxRanges is the most ranges the handler's access function writes
	// (1..MaxAccessRanges); 0 means the handler declares no data access
	// and Access is 0.
	MaxRanges uint32 `msgpack:"max_ranges"`
	// Access is the slot of the access function's first instruction
	// (spec/abi.md, Access functions), when MaxRanges is not 0.
	Access int `msgpack:"access"`
}

// HasAccess reports whether the handler declares its data access.
func (h *Handler) HasAccess() bool { return h.MaxRanges > 0 }

// Field is one named part of a request payload or a reply, for callers that
// encode arguments and decode results. The verifier does not rely on it.
type Field struct {
	Name string `msgpack:"name"`
	// Type is u8 u16 u32 u64 i8 i16 i32 i64 bool, "[T; N]" (an array of N
	// T), or a struct name (an identifier whose size only Size records).
	Type   string `msgpack:"type"`
	Offset uint32 `msgpack:"offset"` // byte offset in the payload or reply
	Size   uint32 `msgpack:"size"`   // bytes
}

// Region is memory the host registers and handlers address with
// `lddw %rN, region[IDX]+OFF`, IDX being the region's index in Object.Regions.
type Region struct {
	Name     string `msgpack:"name"`
	Size     uint64 `msgpack:"size"` // 1..MaxRegionSize bytes
	Writable bool   `msgpack:"writable"`
}

// Line maps the slots from Insn up to the next Line's Insn (or the end of the
// code) to a source position. Line 0 means the slots have no source position.
type Line struct {
	Insn int    `msgpack:"insn"` // slot index
	File string `msgpack:"file"`
	Line int    `msgpack:"line"` // 1-based; 0: no position
	Col  int    `msgpack:"col"`  // 1-based byte column; 0: unknown
}

// String formats the position as "file:line:col", or "file:line" without a
// column.
func (l Line) String() string {
	if l.Line == 0 {
		return "-"
	}
	s := l.File + ":" + strconv.Itoa(l.Line)
	if l.Col > 0 {
		s += ":" + strconv.Itoa(l.Col)
	}
	return s
}

// SourceFile is the text of a source file, kept so that listings can show
// source lines beside instructions.
type SourceFile struct {
	Name string `msgpack:"name"`
	Text string `msgpack:"text"`
}

// ObjectError is a problem with an object. Field is the path of the offending
// field ("handlers[2].entry"), empty when the file is not msgpack of the
// right shape. Err is the underlying error if any (an *InsnError for
// problems in the code).
type ObjectError struct {
	Field string
	Msg   string
	Err   error
}

func (e *ObjectError) Error() string {
	if e.Field == "" {
		return "object: " + e.Msg
	}
	return "object: " + e.Field + ": " + e.Msg
}

func (e *ObjectError) Unwrap() error { return e.Err }

func objectErrorf(field, format string, args ...any) *ObjectError {
	return &ObjectError{Field: field, Msg: fmt.Sprintf(format, args...)}
}

// Marshal validates o and encodes it. Every field is written, in the order of
// the struct declarations, as a msgpack map with the tag names as keys;
// integers take their shortest msgpack form and empty lists are written as
// empty arrays, so the bytes depend only on the Object's contents.
func (o *Object) Marshal() ([]byte, error) {
	if err := o.Validate(); err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	enc := msgpack.NewEncoder(&buf)
	enc.UseCompactInts(true)
	if err := enc.Encode(o.withEmptyLists()); err != nil {
		return nil, &ObjectError{Msg: "encoding: " + err.Error(), Err: err}
	}
	return buf.Bytes(), nil
}

// UnmarshalObject decodes an object file and validates it. It never panics;
// any problem is an *ObjectError.
func UnmarshalObject(b []byte) (*Object, error) {
	if err := msgpackshape.Check(b, maxObjectDepth, "object"); err != nil {
		return nil, &ObjectError{Msg: "malformed msgpack: " + err.Error(), Err: err}
	}
	var o Object
	if err := msgpackshape.CheckInts(b, &o, "object"); err != nil {
		return nil, &ObjectError{Msg: "malformed msgpack: " + err.Error(), Err: err}
	}
	dec := msgpack.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields(true)
	if err := dec.Decode(&o); err != nil {
		return nil, &ObjectError{Msg: "malformed msgpack: " + err.Error(), Err: err}
	}
	o.normalize()
	if err := o.Validate(); err != nil {
		return nil, err
	}
	return &o, nil
}

// Insns decodes the object's code.
func (o *Object) Insns() (asm.Instructions, error) {
	return Decode(o.Code)
}

// Position returns the source position of slot insn: the Line entry with
// the largest Insn not after it. ok is false when the slot is outside the
// code or has no source position.
func (o *Object) Position(insn int) (pos Line, ok bool) {
	if insn < 0 || insn >= len(o.Code)/SlotSize {
		return Line{}, false
	}
	i := sort.Search(len(o.Lines), func(i int) bool { return o.Lines[i].Insn > insn }) - 1
	if i < 0 || o.Lines[i].Line == 0 {
		return Line{}, false
	}
	return o.Lines[i], true
}

// withEmptyLists returns a shallow copy of o in which nil slices are empty,
// so that nil and empty encode alike (msgpack writes nil slices as nil).
func (o *Object) withEmptyLists() *Object {
	c := *o
	c.Code = msgpackshape.OrEmpty(c.Code)
	c.Handlers = make([]Handler, len(o.Handlers))
	for i, h := range o.Handlers {
		h.Args = msgpackshape.OrEmpty(h.Args)
		h.Results = msgpackshape.OrEmpty(h.Results)
		c.Handlers[i] = h
	}
	c.Regions = msgpackshape.OrEmpty(c.Regions)
	c.Lines = msgpackshape.OrEmpty(c.Lines)
	c.Sources = msgpackshape.OrEmpty(c.Sources)
	return &c
}

// normalize turns empty slices into nil, the inverse of withEmptyLists.
func (o *Object) normalize() {
	o.Code = msgpackshape.OrNil(o.Code)
	o.Handlers = msgpackshape.OrNil(o.Handlers)
	for i := range o.Handlers {
		o.Handlers[i].Args = msgpackshape.OrNil(o.Handlers[i].Args)
		o.Handlers[i].Results = msgpackshape.OrNil(o.Handlers[i].Results)
	}
	o.Regions = msgpackshape.OrNil(o.Regions)
	o.Lines = msgpackshape.OrNil(o.Lines)
	o.Sources = msgpackshape.OrNil(o.Sources)
}

// maxObjectDepth bounds the nesting of an object file: the deepest value the
// format has is object → handlers → handler → args → field → value, 6 levels.
const maxObjectDepth = 8
