// Package naamgen generates random handler programs (spec/language.md)
// that the front end accepts, and inputs to run them with, for the
// compile-and-run differential test (tests/compile_diff_test.go): each
// program is evaluated by internal/testing/naameval and compiled, verified and run
// in the VM, and the two must agree.
//
// A program has a few constants (untyped, typed, and defined from each
// other), one or two structs (the second may nest the first), a rw region
// and often a ro one, 1–3 fns (scalar and reference parameters; each may
// call the ones before it, so there is no recursion) and 1–3 handlers with
// integer, bool, array and struct arguments and results. Bodies mix let
// and var, arithmetic of every width with casts, comparisons, && || !,
// if/else if/else, constant and capped loops (a body's nest stays at 64
// iterations or fewer; calls of fns are charged to a size budget, as the
// compiler inlines them), break and continue, indexing (constant, reduced modulo the
// length, or raw, so sometimes out of range at run time), division
// (sometimes by zero), atomics on rw region words, hash, copy, references
// (let r = &place, &mut parameters that alias), early return and fail,
// and with Config.Helpers the context builtins, random, send, trace and
// forward.
//
// Validity is by construction: the generator keeps its own model of the
// types and their layout, never applies an operator to constants only
// (the checker folds constants, and a typed overflow, a constant divisor
// of 0 or a constant shift past the width would be errors), annotates lets
// whose value is constant (an untyped constant would default to u64),
// tracks which places are writable and which are in a region, and counts
// stack bytes (a handler's include its fns', which the compiler inlines)
// and loop iterations. TestProgramsCheck holds it to that over
// thousands of seeds; a program the checker rejects is a generator bug.
//
// The same seed gives the same program (math/rand/v2 with a caller's
// source). The package imports nothing of NAAM's, so that it can test
// every layer; Generated describes layouts in the generator's own terms.
package naamgen
