package bytecode

import (
	"math"
	"strconv"
	"strings"
)

// The handler ABI: what a handler finds in its registers at entry, how it
// answers, and the helpers it may call. The verifier, the VM runtime and the
// compiler all take these from here; spec/abi.md is the prose version.
//
// At entry r1 holds the address of the context, a read-only block of CtxSize
// bytes whose fields are little-endian u64 at the offsets below; r2–r9 are
// zero and r10 is the frame pointer. Regions are reached with the lddw pseudo
// form `lddw %rN, region[IDX]+OFF` (src = PseudoMapValue, see opcode.go).

// Context field offsets. Every field is 8 bytes.
const (
	CtxData      = 0  // address of the first byte of the request payload
	CtxDataEnd   = 8  // address one past the last byte of the request payload
	CtxReply     = 16 // address of the first byte of the reply buffer
	CtxReplyEnd  = 24 // address one past the last byte of the reply buffer
	CtxSrcNode   = 32 // node id of the sender
	CtxTenant    = 40 // tenant the request belongs to
	CtxRequestID = 48 // request id, unique per sender and tenant
	CtxHandler   = 56 // id of the handler being run
	CtxSize      = 64 // size of the context in bytes
)

// CtxKind says what a context field holds, so that the verifier can give a
// type to the value a load from the context produces.
type CtxKind uint8

const (
	CtxKindScalar     CtxKind = iota // a number
	CtxKindRequest                   // pointer to the first request byte
	CtxKindRequestEnd                // pointer one past the last request byte
	CtxKindReply                     // pointer to the first reply byte
	CtxKindReplyEnd                  // pointer one past the last reply byte
)

var ctxKindNames = [...]string{"scalar", "pointer to request", "request end", "pointer to reply", "reply end"}

func (k CtxKind) String() string {
	if int(k) < len(ctxKindNames) {
		return ctxKindNames[k]
	}
	return "CtxKind(" + strconv.Itoa(int(k)) + ")"
}

// CtxField describes one field of the context.
type CtxField struct {
	Name   string // as in spec/abi.md and in verifier messages: "data_end"
	Offset int    // byte offset in the context
	Size   int    // always 8
	Kind   CtxKind
	Doc    string
}

// CtxFields lists the context fields in offset order; CtxFields[i].Offset is 8*i.
var CtxFields = []CtxField{
	{"data", CtxData, 8, CtxKindRequest, "first byte of the request payload"},
	{"data_end", CtxDataEnd, 8, CtxKindRequestEnd, "one past the last byte of the request payload"},
	{"reply", CtxReply, 8, CtxKindReply, "first byte of the reply buffer"},
	{"reply_end", CtxReplyEnd, 8, CtxKindReplyEnd, "one past the last byte of the reply buffer"},
	{"src_node", CtxSrcNode, 8, CtxKindScalar, "node id of the sender"},
	{"tenant", CtxTenant, 8, CtxKindScalar, "tenant of the request"},
	{"request_id", CtxRequestID, 8, CtxKindScalar, "request id, unique per sender and tenant"},
	{"handler", CtxHandler, 8, CtxKindScalar, "id of the handler being run"},
}

// CtxFieldAt returns the field that starts at byte offset off. Handlers load
// context fields whole (ldxdw at the field's offset); any other access to the
// context is rejected by the verifier.
func CtxFieldAt(off int) (CtxField, bool) {
	if off < 0 || off >= CtxSize || off%8 != 0 {
		return CtxField{}, false
	}
	return CtxFields[off/8], true
}

// Stack and call limits (the kernel's values).
const (
	StackSize = 512 // bytes per frame; r10 points one past the frame's end
	MaxFrames = 8   // the entry and at most seven nested local calls
)

// MaxRegions is how many regions an object may declare: region i lives in VM
// segment 8+i of 256, so there are 248 of them. vm.MaxRegions is defined as
// this constant (and vm checks at compile time that it fills its segments).
const MaxRegions = 248

// MaxRegionSize is the largest region: offsets inside a segment are 32 bits.
const MaxRegionSize = 1<<32 - 1

