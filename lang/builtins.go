package lang

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

// MaxFailCode is the largest code fail(code) accepts; the codes above it
// are reserved for the failures compiled code reports on its own
// (bytecode.FailIndexOutOfRange and the others, spec/language.md, Failing).
const MaxFailCode = 0x7ffffeff

// Limits from the ABI and the verifier that the checker enforces.
const (
	maxParams     = 5         // fn parameters travel in r1–r5
	maxFrames     = 8         // bytecode.MaxFrames
	maxRegions    = 248       // bytecode.MaxRegions
	maxRegionSize = 1<<32 - 1 // bytecode.MaxRegionSize
	stackSize     = 512       // bytecode.StackSize
	insnBudget    = 100_000   // the verifier's default budget
)
