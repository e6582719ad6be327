// Package jit is the host JIT tier: it translates eBPF bytecode to
// WebAssembly and has wasmtime (Cranelift) compile that to machine code,
// for handlers that run on host cores.
//
// It is an engine behind vm's interface: Engine implements vm.Engine, and
// Compile (vm.Load's checks, same errors naming the slot) returns a Code,
// a vm.Executable, immutable and shared, which any vm.Machine runs through
// RunRaw, RunRawMemory and Invoke. Each machine instantiates a Code once,
// in a wasmtime store of the instance's own, and reaches the machine only
// through the vm.EngineContext (helpers, budget, memory map, fault texts).
// A Cache keeps one Code per installed program and counts compilations.
//
// Memory. The instance's linear memory holds a control block, the segment
// tables and the stack at fixed offsets; vm.Memory segments with a file
// (regions, raw memory that lives across runs) are mapped into it in
// place, once, with mmap of the same memfd, so no run copies them and
// their writes and atomics are shared with every other core as they
// happen; other segments (context, request, reply, plain slices) are
// copied in above them for a run, the writable ones copied back.
//
// Two modes. Checked code checks every load, store and atomic against the
// segment tables and faults exactly as the checked interpreter does (same
// kind, slot, address, instruction count); unverified programs (naamc vm,
// the conformance suite, fuzzing) run so. Unchecked code drops those
// checks and is only for programs the verifier accepted; Wasm's own
// sandbox still keeps every access inside the instance's linear memory.
// Both count instructions and enforce the budget where the interpreter
// does (taken jumps, local calls, exit). spec/jit.md is the contract.
//
// The package needs cgo (wasmtime is a C library), and maps memory in
// place on Linux only (elsewhere it copies). Without cgo it builds all the
// same, and Compile and Engine.Compile return ErrUnavailable.
//
// It sits beside the interpreter: it imports vm and bytecode, and nothing
// below it imports it. It never sees the language, the compiler or the
// verifier; whether code may run unchecked is its caller's decision.
package jit
