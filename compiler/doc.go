// Package compiler turns a checked handler program (package lang) into an
// eBPF object (bytecode.Object) that the verifier accepts.
//
// The pipeline, one file per step:
//
//	lower.go, expr.go   AST → IR: a linear list of two-address eBPF-like
//	                    instructions over unlimited virtual registers, with
//	                    labels. Constants the checker folded become
//	                    immediates, branches on constants disappear, code
//	                    after return/fail/break is never emitted, fns are
//	                    inlined at every call.
//	access.go           a handler's reads clause → its access function, an
//	                    entry of its own after all the handlers' code
//	                    (spec/abi.md, Access functions).
//	regalloc.go         liveness and linear-scan allocation of virtual
//	                    registers to r0–r9: values live across a helper call
//	                    get r6–r9; what does not fit is spilled to the stack
//	                    and the allocation repeated.
//	emit.go             IR → asm.Instructions: jump offsets, call argument
//	                    moves, the line table, the object.
//
// Compile is the entry point (CompileWith, with constant overrides of a
// lang.Config); spec/language.md says what the language
// means and how arguments and results are laid out, spec/object.md what an
// object holds.
package compiler
