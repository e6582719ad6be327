package bytecode

import "fmt"

// The reserved error codes: what compiled code fails with on its own,
// besides the codes of a handler's fail statements, which the language
// keeps below them (lang.MaxFailCode; spec/language.md, Failing). They
// travel as any error code (r0 = -code, an error reply's status), so the
// runtime, the tools and callers name them from here.
const (
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
