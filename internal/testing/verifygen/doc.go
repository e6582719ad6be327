// Package verifygen generates random raw-mode programs that sit near the
// verifier's decision boundary, for the verifier's soundness fuzzing and its
// cross-check against the Linux verifier (tests/verifier_*_test.go).
//
// A program is a prologue (r6 = memory, sometimes r7 = its length), a run
// of snippets, and an epilogue that folds some scalars into r0. Each
// snippet is a small pattern the verifier must judge: a constant memory
// offset next to the end of memory, a variable offset bounded by a mask, a
// conditional jump (JMP or JMP32, signed or unsigned, on either edge) or by
// nothing, a value computed through a chain of ALU operations whose exact
// range the generator knows by enumerating its inputs, stack accesses next
// to -512 and 0, spills, refills and partial overwrites, pointer
// arithmetic, pointer stores, bounded and unbounded loops, local calls
// that pass stack pointers, trees of calls as deep as the frames allow
// (more chains of call sites than the verifier gives call contexts of
// their own), long chains of branches, lddw, divisions, byte swaps and
// movsx. Each
// snippet is built either on the safe side of the boundary or, with a
// per-program probability, one step over it (Program.Defects says which),
// so that a generated mix is roughly half accepted and half rejected.
//
// The generator's idea of "safe" is a hint for logs, never an oracle: the
// tests judge an accepted program only by running it. Program.Hints name
// memory contents that drive the program to its boundary (the input byte
// that gives a chain its largest result, a value one past a checked limit),
// so that a run is likely to fault if the verifier was wrong.
//
// Check is the stricter oracle: a reference interpreter that enforces the
// raw-mode rules exactly (each access inside its own object, stack frames
// included; no read of uninitialised stack; no pointer stored to memory,
// returned, compared with a number or exposed by arithmetic), where the
// VM only checks that an address is mapped.
//
// Build makes the worst shapes for the verifier's own resources (Shape):
// programs of up to an object's worth of code whose safe verification
// needs many blocks, call contexts, loops or constants.
//
// The package imports only cilium/ebpf's asm and bytecode; output is a
// deterministic function of the seed and the options. It is for tests only.
package verifygen
