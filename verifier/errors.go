package verifier

import (
	"fmt"
	"strings"
)

// Code names the rule a rejected program broke. Codes are stable: tests and
// tools match them, and new ones are only appended.
type Code string

const (
	CodeInvalidInsn    Code = "invalid-insn"    // the stream does not decode or validate
	CodeUnreachable    Code = "unreachable"     // an instruction no path reaches
	CodeFallThrough    Code = "fall-through"    // execution can run off the end
	CodeRecursion      Code = "recursion"       // a local call cycle
	CodeCallDepth      Code = "call-depth"      // more than 8 frames
	CodeUninitReg      Code = "uninit-reg"      // read of a register never written
	CodeUninitStack    Code = "uninit-stack"    // read of stack bytes never written
	CodeOutOfBounds    Code = "out-of-bounds"   // an access outside its object
	CodeMisaligned     Code = "misaligned"      // an atomic not naturally aligned
	CodeReadOnly       Code = "readonly"        // a write to read-only memory
	CodePointerArith   Code = "pointer-arith"   // arithmetic not allowed on a pointer
	CodePointerLeak    Code = "pointer-leak"    // a pointer would leave the sandbox
	CodePointerCompare Code = "pointer-compare" // a pointer compared with a scalar
	CodeNotAPointer    Code = "not-a-pointer"   // memory accessed through a scalar
	CodeUnknownHelper  Code = "unknown-helper"  // a helper that does not exist here
	CodeHelperArg      Code = "helper-arg"      // an argument does not fit the helper's signature
	CodeUnboundedLoop  Code = "unbounded-loop"  // a loop with no provable bound
	CodeBudget         Code = "budget"          // the worst case exceeds the budget
	CodeContextAccess  Code = "ctx-access"      // a context access that is not a whole field
	CodeBadEntry       Code = "bad-entry"       // an entry point that is not an instruction
	// CodeVerifierBudget: verifying the program would take more of the
	// verifier's own time or memory than Config.Limits allows.
	CodeVerifierBudget Code = "verifier-budget"
	// CodeAccessFunction: an access function touches a region or calls a
	// helper that sends or exists only on the host.
	CodeAccessFunction Code = "access-function"
)

// Error is a rejection: the instruction, its source position when known,
// the rule, a message for a person, and the abstract state of the registers
// involved, as the kernel's verifier log shows them.
type Error struct {
	Insn  int    // slot index
	Pos   string // "file:line", or ""
	Code  Code
	Msg   string
	State []string // "r1: mem(off=60)" lines for the registers involved
}

// Error returns the one-line form: "insn K (file:line): msg [code]".
func (e *Error) Error() string {
	where := fmt.Sprintf("insn %d", e.Insn)
	if e.Pos != "" {
		where += " (" + e.Pos + ")"
	}
	return fmt.Sprintf("%s: %s [%s]", where, e.Msg, e.Code)
}

// Format prints Error for %v and %s, and adds the register state, one
// register per line, for %+v.
func (e *Error) Format(f fmt.State, verb rune) {
	fmt.Fprint(f, e.Error())
	if verb == 'v' && f.Flag('+') && len(e.State) > 0 {
		fmt.Fprint(f, "\n\t"+strings.Join(e.State, "\n\t"))
	}
}