// Return convention: r0 at the handler's final exit, read as an int64.
const (
	// ReturnForwarded says the handler forwarded the request with the
	// forward helper; the node it went to answers the caller.
	ReturnForwarded int64 = math.MinInt64
	// MaxErrorCode is the largest error code: a handler returns -code for
	// codes 1..MaxErrorCode.
	MaxErrorCode = 1<<31 - 1
)

// Outcome is what a handler's return value means.
type Outcome uint8

const (
	OutcomeInvalid   Outcome = iota // a negative r0 outside the error range and not ReturnForwarded
	OutcomeReply                    // r0 >= 0: reply with the first r0 bytes of the reply buffer
	OutcomeError                    // r0 in -MaxErrorCode..-1: error code -r0
	OutcomeForwarded                // r0 == ReturnForwarded
)

var outcomeNames = [...]string{"invalid", "reply", "error", "forwarded"}

func (o Outcome) String() string {
	if int(o) < len(outcomeNames) {
		return outcomeNames[o]
	}
	return "Outcome(" + strconv.Itoa(int(o)) + ")"
}

// ClassifyReturn says what r0 means. A reply longer than the reply buffer is
// not detected here: the runtime compares it with reply_end - reply.
func ClassifyReturn(r0 int64) Outcome {
	switch {
	case r0 >= 0:
		return OutcomeReply
	case r0 == ReturnForwarded:
		return OutcomeForwarded
	case r0 >= -MaxErrorCode:
		return OutcomeError
	}
	return OutcomeInvalid
}

// ReplyLength returns the reply length r0 asks for, if r0 asks for a reply.
func ReplyLength(r0 int64) (n uint64, ok bool) {
	if r0 < 0 {
		return 0, false
	}
	return uint64(r0), true
}

// ErrorCode returns the error code r0 carries, if it carries one.
func ErrorCode(r0 int64) (code int32, ok bool) {
	if ClassifyReturn(r0) != OutcomeError {
		return 0, false
	}
	return int32(-r0), true
}

// ErrorReturn is the r0 value that reports code, which must be in
// 1..MaxErrorCode (other values give a result that ClassifyReturn calls
// OutcomeInvalid or OutcomeReply).
func ErrorReturn(code int32) int64 { return -int64(code) }

// ArgKind is the type of one helper argument (r1–r5), as the verifier checks it.
type ArgKind uint8

const (
	// ArgNone: the helper has no argument in this position.
	ArgNone ArgKind = iota
	// ArgScalar: any number; a pointer is rejected.
	ArgScalar
	// ArgMem: pointer to readable, initialised bytes. The number of bytes is
	// the next ArgSize argument.
	ArgMem
	// ArgMemNoPointers: as ArgMem, and none of the bytes may hold a spilled
	// pointer, because they leave the sandbox (another node, the host's log,
	// a region).
	ArgMemNoPointers
	// ArgMemWritable: pointer to writable bytes, initialised or not. The
	// number of bytes is the next ArgSize argument; after the call the
	// verifier treats them as initialised scalars.
	ArgMemWritable
	// ArgSize: a scalar length for the memory argument(s) before it; it must
	// be provably >= 0 and bounded so that every such argument holds that
	// many bytes. Zero is allowed.
	ArgSize
)

var argKindNames = [...]string{"none", "scalar", "mem", "mem-no-pointers", "mem-writable", "size"}

func (k ArgKind) String() string {
	if int(k) < len(argKindNames) {
		return argKindNames[k]
	}
	return "ArgKind(" + strconv.Itoa(int(k)) + ")"
}

// IsMem reports whether k is a pointer to memory whose length is a later ArgSize.
func (k ArgKind) IsMem() bool {
	return k == ArgMem || k == ArgMemNoPointers || k == ArgMemWritable
}

// Helper numbers, the imm of `call N`.
const (
	HelperHash    = 1
	HelperCopy    = 2
	HelperNow     = 3
	HelperRandom  = 4
	HelperTrace   = 5
	HelperSend    = 6
	HelperForward = 7
)

