package jit

import (
	"errors"
	"time"
)

// ErrUnavailable is what Compile and Engine.Compile return in a build
// without cgo, which wasmtime needs.
var ErrUnavailable = errors.New("jit tier unavailable: built without cgo")

// Engine is the JIT as a vm.Engine: Compile returns a *Code, checked or,
// with Unchecked, not (Options.Unchecked).
type Engine struct {
	Unchecked bool
}

// MaxMapped is the most bytes of file-backed memories (vm.Memory with a
// file: regions, raw memory) a run can have mapped in place: linear
// memory is 4 GiB, of which the control block, tables, stack and the
// run's copies of other segments need the rest.
const MaxMapped = 1<<32 - 2<<20

// Options configure Compile.
type Options struct {
	// Unchecked drops the bounds and rights checks on loads, stores and
	// atomics, and the alignment check on atomics: an access goes to its
	// segment's base plus the offset. Only programs the verifier accepted
	// may be compiled so. Even then the code cannot reach outside its own
	// linear memory (Wasm's sandbox), but an unverified program would read
	// and write wrong bytes of it instead of faulting.
	Unchecked bool
	// Entries are the slots runs may start at (handler entry points); slot
	// 0 is always one.
	Entries []int
}

// Stats describe one compilation.
type Stats struct {
	Translate time.Duration // eBPF to Wasm
	Compile   time.Duration // Wasm to machine code (wasmtime, Cranelift)
	WasmBytes int           // size of the Wasm module
	Blocks    int           // basic blocks
	Loops     int           // loops compiled as Wasm loops (the others go through the dispatch loop)
	FastLoops int           // of them, innermost loops with a fast copy (spec/jit.md, Loops)
	Guarded   int           // loads and stores that a fast copy makes unchecked, guarded at its loop's entry
	Slots     int           // instruction slots of the program
}

// Total is the whole compile time.
func (s Stats) Total() time.Duration { return s.Translate + s.Compile }
