// Package jit is the host JIT tier: it translates eBPF bytecode to
// WebAssembly and has wasmtime (Cranelift) compile that to machine code,
// for handlers that run on host cores.
//
// Compile loads a program as vm.Load does (same checks, same errors, which
// name the slot), translates it (translate.go; the scheme is in
// spec/jit.md) and compiles the module. A Code is immutable and shared; a
// Cache keeps one per installed program and counts compilations and their
// time. A Machine is one core: a vm.Machine, whose memory map, helpers,
// budget and handler ABI (vm.Machine.InvokeWith, RunRawWith) it reuses,
// and a wasmtime store with an instance of each Code it ran. A run copies
// the mapped segments into the instance's linear memory at the addresses
// the segment table gives, runs, and copies the writable ones back.
//
// Two modes. Checked code checks every load, store and atomic against the
// segment table and faults exactly as the checked interpreter does (same
// kind, slot, address, instruction count); unverified programs (naamc vm,
// the conformance suite, fuzzing) run so. Unchecked code drops those
// checks and is only for programs the verifier accepted; Wasm's own
// sandbox still keeps every access inside the instance's linear memory.
// Both count instructions and enforce the budget where the interpreter
// does (taken jumps, local calls, exit).
//
// The package needs cgo (wasmtime is a C library). Without cgo it builds
// all the same, and Compile and NewMachine return ErrUnavailable.
//
// It sits beside the interpreter: it imports vm and bytecode, and nothing
// below it imports it. It never sees the language, the compiler or the
// verifier; whether code may run unchecked is its caller's decision.
package jit