// HelperSpec is the signature of a helper. Arguments are in r1–r5, the result
// in r0 (always a scalar); a call clobbers r1–r5 and keeps r6–r9 and r10.
type HelperSpec struct {
	ID       uint32
	Name     string
	Args     [5]ArgKind // Args[i] is r(i+1); ArgNone from the first unused one on
	ArgNames [5]string  // for messages and listings: "dst", "len"
	Returns  string     // what r0 holds, for a reader
	// HostOnly: the helper exists only on the host, so a handler that calls
	// it is placed on a host core.
	HostOnly bool
	// SendsOffNode: the helper sends bytes to another node.
	SendsOffNode bool
	Doc          string
}

// Helpers is indexed by helper number; Helpers[0] is unused (ID 0).
var Helpers = []HelperSpec{
	HelperHash: {
		ID: HelperHash, Name: "hash",
		Args:     [5]ArgKind{ArgMem, ArgSize},
		ArgNames: [5]string{"ptr", "len"},
		Returns:  "u64",
		Doc:      "64-bit FNV-1a of the len bytes at ptr",
	},
	HelperCopy: {
		ID: HelperCopy, Name: "copy",
		Args:     [5]ArgKind{ArgMemWritable, ArgMemNoPointers, ArgSize},
		ArgNames: [5]string{"dst", "src", "len"},
		Returns:  "0",
		Doc:      "copies len bytes from src to dst; both ranges are checked against the one len; modelled as a DMA on the NIC",
	},
	HelperNow: {
		ID: HelperNow, Name: "now",
		Returns: "u64",
		Doc:     "the node's monotonic clock in nanoseconds",
	},
	HelperRandom: {
		ID: HelperRandom, Name: "random",
		Returns: "u64",
		Doc:     "a pseudo-random number (not for cryptography)",
	},
	HelperTrace: {
		ID: HelperTrace, Name: "trace",
		Args:     [5]ArgKind{ArgMemNoPointers, ArgSize},
		ArgNames: [5]string{"ptr", "len"},
		Returns:  "0",
		HostOnly: true,
		Doc:      "writes the len bytes at ptr to the host's log",
	},
	HelperSend: {
		ID: HelperSend, Name: "send",
		Args:         [5]ArgKind{ArgScalar, ArgScalar, ArgMemNoPointers, ArgSize},
		ArgNames:     [5]string{"node", "handler", "ptr", "len"},
		Returns:      "0, or negative if the message was not sent",
		SendsOffNode: true,
		Doc:          "sends the len bytes at ptr as an asynchronous message to handler on node; no reply comes back",
	},
	HelperForward: {
		ID: HelperForward, Name: "forward",
		Args:         [5]ArgKind{ArgScalar, ArgScalar},
		ArgNames:     [5]string{"node", "handler"},
		Returns:      "0, or negative if the request was not forwarded",
		SendsOffNode: true,
		Doc:          "forwards the request to handler on node, which answers the original caller; the handler then returns ReturnForwarded",
	},
}

// Helper returns the helper with number id.
func Helper(id uint32) (HelperSpec, bool) {
	if id == 0 || uint64(id) >= uint64(len(Helpers)) {
		return HelperSpec{}, false
	}
	return Helpers[id], true
}

// NumArgs returns how many arguments the helper takes.
func (h HelperSpec) NumArgs() int {
	n := 0
	for n < len(h.Args) && h.Args[n] != ArgNone {
		n++
	}
	return n
}

// SizeArg returns the index of the ArgSize argument that gives the length of
// memory argument i: the first ArgSize after it (copy's dst and src share one).
func (h HelperSpec) SizeArg(i int) (int, bool) {
	if i < 0 || i >= len(h.Args) || !h.Args[i].IsMem() {
		return 0, false
	}
	for j := i + 1; j < len(h.Args); j++ {
		switch {
		case h.Args[j] == ArgSize:
			return j, true
		case !h.Args[j].IsMem():
			return 0, false
		}
	}
	return 0, false
}

// Signature returns the helper as a call with its argument names: "copy(dst, src, len)".
func (h HelperSpec) Signature() string {
	return h.Name + "(" + strings.Join(h.ArgNames[:h.NumArgs()], ", ") + ")"
}
