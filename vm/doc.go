// Package vm is the eBPF interpreter that runs handler bytecode on a
// modelled NIC core and on host cores.
//
// It implements the whole instruction set of RFC 9669: ALU and ALU32 with
// the v4 additions (sdiv, smod, movsx), byte swaps, JMP and JMP32 with every
// condition, ja and gotol, lddw including the region pseudo form, loads and
// stores of every size including sign-extending loads, all atomics, local
// (bpf-to-bpf) calls with a 512-byte stack per frame, helper calls through
// the Helpers interface, and exit.
//
// A Program is loaded once (decoded, validated and translated into a compact
// internal form) and is immutable, so many cores may share it. A Machine is
// one core's mutable state: registers, stack, call frames and the table of
// memory segments. Memory is a set of segments (stack, context, request,
// reply, regions); an address is the segment number in the high 32 bits and
// the offset in the low 32 bits. In the default checked mode every access is
// bounds- and rights-checked; Unchecked mode drops those checks and must only
// run programs that the verifier accepted, with every region they address
// mapped. Writable segments start 8-byte aligned on the host, so that
// atomics are real host atomics.
//
// Machine.Invoke runs a handler under the handler ABI (spec/abi.md): it
// builds the context, maps the request read-only, the zeroed reply buffer
// and the regions, runs the handler's entry and classifies r0 into a
// Result (reply, error code, forwarded). ABIHelpers is the ABI's helper
// table over an Env, the node's clock, random source, log and network;
// LocalEnv is an Env for tools and tests. RunRaw is the other calling
// convention, the conformance suite's.
//
// Engine, Executable and Instance are the interface other engines
// implement (vm/jit, wazero's model: this package defines it, engines
// build on it): a program is compiled for an engine once, and each machine
// makes its own instance of the result on its first run, which reaches
// the machine only through an EngineContext (budget, memory map, helpers,
// fault texts, the run's count). Interpreter is this package's engine; a
// *Program is its executable. Memory is memory engines can map in place
// (a memfd on Linux): regions and raw mode's memory that live across runs.
//
// A region may also be remote (MapRemote, RegionMem.Remote): its bytes
// live in another node and a RemoteMemory reaches them, loads by reading
// and 8-byte add and cmpxchg as FETCH-ADD and CAS, so that a caller can
// run a handler away from its data; only checked interpreted runs take
// them, through the out-of-line branch of a refused access (remote.go).
//
// Faults (out-of-bounds access, write to read-only memory, misaligned atomic,
// budget exhausted, call depth, unknown helper, a return value the handler
// ABI forbids, a remote access that failed or that verbs cannot do) are
// *Fault errors that match the Err* sentinels with
// errors.Is; a run that cannot start (bad entry point, too many arguments,
// memory that cannot be mapped, an unmapped region in unchecked mode)
// returns a plain error instead. The package never lets a
// Go panic escape a checked run. spec/vm.md is the contract.
//
// The VM sees bytecode only: it knows nothing of the language, the compiler
// or the verifier.
package vm
