package lang

import "fmt"

// builtinID names a predeclared function.
type builtinID int

const (
	bHash builtinID = iota
	bCopy
	bNow
	bRandom
	bTrace
	bSend
	bForward
	bSrcNode
	bTenant
	bRequestID
	bLen
	bAtomicAdd
	bAtomicAnd
	bAtomicOr
	bAtomicXor
	bAtomicXchg
	bAtomicCas
	bMin
	bMax
)

var builtinNames = map[string]builtinID{
	"hash": bHash, "copy": bCopy, "now": bNow, "random": bRandom, "trace": bTrace,
	"send": bSend, "forward": bForward,
	"src_node": bSrcNode, "tenant": bTenant, "request_id": bRequestID,
	"len":        bLen,
	"atomic_add": bAtomicAdd, "atomic_and": bAtomicAnd, "atomic_or": bAtomicOr,
	"atomic_xor": bAtomicXor, "atomic_xchg": bAtomicXchg, "atomic_cas": bAtomicCas,
	"min": bMin, "max": bMax,
}

// The reserved error codes a compiled handler can fail with on its own,
// besides the codes of its fail statements (spec/language.md, Failing).
const (
	MaxFailCode         = 0x7ffffeff // largest code fail(code) accepts
	FailIndexOutOfRange = 0x7fffff01 // an index outside [0, N)
	FailShortRequest    = 0x7fffff02 // the request is shorter than the handler's arguments
	FailShortReply      = 0x7fffff03 // the reply buffer is shorter than the handler's results
	FailDivideByZero    = 0x7fffff04 // x / 0 or x % 0
	FailLoopCap         = 0x7fffff05 // for i in a..b max N: the N iterations ran and b - a > N
	FailForward         = 0x7fffff06 // forward was refused by the runtime
)

// failNames are the reserved codes as tools print them.
var failNames = map[int64]string{
	FailIndexOutOfRange: "index out of range",
	FailShortRequest:    "short request",
	FailShortReply:      "short reply",
	FailDivideByZero:    "division by zero",
	FailLoopCap:         "loop cap reached",
	FailForward:         "forward refused",
}

// FailName is the name tools print for a reserved failure code ("index
// out of range", "short request"), or "" for any other code.
func FailName(code int64) string { return failNames[code] }

// FailText is how tools say that a handler failed with code, after its
// name: "failed with code 7", or for a reserved code "failed: index out
// of range (code 0x7fffff01)".
func FailText(code int64) string {
	if name := FailName(code); name != "" {
		return fmt.Sprintf("failed: %s (code %#x)", name, code)
	}
	return fmt.Sprintf("failed with code %d", code)
}

// Limits from the ABI and the verifier that the checker enforces.
const (
	maxParams     = 5         // fn parameters travel in r1–r5
	maxFrames     = 8         // bytecode.MaxFrames
	maxRegions    = 248       // bytecode.MaxRegions
	maxRegionSize = 1<<32 - 1 // bytecode.MaxRegionSize
	stackSize     = 512       // bytecode.StackSize
	insnBudget    = 100_000   // the verifier's default budget
)
