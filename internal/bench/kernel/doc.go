// Package kernel runs test programs in the running Linux kernel, so that the
// VM can be checked against the kernel's verifier and JIT (the differential
// test) and timed against it (the benchmarks).
//
// A body in raw mode (r1 = memory pointer, r2 = its length, the
// bpf_conformance convention) is loaded as a bpf-to-bpf subprogram of a small
// XDP wrapper:
//
//	r1 = map_value(mem, 0)       // lddw with src = BPF_PSEUDO_MAP_VALUE
//	r2 = memSize
//	call body                    // the body's exit returns here
//	r1 = map_value(ret, 0)
//	*(u64 *)(r1 + 0) = r0        // the full 64-bit r0; the run's retval is 32 bits
//	r0 = XDP_PASS
//	exit
//	body: ...
//
// The memory is the single value of a one-element array map of exactly
// memSize bytes (r0 goes to a second map, so the verifier's bounds are the
// VM's): Run writes it before the run and reads it back after, so stores the
// body made are visible to the caller. Because r1 is a map-value pointer of a
// known size, the kernel verifier accepts every access the body proves in
// bounds against that fixed size (masked indices), never against r2.
//
// The package is for tests and benchmarks only. It never decides anything
// about NAAM programs; it only reports what this kernel does with them. On
// systems other than Linux every function returns ErrUnsupported.
package kernel
