// Package verifier proves, before a handler runs, that its bytecode is
// memory-safe, terminates, and executes at most a known number of
// instructions. It runs on every node at install time on the object it
// received and never trusts the compiler or the sender.
//
// The pipeline, one step per file as in PREVAIL:
//
//	cfg.go      decode → basic blocks, functions, call graph; structural
//	            checks (reachability, fall-through, recursion, call depth)
//	analyze.go  abstract interpretation to a fixpoint over the CFG, per call
//	            context (a call string, or one shared per function and depth
//	            past Limits.CallStrings), with widening at loop heads
//	            (state.go, value.go)
//	step.go     the transfer function of each instruction, which also checks
//	            the safety rules (bounds, initialisation, pointer use, leaks)
//	loops.go    loop nesting, a bound on every loop from a monotone counter
//	            and its range at the loop head, and the worst-case
//	            instruction count
//	client.go   what the steps record for the Report's client eligibility,
//	            and the stricter rules of access functions
//	verify.go   the entry points and the Report
//	budget.go   the limits on the verifier's own states, bytes, steps and
//	            time, checked before each is spent (spec/verifier.md)
//
// Scalars are tracked as unsigned and signed 64-bit ranges plus known bits
// (internal/scalar); pointers as a kind (context, stack frame, raw memory,
// request, reply, region N) with an offset, and for the request and reply,
// the number of bytes a comparison with data_end / reply_end proved safe,
// as the Linux verifier does for XDP packets. Unlike the kernel, the
// analysis joins states where control flow merges instead of walking every
// path, and bounds loops by analysis instead of by unrolling them, so its
// cost does not grow with iteration counts.
//
// The verifier sees bytecode only (package bytecode): never the language or
// the compiler. It never executes the program, and whatever the program it
// uses at most Config.Limits of time and memory.
package verifier
