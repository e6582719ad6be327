// Package bytecode is the shared vocabulary of NAAM: the eBPF instruction
// stream that handlers compile to and that the verifier and the VM consume.
//
// It sits at the bottom of the pipeline (lang → compiler → bytecode →
// verifier / vm) and imports nothing of NAAM's but internal/msgpackshape,
// which checks the shapes the object file's decoder reads. Instructions
// are github.com/cilium/ebpf/asm values; this package adds what that
// package leaves to its users:
//
//   - Decode and Encode between raw little-endian 8-byte slots and
//     asm.Instructions, with errors that name the slot;
//   - Validate, the structural checks of RFC 9669 (known opcodes, register
//     numbers, reserved fields, immediates that fit their 32 bits, numeric
//     jump and call targets inside the program and never into the second
//     slot of lddw);
//   - Assemble and Disassemble, the textual syntax of the bpf_conformance
//     suite (`mov %r0, 1`, `ldxdw %r0, [%r1+8]`, `lock cmpxchg [%r10-8], %r1`),
//     which round-trip;
//   - the handler ABI (abi.go, spec/abi.md): the context layout, the return
//     convention, the helper signatures and the limits (stack, frames,
//     regions) that the compiler, the verifier and the runtime share;
//   - the object file (object.go, object_validate.go, spec/object.md): a
//     .nobj is msgpack holding the code, its handlers and regions and a
//     pc→source table; Marshal is deterministic and UnmarshalObject
//     validates everything it reads;
//   - the names tools and callers give what objects carry: the reserved
//     failure codes (FailIndexOutOfRange …, FailText) and a program's
//     name in counters and lookups (ProgramName, ProgramLabels).
//
// Instruction indices in every error and listing are slot indices, as in the
// kernel's verifier log: lddw occupies two slots.
//
// The package never executes or verifies programs; it only says whether a
// stream is well formed.
package bytecode
